"""docs/PROTOCOL.md names every message type, every field of every message and every error code of shared/protocol/,
and states the limits, choices and value lists the server enforces with the server's own numbers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import fields
from enum import StrEnum
from itertools import takewhile
from pathlib import Path
from typing import Any

import pytest

from server.services.lobby import INVITE_ALPHABET, INVITE_LENGTH
from server.store import InviteLimits
from shared.names import DEFAULT_IGNORABLE, MAX_MARKS_IN_A_ROW, MAX_NAME_LENGTH
from shared.protocol import (
    ERROR_CODES,
    REQUEST_TYPES,
    SERVER_MESSAGE_TYPES,
    AttemptState,
    CloseReason,
    Emote,
    LobbyEntry,
    RaceInfo,
    RaceSettings,
    RaceStatus,
    ResultReason,
    Spectators,
)
from shared.protocol.codec import from_map

DOC = (Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
MESSAGES = {**REQUEST_TYPES, **SERVER_MESSAGE_TYPES}


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_every_message_type_and_its_fields_are_documented(kind: str) -> None:
    assert f'"type": "{kind}"' in DOC, f"no example of {kind}"
    for field in fields(MESSAGES[kind]):
        assert f'"{field.name}"' in DOC or f"`{field.name}`" in DOC, f"{kind}.{field.name} is not documented"


@pytest.mark.parametrize("part", [RaceSettings, RaceInfo, LobbyEntry])
def test_every_field_of_the_shared_structures_is_documented(part: type) -> None:
    for field in fields(part):
        assert f"`{field.name}`" in DOC, f"{part.__name__}.{field.name} is not documented"


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_every_error_code_is_documented(code: str) -> None:
    assert f"`{code}`" in DOC


def test_the_settings_table_is_one_table_with_a_row_per_setting() -> None:
    after = DOC.split("`settings` (every field optional):\n\n", 1)[1].splitlines()
    table = list(takewhile(lambda line: line.startswith("|"), after))  # a blank line would end (and break) the table
    for field in fields(RaceSettings):
        assert any(row.startswith(f"| `{field.name}` |") for row in table), f"settings.{field.name} has no row in the settings table"


def test_every_spectators_choice_is_documented() -> None:
    for choice in Spectators:
        assert f"| `{choice}`" in DOC, f"spectators {choice!r} has no row in the spectating table"


def test_the_invite_code_arithmetic_follows_the_code_space_and_the_overall_limit() -> None:
    limits = InviteLimits()
    codes = len(INVITE_ALPHABET) ** INVITE_LENGTH
    assert f"Invite codes are {INVITE_LENGTH} characters from `{INVITE_ALPHABET}`" in DOC
    assert f"{limits.overall} per window" in DOC and f"{limits.per_source} per window" in DOC and f"{limits.per_player} per window" in DOC
    for races in (1_000, 10_000, 100_000):
        minutes = round(codes / (races * limits.overall * 60_000 / limits.window_ms))
        assert f"{minutes:,} min" in DOC, f"the expected time to a hit with {races:,} races is {minutes:,} min"
    per_day = limits.overall * 24 * 60
    assert f"{per_day:,}" in DOC and f"{per_day / codes:.1e}".replace("e-07", " · 10^-7") in DOC


def test_the_name_rules_are_documented_with_their_limits() -> None:
    assert f"**1–{MAX_NAME_LENGTH} characters**" in DOC and f"most {MAX_MARKS_IN_A_ROW} marks in a row" in DOC
    for low, high in DEFAULT_IGNORABLE:
        named = f"U+{low:04X}" if low == high else f"U+{low:04X}–U+{high:04X}"
        assert named in DOC, f"{named} (default-ignorable, removed from names) is not listed under Names"


@pytest.mark.parametrize("values", [RaceStatus, AttemptState, ResultReason, CloseReason, Spectators, Emote], ids=lambda values: values.__name__)
def test_every_value_of_every_closed_set_is_documented(values: type[StrEnum]) -> None:
    for value in values:
        assert f"`{value}`" in DOC, f"{values.__name__}.{value.name} ({value}) is not documented"


def _examples() -> Iterator[tuple[str, str]]:
    """Every message of the doc's JSON examples that is complete JSON (no `…` standing for left-out parts), as
    (arrow, text), a trailing remark in parentheses dropped."""
    for block in re.findall(r"```json\n(.*?)```", DOC, re.DOTALL):
        for arrow, text in re.findall(r"^\s*(→|←) ?(.*?)(?=^\s*[→←]|\Z)", block, re.DOTALL | re.MULTILINE):
            text = re.sub(r"\s+\([^\"]*\)\s*$", "", text.strip())
            try:
                json.loads(text)
            except ValueError:
                continue
            yield arrow, text


def _left_out(example: Any, wire: Any, path: str = "") -> list[str]:
    if isinstance(example, dict) and isinstance(wire, dict):
        gaps = [f"{path or 'the message'} lacks {name!r}" for name in sorted(set(wire) - set(example))]
        gaps += [f"{path or 'the message'} has {name!r}, which the server never sends" for name in sorted(set(example) - set(wire))]
        return gaps + [gap for name in set(example) & set(wire) for gap in _left_out(example[name], wire[name], f"{path}.{name}")]
    if isinstance(example, list) and isinstance(wire, list):
        return [gap for index, pair in enumerate(zip(example, wire, strict=False)) for gap in _left_out(*pair, f"{path}[{index}]")]
    return []


def test_the_complete_examples_are_messages_as_the_server_sends_them() -> None:
    """A client author copies the examples: each complete one must decode with the protocol's own types, and a server
    message must show every field the server sends (nil ones too: the server sends them, never leaves them out)."""
    checked = 0
    for arrow, text in _examples():
        example = json.loads(text)
        registry = REQUEST_TYPES if arrow == "→" else SERVER_MESSAGE_TYPES
        message = from_map(registry[example["type"]], example)
        if arrow == "←":
            assert not (gaps := _left_out(example, message.to_wire())), f"{text[:60]}…: {gaps}"
        checked += 1
    assert checked >= 60, f"only {checked} complete examples found: has the example format changed?"


def test_every_test_file_the_docs_name_as_proof_exists() -> None:
    """RELIABILITY.md and the other docs send readers to the tests that prove a promise: none may be gone."""
    root = Path(__file__).resolve().parent.parent
    named = {
        found for doc in [root / "README.md", *(root / "docs").glob("*.md")] for found in re.findall(r"tests/test_\w+\.py", doc.read_text(encoding="utf-8"))
    }
    assert named and not {name for name in named if not (root / name).is_file()}
