"""A move whose reply was lost with the connection is sent again once by the store: when the first attempt was
stored after all and it finished the race, the caller still learns that, the race is queued for its analysis and
the store's lifecycle observer (the logs and metrics) hears of the result — exactly once, whichever script stored it."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
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
    """Runs each script, but loses the reply of the first one (as a connection dropped after Redis ran it); ``meanwhile``
    runs after that first script, before its lost reply is noticed (what other processes did in between)."""

    def __init__(self, runner: Any, meanwhile: Callable[[], Awaitable[None]] | None = None) -> None:
        self.runner, self.lost, self.meanwhile = runner, False, meanwhile

    async def run(self, script: Any, script_keys: list[str], arguments: Any) -> Any:
        result = await self.runner.run(script, script_keys, arguments)
        if not self.lost:
            self.lost = True
            if self.meanwhile is not None:
                await self.meanwhile()
            raise RedisConnectionError("connection lost after the script ran")
        return result


def observed(races: RaceStore) -> list[dict[str, Any]]:
    """The lifecycle events the store's observer is told from now on."""
    told: list[dict[str, Any]] = []
    races.lifecycle = lambda race_id, events: told.extend(events)
    return told


async def started_race(races: RaceStore) -> tuple[str, int]:
    """A race of seed 7 with both seats taken and moves open; its id and epoch."""
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(SettingsInForce(), sealed(Profile.CLASSIC, 7)))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=0)
    record = await races.load_race(race)
    assert record is not None
    return race, record.epoch


async def test_a_finishing_move_whose_reply_was_lost_is_reported_finished_and_queued_for_analysis(redis: Redis) -> None:
    races = RaceStore(redis)
    race, epoch = await started_race(races)
    assert not await races.end_attempt(race, 0, AttemptState.RESIGNED)  # Bob still plays
    await redis.zrem(keys.analysis_queue(), race)
    told = observed(races)
    races.runner = ReplyLostOnce(races.runner)  # type: ignore[assignment]
    result = await races.apply_action(
        race, 1, player="bob", epoch=epoch, seq=0, move_id="m1", action="5D b>3", count=0, left=52,
        status=Status.BLOCKED, undos=0, ends=AttemptState.BLOCKED,
    )  # fmt: skip
    assert (result.move_seq, result.duplicate, result.finished) == (1, False, True)
    assert await redis.zscore(keys.analysis_queue(), race) == 0
    assert await races.actions(race, 1) == ["5D b>3"]  # stored once
    # The observer hears what the lost reply carried: Bob's attempt ended by the move, and the result, once each.
    assert [(event["type"], event.get("slot")) for event in told] == [("attempt_ended", 1), ("result", None)]
    assert told[0]["reason"] == AttemptState.BLOCKED and told[1]["players"][1]["ended"] == AttemptState.BLOCKED


async def test_a_move_whose_reply_was_lost_does_not_report_a_result_another_script_stored_after_it(redis: Redis) -> None:
    races = RaceStore(redis)
    race, epoch = await started_race(races)
    told = observed(races)
    finished_by: list[bool] = []

    async def ann_resigns() -> None:  # after Bob's move (his first card home) was stored: Bob leads, the race is over
        finished_by.append(await races.end_attempt(race, 0, AttemptState.RESIGNED))

    races.runner = ReplyLostOnce(races.runner, ann_resigns)  # type: ignore[assignment]
    result = await races.apply_action(
        race, 1, player="bob", epoch=epoch, seq=0, move_id="m1", action="AS b>f", count=1, left=51,
        status=Status.PLAYING, undos=0,
    )  # fmt: skip
    assert finished_by == [True]  # the resignation stored the result, and its caller was told
    assert (result.move_seq, result.duplicate, result.finished) == (1, False, False)  # not the move's doing
    assert [event["type"] for event in told].count("result") == 1
