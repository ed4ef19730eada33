"""A race script replies with one MessagePack string (server/store/scripts.py ``packed_reply``): Redis 6.2 writes a
Lua table reply in pieces, one system call each. Read back, the reply is what Redis would have sent for the table."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError
from test_move_common_path import move, started_race

from server.store import RaceStore, keys
from server.store.script_pipeline import ScriptPipeline
from server.store.scripts import packed_reply, script_arguments, script_reply


@pytest.mark.parametrize(
    "value", ["{1, 'text', {}, {'nested', 7}, 1764590000123}", "{0, 'race_over', -1, {}}", "42", "'text'"]
)
async def test_a_packed_reply_reads_as_the_value_redis_would_have_sent(redis: Redis, value: str) -> None:
    # as the store's script connection reads a reply (RESP3)
    pipeline = ScriptPipeline.for_client(redis)
    assert pipeline is not None
    plain = redis.register_script(f"return {value}")
    packed = redis.register_script(packed_reply(f"return {value}"))
    try:
        raw = await pipeline.run_script(packed, ["k"], [])
        assert isinstance(raw, bytes)
        assert script_reply(raw) == await pipeline.run_script(plain, ["k"], [])
    finally:
        await pipeline.close()


async def test_a_packed_script_that_returns_nothing_replies_nil(redis: Redis) -> None:
    script = redis.register_script(packed_reply("local unused = 1"))
    assert script_reply(await script(keys=["k"], args=[])) is None


async def test_an_error_in_a_packed_script_is_still_an_error_reply(redis: Redis) -> None:
    script = redis.register_script(packed_reply("if ARGV[1] == 'x' then error('refused here') end return {1}"))
    with pytest.raises(ResponseError, match="refused here"):
        await script(keys=["k"], args=["x"])
    assert script_reply(await script(keys=["k"], args=["y"])) == [1]


async def test_the_move_script_replies_with_one_string_holding_the_published_event(redis: Redis) -> None:
    races = RaceStore(redis)
    race, epoch = await started_race(races)
    raw = await races.scripts.apply_move(keys=keys.race_keys(race), args=script_arguments(**move(0, 0, epoch, 0)))
    assert isinstance(raw, bytes)
    status, move_seq, finished, lifecycle, published = script_reply(raw)
    assert (status, move_seq, finished) == (1, 1, 0)
    assert isinstance(lifecycle, list) and isinstance(published, bytes)  # the started event may come with the first move
    stored: Any = await redis.xrange(keys.race_keys(race)[keys.EVENTS])
    stream_id, fields = stored[-1]
    assert published == stream_id.split(b"-")[1] + b" " + fields[b"e"]
