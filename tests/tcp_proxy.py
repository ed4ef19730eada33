"""A TCP proxy in front of Redis whose connections can be silenced one by one: a *half-open* connection, which
forwards nothing any more while both ends stay open (a network partition, a NAT that dropped its mapping), the fault
that no error ever reports."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Self


class _Pair:
    """One proxied connection: the client's side and the one to Redis (whose local port Redis sees as the client's)."""

    def __init__(self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter) -> None:
        self.client, self.upstream = client, upstream
        self.upstream_port: int = upstream.get_extra_info("sockname")[1]
        self.silent = False
        self.tasks: list[asyncio.Task[None]] = []

    async def forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                if not self.silent:  # a silenced connection swallows everything, in both directions
                    writer.write(data)
                    await writer.drain()
        except OSError:
            pass
        if not self.silent:
            writer.close()

    def abort(self) -> None:
        for task in self.tasks:
            task.cancel()
        self.client.transport.abort()
        self.upstream.transport.abort()


class SilenceableProxy:
    """``async with SilenceableProxy(port) as proxy``: ``proxy.url`` reaches the Redis on ``port`` at 127.0.0.1."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.pairs: list[_Pair] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        assert self._server is not None
        self._server.close()
        for pair in self.pairs:
            pair.abort()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        pair = _Pair(writer, upstream_writer)
        pair.tasks = [asyncio.create_task(pair.forward(reader, upstream_writer)), asyncio.create_task(pair.forward(upstream_reader, writer))]
        self.pairs.append(pair)

    def silence(self, upstream_ports: set[int]) -> int:
        """Silence the connections Redis sees coming from these ports; how many there were."""
        silenced = [pair for pair in self.pairs if pair.upstream_port in upstream_ports]
        for pair in silenced:
            pair.silent = True
        return len(silenced)
