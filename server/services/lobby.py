"""The lobby: open races listed live, private races with invite codes, leaving before the start, and the
heartbeats that close races whose creator's connection or server went away.

A race waiting for an opponent belongs to the connection that opened it (its
:class:`Owner`), whose process refreshes a heartbeat in Redis every few
seconds. Closing that connection on purpose closes the race; a dropped
connection, a process that dies or one that shuts down gracefully just stops
the heartbeats: the creator may reconnect (to any process) and ``sync`` the race
within the staleness period to hold it again, else any process closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from server.services.background import BackgroundLoop
from server.services.dealer import Dealer
from server.services.errors import ServiceError
from server.services.race import RaceService, SeatedRace, new_race_id
from server.services.ratings import check_rated
from server.services.views import lobby_entry
from server.store import (
    GuessLimit,
    Identity,
    InviteLimits,
    InviteRefusal,
    LobbyStore,
    NewRace,
    QueueEntry,
    QuickMatchStore,
    RaceRecord,
    StoreError,
)
from shared.protocol import OPEN_STATUSES, CloseReason, ErrorCode, RaceSettings, RaceStatus, as_map

log = logging.getLogger(__name__)

"""A race is open (listed, joinable by invite, held by its owner) until it starts or closes."""

LEFT_LOBBY_REMEMBERED = 100_000
"""Races this process took out of the lobby after a tick, remembered so as not to look at them again (then forgotten
all at once: a forgotten race is only looked at once more)."""

INVITE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
"""32 symbols without 0/O and 1/I, so a code read aloud or from a screen is unambiguous."""
INVITE_LENGTH = 8
"""32^8 = 2^40 codes. With the guessing limits (:class:`InviteLimits`: at most 600 wrong codes a minute from
everybody together) a given code is hit within a day with a chance below one in a million, and even 10,000 open
private races take about 127 days to the first hit (docs/PROTOCOL.md "Invite codes" has the arithmetic); 2^30
codes would have given a hit in 30 hours with 1,000 races."""


GUESS_LIMITS = {
    GuessLimit.PLAYER: "too many wrong invite codes from you",
    GuessLimit.SOURCE: "too many wrong invite codes from your network address",
}
"""What each guessing limit tells the player it refused."""


def new_invite_code() -> str:
    """A random invite code."""
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_LENGTH))


def normalized_invite(code: str) -> str | None:
    """The code as stored (upper case, without spaces or dashes), or None if it cannot be one."""
    cleaned = code.strip().upper().replace("-", "").replace(" ", "")
    if len(cleaned) != INVITE_LENGTH or any(char not in INVITE_ALPHABET for char in cleaned):
        return None
    return cleaned


class Owner:
    """What one connection holds open before a start: races waiting for an opponent, and its quick-match entry;
    and whose they are (the player, once it said hello, and the client address), for the per-player and per-address
    limits."""

    __slots__ = ("address", "identity", "on_paired", "player", "queue", "races", "reserved")

    def __init__(self, address: str = "", player: str | None = None) -> None:
        self.races: set[str] = set()
        self.reserved = 0
        """Places taken by requests still opening a race or a queue entry (:meth:`LobbyService.place`)."""
        self.queue: QueueEntry | None = None
        self.address = address
        self.player = player
        self.identity: Identity | None = None
        """Who waits in the queue entry (rated quick match pairs it later, as its window widens)."""
        self.on_paired: Callable[[SeatedRace], Awaitable[None]] | None = None
        """Called when a later pairing seated the waiting player in another race."""

    def open_count(self) -> int:
        """Races and queue entries held, and the places of those being opened."""
        return len(self.races) + (self.queue is not None) + self.reserved

    def race_ids(self) -> set[str]:
        """Every race held, including the one its queue entry waits in."""
        return self.races | ({self.queue.race_id} if self.queue is not None else set())


@dataclass(frozen=True, slots=True)
class LobbyLimits:
    """Bounds and periods of the lobby (``flowergarden serve`` sets the list size)."""

    max_open_per_owner: int = 3
    """Races one connection may have waiting for an opponent at once (a quick-match entry counts)."""
    max_open_per_player: int = 3
    """The same across all connections of one player on this server process."""
    max_open_per_address: int = 10
    """The same across all connections from one client address on this server process (0: no limit): a flood of
    connections from one address cannot fill the lobby."""
    max_waiting_seconds: float = 600.0
    """A race still waiting for its second player this long after it was opened is closed (``race_closed``
    ``expired``; 0: never)."""
    heartbeat_seconds: float = 5.0
    stale_seconds: float = 20.0
    """A waiting race whose heartbeat is older than this is closed (its owner's process went away)."""
    invites: InviteLimits = field(default_factory=InviteLimits)
    """Wrong invite codes allowed per player, per source address and overall; then ``rate_limited``."""


class LobbyService:
    """Creating, joining and leaving races before their start, and the lobby list they appear in."""

    def __init__(
        self, races: RaceService, store: LobbyStore, queue: QuickMatchStore, dealer: Dealer, limits: LobbyLimits, *, invite_ttl_ms: int
    ) -> None:
        """``invite_ttl_ms`` bounds an invite code's life (a race is open at most as long as an unfinished race lives)."""
        self.races = races
        self.store = store
        self.queue = queue
        self.dealer = dealer
        self.limits = limits
        self.invite_ttl_ms = invite_ttl_ms
        self._owners: set[Owner] = set()
        self._loop = BackgroundLoop("lobby: heartbeat")
        self._left_lobby: set[str] = set()
        self.requeue: Callable[[RaceRecord], Awaitable[None]] | None = None
        """Puts a quick-match race whose second player left the countdown back into its queue (set by the quick-match
        service, which knows ratings)."""

    # --- requests ----------------------------------------------------------------------------------

    async def create(self, who: Identity, settings: RaceSettings, owner: Owner, *, origin: str = "create") -> SeatedRace:
        """Open a race with ``who`` in seat 0: listed in the lobby, or private with an invite code (``origin``:
        ``create``, or ``ghost`` for a ghost race, server/services/ghost.py)."""
        check_rated(settings, who)
        if settings.rated and self.races.books is not None:
            await self.races.books.refuse_if_playing_rated(who.player)
        async with self.place(owner):
            race = await self.dealer.deal(settings, origin=origin)
            race_id = new_race_id()
            try:
                if race.settings.private:
                    race = replace(race, invite=await self._claim_invite(race_id))
                seated = await self.races.create(race_id, who, race)
            except BaseException:
                await self._undo_deal(race)
                raise
            record = seated.record
            if not await self.store.open(race_id, self._entry(record) if is_listed(record) else None, record.created_at):
                await self.races.leave(race_id, who.player, next_deal=race.deal, reason=CloseReason.LOBBY_FULL)
                await self._undo_deal(race)
                raise ServiceError(ErrorCode.LOBBY_FULL, "the lobby is full; create a private race or try again later")
            self.track(owner, race_id)
        return seated

    async def join(self, race_id: str, who: Identity, *, accept_delay: int | None = None, by_invite: bool = False) -> SeatedRace:
        """Take seat 1 of a waiting race (the countdown starts); the lobby shows the race as full.

        ``accept_delay``: the spectator delay (s) the joiner accepts in a private race below the server's minimum;
        ``by_invite``: joined by the invite code (``unknown_invite`` once the race has started or closed)."""
        seated = await self.races.join(race_id, who, accept_delay=accept_delay, by_invite=by_invite)
        if is_listed(seated.record):
            await self.store.change(race_id, self._entry(seated.record))
        return seated

    async def join_invite(self, code: str, who: Identity, address: str, *, accept_delay: int | None = None) -> SeatedRace:
        """Join the private race of an invite code; wrong codes are limited per player, per client ``address`` (see
        ``transport.client_address``) and overall, so that guessing a code stays hopeless (docs/PROTOCOL.md "Invite
        codes")."""
        player = who.player
        admission = await self.store.invite_attempt(player, address, self.limits.invites)
        if isinstance(admission, InviteRefusal):
            wait = -(-admission.retry_after_ms // 1000)
            raise ServiceError(ErrorCode.RATE_LIMITED, f"{GUESS_LIMITS[admission.limit]}; try again in {wait} s", field="code")
        await asyncio.sleep(admission / 1000)  # everybody's misses passed the overall limit: guesses slow down
        normalized = normalized_invite(code)
        race_id = None if normalized is None else await self.store.race_of_invite(normalized)
        if race_id is None:
            raise ServiceError(ErrorCode.UNKNOWN_INVITE, "no open race has this invite code", field="code")
        await self.store.invite_refund(player, address)
        return await self.join(race_id, who, accept_delay=accept_delay, by_invite=True)

    async def leave(self, race_id: str, player: str, owner: Owner) -> None:
        """Give up a seat before the start: the creator closes the race, the second player frees its seat."""
        record = await self.races.record(race_id)
        slot = record.slot_of(player)
        if slot is None:
            raise ServiceError(ErrorCode.NOT_SEATED, "you have no seat in this race")
        if slot == 0 and record.origin == "quick_match":
            await self._leave_queue(race_id, player, owner)
        outcome = await self._give_up_seat(record, player, slot)
        if slot == 1:
            await self._seat_freed(record, outcome)
        if outcome is RaceStatus.CLOSED:
            owner.races.discard(race_id)
            await self.store.close(race_id, record.invite)
        elif is_listed(record):
            await self.store.change(race_id, self._entry(await self.races.record(race_id)))

    async def _leave_queue(self, race_id: str, player: str, owner: Owner) -> None:
        """The creator of a quick-match race leaves: its queue entry for that race is cancelled."""
        entry = await self.queue.entry_of(player)
        if entry is not None and entry.race_id == race_id:
            await self.queue.cancel(entry)
        if owner.queue is not None and owner.queue.race_id == race_id:
            owner.queue = None

    async def _give_up_seat(self, record: RaceRecord, player: str, slot: int) -> RaceStatus:
        """Leave the seat (the second player's leaving deals the race anew); a fresh deal is given back to the pool
        when the leave is refused."""
        next_deal = await self.dealer.next_deal(record) if slot == 1 else record.deal
        try:
            return await self.races.leave(record.race_id, player, next_deal=next_deal, reason=CloseReason.LEFT)
        except ServiceError:
            if next_deal.seed != record.deal.seed and record.settings.solvable_only:
                await self.dealer.give_back_deal(record.settings.profile, next_deal, tiered=record.settings.asked_difficulty is not None)
            raise

    async def _seat_freed(self, record: RaceRecord, outcome: RaceStatus) -> None:
        """The second seat was freed: the ladder's books hear of it, and a quick-match race still waiting queues again."""
        if self.races.books is not None:
            await self.races.books.seat_freed(record)
        if outcome is RaceStatus.WAITING and record.origin == "quick_match" and self.requeue is not None:
            await self.requeue(await self.races.record(record.race_id))

    # --- owners ------------------------------------------------------------------------------------

    def track(self, owner: Owner, race_id: str) -> None:
        """``owner``'s connection holds ``race_id`` open (it is closed when the connection goes)."""
        owner.races.add(race_id)
        self._owners.add(owner)

    async def hold_queue(self, owner: Owner, entry: QueueEntry, record: RaceRecord) -> None:
        """``owner``'s connection waits in the quick-match queue, in the unlisted race of ``record``."""
        await self.store.open(record.race_id, None, record.created_at)
        self._track_queue(owner, entry)

    def owners(self) -> list[Owner]:
        """The connections of this process that hold open races or queue entries."""
        return list(self._owners)

    def _track_queue(self, owner: Owner, entry: QueueEntry) -> None:
        owner.queue = entry
        self._owners.add(owner)

    async def adopt(self, owner: Owner, record: RaceRecord, player: str) -> None:
        """A creator resumed its waiting race on this connection (after a reconnect): it holds the race again."""
        if record.status is not RaceStatus.WAITING or record.slot_of(player) != 0:
            return
        if record.origin == "quick_match":
            entry = await self.queue.entry_of(player)
            if entry is not None and entry.race_id == record.race_id:
                self._track_queue(owner, entry)
        else:
            self.track(owner, record.race_id)

    async def disconnect(self, owner: Owner, player: str | None, *, going_away: bool, deliberate: bool) -> None:
        """The connection closed. Its quick-match entry is cancelled at once, and the races it waits in are closed if the
        client closed the connection on purpose (``deliberate``). A dropped connection's races stay open: their
        heartbeats stop, and any process closes them once stale, unless their creator reconnects and ``sync``s them
        first. When this server is ``going_away`` everything is kept for a takeover by another process."""
        self._owners.discard(owner)
        if going_away or player is None:
            return
        if owner.queue is not None and await self.queue.cancel(owner.queue):
            await self.abandon(owner.queue.race_id, player, reason=CloseReason.CANCELLED)
        owner.queue = None
        if deliberate:
            for race_id in owner.races:
                await self.abandon(race_id, player, reason=CloseReason.ABANDONED)
        owner.races.clear()

    async def abandon(self, race_id: str, player: str, *, reason: CloseReason) -> None:
        """Close ``player``'s race if it still waits for an opponent (a race that found one goes ahead)."""
        record = await self.races.find(race_id)
        if record is None:
            return
        with contextlib.suppress(ServiceError):
            await self.races.leave(race_id, player, next_deal=record.deal, reason=reason, only_waiting=True)
            await self.store.close(race_id, record.invite)

    async def races_ticked(self, race_ids: Sequence[str]) -> None:
        """After deadlines of the races fired: once one has started, it leaves the lobby and its invite code is freed.
        Their statuses are read in one round trip; a race this process already took out is not looked at again (a
        running race is ticked about once per presence lease)."""
        statuses = await self.races.statuses([race_id for race_id in race_ids if race_id not in self._left_lobby])
        for race_id, (status, _) in statuses.items():
            if status in OPEN_STATUSES:
                continue
            record = None if status is None else await self.races.find(race_id)
            await self.store.close(race_id, None if record is None else record.invite)
            if len(self._left_lobby) >= LEFT_LOBBY_REMEMBERED:
                self._left_lobby.clear()
            self._left_lobby.add(race_id)

    # --- heartbeats --------------------------------------------------------------------------------

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """Refresh this process's heartbeats and close other processes' stale races, until stopped."""

        async def step() -> None:
            await asyncio.sleep(self.limits.heartbeat_seconds)
            await self.heartbeat_once()
            await self.close_stale_once()

        await self._loop.run(step, retry_seconds=0)

    async def heartbeat_once(self) -> None:
        """Refresh the heartbeat of every race and queue entry held by a connection of this process, after closing
        those that waited for an opponent longer than the limit."""
        waiting = await self._forget_started()
        now = await self.store.now_ms()
        await self._expire(waiting, now)
        await self.store.heartbeat({race_id for owner in self._owners for race_id in owner.race_ids()})
        await self.queue.heartbeat([owner.queue for owner in self._owners if owner.queue is not None], now)

    async def close_stale_once(self) -> int:
        """Close waiting races whose heartbeat went stale (any process may do it, any number of times)."""
        now = await self.store.now_ms()
        stale = await self.store.stale(now - round(self.limits.stale_seconds * 1000))
        for race_id in stale:
            record = await self.races.find(race_id)
            if record is not None and record.status is RaceStatus.WAITING and record.seats:
                log.info("lobby: closing race %s, its creator's server went away", race_id)
                await self.abandon(race_id, record.seats[0].player, reason=CloseReason.ABANDONED)
            await self.store.close(race_id, None if record is None else record.invite)
        return len(stale)

    # --- helpers -----------------------------------------------------------------------------------

    async def _forget_started(self, owners: Iterable[Owner] | None = None) -> dict[str, int]:
        """Drop from the owners the races (and queue entries) no longer open: they started, or were closed elsewhere.
        Returns the races held that wait for an opponent, with their creation times (ms)."""
        owners = list(self._owners if owners is None else owners)
        statuses = await self.races.statuses({race_id for owner in owners for race_id in owner.race_ids()})
        # Only races looked up and found over are dropped: one tracked while the statuses were read stays.
        over = {race_id for race_id, (status, _) in statuses.items() if status not in OPEN_STATUSES}
        for owner in owners:
            owner.races -= over
            if owner.queue is not None and owner.queue.race_id in over:
                owner.queue = None
        return {race_id: created_at for race_id, (status, created_at) in statuses.items() if status is RaceStatus.WAITING}

    async def _expire(self, waiting: dict[str, int], now: int) -> None:
        """Close the held races that waited for an opponent longer than ``max_waiting_seconds``."""
        if not self.limits.max_waiting_seconds:
            return
        oldest = now - round(self.limits.max_waiting_seconds * 1000)
        for owner in list(self._owners):
            if owner.player is None:
                continue
            if owner.queue is not None and waiting.get(owner.queue.race_id, now) <= oldest and await self.queue.cancel(owner.queue):
                await self.abandon(owner.queue.race_id, owner.player, reason=CloseReason.EXPIRED)
                owner.queue = None
            for race_id in [race_id for race_id in owner.races if waiting.get(race_id, now) <= oldest]:
                log.info("lobby: closing race %s, nobody joined it within %s s", race_id, self.limits.max_waiting_seconds)
                await self.abandon(race_id, owner.player, reason=CloseReason.EXPIRED)
                owner.races.discard(race_id)

    def _entry(self, record: RaceRecord) -> dict[str, Any]:
        """The race's lobby entry as stored, with the spectator delay in force."""
        return as_map(lobby_entry(record, spectator_delay_ms=self.races.policy.delay_of(record.settings)))

    @contextlib.asynccontextmanager
    async def place(self, owner: Owner, *, replacing_queue: bool = False) -> AsyncIterator[None]:
        """A place for one more open race (or queue entry) of ``owner``, held while the body opens it: refused
        (``too_many_open_races``) when the connection, its player or its client address already holds as many as it
        may, places being opened included; a quick-match request is ``replacing_queue``: the connection's earlier
        entry does not count, the new one replaces it. The last check and the taking of the place happen with no
        ``await`` between them, so concurrent requests never pass the limits together; the body tracks what it opened
        before the place is given back."""
        if self._crowding(owner, replacing_queue) is not None:
            await self._forget_started(self._owners | {owner})
        crowding = self._crowding(owner, replacing_queue)
        if crowding is not None:
            raise ServiceError(ErrorCode.TOO_MANY_OPEN_RACES, f"at most {crowding} may wait for an opponent at once")
        owner.reserved += 1
        self._owners.add(owner)
        try:
            yield
        finally:
            owner.reserved -= 1

    def _crowding(self, owner: Owner, replacing_queue: bool) -> str | None:
        """Which limit on open races ``owner`` has reached, if any (not counting a queue entry it replaces)."""
        limits = self.limits
        owners = self._owners | {owner}
        replaced = int(replacing_queue and owner.queue is not None)
        if owner.open_count() - replaced >= limits.max_open_per_owner:
            return f"{limits.max_open_per_owner} races per connection"
        if sum(other.open_count() for other in owners if other.player == owner.player) - replaced >= limits.max_open_per_player:
            return f"{limits.max_open_per_player} races per player"
        held = sum(other.open_count() for other in owners if other.address == owner.address) - replaced
        if limits.max_open_per_address and held >= limits.max_open_per_address:
            return f"{limits.max_open_per_address} races per client address"
        return None

    async def _claim_invite(self, race_id: str) -> str:
        for _ in range(10):
            code = new_invite_code()
            if await self.store.claim_invite(code, race_id, self.invite_ttl_ms):
                return code
        raise ServiceError(ErrorCode.INTERNAL_ERROR, "no free invite code found; try again")

    async def _undo_deal(self, race: NewRace) -> None:
        """Return what a race creation that failed had taken: its pool seed and its invite code."""
        with contextlib.suppress(StoreError):
            await self.dealer.give_back(race)
            if race.invite is not None:
                await self.store.release_invite(race.invite)


def is_listed(record: RaceRecord) -> bool:
    """Whether the lobby lists the race: public races opened with ``create`` (not quick-match or rematch races)."""
    return not record.settings.private and record.origin == "create"
