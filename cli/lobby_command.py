"""``flowergarden lobby``: the open races of a server, and (unless ``--once``) every change of the list as it happens."""

from __future__ import annotations

import argparse
from typing import Any

from cli.connected import run_connected
from client import RaceClient
from shared.protocol import LobbyAdded, LobbyChanged, LobbyEntry, LobbyRemoved, LobbyReset


def register(subparsers: Any) -> None:
    """Add ``lobby``."""
    parser = subparsers.add_parser(
        "lobby",
        help="list a server's open races, live",
        description="List the open public races of a race server, then print each change (Ctrl-C stops).",
    )
    parser.add_argument("--server", default="ws://127.0.0.1:8765", help="server URL (default %(default)s)")
    parser.add_argument("--name", default="lobby watcher", help="display name to say hello with")
    parser.add_argument("--once", action="store_true", help="print the list and exit")
    parser.set_defaults(handler=run_lobby)


def run_lobby(args: argparse.Namespace) -> int:
    """Print the lobby (and follow it until Ctrl-C)."""
    return run_connected(args, watch)


def entry_line(entry: LobbyEntry, now_ms: int) -> str:
    """One race as a line: id, creator, seats, age and settings."""
    settings = entry.settings
    options = [settings.profile]
    options += [name for name, on in (("undo", settings.undo), ("redeal", settings.redeal_once), ("solvable", settings.solvable_only)) if on]
    if settings.time_limit:
        options.append(f"{settings.time_limit} s")
    age = max(0, now_ms - entry.created_at) // 1000
    return f"{entry.race:<12} {entry.creator:<16} {entry.seats}/2 {entry.status:<9} {age:>5} s  {', '.join(options)}"


async def watch(args: argparse.Namespace) -> None:
    """Connect, print the snapshot and follow the changes."""
    async with await RaceClient.connect(args.server) as client:
        welcome = await client.hello(args.name)
        snapshot = await client.watch_lobby()
        print(f"{len(snapshot.races)} open race(s) on {args.server}")
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
                print(f"{len(event.races)} open race(s) (list refreshed)")
                for entry in event.races:
                    print(entry_line(entry, event.at), flush=True)
