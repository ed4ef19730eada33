"""A refused move in words: every refusal the engine gives a card move has words naming the card (no raw code)."""

from __future__ import annotations

from client.race_session import refusal_text
from client.race_view import line_verdict_words
from client.refusals import refusal_words
from shared import BOUQUET, Board, card_label, make_card, move_label, notation_label, parse_card, rank_of, suit_of
from shared.moves import FOUNDATION, Move, Special, parse_move
from shared.protocol import Error, LineVerdict, PlayerAnalysis


def test_a_card_not_next_on_its_foundation_is_said_with_the_card_it_waits_for() -> None:
    board = Board.deal(15)  # nothing on the foundations yet: every available card but an ace is refused there
    card, source = next((card, source) for card, source in board.available() if rank_of(card) > 1)
    move = Move(card, source, FOUNDATION)
    refusal = board.check_move(move)
    assert refusal is not None and refusal.code.value == "not_next_on_foundation"
    below = card_label(make_card(rank_of(card) - 1, suit_of(card)))
    text = refusal_text(Error(id=1, code=refusal.code.value, message=refusal.message), move, board)
    assert text == f"Refused: {card_label(card)} can't go to its foundation: the {below} isn't there yet."


def test_every_refusal_of_a_card_move_on_a_deal_has_words_and_no_code() -> None:
    board = Board.deal(15)
    seen: set[str] = set()
    for card, source in board.available():
        for target in [*range(6), FOUNDATION]:
            refusal = board.check_move(Move(card, source, target))
            if refusal is None:
                continue
            words = refusal_words(refusal.code.value, Move(card, source, target), board)
            assert words is not None and "_" not in words and card_label(card) in words, (refusal.code, words)
            seen.add(refusal.code.value)
    assert {"not_next_on_foundation", "column_rank_mismatch", "same_place"} <= seen
    column_move = parse_move("KS 1>2")
    words = refusal_words("column_rank_mismatch", column_move, board)
    assert words is not None and words.startswith("K♠ can't go on column 2: it ends in ")


def test_a_ten_is_written_10_in_sentences_and_the_move_list_as_on_the_web_page() -> None:
    """The notation's one-letter T (TS) stays in the board's fixed-width cells; words for people say 10♠, as the page."""
    ten, jack = parse_card("TS"), parse_card("JS")
    assert card_label(ten) == "10♠" and card_label(jack) == "J♠" and move_label(Move(ten, BOUQUET, 2)) == "10♠ b→3"
    assert notation_label("TS b>3") == "10♠ b→3" and notation_label("undo") == "undo" and notation_label("?") == "?"
    refused = refusal_text(Error(id=1, code="not_next_on_foundation", message="JS b>f: ..."), Move(jack, BOUQUET, FOUNDATION))
    assert refused == "Refused: J♠ can't go to its foundation: the 10♠ isn't there yet."
    assert "T♠" not in (refusal_words("card_covered", Move(ten, 0, FOUNDATION)) or "T♠")


def test_the_analysis_and_a_played_move_say_the_move_as_the_web_page_writes_it() -> None:
    lost = PlayerAnalysis(slot=0, verdict=LineVerdict.LOST_AT, fatal_action=9, fatal_move="TD b>5")
    assert line_verdict_words(lost) == "lost the win at move 10: 10♦ b→5"  # the web's "7♦ b→5" form, not "TD b>5"


def test_a_code_without_words_keeps_the_servers_message_and_code() -> None:
    assert refusal_text(Error(id=1, code="bad_field", message="seq: out of range"), Special.UNDO) == "Refused: seq: out of range (bad_field)"
