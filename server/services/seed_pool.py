"""Solvable deals: pools of seeds the solver proved winnable, with their tier and winning line, kept full in the background.

Creating a race with ``solvable_only`` pops a seed from the pool in Redis and
never waits on the solver; an empty pool is answered ``seed_pool_empty``.
Every server process runs a filler that deals random seeds and keeps those
:func:`shared.solver.solve` answers ``SOLVED`` for within a budget, in a
separate worker process at low priority (``seed_prover``; the solver is pure
Python: in a thread it would hold the GIL against the event loop). The pool's add script
caps it at the target, so several processes fill one pool without
over-filling it, and SPOP hands each seed out once. Besides the pool of any tier there is one pool
per winnable tier (``easy``/``medium``/``hard``, for races that ask for one),
each kept at the target; a proven deal fills its tier's pool first.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from dataclasses import dataclass

from server.services.background import BackgroundLoop
from server.services.errors import ServiceError
from server.services.worker_process import WorkerFailed, WorkerProcess
from server.store import PooledSeed, SeedPoolStore, StoreError
from shared import Profile
from shared.protocol import Difficulty, ErrorCode
from shared.solver import Verdict
from shared.solver.difficulty import WINNABLE_TIERS

log = logging.getLogger(__name__)


class ProverProcess(WorkerProcess):
    """One ``python -m server.services.seed_prover`` worker, started on first use."""

    def __init__(self) -> None:
        super().__init__("server.services.seed_prover")

    async def prove(self, profile: str, seed: int, seconds: float) -> tuple[Verdict, PooledSeed]:
        """The solver's verdict on ``seed``, and the deal with its tier and winning line (WorkerFailed if the worker failed)."""
        raw = await self.ask(f"{profile} {seed} {seconds}")
        try:
            answer = json.loads(raw)
            if answer["seed"] != str(seed):
                raise ValueError("another seed")
            pooled = PooledSeed(seed, Difficulty(answer["difficulty"]), tuple(str(move) for move in answer["line"]))
            return Verdict(answer["verdict"]), pooled
        except (ValueError, KeyError, TypeError):
            raise await self.fail(f"answered {raw[:200]!r}") from None


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
        self._provers: list[ProverProcess] = []
        self._loop = BackgroundLoop("seed pool")

    def offers(self, profile: str) -> bool:
        """Whether ``solvable_only`` is offered for ``profile`` (foundation-only deals are almost never winnable)."""
        return profile in self.profiles

    async def take_if_any(self, profile: str, difficulty: Difficulty | None = None) -> PooledSeed | None:
        """A proven deal (of the tier, if given), removed from the pool, or None when none is ready."""
        return await self.store.take(profile, difficulty)

    async def take(self, profile: str, difficulty: Difficulty | None = None) -> PooledSeed:
        """A proven deal (of the tier, if given), removed from the pool; ServiceError ``seed_pool_empty`` when none is ready."""
        seed = await self.store.take(profile, difficulty)
        if seed is None:
            tier = "" if difficulty is None else f" {difficulty.value}"
            raise ServiceError(
                ErrorCode.SEED_POOL_EMPTY,
                f"no proven{tier} {profile} deal is ready yet; try again in a few seconds",
                field="settings.solvable_only" if difficulty is None else "settings.difficulty",
            )
        return seed

    async def give_back(self, profile: str, seed: PooledSeed, *, tiered: bool = False) -> None:
        """Return a deal that was taken but never dealt (a race creation that failed after the pop) to its pool."""
        await self.store.add(profile, seed, max(self.target, 1), tiered=tiered)

    async def size(self, profile: str, difficulty: Difficulty | None = None) -> int:
        """Proven deals ready for ``profile`` (of the tier, if given)."""
        return await self.store.size(profile, difficulty)

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def close(self) -> None:
        """Stop the worker processes (a solve in progress is abandoned)."""
        for prover in self._provers:
            await prover.close()

    async def run(self) -> None:
        """Fill every offered profile's pool to the target, then keep it there; survives Redis outages and worker crashes."""
        if self.target <= 0 or not self.profiles:
            return
        self._provers = [ProverProcess() for _ in range(self.workers)]
        await asyncio.gather(*(self._fill(prover) for prover in self._provers))

    async def _fill(self, prover: ProverProcess) -> None:
        async def step() -> None:
            busy = False
            for profile in self.profiles:
                if any([await self.store.size(profile, tier) < self.target for tier in (None, *WINNABLE_TIERS)]):
                    busy = True
                    await self._try_one(prover, profile)
            if not busy:
                await asyncio.sleep(self.idle_seconds)

        await self._loop.run(step, retry_seconds=self.idle_seconds, expected=(StoreError, OSError, WorkerFailed))

    async def _try_one(self, prover: ProverProcess, profile: str) -> None:
        """Prove one random deal; a winnable one goes to its tier's pool while that is below the target, else to the
        pool of any tier."""
        verdict, seed = await prover.prove(profile, secrets.randbits(64), self.budget_seconds)
        self.stats.tried += 1
        if verdict is not Verdict.SOLVED:
            return
        self.stats.proven += 1
        assert seed.difficulty is not None
        if await self.store.size(profile, seed.difficulty) < self.target:
            await self.store.add(profile, seed, self.target, tiered=True)
            return
        size = await self.store.add(profile, seed, self.target)
        if size >= self.target:
            log.info("seed pool %s: full with %d proven deals (%d of %d seeds proven so far)", profile, size, self.stats.proven, self.stats.tried)
        else:
            log.debug("seed pool %s: %d/%d proven deals", profile, size, self.target)
