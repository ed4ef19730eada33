"""Lua scripts take one MessagePack map of named fields (server/store/scripts.py): a field the caller leaves out
stops the script before it writes anything, and an optional value arrives as false, never as a silent nil."""

from __future__ import annotations

import re
import secrets

import msgpack
import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from server.services.dealer import sealed
from server.store import Identity, NewRace, RaceStore, keys
from server.store.player_store import SeatBooking, seat_arguments
from server.store.race_store import deal_arguments
from server.store.scripts import _source, script_arguments, with_arguments
from shared import Profile
from shared.board import Status
from shared.protocol import Outcome
from shared.race.settings import SettingsInForce


def test_the_fields_a_script_reads_are_the_fields_it_requires() -> None:
    script = with_arguments("-- ARGS.in_a_comment is not read\nlocal a = ARGS.slot + ARGS.seq\nreturn ARGS.slot")
    assert "local ARGS = read_arguments(ARGV[1], {'seq', 'slot'})" in script
    assert with_arguments("return 1") == "return 1"  # a script without arguments reads none


def test_an_optional_value_goes_as_false_and_bytes_as_raw_strings() -> None:
    packed = script_arguments(ends=None, entry=b"\x81\xa1a\x01", name="Ann", members=["0|ann|c1"])
    assert msgpack.unpackb(packed[0], raw=True) == {b"ends": False, b"entry": b"\x81\xa1a\x01", b"name": b"Ann", b"members": [b"0|ann|c1"]}


async def test_a_script_refuses_a_missing_field_before_it_writes_anything(redis: Redis) -> None:
    races = RaceStore(redis)
    race = secrets.token_hex(5)
    fields = {"live_ttl": 60_000, "record_ttl": 60_000, "race": race, "player": "ann", "name": "Ann", "account": "", "bot": 0}
    with pytest.raises(ResponseError, match="script argument missing: deal"):
        await races.scripts.create(keys=keys.race_keys(race), args=script_arguments(**fields))  # no deal, seed_fixed, ...
    assert await redis.exists(*keys.race_keys(race)) == 0


async def test_the_move_script_refuses_an_action_sent_without_its_move_id(redis: Redis) -> None:
    races = RaceStore(redis)
    race = secrets.token_hex(5)
    await races.create_race(race, Identity("ann", "Ann"), NewRace(SettingsInForce(), sealed(Profile.CLASSIC, 7)))
    await races.join_race(race, Identity("bob", "Bob"), countdown_ms=0)
    record = await races.load_race(race)
    assert record is not None
    move = {
        "live_ttl": 60_000, "record_ttl": 60_000, "slot": 0, "seq": 0, "action": "5D b>3", "count": 0, "left": 52, "status": Status.PLAYING,
        "undos": 0, "ends": None, "max_actions": 1000, "player": "ann", "epoch": record.epoch, "columns": None,
    }  # fmt: skip
    with pytest.raises(ResponseError, match="script argument missing: move_id"):
        await races.scripts.apply_action(keys=keys.race_keys(race), args=script_arguments(**move))
    assert await races.actions(race, 0) == []  # nothing stored, not even under a nil move id
    await races.scripts.apply_action(keys=keys.race_keys(race), args=script_arguments(**move, move_id="m1"))
    assert await races.actions(race, 0) == ["5D b>3"]


def test_the_maps_nested_in_script_arguments_hold_every_field_the_scripts_read_from_them() -> None:
    # read_arguments checks the top-level fields only; a nested map missing a field would read as nil
    deal_reads = set(re.findall(r"\bdeal\.(\w+)", _source("common")))
    assert deal_reads == set(deal_arguments(sealed(Profile.CLASSIC, 7)))
    seat = SeatBooking(player="p", handle="Ann", bot=False, profile="classic", opponent="q", item={}, outcome=Outcome.WON, cleared=True, time_ms=1, count=52)
    assert set(re.findall(r"\bseat\.(\w+)", _source("book_race"))) == set(seat_arguments(seat))
