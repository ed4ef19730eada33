"""Behind a proxy: X-Forwarded-For names the client only when the connection comes from a trusted proxy."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from race_helpers import server_config
from websockets.asyncio.client import connect
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus
from websockets.http11 import Request

from server.app import RaceServer
from server.peers import PeerResolver
from server.store import Ban, BanKind, OpsStore
from server.transport import client_address


def forwarded(*values: str) -> Headers:
    return Headers([("X-Forwarded-For", value) for value in values])


def test_without_trusted_proxies_the_socket_peer_is_the_client_whatever_the_header_says() -> None:
    resolver = PeerResolver()
    assert resolver.client_ip(("10.0.0.5", 40000), forwarded("203.0.113.7")) == "10.0.0.5"


def test_a_trusted_proxy_s_forwarded_for_names_the_client() -> None:
    resolver = PeerResolver(["10.0.0.0/8"])
    assert resolver.client_ip(("10.0.0.5", 40000), forwarded("203.0.113.7")) == "203.0.113.7"


def test_the_client_is_the_last_address_that_is_not_a_trusted_proxy() -> None:
    resolver = PeerResolver(["10.0.0.0/8"])
    # The client wrote a fake first entry; the outer proxy appended the real client, the inner one its own address.
    header = forwarded("198.51.100.1, 203.0.113.7", "10.0.0.9")
    assert resolver.client_ip(("10.0.0.5", 40000), header) == "203.0.113.7"


def test_an_untrusted_peer_cannot_forge_its_address_and_garbage_is_ignored() -> None:
    resolver = PeerResolver(["10.0.0.0/8"])
    assert resolver.client_ip(("192.0.2.1", 1), forwarded("10.0.0.7")) == "192.0.2.1"
    assert resolver.client_ip(("10.0.0.5", 1), forwarded("not-an-address")) == "10.0.0.5"
    assert resolver.client_ip(("10.0.0.5", 1), Headers()) == "10.0.0.5"


@dataclass
class ProxiedConnection:
    """Stands in for a connection through a proxy: its socket's remote address and its handshake request."""

    remote_address: tuple[str, int]
    request: Request


def test_the_per_address_limits_count_the_forwarded_client_an_ipv6_one_by_its_64() -> None:
    trusted = PeerResolver(["10.0.0.0/8"])
    request = Request("/", forwarded("2001:db8:1:2:aaaa::1"))
    connection = ProxiedConnection(("10.0.0.5", 40000), request)
    assert client_address(connection, trusted) == "2001:db8:1:2::/64"  # type: ignore[arg-type]
    assert client_address(connection) == "10.0.0.5"  # type: ignore[arg-type]  # no trusted proxies: the balancer


def test_a_bad_proxy_entry_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="10.0.0.300"):
        PeerResolver(["10.0.0.300"])


async def test_an_ip_ban_applies_to_the_forwarded_address_of_a_trusted_proxy(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, trusted_proxies=("127.0.0.1",))) as server:
        assert server.redis is not None and server.races is not None
        now = await server.races.now_ms()
        await OpsStore(server.redis).ban(Ban(BanKind.IP, "203.0.113.7", "test", now + 60_000, "tester"), now)
        try:
            with pytest.raises(InvalidStatus) as refused:
                async with connect(server.url, additional_headers={"X-Forwarded-For": "203.0.113.7"}):
                    pass
            assert refused.value.response.status_code == 403
            async with connect(server.url, additional_headers={"X-Forwarded-For": "203.0.113.8"}):
                pass  # another client behind the same proxy is let in
        finally:
            await OpsStore(server.redis).unban(BanKind.IP, "203.0.113.7")
