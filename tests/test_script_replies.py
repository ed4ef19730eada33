"""A race script replies with one MessagePack string (server/store/scripts.py ``packed_reply``): Redis 6.2 writes a
Lua table reply in pieces, one system call each. Read back, the reply is what Redis would have sent for the table."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from server.services.dealer import sealed
from server.store import Identity, NewRace, RaceStore, keys
from server.store.script_pipeline import ScriptPipeline
from server.store.scripts import packed_reply, script_arguments, script_reply
from shared import Profile
from shared.board import Status
from shared.race.settings import SettingsInForce


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
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(SettingsInForce(), sealed(Profile.CLASSIC, 7)))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=0)
    record = await races.load_race(race)
    assert record is not None
    move = {
        "live_ttl": 60_000, "record_ttl": 60_000, "slot": 0, "seq": 0, "move_id": "m1", "action": "5D b>3", "count": 0, "left": 52,
        "status": Status.PLAYING, "undos": 0, "ends": None, "max_actions": 1000, "player": "ann", "epoch": record.epoch, "columns": None,
    }  # fmt: skip
    raw = await races.scripts.apply_action(keys=keys.race_keys(race), args=script_arguments(**move))
    assert isinstance(raw, bytes)
    status, move_seq, finished, lifecycle, published = script_reply(raw)
    assert (status, move_seq, finished) == (1, 1, 0)
    assert isinstance(lifecycle, list) and isinstance(published, bytes)  # the started event may come with the first move
    stored: Any = await redis.xrange(keys.race_keys(race)[keys.EVENTS])
    stream_id, fields = stored[-1]
    assert published == stream_id.split(b"-")[1] + b" " + fields[b"e"]
