"""The periodic work of presence and timers stays cheap without changing what it decides: a renewal of leases that
are all still held only moves them on, a tick before any deadline only names the next one, a process renews every
race it follows many at a time, and a sweep ticks all due races together."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest
from redis.asyncio import Redis

from server.services import presence as presence_module
from server.services.clock import ServerClock
from server.services.dealer import sealed
from server.services.presence import PresenceService
from server.services.timers import TimerSweeper
from server.store import Identity, NewRace, RaceStore, keys, presence_member
from shared import Profile
from shared.protocol import AttemptState
from shared.race.settings import SettingsInForce

ANN, BOB, EVE = presence_member(0, "p.1", "ann"), presence_member(1, "p.2", "bob"), presence_member(None, "p.3")


async def _running_race(races: RaceStore) -> str:
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(SettingsInForce(), sealed(Profile.CLASSIC, 7)))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=0)
    await races.tick(race)  # the countdown of 0 is over: running
    return race


async def _leases(redis: Redis, race: str) -> dict[str, float]:
    race_keys = keys.race_keys(race)
    found: dict[str, float] = {}
    for index in (keys.PRESENCE_0, keys.PRESENCE_1, keys.WATCHERS):
        rows: Any = await redis.zrange(race_keys[index], 0, -1, withscores=True)
        for member, score in rows:
            found[member.decode()] = float(score)
    return found


async def _state_and_events(redis: Redis, race: str) -> tuple[dict[Any, Any], int]:
    race_keys = keys.race_keys(race)
    return await redis.hgetall(race_keys[keys.STATE]), await redis.xlen(race_keys[keys.EVENTS])


async def test_renewing_leases_that_are_all_still_held_moves_them_on_and_changes_nothing_else(redis: Redis) -> None:
    races = RaceStore(redis)
    race = await _running_race(races)
    await races.presence(race, leave=False, members=[ANN, BOB, EVE], lease_ms=20_000)
    before = await _leases(redis, race)
    state, events = await _state_and_events(redis, race)
    due = await races.presence(race, leave=False, members=[ANN, BOB, EVE], lease_ms=60_000)
    after = await _leases(redis, race)
    assert set(after) == {"p.1", "p.2", "p.3"}
    assert all(after[member] > before[member] + 30_000 for member in after)
    assert await _state_and_events(redis, race) == (state, events)  # no presence changed: no field, no event
    assert due is not None and due <= min(after.values())  # the next deadline, to restore a lost timer entry


async def test_a_renewal_of_a_lease_that_ran_out_brings_the_player_back(redis: Redis) -> None:
    races = RaceStore(redis)
    race = await _running_race(races)
    await races.presence(race, leave=False, members=[ANN, BOB], lease_ms=20_000)
    await races.presence(race, leave=False, members=[ANN], lease_ms=1)  # Ann's process stalled: her lease lapses
    await asyncio.sleep(0.05)
    await races.tick(race)
    assert (await redis.hget(keys.race_keys(race)[keys.STATE], "p0_away")) != b"0"
    await races.presence(race, leave=False, members=[ANN], lease_ms=20_000)  # the late renewal is a comeback
    assert (await redis.hget(keys.race_keys(race)[keys.STATE], "p0_away")) == b"0"
    assert "p.1" in await _leases(redis, race)


async def test_a_renewal_does_not_give_a_seat_to_a_player_who_no_longer_holds_it(redis: Redis) -> None:
    races = RaceStore(redis)
    race = await _running_race(races)
    await races.presence(race, leave=False, members=[presence_member(1, "p.9", "mallory")], lease_ms=20_000)
    assert "p.9" not in await _leases(redis, race)


async def test_a_tick_before_any_deadline_writes_nothing_and_names_the_next_one(redis: Redis) -> None:
    races = RaceStore(redis)
    race = await _running_race(races)
    await races.presence(race, leave=False, members=[ANN, BOB, EVE], lease_ms=30_000)
    state, events = await _state_and_events(redis, race)
    due = await races.tick(race)
    assert await _state_and_events(redis, race) == (state, events)
    assert due == min((await _leases(redis, race)).values())


async def test_a_process_renews_the_leases_of_every_race_it_follows_a_batch_at_a_time(redis: Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(presence_module, "RENEWAL_BATCH", 2)
    races = RaceStore(redis)
    service = PresenceService(races, ServerClock(races), process_id="p", lease_ms=20_000)
    followed = [await _running_race(races) for _ in range(5)]
    for race in followed:
        await service.enter(race, 0, "p.1", "ann")
        await service.enter(race, None, "p.2")
    before = {race: await _leases(redis, race) for race in followed}
    await redis.zrem(keys.TIMERS, *followed)  # lost timer entries are restored by the renewal
    service.lease_ms = 60_000
    await service.renew_all()
    for race in followed:
        after = await _leases(redis, race)
        assert set(after) == {"p.1", "p.2"} and all(after[member] > before[race][member] + 30_000 for member in after)
        assert await redis.zscore(keys.TIMERS, race) is not None


async def test_a_sweep_ticks_every_due_race_and_indexes_each_at_its_next_deadline_or_takes_it_out(redis: Redis) -> None:
    races = RaceStore(redis)
    playing = [await _running_race(races) for _ in range(3)]
    for race in playing:
        await races.presence(race, leave=False, members=[ANN, BOB], lease_ms=30_000)
    over = await _running_race(races)
    for slot in (0, 1):
        await races.end_attempt(over, slot, AttemptState.RESIGNED)
    handed: list[str] = []

    async def after_ticks(race_ids: list[str]) -> None:
        handed.extend(race_ids)

    await redis.delete(keys.TIMERS)
    await races.schedule_many({race: 0 for race in [*playing, over]})
    assert await TimerSweeper(races, after_ticks=after_ticks).sweep_once() == 4
    for race in playing:
        assert await redis.zscore(keys.TIMERS, race) == min((await _leases(redis, race)).values())
    assert await redis.zscore(keys.TIMERS, over) is None
    assert sorted(handed) == sorted([*playing, over])


async def test_a_tick_finds_seats_counted_as_followed_but_held_by_no_lease_away_even_before_any_deadline(redis: Redis) -> None:
    races = RaceStore(redis)
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(SettingsInForce(), sealed(Profile.CLASSIC, 7)))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=60_000, both_expected=True)  # a rematch's seats
    await races.tick(race)  # long before the start: the seats, which no connection follows yet, are away all the same
    state = keys.race_keys(race)[keys.STATE]
    assert await redis.hget(state, "p0_away") != b"0" and await redis.hget(state, "p1_away") != b"0"
