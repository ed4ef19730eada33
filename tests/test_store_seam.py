"""The seam between services and Redis: the store raises its own errors, and the background loops survive them."""

from __future__ import annotations

import socket

import pytest

from server import metrics
from server.services.background import BackgroundLoop, Backoff
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


async def test_a_background_loop_survives_any_exception_and_counts_it_as_unexpected() -> None:
    loop = BackgroundLoop("test loop: any exception")
    steps: list[int] = []

    async def step() -> None:
        steps.append(len(steps))
        if len(steps) == 1:
            raise KeyError("bug")
        loop.stop()

    before = _errors("test loop: any exception", "unexpected")
    await loop.run(step, retry_seconds=0)
    assert steps == [0, 1] and loop.failures == 1
    assert _errors("test loop: any exception", "unexpected") == before + 1


def _errors(worker: str, cause: str) -> float:
    return metrics.REGISTRY.get_sample_value("flowergarden_background_errors_total", {"worker": worker, "cause": cause}) or 0.0


def test_backoff_doubles_with_each_failure_within_its_jitter_up_to_the_cap_and_resets() -> None:
    lowest, highest = Backoff(0.5, 4.0, rng=lambda: 0.0), Backoff(0.5, 4.0, rng=lambda: 1.0)
    assert [lowest.next_delay() for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    assert [highest.next_delay() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    highest.reset()
    assert highest.next_delay() == 0.5
    assert Backoff(0).next_delay() > 0  # a loop whose step sleeps first still never spins on a failing store


async def test_a_failure_while_stopping_ends_the_loop_quietly() -> None:
    loop = BackgroundLoop("test loop")

    async def step() -> None:
        loop.stop()
        raise StoreUnavailable("cancelled read")

    await loop.run(step, retry_seconds=10)
    assert loop.failures == 0
