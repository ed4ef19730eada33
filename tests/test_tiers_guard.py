"""The unit guard of tests/tiers.py sees a real child process and a real connection (the audit events fire)."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from tiers import UnitGuard


def test_a_process_started_and_a_connection_opened_reach_the_unit_guard(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("process") is not None  # this file imports subprocess: not a unit test
    guard = UnitGuard()
    sys.addaudithook(guard)
    listener = socket.create_server(("127.0.0.1", 0))
    guard.watching = True
    try:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        socket.create_connection(listener.getsockname()).close()
    finally:
        guard.watching = False
        listener.close()
    assert guard.seen[0].startswith("started a process: ")
    assert any(seen.startswith("connected to ('127.0.0.1', ") for seen in guard.seen)
