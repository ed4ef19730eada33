"""Entry point of ``flowergarden``: each command group lives in its own module with a ``register`` function."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from cli import (
    account_commands,
    admin_command,
    bot_command,
    daily_command,
    db_command,
    engine_commands,
    fairplay_commands,
    lobby_command,
    player_commands,
    race_command,
    serve_command,
    solver_commands,
    tournament_command,
    watch_command,
)
from cli.output import CommandError, JsonAwareParser, report_error
from client.words import set_language

COMMAND_MODULES: tuple[ModuleType, ...] = (
    engine_commands, serve_command, race_command, lobby_command, watch_command, solver_commands, admin_command,
    player_commands, account_commands, bot_command, fairplay_commands, db_command, daily_command,
    tournament_command,
)  # fmt: skip
"""Modules whose ``register(subparsers)`` adds their commands; each sets ``handler`` on its parser."""


def build_parser() -> argparse.ArgumentParser:
    """The full command-line parser."""
    parser = JsonAwareParser(
        prog="flowergarden",
        description=(
            "Flower Garden Race: deal and play positions, solve deals, run and join race servers, watch and replay races, "
            "register accounts, see leaderboards and histories, export and verify race records."
        ),
        epilog="Every command takes --help. With --json, output and errors are JSON objects on stdout.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=JsonAwareParser)
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(arguments)
    except CommandError as error:
        return report_error(error, "--json" in arguments)
    if getattr(args, "lang", None):
        set_language(args.lang)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except CommandError as error:
        return report_error(error, getattr(args, "json", False))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
