"""``flowergarden race``: race a person from the terminal — full screen on a terminal, lines with ``--plain``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
from typing import Any

from cli.connected import (
    add_plain_argument,
    add_server_argument,
    default_server,
    display_name,
    run_connected,
    time_limit,
    wants_full_screen,
)
from cli.engine_commands import add_profile_argument, seed_argument
from cli.output import EXIT_LEFT, EXIT_USAGE, OUTCOMES, CommandError, board_text, race_exit_code
from cli.player_commands import PASSWORD_ENV, credentials
from cli.terminal_input import StdinLines, discard_typeahead
from cli.tui.texts import KEYS_HELP, LINE_HELP
from client import ConnectionLost, RaceClient, ServerError
from client.race_session import RaceSession, ResumeError, SeatRequest, refusal_text
from client.race_view import RaceView
from client.refusals import no_move_words
from client.sessions import SessionStore
from client.words import words
from shared import Board, EngineError, Move, Special, action_text, notation_label
from shared.assist import read_typed_move, target_key
from shared.protocol import (
    OPEN_STATUSES,
    Countdown,
    Difficulty,
    Progress,
    RaceEvent,
    RaceResult,
    RaceSettings,
    RaceStatus,
    Spectators,
)
from shared.solver.difficulty import WINNABLE_TIERS

EXIT_INTERRUPTED = 130


def register(subparsers: Any) -> None:
    """Add ``race``."""
    parser = subparsers.add_parser(
        "race",
        help="race someone from the terminal",
        description=(
            "Create a race (and tell your opponent its id or invite code), join one, be paired by quick match, or "
            "take your seat back after a closed terminal (--resume); then play it. On a terminal this is a "
            "full-screen app; --plain (or a pipe) gives the line mode for scripts."
        ),
        epilog=KEYS_HELP + "\n\n" + LINE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_server_argument(parser)
    parser.add_argument("--name", type=display_name, default="player", help="your display name (1-32 characters)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--join", metavar="RACE_ID", help="join this race instead of creating one")
    how.add_argument("--invite", metavar="CODE", help="join the private race of this invite code")
    how.add_argument("--quick", action="store_true", help="race the next player asking for the same settings (quick match)")
    how.add_argument(
        "--bot",
        nargs="?",
        const=3,
        type=bot_level,
        metavar="LEVEL",
        help="race one of the server's practice bots, level 1 (beginner) to 5 (expert), default 3; always labelled as "
        "a bot: a private race with your settings, the bot seated at once",
    )
    how.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="RACE_ID",
        help="take back your seat in a race this computer played (default: the latest, on --server if given)",
    )
    parser.add_argument("--seed", type=seed_argument, help="deal this seed (created races only; default random)")
    add_profile_argument(parser)
    parser.add_argument("--undo", action="store_true", help="allow undo (counted)")
    parser.add_argument("--redeal-once", action="store_true", help="allow the one-time redeal house rule")
    parser.add_argument(
        "--hints", action="store_true", help="allow hints: h in the full-screen app lights the next move of a winning line (casual races only)"
    )
    parser.add_argument("--time-limit", type=time_limit, metavar="SECONDS", help="end attempts still running after this long")
    parser.add_argument("--solvable", action="store_true", help="deal only a deal the server's solver proved winnable")
    parser.add_argument("--private", action="store_true", help="do not list the race in the lobby; share its invite code")
    parser.add_argument(
        "--difficulty", choices=[tier.value for tier in WINNABLE_TIERS], help="with --solvable: a proven deal of this tier (docs/PROTOCOL.md)"
    )
    parser.add_argument(
        "--spectator-delay", type=int, metavar="SECONDS",
        help="how far spectators lag behind (never below the server's minimum, except in a private race whose joiner accepts it)",
    )
    parser.add_argument(
        "--accept-delay", type=int, metavar="SECONDS",
        help="joining a private race: accept a spectator delay this low (below the server's minimum; see docs/FAIRPLAY.md)",
    )
    parser.add_argument(
        "--spectators",
        choices=[choice.value for choice in Spectators],
        help="who may watch: anyone (listed among the live races), link (whoever has the race id) or nobody "
        "(default: link for a private race, anyone otherwise)",
    )
    parser.add_argument(
        "--login",
        metavar="HANDLE",
        help=f"race as your registered account HANDLE (see 'flowergarden register'; password from ${PASSWORD_ENV}, "
        "else asked for on the terminal, else read from stdin's first line)",
    )
    parser.add_argument(
        "--rated",
        action="store_true",
        help="a rated race, created or quick-matched (needs --login; both players logged in; server-chosen deal, no undo)",
    )
    parser.add_argument("--auto", action="store_true", help="start with auto-moving safe cards to the foundations on")
    add_plain_argument(parser)
    parser.add_argument(
        "--json", action="store_true", help="the line mode, printing one JSON object per line: each event, reply and sentence"
    )
    parser.set_defaults(handler=run_race)


def bot_level(text: str) -> int:
    """``--bot``'s level: 1 to 5."""
    if text not in {"1", "2", "3", "4", "5"}:
        raise argparse.ArgumentTypeError(f"a bot's level is 1 to 5, not {text!r}")
    return int(text)


def seat_request(args: argparse.Namespace, store: SessionStore) -> SeatRequest:
    """What the command line asks for; the saved seat for ``--resume`` (CommandError ``no_saved_race`` if none); with
    ``--login`` the password, read now (before a full-screen app takes the terminal)."""
    if args.rated and not args.login:
        raise CommandError(
            "account_required",
            "a rated race needs a registered account: add --login HANDLE ('flowergarden register' makes one)",
            exit_code=EXIT_USAGE,
        )
    if args.resume is not None and args.login:
        raise CommandError("bad_usage", "--resume takes back the saved session, still logged in as it was: leave --login out", exit_code=EXIT_USAGE)
    resume = None
    if args.resume is not None:
        server = args.server if args.server != default_server() else None
        resume = store.find(args.resume or None, server)
        if resume is None:
            which = f"race {args.resume}" if args.resume else "a race"
            raise CommandError("no_saved_race", f"no saved seat in {which} on this computer (see 'flowergarden race --help')")
        args.server = resume.server
    settings = RaceSettings(
        profile=args.profile,
        undo=args.undo,
        redeal_once=args.redeal_once,
        time_limit=args.time_limit,
        seed=args.seed,
        solvable_only=args.solvable,
        private=args.private,
        spectators=None if args.spectators is None else Spectators(args.spectators),
        rated=args.rated,
        difficulty=None if args.difficulty is None else Difficulty(args.difficulty),
        spectator_delay=args.spectator_delay,
        hints=args.hints,
    )
    login = credentials(args.login) if args.login else None
    return SeatRequest(
        args.name, settings, join=args.join, invite=args.invite, quick=args.quick, resume=resume, login=login,
        accept_delay=args.accept_delay, bot=args.bot,
    )


def run_race(args: argparse.Namespace) -> int:
    """Play one race: the full-screen app on a terminal, else the line mode."""
    store = SessionStore()
    request = seat_request(args, store)
    if wants_full_screen(args):
        from cli.tui.app import FlowerGardenApp, RaceStart  # Textual loads only for the full-screen app

        return FlowerGardenApp(args.server, RaceStart(request, auto=args.auto), store=store).run_and_exit_code()
    try:
        return run_connected(args, lambda args: PlainRace(args.server, request, store, as_json=args.json).run())
    finally:
        discard_typeahead()


INFORMATION = frozenset({"help", "board", "moves"})
"""The line mode's words that only show something: answered at once, also before the race runs."""


class PlainRace:
    """The line mode: typed lines become requests, events become printed lines; ends with the result.

    Lines typed before the race runs wait for it (a script may pipe its moves in at once). With ``as_json`` every
    printed line is one JSON object: each race event as it came (``{"type": "countdown", ...}``), each reply to an own
    move (``moved``), each sentence said (``{"type": "said", "text": ...}``), each refusal (``refused``, with its code),
    the own board after a change (``board``, the position JSON of docs/NOTATION.md), and last the ``outcome``.
    """

    def __init__(self, server: str, request: SeatRequest, store: SessionStore, *, as_json: bool = False) -> None:
        self.server = server
        self.request = request
        self.store = store
        self.as_json = as_json
        self.listed: list[Move] = []
        """The moves of the last ``moves`` listing, so a number plays one."""
        self.racing = asyncio.Event()
        """Set once the race runs (or is over): typed lines wait for it."""
        self.left = False
        """Whether the player left the last race before its result (end of input, Ctrl-C)."""
        self.stdin: StdinLines | None = None
        """The typed lines, read from the first race on (several races in one process share them: the arena's)."""

    # --- output ------------------------------------------------------------------------------

    def say(self, text: str, kind: str = "said", **fields: Any) -> None:
        """Print ``text`` (line mode), or ``{"type": kind, "text": text, **fields}`` (``--json``)."""
        if self.as_json:
            self.emit({"type": kind, "text": text, **fields})
        else:
            print(text, flush=True)

    def emit(self, document: dict[str, Any]) -> None:
        """One JSON object on a line of its own (``--json``)."""
        print(json.dumps(document, ensure_ascii=False, default=str), flush=True)

    def show_board(self, board: Board) -> None:
        """The own board: drawn as text, or its position JSON."""
        if self.as_json:
            self.emit({"type": "board", "board": board.to_json()})
        else:
            print(board_text(board), flush=True)

    # --- the race --------------------------------------------------------------------------------

    async def run(self) -> int:
        client = await RaceClient.connect(self.server)
        session = RaceSession(client, self.store)
        try:
            try:
                lines = await session.open(self.request)
            except ResumeError as error:
                raise CommandError(error.code, str(error)) from None
            return await self.play_seat(session, lines)
        finally:
            await client.close()

    async def play_seat(self, session: RaceSession, lines: list[str]) -> int:
        """Say ``lines``, then play the seat ``session`` holds to its result (or until the player leaves); the exit
        code by the outcome (:func:`race_exit_code`, :data:`EXIT_LEFT`, :data:`EXIT_INTERRUPTED`)."""
        self.racing.clear()
        self.listed = []
        for line in lines:
            self.say(line)
        self._note_status(session)
        if session.view is not None and session.view.board is not None:
            self.show_board(session.view.board)
        return await self._play(session)

    def _note_status(self, session: RaceSession) -> None:
        view = session.view
        if view is not None and view.status not in OPEN_STATUSES:
            self.racing.set()

    async def _play(self, session: RaceSession) -> int:
        interrupted = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, interrupted.set)
        events = asyncio.create_task(self._follow(session))
        typing = asyncio.create_task(self._read(session))
        stopped = asyncio.create_task(interrupted.wait())
        try:
            done, _ = await asyncio.wait({events, typing, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            for task in (events, typing, stopped):
                task.cancel()
            for task in (events, typing, stopped):
                with contextlib.suppress(asyncio.CancelledError, ConnectionLost, ServerError):
                    await task
        self.left = events not in done
        if events in done:
            code = events.result()
        else:
            await self._leave(session)
            code = EXIT_INTERRUPTED if stopped in done else EXIT_LEFT
        if self.as_json:
            self.emit({"type": "outcome", "outcome": OUTCOMES.get(code, "interrupted"), "exit_code": code})
        return code

    async def _leave(self, session: RaceSession) -> None:
        """Ctrl-C or end of input before the result: free a seat not yet raced, else say how to come back."""
        view = session.view
        if view is None or view.result is not None:
            return
        if view.status in OPEN_STATUSES:
            with contextlib.suppress(ConnectionLost, ServerError, TimeoutError):
                async with asyncio.timeout(2):
                    await session.leave()
            self.say(words("term.line.left"), "left")
        elif view.status is RaceStatus.RUNNING:
            self.say(words("term.line.left_running", race=view.race_id), "left")

    async def _follow(self, session: RaceSession) -> int:
        async for item in session.client.follow():
            before = session.view
            if self.as_json and isinstance(item, RaceEvent) and before is not None and item.race == before.race_id:
                self.emit(item.to_wire())
            line = await session.handle(item)
            if line:
                self.say(line)
            view = session.view
            if view is None:
                continue
            self._note_status(session)
            self._show(item, view, before)
            if isinstance(item, RaceResult):
                if not self.as_json:
                    for standing in view.standing_lines():
                        print("  " + standing, flush=True)
                return race_exit_code(view.result, view.slot)
            if view.status is RaceStatus.CLOSED:
                return EXIT_LEFT
        raise CommandError("connection_failed", f"{self.server}: the connection closed before the race ended")

    def _show(self, item: object, view: RaceView, before: RaceView | None) -> None:
        """The board when the deal arrives or the race changed, else the opponent's progress (not in --json)."""
        if (isinstance(item, Countdown) or view is not before) and view.board is not None:
            self.show_board(view.board)
        elif isinstance(item, Progress) and item.slot != view.slot and item.race == view.race_id and not self.as_json:
            print("  [" + words("term.line.progress", name=view.name(item.slot), count=item.count, left=item.left) + "]", flush=True)

    async def _read(self, session: RaceSession) -> None:
        if self.stdin is None:
            self.stdin = StdinLines()
        async for line in self.stdin:
            if line.strip().lower() not in INFORMATION:
                await self.racing.wait()  # typed (or piped) before the deal: played once the race runs
            with contextlib.suppress(ConnectionLost):
                await self._command(session, line.strip())

    async def _command(self, session: RaceSession, text: str) -> None:
        view = session.view
        word = text.lower()
        if not text or view is None:
            return
        try:
            if word in INFORMATION:
                self._inform(word, view.board)
            elif word == "resign":
                await session.resign()
            elif word == "stuck":
                await session.stuck()
            elif view.board is None:
                self.say(words("term.race.no_deal"))
            elif word in ("undo", "redeal"):
                await self._send(session, Special(word))
            elif word.isdigit():
                number = int(word)
                if not 1 <= number <= len(self.listed):
                    self.say(words("term.line.no_such_move", number=number))
                else:
                    await self._send(session, self.listed[number - 1])
            else:
                await self._typed(session, view.board, text)
        except EngineError as error:
            self.say(words("term.line.not_understood", message=error.message, code=error.code.value), "refused", code=error.code.value)
        except ServerError as error:
            self.say(refusal_text(error), "refused", code=error.code)
        except ConnectionLost:
            self.say(words("term.line.dropped"))

    def _inform(self, word: str, board: Board | None) -> None:
        """``help``, ``board`` and ``moves`` (the legal moves, numbered: a number then plays one)."""
        if word == "help":
            self.say(words("term.line_help"))
        elif word == "board":
            if board is None:
                self.say(words("term.line.no_deal"))
            else:
                self.show_board(board)
        else:
            self.listed = board.legal_moves() if board else []
            text = "  ".join(f"{n}) {action_text(move)}" for n, move in enumerate(self.listed, 1))
            self.say(text or words("term.line.no_legal_move"), "moves", moves=[action_text(move) for move in self.listed])

    async def _typed(self, session: RaceSession, board: Board, text: str) -> None:
        """A move in any accepted form: sent when it names one move, else the card's destinations or why it cannot move."""
        typed = read_typed_move(board, text)
        card = text.strip().upper()
        if typed.move is not None:
            await self._send(session, typed.move)
        elif typed.choices:
            places = [target_key(move.target) for move in typed.choices]
            self.say(words("term.line.choices", card=card, places=", ".join(places), first=places[0]), "choices", places=places)
        else:
            code = typed.why_not.code.value if typed.why_not else "no_legal_move"
            self.say(no_move_words(typed.card, typed.why_not, board), "refused", code=code)

    async def _send(self, session: RaceSession, action: Move | Special) -> None:
        view = session.view
        try:
            reply = await session.send(action)
        except ServerError as error:
            self.say(refusal_text(error, action, None if view is None else view.board), "refused", code=error.code)
            return
        if view is not None and view.board is not None:
            self.show_board(view.board)
        if self.as_json:
            self.emit(reply.to_wire())
        else:
            print(words("term.line.played", move=notation_label(reply.move), count=reply.count, left=reply.left), flush=True)
