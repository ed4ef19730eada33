"""What a front end shows of one race, kept up to date from the server's events — for players and spectators.

:class:`RaceView` is the one model behind every way this project draws a race in
Python (the full-screen app, the line mode, watch and replay). The race itself (status,
deal, times, seats, watchers) is folded by the shared race domain
(:func:`shared.race.fold.fold_events`, the server's own fold); the view adds what a
client knows beyond it: the boards it may see (a player's own board; both boards for a
spectator or a replay) rebuilt move by move, the opponent's progress, the rematch
offers, the result, and this client's own connection state. :meth:`RaceView.apply`
takes any race event and returns a sentence saying what happened, in words, for a
message line or a log.

The words of results and attempt endings are here too, so every front end says the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final

from client.words import TABLES, count_words, words
from shared import Board, Profile, Rules, notation_label
from shared.cards import DECK_SIZE
from shared.protocol import (
    AnalysisReady,
    AttemptEnded,
    AttemptState,
    Back,
    CloseReason,
    Countdown,
    DealLayout,
    Difficulty,
    Disconnected,
    EmoteSent,
    FinalStanding,
    LineVerdict,
    MoveMade,
    PlayerAnalysis,
    PlayerJoined,
    PlayerLeft,
    Progress,
    RaceAnalysis,
    RaceClosed,
    RaceEvent,
    RaceInfo,
    RaceResult,
    RaceSettings,
    RaceStatus,
    RatingChange,
    RematchOffered,
    RematchStarted,
    ResultReason,
    Started,
    Synced,
    Watching,
)
from shared.race import board_from_layout, play_reported, replay_reported
from shared.race.fold import RaceSnapshot, fold_events


def rules_of(settings: RaceSettings) -> Rules:
    """The engine rules a race's settings give (profile, undo, redeal)."""
    return Rules(Profile(settings.profile), undo=settings.undo, redeal_once=settings.redeal_once)


def _worded(kind: str, value: StrEnum) -> str:
    """A closed set's value in the current language (:mod:`client.words`); the value itself in words if unknown."""
    key = f"{kind}.{value}"
    return words(key) if key in TABLES["en"] else str(value).replace("_", " ")


def race_status_words(status: RaceStatus) -> str:
    """``running`` -> ``racing``: the one place a race's status becomes words in the Python clients."""
    return _worded("status", status)


_STATUS_ORDER: Final = (RaceStatus.WAITING, RaceStatus.COUNTDOWN, RaceStatus.RUNNING, RaceStatus.FINISHED)


def _lagging(shown: RaceStatus, now: RaceStatus | None) -> bool:
    """Whether the race's status ``now`` (``watching.status_now``) is past ``shown`` (a spectator's view, one delay
    behind): it started, finished or closed within the delay."""
    if now is None or now is shown:
        return False
    return now is RaceStatus.CLOSED or (shown in _STATUS_ORDER and now in _STATUS_ORDER and _STATUS_ORDER.index(now) > _STATUS_ORDER.index(shown))


def watched_status_words(shown: RaceStatus, now: RaceStatus | None, delay_ms: int) -> str:
    """A watched race's status as true for the spectator: ``racing`` once the delayed view caught up, else what the
    race is now with the lag, ``under way · shown 30 s late`` or ``finished · shown 30 s late``, never ``waiting for an
    opponent`` for a race under way (the web page's ``dom.js`` ``watchedStatusText`` says the same)."""
    if not _lagging(shown, now):
        return race_status_words(shown)
    if now is RaceStatus.CLOSED:
        return race_status_words(now)
    return words("watched.finished_late" if now is RaceStatus.FINISHED else "watched.under_way_late", seconds=round(delay_ms / 1000))


def watched_status_note(shown: RaceStatus, now: RaceStatus | None, delay_ms: int) -> str | None:
    """What a spectator waits for while its view lags the race (None once caught up): ``The race is under way: you see
    it 30 s late.`` (the web page's ``watchedStatusNote``)."""
    if not _lagging(shown, now) or now is RaceStatus.CLOSED:
        return None
    return words("watched.note_finished" if now is RaceStatus.FINISHED else "watched.note_under_way", seconds=round(delay_ms / 1000))


def result_reason_words(reason: ResultReason) -> str:
    """``reached_first`` -> ``same count, reached first``."""
    return _worded("reason", reason)


def attempt_ending_words(state: AttemptState) -> str:
    """``time_limit`` -> ``out of time``."""
    return _worded("attempt", state)


def closed_reason_words(reason: CloseReason) -> str:
    """``left`` -> ``the creator left``."""
    return _worded("closed", reason)


def player_label(name: str, account: str | None = None, bot: bool = False, *, you: bool = False) -> str:
    """How a player is shown everywhere: ``Ann`` (logged in to the account Ann), ``Ann (guest)`` (anonymous: the
    name proves nothing, even one equal to a handle), ``Bot5_ab12 (bot)`` (a bot account); ``you`` marks the viewer.
    The web page's ``players.js`` ``playerText`` writes the same."""
    guest, viewer = words("player.guest"), words("player.you")
    if account is None:
        return f"{name} ({guest}, {viewer})" if you else f"{name} ({guest})"
    shown = f"{account} ({words('player.bot')})" if bot else account
    return f"{shown} ({viewer})" if you else shown


def rating_text(change: RatingChange | None) -> str:
    """``1500 -> 1662? (+162)``, ``?`` marking a provisional rating; empty for casual races."""
    if change is None:
        return ""
    mark = "?" if change.provisional else ""
    return f"{change.before} -> {change.after}{mark} ({change.delta:+d})"


class Connection(StrEnum):
    """A seat's connection as a front end shows it."""

    CONNECTED = "connected"
    AWAY = "away"
    """The server announced it disconnected; its attempt is abandoned at ``grace_until`` unless it is back."""
    RECONNECTING = "reconnecting"
    """This client's own connection dropped and is being re-established."""


@dataclass(frozen=True, slots=True)
class Seat:
    """One player of the race as far as this client knows it (a read-only picture; see :meth:`RaceView.seat`)."""

    slot: int
    name: str = ""
    """The display name as sent (empty while the seat is free); :attr:`label` is what to show."""
    count: int = 0
    left: int = DECK_SIZE
    state: AttemptState = AttemptState.PLAYING
    connection: Connection = Connection.CONNECTED
    grace_until: int | None = None
    board: Board | None = None
    """The board, when this client may see it (its own seat; every seat for spectators)."""
    account: str | None = None
    """The registered handle the player is logged in to; None: anonymous."""
    bot: bool = False

    @property
    def label(self) -> str:
        """The player as shown (see :func:`player_label`); empty while the seat is free."""
        return player_label(self.name, self.account, self.bot) if self.name else ""

    @property
    def playing(self) -> bool:
        """Whether the attempt still runs."""
        return self.state is AttemptState.PLAYING


@dataclass
class RaceView:
    """One race as a front end draws it. ``slot`` is the viewer's seat, None for a spectator."""

    race_id: str
    slot: int | None = None
    rules: Rules = field(default_factory=Rules)
    race: RaceSnapshot = field(default_factory=RaceSnapshot)
    """The race as the shared fold keeps it: status, deal, times, seats, watchers, last event."""
    boards: dict[int, Board] = field(default_factory=dict)
    actions: dict[int, list[str]] = field(default_factory=dict)
    """Per seat, the actions applied to its board, in order."""
    invite: str | None = None
    result: RaceResult | None = None
    closed_reason: CloseReason | None = None
    rematch_offers: dict[int, int] = field(default_factory=dict)
    """Seat -> server time until which its rematch offer stands."""
    rematch_race: str | None = None
    """The new race once both players agreed to a rematch."""
    reconnecting: bool = False
    """This client's own connection is being re-established."""
    layout: DealLayout | None = None
    """The layout dealt (the seed is hidden until the result: boards start from this)."""
    seed_chosen: bool = False
    """The creator chose the seed (the deal may have been studied)."""
    difficulty: Difficulty | None = None
    analysis: RaceAnalysis | None = None
    """The post-race analysis, once the ``analysis`` event came."""
    status_now: RaceStatus | None = None
    """A spectator's: the race's status when the watch began (``watching.status_now``), which the delayed view lags."""
    rated: bool = False
    """A rated race (both players' ratings change with its result)."""
    hints: bool = False
    """The race allows hints (``settings.hints``): the player's client may show the next move of a winning line."""

    @classmethod
    def of(cls, info: RaceInfo, slot: int | None = None) -> RaceView:
        """A view from a race snapshot (seated, synced, watching or a replay page)."""
        race = RaceSnapshot(
            status=info.status,
            seed=info.seed,
            start_at=info.start_at,
            deadline=info.deadline,
            watchers=info.watchers,
            event_seq=info.event_seq,
            players={player.slot: player for player in info.players},
            commitment=info.commitment,
        )
        return cls(
            race_id=info.race, slot=slot, rules=rules_of(info.settings), race=race, invite=info.invite, seed_chosen=info.seed_chosen,
            difficulty=info.difficulty, rated=info.settings.rated, hints=info.settings.hints,
        )

    @classmethod
    def of_watching(cls, watching: Watching) -> RaceView:
        """A spectator's view from a ``watching`` snapshot: both boards rebuilt from the layout and their actions."""
        view = cls.of(watching.race)
        view.status_now = watching.status_now
        if watching.deal is not None:
            view.deal(watching.deal)
            for board in watching.boards:
                view.load_actions(board.slot, list(board.moves), board.redeal_columns)
        return view

    @classmethod
    def of_synced(cls, synced: Synced) -> RaceView:
        """A player's view from a ``synced`` snapshot: its own board rebuilt from the layout and its actions."""
        view = cls.of(synced.race, synced.slot)
        if synced.deal is not None:
            view.layout = synced.deal
            view.load_actions(synced.slot, list(synced.moves), synced.redeal_columns)
        return view

    @classmethod
    def before_start(cls, info: RaceInfo) -> RaceView:
        """A spectator's view of the race as it was before its first event (for replaying its log)."""
        return cls(race_id=info.race, rules=rules_of(info.settings), rated=info.settings.rated)

    # --- what a front end asks ----------------------------------------------------------

    @property
    def status(self) -> RaceStatus:
        return self.race.status

    @property
    def seed(self) -> int | None:
        """Revealed with the result (None before)."""
        return self.race.seed

    @property
    def start_at(self) -> int | None:
        return self.race.start_at

    @property
    def deadline(self) -> int | None:
        return self.race.deadline

    @property
    def watchers(self) -> int:
        return self.race.watchers

    @property
    def event_seq(self) -> int:
        """The last event applied; older or repeated events are ignored."""
        return self.race.event_seq

    def seat(self, slot: int) -> Seat:
        """What this client knows of seat ``slot``."""
        player = self.race.players.get(slot)
        board = self.boards.get(slot)
        if player is None:
            return Seat(slot, board=board)
        connection = Connection.CONNECTED if player.connected else Connection.AWAY
        if slot == self.slot and self.reconnecting:
            connection = Connection.RECONNECTING
        return Seat(
            slot, player.name, player.count, player.left, player.state, connection, player.grace_until, board, player.account, player.bot
        )

    @property
    def me(self) -> Seat | None:
        """The viewer's seat (None for a spectator)."""
        return None if self.slot is None else self.seat(self.slot)

    @property
    def opponent(self) -> Seat | None:
        """The other seat (None for a spectator)."""
        return None if self.slot is None else self.seat(1 - self.slot)

    @property
    def board(self) -> Board | None:
        """The viewer's own board (None for a spectator or before the deal)."""
        return None if self.slot is None else self.boards.get(self.slot)

    def name(self, slot: int) -> str:
        """A seat's player as shown, with its account or guest label (``player 2`` while unknown)."""
        player = self.race.players.get(slot)
        if player is None or not player.name:
            return f"player {slot + 1}"
        return player_label(player.name, player.account, player.bot)

    def clock_ms(self, now: int) -> int | None:
        """Race time at server time ``now`` (negative during the countdown); None before the deal."""
        return None if self.start_at is None else now - self.start_at

    def time_left_ms(self, now: int) -> int | None:
        """Time until the time limit at server time ``now``; None without a limit."""
        return None if self.deadline is None else max(0, self.deadline - now)

    def can_move(self) -> bool:
        """Whether the viewer may send a move now (running race, own attempt still going)."""
        me = self.me
        return self.status is RaceStatus.RUNNING and me is not None and me.playing and me.board is not None

    # --- boards ----------------------------------------------------------------------------

    def deal(self, layout: DealLayout) -> None:
        """Fresh boards of the layout dealt for every seat this client may see."""
        self.layout = layout
        for slot in (0, 1):
            if self.slot is None or slot == self.slot:
                self.boards[slot] = board_from_layout(layout.columns, layout.bouquet, self.rules)
                self.actions[slot] = []

    def load_actions(self, slot: int, actions: list[str], redeal_columns: list[list[str]] | None = None) -> None:
        """A seat's board rebuilt from the layout and its actions so far (after a sync, watch or resume);
        ``redeal_columns``: what its redeal dealt, if it made one."""
        if self.layout is None:
            return
        board = replay_reported(self.layout.columns, self.layout.bouquet, self.rules, actions, redeal_columns)
        self.boards[slot], self.actions[slot] = board, list(actions)
        self._set_count(slot, board.foundation_count, board.cards_left)

    def apply_action(self, slot: int, action: str, number: int, dealt: list[list[str]] | None = None) -> bool:
        """Apply a seat's ``number``-th action (1-based) once: a repeat (reply and event both report it) is ignored.
        ``dealt``: the columns a redeal dealt (the reply's or the event's ``columns``)."""
        board, done = self.boards.get(slot), self.actions.setdefault(slot, [])
        if board is None or number != len(done) + 1:
            return False
        play_reported(board, action, dealt)
        done.append(action)
        self._set_count(slot, board.foundation_count, board.cards_left)
        return True

    def _set_count(self, slot: int, count: int, left: int) -> None:
        player = self.race.players.get(slot)
        if player is not None:
            self.race.players[slot] = replace(player, count=count, left=left)

    # --- events --------------------------------------------------------------------------

    def apply(self, event: RaceEvent) -> str | None:
        """Apply one event of this race; a sentence saying what happened (None when nothing worth saying)."""
        if event.race != self.race_id or event.seq <= self.event_seq:
            return None
        fold_events([event], self.race)
        also = _CLIENT_CHANGES.get(type(event))
        return None if also is None else also(self, event)

    def _joined(self, event: PlayerJoined) -> str | None:
        return None if event.slot == self.slot else words("race.joined", name=self.name(event.slot))

    def _left(self, event: PlayerLeft) -> str | None:
        if self.status is RaceStatus.WAITING:  # back to waiting: the next countdown deals anew
            self.boards.clear()
            self.actions.clear()
            self.layout = None
        return None if event.slot == self.slot else words("race.left_before_start", name=self.name(event.slot))

    def _countdown(self, event: Countdown) -> str:
        self.invite = None
        self.seed_chosen, self.difficulty = event.seed_chosen, event.difficulty
        self.deal(DealLayout(event.columns, event.bouquet))
        seconds = max(0, event.start_at - event.at) / 1000
        limit = "" if event.deadline is None else f", {time_limit_words((event.deadline - event.start_at) // 1000)}"
        return words("race.starts_in", seconds=f"{seconds:.1f}", limit=limit, note=self.deal_note())

    def deal_note(self) -> str:
        """What is known of the deal: chosen by the creator or random, its tier, and the seed once revealed."""
        said = [words("race.deal_chosen" if self.seed_chosen else "race.deal_random")]
        if self.difficulty is not None:
            said.append(words("race.deal_difficulty", tier=words(f"difficulty.{self.difficulty.value}")))
        said.append(words("race.seed_later") if self.seed is None else words("race.seed_was", seed=self.seed))
        return " ".join(said)

    def _started(self, event: Started) -> str:
        del event
        return words("race.go")

    def _moved(self, event: MoveMade) -> None:
        self.apply_action(event.slot, event.move, event.move_seq, event.columns)
        self._set_count(event.slot, event.count, event.left)

    def _progress(self, event: Progress) -> None:
        self._set_count(event.slot, event.count, event.left)

    def _attempt_ended(self, event: AttemptEnded) -> str:
        ending = attempt_ending_words(event.reason)
        if event.slot == self.slot:
            return words("race.own_attempt_ended", ending=ending, count=event.count)
        return words("race.attempt_ended", name=self.name(event.slot), ending=ending, count=event.count)

    def _disconnected(self, event: Disconnected) -> str | None:
        return None if event.slot == self.slot else words("race.disconnected", name=self.name(event.slot))

    def _back(self, event: Back) -> str | None:
        return None if event.slot == self.slot else words("race.back", name=self.name(event.slot))

    def _result(self, event: RaceResult) -> str:
        self.result = event
        for standing in event.players:
            self._set_count(standing.slot, standing.count, standing.left)
        return self.result_headline()

    def _analysed(self, event: AnalysisReady) -> str:
        self.analysis = event.analysis
        return "\n".join([words("race.analysis"), *self.analysis_lines()])

    def analysis_lines(self) -> list[str]:
        """Where each player lost the win (the post-race analysis), one line each; empty until it came."""
        if self.analysis is None:
            return []
        return [f"  {self.name(player.slot)}: {line_verdict_words(player)}" for player in sorted(self.analysis.players, key=lambda p: p.slot)]

    def _closed(self, event: RaceClosed) -> str:
        self.closed_reason = event.reason
        if event.reason is CloseReason.OPERATOR:
            return words("race.closed_by_operator", message=event.message or words("race.no_reason_given"))
        return words("race.closed_before_start", reason=closed_reason_words(event.reason))

    def _rematch_offered(self, event: RematchOffered) -> str | None:
        self.rematch_offers[event.slot] = event.until
        return None if event.slot == self.slot else words("race.rematch_offered", name=self.name(event.slot))

    def _emote(self, event: EmoteSent) -> str:
        """The opponent's (or one's own) quick emote, in the reader's language: ``Bob: Good luck!``."""
        return words("emote.said", name=self.name(event.slot), phrase=_worded("emote", event.phrase))

    def _rematch_started(self, event: RematchStarted) -> str:
        self.rematch_race = event.new_race
        return words("race.rematch_agreed", race=event.new_race)

    # --- the result in words ---------------------------------------------------------------

    def result_headline(self) -> str:
        """Who won and why, and a rated race's change of the viewer's rating: ``You win: cleared first. Your rating:
        1500 -> 1662? (+162).``, ``Bob wins: more cards on foundations (30 to 25).``, ``Draw: ...``"""
        result = self.result
        if result is None:
            return ""
        counts = {standing.slot: standing.count for standing in result.players}
        if result.winner is None:
            headline = words("race.draw", count=next(iter(counts.values()), 0))
        else:
            reason = result_reason_words(result.reason)
            if result.reason is ResultReason.COUNT and len(counts) == 2:
                reason = words("race.counts", reason=reason, winner=counts[result.winner], loser=counts[1 - result.winner])
            won = result.winner == self.slot
            headline = words("race.you_win", reason=reason) if won else words("race.wins", name=self.name(result.winner), reason=reason)
        own = next((standing for standing in result.players if standing.slot == self.slot), None)
        if own is not None and own.rating is not None:
            headline += " " + words("race.your_rating", change=rating_text(own.rating))
        if result.aborted is not None:
            headline += " " + words("race.aborted", why=words(f"abort.{result.aborted.value}"))
        return headline

    def standing_lines(self, *, split: bool = False) -> list[str]:
        """One line per player of the result (name, count, how the attempt ended, time, moves and undos; ``split``: two
        lines, for a narrow panel), in a rated race each followed by the player's rating change:
        ``  rating 1500 -> 1662? (+162)``."""
        lines: list[str] = []
        for standing in self.result.players if self.result is not None else []:
            lines.append(standing_line(standing, you=standing.slot == self.slot, split=split))
            if standing.rating is not None:
                lines.append("  " + words("race.rating", change=rating_text(standing.rating)))
        if self.seed is not None:
            lines.append(words("race.seed_verify", seed=self.seed, race=self.race_id))
        return lines


_CLIENT_CHANGES: Final[dict[type[RaceEvent], Callable[[RaceView, Any], str | None]]] = {
    PlayerJoined: RaceView._joined,
    PlayerLeft: RaceView._left,
    Countdown: RaceView._countdown,
    Started: RaceView._started,
    MoveMade: RaceView._moved,
    Progress: RaceView._progress,
    AttemptEnded: RaceView._attempt_ended,
    Disconnected: RaceView._disconnected,
    Back: RaceView._back,
    RaceResult: RaceView._result,
    RaceClosed: RaceView._closed,
    RematchOffered: RaceView._rematch_offered,
    RematchStarted: RaceView._rematch_started,
    AnalysisReady: RaceView._analysed,
    EmoteSent: RaceView._emote,
}
"""What each event changes beyond the shared fold (boards, progress, offers, the result), and what it says."""


def line_verdict_words(player: PlayerAnalysis) -> str:
    """``lost the win at move 10: 7♦ b→5`` (the move as the web page writes it) — a player's line in the post-race analysis, in words."""
    if player.verdict is LineVerdict.LOST_AT and player.fatal_action is not None:
        return words("verdict.lost_at", number=player.fatal_action + 1, move=notation_label(str(player.fatal_move)))
    if player.verdict is LineVerdict.LOST_BETWEEN and player.first_action is not None and player.last_action is not None:
        return words("verdict.lost_between", first=player.first_action + 1, last=player.last_action + 1)
    return _worded("verdict", player.verdict) if player.verdict in _PLAIN_VERDICTS else words("verdict.unknown")


_PLAIN_VERDICTS: Final = (LineVerdict.WON, LineVerdict.STILL_WINNABLE, LineVerdict.DEAL_NOT_WINNABLE)
"""The verdicts said without a move number (the others, and one whose numbers are missing, are undecided)."""


def standing_line(standing: FinalStanding, *, you: bool = False, split: bool = False) -> str:
    """``Ann (you)   52/52  cleared the board  81.3 s  57 moves, 0 undos``; ``split``: the time, moves and undos on a
    second, indented line (the whole line is about 84 columns: an 80-column panel wrapped it mid-figure)."""
    name = player_label(standing.name, standing.account, standing.bot, you=you)
    undos = count_words("race.undos", standing.undos)
    moves = count_words("race.moves", standing.moves)
    if split:
        return (
            f"{name:<22} {standing.count:>2}/52  {attempt_ending_words(standing.ended)}\n"
            f"    {standing.time_ms / 1000:.1f} s  {moves}, {undos}"
        )
    return (
        f"{name:<22} {standing.count:>2}/52  {attempt_ending_words(standing.ended):<26} "
        f"{standing.time_ms / 1000:7.1f} s  {moves}, {undos}"
    )


def clock_text(milliseconds: int) -> str:
    """``1:05`` for 65 s, ``1:00:05`` past an hour (as the web page's ``dom.js`` ``clockText``); ``-0:03`` during a
    countdown."""
    sign = "-" if milliseconds < 0 else ""
    seconds = milliseconds // 1000 if milliseconds >= 0 else (-milliseconds + 999) // 1000
    hours, minutes = seconds // 3600, seconds % 3600 // 60
    shown = f"{hours}:{minutes:02d}:{seconds % 60:02d}" if hours else f"{minutes}:{seconds % 60:02d}"
    return sign + shown


def time_limit_words(seconds: int) -> str:
    """A race's time limit as ``time limit 5:00``: the one form of the Python clients (the lobby, the countdown), the
    web page's words too (``dom.js`` ``timeLimitText``)."""
    return words("setting.time_limit", clock=clock_text(seconds * 1000))

