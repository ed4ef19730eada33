"""A player's line of the result fits the terminal app's 80-column result panel when split in two: the whole line
(about 84 columns) wrapped mid-figure there ("… 0.3 s  1" / "move, 0 undos")."""

from __future__ import annotations

from client.race_view import standing_line
from shared.protocol import AttemptState
from shared.protocol.records import FinalStanding

PANEL_WIDTH = 74
"""The text width of the result panel in an 80-column terminal (its border and padding take the rest)."""


def test_a_split_result_line_fits_the_panel_of_an_80_column_terminal_for_every_attempt_ending() -> None:
    for ended in AttemptState:
        standing = FinalStanding(slot=0, player="p", name="A" * 12, count=52, left=0, ended=ended, time_ms=3_599_900, moves=999, undos=99)
        whole = standing_line(standing, you=True)
        split = standing_line(standing, you=True, split=True).split("\n")
        assert len(split) == 2 and all(len(line) <= PANEL_WIDTH for line in split), (ended, split)
        assert split[1].split() == whole.split()[-6:]  # the same time, moves and undos as the whole line
