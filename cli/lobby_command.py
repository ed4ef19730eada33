"""``flowergarden lobby``: the open races of a server, live — a table with keys to join on a terminal, lines otherwise."""

from __future__ import annotations

import argparse
from typing import Any

from cli.connected import add_plain_argument, add_server_argument, display_name, run_connected, wants_full_screen
from cli.output import counted
from cli.player_commands import PASSWORD_ENV, credentials
from cli.terminal_input import discard_typeahead
from cli.tui.texts import creator_label, entry_options
from client import RaceClient
from client.race_session import Credentials, SeatRequest, introduce
from client.race_view import player_label, race_status_words
from shared.protocol import LobbyAdded, LobbyChanged, LobbyEntry, LobbyRemoved, LobbyReset


def register(subparsers: Any) -> None:
    """Add ``lobby``."""
    parser = subparsers.add_parser(
        "lobby",
        help="list a server's open races, live",
        description=(
            "The open public races of a race server, kept up to date. On a terminal: a table; Enter joins the "
            "selected race, c creates one, k quick-matches, b races a practice bot, r resumes your saved race, q quits. With --plain (or a "
            "pipe): the list, then one line per change (Ctrl-C stops)."
        ),
    )
    add_server_argument(parser)
    parser.add_argument("--name", type=display_name, default="player", help="your display name (for races joined from the lobby)")
    parser.add_argument(
        "--login",
        metavar="HANDLE",
        help=f"be in the lobby as your registered account HANDLE: races created, joined or quick-matched from it are "
        f"raced as it (rated ones too); the password from ${PASSWORD_ENV}, else asked for on the terminal",
    )
    parser.add_argument("--once", action="store_true", help="print the list and exit")
    add_plain_argument(parser)
    parser.set_defaults(handler=run_lobby)


def run_lobby(args: argparse.Namespace) -> int:
    """The lobby full screen, or printed (and followed until Ctrl-C)."""
    login = credentials(args.login) if args.login else None  # read before a full-screen app takes the terminal
    if wants_full_screen(args) and not args.once:
        from cli.tui.app import FlowerGardenApp, LobbyStart

        return FlowerGardenApp(args.server, LobbyStart(SeatRequest(name=args.name, login=login))).run_and_exit_code()
    try:
        return run_connected(args, lambda args: watch(args, login))
    finally:
        discard_typeahead()


def entry_line(entry: LobbyEntry, now_ms: int) -> str:
    """One race as a line: id, creator, seats, age and settings."""
    age = max(0, now_ms - entry.created_at) // 1000
    return f"{entry.race:<12} {creator_label(entry):<24} {entry.seats}/2 {race_status_words(entry.status):<23} {age:>5} s  {entry_options(entry)}"


async def watch(args: argparse.Namespace, login: Credentials | None = None) -> None:
    """Connect (logged in to ``login``, if given), print the snapshot and follow the changes."""
    async with await RaceClient.connect(args.server) as client:
        welcome = await introduce(client, args.name, login)
        snapshot = await client.watch_lobby()
        who = f" (you are {player_label(welcome.name, welcome.account, welcome.bot)})" if login is not None else ""
        print(f"{counted(len(snapshot.races), 'open race')} on {args.server}{who}")
        for entry in snapshot.races:
            print(entry_line(entry, welcome.server_time))
        if args.once:
            return
        async for event in client.events():
            if isinstance(event, LobbyAdded):
                print("+ " + entry_line(event.entry, event.at), flush=True)
            elif isinstance(event, LobbyChanged):
                print("~ " + entry_line(event.entry, event.at), flush=True)
            elif isinstance(event, LobbyRemoved):
                print(f"- {event.race}", flush=True)
            elif isinstance(event, LobbyReset):
                print(f"{counted(len(event.races), 'open race')} (list refreshed)")
                for entry in event.races:
                    print(entry_line(entry, event.at), flush=True)
