"""``flowergarden deal`` and ``flowergarden play``: JSON and text output, every documented error shape, exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engine_positions import POSITION_FIELDS, VECTORS

from cli.main import main
from shared import Board, Profile, Rules, parse_action

ROOT = Path(__file__).resolve().parent.parent

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``flowergarden ARGS`` in-process with ``stdin`` (bytes or a JSON-able value); return (exit code, stdout, stderr)."""

    def invoke(*args: str, stdin: bytes | object = b"") -> tuple[int, str, str]:
        data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


def json_error(output: str) -> dict[str, Any]:
    """The ``error`` object of a JSON error document (fails the test if it is anything else)."""
    document = json.loads(output)
    assert set(document) == {"error"}
    error: dict[str, Any] = document["error"]
    assert isinstance(error["code"], str) and isinstance(error["message"], str) and error["message"]
    return error


def replayed(seed: int, moves: list[str], rules: Rules | None = None) -> dict[str, Any]:
    """The position JSON the engine itself gives after ``moves``."""
    board = Board.deal(seed, rules or Rules())
    for text in moves:
        board.play(parse_action(text))
    return board.to_json()


# --- deal ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS["deals"][::6], ids=lambda vector: vector["seed"])
def test_deal_json_prints_the_seed_profile_columns_and_bouquet_of_the_vectors(run: Run, vector: dict[str, Any]) -> None:
    code, out, err = run("deal", vector["seed"], "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"seed": int(vector["seed"]), "profile": "classic", "columns": vector["columns"], "bouquet": vector["bouquet"]}


def test_deal_accepts_a_hex_seed_and_records_the_profile(run: Run) -> None:
    code, out, _ = run("deal", "0x2A", "--profile", "foundation-only", "--json")
    document = json.loads(out)
    assert code == 0
    assert (document["seed"], document["profile"]) == (42, "foundation-only")
    assert document["columns"] == json.loads(run("deal", "42", "--json")[1])["columns"]


def test_deal_without_json_shows_a_readable_board(run: Run) -> None:
    code, out, err = run("deal", "42")
    assert (code, err) == (0, "")
    assert out.startswith("Seed 42 (classic)\n")
    assert "Column 1     7♣ 3♥ K♣ A♠ 2♠ A♣" in out
    assert "Bouquet      8♦ Q♦" in out
    assert "(0/52)" in out


@pytest.mark.parametrize("seed", ["-1", str(2**64), "abc", "1.5", "4_2", "9" * 5000, ""])
def test_deal_refuses_a_bad_seed_with_a_json_usage_error_and_exit_2(run: Run, seed: str) -> None:
    code, out, err = run("deal", seed, "--json")
    error = json_error(out)
    assert (code, err) == (2, "")
    assert error["code"] == "bad_usage"
    assert "seed" in error["message"]
    assert error["usage"].startswith("usage: flowergarden deal")


@pytest.mark.parametrize(
    "args", [("deal", "--json"), ("deal", "1", "--profile", "spider", "--json"), ("shuffle", "--json"), ("deal", "1", "--jsn", "--json")]
)
def test_every_usage_error_is_a_json_error_when_json_is_asked_for(run: Run, args: tuple[str, ...]) -> None:
    code, out, _ = run(*args)
    assert code == 2
    assert json_error(out)["code"] == "bad_usage"


def test_usage_errors_without_json_go_to_stderr_with_the_usage(run: Run) -> None:
    code, out, err = run("deal", "-5")
    assert (code, out) == (2, "")
    assert err.startswith("usage: flowergarden deal")
    assert "flowergarden: error [bad_usage]" in err


# --- play: success ------------------------------------------------------------------------------------------


def test_play_json_prints_the_position_after_the_moves(run: Run) -> None:
    code, out, err = run("play", "--json", stdin={"seed": 42, "moves": ["AC 1>f", "TC b>2"]})
    document = json.loads(out)
    assert (code, err) == (0, "")
    assert set(document) == POSITION_FIELDS
    assert document == replayed(42, ["AC 1>f", "TC b>2"])
    assert document["foundations"]["C"] == "AC"
    assert document["foundation_count"] == 1
    assert document["columns"][1][-1] == "TC"


def test_play_with_only_a_seed_prints_the_fresh_position(run: Run) -> None:
    code, out, _ = run("play", "--json", stdin={"seed": 3})
    assert code == 0
    assert json.loads(out) == Board.deal(3).to_json()


def test_play_counts_undos_and_applies_the_redeal(run: Run) -> None:
    moves = ["AC 1>f", "undo", "AC 1>f", "redeal"]
    code, out, _ = run("play", "--json", stdin={"seed": 42, "options": {"undo": True, "redeal_once": True}, "moves": moves})
    document = json.loads(out)
    assert code == 0
    assert (document["undos"], document["redeal_used"], document["can_redeal"], document["can_undo"]) == (1, True, False, False)
    assert document == replayed(42, moves, Rules(undo=True, redeal_once=True))


def test_play_follows_the_foundation_only_profile(run: Run) -> None:
    code, out, _ = run("play", "--json", stdin={"seed": 42, "profile": "foundation-only", "moves": ["AC 1>f"]})
    document = json.loads(out)
    assert code == 0
    assert document["profile"] == "foundation-only"
    assert all(text.endswith(">f") for text in document["legal"])
    assert document == replayed(42, ["AC 1>f"], Rules(Profile.FOUNDATION_ONLY))


def test_play_accepts_the_seed_as_text_and_the_deal_output_with_moves_added(run: Run) -> None:
    dealt = json.loads(run("deal", str(2**64 - 1), "--json")[1])
    code, out, _ = run("play", "--json", stdin={**dealt, "seed": str(2**64 - 1), "moves": []})
    assert code == 0
    assert json.loads(out)["seed"] == 2**64 - 1
    assert json.loads(out)["columns"] == dealt["columns"]


def test_play_without_json_shows_the_board_status_and_legal_moves(run: Run) -> None:
    code, out, err = run("play", stdin={"seed": 42, "moves": ["AC 1>f"]})
    assert (code, err) == (0, "")
    assert "Column 1     7♣ 3♥ K♣ A♠ 2♠\n" in out
    assert "(1/52)" in out
    assert out.rstrip().splitlines()[-1].startswith("Status: playing   undos: 0   legal: ")


# --- play: an illegal move ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moves", "index", "code"),
    [
        (["AC 1>f", "AC 1>f"], 1, "card_not_at_source"),
        (["TC b>1"], 0, "column_rank_mismatch"),
        (["AS 1>f"], 0, "card_covered"),
        (["undo"], 0, "undo_not_allowed"),
        (["redeal"], 0, "redeal_not_allowed"),
        (["AC 1>f", "5X b>3"], 1, "bad_card"),
        (["AC"], 0, "bad_move"),
        (["AC 1>b"], 0, "bad_place"),
    ],
)
def test_play_stops_at_the_first_illegal_move_with_index_move_code_and_message(run: Run, moves: list[str], index: int, code: str) -> None:
    exit_code, out, err = run("play", "--json", stdin={"seed": 42, "moves": moves})
    error = json_error(out)
    assert (exit_code, err) == (1, "")
    assert set(error) == {"index", "move", "code", "message"}
    assert (error["index"], error["move"], error["code"]) == (index, moves[index], code)


@pytest.mark.parametrize("bad_move", [7, None, ["AC 1>f"], {"move": "AC 1>f"}, float("nan")])
def test_a_move_that_is_not_a_text_is_a_bad_move_echoed_as_null(run: Run, bad_move: object) -> None:
    data = json.dumps({"seed": 42, "moves": ["AC 1>f", bad_move]}).encode()  # NaN is written as the token NaN
    code, out, _ = run("play", "--json", stdin=data)
    error = json_error(out)
    assert code == 1
    assert (error["index"], error["move"], error["code"]) == (1, None, "bad_move")


def test_an_illegal_move_without_json_is_reported_on_stderr_with_its_index(run: Run) -> None:
    code, out, err = run("play", stdin={"seed": 42, "moves": ["AC 1>f", "AC 1>f"]})
    assert (code, out) == (1, "")
    assert err.startswith("flowergarden: error [card_not_at_source] (index 1, move 'AC 1>f'): ")


# --- play: a malformed document -----------------------------------------------------------------------------

MALFORMED_DOCUMENTS = {
    "empty": b"",
    "not-json": b"seed=42",
    "junk-bytes": b"\xff\xfe\x00\x81junk",
    "a-list": b"[1]",
    "a-string": b'"seed"',
    "no-seed": b'{"moves": []}',
    "negative-seed": b'{"seed": -1}',
    "float-seed": b'{"seed": 1.5}',
    "bool-seed": b'{"seed": true}',
    "nan-seed": b'{"seed": NaN}',
    "seed-past-64-bits": b'{"seed": 18446744073709551616}',
    "seed-of-5000-digits": b'{"seed": ' + b"9" * 5000 + b"}",
    "seed-text-not-a-number": b'{"seed": "forty-two"}',
    "moves-a-text": b'{"seed": 1, "moves": "AC 1>f"}',
    "moves-an-object": b'{"seed": 1, "moves": {"0": "AC 1>f"}}',
    "options-a-list": b'{"seed": 1, "options": []}',
    "option-not-a-bool": b'{"seed": 1, "options": {"undo": "yes"}}',
    "unknown-option": b'{"seed": 1, "options": {"redeal": true}}',
    "unknown-profile": b'{"seed": 1, "profile": "spider"}',
    "nested-100000-deep": b"[" * 100_000,
}


@pytest.mark.parametrize("stdin", MALFORMED_DOCUMENTS.values(), ids=MALFORMED_DOCUMENTS.keys())
def test_play_refuses_a_malformed_document_with_bad_input_and_exit_2(run: Run, stdin: bytes) -> None:
    code, out, err = run("play", "--json", stdin=stdin)
    error = json_error(out)
    assert (code, err) == (2, "")
    assert set(error) == {"code", "message"}
    assert error["code"] == "bad_input"


def test_a_malformed_document_without_json_is_reported_on_stderr(run: Run) -> None:
    code, out, err = run("play", stdin=b"{")
    assert (code, out) == (2, "")
    assert err.startswith("flowergarden: error [bad_input]: stdin is not a JSON document")


# --- the installed command, as another program sees it ------------------------------------------------------


def flowergarden(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the real command in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *args], check=False, input=stdin, capture_output=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=60
    )


@pytest.mark.parametrize("stdin", [b"\xff\xfe\x00\x81junk", b"[" * 100_000, b'{"seed": ' + b"9" * 5000 + b"}"], ids=["junk", "deep", "huge"])
def test_the_command_never_prints_a_traceback(stdin: bytes) -> None:
    result = flowergarden("play", "--json", stdin=stdin)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "bad_input"


def test_a_terminal_that_cannot_show_suit_symbols_gets_letters_and_escaped_json() -> None:
    text = flowergarden("deal", "42", env={"PYTHONIOENCODING": "ascii"})
    assert text.returncode == 0
    assert b"Column 1     7C 3H KC AS 2S AC" in text.stdout
    refused = flowergarden("play", "--json", stdin=b'{"seed": 42, "moves": ["1X b>1"]}', env={"PYTHONIOENCODING": "ascii"})
    assert refused.returncode == 1
    assert b"Traceback" not in refused.stderr
    assert json_error(refused.stdout.decode("ascii"))["code"] == "bad_card"
    solved = flowergarden("solve", "42", "--nodes", "1000", env={"PYTHONIOENCODING": "ascii"})
    assert solved.returncode == 0 and b"Traceback" not in solved.stderr
    assert b"Column 1     7C 3H KC AS 2S AC" in solved.stdout and b"Verdict:" in solved.stdout


@pytest.mark.parametrize(
    ("command", "says", "never"),
    [("deal", "0 done, 2 bad command line", "illegal move"), ("replay", "flowergarden history", "flowergarden live")],
)
def test_the_help_of_a_command_names_only_what_applies_to_it(
    capsys: pytest.CaptureFixture[str], command: str, says: str, never: str
) -> None:
    """deal plays no moves (so no exit code 1); a finished race to replay is no longer among the live races."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert says in shown and never not in shown
