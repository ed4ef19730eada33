"""When a change of a race counts as stored: the durability level, and the checks a store must pass at start.

``primary``: the script ran on the primary (today's behaviour; a primary that dies before its replica has the
write loses it). ``replica``: the script and a ``WAIT 1 <timeout>`` go on the same connection to the node that ran
it, and the change is acknowledged only once a replica has it (WAIT counts the writes of its own connection, and
every command, even a read, moves that connection's mark to the primary's current offset; replication is ordered,
so a resent move answered from the move-id table waits for the original write too). ``fsync``: every node runs
with ``appendonly yes`` and ``appendfsync always``, so the primary answers only once the write is on its disk
(Redis < 7.2 has no WAITAOF); the server checks this with CONFIG GET at start and refuses to run otherwise.

A change a replica did not confirm in time raises :class:`StoreUnavailable`: it may or may not survive a failover,
so the client is told ``unavailable`` and resends with the same ``move_id`` (docs/PROTOCOL.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import AskError, MovedError, NoScriptError, RedisClusterException, RedisError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

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


REDIRECTIONS = (MovedError, AskError, TryAgainError)
"""Replies that say the command did not run on this node: safe to send again where the slot is now."""


class ScriptRunner:
    """Runs a race's script and, at durability ``replica``, acknowledges it only once a replica has the write."""

    def __init__(self, client: RedisClient, durability: Durability = Durability.PRIMARY, *, wait_timeout_ms: int = 1000) -> None:
        self.client = client
        self.durability = durability
        self.wait_timeout_ms = wait_timeout_ms
        self.pipeline = ScriptPipeline.for_client(client) if durability is not Durability.REPLICA else None
        """Where scripts go on one Redis without a WAIT: one pipelined connection (server/store/script_pipeline.py)."""

    async def run(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The script's reply; StoreUnavailable if a replica did not confirm the write within the timeout."""
        if self.pipeline is not None:
            return await self.pipeline.run_script(script, keys, args)
        if self.durability is not Durability.REPLICA:
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
                raise StoreUnavailable(f"no replica confirmed the write within {self.wait_timeout_ms} ms (WAIT 1)")
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


async def check_store(client: RedisClient, durability: Durability) -> None:
    """Refuse (StoreNotReady) a store that cannot serve as configured: a Cluster whose state is not ``ok`` or with a
    node down, a primary without a connected replica at ``replica``, a node without ``appendfsync always`` at
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
                raise StoreNotReady(f"durability replica needs a replica of every primary; {name} has none connected")
    if durability is Durability.FSYNC:
        for name, node in nodes:
            settings = _pairs(await _on(client, node, "CONFIG", "GET", "append*"))
            if settings.get("appendonly") != "yes" or settings.get("appendfsync") != "always":
                raise StoreNotReady(
                    f"durability fsync needs appendonly yes and appendfsync always on every node; {name} has "
                    f"appendonly {settings.get('appendonly')}, appendfsync {settings.get('appendfsync')}"
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
