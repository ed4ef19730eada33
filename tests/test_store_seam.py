"""The seam between services and Redis: the store raises its own errors, and the background loops survive them."""

from __future__ import annotations

import socket

import pytest

from server.services.background import BackgroundLoop
from server.store import RaceStore, StoreError, StoreUnavailable, connect_redis


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_an_unreachable_redis_is_store_unavailable_not_a_redis_py_exception() -> None:
    redis = connect_redis(f"redis://127.0.0.1:{free_port()}/0", max_connections=2)
    try:
        with pytest.raises(StoreUnavailable) as raised:
            await RaceStore(redis).load_race("abcdefghijk")
        assert isinstance(raised.value, StoreError)
        assert raised.value.__cause__ is not None  # the redis-py error stays attached for the logs
    finally:
        await redis.aclose()


async def test_a_background_loop_logs_a_store_failure_and_runs_the_next_step() -> None:
    loop = BackgroundLoop("test loop")
    steps: list[int] = []
    failures: list[Exception] = []

    async def step() -> None:
        steps.append(len(steps))
        if len(steps) == 1:
            raise StoreUnavailable("down")
        if len(steps) == 3:
            loop.stop()

    await loop.run(step, retry_seconds=0, on_failure=failures.append)
    assert steps == [0, 1, 2] and loop.failures == 1 and [str(error) for error in failures] == ["down"]


async def test_a_background_loop_lets_a_bug_propagate() -> None:
    async def step() -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await BackgroundLoop("test loop").run(step, retry_seconds=0)


async def test_a_failure_while_stopping_ends_the_loop_quietly() -> None:
    loop = BackgroundLoop("test loop")

    async def step() -> None:
        loop.stop()
        raise StoreUnavailable("cancelled read")

    await loop.run(step, retry_seconds=10)
    assert loop.failures == 0
