"""The embedded store: one redis-server per data folder, data kept across restarts, orphans stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from server.embedded_redis import EmbeddedRedis, RedisUnavailable, running_url


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
    assert orphaned.process is not None and orphaned._lock_file is not None
    orphan_process = orphaned.process
    redis.Redis.from_url(orphaned.url).set("kept", "yes")
    orphaned._lock_file.close()  # what the death of the owning server does: the lock goes, redis-server stays
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
