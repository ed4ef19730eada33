"""``flowergarden bench solver``: run the solver on a range of seeds and print decision rates, winnability and timing."""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import resource
import sys
import time
from collections.abc import Sequence
from typing import Any

from cli.engine_commands import add_profile_argument
from cli.output import EXIT_OK, EXIT_USAGE, CommandError, emit_json
from shared import Board, Profile, Rules, parse_seed
from shared.solver import Budget, Verdict, solve
from shared.solver import search as solver_search
from shared.solver.difficulty import Difficulty, difficulty_of

Z_95 = 1.959963984540054
BAR_WIDTH = 30


def register(subparsers: Any) -> None:
    """Add ``bench solver`` and ``bench load``."""
    bench = subparsers.add_parser("bench", help="benchmarks", description="Benchmarks that print figures.")
    kinds = bench.add_subparsers(dest="bench", required=True, metavar="KIND")
    register_load(kinds)
    parser = kinds.add_parser(
        "solver",
        help="solve a range of seeds and report rates, winnability and times",
        description=(
            "Solve every seed of A..B (inclusive) with the given budget, on --jobs processes, showing progress on "
            "stderr. Prints decks run; % solved, % proven unsolvable, % unknown; winnability with a 95 % Wilson "
            "interval (and the interval counting unknowns as losses and as wins); median, p90, p99 and max time; "
            "and the peak memory of one solver process."
        ),
    )
    parser.add_argument("--seeds", required=True, type=seed_range, metavar="A..B", help="inclusive range of seeds")
    parser.add_argument("--budget", type=float, default=10.0, metavar="S", help="seconds per deal (default %(default)s)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N", help="processes (default: all cores)")
    add_profile_argument(parser)
    parser.add_argument(
        "--engine", choices=["auto", "python"], default="auto",
        help="auto: the compiled search when it was built, else Python; python: always the pure-Python reference",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (with the unsolvable and unknown seeds)")
    parser.set_defaults(handler=run_bench)


def register_load(kinds: Any) -> None:
    """Add ``bench load`` from the checkout's ``benchmarks/load`` package; where the package is not there (an
    installed copy carries no load generator) the command says so and where to find it."""
    try:
        from benchmarks.load import command
    except ModuleNotFoundError as error:
        if error.name not in ("benchmarks", "benchmarks.load", "benchmarks.load.command"):
            raise
    else:
        command.register(kinds)
        return
    parser = kinds.add_parser(
        "load", help="load the race server and the floor server (needs a source checkout)",
        description="The load benchmark lives in the source checkout's benchmarks/load, which is not installed here. "
        "Run it from a checkout: python3 -m cli bench load --help",
        prefix_chars="+", add_help=False,  # every option is the missing benchmark's: taken as they come, then refused
    )
    parser.add_argument("options", nargs="*", help="the load benchmark's options")
    parser.set_defaults(handler=_load_not_installed)


def _load_not_installed(args: argparse.Namespace) -> int:
    args.json = "--json" in args.options
    raise CommandError(
        "not_installed", "the load benchmark is part of the source checkout (benchmarks/load), not of this installation: "
        "run python3 -m cli bench load from a checkout",
    )


def seed_range(text: str) -> tuple[int, int]:
    """argparse type for ``A..B``: first and last seed, inclusive."""
    first, separator, last = text.partition("..")
    try:
        if not separator:
            raise ValueError(f"{text!r} is not a range like 1..1000")
        low, high = parse_seed(first), parse_seed(last)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if high < low:
        raise argparse.ArgumentTypeError(f"the range {text!r} is empty")
    return low, high


def engine_name(choice: str) -> str:
    """The search a run uses: "native" (compiled) or "python"."""
    return "native" if choice == "auto" and solver_search.native_available() else "python"


def solve_seed(task: tuple[int, str, float, str]) -> tuple[int, str, float, int, int, str]:
    """Solve one seed in a worker: (seed, verdict, seconds, nodes, peak RSS of this process in KiB)."""
    seed, profile, seconds, engine = task
    solver_search.PREFER_NATIVE = engine == "native"
    result = solve(Board.deal(seed, Rules(Profile(profile))), Budget(seconds=seconds))
    tier = difficulty_of(result).value
    return seed, result.verdict.value, result.seconds, result.nodes, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, tier


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion (0, 1 when there are no trials)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = Z_95 * Z_95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z_95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(results: list[tuple[int, str, float, int, int, str]], budget: float, profile: str, jobs: int, engine: str) -> dict[str, Any]:
    """The benchmark report from per-seed results."""
    decks = len(results)
    count = {verdict.value: sum(1 for r in results if r[1] == verdict.value) for verdict in Verdict}
    seeds = sorted(r[0] for r in results)
    return {
        "seeds": f"{seeds[0]}..{seeds[-1]}" if seeds else "",
        "profile": profile,
        "engine": engine,
        "budget_seconds": budget,
        "jobs": jobs,
        "decks": decks,
        "solved": count["solved"],
        "unsolvable": count["unsolvable"],
        "unknown": count["unknown"],
        "percent": {name: round(100 * value / decks, 2) if decks else 0.0 for name, value in count.items()},
        "winnability": _winnability(count, decks),
        "seconds": _seconds(results),
        "peak_memory_mib": round(max((r[4] for r in results), default=0) / 1024, 1),
        "difficulty": {tier.value: sum(1 for r in results if r[5] == tier.value) for tier in Difficulty},
        "unsolvable_seeds": _seeds_with(results, "unsolvable"),
        "unknown_seeds": _seeds_with(results, "unknown"),
    }


def _seeds_with(results: list[tuple[int, str, float, int, int, str]], verdict: str) -> list[int]:
    """The seeds whose verdict is ``verdict``, ascending."""
    return sorted(r[0] for r in results if r[1] == verdict)


def _winnability(count: dict[str, int], decks: int) -> dict[str, Any]:
    """The share of winnable deals among the decided ones, with its Wilson intervals (unknowns left out, and
    counted both ways)."""
    solved, unknown = count["solved"], count["unknown"]
    decided = solved + count["unsolvable"]
    low, high = wilson(solved, decided)
    pessimistic, _ = wilson(solved, decks)
    _, optimistic = wilson(solved + unknown, decks)
    return {
        "estimate": round(solved / decided, 4) if decided else None,
        "wilson95_decided": [round(low, 4), round(high, 4)],
        "wilson95_unknowns_both_ways": [round(pessimistic, 4), round(optimistic, 4)],
    }


def _seconds(results: list[tuple[int, str, float, int, int, str]]) -> dict[str, float]:
    """Percentiles of the solve time, of all seeds and of the solved ones."""
    times = sorted(r[2] for r in results)
    solved_times = sorted(r[2] for r in results if r[1] == "solved")
    return {
        "median": round(percentile(times, 0.5), 4),
        "p90": round(percentile(times, 0.9), 4),
        "p99": round(percentile(times, 0.99), 4),
        "max": round(times[-1], 4) if times else 0.0,
        "median_solved": round(percentile(solved_times, 0.5), 4),
    }


def show_progress(done: int, total: int, counts: dict[str, int], started: float) -> None:
    """Redraw the progress bar on stderr (a line per tenth when stderr is not a terminal)."""
    elapsed = time.perf_counter() - started
    eta = elapsed / done * (total - done) if done else 0.0
    filled = BAR_WIDTH * done // total
    line = (
        f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}  solved {counts['solved']}  "
        f"unsolvable {counts['unsolvable']}  unknown {counts['unknown']}  {elapsed:.0f}s elapsed, ~{eta:.0f}s left"
    )
    if sys.stderr.isatty():
        sys.stderr.write("\r" + line + ("\n" if done == total else ""))
    elif done == total or done * 10 // total != (done - 1) * 10 // total:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


def run_bench(args: argparse.Namespace) -> int:
    """Run the benchmark and print its report."""
    if not 0 < args.budget < float("inf"):
        raise CommandError("bad_usage", "--budget must be a positive number of seconds", exit_code=EXIT_USAGE)
    if args.jobs < 1:
        raise CommandError("bad_usage", "--jobs must be at least 1", exit_code=EXIT_USAGE)
    low, high = args.seeds
    engine = engine_name(args.engine)
    tasks = [(seed, args.profile, args.budget, engine) for seed in range(low, high + 1)]
    counts = {verdict.value: 0 for verdict in Verdict}
    results: list[tuple[int, str, float, int, int, str]] = []
    started = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        for result in pool.imap_unordered(solve_seed, tasks, chunksize=1):
            results.append(result)
            counts[result[1]] += 1
            show_progress(len(results), len(tasks), counts, started)
    report = summarize(results, args.budget, args.profile, args.jobs, engine)
    report["wall_seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        emit_json(report)
    else:
        print(format_report(report))
    return EXIT_OK


def format_report(report: dict[str, Any]) -> str:
    """The report as text for people."""
    win = report["winnability"]
    seconds = report["seconds"]
    estimate = "n/a" if win["estimate"] is None else f"{100 * win['estimate']:.1f} %"
    low, high = win["wilson95_decided"]
    worst, best = win["wilson95_unknowns_both_ways"]
    percent = report["percent"]
    return "\n".join([
        (f"Seeds {report['seeds']} ({report['profile']}, {report['engine']} search), budget {report['budget_seconds']} s, "
         f"{report['jobs']} jobs, {report['wall_seconds']} s wall"),
        f"Decks run:        {report['decks']}",
        f"Solved:           {report['solved']} ({percent['solved']} %)",
        f"Unsolvable:       {report['unsolvable']} ({percent['unsolvable']} %, proved)",
        f"Unknown:          {report['unknown']} ({percent['unknown']} %)",
        (f"Winnability:      {estimate} of decided deals, 95 % CI {100 * low:.1f}–{100 * high:.1f} % "
        f"(unknowns as losses/wins: {100 * worst:.1f}–{100 * best:.1f} %)"),
        (f"Time per deal:    median {seconds['median']:.3f} s, p90 {seconds['p90']:.3f} s, p99 {seconds['p99']:.3f} s, "
        f"max {seconds['max']:.3f} s (solved median {seconds['median_solved']:.3f} s)"),
        f"Peak memory:      {report['peak_memory_mib']} MiB (largest solver process)",
        "Difficulty:       " + ", ".join(f"{tier} {count}" for tier, count in report["difficulty"].items()),
    ])
