"""``flowergarden bench load`` runs end to end on a tiny load (a smoke test: no figure is asserted, only that
both servers were driven and measured)."""

from __future__ import annotations

import json
import subprocess
import sys

from server_processes import ROOT


def test_bench_load_drives_the_race_server_and_the_floor_server_and_reports_both_as_json() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "load", "--mode", "closed", "--connections", "2", "--seconds", "1",
         "--workers", "1", "--json"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(completed.stdout)
    assert report["project"]["moves"] > 0 and report["floor"]["moves"] > 0
    assert report["project"]["refusals"] == {} and report["project"]["setup_errors"] == []
    assert {row["figure"] for row in report["rows"]} >= {"moves/s", "ack p99 ms", "server CPU us/move", "Redis CPU us/move"}


def test_bench_load_help_explains_the_modes_in_plain_text() -> None:
    completed = subprocess.run([sys.executable, "-m", "cli", "bench", "load", "--help"], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0
    assert "floor server" in completed.stdout and "--spectators" in completed.stdout and "burst" in completed.stdout
    assert "``" not in completed.stdout  # the docstring's reST quotes are for the source, not for people
    assert "the race server (--processes 1 or 2)" in completed.stdout
