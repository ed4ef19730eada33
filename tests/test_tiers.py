"""The tiers of tests/tiers.py: assigned from what a test needs, and a unit test held to needing nothing."""

from __future__ import annotations

import socket

import pytest
from tiers import TIERS, UnitGuard


def tiers_of(request: pytest.FixtureRequest) -> list[str]:
    """The tier markers this test carries."""
    return [tier for tier in TIERS if request.node.get_closest_marker(tier) is not None]


def test_a_test_that_needs_nothing_is_in_the_unit_tier_alone(request: pytest.FixtureRequest) -> None:
    assert tiers_of(request) == ["unit"]


def test_a_test_that_asks_for_the_store_is_in_the_redis_tier_alone(store_kind: str, request: pytest.FixtureRequest) -> None:
    assert store_kind == "redis"
    assert tiers_of(request) == ["redis"]


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
