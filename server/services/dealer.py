"""Settings checked and deals fixed for new races: a fixed, random or solver-proven seed, sealed by a commitment.

A deal is sealed when it is fixed (creation, or a new deal after the second
player left the countdown): a fresh 16-byte salt, and the commitment over seed,
profile, salt and the proving line (shared/commitment.py) that ``countdown``
publishes and the result lets anyone check.
"""

from __future__ import annotations

import secrets
from dataclasses import fields, replace
from enum import Enum
from typing import Final

from server.services.errors import ServiceError
from server.services.seed_pool import SeedPool
from server.store import NewRace, PooledSeed, RaceRecord, SealedDeal
from shared import Profile
from shared.commitment import NO_LINE, SALT_BYTES, deal_commitment, line_digest
from shared.protocol import ErrorCode, RaceSettings, Spectators
from shared.race.settings import SettingsInForce
from shared.solver.difficulty import WINNABLE_TIERS


def checked_profile(settings: RaceSettings, seeds: SeedPool) -> Profile:
    """The settings' profile, if the settings can be dealt here; ServiceError ``bad_field`` otherwise."""
    try:
        profile = Profile(settings.profile)
    except ValueError:
        choices = ", ".join(p.value for p in Profile)
        raise ServiceError(ErrorCode.BAD_FIELD, f"profile must be one of {choices}", field="settings.profile") from None
    if settings.difficulty is not None and (not settings.solvable_only or settings.difficulty not in WINNABLE_TIERS):
        tiers = ", ".join(tier.value for tier in WINNABLE_TIERS)
        raise ServiceError(ErrorCode.BAD_FIELD, f"difficulty needs solvable_only and is one of {tiers}", field="settings.difficulty")
    if settings.solvable_only:
        if settings.seed is not None:
            raise ServiceError(ErrorCode.BAD_FIELD, "choose a seed or solvable_only, not both", field="settings.solvable_only")
        if not seeds.offers(profile.value):
            raise ServiceError(
                ErrorCode.BAD_FIELD,
                f"this server keeps no proven {profile.value} deals (almost no such deal is winnable)",
                field="settings.solvable_only",
            )
    return profile


def spectators_of(settings: RaceSettings, origin: str) -> Spectators:
    """Who may watch a race asked for with ``settings``: as chosen, else ``link`` for a private race opened with
    ``create`` (its players chose privacy) and ``anyone`` otherwise."""
    if settings.spectators is not None:
        return settings.spectators
    return Spectators.LINK if settings.private and origin == "create" else Spectators.ANYONE


NOT_PAIRED_ON: Final = frozenset({"private", "spectator_delay", "grace"})
"""The settings two quick-match requests may differ in: the race takes those of the player who waited."""


def settings_key(settings: RaceSettings) -> str:
    """What two quick-match requests must share to be paired: every setting but :data:`NOT_PAIRED_ON` (so a new
    setting is paired on unless it is listed there), who may watch as resolved; ``<name>=<value>`` joined by ``/``."""
    paired = replace(settings, spectators=spectators_of(settings, "quick_match"))
    return "/".join(f"{field.name}={_key_text(getattr(paired, field.name))}" for field in fields(paired) if field.name not in NOT_PAIRED_ON)


def _key_text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(int(value))
    return value.value if isinstance(value, Enum) else str(value)


def settings_key_of(record: RaceRecord) -> str:
    """The quick-match settings key ``record`` was dealt for (its seed counts only when the request fixed it)."""
    return settings_key(replace(record.settings.shown(), seed=record.deal.seed if record.seed_fixed else None))


def sealed(profile: Profile, seed: int, pooled: PooledSeed | None = None) -> SealedDeal:
    """The deal of ``seed`` with a fresh salt and its commitment (a pooled deal's tier and proving line included)."""
    salt = secrets.token_bytes(SALT_BYTES)
    line = pooled.line if pooled is not None else ()
    commitment = deal_commitment(seed, profile, salt, line_digest(line) if line else NO_LINE)
    return SealedDeal(seed, salt.hex(), commitment, None if pooled is None else pooled.difficulty, line)


class Dealer:
    """Turns settings into a new race's rules and seed."""

    def __init__(self, seeds: SeedPool) -> None:
        self.seeds = seeds

    async def deal(self, settings: RaceSettings, *, origin: str) -> NewRace:
        """A new race for ``settings``: its seed fixed, random, or popped from the pool (``seed_pool_empty``)."""
        checked_profile(settings, self.seeds)
        if settings.ghost is not None and origin != "ghost":
            raise ServiceError(ErrorCode.BAD_FIELD, "only a ghost_race sets ghost", field="settings.ghost")
        if settings.arena is not None and origin != "arena":
            raise ServiceError(ErrorCode.BAD_FIELD, "only an arena's pairing sets arena", field="settings.arena")
        chosen = SettingsInForce.chosen(settings, spectators=spectators_of(settings, origin))
        return NewRace(chosen, await self._new_deal(chosen, settings.seed), seed_fixed=settings.seed is not None, origin=origin)

    async def rematch_of(self, record: RaceRecord) -> NewRace:
        """The same settings as ``record`` (the delay its players accepted included) with a new deal (random, or
        proven when solvable-only)."""
        settings = replace(record.settings, arena=None)  # a rematch of an arena race is not one of the arena's
        return NewRace(settings, await self._new_deal(settings), origin="rematch", rematch_of=record.race_id)

    async def _new_deal(self, settings: SettingsInForce, seed: int | None = None) -> SealedDeal:
        """The deal of ``seed``, a proven one popped from the pool (``seed_pool_empty``) or a random one."""
        profile = Profile(settings.profile)
        if settings.solvable_only:
            pooled = await self.seeds.take(profile.value, settings.asked_difficulty)
            return sealed(profile, pooled.seed, pooled)
        return sealed(profile, seed if seed is not None else secrets.randbits(64))

    async def next_deal(self, record: RaceRecord) -> SealedDeal:
        """The deal of a race that waits again after its shown layout: the fixed seed (same commitment), a new proven
        one (of the race's tier), or random; each new one sealed with a fresh salt.

        When the pool is empty the shown deal stays (rather than refusing to let a player leave).
        """
        profile = Profile(record.settings.profile)
        if record.seed_fixed:
            return record.deal
        if record.settings.solvable_only:
            pooled = await self.seeds.take_if_any(profile.value, record.settings.asked_difficulty)
            return record.deal if pooled is None else sealed(profile, pooled.seed, pooled)
        return sealed(profile, secrets.randbits(64))

    async def give_back(self, race: NewRace) -> None:
        """Return a pool deal taken for a race that was never dealt."""
        if race.settings.solvable_only:
            await self.give_back_deal(race.settings.profile, race.deal, tiered=race.settings.asked_difficulty is not None)

    async def give_back_deal(self, profile: str, deal: SealedDeal, *, tiered: bool) -> None:
        """Return a pooled deal that was taken but never dealt (to its tier's pool when the race asked for a tier)."""
        await self.seeds.give_back(profile, PooledSeed(deal.seed, deal.difficulty, deal.proving_line), tiered=tiered)
