"""The seed pool's worker process: asks the solver whether deals are winnable, and how hard, one request per line.

    python -m server.services.seed_prover
    stdin:  classic 1234 1.0        (profile, seed, budget in seconds)
    stdout: {"seed": "1234", "verdict": "solved", "difficulty": "easy", "line": ["5D b>3", ...]}

The verdict is the solver's (solved, unsolvable or unknown), the difficulty its
tier (shared/solver/difficulty.py) and the line the winning line it found (empty
unless solved). It imports only the engine (and the worker loop), lowers its own priority so that moves
are never slowed down by it, and exits at the end of its input. A separate program
(not a multiprocessing worker) so that it never re-imports the embedding
program's main module and can be stopped at once.
"""

from __future__ import annotations

import sys
from typing import Any

from server.services.worker_process import answer_lines
from shared import Board, Profile, Rules, action_text
from shared.solver import Budget, solve
from shared.solver.difficulty import difficulty_of


def proof(profile: str, seed: int, seconds: float) -> dict[str, Any]:
    """The solver's verdict, tier and winning line for the deal of ``seed`` under ``profile`` within ``seconds``."""
    result = solve(Board.deal(seed, Rules(Profile(profile))), Budget(seconds=seconds))
    return {
        "seed": str(seed),
        "verdict": result.verdict.value,
        "difficulty": difficulty_of(result).value,
        "line": [action_text(move) for move in result.moves],
    }


def answer(line: str) -> dict[str, Any]:
    """The proof asked for by one request line (``profile seed seconds``)."""
    profile, seed, seconds = line.split()
    return proof(profile, int(seed), float(seconds))


def main() -> int:
    """Answer requests until the end of input."""
    return answer_lines(answer, niceness=10)


if __name__ == "__main__":
    sys.exit(main())
