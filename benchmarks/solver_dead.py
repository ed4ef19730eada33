"""Dead-position checks as the race server runs them: answers and times of ``is_dead`` on positions met in play.

    python3 benchmarks/solver_dead.py [--deals 400] [--seconds 0.05] [--nodes 20000]

Plays 5–80 random moves in each of deals 1..--deals (a move to a foundation 60 % of the time when one exists,
fixed random seed), keeps every final position with legal moves but no foundation move (the positions the
server asks about), and runs ``is_dead`` on them with the server's budget, once with the compiled search (when
built) and once in pure Python. Prints the answers and time percentiles; docs/BENCHMARKS.md quotes them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shared import FOUNDATION, Board
from shared.solver import Budget, is_dead
from shared.solver import search as solver_search


def positions(deals: int) -> list[Board]:
    """Positions without a foundation move, reached by random play."""
    rng = random.Random(7)
    found: list[Board] = []
    for seed in range(1, deals + 1):
        board = Board.deal(seed)
        for _ in range(rng.randint(5, 80)):
            legal = board.legal_moves()
            if not legal:
                break
            lifts = [move for move in legal if move.target == FOUNDATION]
            board.push(rng.choice(lifts) if lifts and rng.random() < 0.6 else rng.choice(legal))
        if board.legal_moves() and not any(board.accepts_on_foundation(card) for card, _ in board.available()):
            found.append(board)
    return found


def main() -> None:
    """Run the checks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=0.05)
    parser.add_argument("--nodes", type=int, default=20_000)
    args = parser.parse_args()
    boards = positions(args.deals)
    print(f"{len(boards)} positions without a foundation move")
    engines = [True, False] if solver_search.native_available() else [False]
    for native in engines:
        solver_search.PREFER_NATIVE = native
        answers: dict[str, int] = {}
        times = []
        for board in boards:
            result = is_dead(board, Budget(seconds=args.seconds, nodes=args.nodes))
            answers[result.liveness.value] = answers.get(result.liveness.value, 0) + 1
            times.append(result.seconds * 1000)
        times.sort()
        print(
            f"{'compiled' if native else 'python'}: {answers}  median {statistics.median(times):.2f} ms  "
            f"p90 {times[int(0.9 * len(times))]:.2f} ms  max {times[-1]:.2f} ms"
        )


if __name__ == "__main__":
    main()
