"""Display names cannot vanish or impersonate another by invisible characters (issue 17, section 4)."""

from __future__ import annotations

import unicodedata

import pytest
from race_helpers import player

from client import RaceClient, ServerError
from server.app import RaceServer
from shared.names import MAX_NAME_LENGTH, InvalidName, normalize_name

INVISIBLE = [
    "\u034f",  # COMBINING GRAPHEME JOINER (a mark that displays nothing)
    "\u200b",  # ZERO WIDTH SPACE
    "\u200d",  # ZERO WIDTH JOINER
    "\u2060",  # WORD JOINER
    "\ufeff",  # ZERO WIDTH NO-BREAK SPACE
    "\u00ad",  # SOFT HYPHEN
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u3164",  # HANGUL FILLER (a letter that displays nothing)
    "\u115f",  # HANGUL CHOSEONG FILLER
    "\ufe0f",  # VARIATION SELECTOR-16
    "\U000e0041",  # TAG LATIN CAPITAL LETTER A
    "\u2800",  # BRAILLE PATTERN BLANK (a symbol that displays as a space)
    "\u00a0",  # NO-BREAK SPACE
    "\u3000",  # IDEOGRAPHIC SPACE
]


@pytest.mark.parametrize("invisible", INVISIBLE, ids=[f"U+{ord(char):04X}" for char in INVISIBLE])
def test_a_name_of_invisible_characters_is_refused(invisible: str) -> None:
    for name in (invisible, invisible * 3, f" {invisible} "):
        with pytest.raises(InvalidName):
            normalize_name(name)


@pytest.mark.parametrize("invisible", INVISIBLE[:-3], ids=[f"U+{ord(char):04X}" for char in INVISIBLE[:-3]])
def test_a_name_differing_from_another_only_by_invisible_characters_is_the_same_name(invisible: str) -> None:
    assert normalize_name(f"Ann{invisible}") == normalize_name(f"A{invisible}nn") == "Ann"


def test_names_are_nfc_and_spaces_are_single_ascii_spaces() -> None:
    assert normalize_name("Zoe\u0301") == "Zo\u00e9"  # the decomposed and composed forms are one name
    assert normalize_name("  Ann\u00a0\u2800 \u3000Lee ") == "Ann Lee"


@pytest.mark.parametrize(
    "name",
    ["\u0301", "\u0301Ann", "Ann \u0301", "Ann\x00", "Ann\tLee", "Ann\u2028Lee", "\ue000", "\U0010fffd", "\u0378", "x" + "\u0301" * 5],
    ids=["mark-alone", "mark-first", "mark-after-space", "nul", "tab", "line-separator", "private-use", "private-use-plane-16", "unassigned", "zalgo"],
)
def test_control_format_private_and_stray_mark_characters_are_refused(name: str) -> None:
    with pytest.raises(InvalidName):
        normalize_name(name)


@pytest.mark.parametrize("name", ["Ann", "Zoë", "Jörg-Ümit", "李小龍", "Владимир", "नमस्ते", "ถ้ำ", "مريم", "Ann ❤", "x" * MAX_NAME_LENGTH, "R2-D2 (bot)"])
def test_ordinary_names_of_every_script_are_kept(name: str) -> None:
    assert normalize_name(name) == unicodedata.normalize("NFC", name)


def test_a_name_too_long_once_normalised_is_refused() -> None:
    with pytest.raises(InvalidName):
        normalize_name("x" * (MAX_NAME_LENGTH + 1))


async def test_hello_refuses_an_invisible_name_and_welcome_shows_the_normalised_one(race_server: RaceServer) -> None:
    client = await RaceClient.connect(race_server.url)
    try:
        for invisible in ("\u034f", "\u200b\u200b", "\u3164", "\u2800"):
            with pytest.raises(ServerError) as refused:
                await client.hello(invisible)
            assert (refused.value.code, refused.value.field) == ("bad_field", "name")
        welcome = await client.hello("Ann\u034f\u00a0 Lee")
        assert welcome.name == "Ann Lee"
    finally:
        await client.close()
    other = await player(race_server.url, "Ann Lee")
    try:
        assert other.session is not None and other.session.name == welcome.name  # the same name: the player ids differ
        assert other.session.player != welcome.player
    finally:
        await other.close()
