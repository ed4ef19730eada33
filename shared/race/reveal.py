"""The check of a race's reveal (docs/FAIRPLAY.md "Commit–reveal"): the revealed seed and salt (and the proving line of
a solvable-only deal) hash to the commitment published at the countdown, the countdown's layout is the seed's deal,
and the proving line wins it. Used by ``flowergarden verify-deal`` and by the check of an exported record."""

from __future__ import annotations

from collections.abc import Sequence

from shared.board import Board
from shared.cards import card_text
from shared.commitment import NO_LINE, line_digest, verify_commitment
from shared.deal import deal
from shared.errors import EngineError
from shared.moves import parse_action
from shared.rules import Profile, Rules

Check = tuple[str, bool, str]
"""One check of a reveal: its name (``commitment``, ``layout``, ``proving line``), whether it holds, what it says."""


def check_reveal(
    commitment: str, seed: int, profile: Profile, salt_hex: str, line: Sequence[str] | None,
    layout: tuple[Sequence[Sequence[str]], Sequence[str]] | None = None,
) -> list[Check]:  # fmt: skip
    """Each check of a reveal; ``layout`` the countdown's (columns, bouquet) when known."""
    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        salt = b""
    digest = line_digest(line) if line else NO_LINE
    checks = [("commitment", verify_commitment(commitment, seed, profile, salt, digest), f"SHA-256 over seed {seed}, {profile.value}, salt, line")]
    if layout is not None:
        columns, bouquet = layout
        dealt = deal(seed)
        same = [list(column) for column in columns] == [[card_text(card) for card in column] for column in dealt.columns]
        same = same and list(bouquet) == [card_text(card) for card in dealt.bouquet]
        checks.append(("layout", same, "the countdown's layout is the deal of the seed"))
    if line:
        board = Board.deal(seed, Rules(profile))
        try:
            for move in line:
                board.play(parse_action(move))
            wins = board.is_won()
        except (EngineError, ValueError):
            wins = False
        checks.append(("proving line", wins, f"the {len(line)}-move proving line wins the deal"))
    return checks
