"""Ghost races: race a recorded attempt, replayed at its pace in the second seat of an ordinary race on the same deal.

The recorded attempt is a counted attempt of a finished day of the daily deal, or one player's line of a finished race.
Either way its deal's seed was revealed already (at the day's end, with the race's result), so the ghost race, whose
own result reveals the same seed, never tells a seed before the ghost's own race did. The race is private (its
invite code is the ghost's way in), never rated, and carries ``settings.ghost``, the label every view shows; the
server's bot host seats the ghost and plays its moves (server/bot_host.py). docs/COMMUNITY.md "Ghost races".
"""

from __future__ import annotations

from dataclasses import dataclass

from server.services.daily import DailyService
from server.services.errors import ServiceError
from server.services.lobby import LobbyService, Owner
from server.services.race import RaceService, SeatedRace
from server.services.sessions import Session
from server.services.spectate import ensure_shown_to
from server.store import RaceStore
from shared.protocol import (
    AttemptEnded,
    ErrorCode,
    GhostRace,
    GhostSource,
    MoveMade,
    RaceSettings,
    RaceStatus,
    Spectators,
    Started,
)

GHOST_ORIGIN = "ghost"
"""The origin of a ghost race (the only one whose settings may carry ``ghost``)."""


@dataclass(frozen=True, slots=True)
class GhostLine:
    """A recorded attempt to replay: its moves, when each was made and when the attempt ended (ms after its start)."""

    name: str
    """The ghost's name in the race (``Ghost of <handle>``)."""
    moves: tuple[str, ...]
    times: tuple[int, ...]
    end_ms: int


@dataclass(frozen=True, slots=True)
class GhostSeat:
    """A ghost race created with its requester in seat 0, and the ghost that is to take seat 1."""

    seated: SeatedRace
    invite: str
    line: GhostLine


class GhostService:
    """Finds the recorded attempt a ``ghost_race`` asks for and opens the race against it."""

    def __init__(self, races: RaceService, store: RaceStore, lobby: LobbyService, daily: DailyService) -> None:
        self.races = races
        self.store = store
        self.lobby = lobby
        self.daily = daily

    async def open(self, session: Session, request: GhostRace, owner: Owner) -> GhostSeat:
        """The ghost race of ``request`` with the asker seated (ServiceError when the attempt is not there or not
        shown yet: ``daily_not_over``, ``not_finished``, ``no_spectators``, ``unknown_*``)."""
        if request.source is GhostSource.DAILY:
            settings, line = await self._daily(session, request)
        else:
            settings, line = await self._race(session, request)
        seated = await self.lobby.create(session.identity, settings, owner, origin=GHOST_ORIGIN)
        invite = seated.record.invite
        assert invite is not None  # a private race
        return GhostSeat(seated, invite, line)

    async def _daily(self, session: Session, request: GhostRace) -> tuple[RaceSettings, GhostLine]:
        if request.day is None:
            raise ServiceError(ErrorCode.BAD_FIELD, "a daily ghost needs its day", field="day")
        now = await self.daily.now_ms()
        deal = await self.daily.deal_of(request.day, now)
        if now < deal.closes_at:  # even one's own: the race's result would reveal the day's seed
            raise ServiceError(ErrorCode.DAILY_NOT_OVER, f"the attempts of {deal.day} race as ghosts once the day ends", field="day", expected=deal.closes_at)
        replay = await self.daily.replay(session, deal.day, request.handle)
        who = replay.handle or "you"
        settings = RaceSettings(
            profile=deal.profile, time_limit=deal.time_limit_ms // 1000, seed=deal.seed, private=True, spectators=Spectators.LINK,
            ghost=f"daily {deal.day} {who}",
        )  # fmt: skip
        return settings, GhostLine(f"Ghost of {who}", tuple(replay.moves), tuple(replay.times), replay.result.time_ms)

    async def _race(self, session: Session, request: GhostRace) -> tuple[RaceSettings, GhostLine]:
        if request.race is None:
            raise ServiceError(ErrorCode.BAD_FIELD, "a race ghost needs its race", field="race")
        record = await self.races.record(request.race)
        ensure_shown_to(record, session.player)
        if record.status is not RaceStatus.FINISHED:
            raise ServiceError(ErrorCode.NOT_FINISHED, "a race runs as a ghost once it is over (its seed is revealed then)", field="race")
        seat = next((seat for seat in record.seats if seat.slot == request.slot), None)
        if seat is None:
            raise ServiceError(ErrorCode.NOT_SEATED, "that seat of the race was never taken", field="slot")
        start = record.start_at or 0
        moves, times, end = [], [], 0
        for event in await self.store.events_after(record.race_id, 0):
            if isinstance(event, Started):
                start = event.at
            elif isinstance(event, MoveMade) and event.slot == request.slot:
                moves.append(event.move)
                times.append(max(0, event.at - start))
            elif isinstance(event, AttemptEnded) and event.slot == request.slot:
                end = max(0, event.at - start)
        who = seat.account or seat.name
        chosen = record.settings
        settings = RaceSettings(
            profile=chosen.profile, undo=chosen.undo, redeal_once=chosen.redeal_once, time_limit=chosen.time_limit,
            seed=record.deal.seed, private=True, spectators=Spectators.LINK, ghost=f"race {record.race_id} {who}",
        )  # fmt: skip
        return settings, GhostLine(f"Ghost of {who}"[:32], tuple(moves), tuple(times), max(end, times[-1] if times else 0))
