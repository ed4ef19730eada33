"""Post-race analysis: was the deal winnable, and at which move did a player's position stop being winnable.

A player's line is the sequence of positions its actions went through, with
undone moves taken out (an undo returns to an earlier position of the line).
Along such a line winnability can only be lost, never regained: every way to
win from a later position is also a way to win from an earlier one. So the
winnable positions form a prefix of the line, and a bisection with the solver
finds where it ends in a logarithmic number of solves: the move from the last
winnable position to the first proven-lost one is the move that lost the win.

A position whose one redeal is still unused is never counted as lost: the
solver searches plain moves only (docs/SOLVER.md), and redealing might save it.
An UNKNOWN verdict (budget spent) narrows nothing: the answer then names the
range of moves in which the win was lost, or says the question stayed open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from shared.board import Board
from shared.moves import Action, Move, Special, action_text, parse_action
from shared.protocol.states import LineVerdict
from shared.race.replay import replay
from shared.rules import Rules
from shared.solver.api import solve
from shared.solver.results import Budget, Verdict

__all__ = [
    "LineAnalysis", "LineSignals", "LineVerdict", "analyse_line", "line_from", "line_positions", "line_signals", "winning_line",
]


@dataclass(frozen=True, slots=True)
class LineAnalysis:
    """The analysis of one player's line.

    Action numbers are 0-based indexes into the player's own action list (the
    ``seq`` of its moves), so a client can point at the action in a replay.
    """

    verdict: LineVerdict
    fatal_action: int | None = None
    fatal_move: str | None = None
    first_action: int | None = None
    last_action: int | None = None
    continuation: list[str] = field(default_factory=list)
    """A winning line from the last position known winnable (``still_winnable``: from where the player stopped;
    ``lost_at``: from the position before the fatal move)."""
    solves: int = 0
    """How many positions the solver was asked about."""


@dataclass(frozen=True, slots=True)
class _LinePosition:
    """One position of a line: the board, and the player's action number that reached it (-1 for the deal)."""

    board: Board
    action_index: int


def line_positions(seed: int, rules: Rules, actions: list[str]) -> list[_LinePosition]:
    """The positions of the player's line after ``actions`` (stored notation), undone moves taken out.

    Raises the engine's error if an action does not replay (a corrupt record).
    """
    board = Board.deal(seed, rules)
    line = [_LinePosition(board.copy(), -1)]
    for index, text in enumerate(actions):
        action: Action = parse_action(text)
        board.play(action)
        if action is Special.UNDO:
            line.pop()
        else:
            line.append(_LinePosition(board.copy(), index))
    return line


def _proven_lost(board: Board, verdict: Verdict) -> bool:
    """UNSOLVABLE proves a position lost unless an unused redeal could still change it."""
    return verdict is Verdict.UNSOLVABLE and not (board.rules.redeal_once and not board.redeal_used)


def analyse_line(seed: int, rules: Rules, actions: list[str], budget: Budget) -> LineAnalysis:
    """Where the player's line lost the win (see the module docstring); ``budget`` is per solved position."""
    line = line_positions(seed, rules, actions)
    if line[-1].board.is_won():
        return LineAnalysis(LineVerdict.WON)
    judge = _Judge(line, budget)
    at_end, end_line = judge(len(line) - 1)
    if at_end:
        return LineAnalysis(LineVerdict.STILL_WINNABLE, continuation=[action_text(m) for m in end_line], solves=judge.solves)
    at_start, start_line = judge(0) if len(line) > 1 else (at_end, end_line)
    if at_start is False:
        return LineAnalysis(LineVerdict.DEAL_NOT_WINNABLE, solves=judge.solves)
    if at_start is None or at_end is None:
        return LineAnalysis(LineVerdict.UNKNOWN, solves=judge.solves)
    return _bisect(judge, start_line, actions)


@dataclass(slots=True)
class _Judge:
    """Solves positions of the line, counting the solves: True winnable (with a line), False proven lost, None
    undecided within the budget."""

    line: list[_LinePosition]
    budget: Budget
    solves: int = 0

    def __call__(self, index: int) -> tuple[bool | None, list[Move]]:
        self.solves += 1
        board = self.line[index].board
        result = solve(board, self.budget)
        if result.verdict is Verdict.SOLVED:
            return True, result.moves
        return (False if _proven_lost(board, result.verdict) else None), []


def _bisect(judge: _Judge, start_line: list[Move], actions: list[str]) -> LineAnalysis:
    """Narrow the fatal action down between the winnable start and the lost end of the line, skipping positions the
    solver leaves undecided (the answer is then a range)."""
    line = judge.line
    winnable, winnable_line, lost = 0, start_line, len(line) - 1
    undecided: list[int] = []
    while lost - winnable > 1:
        candidates = [i for i in range(winnable + 1, lost) if i not in undecided]
        if not candidates:
            return LineAnalysis(
                LineVerdict.LOST_BETWEEN,
                first_action=line[winnable + 1].action_index,
                last_action=line[lost].action_index,
                continuation=[action_text(m) for m in winnable_line],
                solves=judge.solves,
            )
        middle = candidates[len(candidates) // 2]
        verdict, found = judge(middle)
        if verdict is True:
            winnable, winnable_line = middle, found
        elif verdict is False:
            lost = middle
        else:
            undecided.append(middle)
    fatal = line[lost].action_index
    return LineAnalysis(
        LineVerdict.LOST_AT,
        fatal_action=fatal,
        fatal_move=actions[fatal],
        continuation=[action_text(m) for m in winnable_line],
        solves=judge.solves,
    )



def winning_line(seed: int, rules: Rules, budget: Budget) -> tuple[Verdict, list[str]]:
    """Whether the deal can be won (by plain moves) and, when the solver finds one, a winning line from the start."""
    result = solve(Board.deal(seed, rules), budget)
    return result.verdict, [action_text(move) for move in result.moves]


def line_from(seed: int, rules: Rules, actions: list[str], budget: Budget) -> tuple[Verdict, list[str]]:
    """A winning line from the position after ``actions`` (a prefix of a player's stored actions, undos included).

    UNSOLVABLE only when proven lost: a position whose one redeal is unused answers UNKNOWN instead of UNSOLVABLE
    (the solver searches plain moves; redealing might save it). Raises the engine's error if an action does not replay.
    """
    board = replay(seed, rules, actions)
    result = solve(board, budget)
    if result.verdict is Verdict.UNSOLVABLE and not _proven_lost(board, result.verdict):
        return Verdict.UNKNOWN, []
    return result.verdict, [action_text(move) for move in result.moves]


@dataclass(frozen=True, slots=True)
class LineSignals:
    """Assistance signals of one attempt, for operators to review (never a verdict, never shown to players).

    ``on_line`` counts the moves made from a winnable position that were exactly the next move of the winning line
    the solver found from there; ``judged`` the moves made from positions the solver judged winnable. A player who
    copies a solver follows its lines move for move; a person finds other winning moves as often as these.
    """

    judged: int
    on_line: int
    solves: int


def line_signals(seed: int, rules: Rules, actions: list[str], budget: Budget, max_solves: int) -> LineSignals:
    """How often the player's moves were the solver's next winning move, along its line (undone moves taken out).

    One solve gives a whole winning line: while the player follows it no new solve is needed, so the cost is one
    solve per departure from the solver's line, at most ``max_solves`` (the rest of the line stays unjudged).
    """
    line = line_positions(seed, rules, actions)
    judged = on_line = solves = 0
    expected: list[str] = []
    for position, after in pairwise(line):
        if after.board.redeal_used != position.board.redeal_used:
            expected = []  # the redeal is not a solver move: the line from here is new
            continue
        if not expected:
            if solves >= max_solves:
                break
            solves += 1
            result = solve(position.board, budget)
            if result.verdict is not Verdict.SOLVED:
                continue
            expected = [action_text(move) for move in result.moves]
        judged += 1
        if actions[after.action_index] == expected[0]:
            on_line += 1
            expected = expected[1:]
        else:
            expected = []
    return LineSignals(judged=judged, on_line=on_line, solves=solves)
