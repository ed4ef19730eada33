"""The cards' colours as the race screen draws them, read from the rendered cells in every theme the app offers."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.segment import Segment
from textual.color import Color
from textual.geometry import Region
from textual.widget import Widget
from tui_helpers import SIZES, ann_in_the_app, send_keys, type_move, until

from cli.tui.board import BLACK_SUIT, LIT, RED_SUIT, BoardWidget, BouquetWidget
from server.app import RaceServer
from shared import Board, Card, card_text, suit_of
from shared.assist import playable_cards
from shared.cards import Suit
from shared.protocol import RaceSettings


def drawn_segments(*widgets: Widget) -> list[Segment]:
    """Every segment of the widgets' rendered lines (the cells as the terminal gets them)."""
    return [
        segment for widget in widgets for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height)) for segment in strip
    ]


def luminance(colour: Color) -> float:
    """WCAG relative luminance."""

    def channel(value: int) -> float:
        share = value / 255
        return share / 12.92 if share <= 0.03928 else float(((share + 0.055) / 1.055) ** 2.4)

    return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)


def contrast(segment: Segment, background: Color) -> float:
    """The WCAG contrast ratio of a drawn segment's text against its background (3 is the floor for large text)."""
    assert segment.style is not None and segment.style.color is not None and not segment.style.dim
    back = Color.from_rich_color(segment.style.bgcolor) if segment.style.bgcolor is not None else background
    lighter, darker = sorted((luminance(Color.from_rich_color(segment.style.color)), luminance(back)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def card_segments(segments: list[Segment], board: Board) -> dict[Card, Segment]:
    """The segment drawing each card of ``board`` on the table (a card is drawn once: its text, ``5♦``)."""
    texts = {card_text(Card(card), unicode=True): Card(card) for card in range(52)}
    return {texts[segment.text]: segment for segment in segments if segment.text in texts and texts[segment.text] not in _on_foundations(board)}


def _on_foundations(board: Board) -> set[Card]:
    return {Card(card) for card in range(52) if not any(Card(card) in column for column in board.columns) and Card(card) not in board.bouquet}


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x45"])
async def test_playable_cards_keep_their_suit_colour_and_every_card_reads_in_every_offered_theme(
    race_server: RaceServer, tmp_path: Path, size: tuple[int, int]
) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=size) as race:
        app, pilot, screen = race.app, race.pilot, race.screen
        await race.start()
        widget = screen.query_one("#board", BoardWidget)
        bouquet = screen.query_one("#bouquet", BouquetWidget)  # the bouquet has a widget of its own beside the columns
        assert set(app.available_themes) and all(theme.dark for theme in app.available_themes.values())
        for name in app.available_themes:
            app.theme = name
            await pilot.pause()
            board = screen.view.board
            assert board is not None
            drawn = card_segments(drawn_segments(widget, bouquet), board)
            playable = playable_cards(board)
            assert playable and playable <= set(drawn), name
            for card, segment in drawn.items():
                assert segment.style is not None and segment.style.color is not None
                colour = Color.from_rich_color(segment.style.color)
                expected = RED_SUIT if suit_of(card) in (Suit.DIAMONDS, Suit.HEARTS) else BLACK_SUIT
                if card in playable:
                    assert colour == Color.parse(expected), f"{card_text(card)} drawn {colour.hex} in theme {name}"
                    assert segment.style.bold and segment.style.underline
                assert contrast(segment, Color.parse(app.current_theme.background or "#000000")) >= 3, (
                    f"{card_text(card)} unreadable in theme {name}"
                )

        for move in ("AS b>f", "2S b>f"):
            await type_move(pilot, move)
        send_keys(app, "3", "s")  # 3♠ now goes to its foundation or onto 4♠ (column 5): both light up
        await until(pilot, lambda: len(screen.choices) == 2, what="the destinations of 3S lit")
        await pilot.pause()
        lit = [segment for segment in drawn_segments(widget) if segment.style is not None and segment.style.bgcolor is not None
               and Color.from_rich_color(segment.style.bgcolor) == Color.parse(LIT)]  # fmt: skip
        assert "".join(segment.text for segment in lit).split() == ["Foundations", "5"]
        for segment in lit:
            assert segment.style is not None and segment.style.color is not None
            assert Color.from_rich_color(segment.style.color) == Color.parse("black"), "a lit number is black on yellow"
