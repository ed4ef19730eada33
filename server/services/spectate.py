"""Spectating: the list of races being played, watching one (a snapshot in the past, then delayed events), replays.

Fair play: spectators lag ``delay`` behind the race, so a player cannot follow
the opponent's line live from a second connection. The snapshot a spectator
starts from is the race as it stood at *now − delay*, folded from the stored
events and rebuilt from the stored actions, never the live state; the events
after it are delivered by the event hub, each no earlier than its time plus the
delay. Everything is read from Redis, so any process can serve any race.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import takewhile

from server.services.errors import ServiceError
from server.services.race import RaceService
from server.services.views import SPECTATOR, board_view, event_for, race_as_of
from server.store import RaceRecord, RaceStore, StoredEvent
from shared.protocol import LIVE_STATUSES, BoardView, DealLayout, ErrorCode, RaceEvent, RaceInfo, RaceStatus, Spectators, as_map
from shared.race.record import record_digest
from shared.race.replay import replay


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


class SpectateService:
    """Lists, snapshots and replays for people without a seat; never changes a race."""

    def __init__(self, store: RaceStore, races: RaceService, *, sign: Callable[[bytes], str] | None = None) -> None:
        self.store = store
        self.races = races
        self.sign = sign
        self.histories = RaceHistories(store)
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
        history = [event for event in await self.histories.events(race_id) if isinstance(event, RaceEvent)]
        shown = list(takewhile(lambda event: event.at <= as_of, history))
        info, action_counts = race_as_of(record, shown, spectator_delay_ms=delay_ms)
        boards: list[BoardView] = []
        deal: DealLayout | None = None
        if info.status not in (RaceStatus.WAITING, RaceStatus.CLOSED):  # the countdown has dealt
            rules = record.settings.rules
            for slot, count in sorted(action_counts.items()):
                line = await self.races.line(record, slot, count)
                deal = line.deal
                boards.append(board_view(slot, line.actions, replay(record.deal.seed, rules, line.actions), line.redeal_columns))
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
