"""A server process short of file descriptors (a low ``RLIMIT_NOFILE``, a flood of half-sent handshakes from many
addresses) answers new handshakes HTTP 503 at once, logs the shortage once rather than a traceback per accept, and
serves again once descriptors are free."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from lobby_helpers import wait_until
from server_processes import ServerProcess
from test_fault_floods import half_sent
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.transport import SHORTAGE_ENDS_AFTER_SECONDS

OPEN_FILES = 200
"""The server process's descriptor limit, soft and hard: well below what the flood asks for."""
RESERVE = 24


async def refused_with(url: str, source: str) -> int | None:
    """The HTTP status a WebSocket handshake from loopback ``source`` is refused with, or None if it succeeds."""
    try:
        connection = await connect(url, local_addr=(source, 0), open_timeout=60)
    except InvalidStatus as refusal:
        if refusal.response.status_code == 503:
            assert json.loads(refusal.response.body or b"{}")["error"] == "out_of_descriptors"
        return refusal.response.status_code
    await connection.close()
    return None


async def test_a_process_out_of_descriptors_answers_503_logs_one_line_and_serves_again(single_redis_url: str, tmp_path: Path) -> None:
    config = tmp_path / "descriptors.toml"
    config.write_text(
        "[limits]\nmax_handshakes_per_address = 0\nmax_unidentified_per_address = 0\nmax_connections_per_address = 0\n"
        f"handshake_timeout = 120.0\ndescriptor_reserve = {RESERVE}\n"
    )
    server = ServerProcess(single_redis_url, tmp_path / "server.log", ["--config", str(config), "--log-level", "INFO"], open_files=OPEN_FILES)
    flood: list[asyncio.StreamWriter] = []
    try:
        await server.ready()
        assert len(os.listdir(f"/proc/{server.process.pid}/fd")) < OPEN_FILES - RESERVE - 50  # room for a flood first
        for index in range(OPEN_FILES + 50):  # from many addresses: more than the process can hold
            _, writer = await half_sent(server.port, f"127.0.{1 + index // 250}.{1 + index % 250}")
            flood.append(writer)
        assert await refused_with(server.url, "127.0.9.1") == 503  # the process holds the flood's handshakes
        for writer in flood:
            writer.close()
        flood.clear()

        async def served() -> bool:
            return await refused_with(server.url, "127.0.9.2") is None

        await wait_until(served, timeout=60, what="a handshake to be served once the flood went")
        await asyncio.sleep(SHORTAGE_ENDS_AFTER_SECONDS)
        assert await refused_with(server.url, "127.0.9.3") is None  # a second after the last refusal: the shortage ended
    finally:
        for writer in flood:
            writer.close()
        server.stop()
    log = server.log_path.read_text()
    assert log.count("descriptors_short") == 1, log[-3000:]
    assert "descriptors_recovered" in log
    assert "Traceback" not in log and "Too many open files" not in log, log[-3000:]
