"""Arena tournaments from the terminal (docs/COMMUNITY.md "Arena tournaments"): ``flowergarden tournament create``
opens one, ``tournament join`` plays in one, race after race in line mode, and ``tournament watch`` follows its
standings.

They use the arena requests of docs/PROTOCOL.md ("Arena tournaments"): ``arena_create``, ``arena_join`` (then
``arena_paired`` and ``arena_standings`` are pushed), ``arena_pause`` and ``arena_standings_request``. The server has
no request listing arenas yet, so there is no ``tournament list``: an arena is named by its id (``create`` prints it,
the ``/arena/<id>`` page shows it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from typing import Any

from cli.connected import run_connected
from cli.output import EXIT_LEFT, EXIT_OK, CommandError, counted, emit_json
from cli.player_commands import PASSWORD_ENV, add_common_arguments, logged_in
from cli.race_command import PlainRace
from cli.terminal_input import StdinLines, discard_typeahead
from client import ConnectionLost, RaceClient, ServerError
from client.race_client import Incoming
from client.race_session import RaceSession, SeatRequest
from client.race_view import RaceView
from client.sessions import SessionStore
from shared.protocol import ArenaInfo, ArenaLine, ArenaPaired, ArenaStandings, as_map

ACTIONS = ("create", "join", "watch")
WATCH_EVERY = 2.0
"""Seconds between two standings requests of ``tournament watch`` (the server pushes them to players only)."""
SHOWN_LINES = 10
"""How many lines of the standings are printed (the player's own line is added when it is further down)."""
CLOCK_MARGIN_MS = 2_000
"""How long after the arena's end (by the server's clock as estimated at the hello) the last pairing is awaited."""
LAST_RACE_MARGIN_MS = 15_000
"""Past the end and a race's time limit, how long ``watch`` waits for the last race's countdown and booking."""


def register(subparsers: Any) -> None:
    """Add ``tournament``."""
    parser = subparsers.add_parser(
        "tournament",
        help="arena tournaments: create one, play in one race after race, or watch its standings",
        description=(
            "Arena tournaments (docs/COMMUNITY.md). `tournament create NAME --login HANDLE` opens an arena that starts "
            "now and prints its id. `tournament join ARENA --login HANDLE` plays in it: you are paired with another free "
            "player within seconds, play the race in line mode (the moves of 'flowergarden race --plain': '5D b>3', "
            "'5D 3', a card alone, moves, undo, resign, help ...), then are paired again, until the arena's clock runs "
            "out; the standings are printed as they change. End of input or Ctrl-C pauses you in the arena (join again "
            "to come back). `tournament watch ARENA` prints the standings as they change until the arena is over. "
            f"The password comes from ${PASSWORD_ENV} or is asked on the terminal (stdin carries the moves)."
        ),
        epilog=(
            "Exit codes: 0 the arena is over (join: you played to its end; watch: it ended), 5 join: you left "
            "(end of input) and are paused, 130 interrupted (Ctrl-C; paused too), 1 refused by the server (an unknown "
            "arena, an arena that is over, a guest), 2 usage."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("target", metavar="NAME_OR_ARENA", help="create: the arena's name; join, watch: the arena's id")
    parser.add_argument("--login", metavar="HANDLE", help="your registered account (create and join need one)")
    parser.add_argument("--minutes", type=int, default=20, metavar="N", help="create: minutes of pairing, 1-180 (default 20)")
    parser.add_argument("--time-limit", type=int, default=300, metavar="SECONDS", help="create: each race's time limit, 10-3600 s (default 300)")
    parser.add_argument("--once", action="store_true", help="watch: print the standings once and exit")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if args.action in ("create", "join") and not args.login:
        raise CommandError("account_required", f"tournament {args.action} needs --login HANDLE: arenas are for registered players", exit_code=2)
    try:
        return run_connected(args, _tournament)
    finally:
        discard_typeahead()


async def _tournament(args: argparse.Namespace) -> int:
    client = await logged_in(args.server, args.login) if args.login else await RaceClient.connect(args.server)
    async with client:
        if client.session is None:
            await client.hello("spectator")
        if args.action == "create":
            return await _create(client, args)
        if args.action == "join":
            return await ArenaPlayer(client, args.target, as_json=args.json).run()
        return await _watch(client, args.target, as_json=args.json, once=args.once)


async def _create(client: RaceClient, args: argparse.Namespace) -> int:
    reply = await client.arena_create(args.target, minutes=args.minutes, time_limit=args.time_limit)
    if args.json:
        emit_json(as_map(reply))
        return EXIT_OK
    info = reply.arena
    print(f"Arena {info.arena} \"{info.name}\": {(info.end_at - info.start_at) // 60_000} min, races of {info.time_limit} s.")
    print(f"  play:  flowergarden tournament join {info.arena} --server {client.url} --login HANDLE")
    print(f"  watch: flowergarden tournament watch {info.arena} --server {client.url}")
    return EXIT_OK


def standings_lines(lines: list[ArenaLine], own: str | None = None) -> list[str]:
    """The standings as printed: the top :data:`SHOWN_LINES`, and ``own``'s line (a handle) when it is further down;
    a flame marks a streak (the next result counts double)."""
    shown = lines[:SHOWN_LINES] + [line for line in lines[SHOWN_LINES:] if own is not None and line.handle.lower() == own.lower()]
    if not shown:
        return ["  nobody has joined yet"]
    return [
        f"  {line.rank:>3}. {line.handle:<24} {counted(line.score, 'pt'):>7}  {counted(line.games, 'race')}  perf {line.performance}" + ("  🔥" if line.fire else "")
        for line in shown
    ]


def arena_heading(info: ArenaInfo, now_ms: int) -> str:
    """``Arena q8Zr… "evening arena": 12:30 left`` (or ``over``)."""
    left = info.end_at - now_ms
    clock = "over" if left <= 0 else f"{left // 60_000}:{left // 1000 % 60:02d} left"
    return f"Arena {info.arena} \"{info.name}\": {clock}, races of {info.time_limit} s"


class ServerClock:
    """The server's clock, estimated from its time in the ``welcome`` (taken as said when it arrived)."""

    def __init__(self, client: RaceClient) -> None:
        assert client.session is not None
        self.offset_ms = client.session.server_time - time.time() * 1000

    def now(self) -> int:
        """The server's time now (ms)."""
        return int(time.time() * 1000 + self.offset_ms)


class ArenaPlayer(PlainRace):
    """``tournament join``: join, then play each race the arena pairs this player into, until its clock runs out.

    Each race is played as ``race --plain`` plays one (:class:`PlainRace`, sharing the typed lines); the standings
    pushed meanwhile are printed between the moves."""

    def __init__(self, client: RaceClient, arena: str, *, as_json: bool = False) -> None:
        super().__init__(client.url or "", SeatRequest(), SessionStore(), as_json=as_json)
        self.client = client
        self.arena = arena
        self.own = client.session.account if client.session is not None else None
        self.clock = ServerClock(client)

    async def run(self) -> int:
        reply = await self.client.arena_join(self.arena)
        info = reply.arena
        self._standings(reply.standings, heading=arena_heading(info, self.clock.now()))
        races = 0
        self.stdin = StdinLines()
        while (paired := await self._next_pairing(info)) is not None:
            races += 1
            session = RaceSession(self.client, self.store)
            code = await self.play_seat(session, await session.take_paired(paired.race))
            if self.left:
                return await self._pause(code)
        if self.left:
            return await self._pause(EXIT_LEFT)
        final = await self.client.arena_standings(self.arena)
        self._standings(final.standings, heading=f"Arena {info.arena} is over after your {races} races. Final standings:")
        return EXIT_OK

    async def _next_pairing(self, info: ArenaInfo) -> ArenaPaired | None:
        """The next ``arena_paired`` for this arena, printing the standings pushed meanwhile; None once the arena's
        clock has run out, or at end of input (then :attr:`left` is set)."""
        assert self.stdin is not None
        self.say("Waiting for a pairing ...", "waiting")
        ended = asyncio.ensure_future(self.stdin.ended.wait())
        try:
            while (left_ms := info.end_at + CLOCK_MARGIN_MS - self.clock.now()) > 0:
                item = await self._event_or_end(ended, left_ms / 1000)
                if item is None:
                    return None
                if isinstance(item, ArenaPaired) and item.arena == self.arena:
                    return item
                if isinstance(item, ArenaStandings) and item.arena == self.arena:
                    self._standings(item.standings)
        finally:
            ended.cancel()
        return None

    async def _event_or_end(self, ended: asyncio.Future[Any], timeout: float) -> Incoming | None:
        """The connection's next event within ``timeout`` seconds; None after it, or at end of input (:attr:`left`)."""
        event = asyncio.ensure_future(self.client.next_event(timeout=timeout))
        done, _ = await asyncio.wait({event, ended}, return_when=asyncio.FIRST_COMPLETED)
        if event not in done:
            event.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await event
            self.left = True
            return None
        try:
            return event.result()
        except TimeoutError:
            return None

    def _show(self, item: object, view: RaceView, before: RaceView | None) -> None:
        """The race's lines (:class:`PlainRace`), and the arena's standings when they are pushed."""
        if isinstance(item, ArenaStandings) and item.arena == self.arena:
            self._standings(item.standings)
        else:
            super()._show(item, view, before)

    def _standings(self, lines: list[ArenaLine], heading: str = "Standings:") -> None:
        if self.as_json:
            self.emit({"type": "arena_standings", "arena": self.arena, "standings": [as_map(line) for line in lines]})
            return
        print("\n".join([heading, *standings_lines(lines, self.own)]), flush=True)

    async def _pause(self, code: int) -> int:
        """Left (end of input, Ctrl-C): paused in the arena, so nobody is paired with a player who is gone."""
        with contextlib.suppress(ServerError, ConnectionLost, TimeoutError):
            async with asyncio.timeout(2):
                await self.client.arena_pause(self.arena)
        self.say(f"Paused in arena {self.arena}: 'flowergarden tournament join {self.arena}' takes you back.", "paused")
        return code


async def _watch(client: RaceClient, arena: str, *, as_json: bool, once: bool) -> int:
    """The standings each time they change, until the arena is over: its clock out, and a race paired at the last
    moment over too (its time limit and a margin later)."""
    clock = ServerClock(client)
    last: list[ArenaLine] | None = None
    while True:
        reply = await client.arena_standings(arena)
        now = clock.now()
        if reply.standings != last:
            last = reply.standings
            if as_json:
                emit_json(as_map(reply))
            else:
                print("\n".join([arena_heading(reply.arena, now), *standings_lines(reply.standings)]), flush=True)
        if once or now > reply.arena.end_at + reply.arena.time_limit * 1000 + LAST_RACE_MARGIN_MS:
            return EXIT_OK
        await asyncio.sleep(WATCH_EVERY)
