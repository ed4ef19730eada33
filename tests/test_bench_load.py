"""``flowergarden bench load`` runs end to end on a tiny load (a smoke test: no figure is asserted, only that
both servers were driven and measured)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import pytest
from server_processes import ROOT
from websockets.asyncio.server import ServerConnection, serve

from benchmarks.load import workers
from benchmarks.load.command import BUSY_CORES, KNEE_MS, LATE_GENERATOR_MS, Figures, knee
from benchmarks.load.cpu_budget import CpuBudgetUnavailable, CpuGroup, find_hierarchy
from benchmarks.load.workers import LeanClient, Seat, WorkOrder, WorkResult
from cli.main import main


def test_bench_load_drives_the_race_server_and_the_floor_server_and_reports_both_as_json() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "cli", "bench", "load", "--mode", "closed", "--connections", "2", "--seconds", "1",
         "--workers", "1", "--json"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(completed.stdout)
    assert report["project"]["moves"] > 0 and report["floor"]["moves"] > 0 and report["pipelined_floor"]["moves"] > 0
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



async def test_open_loop_players_send_on_their_own_schedule_without_waiting_for_acks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "PIPELINE_GRACE", 0.1)
    received: list[dict[str, object]] = []
    arrived = asyncio.Condition()

    async def never_answer(connection: ServerConnection) -> None:  # a server that has fallen far behind
        async for frame in connection:
            async with arrived:
                received.append(msgpack.unpackb(frame))
                arrived.notify_all()

    async with serve(never_answer, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        result = WorkResult()
        client = await LeanClient.open(f"ws://127.0.0.1:{port}", result)
        order = WorkOrder("project", (), "open", 1, 0, seconds=0.5, interval=0.05, start_at=time.time())
        await asyncio.wait_for(workers.open_loop(Seat(client, "r1", "3S b>5"), order, result), 20)
        async with arrived:
            await asyncio.wait_for(arrived.wait_for(lambda: len(received) >= result.offered), 20)
        await client.close()
    assert result.offered >= 5 and result.moves == 0 and result.refusals == {"unanswered": result.offered}
    assert [message["seq"] for message in received] == list(range(result.offered))  # every action, none waited for
    assert [message["move"] for message in received[:2]] == ["3S b>5", "undo"]


def _point(races: int, p99_ms: float, **fields: float) -> Figures:
    return Figures("project", 10.0, moves=100, offered=100, p99_ms=p99_ms, races=races, **fields)  # type: ignore[arg-type]


def test_the_knee_is_the_first_race_count_whose_ack_p99_passes_the_bound() -> None:
    curve = [_point(250, 20.0), _point(500, KNEE_MS), _point(750, KNEE_MS + 1), _point(1000, 5.0)]
    assert knee(curve) == (500, 750, True)
    assert knee(curve[:2]) == (500, None, True)  # never bent within the counts run
    assert knee([_point(250, KNEE_MS + 1)]) == (None, 250, True)


def test_a_race_count_with_unanswered_actions_is_not_held_whatever_the_acknowledged_ones_took() -> None:
    unanswered = Figures("project", 10.0, moves=99, offered=100, p99_ms=5.0, races=500)
    assert not unanswered.held
    assert knee([_point(250, 5.0), unanswered]) == (250, 500, True)


def test_a_knee_measured_on_a_busy_machine_or_by_a_late_generator_is_marked_not_usable() -> None:
    busy = _point(500, 5.0, other_cores=BUSY_CORES + 0.1)
    late = _point(750, KNEE_MS + 1, send_late_p99_ms=LATE_GENERATOR_MS + 1)
    assert busy.machine_busy and not busy.usable and not late.usable
    assert knee([_point(250, 5.0), busy, late]) == (500, 750, False)
    assert knee([_point(250, 5.0, other_cores=BUSY_CORES), _point(500, KNEE_MS + 1)]) == (250, 500, True)


def test_a_scaling_curve_reports_each_point_and_the_knee_of_each_target_as_json() -> None:
    completed = _bench("--mode", "open", "--curve", "1,2", "--interval", "0.2", "--seconds", "1", "--workers", "1",
                       "--spectators-per-race", "1", "--spectator-delay", "0", "--no-floor", "--json")  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(completed.stdout)
    assert [point["project"]["races"] for point in report["points"]] == [1, 2]
    assert all(point["project"]["offered"] > 0 and "usable" in point["project"] for point in report["points"])
    assert set(report["knees"]) == {"project"} and set(report["knees"]["project"]) == {"held", "not_held", "usable"}


def test_a_scaling_curve_is_refused_outside_the_open_loop_and_for_a_list_that_is_not_ascending() -> None:
    closed = _bench("--mode", "closed", "--curve", "250,500", "--json")
    assert closed.returncode == 1 and json.loads(closed.stdout)["error"]["code"] == "bad_argument"
    unordered = _bench("--mode", "open", "--curve", "500,250")
    assert unordered.returncode == 2 and "ascending" in unordered.stderr
