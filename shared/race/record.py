"""Checking an exported race record without trusting the server: every move replayed with the engine, every
announced count and attempt end confirmed, and the result recomputed from the documented rules.

A record (``flowergarden export``) is a JSON object: ``format`` (:data:`RECORD_FORMAT`), ``version`` (1),
``race`` (the final RaceInfo map of docs/PROTOCOL.md) and ``events`` (every race event map in ``seq`` order, as
``replay`` gives them). The seed is the one the ``countdown`` (or a later ``result``) names.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from shared.board import Board, Status
from shared.deal import MASK64, check_seed
from shared.errors import EngineError
from shared.protocol import AttemptState
from shared.race.replay import replay_steps
from shared.race.reveal import check_reveal
from shared.race.rules import Standing, outcome
from shared.rules import Profile, Rules

RECORD_FORMAT: Final = "flowergarden-race-record"
RECORD_VERSION: Final = 1


def record_digest(race: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> bytes:
    """The SHA-256 of a record's ``race`` and ``events`` in canonical JSON (sorted keys, no spaces, UTF-8): what the
    server signs (the record's ``signature``) and ``verify`` checks, the same whoever wrote the file."""
    canonical = json.dumps({"race": race, "events": list(events)}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).digest()


class RecordInvalid(Exception):
    """The record does not hold up; ``seq`` is the event that gave it away (None: the record's shape)."""

    def __init__(self, message: str, seq: int | None = None) -> None:
        super().__init__(message if seq is None else f"event {seq}: {message}")
        self.seq = seq


class NotARecord(RecordInvalid):
    """The document is no race record at all (another format or version)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a record proved: the race, its seed, each player's action count and final count, and the result."""

    race: str
    seed: int
    actions: tuple[int, ...]
    counts: tuple[int, ...]
    winner: int | None
    reason: str


def _field(document: Mapping[str, Any], name: str, kind: type | tuple[type, ...], seq: int | None = None) -> Any:
    value = document.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise RecordInvalid(f"field {name!r} is missing or of the wrong type", seq)
    return value


def rules_of_record(race: Mapping[str, Any]) -> Rules:
    """The engine rules of a record's race (its settings)."""
    settings = _field(race, "settings", dict)
    try:
        profile = Profile(settings.get("profile", "classic"))
    except ValueError:
        raise RecordInvalid(f"unknown profile {settings.get('profile')!r}") from None
    return Rules(profile, undo=bool(settings.get("undo")), redeal_once=bool(settings.get("redeal_once")))


def verify_record(document: Mapping[str, Any]) -> Verdict:
    """Replay the record and confirm every move event and the result (the one :func:`shared.race.rules.outcome` gives
    for the recorded moves and attempt ends); RecordInvalid at the first thing that is wrong."""
    if document.get("format") != RECORD_FORMAT or document.get("version") != RECORD_VERSION:
        raise NotARecord(f"not a race record (format {RECORD_FORMAT!r}, version {RECORD_VERSION})")
    race = _field(document, "race", dict)
    events: Sequence[Mapping[str, Any]] = _field(document, "events", list)
    rules = rules_of_record(race)
    _check_numbering(events)
    seed = _seed(events)
    fold = _EventFold()
    for event in events:
        fold.add(event)
    actions, result, standings = fold.actions, fold.result, fold.standings
    boards = [_replayed(seed, rules, slot, actions[slot], fold.announced[slot]) for slot in (0, 1)]
    _check_attempt_ends(fold.ended, boards)
    if result is None:
        raise RecordInvalid("the record has no result")
    winner, reason = _checked_result(result, boards, actions, standings, rules=rules, rated=bool(race.get("settings", {}).get("rated")))
    _check_reveal(events, result, seed, rules.profile)
    return Verdict(
        race=str(race.get("race", "")),
        seed=seed,
        actions=(len(actions[0]), len(actions[1])),
        counts=(boards[0].foundation_count, boards[1].foundation_count),
        winner=winner,
        reason=reason,
    )


def _check_numbering(events: Sequence[Mapping[str, Any]]) -> None:
    """RecordInvalid unless the events are numbered 1, 2, 3, ... without gaps."""
    for number, event in enumerate(events, start=1):
        if not isinstance(event, dict) or event.get("seq") != number:
            raise RecordInvalid(f"events must be numbered 1, 2, 3, ... without gaps (found {event.get('seq') if isinstance(event, dict) else event!r})", number)


@dataclass(slots=True)
class _EventFold:
    """What the record's events say, seat by seat: the actions in order, each move event's announced figures, the
    result rules' view of each seat, the reasons the attempts ended, and the result event."""

    actions: dict[int, list[str]] = field(default_factory=lambda: {0: [], 1: []})
    announced: dict[int, list[tuple[int, int, int, str]]] = field(default_factory=lambda: {0: [], 1: []})
    standings: list[Standing] = field(default_factory=lambda: [Standing(), Standing()])
    ended: dict[int, str] = field(default_factory=dict)
    result: Mapping[str, Any] | None = None

    def add(self, event: Mapping[str, Any]) -> None:
        """Fold one event in (RecordInvalid for a move out of order or a missing field)."""
        seq, kind = event["seq"], event.get("type")
        if kind == "move":
            slot = _slot(event, seq)
            move_seq = _field(event, "move_seq", int, seq)
            if move_seq != len(self.actions[slot]) + 1:
                raise RecordInvalid(f"player {slot}'s action number {move_seq} out of order", seq)
            self.actions[slot].append(_field(event, "move", str, seq))
            count = _field(event, "count", int, seq)
            self.announced[slot].append((seq, count, _field(event, "left", int, seq), _field(event, "status", str, seq)))
            self.standings[slot] = self.standings[slot].counted(count, seq)
        elif kind == "attempt_ended":
            slot = _slot(event, seq)
            self.ended[slot] = _field(event, "reason", str, seq)
            self.standings[slot] = self.standings[slot].ended(_attempt_end(self.ended[slot], seq), seq)
        elif kind == "result":
            self.result = event


def _check_attempt_ends(ended: Mapping[int, str], boards: Sequence[Board]) -> None:
    """RecordInvalid if an attempt is said to be cleared or blocked and its replayed board is not."""
    for slot, reason in ended.items():
        if reason == AttemptState.CLEARED and not boards[slot].is_won():
            raise RecordInvalid(f"player {slot}'s attempt is said to be cleared, but its moves do not clear the board")
        if reason == AttemptState.BLOCKED and boards[slot].status() is not Status.BLOCKED:
            raise RecordInvalid(f"player {slot}'s attempt is said to be blocked, but a legal move is left")


def _seed(events: Sequence[Mapping[str, Any]]) -> int:
    for event in events:
        if event.get("type") in ("countdown", "result") and event.get("seed") is not None:
            try:
                return check_seed(int(event["seed"]))
            except (TypeError, ValueError, OverflowError):
                raise RecordInvalid(f"the seed is not an integer from 0 to {MASK64}", event.get("seq")) from None
    raise RecordInvalid("no event names the seed (countdown)")


def _check_reveal(events: Sequence[Mapping[str, Any]], result: Mapping[str, Any], seed: int, profile: Profile) -> None:
    """The deal was fixed before the start: the result's seed and salt (and proving line) hash to the commitment of
    the last ``countdown`` (the deal played), and that countdown's layout is the seed's deal (shared/race/reveal.py)."""
    countdowns = [event for event in events if event.get("type") == "countdown"]
    if not countdowns:
        raise RecordInvalid("the record has no countdown: nothing commits to the deal")
    countdown = countdowns[-1]
    at = countdown["seq"]
    commitment = _field(countdown, "commitment", str, at)
    columns, bouquet = _field(countdown, "columns", list, at), _field(countdown, "bouquet", list, at)
    salt = _field(result, "salt", str, result["seq"])
    line = result.get("proving_line")
    if result.get("seed") != seed:
        raise RecordInvalid("the result reveals another seed than the record's", result["seq"])
    if line is not None and not (isinstance(line, list) and all(isinstance(move, str) for move in line)):
        raise RecordInvalid("field 'proving_line' is of the wrong type", result["seq"])
    for name, holds, says in check_reveal(commitment, seed, profile, salt, line, (columns, bouquet)):
        if not holds:
            where = at if name in ("commitment", "layout") else result["seq"]
            raise RecordInvalid(f"the {name} does not hold: not true that {says}", where)


def _slot(event: Mapping[str, Any], seq: int) -> int:
    slot = _field(event, "slot", int, seq)
    if slot not in (0, 1):
        raise RecordInvalid(f"slot {slot} names no seat", seq)
    return int(slot)


def _attempt_end(reason: str, seq: int) -> AttemptState:
    try:
        state = AttemptState(reason)
    except ValueError:
        raise RecordInvalid(f"no attempt ends for the reason {reason!r}", seq) from None
    if state is AttemptState.PLAYING or state is AttemptState.RACE_OVER:
        raise RecordInvalid(f"no attempt ends for the reason {reason!r}", seq)
    return state


def _replayed(seed: int, rules: Rules, slot: int, actions: list[str], announced: list[tuple[int, int, int, str]]) -> Board:
    """Replay one player's actions, checking each announced count, cards left and status against the engine."""
    board = Board.deal(seed, rules)
    steps = replay_steps(board, actions)
    for index, (seq, count, left, status) in enumerate(announced):
        try:
            board = next(steps)
        except EngineError as error:
            raise RecordInvalid(f"player {slot}'s action {actions[index]!r} is illegal: {error.message}", seq) from None
        if (board.foundation_count, board.cards_left) != (count, left):
            raise RecordInvalid(f"player {slot}: the engine counts {board.foundation_count} on the foundations, the record {count}", seq)
        engine_status = board.status().value
        if status != engine_status and not (status == Status.DEAD and engine_status == Status.PLAYING):
            raise RecordInvalid(f"player {slot}: the engine says {engine_status}, the record {status}", seq)
    return board


def _checked_result(
    result: Mapping[str, Any],
    boards: list[Board],
    actions: Mapping[int, list[str]],
    standings: Sequence[Standing],
    *,
    rules: Rules,
    rated: bool,
) -> tuple[int | None, str]:
    """The result, if it agrees with the replayed boards and is the one the result rules (:func:`outcome`) give."""
    seq = result["seq"]
    winner = result.get("winner")
    reason = _field(result, "reason", str, seq)
    lines = _field(result, "players", list, seq)  # a slot of another type (a list would not even hash) names no seat
    by_slot = {line["slot"]: line for line in lines if isinstance(line, dict) and type(line.get("slot")) is int}
    for slot in (0, 1):
        line = by_slot.get(slot)
        if line is None:
            raise RecordInvalid(f"the result has no line for player {slot}", seq)
        if line.get("count") != boards[slot].foundation_count or line.get("moves") != len(actions[slot]):
            raise RecordInvalid(
                f"player {slot}: the result says {line.get('count')} cards in {line.get('moves')} actions, "
                f"the replay gives {boards[slot].foundation_count} in {len(actions[slot])}",
                seq,
            )
    expected = outcome(standings, rated=rated, undo=rules.undo)
    fair = expected is not None and (winner is None or type(winner) is int) and (expected.winner, expected.reason) == (winner, reason)
    if not fair:
        raise RecordInvalid(f"the result ({'draw' if winner is None else f'player {winner} wins'}, {reason}) does not follow from the moves", seq)
    return winner, reason
