"""Solvable deals: a pool of seeds the solver proved winnable, kept full in the background.

Creating a race with ``solvable_only`` pops a seed from the pool in Redis and
never waits on the solver; an empty pool is answered ``seed_pool_empty``.
Every server process runs a filler that deals random seeds and keeps those
:func:`shared.solver.solve` answers ``SOLVED`` for within a budget, in a
separate worker process at low priority (the solver is pure Python: in a
thread it would hold the GIL against the event loop). The pool's add script
caps it at the target, so several processes fill one pool without
over-filling it, and SPOP hands each seed out once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import secrets
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from redis.exceptions import RedisError

from server.protocol import ErrorCode
from server.services.errors import ServiceError
from server.store import SeedPoolStore
from shared import Board, Profile, Rules
from shared.solver import Budget, Verdict, solve

log = logging.getLogger(__name__)


def proves_winnable(profile: str, seed: int, seconds: float) -> bool:
    """Whether the solver proves the deal of ``seed`` winnable under ``profile`` within ``seconds`` (runs in a worker)."""
    board = Board.deal(seed, Rules(Profile(profile)))
    return solve(board, Budget(seconds=seconds)).verdict is Verdict.SOLVED


def _lower_priority() -> None:
    """Worker initializer: the filler must not slow down moves."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)


@dataclass(slots=True)
class FillStats:
    """What the filler has done (for logs and tests)."""

    tried: int = 0
    proven: int = 0


class SeedPool:
    """Hands out proven seeds and keeps the pool of each offered profile at ``target`` seeds."""

    def __init__(
        self,
        store: SeedPoolStore,
        *,
        profiles: tuple[str, ...] = (Profile.CLASSIC.value,),
        target: int = 20,
        budget_seconds: float = 1.0,
        workers: int = 1,
        idle_seconds: float = 1.0,
    ) -> None:
        """``profiles`` are those offered as ``solvable_only``; ``target`` 0 never fills (the pool only drains)."""
        self.store = store
        self.profiles = profiles
        self.target = target
        self.budget_seconds = budget_seconds
        self.workers = workers
        self.idle_seconds = idle_seconds
        self.stats = FillStats()
        self._executor: ProcessPoolExecutor | None = None
        self._running = True

    def offers(self, profile: str) -> bool:
        """Whether ``solvable_only`` is offered for ``profile`` (foundation-only deals are almost never winnable)."""
        return profile in self.profiles

    async def take_if_any(self, profile: str) -> int | None:
        """A proven seed, removed from the pool, or None when none is ready."""
        return await self.store.take(profile)

    async def take(self, profile: str) -> int:
        """A proven seed, removed from the pool; ServiceError ``seed_pool_empty`` when none is ready."""
        seed = await self.store.take(profile)
        if seed is None:
            raise ServiceError(
                ErrorCode.SEED_POOL_EMPTY.value, f"no proven {profile} deal is ready yet; try again in a few seconds", field="settings.solvable_only"
            )
        return seed

    async def give_back(self, profile: str, seed: int) -> None:
        """Return a seed that was taken but never dealt (a race creation that failed after the pop)."""
        await self.store.add(profile, seed, max(self.target, 1))

    async def size(self, profile: str) -> int:
        """Proven seeds ready for ``profile``."""
        return await self.store.size(profile)

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._running = False

    async def close(self) -> None:
        """Stop the worker processes (a solve in progress ends within its budget)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    async def run(self) -> None:
        """Fill every offered profile's pool to the target, then keep it there; survives Redis outages."""
        if self.target <= 0 or not self.profiles:
            return
        self._executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_lower_priority)
        await asyncio.gather(*(self._fill() for _ in range(self.workers)))

    async def _fill(self) -> None:
        while self._running:
            try:
                busy = False
                for profile in self.profiles:
                    if await self.store.size(profile) < self.target:
                        busy = True
                        await self._try_one(profile)
                if not busy:
                    await asyncio.sleep(self.idle_seconds)
            except (RedisError, OSError) as error:
                if not self._running:
                    return
                log.warning("seed pool: %s; retrying", error)
                await asyncio.sleep(self.idle_seconds)

    async def _try_one(self, profile: str) -> None:
        assert self._executor is not None
        seed = secrets.randbits(64)
        proven = await asyncio.get_running_loop().run_in_executor(self._executor, proves_winnable, profile, seed, self.budget_seconds)
        self.stats.tried += 1
        if not proven:
            return
        self.stats.proven += 1
        size = await self.store.add(profile, seed, self.target)
        if size >= self.target:
            log.info("seed pool %s: full with %d proven deals (%d of %d seeds proven so far)", profile, size, self.stats.proven, self.stats.tried)
        else:
            log.debug("seed pool %s: %d/%d proven deals", profile, size, self.target)
