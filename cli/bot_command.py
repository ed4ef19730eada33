"""``flowergarden bot``: a practice bot that races people through the ordinary protocol."""

from __future__ import annotations

import argparse
import random
import secrets
from pathlib import Path
from typing import Any

from cli.connected import add_server_argument, run_connected
from cli.output import EXIT_USAGE, CommandError, whole_number
from cli.player_commands import PASSWORD_ENV, read_password
from client import RaceClient
from client.practice_bot import LEVELS, BotBrain, PracticeBot
from client.race_view import player_label, rules_of
from shared.protocol import Queued, RaceResult, RaceSettings, Seated


def register(subparsers: Any) -> None:
    """Add ``bot``."""
    parser = subparsers.add_parser(
        "bot",
        help="run a practice bot that races people",
        description=(
            "Race as a practice bot: a registered bot account (labelled as a bot in every view) that plays with the "
            "solver at --level 1 (beginner: slow, often a random move) to 5 (follows the solver's winning line, about a "
            "move a second), paced like a person. By default it opens a race in the lobby and waits for someone; "
            "--quick joins the quick-match queue, --join takes a given race. Without --handle it registers a new bot "
            f"account; with --handle it logs in with the bot's key (from --key-file, ${PASSWORD_ENV}, the terminal or stdin). "
            "A race outlives a server restart: the bot reconnects with its session (for about two minutes) and plays on "
            "from the position the server stored."
        ),
    )
    add_server_argument(parser)
    parser.add_argument("--level", type=int, choices=sorted(LEVELS), default=3, help="playing strength (default %(default)s)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--quick", action="store_true", help="race whoever asks quick match for the same settings")
    how.add_argument("--join", metavar="RACE_ID", help="join this race")
    parser.add_argument("--handle", help="log in to this bot account (default: register a new one)")
    parser.add_argument("--key-file", type=Path, metavar="FILE", help="the bot account's key (written there when registering)")
    parser.add_argument("--games", type=whole_number(0), default=1, metavar="N", help="races to play, one after the other (default 1; 0: until Ctrl-C)")
    parser.add_argument("--rated", action="store_true", help="rated races (quick match or created races; never unless asked)")
    parser.add_argument("--pace", type=float, default=1.0, metavar="FACTOR", help="scale the waits between moves (0: no wait)")
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)  # fixed deals for tests and demos (created races only)
    parser.set_defaults(handler=run_bot)


def run_bot(args: argparse.Namespace) -> int:
    """Play ``--games`` races as a bot."""
    if args.pace < 0:
        raise CommandError("bad_usage", "--pace must be 0 or more", exit_code=EXIT_USAGE)
    return run_connected(args, _bot)


def _say(text: str) -> None:
    print(f"bot: {text}", flush=True)


async def _account(client: RaceClient, args: argparse.Namespace) -> None:
    """Log in to the bot account, or register a new one (saving its key if asked)."""
    if args.handle:
        await client.hello(args.handle)
        key = args.key_file.read_text(encoding="utf-8").strip() if args.key_file else read_password("Bot key: ")
        await client.login(args.handle, key)
        return
    handle = f"Bot{args.level}_{secrets.token_hex(3)}"
    await client.hello(handle)
    reply = await client.register(handle, bot=True)
    if args.key_file is not None and reply.key is not None:
        args.key_file.write_text(reply.key + "\n", encoding="utf-8")
        args.key_file.chmod(0o600)
        _say(f"registered bot account {handle}; its key is in {args.key_file}")
    else:
        _say(f"registered bot account {handle}")


async def _bot(args: argparse.Namespace) -> None:
    async with await RaceClient.connect(args.server) as client:
        await _account(client, args)
        played = 0
        while args.games == 0 or played < args.games:
            result = await _one_race(client, args, first=played == 0)
            played += 1
            winner = "a draw" if result.winner is None else player_label(
                result.players[result.winner].name, result.players[result.winner].account, result.players[result.winner].bot
            )
            _say(f"race {result.race} over: {winner} ({result.reason})")


async def _one_race(client: RaceClient, args: argparse.Namespace, *, first: bool) -> RaceResult:
    settings = RaceSettings(rated=args.rated, seed=args.seed)
    seated: Seated | Queued
    if args.join and first:
        seated = await client.join(args.join)
    elif args.quick or args.join:
        seated = await client.quick_match(RaceSettings(rated=args.rated))
    else:
        seated = await client.create(settings)
        _say(f"race {seated.race.race} open in the lobby; join it with: flowergarden race --server {args.server} --join {seated.race.race}")
    race = seated.race
    slot = seated.slot if isinstance(seated, Seated) else 0
    _say(f"level {args.level} playing race {race.race} as seat {slot}")
    brain = BotBrain(LEVELS[args.level], random.Random())
    bot = PracticeBot(client, brain, pace=args.pace, say=_say)
    return await bot.play(race.race, slot, rules_of(race.settings), reconnect=True)

