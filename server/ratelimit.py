"""A token bucket: a steady rate with room for bursts."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """Allows ``rate`` events per second on average and up to ``burst`` at once."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._tokens = float(burst)
        self._stamp = clock()

    def allow(self) -> bool:
        """Take one token if there is one."""
        self._refill()
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    def full(self) -> bool:
        """Whether the bucket is back to its burst (nothing taken lately)."""
        self._refill()
        return self._tokens >= self.burst

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now


class AddressBuckets:
    """One token bucket per client address, made on first use (``burst`` 0: no limit). Past :attr:`MAX_KEPT`
    addresses the full buckets are forgotten (a full bucket is what a new one would be)."""

    MAX_KEPT = 4096

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, TokenBucket] = {}

    def allow(self, address: str) -> bool:
        """Take one token of ``address``'s bucket if there is one."""
        if not self.burst:
            return True
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= self.MAX_KEPT:
                self._buckets = {kept: held for kept, held in self._buckets.items() if not held.full()}
            bucket = self._buckets[address] = TokenBucket(self.rate, self.burst, self.clock)
        return bucket.allow()
