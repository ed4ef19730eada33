"""A WebSocket handshake while Redis cannot be reached: the ban check at the door cannot be made, so the handshake
is refused with 503 and a JSON body saying why (as `/ready` says it), one warning in the log; never a 500 with
websockets' traceback of the store's exception; once Redis is back, handshakes pass (campaign fault3, defect D)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from race_helpers import player, server_config
from websockets.exceptions import InvalidStatus

from client import RaceClient
from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis


async def test_a_handshake_while_redis_is_down_is_refused_with_503_not_a_500_and_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    redis_server = EmbeddedRedis(tmp_path, persistent=False)  # its own: this test stops it
    redis_server.start()
    try:
        async with RaceServer(server_config(redis_server.url)) as server:
            redis_server.stop()
            with pytest.raises(InvalidStatus) as refused:
                await RaceClient.connect(server.url)
            response = refused.value.response
            assert response.status_code == 503
            assert json.loads(response.body)["error"] == "unavailable"
            assert not [record for record in caplog.records if record.exc_info is not None]
            redis_server.start()
            client = await player(server.url, "Ann")  # the door is open again
            await client.close()
    finally:
        redis_server.stop()
