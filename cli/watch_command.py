"""``flowergarden live``, ``watch`` and ``replay``: follow races from a terminal as a spectator.

On a terminal ``watch`` and ``replay`` are full screen (both boards, move by move);
``--plain`` (or a pipe) prints one line per event and both boards at the end.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.connected import add_plain_argument, add_server_argument, positive_speed, run_connected, wants_full_screen
from cli.output import board_text
from cli.terminal_input import discard_typeahead
from client import RaceClient
from client.race_view import (
    RaceView,
    attempt_ending_words,
    player_label,
    race_status_words,
    watched_status_note,
    watched_status_words,
)
from shared.protocol import MoveMade, RaceEvent, RaceResult, RaceStatus, ServerShutdown


def register(subparsers: Any) -> None:
    """Add ``live``, ``watch`` and ``replay``."""
    for name, help_text, handler in (
        ("live", "list the races being played now", run_live),
        ("watch", "watch a race live (with the race's spectator delay)", run_watch),
        ("replay", "replay a finished race move by move", run_replay),
    ):
        description = help_text[0].upper() + help_text[1:] + "."
        if name == "watch":
            description += " Full screen on a terminal: both boards, updated move by move; q quits."
        if name == "replay":
            description += (
                " Full screen on a terminal: right/left step through the events, space plays them at the race's "
                "pace (+/- change the speed), q quits."
            )
        parser = subparsers.add_parser(name, help=help_text, description=description)
        add_server_argument(parser)
        if name != "live":
            where = "'flowergarden live'" if name == "watch" else "'flowergarden history HANDLE' or the id shown at its result"
            parser.add_argument("race", metavar="RACE_ID", help=f"the race (see {where})")
            add_plain_argument(parser)
        if name == "replay":
            parser.add_argument(
                "--speed",
                type=positive_speed,
                metavar="FACTOR",
                help="play at the race's pace times FACTOR (line mode default: all at once; full screen: start paused)",
            )
        parser.set_defaults(handler=handler)


def run_live(args: argparse.Namespace) -> int:
    """Print the races being played."""
    return run_connected(args, _live)


def run_watch(args: argparse.Namespace) -> int:
    """Follow a race until its result."""
    if wants_full_screen(args):
        from cli.tui.app import FlowerGardenApp, WatchStart

        return FlowerGardenApp(args.server, WatchStart(args.race)).run_and_exit_code()
    try:
        return run_connected(args, _watch)
    finally:
        discard_typeahead()


def run_replay(args: argparse.Namespace) -> int:
    """Show a finished race's events."""
    if wants_full_screen(args):
        from cli.tui.app import FlowerGardenApp, ReplayStart

        return FlowerGardenApp(args.server, ReplayStart(args.race, args.speed)).run_and_exit_code()
    return run_connected(args, _replay)


async def _spectator(url: str) -> RaceClient:
    client = await RaceClient.connect(url)
    await client.hello("spectator")
    return client


async def _live(args: argparse.Namespace) -> None:
    client = await _spectator(args.server)
    try:
        races = await client.live_races(limit=100)
    finally:
        await client.close()
    if not races:
        print("No race is being played.")
    for info in races:
        players = "  vs  ".join(f"{player_label(p.name, p.account, p.bot)} {p.count}/52 ({attempt_ending_words(p.state)})" for p in info.players)
        print(f"{info.race}  {race_status_words(info.status):<8} {players}  watchers: {info.watchers}  delay: {info.settings.spectator_delay} s")


def print_boards(view: RaceView) -> None:
    """Both boards of a spectator's view, each under its player's name and count."""
    for slot, board in sorted(view.boards.items()):
        print(f"--- {view.name(slot)} ({board.foundation_count}/52) ---")
        print(board_text(board))


def print_event(view: RaceView, event: RaceEvent) -> None:
    """Apply ``event`` and print it: a move line per move, a sentence for the rest, standings with the result."""
    line = view.apply(event)
    if isinstance(event, MoveMade):
        line = f"  {view.name(event.slot):<24} {event.move:<10} {event.count:>2}/52  {event.status}"
    if line:
        print(line, flush=True)
    if isinstance(event, RaceResult):
        for standing in view.standing_lines():
            print("  " + standing)


async def _watch(args: argparse.Namespace) -> None:
    client = await _spectator(args.server)
    try:
        watching = await client.watch(args.race)
        view = RaceView.of_watching(watching)
        status = watched_status_words(watching.race.status, watching.status_now, watching.delay_ms)
        print(f"Watching race {args.race} ({status}), {watching.delay_ms / 1000:g} s behind the players.")
        note = watched_status_note(watching.race.status, watching.status_now, watching.delay_ms)
        if note:
            print(note)
        if view.layout is not None:
            print(view.deal_note())
            print_boards(view)
        if view.status is RaceStatus.FINISHED:
            print(f"The race is over: 'flowergarden replay {args.race}' shows it move by move.")
            return
        async for item in client.follow():  # reconnects (a load balancer picks a live process) if the server goes
            if isinstance(item, ServerShutdown):
                print("(the server is shutting down; reconnecting ...)", flush=True)
            elif isinstance(item, RaceEvent):
                print_event(view, item)
                if isinstance(item, RaceResult):
                    print_boards(view)
                    return
    finally:
        await client.close()


async def _replay(args: argparse.Namespace) -> None:
    client = await _spectator(args.server)
    try:
        first = await client.replay_page(args.race, limit=1)
        view = RaceView.before_start(first.race)
        print(f"Replay of race {args.race}.")
        async for event in client.replay(args.race, speed=args.speed):
            print_event(view, event)
        print_boards(view)
    finally:
        await client.close()
