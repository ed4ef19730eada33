"""The position JSON format: what Board.to_json (and ``flowergarden play --json``) writes, and Board.from_json reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_positions import POSITION_FIELDS, move, position

from shared import Board, IllegalMoveCode, NotationError, NotationErrorCode, Profile, Rules, Special


def played(seed: int = 42, rules: Rules | None = None, moves: int = 3) -> Board:
    """A deal of ``seed`` after its first legal move, ``moves`` times."""
    board = Board.deal(seed, rules or Rules())
    for _ in range(moves):
        board.push(board.legal_moves()[0])
    return board


def test_a_fresh_deal_writes_every_documented_field() -> None:
    document = Board.deal(42, Rules(redeal_once=True)).to_json()
    assert set(document) == POSITION_FIELDS
    assert document["seed"] == 42
    assert document["profile"] == "classic"
    assert document["options"] == {"undo": False, "redeal_once": True}
    assert document["columns"][0] == ["7C", "3H", "KC", "AS", "2S", "AC"]
    assert len(document["bouquet"]) == 16
    assert document["foundations"] == {"C": None, "D": None, "H": None, "S": None}
    assert (document["foundation_count"], document["status"], document["undos"]) == (0, "playing", 0)
    assert (document["redeal_used"], document["can_undo"], document["can_redeal"]) == (False, False, True)
    assert document["legal"] == ["TC b>2", "AC 1>f"]
    assert json.loads(json.dumps(document)) == document


def test_foundations_are_named_by_suit_letter_with_their_top_card() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"], foundations="5C AS")
    assert board.to_json()["foundations"] == {"C": "5C", "D": None, "H": None, "S": "AS"}
    assert board.to_json()["foundation_count"] == 6


@pytest.mark.parametrize("rules", [Rules(), Rules(Profile.FOUNDATION_ONLY), Rules(undo=True, redeal_once=True)])
def test_from_json_reads_back_what_to_json_wrote(rules: Rules) -> None:
    board = played(7, rules, moves=1 if rules.profile is Profile.FOUNDATION_ONLY else 4)
    if rules.undo:
        board.undo()
        board.redeal()
    document = json.loads(json.dumps(board.to_json()))
    twin = Board.from_json(document)
    assert (twin.columns, twin.bouquet, twin.foundations) == (board.columns, board.bouquet, board.foundations)
    assert (twin.rules, twin.seed, twin.undos, twin.redeal_used) == (board.rules, board.seed, board.undos, board.redeal_used)
    assert twin.to_json() == document


def test_a_board_read_from_json_has_no_history_to_undo() -> None:
    board = played(rules=Rules(undo=True))
    assert board.to_json()["can_undo"]
    twin = Board.from_json(board.to_json())
    assert not twin.to_json()["can_undo"]
    assert twin.check_action(Special.UNDO).code is IllegalMoveCode.NOTHING_TO_UNDO  # type: ignore[union-attr]


def test_from_json_needs_only_columns_and_bouquet() -> None:
    document = Board.deal(3).to_json()
    board = Board.from_json({"columns": document["columns"], "bouquet": document["bouquet"]})
    assert (board.seed, board.rules, board.foundations, board.undos) == (None, Rules(), (0, 0, 0, 0), 0)
    assert board.columns == Board.deal(3).columns


def test_from_json_accepts_a_seed_written_as_text_and_lenient_card_forms() -> None:
    document = Board.deal(2**64 - 1).to_json()
    document["seed"] = str(2**64 - 1)
    document["bouquet"] = [card.lower().replace("T", "10") for card in document["bouquet"]]
    board = Board.from_json(document)
    assert board.seed == 2**64 - 1
    assert board.bouquet == Board.deal(2**64 - 1).bouquet


def valid() -> dict[str, Any]:
    """A valid document to spoil."""
    return played(rules=Rules(undo=True)).to_json()


def spoiled(**fields: Any) -> dict[str, Any]:
    return {**valid(), **fields}


@pytest.mark.parametrize(
    ("document", "code"),
    [
        pytest.param([], NotationErrorCode.BAD_POSITION, id="not-an-object"),
        pytest.param("{}", NotationErrorCode.BAD_POSITION, id="a-string"),
        pytest.param(spoiled(columns=None), NotationErrorCode.BAD_POSITION, id="columns-missing"),
        pytest.param(spoiled(columns=[[]] * 5), NotationErrorCode.BAD_POSITION, id="five-columns"),
        pytest.param(spoiled(columns="KS"), NotationErrorCode.BAD_POSITION, id="columns-a-string"),
        pytest.param(spoiled(columns=[[1]] * 6), NotationErrorCode.BAD_POSITION, id="cards-as-numbers"),
        pytest.param(spoiled(bouquet={"0": "5D"}), NotationErrorCode.BAD_POSITION, id="bouquet-an-object"),
        pytest.param(spoiled(bouquet=["5X"]), NotationErrorCode.BAD_CARD, id="bad-card"),
        pytest.param(spoiled(bouquet=[]), NotationErrorCode.BAD_POSITION, id="cards-missing"),
        pytest.param(spoiled(bouquet=[*valid()["bouquet"], valid()["bouquet"][0]]), NotationErrorCode.BAD_POSITION, id="card-twice"),
        pytest.param(spoiled(foundations={"C": "5D"}), NotationErrorCode.BAD_POSITION, id="foundation-wrong-suit"),
        pytest.param(spoiled(foundations={"X": None}), NotationErrorCode.BAD_POSITION, id="foundation-unknown-suit"),
        pytest.param(spoiled(foundations={"C": 5}), NotationErrorCode.BAD_POSITION, id="foundation-a-number"),
        pytest.param(spoiled(foundations=["AC"]), NotationErrorCode.BAD_POSITION, id="foundations-a-list"),
        pytest.param(spoiled(seed=-1), NotationErrorCode.BAD_POSITION, id="negative-seed"),
        pytest.param(spoiled(seed=2**64), NotationErrorCode.BAD_POSITION, id="seed-too-big"),
        pytest.param(spoiled(seed=1.5), NotationErrorCode.BAD_POSITION, id="seed-a-float"),
        pytest.param(spoiled(seed=True), NotationErrorCode.BAD_POSITION, id="seed-a-bool"),
        pytest.param(spoiled(undos=-1), NotationErrorCode.BAD_POSITION, id="negative-undos"),
        pytest.param(spoiled(undos="2"), NotationErrorCode.BAD_POSITION, id="undos-a-string"),
        pytest.param(spoiled(undos=False), NotationErrorCode.BAD_POSITION, id="undos-a-bool"),
        pytest.param(spoiled(redeal_used="false"), NotationErrorCode.BAD_POSITION, id="redeal-used-a-string"),
        pytest.param(spoiled(profile="klondike"), NotationErrorCode.BAD_RULES, id="unknown-profile"),
        pytest.param(spoiled(options={"undo": "false"}), NotationErrorCode.BAD_RULES, id="option-a-string"),
        pytest.param(spoiled(options={"redo": True}), NotationErrorCode.BAD_RULES, id="unknown-option"),
        pytest.param(spoiled(options=[]), NotationErrorCode.BAD_RULES, id="options-a-list"),
    ],
)
def test_from_json_refuses_a_malformed_document_with_a_code(document: object, code: NotationErrorCode) -> None:
    with pytest.raises(NotationError) as raised:
        Board.from_json(document)
    assert raised.value.code is code


@pytest.mark.parametrize(
    ("columns", "bouquet", "foundations"),
    [
        pytest.param([[0]] * 6, [], (0, 0, 0, 0), id="a-card-six-times"),
        pytest.param([[]] * 5, list(range(52)), (0, 0, 0, 0), id="five-columns"),
        pytest.param([[]] * 6, list(range(52)), (0, 0, 0), id="three-foundations"),
        pytest.param([[]] * 6, [], (13, 13, 13, 14), id="a-foundation-of-14"),
        pytest.param([[]] * 6, [], (13, 13, 13, True), id="a-foundation-of-true"),
        pytest.param([[52]] * 6, list(range(52)), (0, 0, 0, 0), id="card-52"),
        pytest.param([[]] * 6, [*range(51), "51"], (0, 0, 0, 0), id="card-as-text"),
    ],
)
def test_the_board_refuses_parts_that_do_not_hold_each_card_once(columns: Any, bouquet: Any, foundations: Any) -> None:
    with pytest.raises(NotationError) as raised:
        Board(columns, bouquet, foundations)
    assert raised.value.code is NotationErrorCode.BAD_POSITION


def test_the_legal_field_lists_moves_in_the_documented_order() -> None:
    board = position(["6C", "", "JS", "JC", "JD", "KS"], bouquet="AD 5H")
    assert board.to_json()["legal"] == [
        "AD b>f", "AD b>2", "5H b>1", "5H b>2", "6C 1>2", "JS 3>2", "JC 4>2", "JD 5>2", "KS 6>2",
    ]  # fmt: skip
    board.push(move("AD b>f"))
    assert board.to_json()["foundations"]["D"] == "AD"
