"""A move whose reply was lost with the connection is sent again once by the store: when the first attempt was
stored after all and it finished the race, the caller still learns that, and the race is queued for its analysis."""

from __future__ import annotations

import secrets
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from server.services.dealer import sealed
from server.store import Identity, NewRace, RaceStore, keys
from shared import Profile
from shared.board import Status
from shared.protocol import AttemptState
from shared.race.settings import SettingsInForce


class ReplyLostOnce:
    """Runs each script, but loses the reply of the first one (as a connection dropped after Redis ran it)."""

    def __init__(self, runner: Any) -> None:
        self.runner, self.lost = runner, False

    async def run(self, script: Any, script_keys: list[str], arguments: Any) -> Any:
        result = await self.runner.run(script, script_keys, arguments)
        if not self.lost:
            self.lost = True
            raise RedisConnectionError("connection lost after the script ran")
        return result


async def test_a_finishing_move_whose_reply_was_lost_is_reported_finished_and_queued_for_analysis(redis: Redis) -> None:
    races = RaceStore(redis)
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(SettingsInForce(), sealed(Profile.CLASSIC, 7)))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=0)
    record = await races.load_race(race)
    assert record is not None
    assert not await races.end_attempt(race, 0, AttemptState.RESIGNED)  # Bob still plays
    await redis.zrem(keys.analysis_queue(), race)
    races.runner = ReplyLostOnce(races.runner)  # type: ignore[assignment]
    result = await races.apply_action(
        race, 1, player="bob", epoch=record.epoch, seq=0, move_id="m1", action="5D b>3", count=0, left=52,
        status=Status.BLOCKED, undos=0, ends=AttemptState.BLOCKED,
    )  # fmt: skip
    assert (result.move_seq, result.duplicate, result.finished) == (1, False, True)
    assert await redis.zscore(keys.analysis_queue(), race) == 0
    assert await races.actions(race, 1) == ["5D b>3"]  # stored once
