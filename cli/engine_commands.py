"""``flowergarden deal`` and ``flowergarden play``: the engine as a tool for people, bots and replay checkers."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.output import EXIT_OK, EXIT_USAGE, CommandError, board_text, emit_json, read_json_input
from shared import Board, EngineError, NotationError, Profile, Rules, card_text, deal, move_text, parse_action, parse_seed
from shared.errors import quote_input

EXIT_CODES_HELP = "Exit codes: 0 done, 1 an illegal move, 2 bad command line or input document."


def seed_argument(text: str) -> int:
    """argparse type for a seed: an unsigned 64-bit integer, decimal or 0x hex."""
    try:
        return parse_seed(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    """The shared ``--profile`` option."""
    parser.add_argument(
        "--profile",
        choices=[profile.value for profile in Profile],
        default=Profile.CLASSIC.value,
        help="rule profile (default: classic; foundation-only allows foundation moves only)",
    )


def register(subparsers: Any) -> None:
    """Add ``deal`` and ``play``."""
    deal_parser = subparsers.add_parser(
        "deal",
        help="show the layout of a seed",
        description="Print the layout that SEED deals: six columns (last card available) and the 16-card bouquet.",
    )
    deal_parser.epilog = "Exit codes: 0 done, 2 bad command line (a seed out of range)."
    deal_parser.add_argument("seed", type=seed_argument, metavar="SEED", help="unsigned 64-bit integer (decimal or 0x hex)")
    add_profile_argument(deal_parser)
    deal_parser.add_argument("--json", action="store_true", help="print JSON instead of a picture")
    deal_parser.set_defaults(handler=run_deal)

    play_parser = subparsers.add_parser(
        "play",
        help="replay moves from stdin and print the position",
        description=(
            'Read {"seed": N, "profile": "classic", "options": {"undo": false, "redeal_once": false}, '
            '"moves": ["5D b>3", "undo", ...]} on stdin, apply the moves and print the position with every legal '
            "move. Only seed is required; it may also be a text (decimal or 0x hex). Stops with an error object "
            '{"error": {"index", "move", "code", "message"}} at the first illegal move.'
        ),
        epilog=EXIT_CODES_HELP + " Notation and the JSON formats: docs/NOTATION.md.",
    )
    play_parser.add_argument("--json", action="store_true", help="print JSON instead of a picture")
    play_parser.set_defaults(handler=run_play)


def run_deal(args: argparse.Namespace) -> int:
    """Print the layout of a seed."""
    layout = deal(args.seed)
    if args.json:
        emit_json(
            {
                "seed": args.seed,
                "profile": args.profile,
                "columns": [[card_text(card) for card in column] for column in layout.columns],
                "bouquet": [card_text(card) for card in layout.bouquet],
            }
        )
    else:
        print(f"Seed {args.seed} ({args.profile})")
        print(board_text(Board(layout.columns, layout.bouquet, seed=args.seed)))
    return EXIT_OK


def board_from_game_document(document: Any) -> tuple[Board, list[Any]]:
    """The fresh board and the move list of a ``play`` input document; CommandError ``bad_input`` otherwise.

    Keys other than seed, profile, options and moves are ignored, so the
    output of ``deal --json`` with a ``moves`` list added is a valid input.
    """
    if not isinstance(document, dict):
        raise CommandError("bad_input", "the input must be a JSON object with seed and moves", exit_code=EXIT_USAGE)
    if "seed" not in document:
        raise CommandError("bad_input", "the input has no seed", exit_code=EXIT_USAGE)
    moves = document.get("moves", [])
    if not isinstance(moves, list):
        raise CommandError("bad_input", f"moves must be a list of texts, got {quote_input(moves)}", exit_code=EXIT_USAGE)
    try:
        seed = parse_seed(document["seed"])
        rules = Rules.from_json(document.get("profile", Profile.CLASSIC.value), document.get("options"))
    except (ValueError, NotationError) as error:
        raise CommandError("bad_input", str(error), exit_code=EXIT_USAGE) from None
    return Board.deal(seed, rules), moves


def run_play(args: argparse.Namespace) -> int:
    """Replay a move list and print the resulting position."""
    board, moves = board_from_game_document(read_json_input(sys.stdin.buffer.read()))
    for index, text in enumerate(moves):
        if not isinstance(text, str):
            raise CommandError("bad_move", f"move {index} is {quote_input(text)}, not a text", index=index, move=None)
        try:
            board.play(parse_action(text))
        except EngineError as error:
            raise CommandError(error.code.value, error.message, index=index, move=text) from None
    if args.json:
        emit_json(board.to_json())
    else:
        print(board_text(board))
        legal = ", ".join(move_text(move) for move in board.legal_moves()) or "(none)"
        print(f"Status: {board.status().value}   undos: {board.undos}   legal: {legal}")
    return EXIT_OK
