"""A race record of any shape is either verified or refused with :class:`RecordInvalid`, never a bare exception
(``flowergarden verify`` turns RecordInvalid into its ``record_invalid`` error; anything else would be a traceback)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.race.record import RECORD_FORMAT, RECORD_VERSION, RecordInvalid, verify_record


def record(*events: dict[str, Any]) -> dict[str, Any]:
    numbered = [{"seq": seq, **event} for seq, event in enumerate(events, start=1)]
    return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "race": {"race": "r", "settings": {}}, "events": numbered}


@pytest.mark.parametrize("seed", [float("inf"), -5, 2**64, "seven", [1]])
def test_a_seed_that_is_no_64_bit_integer_is_refused_as_invalid(seed: Any) -> None:
    with pytest.raises(RecordInvalid, match="seed"):
        verify_record(record({"type": "countdown", "seed": seed}))


@pytest.mark.parametrize("slot", [[1], {"a": 1}, "0", True])
def test_a_result_line_whose_slot_is_no_integer_names_no_seat(slot: Any) -> None:
    result = {"type": "result", "winner": None, "reason": "draw", "players": [{"slot": slot, "count": 0, "moves": 0}]}
    with pytest.raises(RecordInvalid, match="no line for player 0"):
        verify_record(record({"type": "countdown", "seed": 1}, result))


def test_a_winner_given_as_true_is_no_seat() -> None:
    players = [{"slot": slot, "count": 0, "moves": 0} for slot in (0, 1)]
    with pytest.raises(RecordInvalid, match="does not follow"):
        verify_record(
            record({"type": "countdown", "seed": 1}, {"type": "result", "winner": True, "reason": "count", "players": players})
        )
