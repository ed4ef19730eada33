"""``flowergarden live``, ``watch`` and ``replay``: follow races from a terminal as a spectator."""

from __future__ import annotations

import argparse
from typing import Any

from cli.connected import run_connected
from cli.output import board_text
from cli.race_command import standing_rows
from client import RaceClient
from shared import Board, Profile, Rules, parse_action
from shared.protocol import (
    AttemptEnded,
    Back,
    Countdown,
    Disconnected,
    MoveMade,
    PlayerJoined,
    RaceEvent,
    RaceInfo,
    RaceResult,
    RaceStatus,
    ServerShutdown,
    Started,
    WatcherCount,
)


def register(subparsers: Any) -> None:
    """Add ``live``, ``watch`` and ``replay``."""
    for name, help_text, handler in (
        ("live", "list the races being played now", run_live),
        ("watch", "watch a race live (with the race's spectator delay)", run_watch),
        ("replay", "replay a finished race move by move", run_replay),
    ):
        parser = subparsers.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        parser.add_argument("--server", default="ws://127.0.0.1:8765", help="server URL (default %(default)s)")
        if name != "live":
            parser.add_argument("race", metavar="RACE_ID", help="the race (see 'flowergarden live')")
        if name == "replay":
            parser.add_argument(
                "--speed", type=float, metavar="FACTOR", help="replay at the race's pace times FACTOR (default: all at once)"
            )
        parser.set_defaults(handler=handler)


def run_live(args: argparse.Namespace) -> int:
    """Print the races being played."""
    return run_connected(args, _live)


def run_watch(args: argparse.Namespace) -> int:
    """Follow a race until its result."""
    return run_connected(args, _watch)


def run_replay(args: argparse.Namespace) -> int:
    """Print a finished race's events."""
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
        players = "  vs  ".join(f"{p.name} {p.count}/52 ({p.state})" for p in info.players)
        print(f"{info.race}  {info.status:<9} {players}  watchers: {info.watchers}  delay: {info.settings.spectator_delay} s")


class Spectator:
    """Both players' boards, kept up to date from the events, and one printed line per event."""

    def __init__(self, info: RaceInfo) -> None:
        settings = info.settings
        self.rules = Rules(Profile(settings.profile), undo=settings.undo, redeal_once=settings.redeal_once)
        self.names = {player.slot: player.name for player in info.players}
        self.boards: dict[int, Board] = {}

    def start(self, seed: int, moves: dict[int, list[str]]) -> None:
        """Both boards from the deal and the actions played so far."""
        for slot, actions in moves.items():
            board = Board.deal(seed, self.rules)
            for action in actions:
                board.play(parse_action(action))
            self.boards[slot] = board

    def show_boards(self) -> None:
        for slot, board in sorted(self.boards.items()):
            print(f"--- {self._name(slot)} ({board.foundation_count}/52) ---")
            print(board_text(board))

    def _name(self, slot: int) -> str:
        return self.names.get(slot, f"player {slot + 1}")

    def show(self, event: RaceEvent) -> None:
        """Print the event and apply it to the boards."""
        line = self._line(event)
        if line:
            print(line, flush=True)

    def _line(self, event: RaceEvent) -> str:
        if isinstance(event, PlayerJoined):
            self.names[event.slot] = event.name
            return f"{event.name} joined."
        if isinstance(event, Countdown):
            self.start(event.seed, {0: [], 1: []})
            return f"Deal {event.seed}: the race starts in {max(0, event.start_at - event.at) / 1000:.1f} s."
        if isinstance(event, Started):
            return "Go!"
        if isinstance(event, MoveMade):
            if event.slot in self.boards:
                self.boards[event.slot].play(parse_action(event.move))
            return f"  {self._name(event.slot):<16} {event.move:<10} {event.count:>2}/52  {event.status}"
        if isinstance(event, AttemptEnded):
            return f"{self._name(event.slot)}'s attempt ended ({event.reason}) with {event.count}/52."
        if isinstance(event, Disconnected):
            return f"{self._name(event.slot)} disconnected."
        if isinstance(event, Back):
            return f"{self._name(event.slot)} is back."
        if isinstance(event, WatcherCount):
            return f"({event.count} watching)"
        if isinstance(event, RaceResult):
            winner = "Draw." if event.winner is None else f"{self._name(event.winner)} wins ({event.reason})."
            return "\n".join([winner, *standing_rows(event)])
        return ""


async def _watch(args: argparse.Namespace) -> None:
    client = await _spectator(args.server)
    try:
        watching = await client.watch(args.race)
        spectator = Spectator(watching.race)
        print(f"Watching race {args.race} ({watching.race.status}), {watching.delay_ms / 1000:g} s behind the players.")
        if watching.race.seed is not None:
            spectator.start(watching.race.seed, {board.slot: board.moves for board in watching.boards})
            spectator.show_boards()
        if watching.race.status is RaceStatus.FINISHED:
            print(f"The race is over: 'flowergarden replay {args.race}' shows it move by move.")
            return
        async for item in client.follow():  # reconnects (a load balancer picks a live process) if the server goes
            if isinstance(item, ServerShutdown):
                print("(the server is shutting down; reconnecting ...)", flush=True)
            elif isinstance(item, RaceEvent):
                spectator.show(item)
                if isinstance(item, RaceResult):
                    spectator.show_boards()
                    return
    finally:
        await client.close()


async def _replay(args: argparse.Namespace) -> None:
    client = await _spectator(args.server)
    try:
        first = await client.replay_page(args.race, limit=1)
        spectator = Spectator(first.race)
        print(f"Replay of race {args.race}.")
        async for event in client.replay(args.race, speed=args.speed):
            spectator.show(event)
        spectator.show_boards()
    finally:
        await client.close()
