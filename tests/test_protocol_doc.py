"""docs/PROTOCOL.md names every message type, every field of every message and every error code of shared/protocol/."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from shared.protocol import ERROR_CODES, REQUEST_TYPES, SERVER_MESSAGE_TYPES, LobbyEntry, RaceInfo, RaceSettings

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
