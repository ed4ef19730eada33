"""A stalled Redis (SIGSTOP) and the pipelined script connection: the commands waiting for a new connection share
the attempt under way and fail with it, instead of queueing one attempt each behind it, so none waits longer than
one attempt (campaign fault3, defect C: on a 30 s stall, callers waited up to 18 s, each behind the last)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.embedded_redis import EmbeddedRedis
from server.store import connect_redis
from server.store.script_pipeline import DirectAddress, ScriptPipeline

P = TypeVar("P", bound=asyncio.Protocol)
ATTEMPTS: list[str] = []
"""Every connection the pipeline opened (real ones, to the real Redis)."""


class CountedAddress(DirectAddress):
    """The Redis address, noting each connection opened to it."""

    async def open(self, factory: Callable[[], P]) -> P:
        ATTEMPTS.append(f"{self.host}:{self.port}")
        return await super().open(factory)


async def test_commands_waiting_on_a_stalled_redis_share_one_connection_attempt_and_fail_with_it(tmp_path: Path) -> None:
    redis_server = EmbeddedRedis(tmp_path, persistent=False)  # its own: this test stops it
    redis_server.start()
    assert redis_server.process is not None
    client = connect_redis(redis_server.url)
    pipeline = ScriptPipeline(CountedAddress("127.0.0.1", redis_server.port, timeout=0.5, connect_timeout=0.5))
    script = client.register_script("return 1")
    try:
        assert await pipeline.run_script(script, ["k"], []) == 1
        redis_server.process.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(RedisTimeoutError):  # the deadline fails the connection in use
                await pipeline.run_script(script, ["k"], [])
            before = len(ATTEMPTS)
            waiting = [pipeline.run_script(script, ["k"], []) for _ in range(6)]
            results = await asyncio.wait_for(asyncio.gather(*waiting, return_exceptions=True), 60)
            assert all(isinstance(result, RedisTimeoutError) for result in results), results
            assert len(ATTEMPTS) - before == 1  # one attempt for all six, not six in a row
        finally:
            redis_server.process.send_signal(signal.SIGCONT)
        assert await pipeline.run_script(script, ["k"], []) == 1  # and it connects again by itself
    finally:
        await pipeline.close()
        await client.aclose()
        redis_server.stop()
