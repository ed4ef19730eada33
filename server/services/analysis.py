"""Post-race analysis in the background: for every finished race, where each player lost the win, and signals.

A race becomes due in the analysis queue in Redis when its result is stored (the
store queues it as the script that decided the result returns). Each server
process runs one :class:`RaceAnalyst` loop that claims due races (a lease, so
several processes share the queue and a crashed one's claim lapses). Running
races are never polled: each holds a safety entry from its countdown, due
``ANALYSIS_SAFETY_MS`` after its start, for a result whose process died before
queueing it; a race still running then is left as the claim's lease put it (due
again a lease later), one without a result (closed, expired) leaves the queue.
A finished race goes to a separate low-priority worker
process (``race_analyst``) with a documented budget; the answer is stored with
the race's record and announced by an ``analysis`` event. Nothing is analysed,
or given to anyone, before the result: ``get_analysis`` of a running race is
refused ``not_finished``.

The assistance signals (share of moves on the solver's winning line, move-time
statistics) are stored too, for operators only (docs/FAIRPLAY.md): signals for
review, never verdicts.

``solve_from`` asks the solver for a winning line from any point of a finished race's player line: answered by a
second worker process of the same program (so it never waits behind a race's analysis, nor slows a move), within
:class:`SolveFromLimits`, cached in Redis per position.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from server import metrics
from server.services.background import BackgroundLoop
from server.services.errors import ServiceError
from server.services.race import RACE_ID_PATTERN
from server.services.spectate import ensure_shown_to
from server.services.worker_process import WorkerFailed, WorkerProcess
from server.store import ANALYSIS_SAFETY_MS, AnalysisStore, RaceRecord, RaceStore, StoreError, StoreRefusal
from shared.protocol import ErrorCode, MoveMade, ProtocolError, RaceAnalysis, RaceStatus, from_map
from shared.solver import Verdict

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


@dataclass(frozen=True, slots=True)
class SolveFromLimits:
    """What ``solve_from`` may spend (docs/FAIRPLAY.md "A winning line from any point"); answers from the cache are free."""

    seconds: float = 3.0
    """Solver time per request (the position's answer is cached, whatever the verdict)."""
    per_session: int = 20
    """Solver runs one session may ask for per window (``rate_limited`` past it; 0: no limit)."""
    per_address: int = 60
    """Solver runs one client address may ask for per window (0: no limit)."""
    window_seconds: float = 60.0
    max_waiting: int = 8
    """Requests that wait for (or run on) this process's solver worker at once; more are refused ``rate_limited``."""
    max_waiting_per_address: int = 2
    """Of those, requests of one client address: a flood from one address holds this many places at most, so the
    others' requests still find one (0: no share; keep it below ``max_waiting``)."""


class SolverQueue:
    """The places in line for a process's solver worker: at most ``max_waiting`` in all and ``max_waiting_per_address``
    of one client address. A place is checked and taken in one step (no ``await`` between), before any other work,
    and given back when its request is answered or refused."""

    def __init__(self, limits: SolveFromLimits) -> None:
        self.limits = limits
        self.waiting = 0
        self.by_address: Counter[str] = Counter()

    def take(self, address: str) -> None:
        """Take a place for a request of ``address``; ``rate_limited`` when the line, or the address' share, is full."""
        if self.waiting >= self.limits.max_waiting:
            raise ServiceError(ErrorCode.RATE_LIMITED, "the solver is busy with other requests: try again in a few seconds", field="type")
        share = self.limits.max_waiting_per_address
        if share and self.by_address[address] >= share:
            raise ServiceError(
                ErrorCode.RATE_LIMITED,
                f"at most {share} solve_from requests of one client address wait for the solver at once: try again when one is answered",
                field="type",
            )
        self.waiting += 1
        self.by_address[address] += 1

    def give_back(self, address: str) -> None:
        """The request of ``address`` was answered or refused: its place is free."""
        self.waiting -= 1
        self.by_address[address] -= 1
        if self.by_address[address] <= 0:
            del self.by_address[address]


@dataclass(frozen=True, slots=True)
class PositionLine:
    """The solver's answer for one position of a player's line: ``verdict`` and a winning ``line`` (when solved)."""

    verdict: Verdict
    line: list[str]
    cached: bool


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
        solve_limits: SolveFromLimits | None = None,
        enabled: bool = True,
        idle_seconds: float = 0.5,
        lease_ms: int = ANALYSIS_SAFETY_MS,
    ) -> None:
        """``enabled`` False never analyses (the queue waits for a process that does). ``lease_ms``: how long a claim
        keeps a race from the other analysts, and when a race found still running by its safety entry is due again."""
        self.store = store
        self.races = races
        self.budget = budget or AnalysisBudget()
        self.solve_limits = solve_limits or SolveFromLimits()
        self.enabled = enabled
        self.idle_seconds = idle_seconds
        self.lease_ms = lease_ms
        self.analysed = 0
        self._worker = WorkerProcess("server.services.race_analyst")
        self._solver = WorkerProcess("server.services.race_analyst")
        """A second worker for ``solve_from``, one request at a time (``_solver_turn``), so none waits behind an analysis."""
        self._solver_turn = asyncio.Lock()
        self.solver_queue = SolverQueue(self.solve_limits)
        self._loop = BackgroundLoop("race analyst")

    async def analysis(self, race_id: str, player: str) -> RaceAnalysis | None:
        """The stored analysis of a finished race, or None while it is computed; ``not_finished`` before the result,
        ``no_spectators`` for anyone but its players when nobody may watch the race (as its replay)."""
        ensure_shown_to(await self._finished(race_id), player)
        stored = await self.store.load(race_id)
        return None if stored is None else from_map(RaceAnalysis, stored["analysis"])

    async def _finished(self, race_id: str) -> RaceRecord:
        """The record of a finished race: ``unknown_race``, or ``not_finished`` before the result (to anyone)."""
        record = await self.races.load_race(race_id) if RACE_ID_PATTERN.fullmatch(race_id) else None
        if record is None:
            raise ServiceError(ErrorCode.UNKNOWN_RACE, f"there is no race {race_id[:32]!r}")
        if record.status is not RaceStatus.FINISHED:
            raise ServiceError(ErrorCode.NOT_FINISHED, "the race has no result yet: it is analysed once it is over")
        return record

    async def solve_from(self, race_id: str, slot: int, actions: int, *, player: str, address: str) -> PositionLine:
        """A winning line from the position after ``actions`` of the line of ``slot`` in a finished race.

        Refused like ``replay`` to others than its players when nobody may watch the race; ``bad_field`` for a seat or
        a point the line does not have; ``rate_limited`` past :class:`SolveFromLimits` (a cached answer is free)."""
        record = await self._finished(race_id)
        ensure_shown_to(record, player)
        if slot not in {seat.slot for seat in record.seats}:
            raise ServiceError(ErrorCode.BAD_FIELD, f"the race has no player in seat {slot}", field="slot")
        line = await self.races.actions(race_id, slot)
        if actions > len(line):
            raise ServiceError(ErrorCode.BAD_FIELD, f"that player made {len(line)} actions", field="actions", expected=len(line))
        kept_as = slot if actions else 0  # before any action both seats stand on the deal: one position, one answer
        cached = await self.store.load_solution(race_id, kept_as, actions)
        if cached is not None:
            return PositionLine(Verdict(cached["verdict"]), list(cached["line"]), cached=True)
        self.solver_queue.take(address)  # before any await: requests arriving together cannot all find a place
        try:
            await self._count_solve(player, address)
            answer = await self._ask_solver(record, line[:actions])
        finally:
            self.solver_queue.give_back(address)
        await self.store.save_solution(race_id, kept_as, actions, {"verdict": answer.verdict.value, "line": answer.line})
        return answer

    async def _count_solve(self, player: str, address: str) -> None:
        limits = self.solve_limits
        window_ms = round(limits.window_seconds * 1000)
        for kind, who, most in (("player", player, limits.per_session), ("address", address, limits.per_address)):
            if most and await self.store.count_solve(kind, who, window_ms) > most:
                raise ServiceError(
                    ErrorCode.RATE_LIMITED,
                    f"at most {most} solve_from requests per {'session' if kind == 'player' else 'client address'} in "
                    f"{limits.window_seconds:g} s are solved (cached answers are free); try again later",
                    field="type",
                )

    async def _ask_solver(self, record: RaceRecord, actions: list[str]) -> PositionLine:
        request = {
            "job": "solve_from", "seed": str(record.deal.seed), "profile": record.settings.profile, "undo": record.settings.undo,
            "redeal_once": record.settings.redeal_once, "actions": actions, "seconds": self.solve_limits.seconds,
        }  # fmt: skip
        async with self._solver_turn:
            raw = await self._solver.ask(json.dumps(request))
        try:
            answer = json.loads(raw)
            return PositionLine(Verdict(answer["verdict"]), [str(move) for move in answer["line"]], cached=False)
        except (ValueError, KeyError, TypeError) as error:
            raise await self._solver.fail(f"answered {raw[:200]!r} ({error})") from None

    async def backlog(self) -> int:
        """How many races wait for an analyst now (any process's): finished races not analysed yet (and, for a moment,
        a running race whose safety entry fell due: see the module docstring). Near 0 while the analysts keep up."""
        return await self.store.due(await self.races.now_ms())

    async def signals(self, race_id: str) -> list[dict[str, Any]] | None:
        """The assistance signals of a finished race's attempts, for operators (None until analysed)."""
        stored = await self.store.load(race_id)
        return None if stored is None else list(stored["signals"])

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def close(self) -> None:
        """Stop the worker processes (an analysis in progress is abandoned; the race is claimed again later)."""
        await self._worker.close()
        await self._solver.close()

    async def run(self) -> None:
        """Analyse due races until stopped; survives Redis outages and worker crashes."""
        if not self.enabled:
            return

        async def step() -> None:
            if not await self.analyse_due():
                await asyncio.sleep(self.idle_seconds)

        await self._loop.run(step, retry_seconds=self.idle_seconds, expected=(StoreError, OSError, WorkerFailed))

    async def analyse_due(self) -> int:
        """Look at the races due now; returns how many were claimed."""
        claimed = await self.store.claim(await self.races.now_ms(), 5, self.lease_ms)
        if not claimed:
            return 0
        statuses = await self.races.statuses(claimed)
        for race_id in claimed:
            status, _created_at = statuses[race_id]
            if status is not None and status is not RaceStatus.CLOSED and status is not RaceStatus.FINISHED:
                continue  # a safety entry of a running race: the claim's lease is its next look; its result comes sooner
            record = await self.races.load_race(race_id) if status is RaceStatus.FINISHED else None
            if record is not None:
                await self._analyse(record)
            await self.store.done(race_id)
        return len(claimed)

    async def _analyse(self, record: RaceRecord) -> None:
        race_id = record.race_id
        lines = [await self.races.actions(race_id, seat.slot) for seat in record.seats]
        request = {
            "seed": str(record.deal.seed), "profile": record.settings.profile, "undo": record.settings.undo, "redeal_once": record.settings.redeal_once,
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
        except (ValueError, KeyError, TypeError, ProtocolError) as error:
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
