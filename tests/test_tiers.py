"""The tiers of tests/tiers.py: assigned from what a test needs, and a unit test held to needing nothing."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings
from tiers import FAST_PROFILE, GUARD, TIERS, UnitGuard, examples

ROOT = Path(__file__).resolve().parent.parent


def tiers_of(request: pytest.FixtureRequest) -> list[str]:
    """The tier markers this test carries."""
    return [tier for tier in TIERS if request.node.get_closest_marker(tier) is not None]


def test_a_test_that_needs_nothing_is_in_the_unit_tier_alone(request: pytest.FixtureRequest) -> None:
    assert tiers_of(request) == ["unit"]


def test_a_test_that_asks_for_the_store_is_in_the_redis_tier_alone(store_kind: str, request: pytest.FixtureRequest) -> None:
    assert store_kind == "redis"
    assert tiers_of(request) == ["redis"]


@pytest.mark.search
def test_a_test_marked_search_is_in_the_search_tier_alone_and_held_to_needing_nothing(request: pytest.FixtureRequest) -> None:
    assert tiers_of(request) == ["search"]
    assert GUARD.watching  # a process or a connection would fail it, as in the unit tier


@pytest.mark.container
def test_the_container_tests_share_one_xdist_group_so_one_worker_runs_them_in_turn(request: pytest.FixtureRequest) -> None:
    group = request.node.get_closest_marker("xdist_group")
    assert group is not None and group.args == ("container",)


def test_the_unit_guard_records_a_process_and_a_network_connection_but_not_a_local_pipe() -> None:
    guard = UnitGuard()
    tcp, pipe = socket.socket(socket.AF_INET), socket.socket(socket.AF_UNIX)
    try:
        guard("subprocess.Popen", ("/bin/true", ["true"], None, None))  # the shape of the real audit events
        guard.watching = True
        guard("socket.connect", (pipe, "/run/some.sock"))
        guard("subprocess.Popen", ("/bin/true", ["true"], None, None))
        guard("socket.connect", (tcp, ("127.0.0.1", 6379)))
    finally:
        tcp.close()
        pipe.close()
    assert guard.seen == ["started a process: ['true']", "connected to ('127.0.0.1', 6379)"]


def test_property_tests_run_their_examples_as_written_by_default_and_a_fifth_under_the_fast_profile() -> None:
    fast = settings.default == settings.get_profile(FAST_PROFILE)
    loaded = FAST_PROFILE if fast else "default"
    try:
        settings.load_profile("default")
        assert [examples(n) for n in (5, 60, 300)] == [5, 60, 300]
        settings.load_profile(FAST_PROFILE)
        assert [examples(n) for n in (5, 40, 60, 300)] == [5, 10, 12, 60]
    finally:
        settings.load_profile(loaded)


def dev_script() -> ModuleType:
    """``dev.py`` loaded as a module (it is a script beside the packages, not one of them)."""
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dev_py_keeps_bytecode_under_the_venv_where_the_environment_asks_for_none(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = dev_script()
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    environment = dev.checks_environment()
    assert "PYTHONDONTWRITEBYTECODE" not in environment
    assert environment["PYTHONPYCACHEPREFIX"] == str(ROOT / ".venv" / "pycache")
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE")
    assert "PYTHONPYCACHEPREFIX" not in dev.checks_environment()  # bytecode beside the sources, as Python does


def test_dev_py_runs_the_fast_tier_under_the_fast_hypothesis_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = dev_script()
    commands: list[list[str]] = []

    def run(command: list[str]) -> int:
        commands.append(command)
        return 0

    monkeypatch.setattr(dev, "run", run)
    assert dev.fast_tests(["-q"]) == 0
    assert commands[-1][1:] == ["-m", "pytest", "-m", "unit", f"--hypothesis-profile={FAST_PROFILE}", "-q"]
