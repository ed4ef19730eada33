"""One settings type: a race's settings in force (shared/race/settings.py) are what a new race is created with, what
the store keeps (each field under its own name) and what replies show, so a new setting is one field, not four."""

from __future__ import annotations

import secrets
from dataclasses import fields, replace
from enum import Enum
from typing import Any, get_args, get_type_hints

from redis.asyncio import Redis

from server.services.dealer import NOT_PAIRED_ON, sealed, settings_key
from server.store import Identity, NewRace, RaceStore
from server.store.race_store import settings_fields, settings_from_fields
from shared import Profile
from shared.protocol import Difficulty, RaceSettings, Spectators
from shared.race.settings import OWN_FIELDS, REQUEST_ONLY, SettingsInForce

EVERY_SETTING = SettingsInForce(
    profile="foundation-only", undo=True, redeal_once=True, time_limit=300, solvable_only=True, private=True,
    spectators=Spectators.LINK, rated=True, asked_difficulty=Difficulty.HARD, spectator_delay_ms=1500, grace_ms=20_000,
)  # fmt: skip


def test_every_setting_a_client_chooses_is_a_setting_in_force_of_the_same_name() -> None:
    requested = {field.name for field in fields(RaceSettings)} - REQUEST_ONLY
    in_force = {field.name for field in fields(SettingsInForce)} - OWN_FIELDS
    assert requested == in_force


def test_settings_asked_for_are_shown_as_asked_with_the_seed_left_out() -> None:
    request = RaceSettings(
        profile="foundation-only", undo=True, redeal_once=True, time_limit=300, seed=7, spectator_delay=5, grace=20,
        solvable_only=False, private=True, spectators=Spectators.NOBODY, rated=False, difficulty=None,
    )  # fmt: skip
    chosen = SettingsInForce.chosen(request, spectators=Spectators.NOBODY)
    assert (chosen.spectator_delay_ms, chosen.grace_ms) == (5000, 20_000)
    assert chosen.shown() == RaceSettings(**{**{field.name: getattr(request, field.name) for field in fields(RaceSettings)}, "seed": None})


def test_replies_show_times_in_whole_seconds_rounded_up_and_the_delay_in_force() -> None:
    shown = EVERY_SETTING.shown()
    assert (shown.spectator_delay, shown.grace, shown.difficulty) == (2, 20, Difficulty.HARD)
    assert EVERY_SETTING.shown(spectator_delay_ms=60_000).spectator_delay == 60
    assert SettingsInForce().shown().spectator_delay is None  # a race stored without its own delay: the default


def test_the_state_hash_keeps_each_setting_under_its_name_and_reads_it_back() -> None:
    stored = settings_fields(EVERY_SETTING)
    assert set(stored) == {field.name for field in fields(SettingsInForce) if getattr(EVERY_SETTING, field.name) is not None}
    assert stored["undo"] == 1 and stored["spectators"] == "link" and stored["grace_ms"] == 20_000
    assert settings_from_fields({name: str(value) for name, value in stored.items()}) == EVERY_SETTING
    assert "time_limit" not in settings_fields(SettingsInForce())  # None is left out (Lua reads a missing field as 0)
    assert settings_from_fields({}) == SettingsInForce()  # a field a race was stored without keeps its default


async def test_a_stored_race_reads_back_the_settings_it_was_created_with(redis: Redis) -> None:
    races = RaceStore(redis)
    race_id = secrets.token_hex(5)
    await races.create_race(race_id, Identity("ann", "Ann"), NewRace(EVERY_SETTING, sealed(Profile.FOUNDATION_ONLY, 9)))
    record = await races.load_race(race_id)
    assert record is not None and record.settings == EVERY_SETTING and record.deal.seed == 9


def other_value(hint: Any, default: Any) -> Any:
    """A value of a setting of type ``hint`` (bool, int, str or a StrEnum, optionally None) other than ``default``."""
    kind = next((arg for arg in get_args(hint) if arg is not type(None)), hint)
    if kind is bool:
        return not default
    if kind is int:
        return 1 if default is None else default + 1
    if isinstance(kind, type) and issubclass(kind, Enum):
        return next(member for member in reversed(list(kind)) if member != default)
    return f"{default}-other"


def test_quick_match_pairs_only_requests_that_agree_on_every_setting_but_the_delay_grace_and_privacy() -> None:
    plain = RaceSettings()
    hints = get_type_hints(RaceSettings)
    for field in fields(RaceSettings):
        changed = replace(plain, **{field.name: other_value(hints[field.name], getattr(plain, field.name))})
        if field.name in NOT_PAIRED_ON:
            assert settings_key(changed) == settings_key(plain), field.name
        else:
            assert settings_key(changed) != settings_key(plain), field.name
    assert settings_key(replace(plain, spectators=Spectators.ANYONE)) == settings_key(plain)  # who may watch, as resolved


def test_a_record_of_the_layout_before_reads_as_its_race_was() -> None:
    old = {"profile": "classic", "undo": "1", "redeal_once": "0", "time_limit": "0", "spectator_delay": "5000", "grace": "20000",
           "solvable_only": "0", "private": "1", "spectators": "link", "rated": "0", "asked_difficulty": ""}  # fmt: skip
    assert settings_from_fields(old) == SettingsInForce(
        undo=True, private=True, spectators=Spectators.LINK, spectator_delay_ms=5000, grace_ms=20_000
    )
    assert settings_from_fields({**old, "time_limit": "300"}).time_limit == 300
