"""Solvable deals: a pool of seeds the solver proved winnable, kept full in the background.

Creating a race with ``solvable_only`` pops a seed from the pool in Redis and
never waits on the solver; an empty pool is answered ``seed_pool_empty``.
Every server process runs a filler that deals random seeds and keeps those
:func:`shared.solver.solve` answers ``SOLVED`` for within a budget, in a
separate worker process at low priority (``seed_prover``; the solver is pure
Python: in a thread it would hold the GIL against the event loop). The pool's add script
caps it at the target, so several processes fill one pool without
over-filling it, and SPOP hands each seed out once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from server.services.background import BackgroundLoop
from server.services.errors import ServiceError
from server.store import SeedPoolStore, StoreError
from shared import Profile
from shared.protocol import ErrorCode
from shared.solver import Verdict

log = logging.getLogger(__name__)


class ProverFailed(Exception):
    """The worker process died or answered nonsense; it is restarted for the next seed."""


class ProverProcess:
    """One ``python -m server.services.seed_prover`` worker, started on first use."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None

    async def verdict(self, profile: str, seed: int, seconds: float) -> Verdict:
        """The solver's verdict on ``seed`` (ProverFailed if the worker failed)."""
        process = await self._running()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(f"{profile} {seed} {seconds}\n".encode())
            await process.stdin.drain()
            answer = (await process.stdout.readline()).split()
        except (OSError, ValueError) as error:
            await self.close()
            raise ProverFailed(f"seed prover: {error}") from None
        if len(answer) != 2 or answer[0] != str(seed).encode():
            await self.close()
            raise ProverFailed(f"seed prover answered {answer!r}")
        return Verdict(answer[1].decode())

    async def close(self) -> None:
        """Stop the worker (at once: a solve in progress is abandoned)."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        process.kill()
        await process.wait()

    async def _running(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            source_root = str(Path(__file__).resolve().parents[2])  # the worker imports this checkout's engine
            path = os.pathsep.join(filter(None, [source_root, os.environ.get("PYTHONPATH")]))
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server.services.seed_prover",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": path},
            )
        return self._process


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

    async def take_if_any(self, profile: str) -> int | None:
        """A proven seed, removed from the pool, or None when none is ready."""
        return await self.store.take(profile)

    async def take(self, profile: str) -> int:
        """A proven seed, removed from the pool; ServiceError ``seed_pool_empty`` when none is ready."""
        seed = await self.store.take(profile)
        if seed is None:
            raise ServiceError(
                ErrorCode.SEED_POOL_EMPTY, f"no proven {profile} deal is ready yet; try again in a few seconds", field="settings.solvable_only"
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
                if await self.store.size(profile) < self.target:
                    busy = True
                    await self._try_one(prover, profile)
            if not busy:
                await asyncio.sleep(self.idle_seconds)

        await self._loop.run(step, retry_seconds=self.idle_seconds, recoverable=(StoreError, OSError, ProverFailed))

    async def _try_one(self, prover: ProverProcess, profile: str) -> None:
        seed = secrets.randbits(64)
        verdict = await prover.verdict(profile, seed, self.budget_seconds)
        self.stats.tried += 1
        if verdict is not Verdict.SOLVED:
            return
        self.stats.proven += 1
        size = await self.store.add(profile, seed, self.target)
        if size >= self.target:
            log.info("seed pool %s: full with %d proven deals (%d of %d seeds proven so far)", profile, size, self.stats.proven, self.stats.tried)
        else:
            log.debug("seed pool %s: %d/%d proven deals", profile, size, self.target)
