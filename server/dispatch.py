"""From decoded requests to service calls and back to reply messages; the glue between protocol and services.

It knows the connection only as a ``send`` function and a :class:`ConnectionState`;
the sockets, limits and frames are the transport's business.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from server import metrics
from server.bot_host import BotHost
from server.metrics import Role
from server.ratelimit import AddressBuckets, TokenBucket
from server.services import race_journal
from server.services.accounts import AccountService
from server.services.analysis import RaceAnalyst
from server.services.arena import ArenaService
from server.services.arena_record import ArenaRecords
from server.services.clock import ServerClock
from server.services.daily import DailyService
from server.services.errors import ServiceError
from server.services.event_hub import EventHub, Subscription, always_room
from server.services.ghost import GhostService
from server.services.lobby import LobbyService, Owner
from server.services.lobby_feed import LobbyFeed, LobbyWatcher
from server.services.online import OnlineCounter
from server.services.player_views import PlayerViews
from server.services.presence import PresenceService
from server.services.quick_match import QuickMatchService
from server.services.race import RaceService, SeatedRace
from server.services.ratings import PlayerBooks
from server.services.rematch import RematchService
from server.services.sessions import Session, SessionService
from server.services.spectate import SpectateService
from server.services.views import SPECTATOR
from server.store import AccountRecord, StoreError, StoreUnavailable
from shared.glicko2 import DEFAULT_RATING
from shared.protocol import (
    PROTOCOL_VERSION,
    AccountReply,
    AnalysisReport,
    ArenaBerserk,
    ArenaCreate,
    ArenaJoin,
    ArenaList,
    ArenaPause,
    ArenaRecordRequest,
    ArenaReply,
    ArenaStandingsRequest,
    ArenaUnwatch,
    ArenaWatch,
    AttemptState,
    CancelQuickMatch,
    ChangePassword,
    Create,
    DailyArchiveRequest,
    DailyBoardRequest,
    DailyMove,
    DailyReplayRequest,
    DailyRequest,
    DailyStart,
    DailyStop,
    EmoteRequest,
    Error,
    ErrorCode,
    GetAnalysis,
    GhostRace,
    Hello,
    History,
    HistoryRequest,
    Join,
    JoinInvite,
    Leaderboard,
    LeaderboardRequest,
    Leave,
    LiveRaces,
    LobbyEntry,
    LobbySnapshot,
    Login,
    Logout,
    Message,
    Moved,
    MoveRequest,
    Ok,
    Online,
    OnlineRequest,
    Queued,
    QuickMatch,
    RaceList,
    Register,
    Rematch,
    Replay,
    ReplayPage,
    Request,
    Resign,
    Seated,
    Solution,
    SolveFrom,
    Stats,
    StatsRequest,
    Stuck,
    SummonBot,
    Sync,
    Synced,
    Unwatch,
    UnwatchLobby,
    Watch,
    Watching,
    WatchLobby,
    Welcome,
    project,
)

log = logging.getLogger(__name__)

ARENA_PROFILE = "classic"
"""The profile of arena races, whose rating breaks the standings' ties (a player without one counts as
:data:`~shared.glicko2.DEFAULT_RATING`)."""

MAX_WATCHED_PER_CONNECTION = 16
"""Most races one connection watches at once (``watch_limit`` past it): server policy, stated in docs/PROTOCOL.md."""

Send = Callable[[Message], None]
"""Queues one message for the connection; never blocks."""
Room = Callable[[], Awaitable[None]]
"""Returns once the connection's outgoing queue has room for a page of catch-up events."""

WATCH_RATE_PER_SECOND = 1.0
WATCH_BURST = 20
"""``watch`` and ``unwatch`` per connection: bursts of 20, then one a second (docs/PROTOCOL.md "Limits")."""


EMOTE_RATE_PER_SECOND = 0.2
EMOTE_BURST = 3
"""``emote`` per connection: 3 at once, then one every 5 s (``emote_limit`` past it; docs/PROTOCOL.md "Limits")."""


def emote_bucket() -> TokenBucket:
    """The budget of one connection's quick emotes."""
    return TokenBucket(EMOTE_RATE_PER_SECOND, EMOTE_BURST)


def watch_bucket() -> TokenBucket:
    """The budget of one connection's ``watch``/``unwatch`` requests."""
    return TokenBucket(WATCH_RATE_PER_SECOND, WATCH_BURST)


@dataclass(slots=True)
class ConnectionState:
    """What one connection has established: its session and the races it receives events of.

    A subscription's ``viewer_slot`` tells how the connection follows a race: as the player of that seat,
    or as a spectator (None).
    """

    outbox: Send
    connection_id: str
    """Unique across server processes; names the connection's presence leases."""
    address: str
    """The client's address as the per-address limits count it (``transport.client_address``)."""
    room: Room = always_room
    replies: int = 0
    """Replies (messages with a request id) sent so far: a request that failed after its reply gets no second one."""
    watches: TokenBucket = field(default_factory=watch_bucket)
    emotes: TokenBucket = field(default_factory=emote_bucket)
    session: Session | None = None
    subscriptions: dict[str, Subscription] = field(default_factory=dict)
    owner: Owner = field(default_factory=Owner)
    """The races this connection holds open before their start, and its quick-match entry."""
    lobby_watcher: LobbyWatcher | None = None
    arenas: set[str] = field(default_factory=set)
    """The arenas this connection joined (told of its pairings and the standings; paused when it closes)."""
    watched_arenas: set[str] = field(default_factory=set)
    """The arenas this connection watches (``arena_watch``: told the top of the standings)."""

    def racing(self) -> bool:
        """Seated (a player's subscription) in a race that has both its players: one this connection does not hold
        open waiting for an opponent."""
        held = self.owner.race_ids()
        return any(subscription.viewer_slot is not SPECTATOR and race_id not in held for race_id, subscription in self.subscriptions.items())

    @property
    def player(self) -> str | None:
        """The player id once ``hello`` succeeded."""
        return self.session.player if self.session is not None else None

    def role(self) -> Role:
        """Player while seated in a race it receives events of, else spectator while watching one, else lobby."""
        slots = [subscription.viewer_slot for subscription in self.subscriptions.values()]
        if any(slot is not SPECTATOR for slot in slots):
            return Role.PLAYER
        return Role.SPECTATOR if slots else Role.LOBBY

    def send(self, message: Message) -> None:
        """Queue a reply or an event for the connection."""
        if getattr(message, "id", None) is not None:
            self.replies += 1
        self.outbox(message)


@dataclass(frozen=True, slots=True)
class PlayerServices:
    """The services behind accounts, leaderboards, histories and stats."""

    accounts: AccountService
    views: PlayerViews
    books: PlayerBooks
    """The rated races' rules, which remember where each account was seen (the same-address rule)."""


@dataclass(frozen=True, slots=True)
class LobbyServices:
    """The services behind the lobby requests."""

    lobby: LobbyService
    feed: LobbyFeed
    quick_match: QuickMatchService
    rematch: RematchService


R = TypeVar("R", bound=Request)
Handler = Callable[["Dispatcher", ConnectionState, Session, R], Awaitable[None]]
"""Runs one request of type R for a connection with a session, sending its reply (a ServiceError becomes ``error``)."""

HANDLERS: dict[type[Request], Handler[Any]] = {}
"""The handler of every request type but ``hello`` (which comes before a session); tests prove none is missing."""


def handles(request_type: type[R]) -> Callable[[Handler[R]], Handler[R]]:
    """Register the decorated :class:`Dispatcher` method as the handler of ``request_type``."""

    def register(handler: Handler[R]) -> Handler[R]:
        if request_type in HANDLERS:
            raise TypeError(f"two handlers for {request_type.TYPE}")
        HANDLERS[request_type] = handler
        return handler

    return register


class Door(Protocol):
    """Who may come in and what may start (server/operations.py): bans, draining and overload."""

    async def admit(self, player: str) -> None:
        """Raise ServiceError ``banned`` for a banned player's ``hello``."""

    def refuse_now(self, request: Request) -> ServiceError | None:
        """The refusal of a request that may not start now, if any."""


class Dispatcher:
    """Answers each request with exactly one reply or one ``error``."""

    def __init__(
        self,
        sessions: SessionService,
        races: RaceService,
        hub: EventHub,
        *,
        presence: PresenceService,
        spectate: SpectateService,
        clock: ServerClock,
        lobby: LobbyServices,
        players: PlayerServices,
        bots: BotHost,
        door: Door | None = None,
        analyst: RaceAnalyst,
        daily: DailyService,
        ghosts: GhostService,
        arenas: ArenaService,
        arena_records: ArenaRecords | None = None,
        address_watches: AddressBuckets | None = None,
        online: OnlineCounter,
    ) -> None:
        """``address_watches``: the ``watch``/``unwatch`` budget of each client address, over all its connections;
        ``online``: everybody's counts of players online and racing; ``arena_records``: the arenas' records (unsigned
        ones from ``arenas``' store if None)."""
        self.arenas = arenas
        self.arena_records = arena_records or ArenaRecords(arenas, arenas.store)
        self.sessions = sessions
        self.address_watches = address_watches or AddressBuckets(0, 0)
        self.online = online
        self.daily = daily
        self.ghosts = ghosts
        self.races = races
        self.hub = hub
        self.presence = presence
        self.spectate = spectate
        self.clock = clock
        self.lobby = lobby
        self._background: set[asyncio.Task[None]] = set()
        self.door = door
        self.players = players
        self.bots = bots
        self.analyst = analyst

    def connect(self, send: Send, address: str, room: Room = always_room) -> ConnectionState:
        """The state of a new connection from client ``address`` whose messages go to ``send``; ``room`` paces its
        catch-up reads."""
        return ConnectionState(
            outbox=send, connection_id=self.presence.new_connection_id(), address=address, owner=Owner(address), room=room
        )

    async def handle(self, state: ConnectionState, request: Request) -> None:
        """Run one request; every failure becomes an ``error`` reply with a documented code, unless the request
        was answered already (one reply per request, always: what fails after it is logged)."""
        replies = state.replies
        try:
            await self._route(state, request)
        except Exception as error:  # noqa: BLE001 - every failure becomes one reply; _refuse logs the unexpected ones
            if state.replies != replies:
                log.warning("%s %s failed after its reply was sent: %r", request.TYPE, request.id, error)
                return
            self._refuse(state, request, error)

    @staticmethod
    def _refuse(state: ConnectionState, request: Request, error: Exception) -> None:
        """The ``error`` reply for a request that failed before it was answered."""
        if isinstance(error, ServiceError):
            race_journal.request_refused(request, state.player, error.code)
            state.send(Error(id=request.id, code=error.code.value, message=error.message, field=error.field, expected=error.expected))
        elif isinstance(error, StoreUnavailable):
            log.warning("store unavailable during %s: %s", request.TYPE, error)
            race_journal.request_refused(request, state.player, ErrorCode.UNAVAILABLE)
            state.send(Error(id=request.id, code=ErrorCode.UNAVAILABLE, message="the store is unavailable; try again"))
        else:
            log.error("internal error handling %s", request.TYPE, exc_info=error)
            race_journal.request_refused(request, state.player, ErrorCode.INTERNAL_ERROR)
            state.send(Error(id=request.id, code=ErrorCode.INTERNAL_ERROR, message="internal server error"))

    async def disconnect(self, state: ConnectionState, *, going_away: bool = False, deliberate: bool = False) -> None:
        """Forget a closed connection's subscriptions and drop its presence leases (the seats it played go away), and
        let go of its open races (see :meth:`LobbyService.disconnect`): ``deliberate`` when the client closed it,
        ``going_away`` when this server shuts down."""
        subscriptions, state.subscriptions = state.subscriptions, {}
        for race_id, subscription in subscriptions.items():
            self.hub.unsubscribe(subscription)
            try:
                await self.presence.leave(race_id, subscription.viewer_slot, state.connection_id)
            except StoreError as error:
                log.warning("presence: leaving race %s failed (%s); the lease will expire", race_id, error)
        if state.lobby_watcher is not None:
            self.lobby.feed.unwatch(state.lobby_watcher)
            state.lobby_watcher = None
        await self._leave_arenas(state)
        player = state.session.player if state.session is not None else None
        try:
            await self.lobby.lobby.disconnect(state.owner, player, going_away=going_away, deliberate=deliberate)
        except Exception:  # the heartbeat sweep closes what could not be left now
            log.warning("leaving the open races of a closed connection failed", exc_info=True)

    async def _route(self, state: ConnectionState, request: Request) -> None:
        refusal = self.door.refuse_now(request) if self.door is not None else None
        if refusal is not None:
            raise refusal
        if isinstance(request, Hello):
            await self._hello(state, request)
            return
        session = self._session_for(state, request)
        await HANDLERS[type(request)](self, state, session, request)

    # --- one handler per request type (registered in HANDLERS by @handles) ---------------------------

    @handles(Create)
    async def _create(self, state: ConnectionState, session: Session, request: Create) -> None:
        await self._seat(state, request.id, await self.lobby.lobby.create(session.identity, request.settings, state.owner))

    @handles(Join)
    async def _join(self, state: ConnectionState, session: Session, request: Join) -> None:
        seated = await self.lobby.lobby.join(request.race, session.identity, accept_delay=request.accept_delay)
        await self._seat(state, request.id, seated)

    @handles(JoinInvite)
    async def _join_invite(self, state: ConnectionState, session: Session, request: JoinInvite) -> None:
        seated = await self.lobby.lobby.join_invite(request.code, session.identity, state.address, accept_delay=request.accept_delay)
        await self._seat(state, request.id, seated)

    @handles(Leave)
    async def _leave(self, state: ConnectionState, session: Session, request: Leave) -> None:
        await self.lobby.lobby.leave(request.race, session.player, state.owner)
        await self._unsubscribe(state, request.race)  # no longer seated: its presence lease must not hold the seat
        state.send(Ok(id=request.id, race=request.race))

    @handles(QuickMatch)
    async def _quick_match(self, state: ConnectionState, session: Session, request: QuickMatch) -> None:
        seated, queued = await self.lobby.quick_match.quick_match(session.identity, request.settings, state.owner)
        if queued:
            await self._keep_session(state, seated.info.race)
            reply = Queued(id=request.id, race=seated.info)
            await self._subscribe(state, seated.info.race, seated.slot, 0, seated_at=seated.info.event_seq, reply=reply)

            async def paired(moved: SeatedRace) -> None:  # a later rated pairing seated this player elsewhere
                await self._keep_session(state, moved.info.race)
                await self._subscribe(state, moved.info.race, moved.slot, 0, seated_at=moved.info.event_seq)

            state.owner.on_paired = paired
        else:
            await self._seat(state, request.id, seated)

    @handles(CancelQuickMatch)
    async def _cancel_quick_match(self, state: ConnectionState, session: Session, request: CancelQuickMatch) -> None:
        await self.lobby.quick_match.cancel(session.player, state.owner)
        state.send(Ok(id=request.id))

    @handles(Rematch)
    async def _rematch(self, state: ConnectionState, session: Session, request: Rematch) -> None:
        rematch = await self.lobby.rematch.rematch(request.race, session.player)
        if rematch is None:
            state.send(Ok(id=request.id, race=request.race))
        else:
            await self._seat(state, request.id, rematch)

    @handles(WatchLobby)
    async def _watch_lobby(self, state: ConnectionState, session: Session, request: WatchLobby) -> None:
        """Reply with the lobby list, then send its changes (a second ``watch_lobby`` starts over)."""
        if state.lobby_watcher is not None:
            self.lobby.feed.unwatch(state.lobby_watcher)
        watcher = state.lobby_watcher = LobbyWatcher(state.send)

        def reply(races: list[LobbyEntry]) -> None:
            state.send(LobbySnapshot(id=request.id, races=races))

        try:
            await self.lobby.feed.watch(watcher, reply)
        except BaseException:
            state.lobby_watcher = None
            raise

    @handles(UnwatchLobby)
    async def _unwatch_lobby(self, state: ConnectionState, session: Session, request: UnwatchLobby) -> None:
        if state.lobby_watcher is not None:
            self.lobby.feed.unwatch(state.lobby_watcher)
            state.lobby_watcher = None
        state.send(Ok(id=request.id))

    @handles(MoveRequest)
    async def _move(self, state: ConnectionState, session: Session, request: MoveRequest) -> None:
        self._refuse_spectator(state, request.race)
        outcome = await self.races.move(session, request.race, seq=request.seq, move_id=request.move_id, text=request.move)
        state.send(project(outcome, Moved, id=request.id))
        own = state.subscriptions.get(request.race)
        if outcome.event is not None and own is not None and own.viewer_slot is not SPECTATOR:
            self.hub.deliver_next(own, outcome.event)  # the mover's own event, in the same write as the reply
        metrics.move_stored(outcome.duplicate)

    @handles(EmoteRequest)
    async def _emote(self, state: ConnectionState, session: Session, request: EmoteRequest) -> None:
        self._refuse_spectator(state, request.race)
        if not state.emotes.allow():
            raise ServiceError(ErrorCode.EMOTE_LIMIT, f"at most {EMOTE_BURST} emotes at once, then one every {1 / EMOTE_RATE_PER_SECOND:.0f} s")
        await self.races.emote(request.race, session.player, request.phrase)
        state.send(Ok(id=request.id, race=request.race))

    @handles(OnlineRequest)
    async def _online(self, state: ConnectionState, session: Session, request: OnlineRequest) -> None:
        counts = self.online.totals()
        state.send(Online(id=request.id, online=counts.online, racing=counts.racing))

    @handles(Resign)
    async def _resign(self, state: ConnectionState, session: Session, request: Resign) -> None:
        self._refuse_spectator(state, request.race)
        await self.races.end_attempt(session, request.race, AttemptState.RESIGNED)
        state.send(Ok(id=request.id, race=request.race))

    @handles(Stuck)
    async def _stuck(self, state: ConnectionState, session: Session, request: Stuck) -> None:
        self._refuse_spectator(state, request.race)
        await self.races.end_attempt(session, request.race, AttemptState.STUCK)
        state.send(Ok(id=request.id, race=request.race))

    @handles(Sync)
    async def _sync(self, state: ConnectionState, session: Session, request: Sync) -> None:
        seated, line = await self.races.sync(session, request.race)
        await self._keep_session(state, request.race)
        reply = Synced(
            id=request.id, race=seated.info, slot=seated.slot, moves=line.actions, redeal_columns=line.redeal_columns, deal=line.deal
        )
        # An ``after`` beyond the race's last event (a seq of another race, or events a failover lost) would wait for
        # event after+1 and miss every event before it: the stream starts after the reply's race instead.
        after = min(request.after, seated.info.event_seq)
        await self._subscribe(state, request.race, seated.slot, after, seated_at=seated.info.event_seq, reply=reply)
        await self.lobby.lobby.adopt(state.owner, seated.record, session.player)

    @handles(LiveRaces)
    async def _live_races(self, state: ConnectionState, session: Session, request: LiveRaces) -> None:
        state.send(RaceList(id=request.id, races=await self.spectate.live_races(request.limit)))

    @handles(Watch)
    async def _watch(self, state: ConnectionState, session: Session, request: Watch) -> None:
        self._check_watch_rate(state)
        current = state.subscriptions.get(request.race)
        if current is not None and current.viewer_slot is not SPECTATOR:
            raise ServiceError(ErrorCode.ALREADY_SEATED, "this connection plays in this race and receives its events already")
        watched = sum(1 for subscription in state.subscriptions.values() if subscription.viewer_slot is SPECTATOR)
        if current is None and watched >= MAX_WATCHED_PER_CONNECTION:
            raise ServiceError(ErrorCode.WATCH_LIMIT, f"a connection watches at most {MAX_WATCHED_PER_CONNECTION} races at once")
        snapshot = await self.spectate.watch(request.race)
        reply = Watching(
            id=request.id, race=snapshot.info, boards=snapshot.boards, as_of=snapshot.as_of, delay_ms=snapshot.delay_ms, deal=snapshot.deal,
            status_now=snapshot.status_now,
        )
        after = snapshot.info.event_seq if request.after is None else min(request.after, snapshot.info.event_seq)
        await self._subscribe(state, request.race, SPECTATOR, after, delay_ms=snapshot.delay_ms, reply=reply)

    @handles(Unwatch)
    async def _unwatch(self, state: ConnectionState, session: Session, request: Unwatch) -> None:
        self._check_watch_rate(state)
        watching = state.subscriptions.get(request.race)
        if watching is not None and watching.viewer_slot is SPECTATOR:
            await self._unsubscribe(state, request.race)
        state.send(Ok(id=request.id, race=request.race))

    @handles(GetAnalysis)
    async def _get_analysis(self, state: ConnectionState, session: Session, request: GetAnalysis) -> None:
        analysis = await self.analyst.analysis(request.race, session.player)
        state.send(AnalysisReport(id=request.id, race=request.race, analysis=analysis))

    @handles(SolveFrom)
    async def _solve_from(self, state: ConnectionState, session: Session, request: SolveFrom) -> None:
        found = await self.analyst.solve_from(request.race, request.slot, request.actions, player=session.player, address=state.address)
        budget_ms = round(self.analyst.solve_limits.seconds * 1000)
        state.send(
            Solution(
                id=request.id, race=request.race, slot=request.slot, actions=request.actions, verdict=found.verdict.value,
                line=found.line, budget_ms=budget_ms, cached=found.cached,
            )
        )

    @handles(Replay)
    async def _replay(self, state: ConnectionState, session: Session, request: Replay) -> None:
        page = await self.spectate.replay_page(request.race, request.after, request.limit, session.player)
        state.send(ReplayPage(id=request.id, race=page.info, events=page.events, complete=page.complete, signature=page.signature))

    @handles(Register)
    async def _register(self, state: ConnectionState, session: Session, request: Register) -> None:
        state.session, key = await self.players.accounts.register(
            session, request.handle, request.password, bot=request.bot, address=state.address
        )
        await self._logged_in(state, request.id, key)

    @handles(Login)
    async def _login(self, state: ConnectionState, session: Session, request: Login) -> None:
        state.session = await self.players.accounts.login(session, request.handle, request.password, state.address)
        await self._logged_in(state, request.id, None)

    @handles(Logout)
    async def _logout(self, state: ConnectionState, session: Session, request: Logout) -> None:
        await self.sessions.log_out(session)
        state.session = None  # this connection says hello again (with no token: a new session) to go on
        state.send(Ok(id=request.id))

    @handles(ChangePassword)
    async def _change_password(self, state: ConnectionState, session: Session, request: ChangePassword) -> None:
        await self.players.accounts.change_password(session, request.password, request.new_password, state.address)
        state.send(Ok(id=request.id))

    @handles(LeaderboardRequest)
    async def _leaderboard(self, state: ConnectionState, session: Session, request: LeaderboardRequest) -> None:
        views = self.players.views
        entries, total, next_page = await views.leaderboard(request.profile, request.limit, offset=request.offset, after=request.after)
        own = own_rating = None
        if session.account is not None:
            own = await views.own_line(request.profile, session.player)
            own_rating = await views.rating(request.profile, session.player)
        state.send(
            Leaderboard(id=request.id, profile=request.profile, entries=entries, total=total, own=own, own_rating=own_rating, next=next_page)
        )

    @handles(HistoryRequest)
    async def _history(self, state: ConnectionState, session: Session, request: HistoryRequest) -> None:
        account = await self._whose(session, request.handle)
        items, total, next_page = await self.players.views.history(account.player, request.limit, offset=request.offset, before=request.before)
        state.send(History(id=request.id, handle=account.handle, items=items, total=total, next=next_page))

    @handles(StatsRequest)
    async def _stats(self, state: ConnectionState, session: Session, request: StatsRequest) -> None:
        account = await self._whose(session, request.handle)
        profiles = await self.players.views.stats(account.player)
        state.send(Stats(id=request.id, handle=account.handle, bot=account.bot, profiles=profiles))

    @handles(SummonBot)
    async def _summon_bot(self, state: ConnectionState, session: Session, request: SummonBot) -> None:
        """Seat a practice bot in a race this connection opened and holds waiting (see server/bot_host.py)."""
        if request.race not in state.owner.races:
            raise ServiceError(ErrorCode.NOT_SEATED, "only the creator of a waiting race, on the connection that opened it, may call a bot into it")
        invite = (await self.races.record(request.race)).invite  # a private race seats its bot by its code too
        await self.bots.summon(session.player, request.race, request.level, invite=invite)
        state.send(Ok(id=request.id, race=request.race))

    @handles(GhostRace)
    async def _ghost_race(self, state: ConnectionState, session: Session, request: GhostRace) -> None:
        """Open a ghost race (server/services/ghost.py) and seat its ghost (server/bot_host.py)."""
        opened = await self.ghosts.open(session, request, state.owner)
        line = opened.line
        try:
            await self.bots.send_ghost(session.player, opened.invite, line.name, line.moves, line.times, line.end_ms)
        except ServiceError:
            await self.lobby.lobby.leave(opened.seated.info.race, session.player, state.owner)
            raise
        await self._seat(state, request.id, opened.seated)

    # --- arena tournaments (server/services/arena.py) ------------------------------------------------

    @handles(ArenaCreate)
    async def _arena_create(self, state: ConnectionState, session: Session, request: ArenaCreate) -> None:
        if session.account is None:
            raise ServiceError(ErrorCode.ACCOUNT_REQUIRED, "arenas are opened by registered players: register or log in first")
        if not request.private:
            raise ServiceError(ErrorCode.BAD_FIELD, "a player's arena is private (shared by its link): listed arenas are the operator's", field="private")
        start_at = await self.races.now_ms() + request.starts_in * 1000
        arena = await self.arenas.create(
            request.name, start_at, request.minutes * 60_000, request.time_limit, rated=request.rated, max_players=request.max_players
        )
        state.send(ArenaReply(id=request.id, arena=await self.arenas.info(arena), standings=[]))

    @handles(ArenaJoin)
    async def _arena_join(self, state: ConnectionState, session: Session, request: ArenaJoin) -> None:
        if session.account is None:
            raise ServiceError(ErrorCode.ACCOUNT_REQUIRED, "arenas are for registered players: register or log in first")
        rating = await self.players.views.rating(ARENA_PROFILE, session.player)
        await self.arenas.join(request.arena, session.identity, DEFAULT_RATING if rating is None else float(rating.rating))
        self.arenas.listen(request.arena, session.player, state.send)
        state.arenas.add(request.arena)
        state.send(ArenaReply(id=request.id, arena=await self.arenas.info(request.arena), standings=await self.arenas.lines(request.arena)))

    @handles(ArenaPause)
    async def _arena_pause(self, state: ConnectionState, session: Session, request: ArenaPause) -> None:
        await self.arenas.pause(request.arena, session.player)
        state.send(Ok(id=request.id))

    @handles(ArenaBerserk)
    async def _arena_berserk(self, state: ConnectionState, session: Session, request: ArenaBerserk) -> None:
        await self.arenas.berserk(request.arena, request.race, session.player)
        state.send(Ok(id=request.id, race=request.race))

    @handles(ArenaWatch)
    async def _arena_watch(self, state: ConnectionState, session: Session, request: ArenaWatch) -> None:
        info = await self.arenas.info(request.arena)
        self.arenas.watch(request.arena, state.send)
        state.watched_arenas.add(request.arena)
        state.send(ArenaReply(id=request.id, arena=info, standings=await self.arenas.lines(request.arena)))

    @handles(ArenaUnwatch)
    async def _arena_unwatch(self, state: ConnectionState, session: Session, request: ArenaUnwatch) -> None:
        self.arenas.unwatch(request.arena, state.send)
        state.watched_arenas.discard(request.arena)
        state.send(Ok(id=request.id))

    @handles(ArenaList)
    async def _arena_list(self, state: ConnectionState, session: Session, request: ArenaList) -> None:
        state.send(replace(await self.arenas.listed(), id=request.id))

    @handles(ArenaRecordRequest)
    async def _arena_record(self, state: ConnectionState, session: Session, request: ArenaRecordRequest) -> None:
        """The arena's signed record (server/services/arena_record.py), to anyone."""
        state.send(await self.arena_records.record(request.id, request.arena))

    @handles(ArenaStandingsRequest)
    async def _arena_standings(self, state: ConnectionState, session: Session, request: ArenaStandingsRequest) -> None:
        state.send(ArenaReply(id=request.id, arena=await self.arenas.info(request.arena), standings=await self.arenas.lines(request.arena)))

    async def _leave_arenas(self, state: ConnectionState) -> None:
        """A closed connection's arenas: its player is paused in those it has no other connection here listening to."""
        player = state.player
        for watched in state.watched_arenas:
            self.arenas.unwatch(watched, state.send)
        state.watched_arenas = set()
        arenas, state.arenas = state.arenas, set()
        for arena in arenas:
            if player is not None and self.arenas.forget(arena, player, state.send):
                try:
                    await self.arenas.pause(arena, player)
                except StoreError:
                    log.warning("pausing %s in arena %s failed; it may be paired while away", player, arena)

    # --- the daily deal (server/services/daily.py) -----------------------------------------------------

    @handles(DailyRequest)
    async def _daily(self, state: ConnectionState, session: Session, request: DailyRequest) -> None:
        state.send(replace(await self.daily.info(session, request.day), id=request.id))

    @handles(DailyStart)
    async def _daily_start(self, state: ConnectionState, session: Session, request: DailyStart) -> None:
        state.send(replace(await self.daily.start(session, request.day), id=request.id))

    @handles(DailyMove)
    async def _daily_move(self, state: ConnectionState, session: Session, request: DailyMove) -> None:
        state.send(replace(await self.daily.move(session, request.attempt, request.seq, request.move), id=request.id))

    @handles(DailyStop)
    async def _daily_stop(self, state: ConnectionState, session: Session, request: DailyStop) -> None:
        state.send(replace(await self.daily.stop_attempt(session, request.attempt), id=request.id))

    @handles(DailyBoardRequest)
    async def _daily_board(self, state: ConnectionState, session: Session, request: DailyBoardRequest) -> None:
        state.send(replace(await self.daily.board(session, request.day, request.offset, request.limit), id=request.id))

    @handles(DailyReplayRequest)
    async def _daily_replay(self, state: ConnectionState, session: Session, request: DailyReplayRequest) -> None:
        state.send(replace(await self.daily.replay(session, request.day, request.handle), id=request.id))

    @handles(DailyArchiveRequest)
    async def _daily_archive(self, state: ConnectionState, session: Session, request: DailyArchiveRequest) -> None:
        state.send(replace(await self.daily.archive(session, request.offset, request.limit), id=request.id))

    # --- helpers ---------------------------------------------------------------------------------------

    def _check_watch_rate(self, state: ConnectionState) -> None:
        """Watch churn is refused past its budgets, the connection's and its address's (over all its connections):
        each watch costs a snapshot and a catch-up of the race's events."""
        if not state.watches.allow():
            raise ServiceError(
                ErrorCode.RATE_LIMITED,
                f"watch and unwatch at most {WATCH_BURST} at once, then {WATCH_RATE_PER_SECOND:g} a second",
                field="type",
            )
        if not self.address_watches.allow(state.address):
            budget = self.address_watches
            raise ServiceError(
                ErrorCode.RATE_LIMITED,
                f"your address may watch and unwatch at most {budget.burst} at once, then {budget.rate:g} a second (all its connections)",
                field="type",
            )

    async def _logged_in(self, state: ConnectionState, request_id: int, key: str | None) -> None:
        """Reply ``account``: the connection's session is the account's from now on (seen on its address)."""
        account = state.session
        assert account is not None and account.account is not None
        await self.players.books.seen(account.player, state.address)
        state.send(
            AccountReply(
                id=request_id, handle=account.account, player=account.player, name=account.name, bot=account.bot, token=account.token, key=key
            )
        )

    @staticmethod
    def _refuse_spectator(state: ConnectionState, race_id: str) -> None:
        """``spectating`` when this connection watches the race: a spectator cannot act in it."""
        watching = state.subscriptions.get(race_id)
        if watching is not None and watching.viewer_slot is SPECTATOR:
            raise ServiceError(ErrorCode.SPECTATING, "this connection watches the race; spectators cannot act in it")

    async def _hello(self, state: ConnectionState, hello: Hello) -> None:
        if state.session is not None:
            raise ServiceError(ErrorCode.ALREADY_HELLO, "this connection already said hello")
        if hello.protocol != PROTOCOL_VERSION:
            raise ServiceError(
                ErrorCode.UNSUPPORTED_PROTOCOL, f"this server speaks protocol {PROTOCOL_VERSION} only", field="protocol"
            )
        session = await self.sessions.hello(hello.name, hello.token, state.address)
        if self.door is not None:
            await self.door.admit(session.player)
        state.session = session
        state.owner.player = session.player
        if session.account is not None:
            await self.players.books.seen(session.player, state.address)
        state.send(
            Welcome(
                id=hello.id,
                protocol=PROTOCOL_VERSION,
                token=state.session.token,
                player=state.session.player,
                name=state.session.name,
                server_time=await self.races.now_ms(),
                account=state.session.account,
                bot=state.session.bot,
            )
        )

    async def _whose(self, session: Session, handle: str | None) -> AccountRecord:
        """The account of ``handle``, or the session's own (``unknown_account`` if there is none)."""
        if handle is None and session.account is None:
            raise ServiceError(ErrorCode.UNKNOWN_ACCOUNT, "anonymous players keep no history: name a handle, or log in", field="handle")
        return await self.players.views.account(handle or session.account or "")

    @staticmethod
    def _session_for(state: ConnectionState, request: Request) -> Session:
        """The connection's session, provided the request carries its token (not another player's)."""
        if state.session is None:
            raise ServiceError(ErrorCode.HELLO_REQUIRED, "say hello first")
        token = getattr(request, "token", None)
        if not isinstance(token, str) or not secrets.compare_digest(token.encode(), state.session.token.encode()):
            raise ServiceError(ErrorCode.BAD_TOKEN, "the token is not this connection's session token", field="token")
        return state.session

    async def _seat(self, state: ConnectionState, request_id: int, seated: SeatedRace) -> None:
        """Reply ``seated`` (once the session is kept for the long lifetime) and deliver the race's events from the first on."""
        await self._keep_session(state, seated.info.race)
        reply = Seated(id=request_id, race=seated.info, slot=seated.slot)
        await self._subscribe(state, seated.info.race, seated.slot, 0, seated_at=seated.info.event_seq, reply=reply)

    async def _keep_session(self, state: ConnectionState, race_id: str) -> None:
        """A session that took (or, syncing, holds) a seat in ``race_id`` is kept for the long lifetime: it must
        outlive the race for reconnects (and remembers the race: ``login`` must not orphan the seat)."""
        assert state.session is not None
        state.session = await self.sessions.keep(state.session, race_id)

    async def _subscribe(
        self,
        state: ConnectionState,
        race_id: str,
        slot: int | None,
        after_seq: int,
        *,
        delay_ms: int = 0,
        seated_at: int = 0,
        reply: Message | None = None,
    ) -> None:
        """Deliver the race's events to this connection from ``after_seq`` on, as seat ``slot`` or a spectator (None).

        Replaces an older subscription to the race in another role, and holds the connection's presence lease for it.
        One in the same role is kept as it is: its stream goes on where it is, so no event reaches the connection twice.
        A player's subscription ends when another player takes the seat it held at event ``seated_at`` (it left, on
        whatever connection).

        ``reply`` (the request's answer) is sent once the presence lease is taken and before the first event: a
        player who has its ``synced`` counts as connected, so a race decided (or a grace period ending) after that
        reply cannot miss its return. It cannot fail: a lease that cannot be written now is written by the next
        renewal, and the hub reads the events in the background (retrying while Redis is unavailable).
        """
        assert state.session is not None
        player = state.session.player
        current = state.subscriptions.get(race_id)
        replaced: Subscription | None = None
        subscription = current
        if current is None or current.viewer_slot != slot:
            if current is not None:
                del state.subscriptions[race_id]
                self.hub.unsubscribe(current)
                replaced = current
            fresh = Subscription(
                race_id,
                slot,
                state.send,
                after_seq,
                delay_ms=delay_ms,
                clock=self.clock,
                room=state.room,
                seat=None if slot is None else (player, seated_at),
                on_unseated=lambda: self._in_background(self._unsubscribe_if(state, fresh)),
            )
            state.subscriptions[race_id] = subscription = fresh  # registered first: closing the connection drops the lease
        try:
            if replaced is not None:
                await self.presence.leave(race_id, replaced.viewer_slot, state.connection_id)
            await self.presence.enter(race_id, slot, state.connection_id, player)
            if state.subscriptions.get(race_id) is not subscription:  # the connection closed meanwhile
                await self.presence.leave(race_id, slot, state.connection_id)
                return
        except StoreError as error:
            log.warning("presence in race %s not written now (%s); the lease renewal retries", race_id, error)
        if reply is not None:
            state.send(reply)
        if subscription is not current:
            assert subscription is not None
            self.hub.subscribe(subscription)

    def _in_background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _unsubscribe_if(self, state: ConnectionState, subscription: Subscription) -> None:
        """Drop ``subscription`` (its player left the seat, maybe on another connection) if it is still the
        connection's subscription to its race."""
        if state.subscriptions.get(subscription.race_id) is subscription:
            try:
                await self._unsubscribe(state, subscription.race_id)
            except StoreError as error:
                log.warning("presence: leaving race %s failed (%s); the lease will expire", subscription.race_id, error)

    async def _unsubscribe(self, state: ConnectionState, race_id: str) -> None:
        """Stop delivering the race's events to this connection and drop its presence lease there."""
        subscription = state.subscriptions.pop(race_id, None)
        if subscription is not None:
            self.hub.unsubscribe(subscription)
            await self.presence.leave(race_id, subscription.viewer_slot, state.connection_id)
