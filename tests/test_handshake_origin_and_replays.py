"""Issue 25.8: a browser page of another site cannot open a WebSocket to the server (Origin allow-list), and a signed
operator command written to the stream again is obeyed once."""

from __future__ import annotations

import asyncio
import uuid

from race_helpers import player, server_config
from test_ops_admin import SECRET, operated  # noqa: F401 (the fixture)
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from server.admin_signing import sign
from server.app import RaceServer
from server.store import OpsStore
from server.transport import TransportLimits
from shared.protocol import Notice


async def opens(url: str, origin: str | None) -> bool:
    """Whether a WebSocket handshake with this ``Origin`` header (None: none) is accepted; 403 means refused."""
    try:
        async with connect(url, origin=None if origin is None else Origin(origin), compression=None):
            return True
    except InvalidStatus as refused:
        assert refused.response.status_code == 403
        return False


async def test_only_the_pages_own_origin_and_clients_without_one_may_open_a_websocket(redis_url: str) -> None:
    limits = TransportLimits(allowed_origins=("https://play.example.org",))
    async with RaceServer(server_config(redis_url, limits=limits)) as server:
        own = f"http://127.0.0.1:{server.port}"
        assert await opens(server.url, None)  # the terminal, bots, scripts: no Origin
        assert await opens(server.url, own)  # the page the server itself serves
        assert await opens(server.url, "https://play.example.org")  # an origin the operator allowed
        assert not await opens(server.url, "https://evil.example")  # cross-site WebSocket hijacking
        assert not await opens(server.url, f"http://127.0.0.1:{server.port + 1}")  # same host, another port
        assert not await opens(server.url, "null")  # a sandboxed frame or a file
        assert server.transport is not None and server.transport.stats.refused_origin == 3


async def test_a_replayed_signed_command_is_obeyed_once(operated: RaceServer) -> None:  # noqa: F811
    assert operated.redis is not None
    ops = OpsStore(operated.redis)
    ann = await player(operated.url, "Ann")
    command_id = uuid.uuid4().hex
    document = sign(SECRET, {"id": command_id, "action": "notice", "args": {"message": "once"}, "target": "*",
                             "operator": "tester", "at": await operated.races.store.now_ms()})  # fmt: skip
    await ops.send_command(document)
    await ops.send_command(document)  # an attacker who read the stream writes it again
    replies: list[dict[str, object]] = []
    cursor = "0-0"
    async with asyncio.timeout(10):
        while len(replies) < 2:
            for entry_id, reply in await ops.read_replies(command_id, cursor, 500):
                cursor = entry_id
                replies.append(reply)
    assert [reply["ok"] for reply in replies] == [True, False]
    assert "replayed" in str(replies[1]["error"])
    assert (await ann.wait_for(Notice)).message == "once"
    await ann.leaderboard()  # a round trip: a second notice would have been sent before its reply
    waiting = [ann._events.get_nowait() for _ in range(ann._events.qsize())]
    assert not [item for item in waiting if isinstance(item, Notice)]
    await ann.close()
