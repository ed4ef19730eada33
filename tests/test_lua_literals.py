"""Every status, state, reason, error code and event type the Lua scripts write is a value of the protocol's enums.

Lua stays the atomic authority over a race, but it spells its values as bare strings; this test reads every script
under server/store/lua/ and checks each literal in a status/state/reason/code/type position against the enums the
Python side decodes them into, so a typo or a new value that Python does not know fails here, not in production.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path

import pytest

from server.store import GuessLimit, LoginLimit
from shared.board import Status
from shared.protocol import EVENT_TYPES, AbortReason, AttemptState, CloseReason, ErrorCode, LobbyOp, RaceStatus, ResultReason

LUA_DIR = Path(__file__).resolve().parent.parent / "server" / "store" / "lua"

WORD = r"'([a-z_]+)'"
PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "race status": [
        re.compile(r"\bstatus\s*[=~]=\s*" + WORD),  # status == 'running'
        re.compile(r"'status'\)\s*[=~]=\s*" + WORD),  # get('status') == 'finished'
        re.compile(r"(?<!\{)'status',\s*" + WORD),  # HSET ... 'status', 'finished'  (not a seat's board status)
        re.compile(r"\{1,\s*" + WORD + r"\}"),  # leave.lua's outcome: {1, 'closed'}
    ],
    "seat board status": [re.compile(r"\{'status',\s*" + WORD + r"\}")],  # SEAT_DEFAULTS
    "attempt state": [
        re.compile(r"'state'\)\)?\s*[=~]=\s*" + WORD),  # get(pf(slot, 'state')) ~= 'playing'
        re.compile(r"state\[\d\]\s*[=~]=\s*" + WORD),  # state[1] == 'cleared'
        re.compile(r"'state'\),\s*" + WORD),  # HSET pf(slot, 'state'), 'race_over'
        re.compile(r"\{'state',\s*" + WORD + r"\}"),  # SEAT_DEFAULTS
        re.compile(r"end_attempt\(\w+,\s*" + WORD),  # end_attempt(slot, 'abandoned', now)
    ],
    "result reason": [re.compile(r"\breturn [^{\n]*?(?:or 1|-1|- 1),\s*" + WORD)],  # outcome(): return live - 1, 'count'
    "error code": [re.compile(r"\{0,\s*" + WORD), re.compile(r"\breturn\s+(?!'here')" + WORD + r"\s*(?:end\b|$)", re.MULTILINE)],
    # {0, 'race_over'}; open_for_play's return 'race_closed'
    "presence": [re.compile(r"\breturn\s+(?='here')" + WORD), re.compile(r"'told'\)\)?\s*or\s*" + WORD), re.compile(r"\{'told',\s*" + WORD)],
    "event type": [re.compile(r"\btype\s*=\s*" + WORD)],  # emit({type = 'attempt_ended', ...})
    "lobby op": [re.compile(r"'op',\s*" + WORD)],  # XADD ... 'op', 'lobby_added'
    # invite_attempt.lua {0, 'rate_limited', 'source', ms}, login_attempt.lua {0, 'rate_limited', 'handle', ms}
    "limit": [re.compile(r"\{0,\s*'rate_limited',\s*" + WORD)],
    "abort reason": [re.compile(r"\babort\s*=\s*" + WORD)],  # common.lua abort_reason(): abort = 'too_few_moves'
}
ALLOWED: dict[str, set[str]] = {
    "race status": {member.value for member in RaceStatus},
    "seat board status": {member.value for member in Status},
    "attempt state": {member.value for member in AttemptState},
    "result reason": {member.value for member in ResultReason},
    # exists: create.lua's id collision (RaceIdTaken); stale_epoch: apply_action.lua's outdated view (StaleEpoch)
    "error code": {member.value for member in ErrorCode} | {"exists", "stale_epoch"},
    "event type": set(EVENT_TYPES),
    "lobby op": {member.value for member in LobbyOp},
    "presence": {"here"},  # or 'away:<grace_until>' (server/store/race_store.py reads both)
    "limit": {member.value for member in GuessLimit} | {member.value for member in LoginLimit},
    "abort reason": {member.value for member in AbortReason},
}
MINIMUM_FOUND = {
    "race status": 5, "attempt state": 5, "result reason": 4, "error code": 10, "event type": 10, "lobby op": 3, "limit": 6, "abort reason": 2,
}  # fmt: skip
"""How many distinct values each category has in today's scripts at least: proves the patterns still match."""


def literals(source: str) -> dict[str, set[str]]:
    """The literals of ``source`` (Lua) in each category's positions (comments stripped)."""
    code = "\n".join(line.split("--", 1)[0] for line in source.splitlines())
    return {category: {match.group(1) for pattern in patterns for match in pattern.finditer(code)} for category, patterns in PATTERNS.items()}


def unknown(source: str) -> dict[str, set[str]]:
    """Per category, the literals that are no value of its enum."""
    found = literals(source)
    return {category: values - ALLOWED[category] for category, values in found.items() if values - ALLOWED[category]}


def all_scripts() -> str:
    scripts = sorted(LUA_DIR.glob("*.lua"))
    assert len(scripts) >= 15
    return "\n".join(path.read_text() for path in scripts)


def test_every_status_state_reason_code_and_event_type_in_the_lua_scripts_is_an_enum_value() -> None:
    assert unknown(all_scripts()) == {}


def test_the_scan_finds_the_values_the_scripts_use_today() -> None:
    found = literals(all_scripts())
    for category, minimum in MINIMUM_FOUND.items():
        assert len(found[category]) >= minimum, (category, found[category])
    assert found["race status"] == ALLOWED["race status"]
    assert {"cleared", "count", "reached_first", "draw"} <= found["result reason"]
    assert {"playing", "cleared", "race_over", "time_limit", "abandoned"} <= found["attempt state"]


@pytest.mark.parametrize(
    ("line", "category"),
    [
        ("if status == 'paused' then return {0, 'race_over'} end", "race status"),
        ("redis.call('HSET', K_STATE, 'status', 'aborted')", "race status"),
        ("if get(pf(slot, 'state')) ~= 'plying' then return end", "attempt state"),
        ("end_attempt(slot, 'timeout', now)", "attempt state"),
        ("if a then return live - 1, 'points' end", "result reason"),
        ("if a then return {0, 'no_such_code'} end", "error code"),
        ("emit({type = 'teleported', slot = slot}, now)", "event type"),
        ("redis.call('XADD', KEYS[4], '*', 'op', 'lobby_moved')", "lobby op"),
        ("if a then return 'no_such_code' end", "error code"),
    ],
)
def test_a_new_unknown_literal_in_a_script_fails_the_check(line: str, category: str) -> None:
    assert category in unknown(all_scripts() + "\n" + line)


def test_the_enums_keep_their_wire_values() -> None:
    def values(enum: type[Enum]) -> list[str]:
        return [member.value for member in enum]

    assert values(RaceStatus) == ["waiting", "countdown", "running", "finished", "closed"]
    assert values(ResultReason) == ["cleared", "count", "reached_first", "abandoned", "draw"]
    assert values(CloseReason) == ["left", "abandoned", "cancelled", "lobby_full", "expired", "operator", "paired"]
    assert f"{RaceStatus.RUNNING}" == "running" and RaceStatus("running") is RaceStatus.RUNNING
