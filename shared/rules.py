"""Rule profiles and per-game options, chosen when a game starts and recorded with it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Profile(str, Enum):
    """Which moves a game allows."""

    CLASSIC = "classic"
    """Cards go to foundations or onto a column whose last card is one rank higher (any suit), or to an empty column."""
    FOUNDATION_ONLY = "foundation-only"
    """The strict variant: available cards may only go to foundations."""


@dataclass(frozen=True, slots=True)
class Rules:
    """A profile plus the options a game was started with."""

    profile: Profile = Profile.CLASSIC
    undo: bool = False
    """Whether the player may undo moves (each undo is counted)."""
    redeal_once: bool = False
    """The house rule: once per game, the column cards are gathered, shuffled and dealt back."""

    @property
    def builds_on_columns(self) -> bool:
        """Whether cards may be placed on columns at all."""
        return self.profile is Profile.CLASSIC
