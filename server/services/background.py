"""The one skeleton of the server's background loops: repeat a step until stopped, surviving any failure.

Presence renewal, the timer sweep, the lobby heartbeat, the lobby feed, the event hub, the seed pool, the booking of
finished races, rated quick-match retries, the race analyst and the operator commands all run "do one step; on a
failure log it, count it, back off and go on; stop quietly when asked to" — here, once. A failure of the store
(``StoreError``: Redis or its driver) is logged in one line; any other exception is a bug and is logged with its
traceback, but the loop carries on all the same: a worker that died for good would leave its process without
bookings, operator commands or timers until a restart.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable

from server import metrics
from server.store import StoreError

log = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 0.05
"""The shortest first wait after a failure (a loop whose step sleeps first asks for none)."""

MAX_RETRY_SECONDS = 5.0
"""The longest wait between two failing steps: a loop resumes at most this long after Redis is back."""


class Backoff:
    """Exponential backoff with jitter: the n-th consecutive failure waits a random time in [d/2, d], where
    d = ``first`` * 2^(n-1) capped at ``cap``; :meth:`reset` after a success. The jitter keeps the loops of many
    processes, failed by one outage, from all retrying at the same instant."""

    def __init__(self, first: float, cap: float = MAX_RETRY_SECONDS, *, rng: Callable[[], float] = random.random) -> None:
        self.first = max(first, FIRST_RETRY_SECONDS)
        self.cap = max(cap, self.first)
        self.rng = rng
        self.failures = 0
        """Consecutive failures so far."""

    def next_delay(self) -> float:
        """The wait after one more failure."""
        self.failures += 1
        ceiling = min(self.cap, self.first * 2.0 ** min(self.failures - 1, 30))
        return ceiling / 2 + self.rng() * ceiling / 2

    def reset(self) -> None:
        """A step succeeded: the next failure waits ``first`` again."""
        self.failures = 0


class BackgroundLoop:
    """A loop that :meth:`run` repeats until :meth:`stop`; ``name`` prefixes its log lines and labels its metric."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.running = True
        self.failures = 0
        """How many steps failed so far (for operators: a store that keeps failing)."""
        self.failing = False
        """Whether the latest step failed (until the next one succeeds): a reader that cannot read now."""
        self._stopped = asyncio.Event()

    def stop(self) -> None:
        """Make :meth:`run` return (after the step under way, or at once if it is waiting to retry)."""
        self.running = False
        self._stopped.set()

    async def run(
        self,
        step: Callable[[], Awaitable[object]],
        *,
        retry_seconds: float,
        max_retry_seconds: float = MAX_RETRY_SECONDS,
        expected: tuple[type[Exception], ...] = (StoreError,),
        on_failure: Callable[[Exception], None] | None = None,
    ) -> None:
        """Run ``step`` again and again. A failed step (any exception) is logged (in one line if it is of an
        ``expected`` kind, else with its traceback), counted
        (``flowergarden_background_errors_total``) and passed to ``on_failure``; the next step starts after a backoff
        that begins near ``retry_seconds`` and doubles with each consecutive failure up to ``max_retry_seconds``
        (:class:`Backoff`). A failure while stopping (a cancelled read) ends the loop quietly."""
        backoff = Backoff(retry_seconds, max_retry_seconds)
        while self.running:
            try:
                await step()
            except Exception as error:  # noqa: BLE001 - a background worker must outlive any failure of one step
                if not self.running:
                    return
                self.failing = True
                self._failed(error, isinstance(error, expected))
                if on_failure is not None:
                    on_failure(error)
                await self._wait(backoff.next_delay())
            else:
                self.failing = False
                backoff.reset()

    def _failed(self, error: Exception, expected: bool) -> None:
        self.failures += 1
        metrics.worker_failed(self.name, expected=expected)
        if expected:
            log.warning("%s failed (%s); retrying", self.name, error)
        else:
            log.error("%s failed unexpectedly (%s: %s); retrying", self.name, type(error).__name__, error, exc_info=error)

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds`` between two steps, or less if the loop is stopped meanwhile (a stop is not held up)."""
        await self._wait(seconds)

    async def _wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or less if the loop is stopped meanwhile."""
        try:
            async with asyncio.timeout(seconds):
                await self._stopped.wait()
        except TimeoutError:
            pass
