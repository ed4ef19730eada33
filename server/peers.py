"""Who a client is at the network level: its address, trusting ``X-Forwarded-For`` only from configured proxies.

Behind a load balancer every connection comes from the balancer's address; the client's own address is in the
``X-Forwarded-For`` header the balancer appends to. A client can send that header itself, so it is believed only
when the connection comes from a trusted proxy, and then read from the right: the last address that is not a
trusted proxy is the client (earlier entries were written by the client or by proxies we do not know).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from websockets.datastructures import Headers

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """Addresses or CIDR networks (``10.0.0.0/8``, ``127.0.0.1``); ValueError names a bad entry."""
    networks: list[Network] = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"not an IP address or network: {entry!r}") from None
    return tuple(networks)


class PeerResolver:
    """Finds a connection's client address given the trusted proxies (none: the socket's peer is the client)."""

    def __init__(self, trusted_proxies: Iterable[str] = ()) -> None:
        self.trusted = parse_networks(trusted_proxies)

    def is_trusted(self, address: str) -> bool:
        """Whether ``address`` (a socket's peer IP) is one of the trusted proxies."""
        return self._trusted(address)

    def _trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    def client_ip(self, remote_address: object, headers: Headers | None) -> str:
        """The client's IP from the socket's ``remote_address`` and the handshake's headers ("" if unknown)."""
        peer = remote_address[0] if isinstance(remote_address, tuple) and remote_address else str(remote_address or "")
        peer = str(peer)
        if headers is None or not self._trusted(peer):
            return peer
        hops = [hop.strip() for value in headers.get_all("X-Forwarded-For") for hop in value.split(",") if hop.strip()]
        for hop in reversed(hops):
            if not self._trusted(hop):
                return hop if _is_address(hop) else peer
        return hops[0] if hops and _is_address(hops[0]) else peer


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
