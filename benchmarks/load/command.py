"""``flowergarden bench load``: the race server under load, side by side with the floor server of its stack.

Starts a Redis (embedded, no persistence), the race server (``--processes`` 1 or 2) and, in the same run, the
floor server (websockets + msgpack + one Lua EVAL per message, ``benchmarks/load/floor.py``) twice: with redis-py's
pooled client, and pipelined (its scripts over the race server's own one-connection RESP pipeline, the honest lower
bound); drives the same load against each from ``--workers`` separate processes; prints moves/s, ack p50/p90/p99,
CPU per move of the server, of Redis and of the load generator, and server memory per race, each with the floors'
figures and the ratios. ``--curve`` runs the open loop at several race counts and reports each side's knee.
A run whose load generator was late or whose machine was busy says so and is not used.
Everything listens on 127.0.0.1 only; every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import math
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from benchmarks.load.cpu_budget import CpuBudgetUnavailable, CpuGroup, budget_fraction, find_hierarchy
from benchmarks.load.workers import WorkOrder, WorkResult, work
from cli.output import EXIT_OK, CommandError, emit_json, help_text
from cli.serve_command import _non_negative_int, _positive_int
from server.embedded_redis import EmbeddedRedis, RedisUnavailable

ROOT = Path(__file__).resolve().parents[2]
"""The checkout the benchmarks belong to (the servers are started from it)."""
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
LISTENING = re.compile(r"(?:serving races on ws://[^:\s]+:|floor listening on )(\d+)")
START_TIMEOUT = 30.0
LOAD_SETTINGS = {
    "FLOWERGARDEN_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "0", "FLOWERGARDEN_LIMITS_MAX_UNIDENTIFIED_PER_ADDRESS": "0",
    "FLOWERGARDEN_LIMITS_MAX_HANDSHAKES_PER_ADDRESS": "0", "FLOWERGARDEN_LIMITS_WATCHES_PER_ADDRESS_BURST": "0",
    "FLOWERGARDEN_SESSIONS_MAX_NEW_PER_ADDRESS": "0", "FLOWERGARDEN_LOBBY_MAX_OPEN_PER_ADDRESS": "0",
}  # fmt: skip
"""Every load connection comes from 127.0.0.1: the race server's per-address limits are lifted for the load
(settings by environment, docs/OPERATIONS.md; an older checkout that has no such setting ignores them)."""
CLOSED_LOOP_SETTINGS = {"FLOWERGARDEN_LIMITS_RATE_PER_SECOND": "100000", "FLOWERGARDEN_LIMITS_BURST": "300000", "FLOWERGARDEN_MAX_ACTIONS": "100000000"}
"""As fast as acks return: past the default frame rate and action limit."""
BUDGET_USED = 0.9
"""Under ``--cpu-per-process``, a server that used less of its budget than this was not held back by its quota: the
run does not show what a core of that speed per process gives."""
BASELINE = "baseline"
"""The race server of ``--baseline-checkout`` (before a change), measured in the same run as this one's."""
PIPELINED = "pipelined floor"
"""The floor server whose scripts go through the race server's own pipeline (one connection, raw RESP)."""
CURVE = (250, 500, 750, 1000, 1500, 2000)
"""``--curve``'s race counts by default (issue 28)."""
KNEE_MS = 100.0
"""A race count is held while the ack p99 stays within this (and every offered action was answered)."""
BUSY_CORES = 0.5
"""A run during which processes other than Redis, the servers and the load generator used more than this many
cores on average measured the machine's other work as much as the server: it is marked as not usable."""
SERVER_OUTPUT: dict[int, list[str]] = {}
"""The last lines each server process printed (shown when a run had errors)."""


def race_counts(text: str) -> tuple[int, ...]:
    """argparse type of ``--curve``: ascending positive race counts, comma-separated."""
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"race counts separated by commas, like 250,500, not {text!r}") from None
    if not counts or min(counts) < 1 or list(counts) != sorted(set(counts)):
        raise argparse.ArgumentTypeError(f"ascending positive race counts, not {text!r}")
    return counts


def register(kinds: Any) -> None:
    """Add ``bench load`` to the ``bench`` group."""
    parser = kinds.add_parser(
        "load",
        help="load the race server and the floor server of its stack; print figures and ratios",
        description=help_text(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "modes:\n"
            "  closed  every player alternates a legal move and undo as fast as acks return (--connections players)\n"
            "  open    --races races, each player one action every --interval s on its own schedule (never waiting for\n"
            "          an ack), plus --spectators watchers\n"
            "  burst   --races races set up at once (create, join, started); counts requests answered twice and\n"
            "          races that never started\n\n"
            "A run is not usable when the load generator was late (send lateness p99 > 50 ms) or other processes used\n"
            "more than half a core of the machine during it: the report says so. On a shared machine report the\n"
            "ratios within one run, not the absolute figures."
        ),
    )
    parser.add_argument("--mode", choices=["closed", "open", "burst"], default="closed", help="default %(default)s")
    parser.add_argument("--connections", type=_positive_int, default=20, metavar="N", help="closed loop: players (default %(default)s)")
    parser.add_argument("--races", type=_positive_int, default=100, metavar="R", help="open loop and burst: races (default %(default)s)")
    parser.add_argument("--spectators", type=_non_negative_int, default=0, metavar="S", help="open loop: watchers (default 0)")
    parser.add_argument(
        "--spectators-per-race", type=_non_negative_int, metavar="N",
        help="open loop: N watchers for every race (instead of --spectators; with --curve they grow with the races)",
    )
    parser.add_argument(
        "--spectator-delay", type=float, default=None, metavar="SECONDS",
        help="the race server's spectator delay for the load (default: the server's, 60 s, under which spectators receive "
        "no move in a short window); 0 delivers every move at once, as the floor does, and reports the spectators' lag",
    )  # fmt: skip
    parser.add_argument(
        "--idle-races", type=_non_negative_int, default=0, metavar="N",
        help="races set up beside the load that stay idle (one waiting player each): shows whether the cost of an "
        "event grows with the number of races (default 0)",
    )
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS", help="open loop: seconds between one player's actions (default 1)")
    parser.add_argument("--seconds", type=float, default=5.0, metavar="SECONDS", help="measured time per server (default 5, at most 120)")
    parser.add_argument("--processes", type=int, choices=[1, 2], default=1, help="server processes (default 1)")
    parser.add_argument(
        "--cpu-per-process", type=budget_fraction, metavar="CORES",
        help="cap every server process, the race server's and the floor server's alike, at this fraction of one core "
        "(a Linux CPU cgroup quota per process, e.g. 0.4; needs root): emulates processes with a core each, so that "
        "2 processes can be compared with 1 on a machine whose cores Redis and the load generators share; Redis "
        "and the load generators are not capped. Fails, never runs uncapped, where no cgroup can be made",
    )
    parser.add_argument(
        "--compare-processes", action="store_true",
        help="run 1 and 2 server processes back to back for --rounds rounds (order alternating: 1,2 then 2,1, ...) "
        "and print the scaling ratio of 2 processes against 1 for the race server and the floor server",
    )
    parser.add_argument("--rounds", type=_positive_int, default=2, metavar="N", help="--compare-processes: rounds (default %(default)s)")
    parser.add_argument("--workers", type=_positive_int, default=2, metavar="N", help="load generator processes (default 2)")
    parser.add_argument("--no-floor", action="store_true", help="skip both floor servers (no ratios)")
    parser.add_argument(
        "--curve", type=race_counts, metavar="R,R,...", nargs="?", const=CURVE,
        help="open loop: run every race count of the list (default " + ",".join(map(str, CURVE)) + ") against the "
        "race server and both floors and report each one's knee, the first count whose ack p99 passes "
        f"{KNEE_MS:g} ms or that leaves actions unanswered (--races is ignored)",
    )
    parser.add_argument(
        "--server-checkout", type=Path, metavar="DIR",
        help="run the race server from another checkout of the project (e.g. an export of an older commit, to "
        "compare before and after); the load generator and the floor server stay this one's",
    )
    parser.add_argument(
        "--baseline-checkout", type=Path, metavar="DIR",
        help="also run the race server of another checkout (e.g. an export of the commit before a change) in the same "
        "run, right after this one's, and print this one's figures against it: before and after under the same conditions",
    )
    parser.add_argument(
        "--profile", type=Path, metavar="FILE",
        help="record the (first) race server process with py-spy during the measured time (collapsed stacks to FILE) "
        "and print where its time goes; needs py-spy (pip install py-spy) and permission to trace",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.set_defaults(handler=run_bench_load)


# --- processes -----------------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rss_bytes(pid: int) -> int:
    """Resident memory of a process (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def redis_cpu(client: redis.Redis) -> float:
    """Redis' own CPU time so far (INFO cpu)."""
    info: dict[str, Any] = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def wait_listening(process: subprocess.Popen[str], what: str) -> int:
    """The port ``process`` prints once it listens."""
    assert process.stdout is not None
    found: list[int] = []
    lines: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            match = LISTENING.search(line)
            if match:
                found.append(int(match.group(1)))
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    if not found:
        process.kill()
        raise CommandError("bench_failed", f"{what} did not start within {START_TIMEOUT:g} s: {''.join(lines)[-2000:]}")
    def drain() -> None:  # keep the pipe from filling; what the server says later is kept for the report
        for line in process.stdout or ():
            lines.append(line)
            del lines[:-50]

    threading.Thread(target=drain, daemon=True).start()
    SERVER_OUTPUT[process.pid] = lines
    return found[0]


@dataclass(slots=True)
class ServerProcess:
    """One started server process: its pid, its WebSocket URL and, under ``--cpu-per-process``, its CPU group."""

    pid: int
    url: str
    group: CpuGroup | None


@contextlib.contextmanager
def servers(target: str, redis_url: str, count: int, args: argparse.Namespace) -> Iterator[list[ServerProcess]]:
    """``count`` processes of the project server or the floor server, each capped at ``args.cpu_per_process`` of a
    core from its start when given; stopped (and their CPU groups removed) on leaving."""
    root = ROOT
    if target == "project" and args.server_checkout is not None:
        root = args.server_checkout.resolve()
    if target == BASELINE:
        root = args.baseline_checkout.resolve()
    environment = {**os.environ, "PYTHONPATH": str(root)}
    if target in ("project", BASELINE):
        command = [
            sys.executable, "-m", "cli", "serve", "--redis", redis_url, "--port", "0", "--countdown", "0.2",
            "--seed-pool-target", "0", "--lobby-size", "1000000", "--log-level", "WARNING",
        ]  # fmt: skip
        environment.update(LOAD_SETTINGS)
        if args.spectator_delay is not None:
            command += ["--spectator-delay", f"{args.spectator_delay:g}", "--min-spectator-delay", f"{args.spectator_delay:g}"]
        if args.mode == "closed":
            environment.update(CLOSED_LOOP_SETTINGS)
    else:
        command = [sys.executable, "-m", "benchmarks.load.floor", "--redis", redis_url, "--port", "0"]
        if target == PIPELINED:
            command.append("--pipelined")
    started: list[subprocess.Popen[str]] = []
    groups: list[CpuGroup] = []
    try:
        listening = []
        for _ in range(count):
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment, cwd=root)
            started.append(process)
            group = None
            if args.cpu_per_process is not None:
                try:
                    group = CpuGroup.cap(args.cpu_hierarchy, process.pid, args.cpu_per_process)
                except CpuBudgetUnavailable as error:
                    raise CommandError("no_cpu_budget", str(error)) from None
                groups.append(group)
            port = wait_listening(process, target + " server")
            listening.append(ServerProcess(process.pid, f"ws://127.0.0.1:{port}", group))
        yield listening
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        for group in groups:
            group.remove()


# --- one measured run ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class Figures:
    """What one server did under the load."""

    target: str
    seconds: float
    moves: int = 0
    offered: int = 0
    refusals: dict[str, int] = field(default_factory=dict)
    p50_ms: float = math.nan
    p90_ms: float = math.nan
    p99_ms: float = math.nan
    server_cpu: float = 0.0
    redis_cpu: float = 0.0
    load_cpu: float = 0.0
    rss_per_race_kib: float = math.nan
    events: int = 0
    setup_errors: list[str] = field(default_factory=list)
    unsolicited: int = 0
    races: int = 0
    started_races: int = 0
    processes: int = 1
    cpu_budget: float | None = None
    """The fraction of a core each server process was capped at (``--cpu-per-process``), None when uncapped."""
    periods: int = 0
    throttled_periods: int = 0
    """Of the server processes' 100 ms quota periods during the measured time, those in which the quota ran out."""
    commandstats: dict[str, float] = field(default_factory=dict)
    command_totals: dict[str, tuple[int, float]] = field(default_factory=dict)
    """Per Redis command (including those scripts call): calls and µs spent during the measured time."""
    server_output: list[str] = field(default_factory=list)
    spectator_moves: int = 0
    """Project: moves the spectators received during the run (each spectator receives each move of its race)."""
    spectator_lag_p50_ms: float = math.nan
    spectator_lag_p99_ms: float = math.nan
    other_cores: float = math.nan
    """Cores the machine spent on average during the measured window on anything but these servers, Redis and the
    load generator (from /proc/stat): past :data:`BUSY_CORES` the machine was busy."""
    send_late_p99_ms: float = math.nan
    """Open loop: the load generator's own lateness (p99 of how late it woke to send an action); past
    :data:`LATE_GENERATOR_MS` the run measured the generator, not the server, and says so."""

    @property
    def generator_late(self) -> bool:
        """Whether the load generator was itself late (its figures are not to be used)."""
        return self.send_late_p99_ms > LATE_GENERATOR_MS

    @property
    def machine_busy(self) -> bool:
        """Whether other work on the machine took more than :data:`BUSY_CORES` during the window."""
        return self.other_cores > BUSY_CORES

    @property
    def usable(self) -> bool:
        """Whether the run measured the server: its generator kept its schedule and the machine was not busy."""
        return not self.generator_late and not self.machine_busy

    @property
    def held(self) -> bool:
        """Open loop: whether the server kept up (ack p99 within :data:`KNEE_MS`, every offered action answered)."""
        return self.moves >= self.offered and not self.p99_ms > KNEE_MS and not math.isnan(self.p99_ms)

    @property
    def moves_per_second(self) -> float:
        return self.moves / self.seconds if self.seconds else math.nan

    def per_move_us(self, cpu: float) -> float:
        return cpu / self.moves * 1e6 if self.moves else math.nan


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (nan for no values)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


LATE_GENERATOR_MS = 50.0
"""A load generator whose send lateness p99 is past this is itself the bottleneck (issue 28.1)."""


@dataclass(frozen=True, slots=True)
class WindowEnd:
    """What the servers and Redis had used when the measured window ended (before any teardown)."""

    server_cpu: float
    redis_cpu: float
    rss: int
    machine_cpu: float
    at: float
    """time.monotonic() of the sample."""

    @classmethod
    def sample(cls, pids: Sequence[int], client: redis.Redis) -> WindowEnd:
        """Read the server processes' CPU and memory, Redis' CPU and the whole machine's now."""
        return cls(sum(cpu_seconds(pid) for pid in pids), redis_cpu(client), sum(rss_bytes(pid) for pid in pids), machine_cpu(), time.monotonic())


def machine_cpu() -> float:
    """CPU seconds every process of the machine has used so far (the busy fields of /proc/stat's ``cpu`` line)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def split(total: int, parts: int) -> list[int]:
    """``total`` spread over ``parts`` as evenly as possible (no empty part)."""
    parts = max(1, min(parts, total))
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]


def measure(target: str, args: argparse.Namespace, redis_url: str, progress: bool) -> Figures:
    """Start ``target``'s servers, drive the load from worker processes, collect the figures."""
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    if args.mode == "closed":
        race_counts = split(max(1, args.connections // 2), args.workers)
    else:
        race_counts = split(args.races, args.workers)
    spectators = split(args.spectators, len(race_counts)) if args.spectators else [0] * len(race_counts)
    idle = split(args.idle_races, len(race_counts)) if args.idle_races else [0] * len(race_counts)
    context = multiprocessing.get_context("spawn")
    with servers(target, redis_url, args.processes, args) as started:
        pids = [server.pid for server in started]
        urls = tuple(server.url for server in started)
        groups = [server.group for server in started if server.group is not None]
        rss_before = sum(rss_bytes(pid) for pid in pids)
        barrier = context.Barrier(len(race_counts) + 1, timeout=max(120.0, (args.races + args.idle_races + args.spectators) * 0.2))
        start_time = context.Value("d", 0.0)
        results = context.Queue()
        first = 0
        workers = []
        for races, watching, idling in zip(race_counts, spectators, idle, strict=True):
            order = WorkOrder("project" if target in ("project", BASELINE) else "floor", urls, args.mode, races, watching, args.seconds, args.interval, first_race=first, idle_races=idling)
            first += races
            worker = context.Process(target=work, args=(order, barrier, start_time, results), daemon=True)
            worker.start()
            workers.append(worker)
        _say(progress, f"{target}: setting up {sum(race_counts)} races on {len(pids)} server process(es), {len(workers)} load workers ...")
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            raise CommandError("bench_failed", f"{target}: a load worker failed during set-up: {_errors(results)}") from None
        client.config_resetstat()
        cpu_before = sum(cpu_seconds(pid) for pid in pids)
        redis_before = redis_cpu(client)
        machine_before, before_at = machine_cpu(), time.monotonic()
        throttling_before = [group.throttling() for group in groups]
        start_time.value = time.time() + 0.3
        barrier.wait()
        profiler = start_profiler(args.profile, pids[0], args.seconds) if target == "project" and args.profile else None
        measured = args.seconds if args.mode != "burst" else 0.0
        deadline = start_time.value + measured + max(60.0, args.races * 0.2)
        collected: list[WorkResult] = []
        window_end: WindowEnd | None = None  # sampled when the measured window ends, under load, not after teardown
        while len(collected) < len(workers):
            _say(progress, f"{target}: {args.mode} load, {min(measured, max(0.0, time.time() - start_time.value)):.0f}/{measured:g} s", end="\r")
            remaining = start_time.value + measured - time.time()
            if window_end is None and measured and remaining <= 0:
                window_end = WindowEnd.sample(pids, client)
            with contextlib.suppress(Exception):
                collected.append(results.get(timeout=min(1.0, remaining) if window_end is None and remaining > 0 else 1.0))
            if time.time() > deadline:
                raise CommandError("bench_failed", f"{target}: the load workers did not finish in time")
        elapsed = time.time() - start_time.value
        if window_end is None:  # a burst (its set-up is the window), or workers that all ended early
            window_end = WindowEnd.sample(pids, client)
        throttling = [(after[0] - before[0], after[1] - before[1]) for before, after in zip(throttling_before, (g.throttling() for g in groups), strict=True)]
        stats: dict[str, Any] = client.info("commandstats")
        output = [line for pid in pids for line in SERVER_OUTPUT.get(pid, [])[-5:]]
        for worker in workers:
            worker.join(10)
        if profiler is not None:
            profiler.wait(args.seconds + 30)
    _say(progress, f"{target}: done{' ' * 40}")
    latencies = [value for result in collected for value in result.latencies_ms]
    figures = Figures(
        target=target,
        seconds=args.seconds if args.mode != "burst" else elapsed,
        moves=sum(result.moves for result in collected),
        offered=sum(result.offered for result in collected),
        p50_ms=percentile(latencies, 0.5),
        p90_ms=percentile(latencies, 0.9),
        p99_ms=percentile(latencies, 0.99),
        server_cpu=window_end.server_cpu - cpu_before,
        redis_cpu=window_end.redis_cpu - redis_before,
        load_cpu=(load_cpu := sum(result.cpu_seconds for result in collected)),
        other_cores=max(0.0, window_end.machine_cpu - machine_before - (window_end.server_cpu - cpu_before)
                        - (window_end.redis_cpu - redis_before) - load_cpu) / max(1e-3, window_end.at - before_at),
        rss_per_race_kib=(window_end.rss - rss_before) / 1024 / max(1, sum(race_counts)),
        spectator_moves=len(lags := [value for result in collected for value in result.spectator_lag_ms]),
        spectator_lag_p50_ms=percentile(lags, 0.5),
        spectator_lag_p99_ms=percentile(lags, 0.99),
        send_late_p99_ms=percentile([value for result in collected for value in result.send_lateness_ms], 0.99),
        events=sum(result.events for result in collected),
        setup_errors=[error for result in collected for error in result.setup_errors][:10],
        unsolicited=sum(result.unsolicited for result in collected),
        races=sum(race_counts),
        started_races=sum(result.started_races for result in collected),
        server_output=output,
        processes=len(pids),
        cpu_budget=args.cpu_per_process,
        periods=sum(periods for periods, _ in throttling),
        throttled_periods=sum(throttled for _, throttled in throttling),
        commandstats={name.removeprefix("cmdstat_"): float(value["usec_per_call"]) for name, value in stats.items() if isinstance(value, dict)},
        command_totals={name.removeprefix("cmdstat_"): (int(value["calls"]), float(value["usec"])) for name, value in stats.items() if isinstance(value, dict)},
    )
    for result in collected:
        for code, count in result.refusals.items():
            figures.refusals[code] = figures.refusals.get(code, 0) + count
    return figures


def start_profiler(path: Path, pid: int, seconds: float) -> subprocess.Popen[bytes]:
    """py-spy recording ``pid`` for ``seconds`` into ``path`` (collapsed stacks, one "frames count" line each)."""
    executable = Path(sys.executable).with_name("py-spy")
    command = [str(executable if executable.exists() else "py-spy"), "record", "--pid", str(pid), "--duration", str(max(1, round(seconds))),
               "--rate", "200", "--format", "raw", "--output", str(path)]  # fmt: skip
    # py-spy's default mode pauses the process for each sample: slower, but --nonblocking cut ~40 % of the stacks short
    try:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as error:
        raise CommandError("no_profiler", f"py-spy could not be started ({error}): pip install py-spy") from None


def profile_summary(path: Path, top: int = 12) -> list[tuple[str, float, float]]:
    """(function, % of samples in it or below, % of samples in it itself) of the functions with most inclusive time."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = [_function_of(frame) for frame in stack.split(";")]
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
        own[frames[-1]] = own.get(frames[-1], 0) + count
    if not total:
        return []
    ranked = sorted(inclusive.items(), key=lambda item: -item[1])
    skip = ("<module>", "run (", "_run_once", "run_forever", "run_until_complete", "_run (", "main (", "_run_code",
            "_run_module_as_main", "serve_until_signal", "run_serve", "Runner.run", "BaseEventLoop", "Handle._run")  # fmt: skip
    chosen = [(name, count) for name, count in ranked if not any(name.startswith(prefix) for prefix in skip)][:top]
    return [(name, count / total * 100, own.get(name, 0) / total * 100) for name, count in chosen]


def _function_of(frame: str) -> str:
    """``name (path/file.py:line)`` as ``name (file.py)``: one entry per function, whatever line was running."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit('/', 1)[-1].split(':')[0].rstrip(')')})" if where else name


def _errors(results: Any) -> str:
    found = []
    with contextlib.suppress(Exception):
        while True:
            found.extend(results.get(timeout=0.5).setup_errors)
    return "; ".join(found[:3]) or "unknown"


def _say(progress: bool, text: str, end: str = "\n") -> None:
    if progress:
        print(text, end=end, file=sys.stderr, flush=True)


# --- report --------------------------------------------------------------------------------------------------


def _ratio(project: float, floor: float) -> float:
    return project / floor if floor and not math.isnan(floor) and not math.isnan(project) else math.nan


Row = tuple[str, float, float, float, float, float]
"""(figure, project, floor, project / floor, pipelined floor, project / pipelined floor)."""


def rows(project: Figures, floor: Figures | None, pipelined: Figures | None = None) -> list[Row]:
    """The rows of the report: each figure of the project beside the floors' and the ratios."""
    def row(name: str, value: Any) -> Row:
        mine = float(value(project))
        theirs = float(value(floor)) if floor is not None else math.nan
        lowest = float(value(pipelined)) if pipelined is not None else math.nan
        return name, mine, theirs, _ratio(mine, theirs), lowest, _ratio(mine, lowest)

    return [
        row("moves/s", lambda f: f.moves_per_second),
        row("ack p50 ms", lambda f: f.p50_ms),
        row("ack p90 ms", lambda f: f.p90_ms),
        row("ack p99 ms", lambda f: f.p99_ms),
        row("server CPU % of a core", lambda f: f.server_cpu / f.seconds * 100 if f.seconds else math.nan),
        row("server CPU us/move", lambda f: f.per_move_us(f.server_cpu)),
        row("Redis CPU us/move", lambda f: f.per_move_us(f.redis_cpu)),
        row("load generator CPU us/move", lambda f: f.per_move_us(f.load_cpu)),
        row("Redis CPU % of a core", lambda f: _percent_of_core(f.redis_cpu, f)),
        row("load gen. CPU % of a core", lambda f: _percent_of_core(f.load_cpu, f)),
        row("server RSS KiB/race", lambda f: f.rss_per_race_kib),
        row("spectator lag p99 ms", lambda f: f.spectator_lag_p99_ms),
    ]


Run = dict[str, Figures]
"""One measured point: the figures of each target (``project``, ``floor``, :data:`PIPELINED`) that ran."""


def run_bench_load(args: argparse.Namespace) -> int:
    """Run the load against the project server, then the floor servers, and print the comparison (with
    ``--compare-processes``: each with 1 and with 2 processes, over rounds, and the scaling ratios; with ``--curve``:
    at each race count, and the knees)."""
    if not 0 < args.seconds <= 120 or not 0.05 <= args.interval <= 60:
        raise CommandError("bad_argument", "--seconds must be in (0, 120] and --interval in [0.05, 60]")
    if args.compare_processes and args.mode == "burst":
        raise CommandError("bad_argument", "--compare-processes measures moves/s: use it with --mode closed or open")
    if args.curve and (args.mode != "open" or args.compare_processes):
        raise CommandError("bad_argument", "--curve is a scaling curve of the open loop: use it with --mode open alone")
    args.cpu_hierarchy = None
    if args.cpu_per_process is not None:
        try:  # before anything starts: a budget that cannot be applied must not become an uncapped run
            args.cpu_hierarchy = find_hierarchy()
        except CpuBudgetUnavailable as error:
            raise CommandError("no_cpu_budget", str(error)) from None
    if args.curve:
        points = _measure_all(args, [(args.processes, races) for races in args.curve])
        return _report_curve(args, points)
    counts = [(1, 2) if index % 2 == 0 else (2, 1) for index in range(args.rounds)] if args.compare_processes else [(args.processes,)]
    runs = _measure_all(args, [(count, args.races) for round_counts in counts for count in round_counts])
    if args.compare_processes:
        return _report_scaling(args, runs)
    _, run = runs[0]
    return _report(args, run)


def _targets(args: argparse.Namespace) -> list[str]:
    """The servers each point runs: the project (and the ``--baseline-checkout``'s), then (unless ``--no-floor``) the
    floor and, but for the process comparison, the pipelined floor."""
    projects = ["project"] if args.baseline_checkout is None or args.compare_processes else ["project", BASELINE]
    if args.no_floor:
        return projects
    return [*projects, "floor"] if args.compare_processes else [*projects, "floor", PIPELINED]


def _measure_all(args: argparse.Namespace, points: Sequence[tuple[int, int]]) -> list[tuple[int, Run]]:
    """One embedded Redis; per (processes, races) of ``points``, each target's run (Redis emptied before each)."""
    progress = not args.json
    runs: list[tuple[int, Run]] = []
    with tempfile.TemporaryDirectory(prefix="fg-bench-") as folder:
        store = EmbeddedRedis(Path(folder), persistent=False)
        try:
            store.start()
        except RedisUnavailable as error:
            raise CommandError("no_redis", str(error)) from None
        try:
            for count, races in points:
                one = copy.copy(args)
                one.processes, one.races = count, races
                if args.spectators_per_race is not None:
                    one.spectators = args.spectators_per_race * races
                runs.append((count, {target: measure(target, one, store.url, progress) for target in _targets(args)}))
        finally:
            store.stop()
    return runs


def _report(args: argparse.Namespace, run: Run) -> int:
    """Print (or emit as JSON) one run's figures beside the floors'."""
    project, floor, pipelined = run["project"], run.get("floor"), run.get(PIPELINED)
    report = rows(project, floor, pipelined)
    shape = _shape(args)
    profile = profile_summary(args.profile) if args.profile and args.profile.exists() else []
    if args.json:
        emit_json({
            "profile": [{"function": name, "inclusive_percent": inclusive, "self_percent": own} for name, inclusive, own in profile],
            "mode": args.mode, "shape": shape, "processes": args.processes, "workers": args.workers, "seconds": args.seconds,
            "cpu_per_process": args.cpu_per_process, "cpu_budget_by": args.cpu_hierarchy and args.cpu_hierarchy.label,
            "project": _figures_json(project), "floor": floor and _figures_json(floor),
            "pipelined_floor": pipelined and _figures_json(pipelined),
            "baseline": (baseline := run.get(BASELINE)) and _figures_json(baseline),
            "rows": [{"figure": name, "project": _finite(mine), "floor": _finite(theirs), "ratio": _finite(ratio),
                      "pipelined_floor": _finite(lowest), "ratio_pipelined": _finite(ratio_lowest)}
                     for name, mine, theirs, ratio, lowest, ratio_lowest in report],
        })  # fmt: skip
        return EXIT_OK
    print(f"{shape}; {args.processes} server process(es){_budget_text(args)}, {args.workers} load workers, {args.seconds:g} s measured")
    print(f"{'figure':<28}{'project':>12}{'floor':>12}{'ratio':>8}{'pipelined':>12}{'ratio':>8}")
    for name, mine, theirs, ratio, lowest, ratio_lowest in report:
        print(f"{name:<28}{_number(mine):>12}{_number(theirs):>12}{_number(ratio, 2):>8}{_number(lowest):>12}{_number(ratio_lowest, 2):>8}")
    if (baseline := run.get(BASELINE)) is not None:
        print(f"{'against the baseline':<28}{'project':>12}{'baseline':>12}{'ratio':>8}   (baseline: {args.baseline_checkout})")
        for name, mine, theirs, ratio, _, _ in rows(project, baseline):
            print(f"{name:<28}{_number(mine):>12}{_number(theirs):>12}{_number(ratio, 2):>8}")
    for figures in run.values():
        _print_notes(args, figures)
    if profile:
        print(f"race server profile (py-spy, {args.profile}): % of samples in the function or below / in itself")
        for name, inclusive, own in profile:
            print(f"  {inclusive:5.1f} % {own:5.1f} %  {name}")
    return EXIT_OK


def _print_notes(args: argparse.Namespace, figures: Figures) -> None:
    """One target's counts, refusals, what its users saw, Redis' busiest commands, and its last words on errors."""
    extra = []
    if figures.offered:
        extra.append(f"{figures.moves} of {figures.offered} offered actions acknowledged ({figures.moves / figures.offered:.1%})")
    if figures.refusals:
        extra.append("refusals " + ", ".join(f"{code} {count}" for code, count in sorted(figures.refusals.items())))
    if figures.setup_errors:
        extra.append(f"{len(figures.setup_errors)} set-up errors, e.g. {figures.setup_errors[0]}")
    if args.mode == "burst" and figures.target == "project":
        extra.append(f"{figures.started_races} of {figures.races} races started; {figures.unsolicited} requests answered twice")
    if figures.cpu_budget is not None:
        extra.append(_budget_use(figures))
    extra.extend(_what_users_see(figures))
    top = sorted(figures.commandstats.items(), key=lambda item: -item[1])[:3]
    extra.append("Redis us/call: " + ", ".join(f"{name} {value:.1f}" for name, value in top))
    busiest = sorted(figures.command_totals.items(), key=lambda item: -item[1][1])[:4]
    extra.append("Redis calls/s (us/s): " + ", ".join(f"{name} {calls / figures.seconds:,.0f} ({usec / figures.seconds:,.0f})" for name, (calls, usec) in busiest))
    print(f"{figures.target}: " + "; ".join(extra))
    if (figures.refusals or figures.setup_errors) and figures.server_output:
        print(f"{figures.target} server said last:\n  " + "  ".join(figures.server_output[-5:]), end="")


def knee(points: Sequence[Figures]) -> tuple[int | None, int | None, bool]:
    """Where one target's curve bends, from its points in ascending race counts: (the largest count held before
    the first one not held, that first count not held, whether every point up to it was usable). A count is
    held when :attr:`Figures.held`; (None, None, ...) when the curve never bends within the counts run."""
    last_held = None
    for figures in points:
        if not figures.held:
            return last_held, figures.races, all(point.usable for point in points if point.races <= figures.races)
        last_held = figures.races
    return last_held, None, all(point.usable for point in points)


def _knee_text(points: Sequence[Figures]) -> str:
    held, failed, usable = knee(points)
    caveat = "" if usable else " (NOT USABLE: a point up to it was busy or its generator late)"
    if failed is None:
        return f"held every count run, up to {held}{caveat}"
    return (f"knee between {held} and {failed} races{caveat}" if held is not None else f"not held at {failed} races already{caveat}")


def _report_curve(args: argparse.Namespace, points: Sequence[tuple[int, Run]]) -> int:
    """Print (or emit as JSON) each point of ``--curve`` and each target's knee."""
    targets = _targets(args)
    curves = {target: [run[target] for _, run in points] for target in targets}
    if args.json:
        emit_json({
            "mode": "curve", "shape": _shape(args), "processes": args.processes, "workers": args.workers, "seconds": args.seconds,
            "knee_ms": KNEE_MS, "points": [{target: _figures_json(figures) for target, figures in run.items()} for _, run in points],
            "knees": {target: dict(zip(("held", "not_held", "usable"), knee(curve), strict=True)) for target, curve in curves.items()},
        })  # fmt: skip
        return EXIT_OK
    watchers = _shape(args).split(" per player, ", 1)[1]
    print(f"scaling curve, open loop at one action per {args.interval:g} s per player, {watchers}; {args.processes} server process(es), {args.workers} load workers, {args.seconds:g} s measured each")
    print(f"{'races':>6}  {'target':<16}{'acked':>8}{'p99 ms':>9}{'lag p99':>9}{'us/move':>9}{'Redis us':>9}{'late p99':>9}{'other':>7}  usable")
    for _, run in points:
        for figures in run.values():
            acked = figures.moves / figures.offered if figures.offered else math.nan
            print(f"{figures.races:>6}  {figures.target:<16}{_number(acked * 100):>7}%{_number(figures.p99_ms):>9}{_number(figures.spectator_lag_p99_ms):>9}"
                  f"{_number(figures.per_move_us(figures.server_cpu)):>9}{_number(figures.per_move_us(figures.redis_cpu)):>9}"
                  f"{_number(figures.send_late_p99_ms):>9}{_number(figures.other_cores):>7}  {'yes' if figures.usable else 'NO'}")  # fmt: skip
    for target, curve in curves.items():
        print(f"{target}: {_knee_text(curve)}")
    print(f"(held: ack p99 <= {KNEE_MS:g} ms and every action answered; other: cores used by other processes; usable: "
          f"generator on time and other <= {BUSY_CORES:g})")
    return EXIT_OK


def _what_users_see(figures: Figures) -> list[str]:
    """The spectators' lag, and whether the load generator kept its own schedule (the run is unusable if not)."""
    notes = []
    if figures.spectator_moves:
        notes.append(
            f"spectators received {figures.spectator_moves} moves, lag p50 {figures.spectator_lag_p50_ms:.1f} ms,"
            f" p99 {figures.spectator_lag_p99_ms:.1f} ms"
        )
    if figures.machine_busy:
        notes.append(
            f"THE MACHINE WAS BUSY (other processes used {figures.other_cores:.2f} cores > {BUSY_CORES:g}):"
            " not a usable run; only ratios within it mean anything"
        )
    if figures.generator_late:
        notes.append(
            f"THE LOAD GENERATOR WAS LATE (send lateness p99 {figures.send_late_p99_ms:.0f} ms > {LATE_GENERATOR_MS:g} ms):"
            " these figures measure it, not the server; do not use them"
        )
    elif not math.isnan(figures.send_late_p99_ms):
        notes.append(f"load generator on time (send lateness p99 {figures.send_late_p99_ms:.1f} ms)")
    return notes


def _shape(args: argparse.Namespace) -> str:
    idle = f", {args.idle_races} idle races beside" if args.idle_races else ""
    watchers = f"{args.spectators_per_race} spectator(s) per race" if args.spectators_per_race is not None else f"{args.spectators} spectators"
    return {
        "closed": f"closed loop, {args.connections} connections{idle}",
        "open": f"open loop, {args.races} races at one action per {args.interval:g} s per player, {watchers}{idle}",
        "burst": f"set-up burst of {args.races} races",
    }[args.mode]


def _budget_text(args: argparse.Namespace) -> str:
    if args.cpu_per_process is None:
        return " (uncapped)"
    return f" capped at {args.cpu_per_process:g} of a core each ({args.cpu_hierarchy.label})"


def _budget_use(figures: Figures) -> str:
    """How much of its budget the server used, and how often the quota ran out (it was the limit)."""
    budget = (figures.cpu_budget or 0) * figures.processes * figures.seconds
    used = figures.server_cpu / budget if budget else math.nan
    throttled = figures.throttled_periods / figures.periods if figures.periods else math.nan
    note = "" if used >= BUDGET_USED else " (under its budget: the machine or the load, not the quota, was the limit)"
    return f"server used {used:.0%} of its CPU budget, quota ran out in {throttled:.0%} of 100 ms periods{note}"


def scaling(runs: Sequence[tuple[int, Run]], target: str) -> list[float]:
    """Per round, moves/s with 2 processes over moves/s with 1 (runs in pairs, as run_bench_load makes them)."""
    ratios = []
    for first, second in zip(runs[0::2], runs[1::2], strict=True):
        pair = {count: run.get(target) for count, run in (first, second)}
        one, two = pair[1], pair[2]
        if one is not None and two is not None:
            ratios.append(_ratio(two.moves_per_second, one.moves_per_second))
    return ratios


def _report_scaling(args: argparse.Namespace, runs: Sequence[tuple[int, Run]]) -> int:
    """Print (or emit as JSON) every run of ``--compare-processes`` and the scaling ratios."""
    ratios = {target: scaling(runs, target) for target in ("project", "floor")}
    if args.json:
        emit_json({
            "mode": args.mode, "shape": _shape(args), "compare_processes": True, "rounds": args.rounds, "workers": args.workers,
            "seconds": args.seconds, "cpu_per_process": args.cpu_per_process, "cpu_budget_by": args.cpu_hierarchy and args.cpu_hierarchy.label,
            "runs": [{"processes": count, "project": _figures_json(run["project"]), "floor": (floor := run.get("floor")) and _figures_json(floor)}
                     for count, run in runs],
            "scaling": {target: [_finite(ratio) for ratio in values] for target, values in ratios.items()},
        })  # fmt: skip
        return EXIT_OK
    print(f"{_shape(args)}; 1 against 2 server processes{_budget_text(args)}, {args.rounds} rounds, {args.workers} load workers, {args.seconds:g} s measured each")
    header = f"{'run':<5}{'target':<9}{'procs':>6}{'moves/s':>10}{'p99 ms':>9}{'server %':>10}{'us/move':>9}{'Redis %':>9}{'load %':>8}"
    print(header + ("  budget" if args.cpu_per_process is not None else ""))
    for number, (count, run) in enumerate(runs, 1):
        for figures in run.values():
            line = (f"{number:<5}{figures.target:<9}{count:>6}{_number(figures.moves_per_second, 0):>10}{_number(figures.p99_ms):>9}"
                    f"{_number(_percent_of_core(figures.server_cpu, figures)):>10}{_number(figures.per_move_us(figures.server_cpu)):>9}"
                    f"{_number(_percent_of_core(figures.redis_cpu, figures)):>9}{_number(_percent_of_core(figures.load_cpu, figures)):>8}")  # fmt: skip
            print(line + (f"  {_budget_use(figures)}" if figures.cpu_budget is not None else ""))
    for target, values in ratios.items():
        if values:
            shown = ", ".join(_number(value, 2) for value in values)
            print(f"{target}: 2 processes / 1 = {shown} (median {_number(statistics.median(values), 2)})")
    return EXIT_OK


def _percent_of_core(cpu: float, figures: Figures) -> float:
    return cpu / figures.seconds * 100 if figures.seconds else math.nan


def _figures_json(figures: Figures) -> dict[str, Any]:
    return {
        "moves": figures.moves, "offered": figures.offered, "moves_per_second": _finite(figures.moves_per_second),
        "ack_ms": {"p50": _finite(figures.p50_ms), "p90": _finite(figures.p90_ms), "p99": _finite(figures.p99_ms)},
        "cpu_seconds": {"server": figures.server_cpu, "redis": figures.redis_cpu, "load_generator": figures.load_cpu},
        "rss_per_race_kib": _finite(figures.rss_per_race_kib), "refusals": figures.refusals, "events": figures.events,
        "setup_errors": figures.setup_errors, "unsolicited_replies": figures.unsolicited, "server_output": figures.server_output,
        "races": figures.races, "started_races": figures.started_races, "redis_usec_per_call": figures.commandstats,
        "redis_commands": {name: {"calls": calls, "usec": usec} for name, (calls, usec) in figures.command_totals.items()},
        "processes": figures.processes, "cpu_budget": figures.cpu_budget,
        "quota_periods": {"total": figures.periods, "throttled": figures.throttled_periods},
        "send_late_p99_ms": _finite(figures.send_late_p99_ms), "generator_late": figures.generator_late,
        "other_cores": _finite(figures.other_cores),
        "machine_busy": figures.machine_busy, "usable": figures.usable, "held": figures.held,
        "spectator_moves": figures.spectator_moves,
        "spectator_lag_ms": {"p50": _finite(figures.spectator_lag_p50_ms), "p99": _finite(figures.spectator_lag_p99_ms)},
    }  # fmt: skip


def _finite(value: float) -> float | None:
    """JSON has no NaN: a figure that could not be measured is null."""
    return None if math.isnan(value) else value


def _number(value: float, decimals: int = 1) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:,.{decimals}f}" if abs(value) < 1000 else f"{value:,.0f}"
