"""Redis' clock read locally, so timed deliveries (the spectator delay) need no Redis round trip per event."""

from __future__ import annotations

import time

from server.store import RaceStore


class ServerClock:
    """The clock of every race time (Redis' ``TIME``) as the local clock plus a measured offset."""

    def __init__(self, store: RaceStore) -> None:
        self.store = store
        self.offset_ms = 0.0

    async def calibrate(self) -> None:
        """Measure the offset again.

        Redis read its clock somewhere between the two local readings; pairing it
        with the later one can only make :meth:`now_ms` lag behind Redis, never run
        ahead, so a delay computed with it is never cut short.
        """
        server_ms = await self.store.now_ms()
        self.offset_ms = server_ms - time.time() * 1000

    def now_ms(self) -> float:
        """Server time now, ms since the Unix epoch (never ahead of Redis' clock by more than clock drift)."""
        return time.time() * 1000 + self.offset_ms
