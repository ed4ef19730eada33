"""``flowergarden bench load`` runs end to end on a tiny load (a smoke test: no figure is asserted, only that
both servers were driven and measured)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from server_processes import ROOT

from benchmarks.load.command import LATE_GENERATOR_MS, Figures
from benchmarks.load.cpu_budget import CpuBudgetUnavailable, CpuGroup, find_hierarchy
from cli.main import main


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
    assert report["project"]["rss_per_race_kib"] is not None  # sampled under load, at the end of the measured window


def test_an_open_loop_run_reports_the_load_generators_own_lateness() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "load", "--mode", "open", "--races", "2", "--interval", "0.2",
         "--seconds", "2", "--workers", "1", "--no-floor", "--json"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    project = json.loads(completed.stdout)["project"]
    assert project["send_late_p99_ms"] is not None and project["send_late_p99_ms"] >= 0
    assert project["generator_late"] == (project["send_late_p99_ms"] > LATE_GENERATOR_MS)


def test_at_spectator_delay_zero_the_spectators_receive_the_moves_and_their_lag_is_reported() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "load", "--mode", "open", "--races", "2", "--spectators", "2",
         "--spectator-delay", "0", "--interval", "0.2", "--seconds", "2", "--workers", "1", "--no-floor", "--json"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    project = json.loads(completed.stdout)["project"]
    assert project["moves"] > 0 and project["spectator_moves"] > 0
    assert project["spectator_lag_ms"]["p50"] is not None and project["spectator_lag_ms"]["p99"] >= project["spectator_lag_ms"]["p50"]


def test_a_run_whose_load_generator_was_late_says_its_figures_are_not_to_be_used() -> None:
    assert Figures("project", 10.0, send_late_p99_ms=LATE_GENERATOR_MS + 1).generator_late
    assert not Figures("project", 10.0, send_late_p99_ms=LATE_GENERATOR_MS).generator_late
    assert not Figures("project", 10.0).generator_late  # closed loop: nothing scheduled, nothing late


def test_bench_load_help_explains_the_modes_in_plain_text() -> None:
    completed = subprocess.run([sys.executable, "-m", "cli", "bench", "load", "--help"], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0
    assert "floor server" in completed.stdout and "--spectators" in completed.stdout and "burst" in completed.stdout
    assert "``" not in completed.stdout  # the docstring's reST quotes are for the source, not for people
    assert "the race server (--processes 1 or 2)" in completed.stdout


def _bench(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", "bench", "load", *arguments], check=False, cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_a_cpu_budget_outside_a_fraction_of_the_machines_cores_is_a_usage_error() -> None:
    for value in ("0", "0.01", "99", "half"):
        completed = _bench("--cpu-per-process", value)
        assert completed.returncode == 2, (value, completed.stderr)
        assert "--cpu-per-process" in completed.stderr and ("fraction of a core" in completed.stderr or "not a number" in completed.stderr)


def test_comparing_process_counts_is_refused_for_the_set_up_burst() -> None:
    completed = _bench("--mode", "burst", "--compare-processes", "--json")
    assert completed.returncode == 1
    assert json.loads(completed.stdout)["error"]["code"] == "bad_argument"


def test_a_cpu_budget_that_no_cgroup_can_apply_fails_with_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(CpuBudgetUnavailable, match="no cgroup CPU controller is mounted"):
        find_hierarchy(tmp_path)
    (tmp_path / "cgroup.controllers").write_text("memory io\n")  # a cgroup v2 without the cpu controller
    with pytest.raises(CpuBudgetUnavailable, match="has no cpu controller"):
        find_hierarchy(tmp_path)


def test_a_process_that_cannot_enter_its_cpu_group_is_refused_rather_than_run_uncapped(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()  # looks like a cgroup v1 hierarchy, but it is a plain folder: nothing is ever capped
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    hierarchy = find_hierarchy(tmp_path)
    assert hierarchy.version == 1
    with pytest.raises(CpuBudgetUnavailable, match="refusing to run uncapped"):
        CpuGroup.cap(hierarchy, os.getpid(), 0.4)


def test_where_the_benchmarks_are_not_installed_bench_load_says_where_they_are(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("benchmarks", "benchmarks.load", "benchmarks.load.command"):  # an installed copy: none to import
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["bench", "load", "--mode", "open", "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "not_installed" and "benchmarks/load" in error["message"]

