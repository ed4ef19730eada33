"""An arena tournament's exported record and its check without trusting the server: every race's points recomputed
by the arena's rules, both sides of every race agreeing, and the table recomputed from the races.

A record (``flowergarden export --arena``) is a JSON object: ``format`` (:data:`ARENA_RECORD_FORMAT`), ``version``
(1), and the fields of the ``arena_record`` reply (docs/PROTOCOL.md): ``arena``, ``final``, ``players`` (each with
its races, oldest first) and ``standings``, with ``signature``, the servers' Ed25519 signature of
:func:`arena_record_digest`. Each race of the table is an ordinary race whose own record ``flowergarden export RACE``
gives and ``verify`` checks move by move.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from shared.arena import ArenaGame, game_points, standings
from shared.protocol.states import Outcome
from shared.race.record import NotARecord, RecordInvalid

ARENA_RECORD_FORMAT: Final = "flowergarden-arena-record"
ARENA_RECORD_VERSION: Final = 1
SIGNED_FIELDS: Final = ("arena", "final", "players", "standings")
"""The fields the signature covers: all of the record but its format, version and the signature itself."""
OPPOSITE: Final = {Outcome.WON: Outcome.LOST, Outcome.LOST: Outcome.WON, Outcome.DRAW: Outcome.DRAW}


def arena_record_digest(document: Mapping[str, Any]) -> bytes:
    """The SHA-256 of a record's :data:`SIGNED_FIELDS` in canonical JSON (sorted keys, no spaces, UTF-8, a whole
    float written as an integer): what the server signs and ``verify`` checks, the same whoever wrote the file (a
    browser writes the rating 1500.0 as 1500)."""
    signed = _canonical({name: document.get(name) for name in SIGNED_FIELDS})
    return hashlib.sha256(json.dumps(signed, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).digest()


def _canonical(value: Any) -> Any:
    """``value`` with every whole float made an int, recursively."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class ArenaVerdict:
    """What an arena record proved: the arena, its players and races, whether the table is final, and the top line."""

    arena: str
    players: int
    races: int
    final: bool
    winner: str | None
    """The handle ranked first (None without a player)."""


def _field(document: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = document.get(name) if isinstance(document, Mapping) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordInvalid(f"{where}: {name!r} is missing or not a {getattr(kind, '__name__', kind)}")
    return value


def _games(player: Mapping[str, Any], where: str) -> list[ArenaGame]:
    """A player's races as the rules see them, each race's stated points checked against the rules."""
    games: list[ArenaGame] = []
    for number, line in enumerate(_field(player, "games", list, where), start=1):
        at = f"{where}, race {number}"
        try:
            outcome = Outcome(_field(line, "outcome", str, at))
        except ValueError:
            raise RecordInvalid(f"{at}: no such outcome {line.get('outcome')!r}") from None
        game = ArenaGame(
            _field(line, "race", str, at), _field(line, "opponent", str, at), outcome, _field(line, "berserk", bool, at),
            _field(line, "moves", int, at), float(_field(line, "opponent_rating", (int, float), at)),
        )  # fmt: skip
        points = game_points(games, game)
        if _field(line, "points", int, at) != points:
            raise RecordInvalid(f"{at} ({game.race}): {line['points']} points stated, the rules give {points}")
        games.append(game)
    return games


def _check_sides(games: Mapping[str, Sequence[ArenaGame]], ratings: Mapping[str, float]) -> int:
    """Each race has two sides that name each other with opposite outcomes and the opponent's own rating; how many
    races there are."""
    sides: dict[str, list[tuple[str, ArenaGame]]] = {}
    for player, played in games.items():
        for game in played:
            sides.setdefault(game.race, []).append((player, game))
    for race, pair in sides.items():
        if len(pair) != 2:
            raise RecordInvalid(f"race {race}: {len(pair)} side(s) in the record, a race has two")
        (a, game_a), (b, game_b) = pair
        if (game_a.opponent, game_b.opponent) != (b, a):
            raise RecordInvalid(f"race {race}: its two sides do not name each other")
        if game_b.outcome is not OPPOSITE[game_a.outcome]:
            raise RecordInvalid(f"race {race}: both sides claim {game_a.outcome} / {game_b.outcome}")
        if game_a.opponent_rating != ratings[b] or game_b.opponent_rating != ratings[a]:
            raise RecordInvalid(f"race {race}: an opponent's rating is not the one it joined with")
    return len(sides)


def _check_table(document: Mapping[str, Any], games: Mapping[str, Sequence[ArenaGame]], handles: Mapping[str, str]) -> str | None:
    """The stated standings are the ones the races give, line by line; the first line's handle."""
    stated = _field(document, "standings", list, "the record")
    computed = standings(dict(games))
    if len(stated) != len(computed):
        raise RecordInvalid(f"the table has {len(stated)} line(s), the players are {len(computed)}")
    for line, right in zip(stated, computed, strict=True):
        expected = {
            "rank": right.rank, "handle": handles[right.player], "score": right.score, "performance": round(right.performance),
            "fire": right.fire, "games": right.games,
        }  # fmt: skip
        wrong = [name for name, value in expected.items() if not isinstance(line, Mapping) or line.get(name) != value]
        if wrong:
            raise RecordInvalid(f"standing {right.rank}: {', '.join(wrong)} not what the races give ({expected})")
    return handles[computed[0].player] if computed else None


def verify_arena_record(document: Mapping[str, Any]) -> ArenaVerdict:
    """The verdict on an arena record; RecordInvalid naming the first thing that does not hold (NotARecord: no
    arena record of this version at all)."""
    if not isinstance(document, Mapping) or document.get("format") != ARENA_RECORD_FORMAT or document.get("version") != ARENA_RECORD_VERSION:
        raise NotARecord(f"not a {ARENA_RECORD_FORMAT} version {ARENA_RECORD_VERSION}")
    arena = _field(_field(document, "arena", Mapping, "the record"), "arena", str, "the arena")
    games: dict[str, list[ArenaGame]] = {}
    handles: dict[str, str] = {}
    ratings: dict[str, float] = {}
    for player in _field(document, "players", list, "the record"):
        who = _field(player, "player", str, "a player")
        if who in games:
            raise RecordInvalid(f"player {who}: listed twice")
        handles[who] = _field(player, "handle", str, f"player {who}")
        ratings[who] = float(_field(player, "rating", (int, float), f"player {who}"))
        games[who] = _games(player, f"player {handles[who]}")
    if any(game.opponent not in games for played in games.values() for game in played):
        raise RecordInvalid("a race names an opponent who is not a player of the record")
    races = _check_sides(games, ratings)
    winner = _check_table(document, games, handles)
    return ArenaVerdict(arena, len(games), races, bool(_field(document, "final", bool, "the record")), winner)
