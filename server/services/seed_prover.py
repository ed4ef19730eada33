"""The seed pool's worker process: asks the solver whether deals are winnable, one request per line.

    python -m server.services.seed_prover
    stdin:  classic 1234 1.0        (profile, seed, budget in seconds)
    stdout: 1234 solved             (the solver's verdict: solved, unsolvable or unknown)

It imports only the engine, lowers its own priority so that moves are never
slowed down by it, and exits at the end of its input. A separate program (not
a multiprocessing worker) so that it never re-imports the embedding
program's main module and can be stopped at once.
"""

from __future__ import annotations

import contextlib
import os
import sys

from shared import Board, Profile, Rules
from shared.solver import Budget, solve


def verdict(profile: str, seed: int, seconds: float) -> str:
    """The solver's verdict on the deal of ``seed`` under ``profile`` within ``seconds``."""
    board = Board.deal(seed, Rules(Profile(profile)))
    return solve(board, Budget(seconds=seconds)).verdict.value


def main() -> int:
    """Answer requests until the end of input."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)
    for line in sys.stdin:
        profile, seed, seconds = line.split()
        print(seed, verdict(profile, int(seed), float(seconds)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
