"""Arena tournaments from the terminal (docs/COMMUNITY.md "Arena tournaments"): ``flowergarden tournament list``
shows the listed ones, ``create`` opens a private one, ``join`` plays in one, race after race in line mode, and
``watch`` follows its standings.

They use the arena requests of docs/PROTOCOL.md ("Arena tournaments"): ``arena_list``, ``arena_create``,
``arena_join`` (then ``arena_paired`` and ``arena_standings`` are pushed), ``arena_pause`` and ``arena_watch``.
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
from shared.protocol.states import ArenaStatus

ACTIONS = ("list", "create", "join", "watch")
SHOWN_LINES = 10
"""How many lines of the standings are printed (the player's own line is added when it is further down)."""
CLOCK_MARGIN_MS = 2_000
"""How long after the arena's end (by the server's clock as estimated at the hello) the last pairing is awaited."""


def register(subparsers: Any) -> None:
    """Add ``tournament``."""
    parser = subparsers.add_parser(
        "tournament",
        help="arena tournaments: list them, create one, play in one race after race, or watch its standings",
        description=(
            "Arena tournaments (docs/COMMUNITY.md). `tournament list` shows the server's listed arenas (upcoming, "
            "running, the newest finished). `tournament create NAME --login HANDLE` opens a private arena that starts "
            "now (joined by its id) and prints its id. `tournament join ARENA --login HANDLE` plays in it: you are paired with another free "
            "player within seconds, play the race in line mode (the moves of 'flowergarden race --plain': '5D b>3', "
            "'5D 3', a card alone, moves, undo, resign, help ...), then are paired again, until the arena's clock runs "
            "out; the standings are printed as they change. End of input or Ctrl-C pauses you in the arena (join again "
            "to come back). `tournament watch ARENA` prints the standings as they change until the arena is over (the final "
            "table: its first three are the podium). "
            f"The password comes from ${PASSWORD_ENV} or is asked on the terminal (stdin carries the moves)."
        ),
        epilog=(
            "Exit codes: 0 done (list, create; join: you played to the arena's end; watch: it ended), 5 join: you left "
            "(end of input) and are paused, 130 interrupted (Ctrl-C; paused too), 1 refused by the server (an unknown "
            "arena, an arena that is over, a guest), 2 usage."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("target", nargs="?", metavar="NAME_OR_ARENA", help="create: the arena's name; join, watch: the arena's id")
    parser.add_argument("--login", metavar="HANDLE", help="your registered account (create and join need one)")
    parser.add_argument("--minutes", type=int, default=20, metavar="N", help="create: minutes of pairing, 1-180 (default 20)")
    parser.add_argument("--time-limit", type=int, default=300, metavar="SECONDS", help="create: each race's time limit, 10-3600 s (default 300)")
    parser.add_argument("--once", action="store_true", help="watch: print the standings once and exit")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if args.action != "list" and not args.target:
        what = "the arena's name" if args.action == "create" else "the arena's id (see 'flowergarden tournament list')"
        raise CommandError("bad_input", f"tournament {args.action} needs {what}", exit_code=2)
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
        if args.action == "list":
            return await _list(client, as_json=args.json)
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


async def _list(client: RaceClient, *, as_json: bool) -> int:
    """The listed arenas by status, each with its id, name, clock and players."""
    reply = await client.arena_list()
    if as_json:
        emit_json(as_map(reply))
        return EXIT_OK
    now = ServerClock(client).now()
    for title, arenas in (("Upcoming", reply.upcoming), ("Running", reply.running), ("Finished", reply.finished)):
        print(f"{title}:")
        print("\n".join(f"  {arena_heading(info, now)}, {counted(info.players, 'player')}" for info in arenas) or "  none")
    return EXIT_OK


def standings_lines(lines: list[ArenaLine], own: ArenaLine | None = None) -> list[str]:
    """The standings as printed: the top :data:`SHOWN_LINES`, and the player's ``own`` line when it is further down;
    a flame marks a streak (the next result counts double)."""
    shown = lines[:SHOWN_LINES] + [own for own in [own] if own is not None and own.rank > min(SHOWN_LINES, len(lines))]
    if not shown:
        return ["  nobody has joined yet"]
    return [
        f"  {line.rank:>3}. {line.handle:<24} {counted(line.score, 'pt'):>7}  {counted(line.games, 'race')}  perf {line.performance}"
        + (f"  berserk {line.berserks}" if line.berserks else "")
        + ("  🔥" if line.fire else "")
        for line in shown
    ]


def arena_heading(info: ArenaInfo, now_ms: int) -> str:
    """``Arena q8Zr… "evening arena": 12:30 left, races of 300 s`` (``starts in 5:00``, ``over``; ``rated``)."""
    if info.status is ArenaStatus.UPCOMING:
        clock = f"starts in {_clock(info.start_at - now_ms)}"
    else:
        clock = "over" if info.status is ArenaStatus.FINISHED or info.end_at <= now_ms else f"{_clock(info.end_at - now_ms)} left"
    rated = ", rated" if info.rated else ""
    return f"Arena {info.arena} \"{info.name}\": {clock}, races of {info.time_limit} s{rated}"


def _clock(ms: int) -> str:
    """``12:30`` for 750,000 ms (``1:02:03`` from an hour)."""
    seconds = max(0, ms) // 1000
    hours, minutes = divmod(seconds // 60, 60)
    return f"{hours}:{minutes:02d}:{seconds % 60:02d}" if hours else f"{minutes}:{seconds % 60:02d}"


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
        self._standings(final.standings, heading=f"Arena {info.arena} is over after your {counted(races, 'race')}. Final standings:")
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
                    self._standings(item.standings, item.own)
                    if item.status is ArenaStatus.FINISHED:
                        return None
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
            self._standings(item.standings, item.own)
        else:
            super()._show(item, view, before)

    def _standings(self, lines: list[ArenaLine], own: ArenaLine | None = None, heading: str = "Standings:") -> None:
        if self.as_json:
            self.emit({"type": "arena_standings", "arena": self.arena, "standings": [as_map(line) for line in lines]})
            return
        print("\n".join([heading, *standings_lines(lines, own)]), flush=True)

    async def _pause(self, code: int) -> int:
        """Left (end of input, Ctrl-C): paused in the arena, so nobody is paired with a player who is gone."""
        with contextlib.suppress(ServerError, ConnectionLost, TimeoutError):
            async with asyncio.timeout(2):
                await self.client.arena_pause(self.arena)
        self.say(f"Paused in arena {self.arena}: 'flowergarden tournament join {self.arena}' takes you back.", "paused")
        return code


async def _watch(client: RaceClient, arena: str, *, as_json: bool, once: bool) -> int:
    """The standings as they are pushed (``arena_watch``), until the arena is over: finished with no race under way
    (the table is final; its first three are the podium)."""
    reply = await client.arena_watch(arena)
    clock = ServerClock(client)
    if as_json:
        emit_json(as_map(reply))
    else:
        print("\n".join([arena_heading(reply.arena, clock.now()), *standings_lines(reply.standings)]), flush=True)
    over = reply.arena.status is ArenaStatus.FINISHED and reply.arena.races == 0
    if once or over:
        return EXIT_OK
    async for item in client.events():
        if not isinstance(item, ArenaStandings) or item.arena != arena:
            continue
        over = item.status is ArenaStatus.FINISHED and item.races == 0
        if as_json:
            emit_json(as_map(item))
        else:
            heading = "Final standings (the podium: the first three):" if over else f"Standings ({counted(item.races, 'race')} under way):"
            print("\n".join([heading, *standings_lines(item.standings)]), flush=True)
        if over:
            return EXIT_OK
    raise CommandError("connection_failed", f"{client.url}: the connection closed before the arena ended")
