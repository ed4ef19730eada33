"""The race screen: the own board as a fixed table, the opponent's progress, the clocks, and fast move entry.

Typing a card (``5d``, ``ts``, ``10h``) moves it when it has one legal destination;
with several the destinations light up and ``f`` or ``1``-``6`` picks one. Clicks on
a card and a destination do the same; ``m`` opens the numbered list of legal moves.
With auto-move on (``o``) safe cards go to the foundations by themselves
(:func:`shared.assist.safe_moves`). Every refusal appears with its reason in the message
log beside the table, which keeps everything said. The screen only draws and asks: the
seat, the events and the moves are the :class:`~client.race_session.RaceSession`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Footer, OptionList, RichLog, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from cli.tui.board import LIT, BoardWidget, BouquetWidget
from cli.tui.dialogs import Confirm, ResultScreen
from cli.tui.keys import speak_bindings
from client import ConnectionLost, Resumed, ServerError
from client.race_client import Incoming
from client.race_session import RaceSession, refusal_text
from client.race_view import Connection, RaceView, attempt_ending_words, clock_text, player_label, race_status_words
from client.refusals import no_move_words, refusal_words
from client.words import count_words, words
from shared import (
    FOUNDATION,
    Card,
    EngineError,
    Move,
    Profile,
    Special,
    card_label,
    card_text,
    move_label,
    move_text,
    notation_label,
)
from shared.assist import read_typed_move, safe_moves, target_key
from shared.protocol import LIVE_STATUSES, OPEN_STATUSES, RaceResult, RaceStatus
from shared.solver import Budget, Verdict, hint

if TYPE_CHECKING:
    from cli.tui.app import FlowerGardenApp

RANK_KEYS = "a23456789tjqk"
SUIT_KEYS = "cdhs"
TARGET_KEYS = "f123456"
BAR_WIDTH = 26
HINT_BUDGET = Budget(seconds=3.0, nodes=400_000)
"""What one hint may spend: a few seconds of the player's own computer, at most."""


def progress_bar(count: int, width: int = BAR_WIDTH) -> str:
    """``█████░░░░`` for count out of 52."""
    filled = round(width * count / 52)
    return "█" * filled + "░" * (width - filled)


def connection_words(connection: Connection, grace_until: int | None, now: int) -> str:
    """``connected``, ``away (abandoned in 25 s)`` or ``reconnecting ...``, coloured."""
    if connection is Connection.CONNECTED:
        return f"[green]{escape(words('term.connection.connected'))}[/]"
    if connection is Connection.RECONNECTING:
        return f"[yellow]{escape(words('term.connection.reconnecting'))}[/]"
    away = f"[yellow]{escape(words('term.connection.away'))}[/]"
    if grace_until is None:
        return away
    return f"{away} {escape(words('term.connection.seat_lost_in', seconds=max(0, grace_until - now) // 1000))}"


HIDDEN_KEYS = {"u": "undo", "e": "redeal", "x": "stuck", "g": "resign", "m": "moves", "h": "hint"}
"""Keys of actions the footer may hide: pressed then, they say why (``u`` where the race has no undo)."""
STATE_ACTIONS = frozenset({"undo", "redeal", "stuck", "resign", "moves", "auto", "hint"})
"""The race screen's keys that act on a running attempt: in the footer only while they can."""


def own_actions(view: RaceView) -> int:
    """How many actions the player has on its board (a hint computed before a change is stale after it)."""
    return len(view.actions.get(view.slot or 0, []))


class RaceScreen(Screen[None]):
    """One player's race; see the module docstring."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "undo", "term.race.undo"),
        Binding("e", "redeal", "term.race.redeal"),
        Binding("x", "stuck", "term.race.stuck"),
        Binding("g", "resign", "term.race.resign"),
        Binding("m", "moves", "term.race.moves"),
        Binding("h", "hint", "term.race.hint"),
        Binding("o", "auto", "term.race.auto"),
        Binding("escape", "clear", "term.race.clear", show=False),
        Binding("question_mark", "help", "term.key.help"),
    ]
    DEFAULT_CSS = """
    #race-status { height: auto; background: $boost; padding: 0 1; }
    #race-main { height: 1fr; }
    #board-pane { width: 40; scrollbar-size-vertical: 1; }
    #board { padding: 0 0 0 1; }
    #side { width: 1fr; padding: 0 1; }
    #opponent { height: auto; border: round $primary; padding: 0 1; }
    #bouquet { margin: 0 0 1 0; }
    #moves { height: 1fr; display: none; }
    #moves.shown { display: block; }
    #messages { height: 1fr; color: $warning; scrollbar-size-vertical: 1; }
    #entry { height: auto; padding: 0 1; }
    """
    """Laid out for 80x24 and up: the table scrolls on its own (a long column never pushes anything off), the bouquet,
    the opponent and the messages stand beside it."""

    def __init__(self, session: RaceSession, *, auto: bool = False) -> None:
        super().__init__()
        speak_bindings(self)
        self.session = session
        self.auto = auto
        self.typed = ""
        """Keys of a card being typed (``5``, ``1`` for a ten on its way)."""
        self.selected: Card | None = None
        self.choices: list[Move] = []
        self._moving = asyncio.Lock()
        self._result_shown = False
        self._auto_worker: Worker[None] | None = None
        self.messages: list[str] = []
        """Everything said on the message log, in order."""
        self.auto_paused = False
        self.hint_budget = HINT_BUDGET
        """What one hint may search (a test gives a node budget alone, for the same answer on any machine)."""
        """Auto-move holds off after an undo until the player's next move (else it replays the card taken back)."""

    @property
    def fg_app(self) -> FlowerGardenApp:
        from cli.tui.app import FlowerGardenApp

        assert isinstance(self.app, FlowerGardenApp)
        return self.app

    @property
    def view(self) -> RaceView:
        assert self.session.view is not None
        return self.session.view

    def compose(self) -> ComposeResult:
        yield Static("", id="race-status")
        with Horizontal(id="race-main"):
            with VerticalScroll(id="board-pane"):
                yield BoardWidget(interactive=True, with_bouquet=False, id="board")
            with Vertical(id="side"):
                yield Static("", id="opponent")
                yield BouquetWidget(id="bouquet")
                yield OptionList(id="moves")
                yield RichLog(id="messages", wrap=True, markup=False, highlight=False, auto_scroll=True, min_width=20)
        yield Static("", id="entry")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()
        self.set_interval(0.5, self.draw_status)

    # --- drawing --------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """Add ``text`` to the message log (refusals, events, the result): it scrolls, nothing said is lost."""
        if not text:
            return
        self.messages.append(text)
        self.query_one("#messages", RichLog).write(text)

    def redraw(self) -> None:
        """Everything again from the view."""
        view = self.view
        me = view.me
        title = player_label(view.me.name, view.me.account, view.me.bot, you=True) if view.me is not None and view.me.name else words("term.race.you_title")
        if me is not None and not me.playing:
            title += f" - {attempt_ending_words(me.state)}"
        lit = {move.target for move in self.choices}
        self.query_one("#board", BoardWidget).show(view.board, title=title, selected=self.selected, lit=lit)
        self.query_one("#bouquet", BouquetWidget).show(view.board, selected=self.selected)
        self.draw_status()
        self.draw_opponent()
        self.draw_entry()
        moves = self.query_one("#moves", OptionList)
        if moves.has_class("shown"):
            self._fill_moves(moves)
        self.refresh_bindings()  # the footer follows the state (check_action)

    def draw_status(self) -> None:
        """The status lines and the opponent panel (also every half second, for the clocks)."""
        if not self.is_mounted:  # a tick after the screen was closed
            return
        view, now = self.view, self.session.now()
        clock = view.clock_ms(now)
        parts = [words("term.race.title", race=f"[b]{view.race_id}[/]"), escape(race_status_words(view.status))]
        if view.invite:
            parts.append(words("term.race.invite", code=f"[b]{view.invite}[/]"))
        if clock is not None and view.status in LIVE_STATUSES:
            parts.append(words("term.race.clock", clock=clock_text(clock)))
        left = view.time_left_ms(now)
        if left is not None and view.status in LIVE_STATUSES:
            parts.append(words("term.race.time_left", clock=f"[b]{clock_text(left)}[/]"))
        parts.append(escape(count_words("term.race.watching", view.watchers)))
        me = view.me
        connection = connection_words(me.connection, None, now) if me is not None else ""
        rules = [words("setting.foundation_only" if view.rules.profile is Profile.FOUNDATION_ONLY else "setting.classic")]
        rules += [words(key) for key, on in (("setting.undo", view.rules.undo), ("setting.redeal", view.rules.redeal_once), ("setting.hints", view.hints)) if on]
        if view.rated:
            rules.insert(0, f"[b]{escape(words('setting.rated'))}[/]")
        auto = words("term.race.auto_on" if self.auto else "term.race.auto_off")
        self.query_one("#race-status", Static).update(
            "  ·  ".join(parts) + "\n" + words("term.race.you", connection=connection) + f"  ·  {', '.join(rules)}  ·  {escape(auto)}"
        )
        self.draw_opponent()

    def draw_opponent(self) -> None:
        view = self.view
        opponent = view.opponent
        if opponent is None:
            return
        now = self.session.now()
        if not opponent.label:
            text = f"[dim]{escape(words('race.waiting'))}[/]"
        else:
            state = words("term.race.playing") if opponent.playing else attempt_ending_words(opponent.state)
            text = (
                f"[b]{escape(opponent.label)}[/]  {connection_words(opponent.connection, opponent.grace_until, now)}\n"
                f"{progress_bar(opponent.count)} {opponent.count}/52\n{state}"
            )
        self.query_one("#opponent", Static).update(text)

    def draw_entry(self) -> None:
        if self.selected is not None and self.choices:
            keys = "  ".join(f"[black on {LIT}] {target_key(move.target)} [/] {move_label(move)}" for move in self.choices)
            text = words("term.race.destinations", card=card_label(self.selected), keys=keys)
        elif self.typed:
            text = escape(words("term.race.typing", typed=self.typed.upper()))
        elif self.view.can_move():
            text = f"[dim]{escape(words('term.race.type_a_card'))}[/]"
        elif self.view.status is RaceStatus.WAITING and self.session.join_command:
            text = f"{escape(words('race.opponent_joins'))} [b]{escape(self.session.join_command)}[/]"
        else:
            text = ""
        self.query_one("#entry", Static).update(text)

    def _fill_moves(self, moves: OptionList) -> None:
        board = self.view.board
        legal = board.legal_moves() if board is not None else []
        moves.clear_options()
        moves.add_options([Option(f"{n:>2}) {move_label(move)}", id=move_text(move)) for n, move in enumerate(legal, 1)])
        if legal:
            moves.highlighted = 0  # the first Enter plays the first move (with none highlighted it did nothing)

    # --- events ----------------------------------------------------------------------------

    async def incoming(self, item: Incoming | Resumed) -> None:
        """One item from the connection: apply it, say it, draw again; the result opens the result screen."""
        before = self.view.race_id
        line = await self.session.handle(item)
        if line:
            self.say(line)
        if self.session.view is not None and self.view.race_id != before:
            self.new_race(line or words("term.race.rematch", race=self.view.race_id))
            return
        self.redraw()
        if isinstance(item, RaceResult) and item.race == self.view.race_id:
            self.show_result()
        elif self.auto and self.view.can_move():
            self.start_auto_move()
        if self._result_shown and self.view.rematch_offers:
            self._note_rematch()

    def _note_rematch(self) -> None:
        top = self.app.screen
        if isinstance(top, ResultScreen):
            offers = [slot for slot in self.view.rematch_offers if slot != self.view.slot]
            if offers:
                top.note(words("term.race.rematch_offered", name=self.view.name(offers[0])))

    def show_result(self) -> None:
        if self._result_shown:
            return
        self._result_shown = True

        def chosen(choice: str | None) -> None:
            self.fg_app.after_result(self.view.race_id, choice or "quit")

        self.app.push_screen(ResultScreen(self.view), chosen)

    def new_race(self, message: str) -> None:
        """A rematch (or a rated quick match's pairing) seated us in a new race: close the result screen, start over."""
        if self._result_shown and isinstance(self.app.screen, ResultScreen):
            self.app.pop_screen()
        self._result_shown = False
        self.typed, self.selected, self.choices = "", None, []
        self.say(message)
        self.redraw()

    async def offer_rematch(self) -> str:
        """The result screen's ``r``: offer or accept the rematch."""
        try:
            before = self.view.race_id
            text = await self.session.rematch()
            if self.view.race_id != before:
                self.new_race(text)
            return text
        except ServerError as error:
            return refusal_text(error)

    # --- typing and clicking -------------------------------------------------------------------

    async def on_key(self, event: events.Key) -> None:
        key = (event.character or "").lower()
        if not key or not key.isprintable() or len(key) != 1:
            return
        if key in HIDDEN_KEYS and not self.typed and not self.check_action(HIDDEN_KEYS[key], ()):
            event.stop()  # the footer does not offer it now: say why rather than nothing
            self.say(self._why_not(HIDDEN_KEYS[key]))
        elif self.choices and key in TARGET_KEYS:
            event.stop()
            await self.pick_destination(FOUNDATION if key == "f" else int(key) - 1)
        elif self.typed or key in RANK_KEYS or key == "1":
            event.stop()
            await self._card_key(key)

    async def _card_key(self, key: str) -> None:
        """A key of a card being typed: the 10's second digit, the suit that completes the card, a new rank, or a
        key that is no suit (the card is typed again)."""
        if self.typed == "1" and key == "0":
            self.typed = "10"
            self.draw_entry()
        elif self.typed and key in SUIT_KEYS:
            text, self.typed = self.typed + key, ""
            await self.typed_card(text)
        elif key in RANK_KEYS or key == "1":
            self.typed, self.selected, self.choices = key, None, []
            self.redraw()
        else:
            self.typed = ""
            self.say(words("term.race.not_a_suit", letter=repr(key)))
            self.draw_entry()

    async def typed_card(self, text: str) -> None:
        """A whole card typed: move it, or light up its destinations, or say why it cannot move."""
        board = self.view.board
        if board is None:
            self.say(words("term.race.no_deal"))
            return
        try:
            typed = read_typed_move(board, text)
        except EngineError as error:
            self.say(error.message)
            self.draw_entry()
            return
        if typed.move is not None:
            await self.play(typed.move)
        elif typed.choices:
            self.selected, self.choices = typed.card, list(typed.choices)
            self.redraw()
        else:
            self.say(no_move_words(typed.card, typed.why_not, board))
            self.selected, self.choices = None, []
            self.redraw()

    async def action_pick_card(self, card: int) -> None:
        """A click on a card: as if it had been typed."""
        self.typed = ""
        await self.typed_card(card_text(Card(card)))

    async def action_pick_target(self, target: int) -> None:
        """A click on a column header or the foundations."""
        if not self.choices:
            self.say(words("term.race.pick_first"))
            return
        await self.pick_destination(target)

    async def pick_destination(self, target: int) -> None:
        chosen = [move for move in self.choices if move.target == target]
        if not chosen:
            card = card_label(self.selected or Card(0))
            self.say(words("term.race.cannot_go_foundation", card=card) if target == FOUNDATION else words("term.race.cannot_go_column", card=card, number=target + 1))
            return
        await self.play(chosen[0])

    async def play(self, action: Move | Special) -> None:
        """Send one action; the board moves on the reply, a refusal goes to the message line."""
        self.typed, self.selected, self.choices = "", None, []
        if not self.view.can_move():
            self.say(self._why_no_moves())
            self.redraw()
            return
        async with self._moving:
            try:
                reply = await self.session.send(action)
                self.say(words("term.race.played", move=notation_label(reply.move), count=reply.count))
                self.auto_paused = action is Special.UNDO and self.auto
                if self.auto_paused:
                    self.say(words("term.race.auto_waits"))
            except ServerError as error:
                self.say(refusal_text(error, action, self.view.board))
            except ConnectionLost:
                self.view.reconnecting = True
                self.say(words("term.race.dropped"))
        self.redraw()
        if self.auto:
            self.start_auto_move()

    def _why_not(self, action: str) -> str:
        """Why an action the footer does not offer cannot be done now."""
        if action == "hint" and not self.view.hints:
            return words("term.hint.off")
        if action == "hint" and self.view.board is None:
            return words("term.hint.no_deal")
        if self.view.can_move():
            code = "undo_not_allowed" if action == "undo" else "redeal_already_used" if self.view.rules.redeal_once else "redeal_not_allowed"
            said = refusal_words(code) or code
            return f"{said[0].upper()}{said[1:]}."
        return self._why_no_moves()

    def _why_no_moves(self) -> str:
        view = self.view
        me = view.me
        if view.status in OPEN_STATUSES:
            return words("term.race.not_started")
        if me is not None and not me.playing:
            return words("term.race.attempt_ended", ending=attempt_ending_words(me.state))
        return words("term.race.over")

    def start_auto_move(self) -> None:
        """Run :meth:`auto_move` unless it runs already (it picks up new safe cards itself; it is never cancelled
        mid-move, which would leave the reply, and the next action number, unread)."""
        if self._auto_worker is None or self._auto_worker.is_finished:
            self._auto_worker = self.run_worker(self.auto_move(), group="auto")

    async def auto_move(self) -> None:
        """Send every safe card to its foundation, one after the other, while auto-move is on."""
        while self.auto and not self.auto_paused and self.view.can_move() and self.view.board is not None:
            moves = safe_moves(self.view.board)
            if not moves:
                return
            async with self._moving:
                try:
                    await self.session.send(moves[0])
                except (ServerError, ConnectionLost) as error:
                    self.say(refusal_text(error, moves[0], self.view.board) if isinstance(error, ServerError) else words("term.race.connection_lost"))
                    return
            self.redraw()

    # --- keys ----------------------------------------------------------------------------------

    async def action_undo(self) -> None:
        await self.play(Special.UNDO)

    def action_redeal(self) -> None:
        """The one-time redeal, after a confirmation: it cannot be taken back, and there is only one."""
        if not self.view.can_move():
            self.say(self._why_no_moves())
            return
        self.app.push_screen(Confirm(words("term.race.redeal_question"), words("term.race.redeal_meaning")), self._confirmed_redeal)

    async def _confirmed_redeal(self, answer: bool | None) -> None:
        if answer:
            await self.play(Special.REDEAL)

    def action_clear(self) -> None:
        self.typed, self.selected, self.choices = "", None, []
        moves = self.query_one("#moves", OptionList)
        moves.remove_class("shown")
        self.redraw()

    def action_auto(self) -> None:
        self.auto = not self.auto
        self.say(words("term.race.auto_turned_on" if self.auto else "term.race.auto_turned_off"))
        self.draw_status()
        if self.auto:
            self.start_auto_move()

    def action_moves(self) -> None:
        moves = self.query_one("#moves", OptionList)
        if moves.has_class("shown"):
            moves.remove_class("shown")
            return
        moves.add_class("shown")
        self._fill_moves(moves)
        moves.focus()
        self.say(words("term.race.moves_how"))

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        text = event.option.id
        if text is None or self.view.board is None:
            return
        chosen = [move for move in self.view.board.legal_moves() if move_text(move) == text]
        if chosen:
            await self.play(chosen[0])

    def action_stuck(self) -> None:
        if not self.view.can_move():
            self.say(self._why_no_moves())
            return
        count = self.view.me.count if self.view.me else 0
        self.app.push_screen(Confirm(words("term.race.stuck_question"), words("term.race.stuck_meaning", count=count)), self._confirmed_stuck)

    def action_resign(self) -> None:
        if not self.view.can_move():
            self.say(self._why_no_moves())
            return
        count = self.view.me.count if self.view.me else 0
        opponent = self.view.name(1 - (self.view.slot or 0))
        meaning = words("term.race.resign_meaning", count=count, opponent=opponent)
        self.app.push_screen(Confirm(words("term.race.resign_question"), meaning), self._confirmed_resign)

    async def _confirmed_stuck(self, answer: bool | None) -> None:
        if answer:
            await self._end_attempt(self.session.stuck)

    async def _confirmed_resign(self, answer: bool | None) -> None:
        if answer:
            await self._end_attempt(self.session.resign)

    async def _end_attempt(self, request: Callable[[], Awaitable[None]]) -> None:
        try:
            await request()
        except ServerError as error:
            self.say(refusal_text(error))

    async def action_hint(self) -> None:
        """``h`` where the race allows hints: the next move of a winning line the shared solver finds from the own
        board, lit as a typed card's destination would be (its key plays it); or why none is shown."""
        board = self.view.board
        if board is None or not self.view.hints:
            return
        self.say(words("term.hint.thinking"))
        played = own_actions(self.view)
        found = await asyncio.to_thread(hint, board.copy(), self.hint_budget)
        if self.view.board is not board or own_actions(self.view) != played or not self.view.can_move():
            return  # the board moved on meanwhile (auto-move, the result): this hint is stale
        if found.verdict is not Verdict.SOLVED or found.move is None:
            self.say(words("term.hint.lost" if found.verdict is Verdict.UNSOLVABLE else "term.hint.none"))
            return
        move = found.move
        self.typed, self.selected, self.choices = "", move.card, [move]
        self.say(words("term.hint.move", move=move_label(move), target=target_key(move.target)))
        self.redraw()

    def action_help(self) -> None:
        from cli.tui.dialogs import HelpScreen

        title, text = words("term.keys_help").split("\n", 1)
        self.app.push_screen(HelpScreen(title, text))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer offers what can be done now: undo and redeal where the race allows them, the race's keys while
        the attempt runs."""
        del parameters
        view = self.session.view
        if view is None or action not in STATE_ACTIONS:
            return True
        if not view.can_move():
            return False
        if action == "undo":
            return view.rules.undo
        if action == "redeal":
            return view.rules.redeal_once and not (view.board is not None and view.board.redeal_used)
        if action == "hint":
            return view.hints and view.board is not None
        return True

