"""What each recipient may see of a race: players never receive the opponent's moves, only its progress.

Events are stored once, with every detail, in the race's stream (for
spectators, replays and reconnect catch-up); this module cuts them down per
recipient when they are delivered, keeping each event's sequence number.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from server.protocol import MoveMade, PlayerInfo, Progress, RaceEvent, RaceInfo, RaceSettings, event_from_map
from server.store import RaceRecord, StoredEvent
from shared import card_text, deal

SPECTATOR = None
"""The viewer slot of someone who watches without a seat (issue 5); sees every move."""


@lru_cache(maxsize=1024)
def deal_texts(seed: int) -> tuple[list[list[str]], list[str]]:
    """The deal of ``seed`` in notation: six columns (first-dealt first) and the bouquet."""
    layout = deal(seed)
    return [[card_text(card) for card in column] for column in layout.columns], [card_text(card) for card in layout.bouquet]


def event_for(race_id: str, stored: StoredEvent, viewer_slot: int | None) -> RaceEvent:
    """The event as ``viewer_slot`` (0, 1, or SPECTATOR) receives it."""
    body: dict[str, Any] = {**stored.body, "race": race_id, "seq": stored.seq}
    if body["type"] == "countdown":
        seed = int(body["seed"])
        columns, bouquet = deal_texts(seed)
        body.update(seed=seed, columns=columns, bouquet=bouquet)
    event = event_from_map(body)
    if isinstance(event, MoveMade) and viewer_slot is not SPECTATOR and viewer_slot != event.slot:
        return Progress(race=event.race, seq=event.seq, at=event.at, slot=event.slot, count=event.count, left=event.left, status=event.status)
    return event


def race_info(record: RaceRecord) -> RaceInfo:
    """The race as its players see it; a random seed stays hidden until the countdown starts."""
    return RaceInfo(
        race=record.race_id,
        status=record.status,
        settings=RaceSettings(
            profile=record.profile,
            undo=record.undo,
            redeal_once=record.redeal_once,
            time_limit=record.time_limit,
            seed=None,
        ),
        players=[
            PlayerInfo(slot=seat.slot, player=seat.player, name=seat.name, count=seat.count, left=seat.left, state=seat.state)
            for seat in record.seats
        ],
        seed=None if record.status == "waiting" else record.seed,
        start_at=record.start_at,
        deadline=record.deadline,
        event_seq=record.event_seq,
    )
