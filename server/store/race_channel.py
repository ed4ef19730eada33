"""Live race events by Redis pub/sub: each race script publishes every event it appends to the race's stream.

The channel of a race is named like its event stream (``fgr:{race:<id>}:events``), so it hashes to the race's
Cluster slot and can become a sharded channel (SSUBSCRIBE/SPUBLISH, Redis 7) without a change of design. Pub/sub
is at-most-once: a message published while this connection is down is lost. The listener therefore reports every
confirmation of a subscription (:class:`Subscribed`, also after redis-py re-subscribes on a reconnect), and the
event hub then catches the race up from its stream, which stays the truth.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from server.store import keys
from server.store.connection import RedisClient
from server.store.errors import translate_errors
from server.store.race_store import StoredEvent, decode_event


@dataclass(frozen=True, slots=True)
class LiveEvent:
    """An event as published by the script that appended it to the race's stream."""

    race_id: str
    event: StoredEvent


@dataclass(frozen=True, slots=True)
class Subscribed:
    """Redis confirmed a subscription to the race's channel: every event published from now on will arrive."""

    race_id: str


ChannelMessage = LiveEvent | Subscribed

_CHANNEL_PREFIX = f"{keys.PREFIX}:{{race:"
_CHANNEL_SUFFIX = "}:events"


def race_channel(race_id: str) -> str:
    """The pub/sub channel of a race (the name of its event stream)."""
    return keys.race_keys(race_id)[keys.EVENTS]


def _race_of(channel: bytes | str) -> str:
    name = channel.decode() if isinstance(channel, bytes) else channel
    return name[len(_CHANNEL_PREFIX) : -len(_CHANNEL_SUFFIX)]


@translate_errors
class RaceChannels:
    """One process's subscriptions to race channels, on one connection of the blocking-read pool.

    Only :meth:`read` reads from the connection (one task); :meth:`listen` and :meth:`forget` only send.
    """

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._pubsub: PubSub | None = None
        self._closing: set[asyncio.Future[None]] = set()
        self._listening = asyncio.Event()
        """Set when a subscription is sent: wakes a :meth:`read` that had nothing to read from."""

    def _connection(self) -> PubSub:
        if self._pubsub is None:
            self._pubsub = self.redis.pubsub(ignore_subscribe_messages=False)
        return self._pubsub

    async def listen(self, race_ids: Iterable[str]) -> None:
        """Subscribe to these races' channels; each confirmation arrives through :meth:`read` as :class:`Subscribed`."""
        channels = [race_channel(race_id) for race_id in race_ids]
        if channels:
            await self._connection().subscribe(*channels)
            self._listening.set()

    async def forget(self, race_ids: Iterable[str]) -> None:
        """Unsubscribe from these races' channels."""
        channels = [race_channel(race_id) for race_id in race_ids]
        if channels and self._pubsub is not None:
            await self._pubsub.unsubscribe(*channels)

    async def read(self, timeout: float, limit: int = 500) -> list[ChannelMessage]:
        """The messages that arrived, waiting up to ``timeout`` seconds for the first (then taking what is there)."""
        pubsub = self._pubsub
        if pubsub is None or not pubsub.subscribed:
            self._listening.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._listening.wait()
            return []
        found: list[ChannelMessage] = []
        message = await pubsub.get_message(timeout=timeout)
        while message is not None:
            parsed = _parse(message)
            if parsed is not None:
                found.append(parsed)
            if len(found) >= limit:
                break
            message = await pubsub.get_message(timeout=0)
        return found

    def drop(self) -> None:
        """Forget the connection and every subscription at once (after a failure): the next :meth:`listen` opens a
        new connection; the old one is closed in the background."""
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            closing = asyncio.ensure_future(_close_quietly(pubsub))
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)


async def _close_quietly(pubsub: PubSub) -> None:
    with contextlib.suppress(RedisError, OSError):  # it failed already
        await pubsub.aclose()  # type: ignore[no-untyped-call]


def _parse(message: dict[str, Any]) -> ChannelMessage | None:
    kind = message.get("type")
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "subscribe":
        return Subscribed(_race_of(message["channel"]))
    if kind != "message":
        return None
    data: bytes = message["data"]
    seq, _, packed = data.partition(b" ")
    race_id = _race_of(message["channel"])
    return LiveEvent(race_id, decode_event(race_id, int(seq), packed))
