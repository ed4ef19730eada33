"""Post-race analysis in the background: for every finished race, where each player lost the win, and signals.

Every race enters the analysis queue in Redis when its countdown starts. Each
server process runs one :class:`RaceAnalyst` loop that claims due races (a lease,
so several processes share the queue and a crashed one's claim lapses); a race
still running is looked at again later, one without a result (closed, expired)
leaves the queue. A finished race goes to a separate low-priority worker
process (``race_analyst``) with a documented budget; the answer is stored with
the race's record and announced by an ``analysis`` event. Nothing is analysed,
or given to anyone, before the result: ``get_analysis`` of a running race is
refused ``not_finished``.

The assistance signals (share of moves on the solver's winning line, move-time
statistics) are stored too, for operators only (docs/FAIRPLAY.md): signals for
review, never verdicts.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
from dataclasses import dataclass
from typing import Any

from server import metrics
from server.services.background import BackgroundLoop
from server.services.errors import ServiceError
from server.services.race import RACE_ID_PATTERN
from server.services.worker_process import WorkerFailed, WorkerProcess
from server.store import AnalysisStore, RaceRecord, RaceStore, StoreError, StoreRefusal
from shared.protocol import ErrorCode, MoveMade, RaceAnalysis, RaceStatus, from_map

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AnalysisBudget:
    """What one race's analysis may spend (docs/FAIRPLAY.md "Post-race analysis")."""

    seconds: float = 2.0
    """Solver time per position of the bisection (the deal, each player's last position, about log2(moves) more)."""
    signal_seconds: float = 0.25
    """Solver time per position of the signals (one solve each time the player leaves the solver's line)."""
    signal_solves: int = 40
    """At most this many signal solves per player."""


def move_time_stats(start_at: int | None, times: list[int]) -> dict[str, float | int]:
    """Statistics of the time (ms) a player took per action, from the start (or the previous action) to each one."""
    if not times:
        return {"actions": 0}
    previous = [start_at if start_at is not None else times[0], *times[:-1]]
    gaps = sorted(max(0, at - before) for at, before in zip(times, previous))
    return {
        "actions": len(gaps),
        "mean_ms": round(statistics.fmean(gaps), 1),
        "median_ms": statistics.median(gaps),
        "p10_ms": gaps[len(gaps) // 10],
        "min_ms": gaps[0],
        "max_ms": gaps[-1],
        "stdev_ms": round(statistics.pstdev(gaps), 1),
    }


class RaceAnalyst:
    """Analyses finished races from the queue, one at a time, in a worker process; hands out stored analyses."""

    def __init__(
        self,
        store: AnalysisStore,
        races: RaceStore,
        *,
        budget: AnalysisBudget | None = None,
        enabled: bool = True,
        idle_seconds: float = 0.5,
        recheck_ms: int = 5_000,
        lease_ms: int = 300_000,
    ) -> None:
        """``enabled`` False never analyses (the queue waits for a process that does)."""
        self.store = store
        self.races = races
        self.budget = budget or AnalysisBudget()
        self.enabled = enabled
        self.idle_seconds = idle_seconds
        self.recheck_ms = recheck_ms
        self.lease_ms = lease_ms
        self.analysed = 0
        self._worker = WorkerProcess("server.services.race_analyst")
        self._loop = BackgroundLoop("race analyst")

    async def analysis(self, race_id: str) -> RaceAnalysis | None:
        """The stored analysis of a finished race, or None while it is computed; ``not_finished`` before the result."""
        record = await self.races.load_race(race_id) if RACE_ID_PATTERN.fullmatch(race_id) else None
        if record is None:
            raise ServiceError(ErrorCode.UNKNOWN_RACE, f"there is no race {race_id[:32]!r}")
        if record.status is not RaceStatus.FINISHED:
            raise ServiceError(ErrorCode.NOT_FINISHED, "the race has no result yet: it is analysed once it is over")
        stored = await self.store.load(race_id)
        return None if stored is None else from_map(RaceAnalysis, stored["analysis"])

    async def signals(self, race_id: str) -> list[dict[str, Any]] | None:
        """The assistance signals of a finished race's attempts, for operators (None until analysed)."""
        stored = await self.store.load(race_id)
        return None if stored is None else list(stored["signals"])

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def close(self) -> None:
        """Stop the worker process (an analysis in progress is abandoned; the race is claimed again later)."""
        await self._worker.close()

    async def run(self) -> None:
        """Analyse due races until stopped; survives Redis outages and worker crashes."""
        if not self.enabled:
            return

        async def step() -> None:
            if not await self.analyse_due():
                await asyncio.sleep(self.idle_seconds)

        await self._loop.run(step, retry_seconds=self.idle_seconds, recoverable=(StoreError, OSError, WorkerFailed))

    async def analyse_due(self) -> int:
        """Look at the races due now; returns how many were claimed."""
        now = await self.races.now_ms()
        claimed = await self.store.claim(now, 5, self.lease_ms)
        for race_id in claimed:
            record = await self.races.load_race(race_id)
            if record is None or record.status is RaceStatus.CLOSED:
                await self.store.done(race_id)
            elif record.status is not RaceStatus.FINISHED:
                await self.store.schedule(race_id, now + self.recheck_ms)
            else:
                await self._analyse(record)
                await self.store.done(race_id)
        return len(claimed)

    async def _analyse(self, record: RaceRecord) -> None:
        race_id = record.race_id
        lines = [await self.races.actions(race_id, seat.slot) for seat in record.seats]
        request = {
            "seed": str(record.seed), "profile": record.profile, "undo": record.undo, "redeal_once": record.redeal_once,
            "lines": lines, "seconds": self.budget.seconds, "signal_seconds": self.budget.signal_seconds,
            "signal_solves": self.budget.signal_solves,
        }  # fmt: skip
        raw = await self._worker.ask(json.dumps(request))
        try:
            answer = json.loads(raw)
            analysis = {
                "race": race_id, "deal": answer["deal"], "winning_line": answer["winning_line"] or None,
                "players": answer["players"], "budget_ms": round(self.budget.seconds * 1000), "computed_at": await self.races.now_ms(),
            }  # fmt: skip
            from_map(RaceAnalysis, analysis)  # checks the worker's answer against the schema
            signals = list(answer["signals"])
        except (ValueError, KeyError, TypeError) as error:
            raise await self._worker.fail(f"answered {raw[:200]!r} ({error})") from None
        times: dict[int, list[int]] = {seat.slot: [] for seat in record.seats}
        for event in await self.races.events_after(race_id, 0):
            if isinstance(event, MoveMade):
                times.setdefault(event.slot, []).append(event.at)
        for entry in signals:
            entry["move_times"] = move_time_stats(record.start_at, times.get(int(entry["slot"]), []))
            judged = int(entry["judged_moves"])
            entry["on_line_share"] = round(int(entry["on_line_moves"]) / judged, 3) if judged else None
        try:
            await self.store.save(race_id, analysis, signals)
        except StoreRefusal as refusal:
            log.warning("race %s: analysis not stored (%s)", race_id, refusal.code)
            return
        self.analysed += 1
        metrics.race_analysed(analysis["deal"])
        log.info("race %s analysed: deal %s, %s", race_id, analysis["deal"], [p["verdict"] for p in analysis["players"]])
