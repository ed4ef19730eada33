"""Races in Redis: settings, seats, each player's actions, counters and the per-race event stream.

Every change of a race is one Lua script (lua/*.lua) that checks, writes and
appends its events atomically, so a reply is sent only for what is stored.
The store returns plain records; the race rules of the engine live in the
services, the result rules in lua/common.lua (they must be atomic with the
move that decides the race).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any, Concatenate, Final, ParamSpec, TypeVar, get_args, get_type_hints

import msgpack
from redis.exceptions import ConnectionError as RedisConnectionError

from server.store import keys
from server.store.connection import RedisClient, drop_idle_connections, repeatable, time_ms_at
from server.store.database import ArchivedRace, RaceArchive
from server.store.durability import Durability, ScriptRunner
from server.store.errors import suppress_store_failures, translate_errors
from server.store.scripts import Scripts, script_arguments, script_reply
from shared import card_text, deal
from shared.board import Status
from shared.protocol import (
    AttemptState,
    CloseReason,
    Countdown,
    Difficulty,
    ErrorCode,
    MoveMade,
    ProtocolError,
    RaceEvent,
    RaceResult,
    RaceStatus,
    ResultReason,
    event_from_map,
)
from shared.race.settings import SettingsInForce

DAY_MS = 24 * 3600 * 1000
ANALYSIS_SAFETY_MS: Final = 300_000
"""When a running race's safety entry in the analysis queue falls due, after its start (and again after each claim's
lease): only for a result whose process died before queueing it (:meth:`RaceStore.queue_finished`)."""

MOVE_HANDED_ON: Final = 3
"""lua/apply_move.lua's reply for a move it leaves to lua/apply_action.lua (nothing written)."""
FULL_SCRIPT_RACES_KEPT: Final = 4096
"""How many races :meth:`RaceStore.apply_action` remembers as sent to the full move script (forgetting one costs a
race one more apply_move.lua call)."""

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")
RaceStoreT = TypeVar("RaceStoreT", bound="RaceStore")

LifecycleObserver = Callable[[str, list[dict[str, Any]]], None]
"""Called with a race id and the lifecycle events (maps as in the event stream) one script emitted."""
RESULT_TOLD: Final = "result_told"
"""The race's state field set by the one caller that tells the observers of its result."""


class StoreRefusal(Exception):
    """A script refused a change; ``code`` is one of the protocol's error codes, nothing was written."""

    def __init__(self, code: ErrorCode, expected: int | None = None) -> None:
        super().__init__(code.value)
        self.code = code
        self.expected = expected


class StaleEpoch(Exception):
    """A change was checked against an older view of the race: its seats or its deal changed since (the epoch
    moved on). Nothing was written; the service reloads the race and checks again."""


class RaceIdTaken(Exception):
    """``create_race`` found a race under the id already (a 64-bit id drawn twice); nothing was written."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who takes a seat: the player id and display name, and for a registered account its handle and bot flag."""

    player: str
    name: str
    account: str | None = None
    """The account's handle as registered; None for an anonymous player."""
    bot: bool = False


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """One player's seat and counters as stored."""

    slot: int
    player: str
    name: str
    count: int
    left: int
    moves: int
    undos: int
    status: Status
    """The engine's status of the position after the last action."""
    state: AttemptState
    """``playing`` or how the attempt ended."""
    ended_at: int
    connected: bool = True
    """Whether the player's presence was last announced as connected (``back``) rather than ``disconnected``.
    Snapshots report presence as announced, so that they agree with the events a client folds after them."""
    grace_until: int | None = None
    """The ``grace_until`` of the last ``disconnected`` announced: when the attempt ends as abandoned unless the
    player is back; None while connected or when no grace period runs."""
    account: str | None = None
    """The seat's registered handle (None: anonymous)."""
    bot: bool = False
    berserk: bool = False
    """The arena player went berserk before the start (half the time limit: lua/berserk.lua)."""
    deadline: int | None = None
    """A berserk seat's own deadline (ms); None: the race's."""

    @property
    def identity(self) -> Identity:
        """Who sits here."""
        return Identity(self.player, self.name, self.account, self.bot)


@dataclass(frozen=True, slots=True)
class SealedDeal:
    """A race's deal as fixed: the seed, the commitment published in ``countdown`` and what it hides until the result
    (the salt and, for a pooled seed, the solver's proving line); the tier when the pool knew it."""

    seed: int
    salt: str
    """16 bytes in hex."""
    commitment: str
    difficulty: Difficulty | None = None
    proving_line: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NewRace:
    """What a race is created with: its settings, its sealed deal and how it came to be."""

    settings: SettingsInForce
    deal: SealedDeal
    seed_fixed: bool = False
    """The creator chose the seed (kept when a second player leaves the countdown)."""
    origin: str = "create"
    """``create``, ``quick_match`` or ``rematch``."""
    invite: str | None = None
    rematch_of: str | None = None
    record_ttl_ms: int | None = None
    """How long the record is kept once the race finishes: None for the server's retention of casual records
    (``RaceStore.record_ttl_ms``), 0 for ever (rated races may be kept)."""


@dataclass(frozen=True, slots=True)
class RaceRecord:
    """A race's settings and state as stored (times in ms since the Unix epoch, by Redis' clock)."""

    race_id: str
    status: RaceStatus
    """``waiting``, ``countdown``, ``running``, ``finished`` or ``closed`` (left before the start)."""
    settings: SettingsInForce
    deal: SealedDeal
    """The race's sealed deal (a new one when the second player leaves the countdown of a race with a random deal)."""
    created_at: int
    start_at: int | None
    deadline: int | None
    event_seq: int
    finished_at: int | None
    winner: int | None
    result_reason: ResultReason | CloseReason | None
    """A finished race's result reason, or a closed race's close reason."""
    seats: tuple[SeatRecord, ...]
    watchers: int = 0
    seed_fixed: bool = False
    origin: str = "create"
    invite: str | None = None
    rematch_race: str | None = None
    """The race both players agreed to play next, once created."""
    epoch: int = 0
    """Bumped by every script that changes the seats or the deal (join, leave): a view of the race built at one
    epoch (seats, seed, boards) is valid only while the epoch stays (0 for races stored before epochs)."""

    def slot_of(self, player: str) -> int | None:
        """The seat of ``player`` in this race, if any."""
        return next((seat.slot for seat in self.seats if seat.player == player), None)


@dataclass(frozen=True, slots=True)
class UndecodableEvent:
    """A stream entry that does not decode into a race event (a bug, or a writer of another version).

    The store has counted and logged it (:data:`UNDECODABLE_EVENTS`) when it read it; it keeps its place in the
    sequence so that readers move past it, and is delivered to nobody."""

    race: str
    seq: int
    error: str


StoredEvent = RaceEvent | UndecodableEvent
"""One entry of a race's event stream, decoded once, here: a typed event, or the record of one that did not decode."""


class DecodeFailures:
    """How many stored events failed to decode since the process started (for operators; each is logged too)."""

    def __init__(self) -> None:
        self.count = 0

    def record(self, race_id: str, seq: int, error: Exception) -> UndecodableEvent:
        """Count and log one event that does not decode."""
        self.count += 1
        log.error("race %s: stored event %d does not decode (%s); delivered to nobody", race_id, seq, error)
        return UndecodableEvent(race=race_id, seq=seq, error=str(error))


UNDECODABLE_EVENTS: Final = DecodeFailures()
"""The process's count of stored events that did not decode."""


@lru_cache(maxsize=1024)
def deal_texts(seed: int) -> tuple[list[list[str]], list[str]]:
    """The deal of ``seed`` in notation: six columns (first-dealt first) and the bouquet."""
    layout = deal(seed)
    return [[card_text(card) for card in column] for column in layout.columns], [card_text(card) for card in layout.bouquet]


@dataclass(frozen=True, slots=True)
class RematchOffer:
    """A stored rematch offer: the offering seat, whether both players have agreed, the rematch race if it exists."""

    slot: int
    agreed: bool
    rematch_race: str | None


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """A stored action: the player's action count after it, whether it was a resend, whether it ended the race.

    ``action`` is the action as stored: for a resend, the one first stored under the move id (whatever was resent).
    """

    move_seq: int
    duplicate: bool
    finished: bool
    action: str
    event: StoredEvent | None = None
    """The ``move`` event the action appended (not for a resend): the mover's own copy can go out with the reply."""


def presence_member(slot: int | None, connection_id: str, player: str = "") -> str:
    """How the presence script names a connection's lease: in seat ``slot``'s set (for ``player``: a lease is taken
    or renewed only while that player holds the seat), or a spectator's (slot None)."""
    return f"{'w' if slot is None else slot}|{player}|{connection_id}"


def _text(value: bytes | None) -> str:
    return "" if value is None else value.decode()


def _optional_ms(value: int) -> int | None:
    return value or None


def _seat(fields: Mapping[str, str], slot: int) -> SeatRecord | None:
    prefix = f"p{slot}_"
    if prefix + "player" not in fields:
        return None
    told = fields.get(prefix + "told", "here")  # the presence last announced: here, or away:<grace_until ms, 0 for none>
    return SeatRecord(
        slot=slot,
        player=fields[prefix + "player"],
        name=fields[prefix + "name"],
        count=int(fields[prefix + "count"]),
        left=int(fields[prefix + "left"]),
        moves=int(fields[prefix + "moves"]),
        undos=int(fields[prefix + "undos"]),
        status=Status(fields[prefix + "status"]),
        state=AttemptState(fields[prefix + "state"]),
        ended_at=int(fields[prefix + "ended_at"]),
        connected=told == "here",
        grace_until=None if told == "here" else _optional_ms(int(told.removeprefix("away:"))),
        account=fields.get(prefix + "account") or None,
        bot=fields.get(prefix + "bot") == "1",
        berserk=fields.get(prefix + "berserk") == "1",
        deadline=_optional_ms(int(fields.get(prefix + "deadline") or 0)),
    )


def _reason(value: str | None) -> ResultReason | CloseReason | None:
    if not value:
        return None
    return ResultReason(value) if value in ResultReason._value2member_map_ else CloseReason(value)


def settings_fields(settings: SettingsInForce) -> dict[str, str | int]:
    """The settings as fields of the race's state hash, each under its own name (lua/create.lua stores them as
    given): true and false as 1 and 0, an enum as its value, None left out (Lua reads a missing number as 0)."""
    stored: dict[str, str | int] = {}
    for name in _SETTING_READERS:
        value = getattr(settings, name)
        if value is not None:
            stored[name] = int(value) if isinstance(value, bool) else value.value if isinstance(value, Enum) else value
    return stored


def settings_from_fields(fields: Mapping[str, str]) -> SettingsInForce:
    """The settings stored by :func:`settings_fields`; a field missing or empty (a race stored before the setting
    existed) keeps the setting's default. A record of the layout before (rated records are kept for ever) reads as
    its race was: see :data:`OLD_LAYOUT`."""
    if "spectator_delay" in fields or fields.get("time_limit") == "0":
        fields = _from_old_layout(fields)
    return SettingsInForce(**{name: read(fields[name]) for name, read in _SETTING_READERS.items() if fields.get(name, "") != ""})


OLD_LAYOUT: Final = {"spectator_delay": "spectator_delay_ms", "grace": "grace_ms"}
"""Records stored before the settings were kept under their own names had these fields (the same values, ms) and
``time_limit`` 0 for no limit."""


def _from_old_layout(fields: Mapping[str, str]) -> dict[str, str]:
    renamed = {OLD_LAYOUT.get(name, name): value for name, value in fields.items()}
    if renamed.get("time_limit") == "0":
        del renamed["time_limit"]
    return renamed


def _reader(hint: Any) -> Callable[[str], Any]:
    """How a stored field of type ``hint`` (bool, int, str or a StrEnum, optionally None) is read back."""
    kind = next((arg for arg in get_args(hint) if arg is not type(None)), hint)
    if kind is bool:
        return lambda text: text == "1"
    if kind in (int, str) or (isinstance(kind, type) and issubclass(kind, Enum)):
        return kind  # type: ignore[no-any-return]
    raise TypeError(f"a race setting of type {hint} has no stored form")


_SETTING_READERS: Final = {name: _reader(hint) for name, hint in get_type_hints(SettingsInForce).items()}
"""Each setting's name and how its stored text is read back (every field of SettingsInForce, in order)."""


def _sealed_deal(fields: Mapping[str, str]) -> SealedDeal:
    return SealedDeal(
        seed=int(fields["seed"]),
        salt=fields.get("salt", ""),
        commitment=fields.get("commitment", ""),
        difficulty=Difficulty(fields["difficulty"]) if fields.get("difficulty") else None,
        proving_line=tuple(json.loads(fields["line"])) if fields.get("line") else (),
    )


def _record(fields: Mapping[str, str]) -> RaceRecord:
    seats = tuple(seat for seat in (_seat(fields, 0), _seat(fields, 1)) if seat is not None)
    winner = fields.get("winner")
    return RaceRecord(
        race_id=fields["id"],
        status=RaceStatus(fields["status"]),
        settings=settings_from_fields(fields),
        deal=_sealed_deal(fields),
        created_at=int(fields["created_at"]),
        start_at=_optional_ms(int(fields["start_at"])),
        deadline=_optional_ms(int(fields["deadline"])),
        event_seq=int(fields["event_seq"]),
        finished_at=_optional_ms(int(fields["finished_at"])),
        winner=None if winner is None or winner == "-1" else int(winner),
        result_reason=_reason(fields.get("result_reason")),
        seats=seats,
        watchers=int(fields.get("watchers", 0)),
        seed_fixed=fields.get("seed_fixed") == "1",
        origin=fields.get("origin") or "create",
        invite=fields.get("invite") or None,
        rematch_race=fields.get("rematch_race") or None,
        epoch=int(fields.get("epoch", 0)),
    )


def deal_arguments(deal: SealedDeal) -> dict[str, str]:
    """The script argument that stores a sealed deal (``deal_fields`` in lua/common.lua): the seed as a string (Lua's
    numbers hold 53 bits), salt, commitment, tier ('' none), proving line (JSON, '' none)."""
    line = json.dumps(list(deal.proving_line)) if deal.proving_line else ""
    tier = "" if deal.difficulty is None else deal.difficulty.value
    return {"seed": str(deal.seed), "salt": deal.salt, "commitment": deal.commitment, "difficulty": tier, "line": line}


def _event(race_id: str, entry_id: bytes, entry: Mapping[bytes, bytes]) -> StoredEvent:
    """The typed event of one stream entry."""
    return decode_event(race_id, int(entry_id.split(b"-")[1]), entry[b"e"])


def decode_event(race_id: str, seq: int, packed: bytes) -> StoredEvent:
    """The typed event of a stored map (the map, plus its race id and sequence number, and the deal of a
    ``countdown`` spelt out), or an UndecodableEvent that has been counted and logged."""
    try:
        body = msgpack.unpackb(packed, raw=False)
        if not isinstance(body, dict):
            raise TypeError("a stored event is one map")
        body.update(race=race_id, seq=seq)
        if body.get("type") == Countdown.TYPE:  # the stored seed spells out the layout and is never sent
            columns, bouquet = deal_texts(int(body.pop("seed")))
            body.update(columns=columns, bouquet=bouquet)
            body.setdefault("commitment", "")  # a race stored before deals were committed
            body.setdefault("seed_chosen", False)
        elif body.get("type") == RaceResult.TYPE and "seed" in body:
            body["seed"] = int(body["seed"])
        elif body.get("type") == MoveMade.TYPE and "columns" in body:  # Lua packs an empty column as an empty map
            body["columns"] = [list(column) if column else [] for column in body["columns"]]
        return event_from_map(body)
    except (ProtocolError, KeyError, ValueError, TypeError, msgpack.UnpackException) as error:
        return UNDECODABLE_EVENTS.record(race_id, seq, error)


def decode_published(race_id: str, message: bytes) -> StoredEvent:
    """The typed event of a published message (``"<seq> <msgpack>"``, as the scripts' ``emit`` publishes it)."""
    seq, _, packed = message.partition(b" ")
    return decode_event(race_id, int(seq), packed)


def repeatable_with_result(
    operation: Callable[Concatenate[RaceStoreT, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[RaceStoreT, P], Coroutine[Any, Any, T]]:
    """:func:`repeatable` for a race script that may store the race's result (the first argument is the race id):
    when the repeat follows a lost reply, a result that reply carried is told here (:meth:`RaceStore._tell_untold_result`)."""

    async def tell_untold_result(store: RaceStoreT, args: tuple[Any, ...]) -> None:
        await store._tell_untold_result(str(args[0]))

    return repeatable(operation, after_repeat=tell_untold_result)


@translate_errors
class RaceStore:
    """Reads and writes races; ``live_ttl_ms`` applies while a race runs, ``record_ttl_ms`` once it is finished or
    closed (the retention of casual records; a race created with its own ``NewRace.record_ttl_ms`` keeps that)."""

    def __init__(
        self,
        redis: RedisClient,
        *,
        live_ttl_ms: int = DAY_MS,
        record_ttl_ms: int = 7 * DAY_MS,
        max_actions: int = 1000,
        durability: Durability = Durability.PRIMARY,
        wait_timeout_ms: int = 1000,
        degraded_ok: bool = False,
        sharded_channels: bool = False,
    ) -> None:
        """``durability``: when a change counts as stored (a replica confirmed it within ``wait_timeout_ms``, at
        ``replica``; with ``degraded_ok``, at ``primary`` while the primary has no replica attached); see
        server/store/durability.py. ``sharded_channels``: events are published with SPUBLISH
        (a Redis Cluster of Redis >= 7, read by race_channel.ShardedRaceChannels)."""
        self.redis = redis
        self.scripts = Scripts(redis, sharded_channels=sharded_channels)
        self.runner = ScriptRunner(redis, durability, wait_timeout_ms=wait_timeout_ms, degraded_ok=degraded_ok)
        self.live_ttl_ms = live_ttl_ms
        self.record_ttl_ms = record_ttl_ms
        self.max_actions = max_actions
        self.archive: RaceArchive | None = None
        """Where finished races go for good (PostgreSQL): set, races are queued for it at their result, and a race
        Redis no longer holds is read from it (:meth:`load_race`, :meth:`actions`, :meth:`events_after`)."""
        self._archived: dict[str, ArchivedRace | None] = {}
        """Races read from the archive lately (None: not there either), oldest first, at most 256."""
        self.lifecycle: LifecycleObserver | None = None
        """Told the lifecycle events (started, attempt_ended, result) of every script this store ran."""
        self._full_script_races: dict[str, None] = {}
        """Races whose moves go to the full move script at once (apply_move.lua handed one on), oldest first."""

    async def close(self) -> None:
        """Close the store's own connection for race scripts (the redis-py client is closed by whoever made it)."""
        await self.runner.close()

    def script_lag(self) -> float:
        """Seconds the oldest race script still unanswered on the store's pipelined connection has waited (0 without
        one): moves and timers go there, not through the command pool."""
        pipeline = self.runner.pipeline
        return 0.0 if pipeline is None else pipeline.lag()

    async def _run(self, script: Any, race_id: str, *, lifecycle_at: int | None = None, **fields: Any) -> list[Any]:
        """Run a race script with its named ``fields`` (acknowledged at the store's durability level); ``lifecycle_at``
        is where its reply lists the lifecycle events it emitted."""
        arguments = script_arguments(live_ttl=self.live_ttl_ms, record_ttl=self.record_ttl_ms, **fields)
        result: list[Any] = script_reply(await self.runner.run(script, keys.race_keys(race_id), arguments))
        if result[0] == 0:
            if len(result) > 3:
                await self._observe(race_id, result[3])
            code = _text(result[1])
            if code == "exists":
                raise RaceIdTaken(race_id)
            if code == "stale_epoch":
                raise StaleEpoch(race_id)
            expected = int(result[2]) if len(result) > 2 else -1
            raise StoreRefusal(ErrorCode(code), expected if expected >= 0 else None)
        if lifecycle_at is not None and result[0] == 1 and len(result) > lifecycle_at:
            await self._observe(race_id, result[lifecycle_at])
        return result

    async def _observe(self, race_id: str, packed: Sequence[bytes]) -> None:
        """Tell the observer the lifecycle events a script emitted; a ``result`` among them puts the race in the
        analysis queue at once (:meth:`queue_finished`). A result is told once (:meth:`_claim_result`)."""
        if not packed:
            return
        events = [msgpack.unpackb(item, raw=False) for item in packed]
        result = any(event.get("type") == RaceResult.TYPE for event in events)
        if result and not await self._claim_result(race_id):  # told already, by a repeat that found it untold
            events = [event for event in events if event.get("type") != RaceResult.TYPE]
            result = False
        if self.lifecycle is not None and events:
            self.lifecycle(race_id, events)
        if result:
            await self.queue_finished(race_id)

    async def _claim_result(self, race_id: str) -> bool:
        """Whether this caller is the one that tells the observers of the race's result (``result_told``, set once):
        the caller of the script that stored it, or, when that reply was lost, the repeat that finds it untold."""
        return bool(await self.redis.hsetnx(keys.race_keys(race_id)[keys.STATE], RESULT_TOLD, 1))

    async def _tell_untold_result(self, race_id: str) -> bool:
        """After a call whose reply was lost: if the race has a result nobody told yet, tell the observers now (the
        result, read from the stream: the attempt ends that script reported with it are not, since where its events
        begin in the stream is not known); True if this call told it."""
        status = await self.redis.hget(keys.race_keys(race_id)[keys.STATE], "status")
        if status != RaceStatus.FINISHED.value.encode() or not await self._claim_result(race_id):
            return False
        result = await self._stored_result(race_id)
        if self.lifecycle is not None and result is not None:
            self.lifecycle(race_id, [result])
        await self.queue_finished(race_id)
        return True

    async def _stored_result(self, race_id: str) -> dict[str, Any] | None:
        """The race's ``result`` event as stored (the last events of the stream are read back until it is found)."""
        stream = keys.race_keys(race_id)[keys.EVENTS]
        newest = "+"
        while True:
            entries: Any = await self.redis.xrevrange(stream, newest, "-", count=16)
            if not entries:
                return None
            for _entry_id, entry in entries:
                body: dict[str, Any] = msgpack.unpackb(entry[b"e"], raw=False)
                if body.get("type") == RaceResult.TYPE:
                    return body
            newest = f"({entries[-1][0].decode()}"

    async def _due(self, race_id: str, result: Any) -> int | None:
        """The next deadline from a tick or presence reply (packed), observing the lifecycle events it lists."""
        result = script_reply(result)
        if isinstance(result, list):
            await self._observe(race_id, result[1])
            result = result[0]
        return _optional_ms(int(result))

    # --- changes (each one script) -----------------------------------------------------

    async def create_race(self, race_id: str, who: Identity, race: NewRace) -> int:
        """Store a new race with its creator in seat 0; returns its creation time (ms). RaceIdTaken if the id is taken.
        ``race.settings`` are stored as they are (RaceService.create resolves the spectator delay and grace first)."""
        result = await self._run(
            self.scripts.create,
            race_id,
            race=race_id,
            player=who.player,
            name=who.name,
            account=who.account or "",
            bot=int(who.bot),
            settings=settings_fields(race.settings),
            deal=deal_arguments(race.deal),
            seed_fixed=int(race.seed_fixed),
            origin=race.origin,
            invite=race.invite or "",
            rematch_of=race.rematch_of or "",
            own_record_ttl=race.record_ttl_ms,
        )
        return int(result[1])

    @repeatable
    async def discard_race(self, race_id: str) -> None:
        """Delete a race nobody was ever told about (a quick-match or rematch race made redundant by a concurrent one)."""
        await self.redis.delete(*keys.race_keys(race_id))

    async def leave_race(
        self,
        race_id: str,
        player: str,
        *,
        next_deal: SealedDeal,
        reason: CloseReason,
        only_waiting: bool = False,
        new_race: str | None = None,
    ) -> RaceStatus:
        """Give up ``player``'s seat before the start: ``closed`` (the creator left) or ``waiting`` (the seat freed,
        the race dealt ``next_deal``).

        ``only_waiting`` refuses (``already_started``) once a second player sits: for leaving on a disconnect.
        """
        result = await self._run(
            self.scripts.leave, race_id, player=player, reason=reason, only_waiting=only_waiting, new_race=new_race, deal=deal_arguments(next_deal)
        )
        return RaceStatus(_text(result[1]))

    @repeatable
    async def offer_rematch(self, race_id: str, player: str, stands_ms: int) -> RematchOffer:
        """Record ``player``'s rematch offer for a finished race, standing for ``stands_ms`` (unless one stands)."""
        result = await self._run(self.scripts.rematch_offer, race_id, player=player, stands_ms=stands_ms)
        if result[0] == 2:
            return RematchOffer(slot=int(result[1]), agreed=True, rematch_race=_text(result[2]))
        return RematchOffer(slot=int(result[1]), agreed=bool(result[2]), rematch_race=None)

    @repeatable
    async def link_rematch(self, race_id: str, new_race_id: str) -> str:
        """Announce ``new_race_id`` as the rematch of ``race_id``; returns the rematch actually linked (an earlier one wins)."""
        result = await self._run(self.scripts.rematch_link, race_id, new_race=new_race_id)
        return _text(result[1])

    async def emote(self, race_id: str, player: str, phrase: str) -> int:
        """Append ``player``'s quick emote ``phrase`` to the race's events; returns its seq. Not repeated after a lost
        reply (a second phrase would be shown twice)."""
        result = await self._run(self.scripts.emote, race_id, player=player, phrase=phrase)
        return int(result[1])

    async def close_by_operator(self, race_id: str, message: str) -> str:
        """Close a race that has no result yet (reason ``operator``, with ``message``); returns its status before."""
        result = await self._run(self.scripts.admin_close, race_id, message=message)
        return _text(result[1])

    async def berserk(self, race_id: str, player: str) -> int:
        """``player`` goes berserk in its race before the start (lua/berserk.lua): its own deadline, half the time
        limit after the start (ms), which it returns; StoreRefusal ``berserk_too_late`` after the countdown."""
        result = await self._run(self.scripts.berserk, race_id, player=player)
        return int(result[1])

    async def join_race(
        self, race_id: str, who: Identity, countdown_ms: int, keep: Mapping[str, str] | None = None, *, both_expected: bool = False,
        by_invite: bool = False,
    ) -> tuple[int, int | None]:
        """Seat ``who`` in seat 1 and start the countdown; returns (start_at, deadline). ``keep``: fields the race
        stores from now on (a rated race's rating change per seat and outcome, read by the result). ``both_expected``:
        both seats count as followed once (``seen``), so one no connection follows is away, announced at the earliest a
        presence interval from now (``told_at``). ``by_invite``: joined by the invite code, which is freed at the start
        (``unknown_invite`` from the start time on, closed races too)."""
        result = await self._run(
            self.scripts.join, race_id, player=who.player, name=who.name, countdown_ms=countdown_ms, account=who.account or "",
            bot=int(who.bot), keep=dict(keep or {}), both_expected=int(both_expected), by_invite=int(by_invite),
        )  # fmt: skip
        return int(result[1]), _optional_ms(int(result[2]))

    async def kept_fields(self, race_id: str, names: Sequence[str]) -> dict[str, str]:
        """Fields of the race's state hash stored with ``keep`` at the join (missing ones left out)."""
        values: list[Any] = await self.redis.hmget(keys.race_keys(race_id)[keys.STATE], list(names))
        return {name: value.decode() for name, value in zip(names, values) if value is not None}

    async def apply_action(
        self,
        race_id: str,
        slot: int,
        *,
        player: str,
        epoch: int,
        seq: int,
        move_id: str,
        action: str,
        count: int,
        left: int,
        status: Status,
        undos: int,
        ends: AttemptState | None = None,
        dealt: list[list[str]] | None = None,
    ) -> ApplyResult:
        """Append an action the engine accepted, if ``player`` still holds seat ``slot``, the race is still at
        ``epoch`` (else :class:`StaleEpoch`) and ``seq`` is still the player's action count
        (idempotent on ``move_id``). ``dealt``: the columns a redeal dealt, carried by its ``move`` event (clients
        do not know the seed).

        Repeated once on a fresh connection if the first one was dead (:func:`repeatable`): if the first attempt was
        stored after all, the repeat finds its ``move_id`` at ``seq`` + 1 and that is this call's own action.
        """
        arguments = {
            "slot": slot, "seq": seq, "move_id": move_id, "action": action, "count": count, "left": left, "status": status,
            "undos": undos, "ends": ends, "max_actions": self.max_actions, "player": player, "epoch": epoch, "columns": dealt,
        }  # fmt: skip
        try:
            result = await self._store_action(race_id, arguments)
        except RedisConnectionError:
            await drop_idle_connections(self.redis)
            result = await self._store_action(race_id, arguments)
            if result[0] == 2 and int(result[1]) == seq + 1:  # the first attempt was stored, its reply lost
                # If it finished the race, its result went with the lost reply: told here. (finished: told here, by
                # this move or by a script after it whose caller had not told it yet; either way the books wake up.)
                finished = await self._tell_untold_result(race_id)
                return ApplyResult(move_seq=seq + 1, duplicate=False, finished=finished, action=action)
        if result[0] == 2:
            return ApplyResult(move_seq=int(result[1]), duplicate=True, finished=False, action=_text(result[2]))
        event = decode_published(race_id, result[4]) if len(result) > 4 else None
        return ApplyResult(move_seq=int(result[1]), duplicate=False, finished=bool(result[2]), action=action, event=event)

    async def _store_action(self, race_id: str, arguments: dict[str, Any]) -> list[Any]:
        """The reply of the move scripts: lua/apply_move.lua (the common path, cheaper for Redis) for an action that
        does not end its attempt, lua/apply_action.lua (the full script) for one that does, for a race whose moves
        apply_move.lua handed on before (the other attempt is over, or the time limit passed), and for the moves
        apply_move.lua hands on (it writes nothing then)."""
        if arguments["ends"] is None and race_id not in self._full_script_races:
            result = await self._run(self.scripts.apply_move, race_id, lifecycle_at=3, **arguments)
            if result[0] != MOVE_HANDED_ON:
                return result
            self._full_script_races[race_id] = None
            while len(self._full_script_races) > FULL_SCRIPT_RACES_KEPT:
                del self._full_script_races[next(iter(self._full_script_races))]
        return await self._run(self.scripts.apply_action, race_id, lifecycle_at=3, **arguments)

    @repeatable
    async def check_action(self, race_id: str, slot: int, *, player: str, epoch: int, seq: int, move_id: str) -> ApplyResult | None:
        """For an action refused before it was stored: :class:`StaleEpoch` or ``not_seated`` if the engine checked an
        outdated view (as :meth:`apply_action`), the stored action if ``move_id`` was used already (a resend), else
        StoreRefusal with the race's, the attempt's or the sequence's refusal if any, else None (only the engine refuses it)."""
        result = await self._run(
            self.scripts.check_action, race_id, lifecycle_at=1, slot=slot, seq=seq, move_id=move_id, max_actions=self.max_actions,
            player=player, epoch=epoch,
        )  # fmt: skip
        if result[0] == 2:
            return ApplyResult(move_seq=int(result[1]), duplicate=True, finished=False, action=_text(result[2]))
        return None

    async def end_attempt(
        self, race_id: str, slot: int, reason: AttemptState, *, expected_moves: int | None = None, player: str | None = None
    ) -> bool:
        """End a player's attempt (only if it still has ``expected_moves`` actions, when given, and only if ``player``
        still holds the seat, when given: else ``not_seated``); True if the race finished."""
        try:
            result = await self._run(
                self.scripts.end_attempt, race_id, lifecycle_at=2, slot=slot, reason=reason, expected_moves=expected_moves,
                player=player or None,
            )  # fmt: skip
        except RedisConnectionError:  # not repeated (a resend is refused attempt_over), but a result it stored is told
            with suppress_store_failures():
                await drop_idle_connections(self.redis)
                await self._tell_untold_result(race_id)
            raise
        return bool(result[1])

    @repeatable_with_result
    async def presence(self, race_id: str, *, leave: bool, members: Sequence[str], lease_ms: int) -> int | None:
        """Add or renew (``leave`` False) or drop presence leases (members from :func:`presence_member`).

        Emits ``disconnected``/``back``/``watchers`` events as presence changes; returns the race's next deadline.
        """
        arguments = script_arguments(live_ttl=self.live_ttl_ms, record_ttl=self.record_ttl_ms, lease_ms=lease_ms, leave=leave, members=list(members))
        return await self._due(race_id, await self._run_periodic(self.scripts.presence, race_id, arguments))

    @repeatable_with_result
    async def tick(self, race_id: str) -> int | None:
        """Enforce the race's due deadlines; returns the next one (ms) or None."""
        arguments = script_arguments(live_ttl=self.live_ttl_ms, record_ttl=self.record_ttl_ms)
        return await self._due(race_id, await self._run_periodic(self.scripts.tick, race_id, arguments))

    async def _run_periodic(self, script: Any, race_id: str, arguments: list[bytes]) -> Any:
        """A presence or timer script, which every process runs for its races again and again: on the store's pipelined
        connection where it has one (script_pipeline.py: many races' scripts issued together go out in one write, and
        redis-py's per-command machinery is skipped), else through redis-py. Not acknowledged by a replica (as before:
        a lost renewal or tick is made good by the next one)."""
        pipeline = self.runner.pipeline
        if pipeline is not None:
            return await pipeline.run_script(script, keys.race_keys(race_id), arguments)
        return await script(keys=keys.race_keys(race_id), args=arguments)

    # --- reads ---------------------------------------------------------------------------------

    @repeatable
    async def load_race(self, race_id: str) -> RaceRecord | None:
        """The race's record, or None if there is no such race (or its record expired)."""
        raw: dict[Any, Any] = await self.redis.hgetall(keys.race_keys(race_id)[keys.STATE])
        if not raw:
            archived = await self._from_archive(race_id)
            return None if archived is None else _record(dict(archived.state))
        return _record({key.decode(): value.decode() for key, value in raw.items()})

    @repeatable
    async def statuses(self, race_ids: Iterable[str]) -> dict[str, tuple[RaceStatus | None, int]]:
        """Each race's status (None for a race that does not exist) and creation time (ms), in one round trip."""
        race_ids = list(race_ids)
        if not race_ids:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for race_id in race_ids:
                pipe.hmget(keys.race_keys(race_id)[keys.STATE], "status", "created_at")
            values: list[Any] = await pipe.execute()
        return {
            race_id: (None if status is None else RaceStatus(_text(status)), int(created_at or 0))
            for race_id, (status, created_at) in zip(race_ids, values)
        }

    async def replayable(self, race_ids: Iterable[str]) -> set[str]:
        """The races among ``race_ids`` that still replay: kept in Redis, or else archived."""
        statuses = await self.statuses(race_ids)
        kept = {race_id for race_id, (status, _created_at) in statuses.items() if status is not None}
        gone = [race_id for race_id in statuses if race_id not in kept]
        if gone and self.archive is not None:
            kept |= await self.archive.archived(gone)
        return kept

    @repeatable
    async def actions(self, race_id: str, slot: int, limit: int | None = None) -> list[str]:
        """The player's stored actions in order (moves in notation, ``undo``, ``redeal``); the first ``limit`` if given."""
        if limit == 0:
            return []
        raw: list[Any] = await self.redis.lrange(keys.race_keys(race_id)[keys.MOVES_0 + slot], 0, -1 if limit is None else limit - 1)
        if not raw and (archived := await self._archived_if_gone(race_id)) is not None:
            return list(archived.moves[slot][:limit])
        return [item.decode() for item in raw]

    @repeatable
    async def epoch_and_actions(self, race_id: str, slot: int) -> tuple[int, list[str]]:
        """The race's epoch and the player's stored actions, read at one instant (actions replay only on the deal
        of their own epoch)."""
        race = keys.race_keys(race_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hget(race[keys.STATE], "epoch")
            pipe.lrange(race[keys.MOVES_0 + slot], 0, -1)
            epoch, raw = await pipe.execute()
        return int(epoch or 0), [item.decode() for item in raw]

    @repeatable
    async def events_after(self, race_id: str, after_seq: int, limit: int = 10_000) -> list[StoredEvent]:
        """The race's events with a sequence number above ``after_seq``, in order."""
        entries: Any = await self.redis.xrange(keys.race_keys(race_id)[keys.EVENTS], f"(0-{after_seq}", "+", count=limit)
        if not entries and (archived := await self._archived_if_gone(race_id)) is not None:
            return [decode_event(race_id, seq, packed) for seq, packed in archived.events if seq > after_seq][:limit]
        return [_event(race_id, entry_id, entry) for entry_id, entry in entries]

    async def last_events(self, race_id: str, count: int) -> list[StoredEvent]:
        """The race's last ``count`` events, in order."""
        entries: Any = await self.redis.xrevrange(keys.race_keys(race_id)[keys.EVENTS], "+", "-", count=count)
        return [_event(race_id, entry_id, entry) for entry_id, entry in reversed(entries)]

    # --- timers -----------------------------------------------------------------------------------

    @repeatable
    async def schedule_earlier(self, race_id: str, due_ms: int) -> None:
        """Index the race at ``due_ms`` unless it is already due earlier (ZADD LT)."""
        await self.redis.zadd(keys.TIMERS, {race_id: due_ms}, lt=True)

    @repeatable
    async def schedule_earlier_many(self, dues: Mapping[str, int]) -> None:
        """:meth:`schedule_earlier` for many races in one command (a process's lease renewals)."""
        if dues:
            await self.redis.zadd(keys.TIMERS, dict(dues), lt=True)

    @repeatable
    async def schedule_many(self, dues: Mapping[str, int]) -> None:
        """Put (or move) each race in the timer index at its due time (ms), in one command (the sweeper, after its ticks)."""
        if dues:
            await self.redis.zadd(keys.TIMERS, dict(dues))

    @repeatable
    async def unschedule(self, *race_ids: str) -> None:
        """Take the races out of the timer index."""
        if race_ids:
            await self.redis.zrem(keys.TIMERS, *race_ids)

    @repeatable
    async def due_races(self, limit: int = 100) -> list[str]:
        """Races with a deadline due by Redis' clock."""
        raw: list[bytes] = await self.scripts.due_timers(keys=[keys.TIMERS], args=script_arguments(limit=limit))
        return [item.decode() for item in raw]

    # --- the index of races being played ----------------------------------------------------------

    @repeatable
    async def index_live(self, race_id: str, start_at: int) -> None:
        """List the race among the races being played (once both seats are taken)."""
        await self.redis.zadd(keys.LIVE, {race_id: start_at})

    async def queue_for_analysis(self, race_id: str, due_ms: int) -> None:
        """Put the race in the post-race analysis queue, looked at from ``due_ms`` on, unless it is there already: a
        running race's safety entry (its result queues it at once, :meth:`queue_finished`, maybe before this)."""
        await self.redis.zadd(keys.analysis_queue(), {race_id: due_ms}, nx=True)

    @property
    def archiving(self) -> bool:
        """Whether finished races go to an archive."""
        return self.archive is not None

    async def _from_archive(self, race_id: str) -> ArchivedRace | None:
        """The archived race, when an archive is set (the last 256 read are remembered: a replay reads page by page)."""
        if self.archive is None:
            return None
        if race_id in self._archived:
            return self._archived[race_id]
        race = await self.archive.get(race_id)
        self._archived[race_id] = race
        while len(self._archived) > 256:
            del self._archived[next(iter(self._archived))]
        return race

    async def _archived_if_gone(self, race_id: str) -> ArchivedRace | None:
        """The archived race, if Redis no longer holds the race (an empty list of a live race is not looked up)."""
        if self.archive is None or await self.redis.exists(keys.race_keys(race_id)[keys.STATE]):
            return None
        return await self._from_archive(race_id)

    async def queue_finished(self, race_id: str) -> None:
        """Make a race whose result this process's script just stored due for analysis now (score 0). The queue
        is not in the race's hash slot, so a race script cannot add it itself on a Redis Cluster; if this fails, or
        the process dies first, the race's safety entry from the countdown brings it to an analyst later. With an
        archive the race is queued for it too; a race not queued here (the process died, Redis failed) is not archived
        and keeps its Redis retention."""
        queued = False
        with suppress_store_failures():  # the result is stored: the caller's request succeeded
            if self.archiving:  # and to the archive queue (server/store/archive_queue.py), in the same round trip
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.zadd(keys.analysis_queue(), {race_id: 0})
                    pipe.xadd(keys.ARCHIVE_QUEUE, {"race": race_id})
                    await pipe.execute()
            else:
                await self.redis.zadd(keys.analysis_queue(), {race_id: 0})
            queued = True
        if not queued:
            log.warning("race %s: not queued for analysis (nor archiving) at its result; its safety entry will be", race_id)

    @repeatable
    async def live_race_ids(self, limit: int) -> list[str]:
        """Indexed races, latest start first (some may have finished since: callers prune them)."""
        raw: list[Any] = await self.redis.zrevrange(keys.LIVE, 0, limit - 1)
        return [item.decode() for item in raw]

    @repeatable
    async def unindex_live(self, race_ids: Sequence[str]) -> None:
        """Drop finished or expired races from the index."""
        if race_ids:
            await self.redis.zrem(keys.LIVE, *race_ids)

    @repeatable
    async def now_ms(self) -> int:
        """Redis' clock, the one all deadlines use (on a Cluster: the clock of the timer index's node, which compares
        the deadlines; each race's own times come from its node, so the nodes' clocks must agree, e.g. by NTP)."""
        return await time_ms_at(self.redis, keys.TIMERS)
