"""Issue 25.8: a browser page of another site cannot open a WebSocket to the server (Origin allow-list), and a signed
operator command written to the stream again is obeyed once; issue 25.6: the record-signing key may live in a file."""

from __future__ import annotations

import asyncio
import json
import stat
import uuid
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from ops_helpers import http_base, http_get
from race_helpers import player, server_config
from test_ops_admin import SECRET, operated  # noqa: F401 (the fixture)
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from server.admin_signing import sign
from server.app import RaceServer
from server.record_signing import public_hex
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


async def test_a_record_key_file_is_made_once_and_its_public_key_served(redis_url: str, tmp_path: Path) -> None:
    """``record_key_file``: the signing key lives in a file (0600) instead of the store; /record-key serves its public
    key, and a second start keeps the same key."""
    key_file = tmp_path / "keys" / "record.key"
    served = []
    for _ in range(2):
        async with RaceServer(server_config(redis_url, record_key_file=str(key_file))) as server:
            status, body = await http_get(http_base(server.url) + "/record-key")
            assert status == 200
            served.append(json.loads(body)["public_key"])
    assert served[0] == served[1] == public_hex(Ed25519PrivateKey.from_private_bytes(key_file.read_bytes()).public_key())
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
