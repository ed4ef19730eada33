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

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError

from server.store import keys
from server.store.connection import RedisClient
from server.store.errors import suppress_store_failures, translate_errors
from server.store.race_store import StoredEvent, decode_published


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
    with suppress_store_failures():  # it failed already
        await pubsub.aclose()  # type: ignore[no-untyped-call]


def _kind(message: dict[str, Any]) -> str:
    kind = message.get("type")
    return kind.decode() if isinstance(kind, bytes) else str(kind)


def _parse(message: dict[str, Any]) -> ChannelMessage | None:
    """A confirmation or an event from redis-py's message map; None for anything else."""
    return parse_channel_message(_kind(message), message["channel"], message["data"])


def parse_channel_message(kind: str, channel: bytes | str, data: Any) -> ChannelMessage | None:
    """A confirmation or an event; None for anything else (an unsubscription). Sharded channels' messages
    (``ssubscribe``, ``smessage``) read the same as ordinary ones."""
    if kind in ("subscribe", "ssubscribe"):
        return Subscribed(_race_of(channel))
    if kind not in ("message", "smessage"):
        return None
    race_id = _race_of(channel)
    return LiveEvent(race_id, decode_published(race_id, data))


class SubscriptionLost(RedisConnectionError):
    """A node dropped a sharded subscription we still hold (its slot moved to another node, e.g. in a failover): the
    hub treats it like a lost connection (subscribes everything again and catches up from the streams)."""


@dataclass
class _NodeChannels:
    """One node's pub/sub connection and the task that reads it into the shared inbox."""

    client: Redis
    pubsub: PubSub
    reader: asyncio.Task[None]


@translate_errors
class ShardedRaceChannels:
    """Race channels on a Redis Cluster of Redis >= 7: each race's channel is a sharded channel of the race's slot
    (the scripts SPUBLISH it, so an event goes to its node and that node's replicas only, not over the whole cluster
    bus). One pub/sub connection per node that serves a followed race, one SSUBSCRIBE per race (one slot per
    command), and one task per node blocking on its connection; :meth:`read` takes what they received, in the
    order it arrived. Same interface and guarantees as :class:`RaceChannels`.
    """

    def __init__(self, cluster: RedisCluster) -> None:
        self.cluster = cluster
        self._nodes: dict[str, _NodeChannels] = {}
        self._node_of: dict[str, str] = {}
        """Race id -> the node its subscription was sent to."""
        self._inbox: asyncio.Queue[ChannelMessage | Exception] = asyncio.Queue()

    def _node(self, node: ClusterNode) -> _NodeChannels:
        found = self._nodes.get(node.name)
        if found is None:
            options = node.connection_kwargs
            client = Redis(
                host=node.host, port=int(node.port), username=options.get("username"), password=options.get("password"),
                socket_timeout=options.get("socket_timeout"), socket_connect_timeout=options.get("socket_connect_timeout"),
            )  # fmt: skip
            pubsub = client.pubsub(ignore_subscribe_messages=False)
            found = self._nodes[node.name] = _NodeChannels(client, pubsub, asyncio.create_task(self._read_node(node.name, pubsub)))
        return found

    async def _read_node(self, name: str, pubsub: PubSub) -> None:
        try:
            while True:
                if not pubsub.subscribed:
                    await asyncio.sleep(0.05)  # nothing subscribed here (yet): nothing to read
                    continue
                message = await pubsub.get_message(timeout=1.0)
                if message is None:
                    continue
                if _kind(message) == "sunsubscribe" and _race_of(message["channel"]) in self._node_of:
                    raise SubscriptionLost(f"node {name} dropped the subscription of {_text(message['channel'])}")
                parsed = _parse(message)
                if parsed is not None:
                    self._inbox.put_nowait(parsed)
        except Exception as error:  # noqa: BLE001 - the hub learns of any failure through read(), translated there
            self._inbox.put_nowait(error)

    async def listen(self, race_ids: Iterable[str]) -> None:
        """SSUBSCRIBE each race's channel on the node serving its slot; confirmations arrive through :meth:`read`."""
        for race_id in race_ids:
            channel = race_channel(race_id)
            node = self.cluster.get_node_from_key(channel)
            if node is None:
                raise SubscriptionLost(f"no node serves the slot of {channel}")
            self._node_of[race_id] = node.name
            await self._node(node).pubsub.ssubscribe(channel)

    async def forget(self, race_ids: Iterable[str]) -> None:
        """SUNSUBSCRIBE these races' channels."""
        for race_id in race_ids:
            name = self._node_of.pop(race_id, None)
            if name is not None and name in self._nodes:
                await self._nodes[name].pubsub.sunsubscribe(race_channel(race_id))

    async def read(self, timeout: float, limit: int = 500) -> list[ChannelMessage]:
        """The messages that arrived, waiting up to ``timeout`` seconds for the first (then taking what is there);
        a node's failure is raised here."""
        try:
            first = await asyncio.wait_for(self._inbox.get(), timeout)
        except TimeoutError:
            return []
        found: list[ChannelMessage] = []
        item: ChannelMessage | Exception | None = first
        while item is not None:
            if isinstance(item, Exception):
                raise item
            found.append(item)
            if len(found) >= limit or self._inbox.empty():
                break
            item = self._inbox.get_nowait()
        return found

    def drop(self) -> None:
        """Forget every node's connection and subscription at once (after a failure): the next :meth:`listen`
        subscribes on the nodes serving the slots now."""
        nodes, self._nodes = self._nodes, {}
        self._node_of.clear()
        self._inbox = asyncio.Queue()
        for node in nodes.values():
            node.reader.cancel()
            closing = asyncio.ensure_future(_close_node_quietly(node))
            closing.add_done_callback(lambda _: None)


async def _close_node_quietly(node: _NodeChannels) -> None:
    with suppress_store_failures(), contextlib.suppress(asyncio.CancelledError):
        await node.pubsub.aclose()  # type: ignore[no-untyped-call]
        await node.client.aclose()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def sharded_channels_supported(client: RedisClient) -> bool:
    """Whether race channels should be sharded: a Redis Cluster whose every node runs Redis >= 7 (SPUBLISH)."""
    if not isinstance(client, RedisCluster):
        return False
    for node in client.get_nodes():
        info = await client.info("server", target_nodes=node)
        version = info.get("redis_version", "0") if isinstance(info, dict) else "0"
        if int(str(version).split(".")[0]) < 7:
            return False
    return True
