"""The pipelined connection that carries race scripts (server/store/script_pipeline.py): each caller gets its own
reply however many are in flight, Redis' errors arrive as redis-py's exceptions, a script Redis forgot is loaded
again, and a Redis that does not answer in time fails the waiting commands and is connected to afresh."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from redis.asyncio import Redis
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.embedded_redis import EmbeddedRedis
from server.store import connect_redis
from server.store.durability import Durability, ScriptRunner
from server.store.script_pipeline import DirectAddress, ScriptPipeline

ECHO = "return {KEYS[1], ARGV[1], tonumber(ARGV[2]) * 2}"


@pytest_asyncio.fixture
async def redis_and_pipeline(single_redis_url: str) -> AsyncIterator[tuple[Redis, ScriptPipeline]]:
    """redis-py's client of the test Redis and a script pipeline to the same Redis."""
    client = connect_redis(single_redis_url)
    pipeline = ScriptPipeline.for_client(client)
    assert pipeline is not None
    try:
        yield client, pipeline
    finally:
        await pipeline.close()
        await client.aclose()


async def test_concurrent_scripts_each_get_their_own_reply(redis_and_pipeline: tuple[Redis, ScriptPipeline]) -> None:
    client, pipeline = redis_and_pipeline
    script = client.register_script(ECHO)
    replies = await asyncio.gather(*(pipeline.run_script(script, [f"key:{n}"], [f"value {n}", n]) for n in range(300)))
    assert replies == [[f"key:{n}".encode(), f"value {n}".encode(), 2 * n] for n in range(300)]


async def test_a_script_reply_has_the_same_value_as_through_redis_py(redis_and_pipeline: tuple[Redis, ScriptPipeline]) -> None:
    client, pipeline = redis_and_pipeline
    script = client.register_script("return {1, 'text', {}, false, true, {'nested', 7}}")
    assert await pipeline.run_script(script, ["k"], []) == await script(keys=["k"], args=[])


async def test_an_error_reply_is_redis_py_exception_and_the_connection_goes_on(redis_and_pipeline: tuple[Redis, ScriptPipeline]) -> None:
    client, pipeline = redis_and_pipeline
    failing = client.register_script("return redis.error_reply('refused here')")
    echo = client.register_script(ECHO)
    with pytest.raises(ResponseError, match="refused here"):
        await pipeline.run_script(failing, ["k"], [])
    assert await pipeline.run_script(echo, ["k"], ["v", 1]) == [b"k", b"v", 2]


async def test_a_script_redis_no_longer_knows_is_loaded_again(redis_and_pipeline: tuple[Redis, ScriptPipeline]) -> None:
    client, pipeline = redis_and_pipeline
    script = client.register_script(ECHO + " -- reloaded")
    await client.script_flush()
    assert await pipeline.run_script(script, ["k"], ["v", 3]) == [b"k", b"v", 6]
    assert await client.script_exists(script.sha) == [True]


async def test_a_redis_that_does_not_answer_in_time_fails_the_waiting_scripts_then_a_new_connection_is_used() -> None:
    accepted: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
        await reader.read(1 << 16)  # HELLO
        writer.write(b"+OK\r\n")
        while await reader.read(1 << 16):  # reads the scripts, never answers
            pass

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pipeline = ScriptPipeline(DirectAddress("127.0.0.1", port, timeout=0.2, connect_timeout=0.2))
    client = connect_redis(f"redis://127.0.0.1:{port}/0")
    script = client.register_script(ECHO)
    try:
        results = await asyncio.gather(*(pipeline.run_script(script, ["k"], ["v", 1]) for _ in range(3)), return_exceptions=True)
        assert all(isinstance(result, RedisTimeoutError) for result in results)
        with pytest.raises(RedisTimeoutError):
            await pipeline.run_script(script, ["k"], ["v", 1])
        assert len(accepted) == 2  # the timed-out connection was dropped and a new one opened
    finally:
        await pipeline.close()
        server.close()
        await client.aclose()


def test_race_scripts_take_the_pipeline_on_one_redis_but_not_with_a_replica_wait(single_redis_url: str) -> None:
    client = connect_redis(single_redis_url)
    assert ScriptRunner(client, Durability.PRIMARY).pipeline is not None
    assert ScriptRunner(client, Durability.FSYNC).pipeline is not None
    assert ScriptRunner(client, Durability.REPLICA).pipeline is None


async def test_a_redis_on_a_unix_socket_gets_the_pipeline_too(tmp_path: Path) -> None:
    """The embedded store of ``flowergarden serve`` listens on a unix socket only: its race scripts still take the
    pipelined connection (before, only TCP did, and they went through redis-py's per-command machinery)."""
    with EmbeddedRedis(tmp_path / "redis", persistent=False, unix_socket=True) as embedded:
        client = connect_redis(embedded.url)
        pipeline = ScriptPipeline.for_client(client)
        assert pipeline is not None and pipeline.address.path == str(embedded.unix_socket)
        try:
            script = client.register_script(ECHO)
            assert await pipeline.run_script(script, ["k"], ["v", 4]) == [b"k", b"v", 8]
        finally:
            await pipeline.close()
            await client.aclose()
