"""The daily deal from the terminal: ``flowergarden daily`` (today's deal, your attempt, your streak), ``daily play``
(your attempt, in line mode), ``daily board``, ``daily replay`` and ``daily archive`` (docs/COMMUNITY.md)."""

from __future__ import annotations

import argparse
from typing import Any

from cli.connected import run_connected
from cli.output import EXIT_OK, EXIT_REFUSED, CommandError, board_text, emit_json
from cli.player_commands import add_common_arguments, logged_in
from cli.terminal_input import StdinLines
from client import RaceClient, ServerError
from shared import EngineError, action_text, parse_action
from shared.assist import read_typed_move
from shared.protocol import MAX_DAILY_PAGE, AttemptState, DailyResult, DailyStats, as_map
from shared.race.boards import board_from_layout
from shared.rules import Profile, Rules

ACTIONS = ("show", "play", "board", "replay", "archive")


def register(subparsers: Any) -> None:
    """Add ``daily``."""
    parser = subparsers.add_parser(
        "daily",
        help="the daily deal: one deal a UTC day for everybody, one counted attempt each",
        description=(
            "The daily deal (docs/COMMUNITY.md). `daily` shows a day's deal (today's by default): its commitment, your "
            "attempt and streak; once the day is over its seed, the solver's line, the top of its leaderboard and its "
            "statistics. `daily play` plays your attempt in line mode: type a move ('5D b>3', '5D 3', 'AS f' or a card "
            "alone when it has one move), `board` to see the board again, `stop` to end the attempt; logged in (--login) "
            "today's is your one counted attempt, else it is uncounted. `daily board` and `daily replay [HANDLE]` open when "
            "the day is over (your own replay at any time); `daily archive` lists the past days with your results."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("action", nargs="?", default="show", choices=ACTIONS, help="default %(default)s")
    parser.add_argument("handle", nargs="?", metavar="HANDLE", help="replay: whose attempt (default: your own)")
    parser.add_argument("--day", metavar="YYYY-MM-DD", help="the day (UTC; default: today)")
    parser.add_argument("--login", metavar="HANDLE", help="log in to HANDLE: your counted attempt, your results and streaks")
    parser.add_argument("--limit", type=int, default=20, choices=range(1, MAX_DAILY_PAGE + 1), metavar="N", help="board/archive lines (default 20)")
    parser.set_defaults(handler=lambda args: run_connected(args, _daily))


async def _daily(args: argparse.Namespace) -> int:
    client = await logged_in(args.server, args.login) if args.login else await RaceClient.connect(args.server)
    async with client:
        if client.session is None:
            await client.hello("daily player")
        if args.action == "play":
            return await _play(client, args)
        if args.action in ("board", "replay") and args.day is None:
            raise CommandError("bad_input", f"daily {args.action} needs --day", exit_code=2)
        if args.action == "board":
            await _board(client, args)
        elif args.action == "replay":
            await _replay(client, args)
        elif args.action == "archive":
            await _archive(client, args)
        else:
            await _show(client, args)
    return EXIT_OK


def result_text(result: DailyResult) -> str:
    """An attempt's result in one line."""
    counted = "counted" if result.counted else "uncounted"
    if result.state is AttemptState.PLAYING:
        return f"playing, {result.count}/52 after {result.moves} moves ({counted})"
    return f"{result.state.value}: {result.count}/52 in {result.moves} moves, {result.time_ms / 1000:.1f} s ({counted})"


def stats_text(stats: DailyStats) -> str:
    """A finished day's statistics in one line."""
    share = f"{100 * stats.cleared / stats.players:.0f}%" if stats.players else "-"
    minutes = ", ".join(f"{minute}-{minute + 1} min: {count}" for minute, count in enumerate(stats.clear_minutes) if count)
    return f"{stats.players} played, {stats.cleared} cleared ({share})" + (f"; clears {minutes}" if minutes else "")


async def _show(client: RaceClient, args: argparse.Namespace) -> None:
    info = await client.daily(args.day)
    if args.json:
        emit_json(as_map(info) | {"type": "daily_info"})
        return
    tier = info.difficulty.value if info.difficulty is not None else "any tier"
    print(f"Daily deal of {info.day} (UTC): {info.profile}, {tier}, {info.time_limit // 60} min per attempt")
    print(f"Commitment: {info.commitment}")
    print(f"Your attempt: {result_text(info.own) if info.own is not None else 'none yet'}; streak {info.streak} (best {info.best_streak})")
    if not info.over:
        print("The seed, the leaderboard and everybody's attempts open when the day ends (00:00 UTC).")
        return
    print(f"Seed {info.seed}, salt {info.salt}; the solver's line: {' '.join(info.proving_line or [])}")
    if info.stats is not None:
        print(stats_text(info.stats))
    for entry in info.top or []:
        print(f"{entry.rank:>4}. {entry.handle:<20} {result_text(entry.result)}")


async def _board(client: RaceClient, args: argparse.Namespace) -> None:
    board = await client.daily_board(args.day, limit=args.limit)
    if args.json:
        emit_json(as_map(board) | {"type": "daily_board_page"})
        return
    print(f"Leaderboard of {board.day}: {stats_text(board.stats)}")
    for entry in board.entries:
        print(f"{entry.rank:>4}. {entry.handle:<20} {result_text(entry.result)}")
    if board.own is not None:
        print(f"You: #{board.own.rank}")


async def _replay(client: RaceClient, args: argparse.Namespace) -> None:
    replay = await client.daily_replay(args.day, args.handle)
    if args.json:
        emit_json(as_map(replay) | {"type": "daily_replay_page"})
        return
    print(f"{replay.handle or 'Your'} attempt of {replay.day}: {result_text(replay.result)}")
    for number, (move, at) in enumerate(zip(replay.moves, replay.times, strict=True), start=1):
        print(f"{number:>4}. {at / 1000:7.1f} s  {move}")


async def _archive(client: RaceClient, args: argparse.Namespace) -> None:
    archive = await client.daily_archive(limit=args.limit)
    if args.json:
        emit_json(as_map(archive) | {"type": "daily_days"})
        return
    print(f"{archive.total} past days; streak {archive.streak} (best {archive.best_streak})")
    for day in archive.days:
        own = result_text(day.own) if day.own is not None else "-"
        print(f"{day.day}  {day.players:>5} played {day.cleared:>5} cleared   you: {own}")


async def _play(client: RaceClient, args: argparse.Namespace) -> int:
    """The attempt in line mode: each typed line a move (or ``board``, ``stop``); ends with the attempt."""
    attempt = await client.daily_start(args.day)
    board = board_from_layout(attempt.columns, attempt.bouquet, Rules(Profile.CLASSIC))
    for move in attempt.moves:  # a resumed attempt
        board.play(parse_action(move))
    made = len(attempt.moves)
    kind = "counted" if attempt.counted else "uncounted"
    print(f"Daily deal of {attempt.day}: your {kind} attempt ({len(attempt.moves)} moves made); 'stop' ends it.", flush=True)
    print(board_text(board), flush=True)
    result = attempt.result
    async for line in StdinLines():
        text = line.strip()
        if not text:
            continue
        if text == "board":
            print(board_text(board), flush=True)
            continue
        try:
            if text == "stop":
                result = (await client.daily_stop(attempt.attempt)).result
            else:
                typed = read_typed_move(board, text)
                if typed.move is None:
                    print(f"{text}: say where to ({', '.join(action_text(choice) for choice in typed.choices) or 'no legal move'})", flush=True)
                    continue
                moved = await client.daily_move(attempt.attempt, made, action_text(typed.move))
                board.play(typed.move)
                made += 1
                result = moved.result
                print(f"{action_text(typed.move)}: {result.count}/52", flush=True)
        except (EngineError, ServerError) as error:
            print(f"refused: {error}", flush=True)
            continue
        if result.state is not AttemptState.PLAYING:
            break
    print(f"Attempt over: {result_text(result)}", flush=True)
    return EXIT_OK if result.state is AttemptState.CLEARED else EXIT_REFUSED
