"""Race channels on one Redis over a bare pub/sub connection (same interface and guarantees as RaceChannels).

redis-py's PubSub reads each message through its retry wrapper, a timeout context and a stream reader: that was
most of the event hub's cost per event (docs/BENCHMARKS.md "Third pass"). Here the connection's protocol parses
what arrives with hiredis as it arrives (RESP2: in subscribed mode every reply is a ``[kind, channel, payload]``
array) into an inbox that :meth:`DirectRaceChannels.read` takes at once. A lost connection is raised by the next
read once the inbox is empty, as redis-py raises it; the hub then drops it and subscribes every race again on a new
one (each confirmation starts a new generation that catches up from the stream, server/services/event_hub.py).

A connection can also be lost without being closed (a half-open TCP connection: a network partition, a host or NAT
that dropped it): nothing would ever arrive again, and the hub's recipients would wait for ever. So a connection
silent for ``health_check_seconds`` is sent a PING, and one that then stays silent as long again counts as lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any

import hiredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.errors import translate_errors
from server.store.race_channel import ChannelMessage, RaceChannels, ShardedRaceChannels, parse_channel_message, race_channel
from server.store.script_pipeline import INCOMPLETE, DirectAddress, ErrorReply, pack_command, redis_error


class _Subscriber(asyncio.Protocol):
    """One pub/sub connection: what arrived, parsed, and the error that ended it."""

    def __init__(self) -> None:
        self.reader = hiredis.Reader(replyError=ErrorReply, notEnoughData=INCOMPLETE)
        self.inbox: list[ChannelMessage] = []
        self.error: Exception | None = None
        self.transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.last_heard = asyncio.get_running_loop().time()
        """When something last arrived (or the connection was made)."""
        self.ping_sent: float | None = None
        """When a PING was sent that nothing has answered yet."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def send(self, *command: Any) -> None:
        """Write one command (SUBSCRIBE, UNSUBSCRIBE, AUTH); replies arrive as messages."""
        if self.error is not None:
            raise self.error
        assert self.transport is not None
        self.transport.write(pack_command(command))

    def data_received(self, data: bytes) -> None:
        self.last_heard, self.ping_sent = asyncio.get_running_loop().time(), None
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not INCOMPLETE:
            if isinstance(reply, ErrorReply):
                self.lose(redis_error(reply))
                return
            if isinstance(reply, list) and len(reply) == 3:
                kind = reply[0].decode() if isinstance(reply[0], bytes) else str(reply[0])
                parsed = parse_channel_message(kind, reply[1], reply[2])
                if parsed is not None:
                    self.inbox.append(parsed)
            # anything else is AUTH's +OK or a PING's pong
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lose(RedisConnectionError("Connection closed by server." if exc is None else f"Error while reading from Redis: {exc}"))

    def lose(self, error: Exception) -> None:
        """End the connection with ``error`` (raised by the next read once the inbox is empty)."""
        if self.error is None:
            self.error = error
        if self.transport is not None:
            self.transport.abort()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self, timeout: float) -> None:
        """Return once something arrived or the connection ended, or after ``timeout`` seconds."""
        if self.inbox or self.error is not None:
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._waiter
        finally:
            self._waiter = None


@translate_errors
class DirectRaceChannels:
    """One process's subscriptions to race channels, on a pub/sub connection of its own.

    Only :meth:`read` takes messages (one task); :meth:`listen` and :meth:`forget` only send.
    """

    def __init__(self, address: DirectAddress, *, health_check_seconds: float = 5.0) -> None:
        self.address = address
        self.health_check_seconds = health_check_seconds
        self._link: _Subscriber | None = None
        self._opening = asyncio.Lock()
        self._listening = asyncio.Event()
        """Set when a subscription is sent: wakes a :meth:`read` that had no connection to read from."""

    async def _connection(self) -> _Subscriber:
        async with self._opening:
            if self._link is None:
                link = await self.address.open(_Subscriber)
                if self.address.password is not None:
                    link.send("AUTH", self.address.username or "default", self.address.password)
                self._link = link
            return self._link

    async def listen(self, race_ids: Iterable[str]) -> None:
        """Subscribe to these races' channels; each confirmation arrives through :meth:`read` as ``Subscribed``."""
        channels = [race_channel(race_id) for race_id in race_ids]
        if channels:
            (await self._connection()).send("SUBSCRIBE", *channels)
            self._listening.set()

    async def forget(self, race_ids: Iterable[str]) -> None:
        """Unsubscribe from these races' channels."""
        channels = [race_channel(race_id) for race_id in race_ids]
        if channels and self._link is not None and self._link.error is None:
            self._link.send("UNSUBSCRIBE", *channels)

    async def read(self, timeout: float, limit: int = 500) -> list[ChannelMessage]:
        """The messages that arrived, waiting up to ``timeout`` seconds for the first (then taking what is there)."""
        link = self._link
        if link is None:
            self._listening.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._listening.wait()
            return []
        self._check_health(link)
        await link.wait(timeout)
        if link.inbox:
            found = link.inbox[:limit]
            del link.inbox[:limit]
            return found
        if link.error is not None:
            raise link.error
        return []

    def _check_health(self, link: _Subscriber) -> None:
        """PING a connection silent for ``health_check_seconds``; lose it if the PING stays unanswered as long."""
        now = asyncio.get_running_loop().time()
        if link.error is not None:
            return
        if link.ping_sent is not None:
            if now - link.ping_sent >= self.health_check_seconds:
                link.lose(RedisTimeoutError(f"the race channels' connection did not answer a PING within {self.health_check_seconds:g} s"))
        elif now - link.last_heard >= self.health_check_seconds:
            link.send("PING")
            link.ping_sent = now

    def drop(self) -> None:
        """Forget the connection and every subscription at once (after a failure): the next :meth:`listen` opens a
        new connection."""
        link, self._link = self._link, None
        if link is not None:
            link.lose(RedisConnectionError("the race channels' connection was dropped"))


AnyRaceChannels = RaceChannels | ShardedRaceChannels | DirectRaceChannels
"""Whichever reads a process's race channels: sharded on a Cluster of Redis >= 7, direct on one Redis over TCP
or a unix socket, else redis-py's PubSub (TLS, a Cluster of Redis 6)."""
