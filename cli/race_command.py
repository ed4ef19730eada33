"""``flowergarden race``: race a person from the terminal — the board in text, moves typed in notation."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from cli.connected import run_connected
from cli.engine_commands import add_profile_argument, seed_argument
from cli.output import board_text
from client import ConnectionLost, RaceClient, Resumed, ServerError, Unsolicited
from shared import Board, Profile, Rules, action_text, parse_action
from shared.protocol import (
    AttemptEnded,
    Back,
    Countdown,
    Disconnected,
    LobbyEvent,
    PlayerJoined,
    PlayerLeft,
    Progress,
    Queued,
    RaceClosed,
    RaceEvent,
    RaceResult,
    RaceSettings,
    Seated,
    ServerShutdown,
    Spectators,
    Started,
)

HELP = """Type a move in notation (5D b>3, KS 2>f, 9H 4>1), or:
  moves    list your legal moves        undo     take back your last move (if the race allows it)
  redeal   the one-time redeal (if allowed)   board    show your board again
  stuck    declare that you cannot progress   resign   end your attempt (your count still counts)
  help     this text"""


def register(subparsers: Any) -> None:
    """Add ``race``."""
    parser = subparsers.add_parser(
        "race",
        help="race someone from the terminal",
        description=(
            "Create a race (and tell your opponent its id or invite code), join one, or be paired by quick match; "
            "then play it from the terminal."
        ),
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--server", default="ws://127.0.0.1:8765", help="server URL (default %(default)s)")
    parser.add_argument("--name", default="player", help="your display name")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--join", metavar="RACE_ID", help="join this race instead of creating one")
    how.add_argument("--invite", metavar="CODE", help="join the private race of this invite code")
    how.add_argument("--quick", action="store_true", help="race the next player asking for the same settings (quick match)")
    parser.add_argument("--seed", type=seed_argument, help="deal this seed (created races only; default random)")
    add_profile_argument(parser)
    parser.add_argument("--undo", action="store_true", help="allow undo (counted)")
    parser.add_argument("--redeal-once", action="store_true", help="allow the one-time redeal house rule")
    parser.add_argument("--time-limit", type=int, metavar="SECONDS", help="end attempts still running after this long")
    parser.add_argument("--solvable", action="store_true", help="deal only a deal the server's solver proved winnable")
    parser.add_argument("--private", action="store_true", help="do not list the race in the lobby; share its invite code")
    parser.add_argument(
        "--spectators",
        choices=[choice.value for choice in Spectators],
        help="who may watch: anyone (listed among the live races), link (whoever has the race id) or nobody "
        "(default: link for a private race, anyone otherwise)",
    )
    parser.set_defaults(handler=run_race)


def standing_rows(result: RaceResult) -> list[str]:
    """One line per player of a result: name, count, how the attempt ended, time, moves and undos."""
    return [
        f"  {standing.name:<16} {standing.count:>2}/52  {standing.ended:<10} {standing.time_ms / 1000:7.1f} s  "
        f"{standing.moves} moves, {standing.undos} undos"
        for standing in result.players
    ]


def run_race(args: argparse.Namespace) -> int:
    """Play one race interactively."""
    return run_connected(args, lambda args: TerminalRace(args).run())


class TerminalRace:
    """One player's race in a terminal: typed lines become requests, events become printed lines."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.race_id = ""
        self.slot = 0
        self.board: Board | None = None
        self.names: dict[int, str] = {}
        self.result: RaceResult | None = None
        self.closed = False
        self.rules = Rules()

    async def run(self) -> None:
        client = await RaceClient.connect(self.args.server)
        try:
            welcome = await client.hello(self.args.name)
            await self._seat(client)
            print(f"You are {welcome.name}. Type 'help' for commands.", flush=True)
            lines = asyncio.create_task(self._read_lines(client))
            try:
                async for event in client.follow():  # survives a dropped connection or a server shutdown
                    self._show(event)
                    if self.result is not None or self.closed:
                        break
            finally:
                lines.cancel()
            if self.result is None and not self.closed:
                print("The connection closed before the race ended.")
        finally:
            await client.close()

    async def _seat(self, client: RaceClient) -> None:
        args = self.args
        settings = RaceSettings(
            profile=args.profile,
            undo=args.undo,
            redeal_once=args.redeal_once,
            time_limit=args.time_limit,
            seed=args.seed,
            solvable_only=args.solvable,
            private=args.private,
            spectators=None if args.spectators is None else Spectators(args.spectators),
        )
        seated: Seated | Queued
        if args.join:
            seated = await client.join(args.join)
        elif args.invite:
            seated = await client.join_invite(args.invite)
        elif args.quick:
            seated = await client.quick_match(settings)
            if isinstance(seated, Queued):
                print("Waiting for a player asking for the same settings ...", flush=True)
        else:
            seated = await client.create(settings)
            print(f"Race {seated.race.race} created. Your opponent joins with:")
            if seated.race.invite is not None:
                print(f"  flowergarden race --server {args.server} --invite {seated.race.invite}")
            else:
                print(f"  flowergarden race --server {args.server} --join {seated.race.race}")
            print("Waiting for an opponent ...", flush=True)
        self.race_id, self.slot = seated.race.race, seated.slot if isinstance(seated, Seated) else 0
        settings = seated.race.settings
        self.rules = Rules(Profile(settings.profile), undo=settings.undo, redeal_once=settings.redeal_once)

    def _show(self, event: RaceEvent | LobbyEvent | Unsolicited | ServerShutdown | Resumed) -> None:
        if isinstance(event, Unsolicited):
            print(f"server: [{event.error.code}] {event.error.message}")
        elif isinstance(event, ServerShutdown):
            print("The server is shutting down; reconnecting ...")
        elif isinstance(event, Resumed):
            self._resume(event)
        elif isinstance(event, Disconnected) and event.slot != self.slot:
            print(f"{self._name(event.slot)} disconnected.")
        elif isinstance(event, Back) and event.slot != self.slot:
            print(f"{self._name(event.slot)} is back.")
        elif isinstance(event, PlayerLeft) and event.slot != self.slot:
            print(f"{self._name(event.slot)} left before the start.")
        elif isinstance(event, RaceClosed):
            self.closed = True
            print(f"The race was closed before it started ({event.reason}).")
        elif isinstance(event, PlayerJoined):
            self.names[event.slot] = event.name
            if event.slot != self.slot:
                print(f"{event.name} joined.")
        elif isinstance(event, Countdown):
            self.board = Board.deal(event.seed, self.rules)
            seconds = max(0.0, (event.start_at - event.at) / 1000)
            limit = "" if event.deadline is None else f", time limit {(event.deadline - event.start_at) // 1000} s"
            print(f"Deal {event.seed}; the race starts in {seconds:.1f} s{limit}.")
            print(board_text(self.board))
        elif isinstance(event, Started):
            print("Go!", flush=True)
        elif isinstance(event, Progress) and event.slot != self.slot:
            print(f"  [{self._name(event.slot)}: {event.count}/52 on foundations, {event.left} left, {event.status}]")
        elif isinstance(event, AttemptEnded):
            who = "Your" if event.slot == self.slot else f"{self._name(event.slot)}'s"
            print(f"{who} attempt ended ({event.reason}) with {event.count}/52.")
        elif isinstance(event, RaceResult):
            self.result = event
            print(self._result_text(event))
        sys.stdout.flush()

    def _resume(self, resumed: Resumed) -> None:
        """Back on a (new) connection: the board is rebuilt from the actions the server stored."""
        synced = resumed.synced.get(self.race_id)
        if synced is None or synced.race.seed is None:
            print("Reconnected.")
            return
        actions = list(synced.moves)
        resent = resumed.resent.get(self.race_id)
        if resent is not None and not resent.duplicate:
            actions.append(resent.move)
        self.board = Board.deal(synced.race.seed, self.rules)
        for action in actions:
            self.board.play(parse_action(action))
        print("Reconnected.")
        print(board_text(self.board))

    def _name(self, slot: int) -> str:
        return self.names.get(slot, f"player {slot + 1}")

    def _result_text(self, result: RaceResult) -> str:
        if result.winner is None:
            headline = "Draw."
        elif result.winner == self.slot:
            headline = f"You win ({result.reason})!"
        else:
            headline = f"{self._name(result.winner)} wins ({result.reason})."
        return "\n".join([headline, *standing_rows(result)])

    async def _read_lines(self, client: RaceClient) -> None:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                return
            await self._command(client, line.strip())

    async def _command(self, client: RaceClient, text: str) -> None:
        if not text:
            return
        word = text.lower()
        try:
            if word == "help":
                print(HELP)
            elif word == "board":
                print(board_text(self.board) if self.board else "No deal yet.")
            elif word == "moves":
                moves = self.board.legal_moves() if self.board else []
                print(", ".join(action_text(move) for move in moves) or "(none: declare 'stuck' or 'resign')")
            elif word == "resign":
                await client.resign(self.race_id)
            elif word == "stuck":
                await client.stuck(self.race_id)
            elif self.board is None:
                print("No deal yet: moves are taken once the countdown shows the deal.")
            else:
                reply = await client.move(self.race_id, text)
                self.board.play(parse_action(reply.move))
                print(board_text(self.board))
                print(f"{reply.count}/52 on foundations, {reply.left} left ({reply.status}).")
        except ServerError as error:
            print(f"refused: [{error.code}] {error.error.message}")
        except ConnectionLost:
            print("The connection dropped; reconnecting ... (a move in flight is resent once)")
        sys.stdout.flush()
