"""When a change of a race counts as stored: the durability level, and the checks a store must pass at start.

``primary``: the script ran on the primary (today's behaviour; a primary that dies before its replica has the
write loses it). ``replica``: the script and a ``WAIT 1 <timeout>`` go on the same connection to the node that ran
it, and the change is acknowledged only once a replica has it (WAIT counts the writes of its own connection, and
every command, even a read, moves that connection's mark to the primary's current offset; replication is ordered,
so a resent move answered from the move-id table waits for the original write too). ``fsync``: every node runs
with ``appendonly yes`` and ``appendfsync always``, so the primary answers only once the write is on its disk
(Redis < 7.2 has no WAITAOF); the server checks this with CONFIG GET at start and refuses to run otherwise.

A change a replica did not confirm in time raises :class:`StoreUnavailable`: it may or may not survive a failover,
so the client is told ``unavailable`` and resends with the same ``move_id`` (docs/PROTOCOL.md). With
``degraded_ok`` (``durability_degraded``), a change of a primary that has *no* replica attached (after a failover,
until the old node rejoins) is acknowledged at ``primary`` instead: counted in
``flowergarden_degraded_acks_total``, with a warning when a node enters and leaves that state.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import AskError, MovedError, NoScriptError, RedisClusterException, RedisError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server import metrics
from server.store import keys
from server.store.connection import RedisClient
from server.store.errors import StoreError, StoreUnavailable
from server.store.script_pipeline import ScriptPipeline


class Durability(StrEnum):
    """When a race's change is acknowledged to the client (docs/STORAGE.md "Durability levels")."""

    PRIMARY = "primary"
    REPLICA = "replica"
    FSYNC = "fsync"


class StoreNotReady(StoreError):
    """The store cannot give what the server was configured for (a node down, no replica, no fsync): refuse to start."""


log = logging.getLogger(__name__)

RECHECK_SECONDS = 1.0
"""How often a primary acknowledged without a replica (degraded) is asked again whether one is attached."""

REDIRECTIONS = (MovedError, AskError, TryAgainError)
"""Replies that say the command did not run on this node: safe to send again where the slot is now."""


class ScriptRunner:
    """Runs a race's script and, at durability ``replica``, acknowledges it only once a replica has the write."""

    def __init__(
        self, client: RedisClient, durability: Durability = Durability.PRIMARY, *, wait_timeout_ms: int = 1000, degraded_ok: bool = False
    ) -> None:
        self.client = client
        self.durability = durability
        self.wait_timeout_ms = wait_timeout_ms
        self.degraded_ok = degraded_ok
        """At ``replica``: acknowledge at ``primary`` while the race's primary has no replica attached."""
        self._degraded: dict[str, float] = {}
        """The primaries found without a replica (by name), with when that was last checked (monotonic)."""
        self.pipeline = ScriptPipeline.for_client(client) if durability is not Durability.REPLICA else None
        """Where scripts go on one Redis without a WAIT: one pipelined connection (server/store/script_pipeline.py)."""

    async def run(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The script's reply; StoreUnavailable if a replica did not confirm the write within the timeout."""
        if self.pipeline is not None:
            return await self.pipeline.run_script(script, keys, args)
        if self.durability is not Durability.REPLICA or self._still_degraded(keys[0]):
            return await script(keys=list(keys), args=list(args))
        for _attempt in range(3):
            try:
                reply, replicas = await self._script_then_wait(script, keys, args)
            except (RedisConnectionError, RedisTimeoutError):
                with contextlib.suppress(RedisError, RedisClusterException, OSError):
                    await self._refresh()  # the node may be gone: the next change asks the cluster where its slot is
                raise
            if isinstance(reply, NoScriptError):
                await self._load(script)
                continue
            if isinstance(reply, REDIRECTIONS):
                await self._refresh()  # the slot moved (a failover): not run; send it where the slot is now
                continue
            if isinstance(reply, Exception):
                raise reply
            if isinstance(replicas, Exception):
                raise replicas
            if int(replicas) < 1:
                if self.degraded_ok and await self._without_replica(keys[0]):
                    return reply
                raise StoreUnavailable(f"no replica confirmed the write within {self.wait_timeout_ms} ms (WAIT 1)")
            self._restored(keys[0])
            return reply
        raise StoreUnavailable("the slot kept moving while the script was sent")

    async def _script_then_wait(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> tuple[Any, Any]:
        """EVALSHA and WAIT, in this order on one connection to the node that serves the keys' slot."""
        command = ("EVALSHA", script.sha, len(keys), *keys, *args)
        wait = ("WAIT", 1, self.wait_timeout_ms)
        if isinstance(self.client, RedisCluster):
            node = self._node_of(keys[0])
            commands = [PipelineCommand(0, *command), PipelineCommand(1, *wait)]
            await node.execute_pipeline(commands)
            return commands[0].result, commands[1].result
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.execute_command(*command)
            pipe.execute_command(*wait)
            reply, replicas = await pipe.execute(raise_on_error=False)
        return reply, replicas

    def _name_of(self, key: str) -> str:
        return self._node_of(key).name if isinstance(self.client, RedisCluster) else "redis"

    def _still_degraded(self, key: str) -> bool:
        """Whether ``key``'s primary was found without a replica less than :data:`RECHECK_SECONDS` ago: acknowledge
        at ``primary`` without waiting (each WAIT there would wait its whole timeout); counted."""
        if not self._degraded:
            return False
        checked = self._degraded.get(self._name_of(key))
        if checked is None or time.monotonic() - checked >= RECHECK_SECONDS:
            return False
        metrics.degraded_ack()
        return True

    async def _without_replica(self, key: str) -> bool:
        """After a WAIT that no replica confirmed: whether ``key``'s primary has no replica attached at all (then the
        change is acknowledged at ``primary``, counted; a replica attached but late still answers unavailable)."""
        node = self._node_of(key) if isinstance(self.client, RedisCluster) else None
        info = await _on(self.client, node, "INFO", "replication")
        if int(_field(info, "connected_slaves") or 0) > 0:
            return False
        name = self._name_of(key)
        if name not in self._degraded:
            log.warning("durability degraded: %s has no replica attached; its races' changes are acknowledged at primary", name)
        self._degraded[name] = time.monotonic()
        metrics.degraded_ack()
        return True

    def _restored(self, key: str) -> None:
        """A replica confirmed a write of ``key``'s primary again."""
        if self._degraded and self._degraded.pop(self._name_of(key), None) is not None:
            log.warning("durability restored: %s has a replica again; changes wait for it", self._name_of(key))

    async def close(self) -> None:
        """Close the pipelined connection, if any (redis-py's client is closed by its owner)."""
        if self.pipeline is not None:
            await self.pipeline.close()

    def _node_of(self, key: str) -> ClusterNode:
        assert isinstance(self.client, RedisCluster)
        node = self.client.get_node_from_key(key)
        if node is None:
            raise StoreUnavailable(f"no node serves the slot of {key}")
        return node

    async def _load(self, script: AsyncScript) -> None:
        await self.client.script_load(script.script)  # on a Cluster: on every primary

    async def _refresh(self) -> None:
        if isinstance(self.client, RedisCluster):
            await self.client.nodes_manager.initialize()


async def check_store(client: RedisClient, durability: Durability, *, degraded_ok: bool = False) -> None:
    """Refuse (StoreNotReady) a store that cannot serve as configured: a Cluster whose state is not ``ok`` or with a
    node down, a primary without a connected replica at ``replica`` (only a warning with ``degraded_ok``: its
    changes are acknowledged at ``primary`` until one is attached), a node without ``appendfsync always`` at
    ``fsync``."""
    if isinstance(client, RedisCluster):
        try:
            await client.initialize()
        except RedisClusterException as error:
            raise StoreNotReady(f"cannot reach the Redis Cluster: {error}") from error
        await _check_cluster(client)
    nodes = _nodes(client)
    if durability is Durability.REPLICA:
        for name, node in nodes:
            info = await _on(client, node, "INFO", "replication")
            if _role(info) == "master" and int(_field(info, "connected_slaves") or 0) < 1:
                if not degraded_ok:
                    raise StoreNotReady(f"durability replica needs a replica of every primary; {name} has none connected")
                log.warning("durability degraded at start: %s has no replica connected; acknowledging at primary", name)
    if durability is Durability.FSYNC:
        for name, node in nodes:
            settings = _pairs(await _on(client, node, "CONFIG", "GET", "append*"))
            if settings.get("appendonly") != "yes" or settings.get("appendfsync") != "always":
                raise StoreNotReady(
                    f"durability fsync needs appendonly yes and appendfsync always on every node; {name} has "
                    f"appendonly {settings.get('appendonly')}, appendfsync {settings.get('appendfsync')}"
                )


LAYOUT_VERSION = 1
"""The version of the Redis key layout this release reads and writes (docs/STORAGE.md). Raise it with a change that
an older release would misread (a rolling upgrade is then not possible: docs/OPERATIONS.md "Rolling upgrade")."""


async def check_layout(client: RedisClient, version: int = LAYOUT_VERSION) -> None:
    """Record the store's key layout version (the first process sets it, a newer release raises it) and refuse
    (StoreNotReady) a store a newer release has written: an old server would misread or corrupt its races."""
    key = keys.STORE_LAYOUT
    await client.set(key, version, nx=True)
    stored = int(await client.get(key) or 0)
    if stored < version:
        await client.set(key, version)
    elif stored > version:
        raise StoreNotReady(
            f"this Redis was written by a newer release (key layout {stored}; this release knows {version}): run the "
            "newer release, or restore a backup taken before the upgrade"
        )


async def _check_cluster(client: RedisCluster) -> None:
    any_node = client.get_default_node()
    info = _text(await _on(client, any_node, "CLUSTER", "INFO"))
    if "cluster_state:ok" not in info:
        raise StoreNotReady("the Redis Cluster's state is not ok (CLUSTER INFO); are all slots served?")
    listing = _text(await _on(client, any_node, "CLUSTER", "NODES"))
    down = []
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) >= 8 and ("fail" in fields[2].split(",") or "fail?" in fields[2].split(",") or fields[7] != "connected"):
            down.append(f"{fields[1].split('@')[0]} ({fields[2]}, link {fields[7]})")
    if down:
        raise StoreNotReady(f"Redis Cluster node(s) down: {', '.join(down)}; start them (or forget them) and try again")
    for node in client.get_nodes():
        try:
            await client.ping(target_nodes=node)
        except Exception as error:  # any failure to answer: report the node, whatever redis-py raised
            raise StoreNotReady(f"Redis Cluster node {node.name} does not answer: {error}") from error


def _nodes(client: RedisClient) -> list[tuple[str, ClusterNode | None]]:
    if isinstance(client, RedisCluster):
        return [(node.name, node) for node in client.get_nodes()]
    return [("the Redis", None)]


async def _on(client: RedisClient, node: ClusterNode | None, *command: Any) -> Any:
    if isinstance(client, Redis):
        return await client.execute_command(*command)  # type: ignore[no-untyped-call]
    return await client.execute_command(*command, target_nodes=node)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _pairs(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return {_text(key): _text(item) for key, item in value.items()}
    items = [_text(item) for item in value]
    return dict(zip(items[::2], items[1::2]))


def _role(info: Any) -> str:
    return str(_field(info, "role"))


def _field(info: Any, name: str) -> Any:
    if isinstance(info, dict):
        return info.get(name)
    for line in _text(info).splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return None
