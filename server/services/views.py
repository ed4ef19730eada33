"""What each recipient may see of a race: players never receive the opponent's moves, only its progress.

Events are stored once, with every detail, in the race's stream (for
spectators, replays and reconnect catch-up); this module cuts them down per
recipient when they are delivered, keeping each event's sequence number.
"""

from __future__ import annotations

from dataclasses import replace

from server.store import LobbyChange, RaceRecord
from shared import Board, Suit, card_text, make_card
from shared.protocol import (
    BoardView,
    EmoteSent,
    LobbyAdded,
    LobbyChanged,
    LobbyEntry,
    LobbyEvent,
    LobbyRemoved,
    MoveMade,
    PlayerInfo,
    Progress,
    RaceEvent,
    RaceInfo,
    RaceStatus,
    from_map,
    project,
)
from shared.race import RaceSnapshot

SPECTATOR = None
"""The viewer slot of someone who watches without a seat; sees every move (after the spectator delay)."""


def event_for(event: RaceEvent, viewer_slot: int | None) -> RaceEvent:
    """The event as ``viewer_slot`` (0, 1, or SPECTATOR) receives it: the opponent's move becomes its progress."""
    if isinstance(event, MoveMade) and viewer_slot is not SPECTATOR and viewer_slot != event.slot:
        return Progress(race=event.race, seq=event.seq, at=event.at, slot=event.slot, count=event.count, left=event.left, status=event.status)
    return event


def shown_live(event: RaceEvent, viewer_slot: int | None) -> bool:
    """Whether ``viewer_slot`` receives ``event`` as it happens: a quick emote goes to the players only, never to live
    spectators (docs/decisions/0019-emotes-between-players.md); a replay, the race's whole record, has it."""
    return viewer_slot is not SPECTATOR or not isinstance(event, EmoteSent)


def race_info(record: RaceRecord, *, spectator_delay_ms: int | None = None) -> RaceInfo:
    """The race as its players see it: the seed (with the salt and proving line) stays hidden until the result,
    the commitment is shown from the countdown on."""
    finished = record.status is RaceStatus.FINISHED
    return RaceInfo(
        race=record.race_id,
        status=record.status,
        settings=record.settings.shown(spectator_delay_ms=spectator_delay_ms),
        players=[project(seat, PlayerInfo) for seat in record.seats],
        seed=record.deal.seed if finished else None,
        start_at=record.start_at,
        deadline=record.deadline,
        event_seq=record.event_seq,
        watchers=record.watchers,
        invite=record.invite if record.status is RaceStatus.WAITING else None,  # only while it is of use: to be shared
        commitment=(record.deal.commitment or None) if record.status not in (RaceStatus.WAITING, RaceStatus.CLOSED) else None,
        seed_chosen=record.seed_fixed,
        difficulty=record.deal.difficulty,
        salt=(record.deal.salt or None) if finished else None,
        proving_line=list(record.deal.proving_line) if finished and record.deal.proving_line else None,
    )


def race_as_of(record: RaceRecord, race: RaceSnapshot, *, spectator_delay_ms: int) -> RaceInfo:
    """The race as it stood when its events had made ``race`` (their fold, see :func:`shared.race.fold_events`).

    This is how a spectator's snapshot is built for a moment in the past.
    """
    info = race_info(record, spectator_delay_ms=spectator_delay_ms)
    revealed = race.status is RaceStatus.FINISHED
    return replace(
        info,
        status=race.status,
        players=race.seats(),
        seed=race.seed,
        commitment=race.commitment,
        salt=info.salt if revealed else None,
        proving_line=info.proving_line if revealed else None,
        start_at=race.start_at,
        deadline=race.deadline,
        event_seq=race.event_seq,
        watchers=race.watchers,
    )


def board_view(slot: int, actions: list[str], board: Board, redeal_columns: list[list[str]] | None = None) -> BoardView:
    """A player's position as spectators receive it (``redeal_columns``: what its redeal dealt, if any)."""
    return BoardView(
        slot=slot,
        moves=actions,
        columns=[[card_text(card) for card in column] for column in board.columns],
        bouquet=[card_text(card) for card in board.bouquet],
        foundations=[card_text(make_card(top, suit)) if top else None for suit, top in zip(Suit, board.foundations)],
        count=board.foundation_count,
        status=board.status(),
        undos=board.undos,
        redeal_used=board.redeal_used,
        redeal_columns=redeal_columns,
    )


def lobby_entry(record: RaceRecord, *, spectator_delay_ms: int | None = None) -> LobbyEntry:
    """The race as the lobby lists it (``spectator_delay_ms``: the delay in force, as in :func:`race_info`)."""
    creator = record.seats[0]
    return LobbyEntry(
        race=record.race_id,
        creator=creator.name,
        player=creator.player,
        settings=record.settings.shown(spectator_delay_ms=spectator_delay_ms),
        seats=len(record.seats),
        status=record.status,
        created_at=record.created_at,
        creator_account=creator.account,
        creator_bot=creator.bot,
        seed_chosen=record.seed_fixed,
        difficulty=record.deal.difficulty,
    )


def lobby_event(change: LobbyChange) -> LobbyEvent:
    """A change of the lobby feed as watchers receive it."""
    if change.entry is None:
        return LobbyRemoved(at=change.at, race=change.race)
    entry = from_map(LobbyEntry, change.entry)
    if change.op == LobbyAdded.TYPE:
        return LobbyAdded(at=change.at, entry=entry)
    return LobbyChanged(at=change.at, entry=entry)
