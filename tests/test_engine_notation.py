"""Card and move notation, the player actions and the two-byte wire encoding (docs/NOTATION.md)."""

from __future__ import annotations

import itertools

import pytest
from engine_positions import EVERY_MOVE

from shared import (
    BOUQUET,
    FOUNDATION,
    Action,
    Move,
    NotationError,
    NotationErrorCode,
    Special,
    Suit,
    action_text,
    card_text,
    decode_action,
    encode_action,
    make_card,
    move_text,
    parse_action,
    parse_card,
    parse_move,
)
from shared.cards import FULL_DECK


def notation_code(read: object, text: object) -> NotationErrorCode:
    """The code of the NotationError that ``read(text)`` raises."""
    with pytest.raises(NotationError) as raised:
        read(text)  # type: ignore[operator]
    return raised.value.code


# --- cards --------------------------------------------------------------------------------------------------


def test_cards_are_numbered_suit_times_13_plus_rank_minus_1_in_clubs_diamonds_hearts_spades_order() -> None:
    assert [card_text(card) for card in FULL_DECK[:14]] == ["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AD"]
    assert parse_card("5D") == make_card(5, Suit.DIAMONDS) == 17
    assert parse_card("KS") == 51
    assert [suit.letter for suit in Suit] == ["C", "D", "H", "S"]


@pytest.mark.parametrize("text", ["TH", "10H", "th", "10h", "tH", "T♥", "10♥", "t♥", "T♥\ufe0f", "10♡", " TH "])
def test_card_input_accepts_ten_lower_case_and_suit_symbols(text: str) -> None:
    assert parse_card(text) == make_card(10, Suit.HEARTS)


@pytest.mark.parametrize("symbols", ["♣♦♥♠", "♧♢♡♤"])
def test_each_suit_symbol_reads_as_its_suit(symbols: str) -> None:
    assert [parse_card("A" + symbol) for symbol in symbols] == [make_card(1, suit) for suit in Suit]


@pytest.mark.parametrize("text", ["", " ", "H", "5", "1H", "11H", "0S", "TX", "5DD", "D5", "♥T", "10", "1O♥", "x" * 1000])
def test_card_input_refuses_anything_else_with_bad_card(text: str) -> None:
    assert notation_code(parse_card, text) is NotationErrorCode.BAD_CARD


def test_card_output_is_ascii_by_default_and_uses_suit_symbols_for_people() -> None:
    ten_of_hearts = make_card(10, Suit.HEARTS)
    assert card_text(ten_of_hearts) == "TH"
    assert card_text(ten_of_hearts, unicode=True) == "T♥"
    assert all(parse_card(card_text(card, unicode=True)) == card for card in FULL_DECK)


# --- moves and actions --------------------------------------------------------------------------------------


def test_move_text_names_card_source_and_destination() -> None:
    assert move_text(Move(parse_card("5D"), BOUQUET, 2)) == "5D b>3"
    assert move_text(Move(parse_card("KS"), 1, FOUNDATION)) == "KS 2>f"
    assert str(Move(parse_card("9H"), 3, 0)) == "9H 4>1"
    assert move_text(Move(parse_card("9H"), 3, 0), unicode=True) == "9♥ 4>1"


def test_every_move_round_trips_through_its_text_in_ascii_unicode_and_lower_case() -> None:
    for move in EVERY_MOVE:
        assert parse_move(move_text(move)) == move
        assert parse_move(move_text(move, unicode=True)) == move
        assert parse_move(move_text(move).lower()) == move


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5d B>3", "5D b>3"), ("  KS   2>F ", "KS 2>f"), ("10h 4>1", "TH 4>1"), ("5♦ b>3", "5D b>3"), ("q♠ 6>f", "QS 6>f")],
)
def test_move_input_is_lenient_about_case_spacing_and_card_forms(text: str, expected: str) -> None:
    assert move_text(parse_move(text)) == expected


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", NotationErrorCode.BAD_MOVE),
        ("5D", NotationErrorCode.BAD_MOVE),
        ("5D b3", NotationErrorCode.BAD_MOVE),
        ("5D b>>3", NotationErrorCode.BAD_MOVE),
        ("5D b>3 f", NotationErrorCode.BAD_MOVE),
        ("5D b > 3", NotationErrorCode.BAD_MOVE),
        ("5X b>3", NotationErrorCode.BAD_CARD),
        ("5D 7>3", NotationErrorCode.BAD_PLACE),
        ("5D 0>f", NotationErrorCode.BAD_PLACE),
        ("5D b>b", NotationErrorCode.BAD_PLACE),
        ("5D f>1", NotationErrorCode.BAD_PLACE),
        ("5D b>", NotationErrorCode.BAD_PLACE),
        ("5D >f", NotationErrorCode.BAD_PLACE),
        ("5D b>12", NotationErrorCode.BAD_PLACE),
        ("5D b>٣", NotationErrorCode.BAD_PLACE),
    ],
)
def test_move_input_refuses_malformed_text_with_a_specific_code(text: str, code: NotationErrorCode) -> None:
    assert notation_code(parse_move, text) is code


def test_actions_are_moves_or_the_words_undo_and_redeal() -> None:
    assert parse_action(" Undo ") is Special.UNDO
    assert parse_action("REDEAL") is Special.REDEAL
    assert parse_action("5D b>3") == parse_move("5D b>3")
    assert [action_text(Special.UNDO), action_text(Special.REDEAL), action_text(parse_move("5d b>3"))] == ["undo", "redeal", "5D b>3"]
    assert notation_code(parse_action, "redo") is NotationErrorCode.BAD_MOVE


def test_a_move_object_refuses_cards_and_places_outside_the_game() -> None:
    assert notation_code(lambda _: Move(parse_card("5D"), 7, 0), None) is NotationErrorCode.BAD_PLACE
    assert notation_code(lambda _: Move(parse_card("5D"), 0, 6), None) is NotationErrorCode.BAD_PLACE
    assert notation_code(lambda _: Move(make_card(1, Suit.CLUBS) + 52, 0, 1), None) is NotationErrorCode.BAD_CARD  # type: ignore[arg-type]


# --- the two-byte encoding ----------------------------------------------------------------------------------


def test_the_encoding_is_card_then_source_times_16_plus_target() -> None:
    assert encode_action(parse_move("5D b>3")) == bytes([17, 0x62])
    assert encode_action(parse_move("KS 2>f")) == bytes([51, 0x17])
    assert encode_action(parse_move("AC 1>6")) == bytes([0, 0x05])
    assert encode_action(Special.UNDO) == bytes([52, 0])
    assert encode_action(Special.REDEAL) == bytes([53, 0])


def test_every_action_round_trips_through_its_two_bytes() -> None:
    actions: list[Action] = [*EVERY_MOVE, Special.UNDO, Special.REDEAL]
    for action in actions:
        data = encode_action(action)
        assert len(data) == 2
        assert decode_action(data) == action


def test_every_other_pair_of_bytes_is_refused_with_bad_encoding() -> None:
    accepted = 0
    for first, second in itertools.product(range(256), repeat=2):
        data = bytes([first, second])
        try:
            action = decode_action(data)
        except NotationError as error:
            assert error.code is NotationErrorCode.BAD_ENCODING
        else:
            assert encode_action(action) == data
            accepted += 1
    assert accepted == len(EVERY_MOVE) + 2


@pytest.mark.parametrize("data", [b"", b"\x11", b"\x11\x62\x00", "ab", [17, 0x62], None])
def test_decoding_refuses_anything_but_two_bytes(data: object) -> None:
    assert notation_code(decode_action, data) is NotationErrorCode.BAD_ENCODING


def test_decoding_accepts_bytearray_and_memoryview() -> None:
    assert decode_action(bytearray([17, 0x62])) == decode_action(memoryview(bytes([17, 0x62]))) == parse_move("5D b>3")
