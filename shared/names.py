"""Display names as every player sees them: normalised so that a name cannot vanish or impersonate another by
characters that show nothing (docs/PROTOCOL.md "Names").

The rules, in order: NFC; characters that display nothing (Unicode's default-ignorable code points: joiners,
variation selectors, bidirectional controls, soft hyphen, fillers) are removed; every space-like character
becomes one space, runs of them collapse and the ends are trimmed; what is left must be 1 to
:data:`MAX_NAME_LENGTH` characters of letters, marks, numbers, punctuation, symbols and single spaces, each mark
after a character it can sit on, at most :data:`MAX_MARKS_IN_A_ROW` of them in a row.
"""

from __future__ import annotations

import unicodedata
from typing import Final

MAX_NAME_LENGTH: Final = 32
MAX_MARKS_IN_A_ROW: Final = 4
"""Combining marks on one character (enough for every script; more only stacks glyphs over other lines)."""

DEFAULT_IGNORABLE: Final = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip
"""Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt, stable since Unicode 9): characters a
renderer shows as nothing. Python's unicodedata does not expose this property."""

BLANK_LOOKALIKES: Final = frozenset({"\u2800"})
"""Characters outside the space category that still display as an empty space (BRAILLE PATTERN BLANK)."""

REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Control, format, surrogate, private-use and unassigned characters, and line and paragraph separators."""


class InvalidName(ValueError):
    """A name that cannot be shown as it is meant; the message says why."""


def _ignorable(char: str) -> bool:
    point = ord(char)
    return any(low <= point <= high for low, high in DEFAULT_IGNORABLE)


def normalize_name(name: str) -> str:
    """The name as stored and shown to everybody; :class:`InvalidName` if nothing visible is left or it breaks a rule."""
    text = "".join(char for char in unicodedata.normalize("NFC", name) if not _ignorable(char))
    spaced = "".join(" " if char in BLANK_LOOKALIKES or unicodedata.category(char) == "Zs" else char for char in text)
    cleaned = " ".join(word for word in spaced.split(" ") if word)
    if not cleaned:
        raise InvalidName("a name needs at least one visible character")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise InvalidName(f"a name has at most {MAX_NAME_LENGTH} characters")
    _check_characters(cleaned)
    return cleaned


def _check_characters(cleaned: str) -> None:
    """:class:`InvalidName` for an invisible or control character, or a combining mark with no base or too many."""
    marks = 0
    for index, char in enumerate(cleaned):
        category = unicodedata.category(char)
        if category in REFUSED_CATEGORIES:
            raise InvalidName(f"a name cannot contain {unicodedata.name(char, f'U+{ord(char):04X}')} (control or invisible characters)")
        if not category.startswith("M"):
            marks = 0
            continue
        marks += 1
        if index == 0 or cleaned[index - 1] == " ":
            raise InvalidName("a combining mark needs a character before it")
        if marks > MAX_MARKS_IN_A_ROW:
            raise InvalidName(f"at most {MAX_MARKS_IN_A_ROW} combining marks in a row")
