"""``benchmarks/arena.py`` runs end to end on a tiny arena (a smoke test: no figure is asserted, only that pairings
and standings were measured and that its own checks hold: nobody paired while racing, every race seen by both sides
and booked once)."""

from __future__ import annotations

import json
import subprocess
import sys

from server_processes import ROOT


def test_the_arena_benchmark_pairs_plays_books_and_reports_its_figures_as_json() -> None:
    completed = subprocess.run(
        [sys.executable, "benchmarks/arena.py", "--players", "4", "--seconds", "10", "--race-seconds", "3", "--move-every", "0.5",
         "--workers", "1", "--json"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(completed.stdout)
    assert report["pairing"]["count"] >= 4 and report["standings"]["count"] >= 4 and report["moves"] > 0
    assert report["races_played"] >= 2 and report["races_booked"] == report["races_played"]
    assert report["paired_while_racing"] == 0 and report["one_sided_races"] == 0 and report["errors"] == []
