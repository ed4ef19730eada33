"""``flowergarden solve``, ``hint``, ``dead`` and ``bench solver``: JSON answers, moves that replay, clean errors."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from solver_brute_force import random_board

from cli.main import main
from cli.solver_bench import percentile, wilson
from shared import Board, Rules, parse_move


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """Run ``flowergarden ARGS`` in-process; return the exit code, stdout parsed as JSON, and stderr."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def position_file(tmp_path: Path, board: Board) -> str:
    path = tmp_path / "position.json"
    path.write_text(json.dumps(board.to_json()), encoding="utf-8")
    return str(path)


def test_solve_prints_a_line_that_replays_to_a_win(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer, _ = run(capsys, "solve", "20", "--nodes", "20000", "--json")
    assert code == 0
    assert answer["verdict"] == "solved" and answer["nodes"] > 0 and answer["seconds"] >= 0
    board = Board.deal(20)
    for text in answer["moves"]:
        board.push(parse_move(text))
    assert board.is_won()


def test_solve_reads_a_position_file_as_play_prints_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    board = Board.deal(20)
    _, first, _ = run(capsys, "solve", "20", "--nodes", "20000", "--json")
    for text in first["moves"][:25]:
        board.push(parse_move(text))
    code, answer, _ = run(capsys, "solve", "--position", position_file(tmp_path, board), "--nodes", "20000", "--json")
    assert code == 0 and answer["verdict"] == "solved"
    for text in answer["moves"]:
        board.push(parse_move(text))
    assert board.is_won()


def test_an_unsolvable_deal_is_reported_with_no_moves(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer, _ = run(capsys, "solve", "5", "--nodes", "5000", "--json")
    assert code == 0 and answer["verdict"] == "unsolvable" and answer["moves"] == []


def test_a_spent_budget_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer, _ = run(capsys, "solve", "48", "--nodes", "50", "--json")
    assert (code, answer["verdict"], answer["nodes"]) == (0, "unknown", 50)


def test_hint_names_a_legal_move(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer, _ = run(capsys, "hint", "20", "--nodes", "20000", "--json")
    assert code == 0 and answer["verdict"] == "solved"
    assert Board.deal(20).is_legal(parse_move(answer["move"]))


def test_dead_proves_a_dead_position_and_sees_a_live_deal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = random_board(random.Random(111), 16 + 111 % 7, Rules(), bouquet_at_most=2, buried_low=0.8)
    code, answer, _ = run(capsys, "dead", "--position", position_file(tmp_path, dead), "--nodes", "100000", "--json")
    assert code == 0 and answer["liveness"] == "dead"
    code, answer, _ = run(capsys, "dead", "20", "--json")
    assert code == 0 and answer["liveness"] == "alive"


def test_text_output_says_what_it_searches_then_names_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "5", "--nodes", "5000"]) == 0
    output = capsys.readouterr().out
    assert "Column 1" in output and "Verdict: unsolvable" in output
    assert output.index("Searching for up to 10 s or 5000 positions (Ctrl-C stops) ...") < output.index("Verdict")


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        (["solve"], "bad_usage"),
        (["solve", "5", "--position", "x.json"], "bad_usage"),
        (["hint", "--position", "/nonexistent/position.json"], "bad_input"),
        (["dead", "5", "--budget", "0"], "bad_usage"),
        (["solve", "-3"], "bad_usage"),
        (["bench", "solver", "--seeds", "9..3"], "bad_usage"),
    ],
)
def test_bad_command_lines_give_a_json_error_and_exit_2(capsys: pytest.CaptureFixture[str], arguments: list[str], code: str) -> None:
    exit_code, answer, _ = run(capsys, *arguments, "--json")
    assert exit_code == 2
    assert answer["error"]["code"] == code and answer["error"]["message"]


@pytest.mark.parametrize(("content", "code"), [("{not json", "bad_input"), ('{"columns": 3}', "bad_position"), ("[1, 2]", "bad_position")])
def test_bad_position_files_give_a_json_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, code: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    exit_code, answer, _ = run(capsys, "solve", "--position", str(path), "--json")
    assert exit_code == 2 and answer["error"]["code"] == code


def test_bench_reports_rates_winnability_and_times(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = run(capsys, "bench", "solver", "--seeds", "8..10", "--budget", "5", "--jobs", "2", "--engine", "python", "--json")
    assert code == 0 and report["engine"] == "python"
    assert report["decks"] == 3 == report["solved"] + report["unsolvable"] + report["unknown"]
    assert report["unsolvable_seeds"] == [9] and report["solved"] == 2
    assert report["winnability"]["estimate"] == pytest.approx(2 / 3, abs=1e-4)
    low, high = report["winnability"]["wilson95_decided"]
    assert low < 2 / 3 < high
    assert report["seconds"]["median"] <= report["seconds"]["p90"] <= report["seconds"]["max"]
    assert report["peak_memory_mib"] > 0
    assert "3/3" in err


def test_wilson_interval_and_percentiles_match_known_values() -> None:
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.99) == 4.0
