"""Accounts and the players' books from the terminal: ``register``, ``login``, ``leaderboard``, ``history``, and the
race records anyone can check: ``export`` and ``verify``."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from cli.connected import add_server_argument, run_connected
from cli.output import EXIT_OK, EXIT_USAGE, CommandError, counted, emit_json, read_json_object, whole_number
from cli.record_signature import check_signature, fetch_key
from cli.terminal_input import read_first_line
from client import RaceClient
from client.race_session import Credentials, introduce
from client.race_view import player_label, rating_text
from shared.arena_record import ARENA_RECORD_FORMAT, ARENA_RECORD_VERSION, verify_arena_record
from shared.protocol import MAX_HISTORY_PAGE, MAX_LEADERBOARD_PAGE, MAX_REPLAY_PAGE, HistoryItem, as_map
from shared.race.record import RECORD_FORMAT, RECORD_VERSION, NotARecord, RecordInvalid, verify_record

PASSWORD_ENV = "FLOWERGARDEN_PASSWORD"


def register(subparsers: Any) -> None:
    """Add ``register``, ``login``, ``leaderboard``, ``history``, ``export`` and ``verify``."""
    parser = subparsers.add_parser(
        "register",
        help="register a handle (an account) on a race server",
        description=(
            "Register HANDLE: 3 to 20 letters, digits, _ or -, beginning with a letter or digit, unique regardless of case. "
            f"The password (8 to 128 characters) is read from ${PASSWORD_ENV}, else asked for (twice) on the terminal, else "
            "read from the first line of stdin. With --bot the server makes a secret key instead and prints it once: keep it "
            "(--key-file writes it to a file) to run `flowergarden bot` as this account."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("handle", metavar="HANDLE")
    parser.add_argument("--bot", action="store_true", help="a bot account (labelled as a bot everywhere); prints its key")
    parser.add_argument("--key-file", type=Path, metavar="FILE", help="with --bot: also write the key to FILE (mode 600)")
    parser.set_defaults(handler=lambda args: run_connected(args, _register))

    parser = subparsers.add_parser(
        "login",
        help="check a handle and password (or bot key) on a race server",
        description=(
            f"Log in to HANDLE and print the account. The password (or a bot's key) is read from ${PASSWORD_ENV}, else "
            "asked for on the terminal, else read from stdin. `race --login HANDLE` and `bot` log in the same way."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("handle", metavar="HANDLE")
    parser.set_defaults(handler=lambda args: run_connected(args, _login))

    parser = subparsers.add_parser(
        "leaderboard",
        help="the best-rated players of a profile",
        description=(
            "Print the leaderboard: established players (rating deviation at most the server's provisional threshold, "
            "110 by default) by Glicko-2 rating, with deviation and rated games. With --login, also your own rank."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("--profile", default="classic", choices=["classic", "foundation-only"], help="default %(default)s")
    parser.add_argument("--limit", type=whole_number(1, MAX_LEADERBOARD_PAGE), default=20, help=f"lines to show, 1 to {MAX_LEADERBOARD_PAGE} (default %(default)s)")
    parser.add_argument("--offset", type=whole_number(0), default=0, help="skip this many lines (default %(default)s)")
    parser.add_argument("--login", metavar="HANDLE", help="log in to HANDLE to see your own rank and rating")
    parser.set_defaults(handler=lambda args: run_connected(args, _leaderboard))

    parser = subparsers.add_parser(
        "history",
        help="a player's stats and finished races, newest first",
        description=(
            "Print HANDLE's stats per profile (races, wins/losses/draws, clears, best clear time, average foundation "
            "count, rating) and a page of its finished races, newest first, each with the command that replays it."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("handle", metavar="HANDLE")
    parser.add_argument("--limit", type=whole_number(1, MAX_HISTORY_PAGE), default=20, help=f"races per page, 1 to {MAX_HISTORY_PAGE} (default %(default)s)")
    parser.add_argument("--offset", type=whole_number(0), default=0, help="skip this many races (default %(default)s: the newest)")
    parser.set_defaults(handler=lambda args: run_connected(args, _history))

    parser = subparsers.add_parser(
        "export",
        help="write a finished race's record as JSON",
        description=(
            "Write the record of finished race RACE as JSON: the final race (settings, players, seed), and every event "
            "with its time (both players' moves, attempt ends, the result with rating changes); or with --arena the "
            "record of an arena tournament (its table and each player's races with their points, signed). "
            "`flowergarden verify FILE` checks either without trusting the server."
        ),
    )
    add_server_argument(parser)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("race", nargs="?", metavar="RACE")
    what.add_argument(
        "--arena", metavar="ARENA",
        help="write arena ARENA's record instead: its table, each player's races with their points, signed by the server",
    )  # fmt: skip
    parser.add_argument("--output", "-o", type=Path, metavar="FILE", help="write to FILE (default stdout)")
    parser.set_defaults(handler=lambda args: run_connected(args, _export))

    parser = subparsers.add_parser(
        "verify",
        help="check an exported race record with the engine",
        description=(
            "Replay the record in FILE ('-' for stdin) with the engine: every move must be legal and give the counts the "
            "record announces, the result must follow from the moves by the rules, and the revealed seed and salt must hash to "
            "the countdown's commitment and deal its layout; with --key or --key-url the server's signature must match "
            "too (then race id, players and ratings are proved as well). An arena record (export --arena) is checked by "
            "the arena's rules instead: each race's points, both sides of each race and the table recomputed from them; "
            "with a key, its signature. Exit 0 when it holds, 1 "
            "(record_invalid, naming the first bad event) when it does not, 2 when FILE is not a record (not_a_record)."
        ),
    )
    parser.add_argument("file", metavar="FILE")
    key = parser.add_mutually_exclusive_group()
    key.add_argument("--key", metavar="HEX", help="also check the server's signature with this public key (flowergarden admin record-key)")
    key.add_argument("--key-url", metavar="URL", help="also check the server's signature with the key the server serves (its ws:// URL, or the /record-key URL)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run_verify)


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """``--server`` and ``--json``, which every account and player command takes."""
    add_server_argument(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def read_password(prompt: str = "Password: ", *, confirm: bool = False, env: str = PASSWORD_ENV) -> str:
    """The password: from $FLOWERGARDEN_PASSWORD (or ``env``), else typed on the terminal (``confirm``: twice), else
    stdin's next line."""
    secret = os.environ.get(env)
    if secret:
        return secret
    if sys.stdin.isatty():
        secret = typed_secret(prompt)
        if confirm and typed_secret("Again: ") != secret:
            raise CommandError("bad_input", "the two passwords differ", exit_code=EXIT_USAGE)
        return secret
    secret = read_first_line()
    if not secret:
        raise CommandError("bad_input", f"no password: set ${env}, type it on a terminal or give it on stdin", exit_code=EXIT_USAGE)
    return secret


def typed_secret(prompt: str) -> str:
    """A secret typed on the terminal, not echoed. Ctrl-D is the error ``bad_input`` (no traceback), and Ctrl-C ends
    the command at once (exit code 130), also inside a command's event loop, whose own Ctrl-C handler would only
    cancel its task once the blocking read returned: what was typed after Ctrl-C became the password."""
    with _interrupted_at_once():
        try:
            return getpass.getpass(prompt)
        except EOFError:
            print(file=sys.stderr)
            raise CommandError("bad_input", "no password typed (Ctrl-D ended the input)", exit_code=EXIT_USAGE) from None
        except KeyboardInterrupt:
            print(file=sys.stderr)  # the prompt's line is left open: the shell's prompt starts on a line of its own
            raise


@contextlib.contextmanager
def _interrupted_at_once() -> Iterator[None]:
    """Python's own Ctrl-C handler (raise KeyboardInterrupt in the blocking read) while the block runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def credentials(handle: str) -> Credentials:
    """``handle`` with its password or key, read by :func:`read_password`."""
    return Credentials(handle, read_password())


async def logged_in(server: str, handle: str) -> RaceClient:
    """A client logged in to ``handle`` (its password or key read by :func:`read_password`)."""
    client = await RaceClient.connect(server)
    try:
        await introduce(client, handle, credentials(handle))
    except BaseException:
        await client.close()
        raise
    return client


async def _register(args: argparse.Namespace) -> None:
    async with await RaceClient.connect(args.server) as client:
        await client.hello(args.handle)
        password = None if args.bot else read_password("Choose a password: ", confirm=True)
        reply = await client.register(args.handle, password, bot=args.bot)
        if reply.key is not None and args.key_file is not None:
            args.key_file.write_text(reply.key + "\n", encoding="utf-8")
            args.key_file.chmod(0o600)
        if args.json:
            emit_json(as_map(reply))
            return
        print(f"Registered {reply.handle} (player id {reply.player}){' as a bot' if reply.bot else ''}.")
        if reply.key is not None:
            print(f"Bot key (shown once; the bot logs in with it): {reply.key}")


async def _login(args: argparse.Namespace) -> None:
    client = await logged_in(args.server, args.handle)
    async with client:
        session = client.session
        assert session is not None and session.account is not None
        if args.json:
            emit_json({"handle": session.account, "player": session.player, "bot": session.bot})
        else:
            print(f"Logged in as {player_label(session.name, session.account, session.bot)} (player id {session.player}).")


async def _leaderboard(args: argparse.Namespace) -> None:
    client = await logged_in(args.server, args.login) if args.login else await RaceClient.connect(args.server)
    async with client:
        if client.session is None:
            await client.hello("leaderboard reader")
        board = await client.leaderboard(args.profile, limit=args.limit, offset=args.offset)
        if args.json:
            emit_json(as_map(board) | {"type": "leaderboard"})
            return
        print(f"{args.profile} leaderboard: {counted(board.total, 'established player')}")
        for entry in board.entries:
            name = player_label(entry.handle, entry.handle, entry.bot)
            print(f"{entry.rank:>4}. {name:<26} {entry.rating:>5} ±{entry.deviation:<4} {entry.games:>4} games")
        if args.login:
            own = board.own
            rating = board.own_rating
            if own is not None:
                print(f"You: #{own.rank}, {own.rating} ±{own.deviation}")
            elif rating is not None:
                print(f"You: {rating.rating}? ±{rating.deviation} after {rating.games} rated game(s): provisional, not listed yet")
            else:
                print("You: no rated race in this profile yet")


def history_line(item: HistoryItem, server: str) -> str:
    """One finished race of a player as a line, with how to replay it."""
    opponent = player_label(item.opponent.name, item.opponent.account, item.opponent.bot)
    if item.ghost is not None:  # a recorded attempt replayed, whatever name it carries
        opponent = f"{item.opponent.name} (ghost)"
    kind = ("rated, aborted: not rated" if item.aborted else "rated") if item.rated else "ghost race" if item.ghost else "casual"
    replay = f"flowergarden replay --server {server} {item.race}" if item.replay_available else "(record expired)"
    rating = rating_text(item.rating)
    return (
        f"{item.race}  {item.outcome:<4} vs {opponent:<24} {item.reason:<13} {item.count:>2}/52 {item.time_ms / 1000:7.1f} s"
        f"  {item.profile} {kind}{'  ' + rating if rating else ''}\n    {replay}"
    )


async def _history(args: argparse.Namespace) -> None:
    async with await RaceClient.connect(args.server) as client:
        await client.hello("history reader")
        stats = await client.stats(args.handle)
        page = await client.history(args.handle, offset=args.offset, limit=args.limit)
        if args.json:
            emit_json({"stats": as_map(stats), "history": as_map(page)})
            return
        print(player_label(stats.handle, stats.handle, stats.bot))
        for profile in stats.profiles:
            best = "-" if profile.best_clear_ms is None else f"{profile.best_clear_ms / 1000:.1f} s"
            rating = "unrated" if profile.rating is None else (
                f"rating {profile.rating.rating}{'?' if profile.rating.provisional else ''} ±{profile.rating.deviation}"
            )
            print(
                f"  {profile.profile}: {profile.races} races, {profile.wins}-{profile.losses}-{profile.draws} (W-L-D), "
                f"{profile.clears} clears, best clear {best}, average {profile.average_count:.1f} cards, {rating}"
            )
        shown = f"{args.offset + 1}-{args.offset + len(page.items)}" if page.items else "none"
        print(f"Finished races ({shown} of {page.total}, newest first):")
        for item in page.items:
            print("  " + history_line(item, args.server))


async def record_of(client: RaceClient, race: str) -> dict[str, Any]:
    """A finished race's record (format of :mod:`shared.race.record`), from its replay pages."""
    events: list[dict[str, Any]] = []
    info = None
    after = 0
    while True:
        page = await client.replay_page(race, after, MAX_REPLAY_PAGE)
        info = page.race
        events.extend(event.to_wire() for event in page.events)
        if page.complete or not page.events:
            break
        after = page.events[-1].seq
    return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "race": as_map(info), "events": events, "signature": page.signature}


async def _export(args: argparse.Namespace) -> None:
    async with await RaceClient.connect(args.server) as client:
        await client.hello("exporter")
        record: dict[str, Any]
        if args.arena is not None:
            reply = await client.arena_record(args.arena)
            record = {"format": ARENA_RECORD_FORMAT, "version": ARENA_RECORD_VERSION} | {
                name: value for name, value in as_map(reply).items() if name not in ("type", "id")
            }
            what = f"arena {args.arena} ({len(reply.players)} players{'' if reply.final else ', not final yet'})"
        else:
            record = await record_of(client, args.race)
            what = f"race {args.race} ({len(record['events'])} events)"
    text = json.dumps(record, ensure_ascii=False, indent=1)
    if args.output is None:
        sys.stdout.write(text + "\n")
    else:
        args.output.write_text(text + "\n", encoding="utf-8")
        print(f"Wrote the record of {what} to {args.output}", file=sys.stderr)


V = TypeVar("V")


def _checked(check: Callable[[dict[str, Any]], V], document: dict[str, Any], public_key: str | None) -> V:
    """``check``'s verdict on a record and, with a key, its signature; a CommandError (``not_a_record``,
    ``record_invalid`` naming the event that gave it away, if any) when it does not hold."""
    try:
        verdict = check(document)
        if public_key is not None:
            check_signature(document, public_key)
    except NotARecord as wrong:
        raise CommandError("not_a_record", str(wrong), exit_code=EXIT_USAGE) from None
    except RecordInvalid as invalid:
        where = {} if invalid.seq is None else {"seq": invalid.seq}  # no event to name: the record's shape
        raise CommandError("record_invalid", str(invalid), **where) from None
    return verdict


def _verify_arena(document: dict[str, Any], public_key: str | None, *, as_json: bool) -> int:
    """Check an arena record (shared/arena_record.py) and, with a key, its signature."""
    verdict = _checked(verify_arena_record, document, public_key)
    if as_json:
        emit_json({"valid": True, "arena": verdict.arena, "players": verdict.players, "races": verdict.races,
                   "final": verdict.final, "winner": verdict.winner, "signed": public_key is not None})  # fmt: skip
        return EXIT_OK
    signed = "signed by the server (key checked)" if public_key is not None else "signature not checked (give --key-url SERVER)"
    table = "final table" if verdict.final else "table so far (the arena is not over)"
    print(
        f"Arena {verdict.arena} verified: {verdict.players} players, {verdict.races} races, every race's points and the "
        f"{table} recomputed by the arena's rules; first: {verdict.winner or 'nobody'}; {signed}."
    )
    return EXIT_OK


def run_verify(args: argparse.Namespace) -> int:
    """Check a record file; exit 0 if it holds, 1 with the first bad event if not."""
    document = read_json_object(args.file, "bad_input", "a race record (a JSON object)")
    public_key = args.key or (fetch_key(args.key_url) if args.key_url else None)
    if document.get("format") == ARENA_RECORD_FORMAT:
        return _verify_arena(document, public_key, as_json=args.json)
    verdict = _checked(verify_record, document, public_key)
    winner = "draw" if verdict.winner is None else f"seat {verdict.winner} won"
    if args.json:
        emit_json({"valid": True, "race": verdict.race, "seed": verdict.seed, "actions": list(verdict.actions),
                   "counts": list(verdict.counts), "winner": verdict.winner, "reason": verdict.reason,
                   "signed": public_key is not None})  # fmt: skip
    else:
        signed = "signed by the server (key checked)" if public_key is not None else "signature not checked (give --key-url SERVER)"
        print(
            f"Race {verdict.race} verified: seed {verdict.seed}; {verdict.actions[0]} + {verdict.actions[1]} actions replayed, "
            f"counts {verdict.counts[0]} and {verdict.counts[1]}; result confirmed: {winner} ({verdict.reason}); {signed}."
        )
    return EXIT_OK
