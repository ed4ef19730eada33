"""``flowergarden solve``, ``hint`` and ``dead``: the solver on a seed or on a position file."""

from __future__ import annotations

import argparse
from typing import Any

from cli import solver_bench
from cli.engine_commands import add_profile_argument, seed_argument
from cli.output import EXIT_OK, EXIT_USAGE, CommandError, board_text, emit_json, read_json_object
from shared import Board, NotationError, Profile, Rules, move_text
from shared.solver import Budget, hint, is_dead, solve

DEFAULT_BUDGET_SECONDS = 10.0
EXIT_CODES_HELP = "Exit codes: 0 answered (any verdict), 2 bad command line, seed or position file."
POSITION_HELP = (
    "the position as JSON, in the format `flowergarden play --json` prints (columns, bouquet, foundations, "
    "profile); '-' reads stdin"
)


def register(subparsers: Any) -> None:
    """Add ``solve``, ``hint``, ``dead`` and ``bench solver``."""
    commands = (
        ("solve", run_solve, "decide whether a deal or position can be won",
         ('Search for a winning line. Prints {"verdict": "solved"|"unsolvable"|"unknown", "moves": [...], '
         '"seconds", "nodes"}: "unsolvable" is a proof, "unknown" means the budget ran out.')),
        ("hint", run_hint, "suggest a next move",
         ('Prints {"verdict", "move", "seconds", "nodes"}: the first move of a winning line when one is found '
         "(verdict solved), else the move toward the position the search rated best.")),
        ("dead", run_dead, "prove whether another card can still reach a foundation",
         ('Prints {"liveness": "dead"|"alive"|"unknown", "seconds", "nodes"}: "dead" is a proof that no sequence '
         "of legal moves brings another card to a foundation.")),
    )
    for name, handler, summary, description in commands:
        parser = subparsers.add_parser(
            name, help=summary, description=description + " The solver searches plain moves: undo and the "
            "redeal house rule are not considered.", epilog=EXIT_CODES_HELP,
        )
        parser.add_argument("seed", nargs="?", type=seed_argument, metavar="SEED", help="deal this seed (decimal or 0x hex)")
        parser.add_argument("--position", metavar="FILE", help=POSITION_HELP)
        add_profile_argument(parser)
        add_budget_arguments(parser)
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.set_defaults(handler=handler)
    solver_bench.register(subparsers)


def add_budget_arguments(parser: argparse.ArgumentParser, default_seconds: float = DEFAULT_BUDGET_SECONDS) -> None:
    """``--budget SECONDS`` and ``--nodes N``."""
    parser.add_argument("--budget", type=positive_seconds, default=default_seconds, metavar="S",
                        help="wall-clock budget in seconds (default %(default)s)")
    parser.add_argument("--nodes", type=positive_int, metavar="N",
                        help="also stop after N expanded positions (makes the answer reproducible)")


def positive_seconds(text: str) -> float:
    """argparse type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("the budget must be a positive number of seconds")
    return value


def positive_int(text: str) -> int:
    """argparse type: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def budget_of(args: argparse.Namespace) -> Budget:
    """The Budget the command line asks for."""
    return Budget(seconds=args.budget, nodes=args.nodes)


def board_of(args: argparse.Namespace) -> Board:
    """The board named by SEED or --position (exactly one of them)."""
    if (args.seed is None) == (args.position is None):
        raise CommandError("bad_usage", "give either SEED or --position FILE", exit_code=EXIT_USAGE)
    if args.seed is not None:
        return Board.deal(args.seed, Rules(Profile(args.profile)))
    document = read_json_object(args.position, "bad_position", "a JSON object (a position)")
    try:
        return Board.from_json(document)
    except NotationError as error:
        raise CommandError(error.code.value, error.message, exit_code=EXIT_USAGE) from None


def run_solve(args: argparse.Namespace) -> int:
    """Solve a deal or position."""
    board = board_of(args)
    if not args.json:  # the board and what to expect at once: a hard deal takes the whole budget
        nodes = "" if args.nodes is None else f" or {args.nodes} positions"
        print(board_text(board))
        print(f"Searching for up to {args.budget:g} s{nodes} (Ctrl-C stops) ...", flush=True)
    result = solve(board, budget_of(args))
    moves = [move_text(move) for move in result.moves]
    if args.json:
        emit_json({"verdict": result.verdict.value, "moves": moves, "seconds": round(result.seconds, 4), "nodes": result.nodes})
    else:
        print(f"Verdict: {result.verdict.value} ({result.nodes} positions, {result.seconds:.3f} s)")
        if moves:
            print(f"Winning line ({len(moves)} moves): {', '.join(moves)}")
    return EXIT_OK


def run_hint(args: argparse.Namespace) -> int:
    """Suggest a move."""
    board = board_of(args)
    result = hint(board, budget_of(args))
    move = None if result.move is None else move_text(result.move)
    if args.json:
        emit_json({"verdict": result.verdict.value, "move": move, "seconds": round(result.seconds, 4), "nodes": result.nodes})
    else:
        print(f"Hint: {move or '(no legal move)'}   verdict: {result.verdict.value} ({result.nodes} positions, {result.seconds:.3f} s)")
    return EXIT_OK


def run_dead(args: argparse.Namespace) -> int:
    """Check whether a position is dead."""
    board = board_of(args)
    result = is_dead(board, budget_of(args))
    if args.json:
        emit_json({"liveness": result.liveness.value, "seconds": round(result.seconds, 4), "nodes": result.nodes})
    else:
        print(f"Liveness: {result.liveness.value} ({result.nodes} positions, {result.seconds:.3f} s)")
    return EXIT_OK
