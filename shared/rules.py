"""Rule profiles and per-game options, chosen when a game starts and recorded with it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from shared.errors import NotationError, NotationErrorCode, quote_input


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

    def options_json(self) -> dict[str, bool]:
        """The options as the JSON object of game documents: ``{"undo": …, "redeal_once": …}``."""
        return {"undo": self.undo, "redeal_once": self.redeal_once}

    @classmethod
    def from_json(cls, profile: object = Profile.CLASSIC.value, options: object = None) -> Rules:
        """Rules from the ``profile`` and ``options`` fields of a JSON document; NotationError (bad_rules) otherwise.

        ``options`` may be absent (None) or an object whose only keys are
        ``undo`` and ``redeal_once``, each true or false; a misspelt option is
        refused rather than ignored, because it would silently change the game.
        """
        try:
            chosen = Profile(profile)
        except (ValueError, TypeError):
            choices = ", ".join(p.value for p in Profile)
            raise NotationError(NotationErrorCode.BAD_RULES, f"profile must be one of {choices}, got {quote_input(profile)}") from None
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise NotationError(NotationErrorCode.BAD_RULES, f"options must be an object, got {quote_input(options)}")
        flags: Mapping[Any, Any] = options
        unknown = sorted(str(key) for key in flags if key not in _OPTION_NAMES)
        if unknown:
            raise NotationError(NotationErrorCode.BAD_RULES, f"unknown option(s) {', '.join(map(quote_input, unknown))}; the options are {', '.join(_OPTION_NAMES)}")
        for name in _OPTION_NAMES:
            if not isinstance(flags.get(name, False), bool):
                raise NotationError(NotationErrorCode.BAD_RULES, f"options.{name} must be true or false, got {quote_input(flags[name])}")
        return cls(chosen, undo=flags.get("undo", False), redeal_once=flags.get("redeal_once", False))


_OPTION_NAMES = ("undo", "redeal_once")
