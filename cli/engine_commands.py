"""``flowergarden deal`` and ``flowergarden play``: the engine as a tool for people, bots and replay checkers."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.output import EXIT_OK, EXIT_USAGE, CommandError, emit_json, read_json_input
from shared import Board, EngineError, Profile, Rules, action_text, card_text, deal, parse_action, render
from shared.deal import MASK64


def seed_argument(text: str) -> int:
    """argparse type for a seed: an unsigned 64-bit integer."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value <= MASK64:
        raise argparse.ArgumentTypeError(f"a seed is from 0 to {MASK64}")
    return value


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
            "move. Stops with an error object at the first illegal move (exit 1)."
        ),
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
        print(render(Board(layout.columns, layout.bouquet, seed=args.seed)))
    return EXIT_OK


def board_from_game_document(document: Any) -> tuple[Board, list[Any]]:
    """The fresh board and the move list of a ``play`` input document; CommandError ``bad_input`` otherwise."""
    if not isinstance(document, dict):
        raise CommandError("bad_input", "the input must be a JSON object with seed and moves", exit_code=EXIT_USAGE)
    seed = document.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MASK64:
        raise CommandError("bad_input", f"seed must be an integer from 0 to {MASK64}", exit_code=EXIT_USAGE)
    options = document.get("options", {})
    moves = document.get("moves", [])
    if not isinstance(options, dict) or not isinstance(moves, list):
        raise CommandError("bad_input", "options must be an object and moves a list", exit_code=EXIT_USAGE)
    try:
        profile = Profile(document.get("profile", Profile.CLASSIC.value))
    except ValueError:
        choices = ", ".join(p.value for p in Profile)
        raise CommandError("bad_input", f"profile must be one of {choices}", exit_code=EXIT_USAGE) from None
    for name in ("undo", "redeal_once"):
        if not isinstance(options.get(name, False), bool):
            raise CommandError("bad_input", f"options.{name} must be true or false", exit_code=EXIT_USAGE)
    rules = Rules(profile, undo=options.get("undo", False), redeal_once=options.get("redeal_once", False))
    return Board.deal(seed, rules), moves


def run_play(args: argparse.Namespace) -> int:
    """Replay a move list and print the resulting position."""
    board, moves = board_from_game_document(read_json_input(sys.stdin.read()))
    for index, text in enumerate(moves):
        if not isinstance(text, str):
            raise CommandError("bad_move", f"move {index} is not a string", index=index, move=text)
        try:
            board.play(parse_action(text))
        except EngineError as error:
            raise CommandError(error.code.value, error.message, index=index, move=text) from None
    if args.json:
        emit_json(board.to_json())
    else:
        print(render(board))
        legal = ", ".join(action_text(move) for move in board.legal_moves()) or "(none)"
        print(f"Status: {board.status().value}   undos: {board.undos}   legal: {legal}")
    return EXIT_OK
