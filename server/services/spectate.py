"""Spectating: the list of races being played, watching one (a snapshot in the past, then delayed events), replays.

Fair play: spectators lag ``delay`` behind the race, so a player cannot follow
the opponent's line live from a second connection. The snapshot a spectator
starts from is the race as it stood at *now − delay*, folded from the stored
events (their moves played on the deal), never the live state; the events
after it are delivered by the event hub, each no earlier than its time plus the
delay. Everything is read from Redis, so any process can serve any race.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from server.services.errors import ServiceError
from server.services.race import RaceService, column_texts
from server.services.views import SPECTATOR, board_view, event_for, race_as_of
from server.store import RaceRecord, RaceStore, StoredEvent, deal_texts
from shared import Board, Rules, Special, parse_action
from shared.protocol import (
    LIVE_STATUSES,
    BoardView,
    DealLayout,
    ErrorCode,
    MoveMade,
    RaceEvent,
    RaceInfo,
    RaceStatus,
    Spectators,
    as_map,
)
from shared.race import RaceSnapshot, fold_events
from shared.race.record import record_digest


def ensure_shown_to(record: RaceRecord, player: str) -> None:
    """What was played in a race nobody may watch (its replay, its analysis) is shown to its own players only:
    ``no_spectators`` for anyone else."""
    if record.settings.spectators is Spectators.NOBODY and record.slot_of(player) is None:
        raise ServiceError(ErrorCode.NO_SPECTATORS, "the players of this race chose that nobody watches it: only they see what was played")


@dataclass(frozen=True, slots=True)
class WatchSnapshot:
    """What a new spectator starts from: the race and both boards as of ``as_of``."""

    info: RaceInfo
    boards: list[BoardView]
    as_of: int
    delay_ms: int
    deal: DealLayout | None
    status_now: RaceStatus
    """The race's status now, which ``info`` (as of ``as_of``) may lag."""


@dataclass(frozen=True, slots=True)
class EventPage:
    """Part of a finished race's event log, with every detail."""

    info: RaceInfo
    events: list[RaceEvent]
    complete: bool
    signature: str | None = None
    """On the complete page: the servers' signature of the whole record (server/record_signing.py)."""


"""A race is live while it counts down or runs; finished ones, and ones left before the start, leave the list."""


RECORD_EVENTS_MOST = 100_000
"""More events than any race has (two players' actions are bounded by ``max_actions``): the whole record at once."""


HISTORIES_KEPT = 32
"""Races whose decoded event history the spectate service keeps for the next ``watch`` (least recently watched
dropped first)."""


class RaceHistories:
    """The decoded events of the races watched lately, each extended by what came since it was last read.

    A ``watch`` needs a race's whole history (its snapshot as of the spectator delay): decoding it afresh each time
    cost a watch time in proportion to the race's length (0.5 s for a race of 4,000 actions on the busy machine),
    so a few watches a second stalled the process. A race's stream only grows, so a history read once is kept
    and only the events after its last one are read and decoded again."""

    def __init__(self, store: RaceStore, kept: int = HISTORIES_KEPT) -> None:
        self.store = store
        self.kept = kept
        self._histories: OrderedDict[str, list[StoredEvent]] = OrderedDict()

    async def events(self, race_id: str) -> list[StoredEvent]:
        """Every event of the race so far, in order (the list is shared: do not change it)."""
        known = self._histories.get(race_id, [])
        new = await self.store.events_after(race_id, known[-1].seq if known else 0)
        history = known + new if new else known
        current = self._histories.get(race_id, [])
        if len(current) > len(history):  # another watch read further meanwhile
            history = current
        self._histories[race_id] = history
        self._histories.move_to_end(race_id)
        while len(self._histories) > self.kept:
            self._histories.popitem(last=False)
        return history


@dataclass(slots=True)
class SeatView:
    """One seat's board as spectators see it at the moment a :class:`SpectatorView` was folded to."""

    board: Board
    actions: list[str] = field(default_factory=list)
    redeal_columns: list[list[str]] | None = None
    """What the seat's redeal dealt, once it redealt."""


@dataclass(slots=True)
class SpectatorView:
    """A race as its events up to one moment made it (their fold, and each seat's board after its moves), kept to
    be carried on to a later moment by the next ``watch``."""

    seed: int
    rules: Rules
    as_of: int
    """Every event at or before this time is folded (up to the first one after it)."""
    read: int = 0
    """How many of the race's stored events are folded or skipped."""
    race: RaceSnapshot = field(default_factory=RaceSnapshot)
    seats: dict[int, SeatView] = field(default_factory=dict)

    def carry_on(self, history: list[StoredEvent], as_of: int) -> None:
        """Fold the events after the last one read, up to the first race event after ``as_of``, and play each move
        on its seat's board."""
        self.as_of = as_of
        while self.read < len(history):
            event = history[self.read]
            if isinstance(event, RaceEvent):
                if event.at > as_of:
                    return
                fold_events((event,), self.race)
                if isinstance(event, MoveMade):
                    self._play(event)
            self.read += 1

    def _play(self, event: MoveMade) -> None:
        seat = self.seats.get(event.slot)
        if seat is None:
            seat = self.seats[event.slot] = SeatView(Board.deal(self.seed, self.rules))
        seat.board.play(parse_action(event.move))
        seat.actions.append(event.move)
        if event.move == Special.REDEAL.value:
            seat.redeal_columns = column_texts(seat.board)

    def seated(self) -> dict[int, SeatView]:
        """Each seat the fold has (a seat that has not moved yet: its board as dealt)."""
        for slot in self.race.actions:
            if slot not in self.seats:
                self.seats[slot] = SeatView(Board.deal(self.seed, self.rules))
        for slot in [slot for slot in self.seats if slot not in self.race.actions]:  # seat 1 left before the start
            del self.seats[slot]
        return self.seats


class SpectatorViews:
    """The spectator views of the races watched lately, each carried on from where the last ``watch`` left it.

    A ``watch`` needs the race as it stood at now minus the delay: folding every event and replaying both boards
    from the deal made each watch cost in proportion to the race's length, and a few watches a second of a long race
    took a core. A race's events only grow and its spectator moment only moves on, so a view is carried on by the
    events since; it is built afresh when the race was dealt again (a seat left before the start) or when a watch
    asks for an earlier moment than the view's."""

    def __init__(self, kept: int = HISTORIES_KEPT) -> None:
        self.kept = kept
        self._views: OrderedDict[str, SpectatorView] = OrderedDict()

    def as_of(self, record: RaceRecord, history: list[StoredEvent], as_of: int) -> SpectatorView:
        """The race ``record`` as its ``history`` made it at ``as_of`` (the view is shared and carried on by the next
        call: read it at once)."""
        view = self._views.get(record.race_id)
        if view is None or view.seed != record.deal.seed or view.rules != record.settings.rules or as_of < view.as_of:
            view = SpectatorView(record.deal.seed, record.settings.rules, as_of)
        view.carry_on(history, as_of)
        self._views[record.race_id] = view
        self._views.move_to_end(record.race_id)
        while len(self._views) > self.kept:
            self._views.popitem(last=False)
        return view


class SpectateService:
    """Lists, snapshots and replays for people without a seat; never changes a race."""

    def __init__(self, store: RaceStore, races: RaceService, *, sign: Callable[[bytes], str] | None = None) -> None:
        self.store = store
        self.races = races
        self.sign = sign
        self.histories = RaceHistories(store)
        self.views = SpectatorViews()
        """Signs a record's digest (server/record_signing.py); None: replays carry no signature."""

    async def live_races(self, limit: int) -> list[RaceInfo]:
        """Races in countdown or running, latest start first; finished, closed or expired ones leave the index here."""
        while True:
            race_ids = await self.store.live_race_ids(limit)
            records = [await self.store.load_race(race_id) for race_id in race_ids]
            stale = [
                race_id
                for race_id, record in zip(race_ids, records)
                if record is None or record.status not in LIVE_STATUSES or record.settings.spectators is not Spectators.ANYONE
            ]
            if not stale:
                return [self.races.info(record) for record in records if record is not None]
            await self.store.unindex_live(stale)

    async def watch(self, race_id: str) -> WatchSnapshot:
        """The race and both boards as they stood at now minus the race's spectator delay (``no_spectators`` if its
        players chose that nobody watches)."""
        record = await self.races.record(race_id)
        if record.settings.spectators is Spectators.NOBODY:
            raise ServiceError(ErrorCode.NO_SPECTATORS, "the players of this race chose that nobody watches it")
        delay_ms = self.races.policy.delay_of(record.settings)
        as_of = await self.store.now_ms() - delay_ms
        seen = self.views.as_of(record, await self.histories.events(race_id), as_of)
        info = race_as_of(record, seen.race, spectator_delay_ms=delay_ms)
        boards: list[BoardView] = []
        deal: DealLayout | None = None
        if info.status not in (RaceStatus.WAITING, RaceStatus.CLOSED):  # the countdown has dealt
            deal = DealLayout(*deal_texts(record.deal.seed))
            boards = [
                board_view(slot, list(seat.actions), seat.board, seat.redeal_columns)
                for slot, seat in sorted(seen.seated().items())
            ]  # fmt: skip
        return WatchSnapshot(info=info, boards=boards, as_of=as_of, delay_ms=delay_ms, deal=deal, status_now=record.status)

    async def replay_page(self, race_id: str, after: int, limit: int, player: str) -> EventPage:
        """Up to ``limit`` events after ``after`` of a finished race, as spectators see them (every move, its time); a
        race nobody may watch is replayed to its own players only."""
        record = await self.races.record(race_id)
        ensure_shown_to(record, player)
        if record.status is RaceStatus.CLOSED:
            raise ServiceError(ErrorCode.RACE_CLOSED, "the race was closed before it started: there is nothing to replay")
        if record.status is not RaceStatus.FINISHED:
            raise ServiceError(ErrorCode.NOT_FINISHED, "the race is still on: watch it, or replay it once it is over")
        stored = await self.store.events_after(race_id, after, limit + 1)
        events = [event_for(event, SPECTATOR) for event in stored[:limit] if isinstance(event, RaceEvent)]
        info = self.races.info(record)
        complete = len(stored) <= limit
        signature = None
        if complete and self.sign is not None:  # the record a client assembles from every page, as it will write it
            every = events if after == 0 else [
                event_for(event, SPECTATOR) for event in await self.store.events_after(race_id, 0, RECORD_EVENTS_MOST) if isinstance(event, RaceEvent)
            ]  # fmt: skip
            signature = self.sign(record_digest(as_map(info), [event.to_wire() for event in every]))
        return EventPage(info=info, events=events, complete=complete, signature=signature)
