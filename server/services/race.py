"""The race service: create, join, leave, move, resign, stuck, sync, rematch — each stored in Redis by one script.

A move is validated against the player's own position with the shared engine,
then stored by one Lua script (seat and epoch check, sequence check,
idempotency on ``move_id``, append, counters, event) before it is acknowledged.
Positions are cached per process but any process can rebuild them from Redis
alone (seed, rules and the stored actions), so a race survives a restart or
moves to another process. Every cached view of a race is keyed by the race's
epoch, which the scripts bump whenever the seats or the deal change (a second
player joins or leaves the countdown): the move script refuses a view of an
older epoch, and the service then reloads the race and checks the move again.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import string
from collections import OrderedDict
from collections.abc import Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from server import metrics
from server.services import race_journal
from server.services.errors import ServiceError
from server.services.policy import RacePolicy
from server.services.ratings import PlayerBooks
from server.services.sessions import Session
from server.services.views import race_info
from server.store import (
    ANALYSIS_SAFETY_MS,
    Identity,
    NewRace,
    RaceIdTaken,
    RaceRecord,
    RaceStore,
    RematchOffer,
    SealedDeal,
    StaleEpoch,
    StoredEvent,
    StoreRefusal,
    deal_texts,
)
from shared import Action, Board, DeadCheck, EngineError, Rules, Special, Status, action_text, card_text, parse_action
from shared.protocol import AttemptState, CloseReason, DealLayout, Emote, ErrorCode, RaceInfo, RaceStatus, Spectators
from shared.race.replay import replay
from shared.race.rules import attempt_can_end_by_position

log = logging.getLogger(__name__)

RACE_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,32}")
"""Race ids are URL-safe; anything else (braces would break the Redis hash tag) names no race."""


@dataclass(frozen=True, slots=True)
class MoveOutcome:
    """A stored action and the player's position after it: the fields of the ``moved`` reply (which dispatch.py makes
    of it with :func:`shared.protocol.project`) but the request's id, and the move event."""

    race: str
    move: str
    seq: int
    """The player's action count including this one."""
    count: int
    left: int
    status: Status
    undos: int
    duplicate: bool
    columns: list[list[str]] | None = None
    """For a redeal: the columns it dealt (clients cannot compute them: the seed is hidden until the result)."""
    event: StoredEvent | None = None
    """The ``move`` event the action appended (None for a resend): the mover's copy may go out with the reply."""


@dataclass(frozen=True, slots=True)
class PlayerLine:
    """A player's actions as a client replays them: on ``deal``, with the columns its redeal dealt."""

    actions: list[str]
    redeal_columns: list[list[str]] | None
    deal: DealLayout | None


@dataclass(frozen=True, slots=True)
class SeatedRace:
    """What a player gets when it takes or finds its seat: the race as players see it, the seat, the stored record."""

    info: RaceInfo
    slot: int
    record: RaceRecord


@dataclass(frozen=True, slots=True)
class _RaceFacts:
    """The seats and the deal of a race at one epoch (both seats taken); valid while the race's epoch stays."""

    epoch: int
    seed: int
    rules: Rules
    players: tuple[str, ...]


class _StaleView(Exception):
    """The seats or the deal of the race changed since this process cached them: reload and check again."""


STALE_VIEW_ATTEMPTS = 3
"""How often a move is checked again on a reloaded race before it is refused ``unavailable`` (each reload follows a
seat change, which only happens before the start, so more than one is rare)."""


@dataclass(slots=True)
class _Game:
    """This process's copy of one player's position; ``actions`` is the stored action count it reflects."""

    board: Board | None = None
    actions: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def _attempt_end(status: Status, trial: Board) -> AttemptState | None:
    """How the position after a move ends the attempt: cleared when won, blocked when no move is left and nothing
    (undo, an unused redeal) could change that; None while it runs."""
    if status is Status.WON:
        return AttemptState.CLEARED
    if status is Status.BLOCKED and attempt_can_end_by_position(trial):
        return AttemptState.BLOCKED
    return None


def column_texts(board: Board) -> list[list[str]]:
    """The board's six columns in notation."""
    return [[card_text(card) for card in column] for column in board.columns]


def redealt_columns(seed: int, rules: Rules, actions: list[str]) -> list[list[str]] | None:
    """The columns the player's redeal dealt, if ``actions`` include one (what a client needs to replay them)."""
    if Special.REDEAL.value not in actions:
        return None
    up_to_redeal = actions[: actions.index(Special.REDEAL.value) + 1]
    return column_texts(replay(seed, rules, up_to_redeal))


RACE_ID_ALPHABET = string.ascii_letters + string.digits
RACE_ID_LENGTH = 11


def new_race_id() -> str:
    """A fresh random race id: 11 letters and digits (65 bits). No ``-`` or ``_``, so an id is one word to
    double-click and never looks like a command-line option (``flowergarden replay -x…``)."""
    return "".join(secrets.choice(RACE_ID_ALPHABET) for _ in range(RACE_ID_LENGTH))


class RaceService:
    """Races for identified players; never touches a socket, talks to Redis only through the store."""

    def __init__(
        self,
        store: RaceStore,
        *,
        countdown_ms: int = 3000,
        dead_check: DeadCheck | None = None,
        max_cached_games: int = 10_000,
        policy: RacePolicy | None = None,
        books: PlayerBooks | None = None,
    ) -> None:
        """``dead_check`` answers True only when it proved a position dead; it runs in a worker thread. ``books``
        rates rated races and books the results of registered players."""
        self.store = store
        self.books = books
        self.countdown_ms = countdown_ms
        self.dead_check = dead_check
        self.policy = policy or RacePolicy()
        self.max_cached_games = max_cached_games
        self._facts: OrderedDict[str, _RaceFacts] = OrderedDict()
        self._games: OrderedDict[tuple[str, int, int], _Game] = OrderedDict()
        """Positions by (race, epoch, seat): a position never outlives the seats and the deal it was dealt from, nor
        the race's result (:meth:`_drop_race`); ``max_cached_games`` bounds them for races whose end this process
        never learns of."""
        self._keys_of: dict[str, set[tuple[str, int, int]]] = {}
        """The keys of ``_games`` by race."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dead-check")
        self._background: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        """Stop pending dead checks."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def now_ms(self) -> int:
        """The clock of every race time (Redis' clock), ms since the Unix epoch."""
        return await self.store.now_ms()

    # --- creating and joining -------------------------------------------------------------

    async def create(self, race_id: str, who: Identity, race: NewRace) -> SeatedRace:
        """Open race ``race_id`` (drawn with :func:`new_race_id`) with ``who`` in seat 0; the seed is fixed now."""
        settings = race.settings
        resolved = replace(
            settings,
            spectator_delay_ms=self.policy.delay_for(
                settings.spectator_delay_ms, private=settings.private and race.origin != "quick_match", rated=settings.rated
            ),
            grace_ms=self.policy.grace_for(settings.grace_ms),
        )
        race = replace(race, settings=resolved)
        if settings.rated and self.books is not None:
            race = replace(race, record_ttl_ms=self.books.policy.record_ttl_ms)
        try:
            await self.store.create_race(race_id, who, race)
        except RaceIdTaken:  # a 64-bit id drawn twice
            raise ServiceError(ErrorCode.INTERNAL_ERROR, "race id collision") from None
        race_journal.race_created(race_id, who.player, race)
        return self._seated(await self.record(race_id), 0)

    async def join(
        self, race_id: str, who: Identity, *, accept_delay: int | None = None, expect_both: bool = False, by_invite: bool = False
    ) -> SeatedRace:
        """Take seat 1 of a waiting race; the countdown to the common start time begins (and the race is listed among
        the live races if anyone may watch it). A rated race claims both players and fixes their rating changes now
        (``account_required``, ``rated_busy``).

        A private race whose spectator delay is below the server's minimum is refused ``delay_not_accepted`` unless
        ``accept_delay`` (seconds) is at most its delay: the joiner has seen the delay and accepts it.

        ``expect_both`` (a rematch, whose players were seated for them): a seat no connection follows counts as away
        from the start, so its grace period runs (a seat otherwise counts only once a connection followed it). The
        join counts as an announcement of both seats (``told_at``), so the first one comes a second later at the
        earliest: a player that syncs at once is never announced away.

        ``by_invite``: joined by the race's invite code; a race that has one is refused ``invite_required`` otherwise
        (its id is its watch link, which is shared with spectators). The code is freed at the start: ``unknown_invite`` from then on (the join
        script decides it on the race's own clock; the lobby forgets the code a timer tick later).
        """
        waiting = await self.record(race_id)
        self._check_joiner(waiting, who, accept_delay=accept_delay, by_invite=by_invite)
        keep = {} if self.books is None or waiting.slot_of(who.player) is not None else await self.books.before_join(waiting, who)
        # Indexed before the script runs so that a crash right after it cannot lose the deadline; never later than
        # a deadline already indexed (a held-back presence announcement of the creator).
        await self.store.schedule_earlier(race_id, await self.store.now_ms() + self.countdown_ms)
        try:
            start_at, _deadline = await self.store.join_race(
                race_id, who, self.countdown_ms, keep, both_expected=expect_both, by_invite=by_invite
            )
        except StoreRefusal as refusal:
            if keep and self.books is not None:
                await self.books.join_failed(waiting, who)
            if refusal.code == ErrorCode.UNKNOWN_INVITE:
                raise ServiceError(ErrorCode.UNKNOWN_INVITE, "no open race has this invite code", field="code") from None
            raise _refused(refusal) from None
        race_journal.race_countdown(race_id, who.player, start_at)
        record = await self._counting_down(waiting, start_at)
        return self._seated(record, 1)

    def _check_joiner(self, waiting: RaceRecord, who: Identity, *, accept_delay: int | None, by_invite: bool) -> None:
        """Refusals asked only of a joiner the race could seat (a full, closed or own race answers as any join does,
        ``race_full``, ``race_closed``, ``already_seated``, first): ``invite_required`` for a private race joined by
        its link, ``delay_not_accepted`` for a delay below the server's minimum the joiner has not accepted."""
        joinable = waiting.status is RaceStatus.WAITING and len(waiting.seats) == 1 and waiting.slot_of(who.player) is None
        if not joinable:
            return
        if waiting.invite is not None and not by_invite:  # its id is the watch link anyone may be given
            raise ServiceError(ErrorCode.INVITE_REQUIRED, "this private race is joined with its invite code (join_invite), not its link")
        if not self.policy.needs_acceptance(waiting.settings):
            return
        delay_ms = self.policy.delay_of(waiting.settings)
        if accept_delay is None or accept_delay * 1000 > delay_ms:
            seconds = delay_ms // 1000
            raise ServiceError(
                ErrorCode.DELAY_NOT_ACCEPTED,
                f"spectators of this private race lag only {seconds} s behind (the server's minimum is "
                f"{self.policy.min_spectator_delay_ms // 1000} s); join with accept_delay {seconds} to accept",
                expected=seconds,
            )

    async def _counting_down(self, waiting: RaceRecord, start_at: int) -> RaceRecord:
        """After the join script seated the second player: the start indexed, the race listed live if anyone may watch
        it and queued for analysis, both positions dealt, the ladder told; the race as it is now."""
        race_id = waiting.race_id
        await self.store.schedule_earlier(race_id, start_at)
        if waiting.settings.spectators is Spectators.ANYONE:
            await self.store.index_live(race_id, start_at)
        await self.store.queue_for_analysis(race_id, start_at + ANALYSIS_SAFETY_MS)  # its result makes it due at once
        record = await self.record(race_id)
        self._deal_positions(record)
        if self.books is not None:
            await self.books.joined(race_id, start_at, [seat.identity for seat in record.seats])
        return record

    async def leave(
        self,
        race_id: str,
        player: str,
        *,
        next_deal: SealedDeal,
        reason: CloseReason,
        only_waiting: bool = False,
        new_race: str | None = None,
    ) -> RaceStatus:
        """Give up ``player``'s seat before the start: ``closed`` (seat 0 closes the race) or ``waiting`` (seat 1 freed).

        ``next_deal`` deals the race when it waits again; ``only_waiting`` refuses once a second player sits.
        """
        try:
            outcome = await self.store.leave_race(
                race_id, player, next_deal=next_deal, reason=reason, only_waiting=only_waiting, new_race=new_race
            )
        except StoreRefusal as refusal:
            raise _refused(refusal) from None
        race_journal.race_left(race_id, player, outcome, reason)
        return outcome

    async def berserk(self, race_id: str, player: str) -> int:
        """``player`` goes berserk before its race starts (half the time limit): its own deadline (ms); ServiceError
        ``berserk_too_late`` once the countdown is over, ``not_seated`` for a player not in the race."""
        try:
            return await self.store.berserk(race_id, player)
        except StoreRefusal as refusal:
            raise _refused(refusal) from None

    async def discard(self, race_id: str) -> None:
        """Delete a race nobody was told about."""
        await self.store.discard_race(race_id)
        race_journal.race_discarded(race_id)

    async def offer_rematch(self, race_id: str, player: str) -> RematchOffer:
        """Record a rematch offer of a finished race's player (it lapses after the policy's rematch window)."""
        await self.record(race_id)
        try:
            return await self.store.offer_rematch(race_id, player, self.policy.rematch_window_ms)
        except StoreRefusal as refusal:
            raise _refused(refusal) from None

    async def emote(self, race_id: str, player: str, phrase: Emote) -> None:
        """Send ``player``'s quick emote to its race (``not_started`` while the race waits for an opponent)."""
        if not RACE_ID_PATTERN.fullmatch(race_id):
            raise ServiceError(ErrorCode.UNKNOWN_RACE, f"there is no race {race_id[:32]!r}")
        try:
            await self.store.emote(race_id, player, phrase.value)
        except StoreRefusal as refusal:
            raise _refused(refusal) from None

    async def link_rematch(self, race_id: str, new_race_id: str) -> str:
        """Announce the rematch race to both players; returns the one linked (an earlier concurrent one wins)."""
        return await self.store.link_rematch(race_id, new_race_id)

    async def seated(self, race_id: str, player: str) -> SeatedRace:
        """The race and ``player``'s seat in it (``not_seated`` if it has none)."""
        record = await self.record(race_id)
        slot = record.slot_of(player)
        if slot is None:
            raise ServiceError(ErrorCode.NOT_SEATED, "you have no seat in this race")
        return self._seated(record, slot)

    async def sync(self, session: Session, race_id: str) -> tuple[SeatedRace, PlayerLine]:
        """The race, the player's seat and its line (to rebuild its board after a reconnect)."""
        seated = await self.seated(race_id, session.player)
        return seated, await self.line(seated.record, seated.slot)

    async def line(self, record: RaceRecord, slot: int, limit: int | None = None) -> PlayerLine:
        """A seat's stored actions (the first ``limit``), the columns of its redeal and the layout dealt (nil while
        the race waits): what a client replays without knowing the seed."""
        actions = await self.store.actions(record.race_id, slot, limit)
        dealt = record.status not in (RaceStatus.WAITING, RaceStatus.CLOSED)
        layout = DealLayout(*deal_texts(record.deal.seed)) if dealt else None
        return PlayerLine(actions, redealt_columns(record.deal.seed, record.settings.rules, actions), layout)

    # --- playing -----------------------------------------------------------------------------

    async def move(self, session: Session, race_id: str, *, seq: int, move_id: str, text: str) -> MoveOutcome:
        """Check ``text`` against the player's position and store it; the reply may be sent once this returns."""
        for _ in range(STALE_VIEW_ATTEMPTS):
            facts = await self._race_facts(race_id, session)
            try:
                return await self._move(race_id, facts, session.player, seq=seq, move_id=move_id, text=text)
            except _StaleView:
                self._forget(race_id)
        raise ServiceError(ErrorCode.UNAVAILABLE, "the race changed while the move was checked; send it again")

    async def _move(self, race_id: str, facts: _RaceFacts, player: str, *, seq: int, move_id: str, text: str) -> MoveOutcome:
        """One check of a move against this process's view of the race at ``facts.epoch``; _StaleView if outdated."""
        slot = facts.players.index(player)
        game = self._game(race_id, facts.epoch, slot)
        async with game.lock:
            if game.board is None or seq != game.actions:
                await self._load_game(race_id, slot, facts, game)
            assert game.board is not None
            try:
                action, trial = self._try_action(game, seq, text)
            except ServiceError as refused:
                return await self._refused_or_resent(race_id, facts, slot, player, seq=seq, move_id=move_id, refused=refused, board=game.board)
            status = trial.status()
            ends = _attempt_end(status, trial)
            canonical = action_text(action)
            dealt = column_texts(trial) if action is Special.REDEAL else None
            try:
                result = await self.store.apply_action(
                    race_id,
                    slot,
                    player=player,
                    epoch=facts.epoch,
                    seq=seq,
                    move_id=move_id,
                    action=canonical,
                    count=trial.foundation_count,
                    left=trial.cards_left,
                    status=status,
                    undos=trial.undos,
                    ends=ends,
                    dealt=dealt,
                )
            except StaleEpoch:
                raise _StaleView from None
            except StoreRefusal as refusal:
                if refusal.code == ErrorCode.OUT_OF_SEQUENCE:
                    game.board = None  # another process stored an action: reload next time
                raise self._refused_here(race_id, refusal) from None
            if result.duplicate:
                return await self._duplicate(race_id, slot, result.action, result.move_seq, game.board)
            game.board, game.actions = trial, result.move_seq
        if result.finished:
            self._finished(race_id)
        if ends is None and status is Status.PLAYING and self.dead_check is not None and attempt_can_end_by_position(trial):
            self._spawn(self._end_if_dead(race_id, facts.epoch, slot, trial.copy(), result.move_seq))
        return self._outcome(
            race_id, canonical, result.move_seq, trial, duplicate=False, status=status, columns=dealt, event=result.event
        )

    async def _refused_or_resent(
        self, race_id: str, facts: _RaceFacts, slot: int, player: str, *, seq: int, move_id: str, refused: ServiceError, board: Board
    ) -> MoveOutcome:
        """A move the engine refused here: a resend of a stored move is answered as the duplicate it is, and the race's
        state comes before the engine's refusal (docs/PROTOCOL.md "Order of checks"); else ``refused`` is raised."""
        try:
            stored = await self.store.check_action(race_id, slot, player=player, epoch=facts.epoch, seq=seq, move_id=move_id)
        except StaleEpoch:
            raise _StaleView from None  # the engine checked another deal: check again on the current one
        except StoreRefusal as refusal:
            raise self._refused_here(race_id, refusal) from None
        if stored is None:
            raise refused
        return await self._duplicate(race_id, slot, stored.action, stored.move_seq, board)

    @staticmethod
    def _try_action(game: _Game, seq: int, text: str) -> tuple[Action, Board]:
        """The action and the position after it, if ``seq`` is the player's next action number and the engine accepts
        it on this process's copy of the position; ServiceError ``out_of_sequence`` or the engine's code otherwise."""
        assert game.board is not None
        if seq != game.actions:
            raise ServiceError(ErrorCode.OUT_OF_SEQUENCE, f"your next action number is {game.actions}, not {seq}", expected=game.actions)
        try:
            action = parse_action(text)
            trial = game.board.copy()
            trial.play(action)
        except EngineError as error:
            raise ServiceError(error.code, error.message) from None
        return action, trial

    async def end_attempt(self, session: Session, race_id: str, reason: AttemptState) -> None:
        """End the player's attempt (``resigned`` or ``stuck``); its foundation count still counts."""
        facts = await self._race_facts(race_id, session)
        try:
            finished = await self.store.end_attempt(race_id, facts.players.index(session.player), reason, player=session.player)
        except StoreRefusal as refusal:
            raise self._refused_here(race_id, refusal) from None
        if finished:
            self._finished(race_id)

    async def rebuild(self, race_id: str) -> list[Board]:
        """Both players' positions rebuilt from Redis alone (settings, seed, stored actions)."""
        record = await self.record(race_id)
        rules = record.settings.rules
        return [replay(record.deal.seed, rules, await self.store.actions(race_id, seat.slot)) for seat in record.seats]

    def cached_board(self, race_id: str, slot: int) -> Board | None:
        """This process's live position of a player, if cached (for checks against :meth:`rebuild`)."""
        facts = self._facts.get(race_id)
        game = None if facts is None else self._games.get((race_id, facts.epoch, slot))
        return None if game is None else game.board

    # --- helpers --------------------------------------------------------------------------------

    def info(self, record: RaceRecord) -> RaceInfo:
        """The race as players and lists show it, with the spectator delay in force."""
        return race_info(record, spectator_delay_ms=self.policy.delay_of(record.settings))

    def _seated(self, record: RaceRecord, slot: int) -> SeatedRace:
        return SeatedRace(self.info(record), slot, record)

    async def find(self, race_id: str) -> RaceRecord | None:
        """The race's stored record, or None if there is none (or it expired)."""
        return await self.store.load_race(race_id)

    async def statuses(self, race_ids: Iterable[str]) -> dict[str, tuple[RaceStatus | None, int]]:
        """Each race's status (None for a race that does not exist) and creation time (ms), in one round trip."""
        return await self.store.statuses(race_ids)

    async def record(self, race_id: str) -> RaceRecord:
        """The race's stored record; ServiceError ``unknown_race`` if there is none."""
        record = await self.store.load_race(race_id) if RACE_ID_PATTERN.fullmatch(race_id) else None
        if record is None:
            raise ServiceError(ErrorCode.UNKNOWN_RACE, f"there is no race {race_id[:32]!r}")
        return record

    async def _race_facts(self, race_id: str, session: Session) -> _RaceFacts:
        """The race's seats and deal, checking that ``session`` sits in it and that both seats are taken.

        A cached view that does not seat the player is reloaded first: the player may have taken the seat since.
        """
        facts = self._facts.get(race_id)
        if facts is not None and session.player in facts.players:
            return facts
        record = await self.record(race_id)
        if record.slot_of(session.player) is None:
            raise ServiceError(ErrorCode.NOT_SEATED, "you have no seat in this race")
        if record.status is RaceStatus.CLOSED:
            raise ServiceError(ErrorCode.RACE_CLOSED, "the race was closed before it started")
        if len(record.seats) < 2:
            raise ServiceError(ErrorCode.NOT_STARTED, "the race is waiting for its second player")
        facts = _RaceFacts(
            epoch=record.epoch, seed=record.deal.seed, rules=record.settings.rules, players=tuple(seat.player for seat in record.seats)
        )
        self._remember(race_id, facts)
        return facts

    def _deal_positions(self, record: RaceRecord) -> None:
        """Keep the race just started here with both positions at its deal, so that a player's first move here reads
        neither the race nor its actions back from Redis, nor replays them (at a burst of starts those reads and
        replays queued up for seconds). Both seats share the dealt board: a move plays on a copy, never on it. Should
        a player's first actions be stored by another process, the sequence check reloads as for any cached view."""
        if len(record.seats) < 2 or record.status is RaceStatus.CLOSED:
            return
        facts = _RaceFacts(
            epoch=record.epoch, seed=record.deal.seed, rules=record.settings.rules, players=tuple(seat.player for seat in record.seats)
        )
        self._remember(record.race_id, facts)
        dealt = Board.deal(facts.seed, facts.rules)
        for seat in record.seats:
            game = self._game(record.race_id, facts.epoch, seat.slot)
            if game.board is None and not game.lock.locked():
                game.board, game.actions = dealt, 0

    def _remember(self, race_id: str, facts: _RaceFacts) -> None:
        """Cache a race's seats and deal (the least recently used beyond ``max_cached_games`` are dropped)."""
        self._facts[race_id] = facts
        self._facts.move_to_end(race_id)
        while len(self._facts) > self.max_cached_games:
            self._facts.popitem(last=False)

    def _refused_here(self, race_id: str, refusal: StoreRefusal) -> ServiceError:
        """The error for a script's refusal of an action; ``not_seated`` also drops this process's outdated view."""
        if refusal.code == ErrorCode.NOT_SEATED:
            self._forget(race_id)
        return _refused(refusal)

    def _forget(self, race_id: str) -> None:
        """Drop this process's view of the race's seats and deal (its boards are keyed by the epoch and age out)."""
        self._facts.pop(race_id, None)

    def _game(self, race_id: str, epoch: int, slot: int) -> _Game:
        key = (race_id, epoch, slot)
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = _Game()
            self._keys_of.setdefault(race_id, set()).add(key)
            while len(self._games) > self.max_cached_games:
                oldest_key, oldest = next(iter(self._games.items()))
                if oldest.lock.locked():
                    break
                self._drop_game(oldest_key)
            metrics.cached_positions(len(self._games))
        self._games.move_to_end(key)
        return game

    def _drop_game(self, key: tuple[str, int, int]) -> None:
        del self._games[key]
        keys = self._keys_of.get(key[0])
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._keys_of[key[0]]

    def _finished(self, race_id: str) -> None:
        """This process stored the race's result: book it, and drop its positions."""
        if self.books is not None:
            self.books.notify()
        self._drop_race(race_id)

    def _drop_race(self, race_id: str) -> None:
        """Forget a race that is over (its positions are ~28 KB each: kept, 10,000 of them held ~280 MB a process).
        A move still under way on a dropped position finishes on its own copy; a later resend reloads from Redis."""
        self._facts.pop(race_id, None)
        for key in self._keys_of.pop(race_id, set()):
            self._games.pop(key, None)
        metrics.cached_positions(len(self._games))

    async def races_ticked(self, race_ids: Iterable[str]) -> None:
        """After the timer sweep ticked these races: drop the positions of those that are over (a time limit, or the
        other player's last action on another process, ended them), read in one round trip. Every running race is
        ticked about once per presence lease, so a race that ended elsewhere is forgotten here within one."""
        cached = [race_id for race_id in race_ids if race_id in self._keys_of or race_id in self._facts]
        if not cached:
            return
        for race_id, (status, _) in (await self.store.statuses(cached)).items():
            if status not in (RaceStatus.COUNTDOWN, RaceStatus.RUNNING, RaceStatus.WAITING):
                self._drop_race(race_id)

    @property
    def cached_positions(self) -> int:
        """How many player positions this process keeps (two per race being played here)."""
        return len(self._games)

    async def _load_game(self, race_id: str, slot: int, facts: _RaceFacts, game: _Game) -> None:
        """Rebuild the position from the stored actions; _StaleView if they belong to another epoch's deal."""
        epoch, actions = await self.store.epoch_and_actions(race_id, slot)
        if epoch != facts.epoch:
            raise _StaleView
        game.board, game.actions = replay(facts.seed, facts.rules, actions), len(actions)

    async def _duplicate(self, race_id: str, slot: int, move: str, move_seq: int, board: Board) -> MoveOutcome:
        """The reply to a resend: the stored action, with the columns it dealt when it was the redeal (a client whose
        first reply was lost has no other way to learn them but a ``sync``)."""
        columns = None
        if move == Special.REDEAL.value:
            columns = (await self.line(await self.record(race_id), slot, move_seq)).redeal_columns
        return self._outcome(race_id, move, move_seq, board, duplicate=True, columns=columns)

    @staticmethod
    def _outcome(
        race_id: str,
        move: str,
        move_seq: int,
        board: Board,
        *,
        duplicate: bool,
        status: Status | None = None,
        columns: list[list[str]] | None = None,
        event: StoredEvent | None = None,
    ) -> MoveOutcome:
        """The reply's view of ``board``; ``status`` when the caller computed it already (once per move is enough);
        ``columns``: what a redeal dealt; ``event``: the ``move`` event the action appended."""
        return MoveOutcome(
            race=race_id,
            move=move,
            seq=move_seq,
            count=board.foundation_count,
            left=board.cards_left,
            status=board.status() if status is None else status,
            undos=board.undos,
            duplicate=duplicate,
            columns=columns,
            event=event,
        )

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _end_if_dead(self, race_id: str, epoch: int, slot: int, board: Board, actions: int) -> None:
        """Run the dead check off the event loop; end the attempt only on a proof, only if no action came since."""
        game = self._games.get((race_id, epoch, slot))
        dead_check = self.dead_check
        assert dead_check is not None

        def proved_dead() -> bool:
            # Checks queue behind each other; one whose position is already stale is skipped.
            return (game is None or game.actions == actions) and board.status(dead_check) is Status.DEAD

        try:
            dead = await asyncio.get_running_loop().run_in_executor(self._executor, proved_dead)
            if dead and await self.store.end_attempt(race_id, slot, AttemptState.DEAD, expected_moves=actions):
                self._finished(race_id)
        except StoreRefusal:
            pass  # the player acted or the race ended meanwhile
        except Exception:
            log.exception("dead check of race %s seat %d failed", race_id, slot)


def _refused(refusal: StoreRefusal) -> ServiceError:
    messages: dict[ErrorCode, str] = {
        ErrorCode.UNKNOWN_RACE: "there is no such race",
        ErrorCode.RACE_FULL: "both seats of this race are taken",
        ErrorCode.ALREADY_SEATED: "you already sit in this race",
        ErrorCode.NOT_STARTED: "the race has not started yet",
        ErrorCode.RACE_OVER: "the race is over",
        ErrorCode.ATTEMPT_OVER: "your attempt has ended",
        ErrorCode.OUT_OF_SEQUENCE: f"your next action number is {refusal.expected}",
        ErrorCode.TOO_MANY_MOVES: "this attempt has reached the action limit",
        ErrorCode.NOT_SEATED: "you have no seat in this race",
        ErrorCode.RACE_CLOSED: "the race was closed before it started",
        ErrorCode.ALREADY_STARTED: "the race has started: resign instead",
        ErrorCode.BERSERK_TOO_LATE: "the race has started: berserk is chosen during the countdown only",
        ErrorCode.NOT_FINISHED: "the race has no result yet",
    }
    return ServiceError(refusal.code, messages.get(refusal.code, refusal.code.value), expected=refusal.expected)
