"""A real Redis Cluster on loopback: 3 primaries and 3 replicas, for the tests and for developers.

Each node is an :class:`EmbeddedRedis` started in cluster mode from the same
redis-server binary the project already uses. The nodes are joined with
``CLUSTER MEET``, the 16,384 slots are split evenly over the primaries with
``CLUSTER ADDSLOTS``, one replica is attached to each primary with ``CLUSTER
REPLICATE``, and :meth:`LocalCluster.start` returns once every node reports
``cluster_state:ok`` and every replica is in sync. The node timeout is short
(1 s) so that a killed primary fails over within a few seconds.

    python -m server.embedded_cluster [--nodes 6] [--data-dir DIR]   runs one until Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import redis

from server.embedded_redis import EmbeddedRedis, RedisUnavailable

SLOTS = 16_384
NODE_TIMEOUT_MS = 1_000


def cluster_port() -> int:
    """A free loopback port whose cluster bus port (10,000 higher) is free too: a node's port must be <= 55,535."""
    for _attempt in range(200):
        port = secrets.randbelow(50_000 - 20_000) + 20_000
        if all(_is_free(candidate) for candidate in (port, port + 10_000)):
            return port
    raise RedisUnavailable("no free pair of loopback ports for a cluster node")


def _is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def slot_ranges(primaries: int) -> list[range]:
    """The 16,384 hash slots split into ``primaries`` contiguous, near-equal ranges."""
    bounds = [SLOTS * index // primaries for index in range(primaries + 1)]
    return [range(bounds[index], bounds[index + 1]) for index in range(primaries)]


class LocalCluster:
    """``primaries`` primaries, each with ``replicas_per_primary`` replicas, on free loopback ports."""

    def __init__(
        self,
        data_dir: Path,
        *,
        primaries: int = 3,
        replicas_per_primary: int = 1,
        appendfsync: str = "everysec",
        node_timeout_ms: int = NODE_TIMEOUT_MS,
        binary: str | None = None,
    ) -> None:
        """``node_timeout_ms``: how long a node may not answer before the others fail it over (short, so a killed
        primary is replaced quickly; a longer one keeps a busy machine from failing over a node that is only slow).
        ``binary``: the redis-server of every node (default: the project's, see :func:`find_redis_server`)."""
        self.data_dir = data_dir
        self.primaries = primaries
        self.replicas_per_primary = replicas_per_primary
        count = primaries * (1 + replicas_per_primary)
        self.nodes = [
            EmbeddedRedis(
                data_dir / f"node{index}",
                persistent=True,
                port=cluster_port(),
                extra_args=(
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", str(node_timeout_ms), "--appendfsync", appendfsync,
                    # A primary down leaves only its own slots unserved: the other primaries' races carry on (the
                    # default, yes, refuses every slot while one is uncovered: every race stopped 1.4-1.7 s a failover).
                    "--cluster-require-full-coverage", "no",
                ),
                binary=binary,
            )
            for index in range(count)
        ]

    @property
    def urls(self) -> list[str]:
        """One redis:// URL per node (any one is enough for a cluster client to discover the rest)."""
        return [f"redis://127.0.0.1:{node.port}" for node in self.nodes]

    @property
    def url(self) -> str:
        """The nodes' URLs joined by commas, as ``flowergarden serve --redis-cluster`` takes them."""
        return ",".join(self.urls)

    def client(self, index: int) -> redis.Redis:
        """A plain (non-cluster) client of one node."""
        return redis.Redis(port=self.nodes[index].port, socket_timeout=5)

    def start(self, timeout: float = 30.0) -> None:
        """Start every node, assign the slots, attach the replicas, and wait until the cluster is ok."""
        try:
            for node in self.nodes:
                node.start()
            self._form(timeout)
        except BaseException:
            self.stop()
            raise

    def _form(self, timeout: float) -> None:
        clients = [self.client(index) for index in range(len(self.nodes))]
        try:
            for other in self.nodes[1:]:
                _command(clients[0], "CLUSTER", "MEET", "127.0.0.1", other.port)
            for index, slots in enumerate(slot_ranges(self.primaries)):
                _command(clients[index], "CLUSTER", "ADDSLOTS", *slots)
            deadline = time.monotonic() + timeout
            self._wait(lambda: all(len(_known_nodes(client)) == len(self.nodes) for client in clients), deadline, "the nodes to meet")
            primary_ids = [_command(clients[index], "CLUSTER", "MYID") for index in range(self.primaries)]
            for replica in range(self.primaries, len(self.nodes)):
                primary = (replica - self.primaries) % self.primaries
                _command(clients[replica], "CLUSTER", "REPLICATE", _text(primary_ids[primary]))
            self._wait(lambda: all(_cluster_ok(client) for client in clients), deadline, "cluster_state:ok")
            self._wait(lambda: all(_replica_synced(clients[index]) for index in range(self.primaries, len(self.nodes))), deadline, "replicas in sync")
        finally:
            for client in clients:
                client.close()

    @staticmethod
    def _wait(condition: object, deadline: float, what: str) -> None:
        assert callable(condition)
        while True:
            with contextlib.suppress(redis.RedisError):
                if condition():
                    return
            if time.monotonic() > deadline:
                raise RedisUnavailable(f"local Redis Cluster: timed out waiting for {what}")
            time.sleep(0.05)

    def primary_of_slot(self, slot: int) -> int:
        """The index (in :attr:`nodes`) of the node that serves ``slot`` now (it changes after a failover)."""
        for index in range(len(self.nodes)):
            if self.nodes[index].process is None:
                continue
            with contextlib.suppress(redis.RedisError), self.client(index) as client:
                for start, end, master, *_replicas in _command(client, "CLUSTER", "SLOTS"):
                    if start <= slot <= end:
                        port = int(master[1])
                        return next(i for i, node in enumerate(self.nodes) if node.port == port)
        raise RedisUnavailable(f"no live node knows who serves slot {slot}")

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()


def _command(client: redis.Redis, *args: object) -> Any:
    """One Redis command by name (redis-py types its generic ``execute_command`` loosely)."""
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _known_nodes(client: redis.Redis) -> list[str]:
    return [line for line in _text(_command(client, "CLUSTER", "NODES")).splitlines() if line.strip()]


def _cluster_ok(client: redis.Redis) -> bool:
    return "cluster_state:ok" in _text(_command(client, "CLUSTER", "INFO"))


def _replica_synced(client: redis.Redis) -> bool:
    info = client.info("replication")
    return info.get("role") == "slave" and info.get("master_link_status") == "up"


def main(argv: list[str] | None = None) -> int:
    """Run a local cluster until interrupted, printing the URL to pass to ``flowergarden serve --redis-cluster``."""
    parser = argparse.ArgumentParser(prog="python -m server.embedded_cluster", description=__doc__.split("\n\n")[0])
    parser.add_argument("--primaries", type=int, default=3, help="primaries (default 3), each with one replica")
    parser.add_argument("--data-dir", type=Path, help="where the nodes keep their files (default: a temporary folder)")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        folder = args.data_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fgr-cluster-")))
        cluster = LocalCluster(folder, primaries=args.primaries)
        try:
            stack.enter_context(cluster)
        except RedisUnavailable as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(cluster.url, flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.exit(main())
