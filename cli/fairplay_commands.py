"""``flowergarden verify-deal`` and ``analyse``: check a race's deal commitment, and where each player lost the win.

``verify-deal RACE`` replays a finished race from the server and checks its reveal: the seed and salt hash to the
countdown's commitment (docs/PROTOCOL.md "Fair deals"), the layout played is that seed's deal, and a proving line
wins it. ``verify-deal --commitment H --seed S --salt X`` checks values from anywhere. ``analyse RACE`` prints the
server's post-race analysis; ``analyse FILE`` computes one locally from a JSON document
(``{"seed": 7, "profile": "classic", "options": {...}, "lines": [[...], [...]]}``, or ``"moves"`` for one line).
``analyse RACE|FILE --player N --from K`` prints a winning line from the position after player N's first K actions
instead (RACE: the server's solver, ``solve_from``; FILE: computed here).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from cli.connected import run_connected
from cli.engine_commands import add_profile_argument, board_from_game_document, seed_argument
from cli.output import EXIT_OK, EXIT_USAGE, CommandError, emit_json, read_json_input
from client import RaceClient
from client.race_view import line_verdict_words
from shared import Board, Profile
from shared.protocol import Countdown, PlayerAnalysis, RaceAnalysis, RaceResult, plain
from shared.race.reveal import check_reveal
from shared.solver import Budget
from shared.solver.analysis import analyse_line, line_from, winning_line

VERIFY_HELP = """Check a race's deal: the revealed seed and salt hash to the commitment published at the countdown, the
layout played is the seed's deal, and (solvable-only races) the proving line wins it. Exit 0 when every check holds,
1 when one fails (code commitment_mismatch, layout_mismatch or line_does_not_win)."""


def register(subparsers: Any) -> None:
    """Add ``verify-deal`` and ``analyse``."""
    verify = subparsers.add_parser("verify-deal", help="check a finished race's deal commitment", description=VERIFY_HELP)
    verify.add_argument("race", nargs="?", metavar="RACE", help="a finished race's id (read from --server)")
    verify.add_argument("--server", default="ws://127.0.0.1:8765", help="server URL (default %(default)s)")
    verify.add_argument("--commitment", metavar="HEX", help="check these values instead of a race: the commitment …")
    verify.add_argument("--seed", type=seed_argument, help="… the revealed seed …")
    verify.add_argument("--salt", metavar="HEX", help="… the revealed salt (32 hex digits) …")
    verify.add_argument("--line", metavar="MOVES", help="… and the proving line, moves separated by commas, if any")
    add_profile_argument(verify)
    verify.add_argument("--json", action="store_true", help="print JSON")
    verify.set_defaults(handler=run_verify)

    analyse = subparsers.add_parser(
        "analyse",
        help="where each player of a race lost the win",
        description=(
            "Print the post-race analysis of a finished race (RACE: from --server, waiting up to --wait seconds while "
            "the server computes it) or compute one from a JSON file (FILE: seed, profile, options, lines or moves). "
            "With --from K: a winning line from the position after the first K actions of --player N's line instead "
            "(RACE: the server's solver, within its budget; FILE: solved here within --budget)."
        ),
    )
    analyse.add_argument("target", metavar="RACE|FILE")
    analyse.add_argument("--server", default="ws://127.0.0.1:8765", help="server URL (default %(default)s)")
    analyse.add_argument("--wait", type=float, default=30.0, metavar="SECONDS", help="wait this long for the server's analysis (default 30)")
    analyse.add_argument("--budget", type=float, default=5.0, metavar="SECONDS", help="FILE: solver time per position (default 5)")
    analyse.add_argument("--player", type=int, choices=(1, 2), default=1, help="with --from: whose line, 1 (creator) or 2 (default 1)")
    analyse.add_argument(
        "--from", dest="from_actions", type=int, metavar="K", help="a winning line from the position after the player's first K actions (0: the deal)"
    )
    analyse.add_argument("--json", action="store_true", help="print JSON")
    analyse.set_defaults(handler=run_analyse)


# --- verify-deal -----------------------------------------------------------------------------------


def check_deal(
    commitment: str, seed: int, profile: Profile, salt_hex: str, line: list[str] | None, layout: Countdown | None = None
) -> list[tuple[str, bool, str]]:
    """Each check of a reveal: (name, passed, what it says) (:func:`shared.race.reveal.check_reveal`)."""
    return check_reveal(commitment, seed, profile, salt_hex, line, None if layout is None else (layout.columns, layout.bouquet))


async def _race_reveal(args: argparse.Namespace) -> list[tuple[str, bool, str]]:
    async with await RaceClient.connect(args.server) as client:
        await client.hello("verifier")
        countdown: Countdown | None = None
        result: RaceResult | None = None
        first = await client.replay_page(args.race, limit=1)
        async for event in client.replay(args.race):
            if isinstance(event, Countdown):
                countdown = event
            elif isinstance(event, RaceResult):
                result = event
    if countdown is None or result is None or result.seed is None or result.salt is None:
        raise CommandError("no_reveal", f"race {args.race} has no committed deal to check (stored before deals were committed?)")
    return check_deal(countdown.commitment, result.seed, Profile(first.race.settings.profile), result.salt, result.proving_line, countdown)


def _verify_checks(args: argparse.Namespace) -> list[tuple[str, bool, str]]:
    """(check, passed, what it says) for the given values, or for RACE's reveal read from the server."""
    if args.race is None:
        if args.commitment is None or args.seed is None or args.salt is None:
            raise CommandError("bad_usage", "give a RACE, or --commitment, --seed and --salt", exit_code=EXIT_USAGE)
        line = [move.strip() for move in args.line.split(",")] if args.line else None
        return check_deal(args.commitment, args.seed, Profile(args.profile), args.salt, line)
    found: list[list[tuple[str, bool, str]]] = []

    async def work(args: argparse.Namespace) -> None:
        found.append(await _race_reveal(args))

    run_connected(args, work)
    return found[0]


def run_verify(args: argparse.Namespace) -> int:
    """Check a race's reveal, or given values."""
    checks = _verify_checks(args)
    if args.json:
        emit_json({"checks": [{"check": name, "ok": ok, "what": what} for name, ok, what in checks], "ok": all(ok for _, ok, _ in checks)})
    else:
        for name, ok, what in checks:
            print(f"{'ok    ' if ok else 'FAILED'} {name}: {what}")
    failed = [name for name, ok, _ in checks if not ok]
    if failed:
        codes = {"commitment": "commitment_mismatch", "layout": "layout_mismatch", "proving line": "line_does_not_win"}
        if args.json:
            return 1
        raise CommandError(codes[failed[0]], f"the deal does not verify: {', '.join(failed)}")
    return EXIT_OK


# --- analyse -----------------------------------------------------------------------------------------


def analysis_text(analysis: RaceAnalysis, names: dict[int, str]) -> list[str]:
    """The analysis for people: the deal, then one paragraph per player."""
    deal_line = {"solved": "winnable", "unsolvable": "proven unwinnable", "unknown": "undecided within the budget"}.get(analysis.deal, analysis.deal)
    lines = [f"Deal: {deal_line}."]
    if analysis.winning_line:
        lines.append(f"  A winning line ({len(analysis.winning_line)} moves): {', '.join(analysis.winning_line)}")
    for player in sorted(analysis.players, key=lambda p: p.slot):
        lines.append(f"{names.get(player.slot, f'Player {player.slot + 1}')}: {line_verdict_words(player)}")
        if player.continuation:
            lines.append(f"  Winning continuation: {', '.join(player.continuation)}")
    return lines


def analyse_file(path: Path, budget_seconds: float) -> RaceAnalysis:
    """A local analysis of a JSON document (see the module docstring)."""
    board, lines = _file_document(path)
    assert board.seed is not None
    seed, rules = board.seed, board.rules
    budget = Budget(seconds=budget_seconds)
    verdict, line = winning_line(seed, rules, budget)
    players = []
    for slot, actions in enumerate(lines):
        found = analyse_line(seed, rules, actions, budget)
        players.append(
            PlayerAnalysis(slot, found.verdict, found.fatal_action, found.fatal_move, found.first_action, found.last_action, found.continuation or None)
        )
    return RaceAnalysis(path.name, verdict.value, line or None, players, round(budget_seconds * 1000), 0)


async def _server_analysis(args: argparse.Namespace, out: list[tuple[RaceAnalysis, dict[int, str]]]) -> None:
    async with await RaceClient.connect(args.server) as client:
        await client.hello("analyst")
        names = {player.slot: player.name for player in (await client.replay_page(args.target, limit=1)).race.players}
        loop = asyncio.get_running_loop()
        until = loop.time() + args.wait
        while True:
            report = await client.analysis(args.target)
            if report.analysis is not None:
                out.append((report.analysis, names))
                return
            if loop.time() >= until:
                raise CommandError("analysis_pending", f"the server has not finished analysing race {args.target}; try again later")
            await asyncio.sleep(1.0)


def _file_document(path: Path) -> tuple[Board, list[list[str]]]:
    """The deal and the players' lines of a JSON document (see the module docstring)."""
    try:
        document = read_json_input(path.read_bytes())
    except OSError as error:
        raise CommandError("bad_input", f"{path}: {error}", exit_code=EXIT_USAGE) from None
    board, moves = board_from_game_document(document)  # the document of ``flowergarden play``, or with ``lines``
    lines = document.get("lines", [moves])
    if not isinstance(lines, list) or not all(isinstance(line, list) for line in lines):
        raise CommandError("bad_input", "lines must be a list of move lists", exit_code=EXIT_USAGE)
    return board, [[str(action) for action in line] for line in lines]


def position_line_text(name: str, actions: int, verdict: str, line: list[str]) -> list[str]:
    """A ``--from`` answer for people."""
    where = "the deal" if actions == 0 else f"{name}'s position after {actions} action{'s' if actions != 1 else ''}"
    said = {
        "solved": f"winnable: a winning line ({len(line)} moves)" if line else "already won",
        "unsolvable": "proven lost: no sequence of moves wins",
        "unknown": "undecided within the solver's budget (or only the unused redeal could save it)",
    }.get(verdict, verdict)
    return [f"From {where}: {said}" + (f": {', '.join(line)}" if line else ".")]


async def _server_line(args: argparse.Namespace, out: list[dict[str, Any]]) -> None:
    async with await RaceClient.connect(args.server) as client:
        await client.hello("analyst")
        names = {player.slot: player.name for player in (await client.replay_page(args.target, limit=1)).race.players}
        answer = await client.solve_from(args.target, args.player - 1, args.from_actions)
        out.append({**plain(answer), "name": names.get(answer.slot, f"Player {args.player}")})


def _file_line(path: Path, player: int, actions: int, budget_seconds: float) -> dict[str, Any]:
    board, lines = _file_document(path)
    assert board.seed is not None
    if player > len(lines):
        raise CommandError("bad_input", f"{path} has {len(lines)} line(s): there is no player {player}", exit_code=EXIT_USAGE)
    line = lines[player - 1]
    if actions > len(line):
        raise CommandError("bad_input", f"player {player} made {len(line)} actions: --from {actions} is past the end", exit_code=EXIT_USAGE)
    verdict, found = line_from(board.seed, board.rules, line[:actions], Budget(seconds=budget_seconds))
    budget_ms = round(budget_seconds * 1000)
    return {"slot": player - 1, "actions": actions, "verdict": verdict.value, "line": found, "budget_ms": budget_ms, "name": f"Player {player}"}


def _file_target(target: str) -> Path | None:
    """``analyse``'s RACE|FILE: the file, or None for a race id; a path to no file (a race id has no ``/`` or ``.``)
    is a usage error here rather than a race the server does not know (or a server that is not running)."""
    path = Path(target)
    if path.is_file():
        return path
    if "/" in target or "." in target or path.exists():
        raise CommandError("bad_input", f"cannot read {target}: not a file (RACE|FILE: a race id or a JSON file)", exit_code=EXIT_USAGE)
    return None


def run_position_line(args: argparse.Namespace) -> int:
    """``analyse … --from K``: a winning line from a point of a player's line."""
    if args.from_actions < 0:
        raise CommandError("bad_usage", "--from counts actions: 0 or more", exit_code=EXIT_USAGE)
    path = _file_target(args.target)
    if path is not None:
        answer = _file_line(path, args.player, args.from_actions, args.budget)
    else:
        found: list[dict[str, Any]] = []
        run_connected(args, lambda args: _server_line(args, found))
        answer = found[0]
    if args.json:
        emit_json({key: value for key, value in answer.items() if key not in ("type", "id")})
    else:
        print("\n".join(position_line_text(answer["name"], answer["actions"], answer["verdict"], answer["line"])))
    return EXIT_OK


def run_analyse(args: argparse.Namespace) -> int:
    """Print a race's analysis (from the server, or computed from a file), or with ``--from`` a line from a point."""
    if args.from_actions is not None:
        return run_position_line(args)
    path = _file_target(args.target)
    names: dict[int, str] = {}
    if path is not None:
        analysis = analyse_file(path, args.budget)
    else:
        found: list[tuple[RaceAnalysis, dict[int, str]]] = []
        run_connected(args, lambda args: _server_analysis(args, found))
        analysis, names = found[0]
    if args.json:
        emit_json(plain(analysis))
    else:
        print("\n".join(analysis_text(analysis, names)))
    return EXIT_OK
