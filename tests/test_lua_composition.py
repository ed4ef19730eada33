"""A race script carries the parts of common.lua it uses and no more (issue 18: Redis runs a script's whole text on
every call); every helper it names is defined in it."""

from __future__ import annotations

import re

import pytest

from server.store.scripts import RACE_SCRIPTS, _source, _without_comments, common_definitions, race_script

COMMON = _source("common")
NAMES = [name for names, _ in common_definitions(COMMON) for name in names]


@pytest.mark.parametrize("name", RACE_SCRIPTS)
def test_every_common_helper_a_race_script_names_is_defined_in_it(name: str) -> None:
    script = race_script(COMMON, _source(name))
    code = _without_comments(script)
    for helper in NAMES:
        if re.search(rf"\b{helper}\b", code):
            definition = rf"^local (function {helper}\b|[\w, ]*\b{helper}\b[\w, ]*=)"
            assert re.search(definition, script, re.MULTILINE), f"{name}.lua names {helper} but its script does not define it"


def test_the_move_script_leaves_out_the_helpers_it_does_not_use() -> None:
    script = race_script(COMMON, _source("apply_action"))
    assert "local function seat_fields" not in script  # only the scripts that seat a player need it
    assert "local function emit" in script and "local function decide" in script
    assert len(script) < len(COMMON)


def test_the_common_path_of_a_move_leaves_out_what_only_the_end_of_an_attempt_or_race_needs() -> None:
    # Redis creates a script's definitions on every call: apply_move.lua is every ordinary move's script
    script = race_script(COMMON, _source("apply_move"))
    for helper in ("end_attempt", "decide", "time_up", "announce_seat", "keep_record", "outcome"):
        assert f"local function {helper}" not in script
    assert "local function store_move" in script and "local function store_move" in race_script(COMMON, _source("apply_action"))
