"""A player's seat in a race, from the first request to the rematch: what both terminal front ends drive.

:class:`RaceSession` says hello (and logs in to an account when asked), takes the seat
(create, join, invite code, quick match, or resume a saved seat after a killed terminal;
a resumed session is still logged in), saves the seat for ``--resume``, keeps
a :class:`~client.race_view.RaceView` up to date from the replies and events (across
reconnects), sends moves typed in any accepted form, and follows a rematch (or a rated
quick match's pairing) into the new race. It does no drawing: each event handled returns the sentence to show, if any.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace

from client.race_client import Incoming, RaceClient, Resumed, ServerError, Unsolicited
from client.race_view import RaceView, player_label
from client.refusals import refusal_words
from client.sessions import SavedRace, SessionStore
from client.words import words
from shared import Board, Move, Special, action_text
from shared.protocol import (
    LIVE_STATUSES,
    OPEN_STATUSES,
    OVER_STATUSES,
    Error,
    Moved,
    Notice,
    Queued,
    RaceClosed,
    RaceEvent,
    RaceInfo,
    RaceResult,
    RaceSettings,
    RematchStarted,
    Seated,
    ServerShutdown,
    Synced,
    Welcome,
)
from shared.race import RaceSnapshot


@dataclass(frozen=True, slots=True)
class Credentials:
    """A registered account to log in to: its handle and password (a bot's key)."""

    handle: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class SeatRequest:
    """How to take a seat: exactly one of ``join``, ``invite``, ``quick``, ``resume`` (else create a race).

    ``login``: race as this account (logged in right after the hello); a rated race (``settings.rated``) needs it.
    A ``resume`` ignores it: the saved session is still logged in as it was.
    """

    name: str = "player"
    settings: RaceSettings = field(default_factory=RaceSettings)
    join: str | None = None
    invite: str | None = None
    quick: bool = False
    resume: SavedRace | None = None
    login: Credentials | None = None
    accept_delay: int | None = None
    """Joining a private race: the spectator delay (s) accepted below the server's minimum."""
    bot: int | None = None
    """Race one of the server's practice bots of this level (1-5): a private race with ``settings`` (so nobody else
    takes the seat), then ``summon_bot``, as the web page's **Race a bot** does."""


async def introduce(client: RaceClient, name: str, login: Credentials | None = None) -> Welcome:
    """Say hello as ``name`` unless the client has, and log in to ``login`` unless it is logged in to it already;
    the session as it stands then (ServerError ``bad_credentials``, ``rate_limited`` from the login)."""
    if client.session is None:
        await client.hello(login.handle if login is not None else name)
    if login is not None and (client.session is None or (client.session.account or "").lower() != login.handle.lower()):
        await client.login(login.handle, login.password)
    assert client.session is not None
    return client.session


class ResumeError(Exception):
    """A saved seat cannot be taken back (session expired, race over or gone); ``code`` says which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class RaceSession:
    """One player's seat over a :class:`RaceClient`; see the module docstring."""

    def __init__(self, client: RaceClient, store: SessionStore | None = None, *, clock_offset_ms: float = 0.0) -> None:
        self.client = client
        self.store = store or SessionStore()
        self.view: RaceView | None = None
        self.queued = False
        """True while a quick-match request waits for a partner."""
        self._clock_offset_ms = clock_offset_ms
        self.unsaved: str | None = None
        """Why the seat taken last could not be saved for ``--resume`` (None: saved, or nothing to save)."""
        self.join_command: str | None = None
        """The command the opponent types to join the race this session created (None: it joined one, or was paired)."""

    @property
    def race_id(self) -> str:
        """The race played now."""
        assert self.view is not None, "take a seat first"
        return self.view.race_id

    def now(self) -> int:
        """The server's clock (ms), estimated from the ``welcome``."""
        return int(time.time() * 1000 + self._clock_offset_ms)

    async def open(self, request: SeatRequest) -> list[str]:
        """Say hello and take the seat; the sentences to show (how the opponent joins, what is awaited)."""
        if request.resume is not None:
            return await self._resume(request.resume)
        if self.client.session is None:  # a client that already said hello (the lobby's) keeps the clock estimated then
            hello = await self.client.hello(request.name)
            self._clock_offset_ms = hello.server_time - time.time() * 1000
        welcome = await introduce(self.client, request.name, request.login)
        seated = await self._take_seat(request)
        slot = seated.slot if isinstance(seated, Seated) else 0
        self._seat(seated.race, slot)
        if request.bot is not None:
            await self.client.summon_bot(seated.race.race, request.bot)
        lines = [f"You are {player_label(welcome.name, welcome.account, welcome.bot)}, seat {slot + 1} of race {seated.race.race}."]
        if self.unsaved is not None:
            lines.append(self.unsaved)
        if seated.race.seed_chosen:
            lines.append("The creator CHOSE this race's deal (it may have been studied; never rated).")
        return lines + self._awaited(request, seated)

    async def _take_seat(self, request: SeatRequest) -> Seated | Queued:
        """Join, join by invite, queue for a quick match, or create the race (private when a bot takes the other seat)."""
        if request.join:
            return await self.client.join(request.join, accept_delay=request.accept_delay)
        if request.invite:
            return await self.client.join_invite(request.invite, accept_delay=request.accept_delay)
        if request.quick:
            return await self.client.quick_match(request.settings)
        if request.bot is not None:
            return await self.client.create(replace(request.settings, private=True))
        return await self.client.create(request.settings)

    def _awaited(self, request: SeatRequest, seated: Seated | Queued) -> list[str]:
        """What the player waits for once seated: a partner, the bot, or the opponent (with the command to join)."""
        if isinstance(seated, Queued):
            self.queued = True
            return ["Waiting for a player asking for the same settings ..."]
        if request.bot is not None:
            return [f"A practice bot of level {request.bot} takes the other seat (always labelled as a bot)."]
        if request.join or request.invite or request.quick:
            return []
        server = self.client.url or ""
        how = f"--invite {seated.race.invite}" if seated.race.invite is not None else f"--join {seated.race.race}"
        login = " --login HANDLE" if seated.race.settings.rated else ""  # a rated race seats accounts only
        self.join_command = f"flowergarden race --server {server}{login} {how}"
        lines = [words("race.opponent_joins"), f"  {self.join_command}"]
        if login:
            lines.append("(a rated race: HANDLE is their registered account)")
        return [*lines, words("race.waiting")]

    async def _resume(self, saved: SavedRace) -> list[str]:
        try:
            welcome = await self.client.hello(saved.name, saved.token)
        except ServerError as error:
            self.store.forget(saved.race)
            raise ResumeError(error.code, f"the saved session of race {saved.race} has expired ({error.code})") from None
        self._clock_offset_ms = welcome.server_time - time.time() * 1000
        try:
            synced = await self.client.sync(saved.race)
        except ServerError as error:
            self.store.forget(saved.race)
            raise ResumeError(error.code, f"race {saved.race} cannot be resumed: {error.error.message}") from None
        if synced.race.status in OVER_STATUSES:
            self.store.forget(saved.race)
            raise ResumeError("race_over", f"race {saved.race} is over: 'flowergarden replay {saved.race}' shows it")
        self._load(synced)
        you = player_label(welcome.name, welcome.account, welcome.bot)
        return [f"Resumed race {saved.race} as {you} (seat {synced.slot + 1})."]

    async def take_paired(self, race: str) -> list[str]:
        """Take the seat an arena paired this player into (``arena_paired``: its countdown runs already) by syncing
        the race on this session's logged-in connection; the sentence to show."""
        synced = await self.client.sync(race)
        self._load(synced)
        opponent = next((p for p in synced.race.players if p.slot != synced.slot), None)
        against = f" against {player_label(opponent.name, opponent.account, opponent.bot)}" if opponent is not None else ""
        return [f"Paired: race {race}, seat {synced.slot + 1}{against}."]

    def _seat(self, info: RaceInfo, slot: int) -> None:
        self.view = RaceView.of(info, slot)
        if info.status in LIVE_STATUSES:  # dealt (the joiner): the events from the first bring the layout (countdown)
            self.view.race = RaceSnapshot()
        self._save()

    def _load(self, synced: Synced) -> None:
        """The view from a ``synced`` snapshot: settings, seats and the own board with its actions."""
        self.view = RaceView.of_synced(synced)
        if self.view.status not in OVER_STATUSES:
            self._save()

    def _save(self) -> None:
        view, session = self.view, self.client.session
        if view is None or session is None or view.slot is None:
            return
        error = self.store.save(SavedRace(self.client.url or "", session.token, session.name, view.race_id, view.slot))
        self.unsaved = None if error is None else f"This seat could not be saved for --resume ({error.strerror or error}: {self.store.path})."

    # --- playing -------------------------------------------------------------------------

    async def send(self, action: Move | Special) -> Moved:
        """Send a move (or undo/redeal) and apply the server's reply to the own board; ServerError if refused."""
        # shielded: a caller cancelled mid-request (a closing screen) must not lose the reply, or the client's
        # next action number would stay behind and every later move be refused as out of sequence
        reply = await asyncio.shield(self.client.move(self.race_id, action_text(action)))
        assert self.view is not None and self.view.slot is not None
        self.view.apply_action(self.view.slot, reply.move, reply.seq, reply.columns)
        return reply

    async def resign(self) -> None:
        """End the own attempt; the foundation count still counts."""
        await self.client.resign(self.race_id)

    async def stuck(self) -> None:
        """Declare that the own attempt cannot progress."""
        await self.client.stuck(self.race_id)

    async def leave(self) -> None:
        """Give the seat up before the start (quick-match entries are cancelled); nothing once the race runs."""
        view = self.view
        if view is None or view.status not in OPEN_STATUSES:
            return
        try:
            if self.queued:
                await self.client.cancel_quick_match()
            else:
                await self.client.leave(view.race_id)
        except ServerError:
            return
        self.store.forget(view.race_id)

    async def rematch(self) -> str:
        """Offer (or accept) a rematch of the finished race; the sentence to show."""
        reply = await self.client.rematch(self.race_id)
        if isinstance(reply, Seated):
            self._seat(reply.race, reply.slot)
            return words("term.race.rematch", race=reply.race.race)
        return words("term.race.rematch_waiting")

    # --- what arrives ----------------------------------------------------------------------

    async def handle(self, item: Incoming | Resumed) -> str | None:
        """Apply one item of :meth:`RaceClient.follow`; the sentence to show, if any."""
        view = self.view
        if view is None:
            return None
        if isinstance(item, RaceEvent):
            return await self._race_event(view, item) if item.race == view.race_id else None
        return self._connection_news(view, item)

    def _connection_news(self, view: RaceView, item: Incoming | Resumed) -> str | None:
        """What the server or the connection says outside the race's events: refusals, notices, restarts, resumes."""
        if isinstance(item, Unsolicited):
            return words("term.server.error", message=item.error.message)
        if isinstance(item, Notice):
            return words("term.server.notice", message=item.message)
        if isinstance(item, ServerShutdown):
            view.reconnecting = True
            return words("term.server.restarting")
        if not isinstance(item, Resumed):
            return None
        synced = item.synced.get(view.race_id)
        if synced is not None:
            self._load(synced)
            assert self.view is not None
            self.view.race.event_seq = view.event_seq  # the events after it are still to come, in order
        if self.view is not None:
            self.view.reconnecting = False
        return words("term.connection.reconnected")

    async def _race_event(self, view: RaceView, item: RaceEvent) -> str | None:
        """Apply an event of the race played now."""
        if self.queued and item.seq > view.event_seq:  # someone was paired with us
            self.queued = False
        if isinstance(item, RaceClosed) and item.new_race is not None and item.seq > view.event_seq:
            return await self._paired(item.new_race)
        line = view.apply(item)
        if isinstance(item, RaceResult):
            self.store.forget(view.race_id)
        if isinstance(item, RematchStarted) and not (self.view and self.view.race_id == item.new_race):
            synced = await self.client.sync(item.new_race)
            self._load(synced)
        return line

    async def _paired(self, race: str) -> str:
        """Rated quick match seated us in the partner's waiting race (the client follows it already)."""
        old = self.race_id
        synced = await self.client.sync(race)
        self.store.forget(old)
        self._load(synced)
        return words("term.race.paired", race=race)


def refusal_text(error: ServerError | Error, action: Move | Special | None = None, board: Board | None = None) -> str:
    """A refusal for people, of ``action`` on ``board`` when it was one: ``Refused: 8♠ can't go to its foundation: the 7♠
    isn't there yet`` (:mod:`client.refusals`); a code without words there with the server's message and the code,
    ``Refused: ... (bad_field)``."""
    detail = error.error if isinstance(error, ServerError) else error
    said = refusal_words(detail.code, action, board)
    return words("term.refused", words=said) if said else words("term.refused_code", message=detail.message, code=detail.code)
