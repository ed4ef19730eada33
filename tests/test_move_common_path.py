"""An ordinary move runs lua/apply_move.lua, the common path without the helpers only an attempt's or the race's end
needs; it stores what the full script (lua/apply_action.lua) stores, and hands a move that may end the race to the
full script before writing anything."""

from __future__ import annotations

import secrets
from typing import Any

import msgpack
from redis.asyncio import Redis

from server.services.dealer import sealed
from server.store import Identity, NewRace, RaceStore, keys
from server.store.scripts import script_arguments, script_reply
from shared import Profile
from shared.board import Status
from shared.protocol import AttemptState
from shared.race.settings import SettingsInForce

TIMES = {b"created_at", b"start_at", b"finished_at", b"ended_at", b"p0_ended_at", b"p1_ended_at"}


DEAL = sealed(Profile.CLASSIC, 7)


async def started_race(races: RaceStore, settings: SettingsInForce | None = None) -> tuple[str, int]:
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(settings or SettingsInForce(), DEAL))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=0)
    record = await races.load_race(race)
    assert record is not None
    return race, record.epoch


def move(slot: int, seq: int, epoch: int, count: int, **changes: Any) -> dict[str, Any]:
    fields = {
        "live_ttl": 600_000, "record_ttl": 600_000, "slot": slot, "seq": seq, "move_id": f"m{slot}-{seq}", "action": f"5D b>{seq % 6 + 1}",
        "count": count, "left": 52 - count, "status": Status.PLAYING, "undos": 0, "ends": None, "max_actions": 1000,
        "player": ("ann", "bob")[slot], "epoch": epoch, "columns": None,
    }  # fmt: skip
    return {**fields, **changes}


async def stored(redis: Redis, race: str) -> tuple[dict[Any, Any], list[Any], list[dict[str, Any]]]:
    """The race's state (without times and its id), both action lists and its events (without their times)."""
    race_keys = keys.race_keys(race)
    fields: dict[Any, Any] = await redis.hgetall(race_keys[keys.STATE])
    state = {name: value for name, value in fields.items() if name not in TIMES and name != b"id"}
    actions = [await redis.lrange(race_keys[index], 0, -1) for index in (keys.MOVES_0, keys.MOVES_1)]
    events = []
    entries: Any = await redis.xrange(race_keys[keys.EVENTS])
    for _, entry in entries:
        event = msgpack.unpackb(entry[b"e"], raw=False)
        event.pop("at", None)
        event.pop("start_at", None)
        events.append(event)
    return state, actions, events


async def test_the_common_path_stores_an_ordinary_move_as_the_full_script_does(redis: Redis) -> None:
    races = RaceStore(redis)
    (common, common_epoch), (full, full_epoch) = await started_race(races), await started_race(races)
    for number in range(6):  # both seats, a count that goes up and one that goes back (an undo)
        slot, seq, count = number % 2, number // 2, [1, 1, 2, 1, 1, 2][number]
        common_reply = script_reply(await races.scripts.apply_move(keys=keys.race_keys(common), args=script_arguments(**move(slot, seq, common_epoch, count))))
        full_reply = script_reply(await races.scripts.apply_action(keys=keys.race_keys(full), args=script_arguments(**move(slot, seq, full_epoch, count))))
        assert common_reply[:3] == full_reply[:3] == [1, seq + 1, 0]
        assert common_reply[4].split(b" ", 1)[0] == full_reply[4].split(b" ", 1)[0]  # the same event seq
    assert await stored(redis, common) == await stored(redis, full)


async def test_a_move_after_the_other_attempt_ended_is_handed_on_unwritten_and_then_decides_the_race(redis: Redis) -> None:
    races = RaceStore(redis)
    race, epoch = await started_race(races)  # no undo: an attempt that cannot fall back may win on count
    await races.apply_action(race, 1, player="bob", epoch=epoch, seq=0, move_id="b0", action="5D b>1", count=0, left=52,
                             status=Status.PLAYING, undos=0, ends=AttemptState.BLOCKED)  # fmt: skip
    before = await stored(redis, race)
    reply = await races.scripts.apply_move(keys=keys.race_keys(race), args=script_arguments(**move(0, 0, epoch, 1)))
    assert script_reply(reply) == [3]
    assert await stored(redis, race) == before  # nothing written
    result = await races.apply_action(race, 0, player="ann", epoch=epoch, seq=0, move_id="a0", action="5D b>1", count=1, left=51,
                                      status=Status.PLAYING, undos=0)  # fmt: skip
    assert result.finished and not result.duplicate
    state, actions, events = await stored(redis, race)
    assert state[b"status"] == b"finished" and state[b"winner"] == b"0" and actions[0] == [b"5D b>1"]
    assert [event["type"] for event in events][-2:] == ["move", "result"]


async def test_a_move_past_the_time_limit_is_handed_on_and_the_full_script_ends_the_race(redis: Redis) -> None:
    races = RaceStore(redis)
    race, epoch = await started_race(races, SettingsInForce(time_limit=60))
    await redis.hset(keys.race_keys(race)[keys.STATE], "deadline", 1)  # long passed
    reply = await races.scripts.apply_move(keys=keys.race_keys(race), args=script_arguments(**move(0, 0, epoch, 1)))
    assert script_reply(reply) == [3]
    assert await redis.llen(keys.race_keys(race)[keys.MOVES_0]) == 0
    state, _, events = await stored(redis, race)
    assert state[b"status"] == b"countdown" and [event["type"] for event in events][-1] == "countdown"  # not even started
