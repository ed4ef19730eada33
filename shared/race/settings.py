"""A race's settings in force: the one settings type that new races, stored races and replies are built from."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final

from shared.protocol import Difficulty, RaceSettings, Spectators
from shared.rules import Profile, Rules


@dataclass(frozen=True, slots=True)
class SettingsInForce:
    """How a race is played and watched, fixed when it is created: the creator's :class:`RaceSettings` with who may
    watch resolved and, once the race service created the race, the spectator delay and grace period in ms.

    A field of the same name as one of :class:`RaceSettings` is taken from the request and shown in replies as it is
    (:meth:`chosen`, :meth:`shown`); the store keeps each field under its own name in the race's state hash, where
    the Lua scripts read the ones they obey (docs/ARCHITECTURE.md "A new race setting")."""

    profile: str = Profile.CLASSIC.value
    """``classic`` or ``foundation-only``."""
    undo: bool = False
    redeal_once: bool = False
    time_limit: int | None = None
    """Seconds from the start after which every attempt still running ends; None for no limit."""
    solvable_only: bool = False
    private: bool = False
    spectators: Spectators = Spectators.ANYONE
    """Who may watch, resolved (a request's None is ``link`` for a private race, ``anyone`` otherwise)."""
    rated: bool = False
    asked_difficulty: Difficulty | None = None
    """The tier the creator asked for (``difficulty`` of the request; the deal's own tier is the sealed deal's)."""
    spectator_delay_ms: int | None = None
    """How far spectators lag behind; None: the server's default (before the race service resolved it)."""
    grace_ms: int | None = None
    """How long a disconnected player keeps its seat; None: the server's default."""
    ghost: str | None = None
    """A ghost race's label: whose recorded attempt seat 1 replays (set by the server's ``ghost_race`` only)."""
    arena: str | None = None
    """An arena tournament's race: the arena's id (set by the arena's pairing only)."""
    hints: bool = False
    """The players' clients may show hints (casual races only; the rated check refuses it)."""

    @classmethod
    def chosen(cls, request: RaceSettings, *, spectators: Spectators) -> SettingsInForce:
        """The settings a race is asked for with (``spectators`` resolved; the delay and grace as asked, in ms)."""
        same = {name: getattr(request, name) for name in SAME_AS_REQUESTED}
        return cls(
            **same,
            spectators=spectators,
            asked_difficulty=request.difficulty,
            spectator_delay_ms=None if request.spectator_delay is None else request.spectator_delay * 1000,
            grace_ms=None if request.grace is None else request.grace * 1000,
        )

    def shown(self, *, spectator_delay_ms: int | None = None) -> RaceSettings:
        """The settings as replies show them (the seed is never among them; times in whole seconds, rounded up).

        ``spectator_delay_ms`` is the delay in force when it differs from the race's own (a server minimum raised
        since the race was created)."""
        delay_ms = self.spectator_delay_ms if spectator_delay_ms is None else spectator_delay_ms
        same: dict[str, Any] = {name: getattr(self, name) for name in SAME_AS_REQUESTED}
        return RaceSettings(
            **same,
            seed=None,
            spectators=self.spectators,
            difficulty=self.asked_difficulty,
            spectator_delay=_seconds(delay_ms),
            grace=_seconds(self.grace_ms),
        )

    @property
    def rules(self) -> Rules:
        """The rules of play these settings give the engine."""
        return Rules(Profile(self.profile), undo=self.undo, redeal_once=self.redeal_once)


def _seconds(ms: int | None) -> int | None:
    return None if ms is None else -(-ms // 1000)


OWN_FIELDS: Final = frozenset({"spectators", "asked_difficulty", "spectator_delay_ms", "grace_ms"})
"""The fields of SettingsInForce that differ from the request's: resolved, renamed or in other units."""
REQUEST_ONLY: Final = frozenset({"seed", "spectators", "difficulty", "spectator_delay", "grace"})
"""The fields of RaceSettings that are not taken over as they are (the seed belongs to the deal)."""
SAME_AS_REQUESTED: Final = tuple(field.name for field in fields(SettingsInForce) if field.name not in OWN_FIELDS)
"""The fields a request gives and a reply shows unchanged."""
