"""The operators' recurring arenas on a real Redis: a schedule of the config file opens its arena once however many
processes open it at once, listed and on the hour; ``flowergarden admin tournament add|list|remove`` stores one that
the servers open; a bad spec is refused with its reason."""

from __future__ import annotations

import asyncio
import json
import secrets

import pytest
from test_ops_admin import admin, operated  # noqa: F401 (the fixture)

from server import config
from server.app import RaceServer
from server.services.arena import ArenaService
from server.store import ArenaStore, connect_redis
from shared.arena import occurrence_id, parse_schedule
from shared.protocol import ArenaStatus

HOUR = 3_600_000
ON_THE_HOUR = 1_900_000_800_000 - 1_900_000_800_000 % HOUR


async def test_a_recurring_arena_opens_once_on_the_hour_whichever_processes_open_it(single_redis_url: str) -> None:
    clock = [ON_THE_HOUR + 5 * 60_000]  # 5 minutes into an hour

    async def now() -> int:
        return clock[0]

    async def no_race(*_: str) -> None:
        raise AssertionError("nobody joined")

    name = f"Hourly {secrets.token_hex(3)}"
    schedule = parse_schedule(f"name={name};every=60;minutes=55;time_limit=300;rated=true;ahead=30")
    clients = [connect_redis(single_redis_url, max_connections=4) for _ in range(3)]
    try:
        services = [ArenaService(ArenaStore(client), now, no_race) for client in clients]
        for service in services:
            service.schedules = (schedule,)
        opened = await asyncio.gather(*(service.open_scheduled() for service in services))
        this_hour, next_hour = occurrence_id(name, ON_THE_HOUR), occurrence_id(name, ON_THE_HOUR + HOUR)
        assert sorted(arena for found in opened for arena in found) == sorted([this_hour, next_hour])  # each once
        info = await services[0].info(this_hour)
        assert (info.name, info.start_at, info.end_at, info.rated, info.private, info.schedule) == (
            name, ON_THE_HOUR, ON_THE_HOUR + 55 * 60_000, True, False, name,
        )
        listing = await services[1].listed()
        assert this_hour in [one.arena for one in listing.running] and next_hour in [one.arena for one in listing.upcoming]
        clock[0] = ON_THE_HOUR + 56 * 60_000  # this hour's pairing is over: listed as finished, the next one is due
        assert await services[2].open_scheduled() == []
        listing = await services[2].listed()
        assert this_hour in [one.arena for one in listing.finished]
        assert (await services[2].info(this_hour)).status is ArenaStatus.FINISHED
    finally:
        for client in clients:
            await client.aclose()


@pytest.mark.parametrize("spec, reason", [
    ("every=60;minutes=55", "name is required"),
    ("name=x;every=60;minutes=90", "minutes must not exceed every"),
    ("name=x;every=60;minutes=5;colour=red", "unknown fields colour"),
    ("name=x;every=0;minutes=5", "every must be a whole number from 1"),
])  # fmt: skip
def test_a_schedule_that_does_not_read_is_refused_with_its_reason(spec: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_schedule(spec)


async def test_admin_tournament_add_list_and_remove_a_recurring_arena_the_servers_open(redis_url: str, operated: RaceServer) -> None:  # noqa: F811
    assert operated.arenas is not None
    name = f"Nightly {secrets.token_hex(3)}"
    added = await admin(redis_url, "tournament", "add", name, "--every", "1440", "--minutes", "120", "--time-limit", "600", "--rated")
    assert added.returncode == 0, added.stdout + added.stderr
    assert "stored name=" in added.stdout
    opened = await operated.arenas.open_scheduled()
    now = await operated.arenas.now_ms()
    start = now - now % (1440 * 60_000) + 1440 * 60_000  # the next midnight UTC (tonight's has passed its 2 hours, or is now)
    assert occurrence_id(name, start) in opened or (await operated.arenas.store.meta(occurrence_id(name, start))) is not None
    listing = await admin(redis_url, "tournament", "list", "--json")
    document = json.loads(listing.stdout)
    assert name in document["stored"] and occurrence_id(name, start) in [arena["arena"] for arena in document["arenas"]]
    removed = await admin(redis_url, "tournament", "remove", name)
    assert removed.returncode == 0 and f"removed {name}" in removed.stdout, removed.stdout + removed.stderr
    again = await admin(redis_url, "tournament", "remove", name)
    assert again.returncode == 1 and "no recurring arena is named" in again.stdout + again.stderr
    bad = await admin(redis_url, "tournament", "add", "x", "--every", "60", "--minutes", "90")
    assert bad.returncode == 2 and "minutes must not exceed every" in bad.stderr + bad.stdout


def test_a_config_file_whose_recurring_arena_does_not_read_stops_the_start_naming_it() -> None:
    with pytest.raises(config.ConfigError, match=r"arena\.recurring: 'name=x;every=60;minutes=90': minutes must not exceed every"):
        config.effective(None, {"FLOWERGARDEN_ARENA_RECURRING": "name=x;every=60;minutes=90"}, {})
    settings = config.effective(None, {"FLOWERGARDEN_ARENA_RECURRING": "name=Hourly;every=60;minutes=55"}, {})
    assert settings.arena.recurring == ("name=Hourly;every=60;minutes=55",)
