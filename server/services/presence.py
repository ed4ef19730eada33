"""Who is connected to each race: presence leases in Redis, renewed by the process holding the connection.

A player's seat (or a spectator) counts as present while one of its
connections holds a lease in the race's presence set. A connection that closes
drops its lease at once; a process that dies stops renewing, and its leases
expire after ``lease_ms``. The scripts turn changes into ``disconnected``,
``back`` and ``watchers`` events, and the timer sweeper of any process ends an
attempt whose grace period ran out, so nothing depends on the process that
saw the connection.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets

from server.services.background import BackgroundLoop
from server.services.clock import ServerClock
from server.store import RaceStore, presence_member

log = logging.getLogger(__name__)

RENEWAL_BATCH = 100
"""Races whose leases are renewed together: enough to share writes and round trips, few enough that a move issued
meanwhile does not queue behind thousands of renewals in Redis (~20 us each)."""


class PresenceService:
    """This process's presence leases: entered and left with connections, renewed every ``lease_ms / 3`` (a
    renewal of leases still held costs Redis a few commands: presence.lua's fast path)."""

    def __init__(self, store: RaceStore, clock: ServerClock, *, process_id: str | None = None, lease_ms: int = 15_000) -> None:
        self.store = store
        self.clock = clock
        self.process_id = process_id or secrets.token_hex(6)
        self.lease_ms = lease_ms
        self._held: dict[str, dict[str, str]] = {}
        """Race id -> the leases this process holds in it: member without player -> member with it (what renews)."""
        self._numbers = itertools.count(1)
        self._loop = BackgroundLoop("presence: renewing leases")

    def new_connection_id(self) -> str:
        """A connection id unique across processes (it names the connection's leases)."""
        return f"{self.process_id}.{next(self._numbers)}"

    async def enter(self, race_id: str, slot: int | None, connection_id: str, player: str = "") -> None:
        """The connection of ``player`` plays seat ``slot`` of the race, or watches it (slot None); a seat's lease is
        held only while ``player`` holds the seat."""
        member = presence_member(slot, connection_id, player)
        self._held.setdefault(race_id, {})[presence_member(slot, connection_id)] = member
        await self._change(race_id, [member], leave=False)

    async def leave(self, race_id: str, slot: int | None, connection_id: str) -> None:
        """The connection stopped playing or watching the race (closed, unwatched, or took a seat)."""
        member = presence_member(slot, connection_id)
        held = self._held.get(race_id)
        if held is not None:
            held.pop(member, None)
            if not held:
                del self._held[race_id]
        await self._change(race_id, [member], leave=True)

    async def renew_all(self) -> None:
        """Renew every lease this process holds: one script per race, issued ``RENEWAL_BATCH`` races at a time (they
        go out together on the store's pipelined connection), and one timer-index write per batch."""
        held = [(race_id, sorted(members.values())) for race_id, members in self._held.items()]
        for start in range(0, len(held), RENEWAL_BATCH):
            batch = held[start : start + RENEWAL_BATCH]
            dues = await asyncio.gather(
                *(self.store.presence(race_id, leave=False, members=members, lease_ms=self.lease_ms) for race_id, members in batch),
                return_exceptions=True,
            )
            # A lease's expiry (or a grace period the script started) must be swept by some process.
            await self.store.schedule_earlier_many({race_id: due for (race_id, _), due in zip(batch, dues, strict=True) if isinstance(due, int)})
            failed = next((due for due in dues if isinstance(due, Exception)), None)
            if failed is not None:
                raise failed

    async def _change(self, race_id: str, members: list[str], *, leave: bool) -> None:
        due = await self.store.presence(race_id, leave=leave, members=members, lease_ms=self.lease_ms)
        if due is not None:
            # The lease's expiry (or a grace period just started) must be swept by some process.
            await self.store.schedule_earlier(race_id, due)

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """Renew leases and recalibrate the clock until stopped; survives Redis outages by retrying."""
        interval = self.lease_ms / 3000

        async def step() -> None:
            await asyncio.sleep(interval)
            await self.renew_all()
            await self.clock.calibrate()

        await self._loop.run(step, retry_seconds=0)
