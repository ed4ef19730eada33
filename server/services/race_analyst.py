"""The post-race analysis worker process: the solver on finished races, one JSON request per line.

    python -m server.services.race_analyst
    stdin:  {"seed": "7", "profile": "classic", "undo": false, "redeal_once": false, "lines": [[...], [...]],
             "seconds": 2.0, "signal_seconds": 0.25, "signal_solves": 40}
    stdout: {"deal": "solved", "winning_line": [...], "players": [{...}, {...}], "signals": [{...}, {...}]}

    stdin:  {"job": "solve_from", "seed": "7", "profile": "classic", "undo": false, "redeal_once": false,
             "actions": [...], "seconds": 3.0}
    stdout: {"verdict": "solved", "line": [...]}

For each player: where its line lost the win (shared/solver/analysis.py); the deal's verdict and a winning line
from the start; and the assistance signals (the share of moves on the solver's line). Like the seed prover it
imports only the engine (and the worker loop), runs at low priority and exits at the end of its input, so no
analysis ever slows a move; a server that went away ends it quietly (no BrokenPipeError traceback).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from server.services.worker_process import answer_lines
from shared import Profile, Rules
from shared.solver import Budget
from shared.solver.analysis import analyse_line, line_from, line_signals, winning_line


def _rules(request: dict[str, Any]) -> Rules:
    return Rules(Profile(request["profile"]), undo=bool(request["undo"]), redeal_once=bool(request["redeal_once"]))


def solve_position(request: dict[str, Any]) -> dict[str, Any]:
    """A winning line from the position after a prefix of a player's actions (``solve_from``)."""
    verdict, line = line_from(int(request["seed"]), _rules(request), list(request["actions"]), Budget(seconds=float(request["seconds"])))
    return {"verdict": verdict.value, "line": line}


def analyse(request: dict[str, Any]) -> dict[str, Any]:
    """The analysis of one finished race (see the module docstring for the fields)."""
    seed = int(request["seed"])
    rules = _rules(request)
    budget = Budget(seconds=float(request["seconds"]))
    signal_budget = Budget(seconds=float(request["signal_seconds"]))
    verdict, line = winning_line(seed, rules, budget)
    players: list[dict[str, Any]] = []
    signals: list[dict[str, Any]] = []
    for slot, actions in enumerate(request["lines"]):
        analysis = analyse_line(seed, rules, list(actions), budget)
        players.append(
            {
                "slot": slot,
                "verdict": analysis.verdict.value,
                "fatal_action": analysis.fatal_action,
                "fatal_move": analysis.fatal_move,
                "first_action": analysis.first_action,
                "last_action": analysis.last_action,
                "continuation": analysis.continuation or None,
            }
        )
        found = line_signals(seed, rules, list(actions), signal_budget, int(request["signal_solves"]))
        signals.append({"slot": slot, "judged_moves": found.judged, "on_line_moves": found.on_line, "solves": found.solves})
    return {"deal": verdict.value, "winning_line": line, "players": players, "signals": signals}


def answer(line: str) -> dict[str, Any]:
    """The answer to one request line."""
    request = json.loads(line)
    return solve_position(request) if request.get("job") == "solve_from" else analyse(request)


def main() -> int:
    """Answer requests until the end of input."""
    return answer_lines(answer, niceness=15)


if __name__ == "__main__":
    sys.exit(main())
