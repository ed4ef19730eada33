"""A race's lifecycle in the logs and metrics: created, countdown, started, attempt ended, result, closed.

Each step is reported by the process whose script made it (the store hands over the lifecycle events a
script emitted), so across several processes every step is logged and counted exactly once. Fields are
race facts only: never a token or an invite code.
"""

from __future__ import annotations

from typing import Any

from server import logs, metrics
from server.store import NewRace
from shared.protocol import AnyErrorCode, ErrorCode, MoveRequest, RaceStatus, Request


def race_created(race_id: str, player: str, race: NewRace) -> None:
    """A race was created with ``player`` in seat 0 (the invite code, a secret, is not logged)."""
    metrics.race_status("created")
    logs.event(
        "race_created",
        race=race_id,
        player=player,
        origin=race.origin,
        profile=race.settings.profile,
        private=race.settings.private,
        solvable_only=race.settings.solvable_only,
        undo=race.settings.undo,
        redeal_once=race.settings.redeal_once,
        time_limit=race.settings.time_limit,
    )


def race_countdown(race_id: str, player: str, start_at: int) -> None:
    """A second player took seat 1: the countdown to ``start_at`` runs."""
    metrics.race_status("countdown")
    logs.event("race_countdown", race=race_id, player=player, start_at=start_at)


def race_left(race_id: str, player: str, outcome: str, reason: str) -> None:
    """``player`` left before the start: the race was ``closed`` or waits again (``waiting``)."""
    if outcome == RaceStatus.CLOSED:
        metrics.race_status("closed")
        logs.event("race_closed", race=race_id, player=player, reason=reason)
    else:
        logs.event("race_seat_freed", race=race_id, player=player, reason=reason)


def race_discarded(race_id: str) -> None:
    """A race nobody was told about was deleted (made redundant by a concurrent quick match or rematch)."""
    metrics.race_status("discarded")
    logs.event("race_discarded", race=race_id)


_RATE_LIMITED_REQUESTS = logs.Throttle(1.0)
"""Requests refused ``rate_limited`` are each counted but logged at most once a second per process: one line per
refusal let a flood of refused requests cost the server more in log lines than in the refusals themselves."""


def request_refused(request: Request, player: str | None, error_code: AnyErrorCode) -> None:
    """A request was answered with error ``error_code``; a refused move is a lifecycle step of its race."""
    code = str(error_code.value)
    metrics.request_refused(request.TYPE, code)
    if error_code == ErrorCode.RATE_LIMITED and (held_back := _RATE_LIMITED_REQUESTS.due()) is not None:
        # e.g. too many wrong invite codes (the codes themselves are never logged), or watch churn
        logs.warning("rate_limited", request=request.TYPE, player=player, action="refused", not_logged_since=held_back)
    if isinstance(request, MoveRequest):
        logs.event("move_refused", race=request.race, player=player, seq=request.seq, move=request.move, code=code)


def lifecycle(race_id: str, events: list[dict[str, Any]]) -> None:
    """The lifecycle events one store script emitted (:class:`server.store.RaceStore` ``lifecycle`` observer)."""
    for item in events:
        kind = item.get("type")
        if kind == "started":
            metrics.race_status("running")
            logs.event("race_started", race=race_id, at=item.get("at"))
        elif kind == "attempt_ended":
            reason = str(item.get("reason"))
            metrics.attempt_ended(reason)
            logs.event(
                "attempt_ended", race=race_id, slot=item.get("slot"), reason=reason, count=item.get("count"), left=item.get("left")
            )
        elif kind == "result":
            reason = str(item.get("reason"))
            metrics.race_result(reason)
            standings = [
                {"slot": line.get("slot"), "player": line.get("player"), "count": line.get("count"), "ended": line.get("ended"),
                 "time_ms": line.get("time_ms"), "moves": line.get("moves")}
                for line in item.get("players", [])
            ]
            logs.event("race_result", race=race_id, winner=item.get("winner"), reason=reason, players=standings)
