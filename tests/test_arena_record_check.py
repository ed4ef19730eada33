"""The arena record's check (shared/arena_record.py), without a server: a record whose races, points and table hold
verifies; a forged standing, a race's points that the rules do not give, two sides that both claim the win, a
missing side or an opponent's rating changed are each refused, naming what gave it away."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from shared.arena import ArenaGame, game_points, standings
from shared.arena_record import ARENA_RECORD_FORMAT, ARENA_RECORD_VERSION, arena_record_digest, verify_arena_record
from shared.protocol import Outcome
from shared.race.record import NotARecord, RecordInvalid

RATINGS = {"p-ann": 1700.0, "p-bob": 1500.0, "p-cat": 1600.0}
HANDLES = {"p-ann": "Ann", "p-bob": "Bob", "p-cat": "Cat"}
RACES = [  # (race, winner or None for a draw, a, b, a berserk)
    ("r1", "p-ann", "p-ann", "p-bob", False),
    ("r2", "p-ann", "p-ann", "p-cat", False),
    ("r3", None, "p-bob", "p-cat", False),
    ("r4", "p-ann", "p-ann", "p-bob", True),  # on fire (doubled) and berserk (+1)
]


def record() -> dict[str, Any]:
    """The record of :data:`RACES` as the server writes it."""
    games: dict[str, list[ArenaGame]] = {player: [] for player in RATINGS}
    for race, winner, a, b, berserk in RACES:
        for me, other in ((a, b), (b, a)):
            outcome = Outcome.DRAW if winner is None else Outcome.WON if winner == me else Outcome.LOST
            games[me].append(ArenaGame(race, other, outcome, berserk and me == a, 9, RATINGS[other]))
    players = [
        {"player": player, "handle": HANDLES[player], "rating": RATINGS[player], "games": [
            {"race": game.race, "opponent": game.opponent, "outcome": game.outcome.value, "berserk": game.berserk, "moves": game.moves,
             "opponent_rating": game.opponent_rating, "points": game_points(played[:index], game)}
            for index, game in enumerate(played)
        ]}
        for player, played in games.items()
    ]  # fmt: skip
    table = [
        {"rank": line.rank, "handle": HANDLES[line.player], "score": line.score, "performance": round(line.performance), "fire": line.fire, "games": line.games}
        for line in standings(dict(games))
    ]  # fmt: skip
    arena = {"arena": "Ar3na", "name": "evening", "start_at": 0, "end_at": 600_000, "time_limit": 120}
    return {"format": ARENA_RECORD_FORMAT, "version": ARENA_RECORD_VERSION, "arena": arena, "final": True, "players": players, "standings": table}


def test_a_true_record_verifies_with_its_streak_and_berserk_points() -> None:
    document = record()
    verdict = verify_arena_record(document)
    assert (verdict.arena, verdict.players, verdict.races, verdict.final, verdict.winner) == ("Ar3na", 3, 4, True, "Ann")
    ann = next(player for player in document["players"] if player["handle"] == "Ann")
    assert [game["points"] for game in ann["games"]] == [2, 2, 5]  # the third win doubled, berserk +1
    assert document["standings"][0]["score"] == 9


def first_line(document: dict[str, Any]) -> dict[str, Any]:
    line: dict[str, Any] = document["standings"][0]
    return line


def game(document: dict[str, Any], handle: str, race: str) -> dict[str, Any]:
    player = next(player for player in document["players"] if player["handle"] == handle)
    found: dict[str, Any] = next(line for line in player["games"] if line["race"] == race)
    return found


def more_points(document: dict[str, Any]) -> None:
    first_line(document)["score"] += 1


def swapped_ranks(document: dict[str, Any]) -> None:
    table = document["standings"]
    table[0]["handle"], table[1]["handle"] = table[1]["handle"], table[0]["handle"]


def hidden_fire(document: dict[str, Any]) -> None:
    first_line(document)["fire"] = not first_line(document)["fire"]


def inflated_points(document: dict[str, Any]) -> None:
    game(document, "Bob", "r3")["points"] = 2


def both_win(document: dict[str, Any]) -> None:
    line = game(document, "Bob", "r1")
    line["outcome"], line["points"] = "won", 2


def one_side(document: dict[str, Any]) -> None:
    player = next(player for player in document["players"] if player["handle"] == "Cat")
    player["games"] = [line for line in player["games"] if line["race"] != "r3"]


def richer_opponent(document: dict[str, Any]) -> None:
    game(document, "Ann", "r1")["opponent_rating"] = 2400.0


@pytest.mark.parametrize(
    ("forge", "named"),
    [
        (more_points, "standing 1"),
        (swapped_ranks, "standing 1"),
        (hidden_fire, "standing 1"),
        (inflated_points, "the rules give 1"),
        (both_win, "both sides claim"),
        (one_side, r"1 side\(s\)"),
        (richer_opponent, "rating"),
    ],
)
def test_a_forged_record_is_refused_naming_what_gave_it_away(forge: Callable[[dict[str, Any]], None], named: str) -> None:
    document = record()
    forge(document)
    with pytest.raises(RecordInvalid, match=named):
        verify_arena_record(document)


def test_another_document_is_no_arena_record_and_the_digest_covers_the_table() -> None:
    with pytest.raises(NotARecord):
        verify_arena_record({"format": "flowergarden-race-record", "version": 1})
    document = record()
    signed = arena_record_digest(document)
    assert arena_record_digest(json.loads(json.dumps(document)) | {"signature": "ab"}) == signed  # a round trip, the signature aside
    browser_text = json.dumps(document).replace("1500.0", "1500")  # JSON.stringify writes whole numbers so
    assert browser_text != json.dumps(document) and arena_record_digest(json.loads(browser_text)) == signed
    more_points(document)
    assert arena_record_digest(document) != signed
