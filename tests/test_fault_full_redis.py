"""A Redis that is out of memory (maxmemory, noeviction) refuses every write: a move is answered ``unavailable``,
as for any store that cannot take the change now, never ``internal_error`` with a traceback in the log, and its
resend once memory is back is stored once (campaign fault3, defect A)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import redis7_server
from race_helpers import play, seated_race, server_config, store_of
from redis.asyncio import Redis
from winning_lines import winning_deal

from client import ServerError
from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from shared.protocol import ErrorCode, RaceSettings


@pytest.mark.parametrize("version", ["embedded", "7"])
async def test_a_move_refused_by_a_full_redis_is_unavailable_and_its_resend_is_stored_once(
    version: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Redis 7 refuses with an error of its own (OOM), Redis 6 (the embedded one) inside the script's error.
    binary = redis7_server() if version == "7" else None
    if version == "7" and binary is None:
        pytest.fail("this test needs redis-server >= 7 on PATH (Debian: apt-get install -y redis-server)")
    seed, line = winning_deal()
    redis_server = EmbeddedRedis(tmp_path, persistent=False, binary=binary)  # its own: this test fills it up
    redis_server.start()
    admin = Redis.from_url(redis_server.url)
    try:
        async with RaceServer(server_config(redis_server.url)) as server:
            race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
            try:
                await play(race.bob, race.race_id, line[:1])
                await admin.config_set("maxmemory-policy", "noeviction")
                await admin.config_set("maxmemory", "1")
                race.bob.move_retry_delays = ()  # the refusal itself, not the client's resends
                with pytest.raises(ServerError) as refused:
                    await race.bob.move(race.race_id, line[1], seq=1, move_id="while-full")
                assert refused.value.code == ErrorCode.UNAVAILABLE
                assert not [record for record in caplog.records if record.exc_info is not None]
                await admin.config_set("maxmemory", "0")
                moved = await race.bob.move(race.race_id, line[1], seq=1, move_id="while-full")
                assert (moved.seq, moved.duplicate) == (2, False)
                assert await store_of(server).actions(race.race_id, 1) == list(line[:2])
            finally:
                await race.close()
    finally:
        await admin.aclose()
        redis_server.stop()
