"""``flowergarden bench load``: the race server under load, side by side with the floor server of its stack.

Starts a Redis (embedded, no persistence), the race server (``--processes`` 1 or 2) and, in the same run, the
floor server (websockets + msgpack + one Lua EVAL per message, ``cli/bench_floor.py``); drives the same load
against each from ``--workers`` separate processes; prints moves/s, ack p50/p90/p99, CPU per move of the server,
of Redis and of the load generator, and server memory per race, each with the floor's figure and the ratio.
Everything listens on 127.0.0.1 only; every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import re
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

from cli.bench_workers import WorkOrder, WorkResult, work
from cli.output import EXIT_OK, CommandError, emit_json, help_text
from cli.serve_command import _non_negative_int, _positive_int
from server.embedded_redis import EmbeddedRedis, RedisUnavailable

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
LISTENING = re.compile(r"(?:serving races on ws://[^:\s]+:|floor listening on )(\d+)")
START_TIMEOUT = 30.0
LOAD_SETTINGS = {
    "FLOWERGARDEN_LIMITS_MAX_CONNECTIONS_PER_ADDRESS": "0", "FLOWERGARDEN_LIMITS_MAX_UNIDENTIFIED_PER_ADDRESS": "0",
    "FLOWERGARDEN_SESSIONS_MAX_NEW_PER_ADDRESS": "0", "FLOWERGARDEN_LOBBY_MAX_OPEN_PER_ADDRESS": "0",
}  # fmt: skip
"""Every load connection comes from 127.0.0.1: the race server's per-address limits are lifted for the load
(settings by environment, docs/OPERATIONS.md; an older checkout that has no such setting ignores them)."""
CLOSED_LOOP_SETTINGS = {"FLOWERGARDEN_LIMITS_RATE_PER_SECOND": "100000", "FLOWERGARDEN_LIMITS_BURST": "300000", "FLOWERGARDEN_MAX_ACTIONS": "100000000"}
"""As fast as acks return: past the default frame rate and action limit."""
SERVER_OUTPUT: dict[int, list[str]] = {}
"""The last lines each server process printed (shown when a run had errors)."""


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
            "  open    --races races, each player one action every --interval s, plus --spectators watchers\n"
            "  burst   --races races set up at once (create, join, started); counts requests answered twice and\n"
            "          races that never started\n\n"
            "On a shared machine report the ratios, not the absolute figures."
        ),
    )
    parser.add_argument("--mode", choices=["closed", "open", "burst"], default="closed", help="default %(default)s")
    parser.add_argument("--connections", type=_positive_int, default=20, metavar="N", help="closed loop: players (default %(default)s)")
    parser.add_argument("--races", type=_positive_int, default=100, metavar="R", help="open loop and burst: races (default %(default)s)")
    parser.add_argument("--spectators", type=_non_negative_int, default=0, metavar="S", help="open loop: watchers (default 0)")
    parser.add_argument(
        "--idle-races", type=_non_negative_int, default=0, metavar="N",
        help="races set up beside the load that stay idle (one waiting player each): shows whether the cost of an "
        "event grows with the number of races (default 0)",
    )
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS", help="open loop: seconds between one player's actions (default 1)")
    parser.add_argument("--seconds", type=float, default=5.0, metavar="SECONDS", help="measured time per server (default 5, at most 120)")
    parser.add_argument("--processes", type=int, choices=[1, 2], default=1, help="server processes (default 1)")
    parser.add_argument("--workers", type=_positive_int, default=2, metavar="N", help="load generator processes (default 2)")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor server (no ratios)")
    parser.add_argument(
        "--server-checkout", type=Path, metavar="DIR",
        help="run the race server from another checkout of the project (e.g. an export of an older commit, to "
        "compare before and after); the load generator and the floor server stay this one's",
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


@contextlib.contextmanager
def servers(target: str, redis_url: str, count: int, args: argparse.Namespace) -> Iterator[list[tuple[int, str]]]:
    """``count`` processes of the project server or the floor server: (pid, ws URL) each; stopped on leaving."""
    root = Path(__file__).resolve().parent.parent
    if target == "project" and args.server_checkout is not None:
        root = args.server_checkout.resolve()
    environment = {**os.environ, "PYTHONPATH": str(root)}
    if target == "project":
        command = [
            sys.executable, "-m", "cli", "serve", "--redis", redis_url, "--port", "0", "--countdown", "0.2",
            "--seed-pool-target", "0", "--lobby-size", "1000000", "--log-level", "WARNING",
        ]  # fmt: skip
        environment.update(LOAD_SETTINGS)
        if args.mode == "closed":
            environment.update(CLOSED_LOOP_SETTINGS)
    else:
        command = [sys.executable, "-m", "cli.bench_floor", "--redis", redis_url, "--port", "0"]
    started: list[subprocess.Popen[str]] = []
    try:
        urls = []
        for _ in range(count):
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment, cwd=root)
            started.append(process)
            urls.append((process.pid, f"ws://127.0.0.1:{wait_listening(process, target + ' server')}"))
        yield urls
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


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
    commandstats: dict[str, float] = field(default_factory=dict)
    server_output: list[str] = field(default_factory=list)

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
        pids = [pid for pid, _ in started]
        urls = tuple(url for _, url in started)
        rss_before = sum(rss_bytes(pid) for pid in pids)
        barrier = context.Barrier(len(race_counts) + 1, timeout=max(120.0, (args.races + args.idle_races) * 0.2))
        start_time = context.Value("d", 0.0)
        results = context.Queue()
        first = 0
        workers = []
        for races, watching, idling in zip(race_counts, spectators, idle, strict=True):
            order = WorkOrder(target, urls, args.mode, races, watching, args.seconds, args.interval, first_race=first, idle_races=idling)
            first += races
            worker = context.Process(target=work, args=(order, barrier, start_time, results), daemon=True)
            worker.start()
            workers.append(worker)
        _say(progress, f"{target}: setting up {sum(race_counts)} races on {len(pids)} server process(es), {len(workers)} load workers ...")
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            raise CommandError("bench_failed", f"{target}: a load worker failed during set-up: {_errors(results)}") from None
        rss_after = sum(rss_bytes(pid) for pid in pids)
        client.config_resetstat()
        cpu_before = sum(cpu_seconds(pid) for pid in pids)
        redis_before = redis_cpu(client)
        start_time.value = time.time() + 0.3
        barrier.wait()
        profiler = start_profiler(args.profile, pids[0], args.seconds) if target == "project" and args.profile else None
        measured = args.seconds if args.mode != "burst" else 0.0
        deadline = start_time.value + measured + max(60.0, args.races * 0.2)
        collected: list[WorkResult] = []
        while len(collected) < len(workers):
            _say(progress, f"{target}: {args.mode} load, {min(measured, max(0.0, time.time() - start_time.value)):.0f}/{measured:g} s", end="\r")
            with contextlib.suppress(Exception):
                collected.append(results.get(timeout=1.0))
            if time.time() > deadline:
                raise CommandError("bench_failed", f"{target}: the load workers did not finish in time")
        elapsed = time.time() - start_time.value
        cpu_after = sum(cpu_seconds(pid) for pid in pids)
        redis_after = redis_cpu(client)
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
        server_cpu=cpu_after - cpu_before,
        redis_cpu=redis_after - redis_before,
        load_cpu=sum(result.cpu_seconds for result in collected),
        rss_per_race_kib=(rss_after - rss_before) / 1024 / max(1, sum(race_counts)),
        events=sum(result.events for result in collected),
        setup_errors=[error for result in collected for error in result.setup_errors][:10],
        unsolicited=sum(result.unsolicited for result in collected),
        races=sum(race_counts),
        started_races=sum(result.started_races for result in collected),
        server_output=output,
        commandstats={name.removeprefix("cmdstat_"): float(value["usec_per_call"]) for name, value in stats.items() if isinstance(value, dict)},
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


def rows(project: Figures, floor: Figures | None) -> list[tuple[str, float, float, float]]:
    """(figure, project, floor, ratio) rows of the report."""
    def pair(name: str, value: Any) -> tuple[str, float, float, float]:
        mine = float(value(project))
        theirs = float(value(floor)) if floor is not None else math.nan
        return name, mine, theirs, _ratio(mine, theirs)

    return [
        pair("moves/s", lambda f: f.moves_per_second),
        pair("ack p50 ms", lambda f: f.p50_ms),
        pair("ack p90 ms", lambda f: f.p90_ms),
        pair("ack p99 ms", lambda f: f.p99_ms),
        pair("server CPU % of a core", lambda f: f.server_cpu / f.seconds * 100 if f.seconds else math.nan),
        pair("server CPU us/move", lambda f: f.per_move_us(f.server_cpu)),
        pair("Redis CPU us/move", lambda f: f.per_move_us(f.redis_cpu)),
        pair("load generator CPU us/move", lambda f: f.per_move_us(f.load_cpu)),
        pair("server RSS KiB/race", lambda f: f.rss_per_race_kib),
    ]


def run_bench_load(args: argparse.Namespace) -> int:
    """Run the load against the project server, then the floor server, and print the comparison."""
    if not 0 < args.seconds <= 120 or not 0.05 <= args.interval <= 60:
        raise CommandError("bad_argument", "--seconds must be in (0, 120] and --interval in [0.05, 60]")
    progress = not args.json
    with tempfile.TemporaryDirectory(prefix="fg-bench-") as folder:
        store = EmbeddedRedis(Path(folder), persistent=False)
        try:
            store.start()
        except RedisUnavailable as error:
            raise CommandError("no_redis", str(error)) from None
        try:
            project = measure("project", args, store.url, progress)
            floor = None if args.no_floor else measure("floor", args, store.url, progress)
        finally:
            store.stop()
    report = rows(project, floor)
    idle = f", {args.idle_races} idle races beside" if args.idle_races else ""
    shape = {
        "closed": f"closed loop, {args.connections} connections{idle}",
        "open": f"open loop, {args.races} races at one action per {args.interval:g} s per player, {args.spectators} spectators{idle}",
        "burst": f"set-up burst of {args.races} races",
    }[args.mode]
    profile = profile_summary(args.profile) if args.profile and args.profile.exists() else []
    if args.json:
        emit_json({
            "profile": [{"function": name, "inclusive_percent": inclusive, "self_percent": own} for name, inclusive, own in profile],
            "mode": args.mode, "shape": shape, "processes": args.processes, "workers": args.workers, "seconds": args.seconds,
            "project": _figures_json(project), "floor": None if floor is None else _figures_json(floor),
            "rows": [{"figure": name, "project": _finite(mine), "floor": _finite(theirs), "ratio": _finite(ratio)} for name, mine, theirs, ratio in report],
        })  # fmt: skip
        return EXIT_OK
    print(f"{shape}; {args.processes} server process(es), {args.workers} load workers, {args.seconds:g} s measured")
    print(f"{'figure':<28}{'project':>12}{'floor':>12}{'ratio':>8}")
    for name, mine, theirs, ratio in report:
        print(f"{name:<28}{_number(mine):>12}{_number(theirs):>12}{_number(ratio, 2):>8}")
    for figures in filter(None, (project, floor)):
        extra = []
        if figures.offered:
            extra.append(f"{figures.moves} of {figures.offered} offered actions acknowledged ({figures.moves / figures.offered:.1%})")
        if figures.refusals:
            extra.append("refusals " + ", ".join(f"{code} {count}" for code, count in sorted(figures.refusals.items())))
        if figures.setup_errors:
            extra.append(f"{len(figures.setup_errors)} set-up errors, e.g. {figures.setup_errors[0]}")
        if args.mode == "burst" and figures.target == "project":
            extra.append(f"{figures.started_races} of {figures.races} races started; {figures.unsolicited} requests answered twice")
        top = sorted(figures.commandstats.items(), key=lambda item: -item[1])[:3]
        extra.append("Redis us/call: " + ", ".join(f"{name} {value:.1f}" for name, value in top))
        print(f"{figures.target}: " + "; ".join(extra))
        if (figures.refusals or figures.setup_errors) and figures.server_output:
            print(f"{figures.target} server said last:\n  " + "  ".join(figures.server_output[-5:]), end="")
    if profile:
        print(f"race server profile (py-spy, {args.profile}): % of samples in the function or below / in itself")
        for name, inclusive, own in profile:
            print(f"  {inclusive:5.1f} % {own:5.1f} %  {name}")
    return EXIT_OK


def _figures_json(figures: Figures) -> dict[str, Any]:
    return {
        "moves": figures.moves, "offered": figures.offered, "moves_per_second": _finite(figures.moves_per_second),
        "ack_ms": {"p50": _finite(figures.p50_ms), "p90": _finite(figures.p90_ms), "p99": _finite(figures.p99_ms)},
        "cpu_seconds": {"server": figures.server_cpu, "redis": figures.redis_cpu, "load_generator": figures.load_cpu},
        "rss_per_race_kib": _finite(figures.rss_per_race_kib), "refusals": figures.refusals, "events": figures.events,
        "setup_errors": figures.setup_errors, "unsolicited_replies": figures.unsolicited, "server_output": figures.server_output,
        "races": figures.races, "started_races": figures.started_races, "redis_usec_per_call": figures.commandstats,
    }  # fmt: skip


def _finite(value: float) -> float | None:
    """JSON has no NaN: a figure that could not be measured is null."""
    return None if math.isnan(value) else value


def _number(value: float, decimals: int = 1) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:,.{decimals}f}" if abs(value) < 1000 else f"{value:,.0f}"
