"""The one skeleton of the server's background loops: repeat a step until stopped, surviving store failures.

Presence renewal, the timer sweep, the lobby heartbeat, the lobby feed, the event hub and the seed pool all
run "do one step; on a store failure log it, wait and go on; stop quietly when asked to" — here, once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from server import metrics
from server.store import StoreError

log = logging.getLogger(__name__)


class BackgroundLoop:
    """A loop that :meth:`run` repeats until :meth:`stop`; ``name`` prefixes its log lines."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.running = True
        self.failures = 0
        """How many steps failed so far (for operators: a store that keeps failing)."""

    def stop(self) -> None:
        """Make :meth:`run` return (after the step under way, or at once if it is sleeping)."""
        self.running = False

    async def run(
        self,
        step: Callable[[], Awaitable[object]],
        *,
        retry_seconds: float,
        recoverable: tuple[type[Exception], ...] = (StoreError,),
        on_failure: Callable[[Exception], None] | None = None,
    ) -> None:
        """Run ``step`` again and again; a ``recoverable`` failure is logged (and passed to ``on_failure``), then the
        next step starts after ``retry_seconds``. A failure while stopping (a cancelled read) ends the loop quietly."""
        while self.running:
            try:
                await step()
            except recoverable as error:
                if not self.running:
                    return
                self.failures += 1
                log.warning("%s failed (%s); retrying", self.name, error)
                metrics.worker_failed(self.name)
                if on_failure is not None:
                    on_failure(error)
                if retry_seconds > 0:
                    await asyncio.sleep(retry_seconds)
