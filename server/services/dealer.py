"""Settings checked and seeds chosen for new races: fixed, random, or a solver-proven seed from the pool."""

from __future__ import annotations

import secrets
from dataclasses import replace

from server.services.errors import ServiceError
from server.services.seed_pool import SeedPool
from server.services.views import settings_of
from server.store import NewRace, RaceRecord
from shared import Profile
from shared.protocol import ErrorCode, RaceSettings, Spectators


def checked_profile(settings: RaceSettings, seeds: SeedPool) -> Profile:
    """The settings' profile, if the settings can be dealt here; ServiceError ``bad_field`` otherwise."""
    try:
        profile = Profile(settings.profile)
    except ValueError:
        choices = ", ".join(p.value for p in Profile)
        raise ServiceError(ErrorCode.BAD_FIELD, f"profile must be one of {choices}", field="settings.profile") from None
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


def settings_key(settings: RaceSettings) -> str:
    """What two quick-match requests must share to be paired: the rules, the deal and who may watch (not ``private``,
    nor the spectator delay and grace: the race takes those of the player who waited)."""
    seed = "-" if settings.seed is None else str(settings.seed)
    return (
        f"{settings.profile}/undo={int(settings.undo)}/redeal={int(settings.redeal_once)}/limit={settings.time_limit or 0}"
        f"/solvable={int(settings.solvable_only)}/seed={seed}/spectators={spectators_of(settings, 'quick_match')}"
        + ("/rated" if settings.rated else "")
    )


def settings_key_of(record: RaceRecord) -> str:
    """The quick-match settings key ``record`` was dealt for (its seed counts only when the request fixed it)."""
    return settings_key(replace(settings_of(record), seed=record.seed if record.seed_fixed else None))


class Dealer:
    """Turns settings into a new race's rules and seed."""

    def __init__(self, seeds: SeedPool) -> None:
        self.seeds = seeds

    async def deal(self, settings: RaceSettings, *, origin: str) -> NewRace:
        """A new race for ``settings``: its seed fixed, random, or popped from the pool (``seed_pool_empty``)."""
        profile = checked_profile(settings, self.seeds)
        if settings.solvable_only:
            seed = await self.seeds.take(profile.value)
        else:
            seed = settings.seed if settings.seed is not None else secrets.randbits(64)
        return NewRace(
            profile=profile.value,
            undo=settings.undo,
            redeal_once=settings.redeal_once,
            time_limit=settings.time_limit,
            seed=seed,
            solvable_only=settings.solvable_only,
            private=settings.private,
            seed_fixed=settings.seed is not None,
            origin=origin,
            spectator_delay=settings.spectator_delay,
            grace=settings.grace,
            spectators=spectators_of(settings, origin),
            rated=settings.rated,
        )

    async def rematch_of(self, record: RaceRecord) -> NewRace:
        """The same settings as ``record`` with a new deal (random, or proven when solvable-only)."""
        return replace(await self.deal(settings_of(record), origin="rematch"), rematch_of=record.race_id)

    async def next_seed(self, record: RaceRecord) -> int:
        """The deal of a race that waits again after its revealed deal: the fixed seed, a new proven one, or random.

        When the pool is empty the revealed deal stays (rather than refusing to let a player leave).
        """
        if record.seed_fixed:
            return record.seed
        if record.solvable_only:
            seed = await self.seeds.take_if_any(record.profile)
            return record.seed if seed is None else seed
        return secrets.randbits(64)

    async def give_back(self, race: NewRace) -> None:
        """Return a pool seed taken for a race that was never dealt."""
        if race.solvable_only:
            await self.seeds.give_back(race.profile, race.seed)
