"""A script's reply lost with the connection after Redis ran it: a move is sent again once by the store; when the
first attempt was stored after all and it finished the race, the caller still learns that, the race is queued for its
analysis and the store's lifecycle observer (the logs and metrics) hears of the result. Every path that can store a
result (a move, a resignation, a timer's tick) tells it exactly once, whichever call stored it."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from server.services.dealer import sealed
from server.store import Identity, NewRace, RaceStore, StoreRefusal, StoreUnavailable, keys
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


async def started_race(races: RaceStore, settings: SettingsInForce | None = None) -> tuple[str, int]:
    """A race of seed 7 with both seats taken and moves open; its id and epoch."""
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(settings or SettingsInForce(), sealed(Profile.CLASSIC, 7)))
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
    # The observer hears of the result the lost reply carried, once.
    assert [event["type"] for event in told] == ["result"] and told[0]["players"][1]["ended"] == AttemptState.BLOCKED


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


def results(told: list[dict[str, Any]]) -> int:
    return [event["type"] for event in told].count("result")


async def test_a_resignation_whose_reply_was_lost_still_has_its_result_told_once(redis: Redis) -> None:
    races = RaceStore(redis)
    race, _epoch = await started_race(races)
    assert not await races.end_attempt(race, 0, AttemptState.RESIGNED)
    await redis.zrem(keys.analysis_queue(), race)
    told = observed(races)
    races.runner = ReplyLostOnce(races.runner)  # type: ignore[assignment]
    with pytest.raises(StoreUnavailable):  # the caller cannot know: the client resends, and is told attempt_over
        await races.end_attempt(race, 1, AttemptState.RESIGNED)
    assert [event["type"] for event in told] == ["result"] and told[0]["players"][1]["ended"] == AttemptState.RESIGNED
    assert await redis.zscore(keys.analysis_queue(), race) == 0
    with pytest.raises(StoreRefusal):  # the client's resend: refused (the race is over), and nothing told again
        await races.end_attempt(race, 1, AttemptState.RESIGNED)
    assert results(told) == 1


async def test_a_timer_tick_whose_reply_was_lost_is_repeated_and_its_result_told_once(redis: Redis) -> None:
    races = RaceStore(redis)
    race, _epoch = await started_race(races, SettingsInForce(time_limit=1))
    record = await races.load_race(race)
    assert record is not None and record.deadline is not None
    async with asyncio.timeout(10):  # until Redis' clock is past the time limit (the tick ends the race then)
        while await races.now_ms() <= record.deadline:
            await asyncio.sleep(0.05)
    told = observed(races)
    pipeline = races.runner.pipeline
    assert pipeline is not None  # one Redis over TCP: ticks go out on the store's pipelined connection
    run_script = pipeline.run_script
    lost: list[bool] = []

    async def tick_reply_lost(script: Any, script_keys: Any, arguments: Any) -> Any:
        answer = await run_script(script, script_keys, arguments)
        if script is races.scripts.tick and not lost:
            lost.append(True)
            raise RedisConnectionError("connection lost after the script ran")
        return answer

    pipeline.run_script = tick_reply_lost  # type: ignore[method-assign,assignment]
    await races.tick(race)
    assert lost == [True] and [event["type"] for event in told] == ["result"]
    assert [line["ended"] for line in told[0]["players"]] == [AttemptState.TIME_LIMIT] * 2
    await races.tick(race)  # and a later tick tells nothing again
    assert results(told) == 1
