"""The async client of the race protocol (docs/PROTOCOL.md), used by tests, bots and the terminal client.

    async with await RaceClient.connect("ws://127.0.0.1:8765") as client:
        await client.hello("Ann")
        seated = await client.create(RaceSettings(seed=7))
        async for event in client.events():
            ...

Requests return their reply or raise :class:`ServerError` with the server's
code. Race events arrive through :meth:`RaceClient.events` in sequence order,
lobby changes too while the client watches the lobby (:meth:`RaceClient.watch_lobby`);
:attr:`RaceClient.lobby` is the lobby list kept up to date from them.
The client keeps each race's next action number and gives every move a
unique ``move_id``, so :meth:`RaceClient.move` can simply be called again
after a lost reply: the server applies a move id once. A move answered
``unavailable`` (outcome unknown: the store failed) is resent by the client
itself with the same ``move_id`` and ``seq``, a few times with back-off
(:attr:`RaceClient.move_retry_delays`), before the error is raised (the move
then stays pending: :meth:`RaceClient.reconnect` resends it).

When the connection drops (or the server shuts down: ``ServerShutdown``, close
1001), :meth:`RaceClient.reconnect` opens a new one — to the same or another
server process — says hello with the same token, syncs every race it plays
and re-watches every race it watches from the last event it received, and
resends a move whose reply never came (same ``move_id``: applied at most once).

Spectators: :meth:`live_races`, :meth:`watch` (a snapshot, then delayed
events through :meth:`events`), :meth:`unwatch`; finished races:
:meth:`replay` iterates the full event log, optionally at the original pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from ssl import SSLContext
from types import TracebackType
from typing import Any, Self, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from shared.protocol import (
    PROTOCOL_VERSION,
    AccountReply,
    AnalysisReport,
    ArenaBerserk,
    ArenaCreate,
    ArenaJoin,
    ArenaList,
    ArenaListReply,
    ArenaPaired,
    ArenaPause,
    ArenaRecordReply,
    ArenaRecordRequest,
    ArenaReply,
    ArenaStandings,
    ArenaStandingsRequest,
    ArenaUnwatch,
    ArenaWatch,
    CancelQuickMatch,
    ChangePassword,
    Create,
    Daily,
    DailyArchive,
    DailyArchiveRequest,
    DailyAttempt,
    DailyBoard,
    DailyBoardRequest,
    DailyMove,
    DailyMoved,
    DailyReplay,
    DailyReplayRequest,
    DailyRequest,
    DailyStart,
    DailyStop,
    Emote,
    EmoteRequest,
    Error,
    GetAnalysis,
    GhostRace,
    GhostSource,
    Hello,
    History,
    HistoryRequest,
    Join,
    JoinInvite,
    Leaderboard,
    LeaderboardRequest,
    Leave,
    LiveRaces,
    LobbyAdded,
    LobbyChanged,
    LobbyEntry,
    LobbyEvent,
    LobbyRemoved,
    LobbyReset,
    LobbySnapshot,
    Login,
    Logout,
    Message,
    Moved,
    MoveRequest,
    Notice,
    Ok,
    Online,
    OnlineRequest,
    ProtocolError,
    Queued,
    QuickMatch,
    RaceClosed,
    RaceEvent,
    RaceInfo,
    RaceList,
    RaceSettings,
    Register,
    Rematch,
    Replay,
    ReplayPage,
    Request,
    Resign,
    Seated,
    ServerShutdown,
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
    decode_server_message,
    encode,
    pack,
)

OUTCOME_UNKNOWN = "unavailable"
"""The error code after which a request may or may not have been applied (docs/PROTOCOL.md): moves are resent."""
MOVE_RETRY_DELAYS = (0.1, 0.3, 1.0, 2.0)
"""Back-off before each resend of a move answered ``unavailable`` (3.4 s in all, then the error is raised)."""

M = TypeVar("M", bound=Message)
N = TypeVar("N", bound=Message)


class ServerError(Exception):
    """The server refused a request (or a frame): its ``code``, message and optional ``field``/``expected``."""

    def __init__(self, error: Error) -> None:
        super().__init__(f"[{error.code}] {error.message}")
        self.error = error
        self.code = error.code
        self.field = error.field
        self.expected = error.expected


class ConnectionLost(Exception):
    """The connection closed; ``code`` and ``reason`` are the WebSocket close code and reason, if any."""

    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"connection closed ({code}) {reason}".strip())
        self.code = code
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Unsolicited:
    """An ``error`` the server sent without a request id (a bad frame, a rate-limit notice)."""

    error: Error


@dataclass(frozen=True, slots=True)
class Resumed:
    """What :meth:`RaceClient.reconnect` restored: each race played, each race watched, each move resent."""

    synced: dict[str, Synced] = field(default_factory=dict)
    watching: dict[str, Watching] = field(default_factory=dict)
    resent: dict[str, Moved] = field(default_factory=dict)
    lobby: LobbySnapshot | None = None
    """The lobby list again, if the client watched the lobby (:attr:`RaceClient.lobby` is replaced by it)."""


Incoming = RaceEvent | LobbyEvent | Unsolicited | ServerShutdown | Notice | ArenaPaired | ArenaStandings
"""What :meth:`RaceClient.events` yields."""


class RaceClient:
    """A session on a race server, over one connection at a time (see :meth:`reconnect`)."""

    def __init__(self, connection: ClientConnection, *, url: str | None = None, request_timeout: float = 10.0) -> None:
        self.connection = connection
        self.url = url
        self.request_timeout = request_timeout
        self.session: Welcome | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Message]] = {}
        self._events: asyncio.Queue[Incoming | ConnectionLost] = asyncio.Queue()
        self._next_seq: dict[str, int] = {}
        self.last_seq: dict[str, int] = {}
        """Per race, the ``seq`` of the last event received (what :meth:`reconnect` resumes after)."""
        self._playing: set[str] = set()
        self._watching: set[str] = set()
        self._unacknowledged: dict[str, MoveRequest] = {}
        """Per race, the move sent whose reply has not arrived (resent by :meth:`reconnect`)."""
        self.move_retry_delays: tuple[float, ...] = MOVE_RETRY_DELAYS
        """Seconds to wait before each resend of a move answered ``unavailable``; one resend per entry."""
        self.moves_resent = 0
        """How many times a move was resent after ``unavailable`` (for tools and tests)."""
        self._closed_here = False
        self.lobby: dict[str, LobbyEntry] = {}
        """The open races while watching the lobby (race id -> entry, oldest first), updated as changes arrive."""
        self._watching_lobby = False
        self.tls: SSLContext | None = None
        """The TLS context of :meth:`connect`, used again by :meth:`reconnect` (None: the defaults)."""
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls, url: str, *, open_timeout: float = 10.0, request_timeout: float = 10.0, tls: SSLContext | None = None
    ) -> RaceClient:
        """Open a connection (no ``hello`` yet); ``tls`` replaces the default certificate checks of a ``wss://``
        URL (kept for :meth:`reconnect`)."""
        client = cls(await cls._open(url, open_timeout, tls), url=url, request_timeout=request_timeout)
        client.tls = tls
        return client

    @staticmethod
    async def _open(url: str, open_timeout: float, tls: SSLContext | None = None) -> ClientConnection:
        if tls is None:  # websockets' own default: a verified context for wss://, none for ws://
            return await connect(url, open_timeout=open_timeout, max_size=1 << 20, compression=None)
        return await connect(url, open_timeout=open_timeout, max_size=1 << 20, compression=None, ssl=tls)

    async def reconnect(self, url: str | None = None, *, open_timeout: float = 10.0) -> Resumed:
        """Resume this session on a new connection (to ``url``, default the last one) after a drop or a shutdown.

        Says hello with the session's token, syncs every race played and watches
        every race watched again, each from the last event received (events missed
        meanwhile arrive through :meth:`events`, in order, none twice), then resends
        any move whose reply never came with its ``move_id`` (applied at most once).
        """
        if self.session is None:
            raise RuntimeError("nothing to resume: say hello first")
        target = url or self.url
        if target is None:
            raise RuntimeError("no server URL to reconnect to")
        await self._stop_reading()
        self._closed_here = False
        self.connection = await self._open(target, open_timeout, self.tls)
        self.url = target
        self._events = _without_closings(self._events)
        self._reader = asyncio.create_task(self._read())
        await self.hello(self.session.name, self.session.token)
        resumed = Resumed()
        for race in sorted(self._playing):
            resumed.synced[race] = await self.sync(race, after=self.last_seq.get(race, 0))
        for race in sorted(self._watching):
            resumed.watching[race] = await self.watch(race, after=self.last_seq.get(race, 0))
        for race, pending in list(self._unacknowledged.items()):
            resumed.resent[race] = await self.move(race, pending.move, seq=pending.seq, move_id=pending.move_id)
        if self._watching_lobby:
            resumed = replace(resumed, lobby=await self.watch_lobby())
        return resumed

    async def close(self) -> None:
        """Close the connection (:meth:`follow` then ends instead of reconnecting)."""
        self._closed_here = True
        await self._stop_reading()

    async def _stop_reading(self) -> None:
        await self.connection.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        await self.close()

    # --- requests -----------------------------------------------------------------------------

    @property
    def token(self) -> str:
        """This session's token (after :meth:`hello`)."""
        if self.session is None:
            raise RuntimeError("say hello first")
        return self.session.token

    async def hello(self, name: str, token: str | None = None) -> Welcome:
        """Start a session (or resume the one of ``token``)."""
        self.session = await self.request(Hello(id=self._id(), protocol=PROTOCOL_VERSION, name=name, token=token), Welcome)
        return self.session

    async def create(self, settings: RaceSettings | None = None) -> Seated:
        """Open a race and take seat 0."""
        seated = await self.request(Create(id=self._id(), token=self.token, settings=settings or RaceSettings()), Seated)
        self._follow(seated.race.race, playing=True)
        return seated

    async def join(self, race: str, *, accept_delay: int | None = None) -> Seated:
        """Take seat 1 of a waiting race (``accept_delay``: the spectator delay, in seconds, accepted in a private
        race below the server's minimum; ``delay_not_accepted`` otherwise, its ``expected`` the race's delay)."""
        seated = await self.request(Join(id=self._id(), token=self.token, race=race, accept_delay=accept_delay), Seated)
        self._follow(race, playing=True)
        return seated

    async def join_invite(self, code: str, *, accept_delay: int | None = None) -> Seated:
        """Take seat 1 of a private race by its invite code (case and dashes do not matter); ``accept_delay`` as in :meth:`join`."""
        seated = await self.request(JoinInvite(id=self._id(), token=self.token, code=code, accept_delay=accept_delay), Seated)
        self._follow(seated.race.race, playing=True)
        return seated

    async def leave(self, race: str) -> Ok:
        """Give up a seat before the start (the creator closes the race; the second player frees its seat)."""
        reply = await self.request(Leave(id=self._id(), token=self.token, race=race), Ok)
        self._playing.discard(race)
        return reply

    async def watch_lobby(self) -> LobbySnapshot:
        """The open races now; their changes follow as lobby events (and keep :attr:`lobby` current)."""
        snapshot = await self.request(WatchLobby(id=self._id(), token=self.token), LobbySnapshot)
        self.lobby = {entry.race: entry for entry in snapshot.races}
        self._watching_lobby = True
        return snapshot

    async def unwatch_lobby(self) -> Ok:
        """Stop receiving lobby changes."""
        reply = await self.request(UnwatchLobby(id=self._id(), token=self.token), Ok)
        self._watching_lobby = False
        return reply

    async def quick_match(self, settings: RaceSettings | None = None) -> Seated | Queued:
        """Race the next player asking for the same settings: ``seated`` if one was waiting, else ``queued`` (then
        ``player_joined`` and ``countdown`` arrive on the returned race once someone pairs with you)."""
        request = QuickMatch(id=self._id(), token=self.token, settings=settings or RaceSettings())
        reply = await self.request_either(request, Seated, Queued)
        self._follow(reply.race.race, playing=True)
        return reply

    async def cancel_quick_match(self) -> Ok:
        """Leave the quick-match queue (``not_queued`` if you were paired meanwhile)."""
        return await self.request(CancelQuickMatch(id=self._id(), token=self.token), Ok)

    async def emote(self, race: str, phrase: Emote) -> Ok:
        """Send the opponent one of the fixed phrases (an ``emote`` event to both players; never to live spectators).
        ``emote_limit`` past the connection's budget of 3 at once, then one every 5 s."""
        return await self.request(EmoteRequest(id=self._id(), token=self.token, race=race, phrase=phrase), Ok)

    async def rematch(self, race: str) -> Seated | Ok:
        """After a finished race: ``ok`` for an offer, ``seated`` in the new race once both players sent it.

        The player who offered first learns the new race from a ``rematch`` event: :meth:`sync` it to receive its events.
        """
        reply = await self.request_either(Rematch(id=self._id(), token=self.token, race=race), Seated, Ok)
        if isinstance(reply, Seated):
            self._follow(reply.race.race, playing=True)
        return reply

    async def move(self, race: str, move: str, *, seq: int | None = None, move_id: str | None = None) -> Moved:
        """Play an action (a move in notation, ``undo`` or ``redeal``); ``seq`` defaults to the next one."""
        request = MoveRequest(
            id=self._id(),
            token=self.token,
            race=race,
            seq=self._next_seq.get(race, 0) if seq is None else seq,
            move_id=move_id or uuid.uuid4().hex,
            move=move,
        )
        self._unacknowledged[race] = request
        delays = iter(self.move_retry_delays)
        while True:
            try:
                reply = await self.request(request, Moved)
                break
            except ServerError as error:
                if error.code != OUTCOME_UNKNOWN:
                    self._unacknowledged.pop(race, None)  # answered: nothing to resend
                    raise
                delay = next(delays, None)
                if delay is None:
                    raise  # still unknown: the move stays pending, and :meth:`reconnect` resends it
            await asyncio.sleep(delay)  # outcome unknown: the same move (move_id, seq) again, applied at most once
            self.moves_resent += 1
            request = replace(request, id=self._id())
            self._unacknowledged[race] = request
        self._unacknowledged.pop(race, None)
        self._next_seq[race] = reply.seq
        return reply

    async def undo(self, race: str) -> Moved:
        """Take back the last move (races with undo allowed; counted)."""
        return await self.move(race, "undo")

    async def resign(self, race: str) -> Ok:
        """End this attempt; the foundation count still counts."""
        return await self.request(Resign(id=self._id(), token=self.token, race=race), Ok)

    async def stuck(self, race: str) -> Ok:
        """Declare that this attempt can make no more progress."""
        return await self.request(Stuck(id=self._id(), token=self.token, race=race), Ok)

    async def sync(self, race: str, after: int = 0) -> Synced:
        """The race and own actions, and events after ``after`` from now on (after a reconnect)."""
        reply = await self.request(Sync(id=self._id(), token=self.token, race=race, after=after), Synced)
        self._next_seq[race] = len(reply.moves)
        self._follow(race, playing=True, after=min(after, reply.race.event_seq))  # as the server starts the stream
        return reply

    # --- accounts and players -------------------------------------------------------------------

    async def register(self, handle: str, password: str | None = None, *, bot: bool = False) -> AccountReply:
        """Register ``handle`` (with a password, or as a bot: the reply's ``key`` is its password, shown once) and log
        this session in to it: from now on it plays as the account (player id and name), also after a reconnect."""
        reply = await self.request(Register(id=self._id(), token=self.token, handle=handle, password=password, bot=bot), AccountReply)
        self._logged_in(reply)
        return reply

    async def login(self, handle: str, password: str) -> AccountReply:
        """Log this session in to a registered account (``bad_credentials``; ``rate_limited`` after repeated failures)."""
        reply = await self.request(Login(id=self._id(), token=self.token, handle=handle, password=password), AccountReply)
        self._logged_in(reply)
        return reply

    async def summon_bot(self, race: str, level: int = 3) -> Ok:
        """Have the server seat a practice bot of ``level`` (1–5) in this connection's waiting race; returns once it sits there."""
        return await self.request(SummonBot(id=self._id(), token=self.token, race=race, level=level), Ok)

    def _logged_in(self, reply: AccountReply) -> None:
        assert self.session is not None
        self.session = replace(self.session, token=reply.token, player=reply.player, name=reply.name, account=reply.handle, bot=reply.bot)

    async def logout(self) -> None:
        """End this session on the server (its token stops working everywhere); the connection then has no session
        until :meth:`hello` (without a token: a new one)."""
        await self.request(Logout(id=self._id(), token=self.token), Ok)
        self.session = None

    async def change_password(self, password: str, new_password: str) -> None:
        """Change the logged-in account's password (``bad_credentials`` if ``password`` is not the current one); every
        other session of the account ends, this one goes on."""
        await self.request(ChangePassword(id=self._id(), token=self.token, password=password, new_password=new_password), Ok)

    async def leaderboard(self, profile: str = "classic", *, limit: int = 20, offset: int = 0, after: str | None = None) -> Leaderboard:
        """The established players of ``profile`` by rating (best first), and this session's own line and rating;
        ``after``: a previous page's ``next``."""
        return await self.request(
            LeaderboardRequest(id=self._id(), token=self.token, profile=profile, limit=limit, offset=offset, after=after), Leaderboard
        )

    async def history(self, handle: str | None = None, *, offset: int = 0, limit: int = 20, before: str | None = None) -> History:
        """A player's finished races, newest first (``handle`` None: this session's account); ``before``: a previous
        page's ``next``."""
        return await self.request(
            HistoryRequest(id=self._id(), token=self.token, handle=handle, offset=offset, limit=limit, before=before), History
        )

    async def online(self) -> Online:
        """How many players are online and racing now, over every server process (a few seconds old at most)."""
        return await self.request(OnlineRequest(id=self._id(), token=self.token), Online)

    async def stats(self, handle: str | None = None) -> Stats:
        """A player's record and rating per profile (``handle`` None: this session's account)."""
        return await self.request(StatsRequest(id=self._id(), token=self.token, handle=handle), Stats)

    async def arena_create(
        self, name: str, *, minutes: int = 20, time_limit: int = 300, rated: bool = False, max_players: int | None = None, starts_in: int = 0,
        private: bool = True,
    ) -> ArenaReply:
        """Open a private arena tournament (a registered player's), starting now or ``starts_in`` seconds from now."""
        request = ArenaCreate(
            id=self._id(), token=self.token, name=name, minutes=minutes, time_limit=time_limit, rated=rated, max_players=max_players,
            starts_in=starts_in, private=private,
        )
        return await self.request(request, ArenaReply)

    async def arena_join(self, arena: str) -> ArenaReply:
        """Join an arena (or come back after a pause): ``arena_paired`` and ``arena_standings`` follow as events."""
        return await self.request(ArenaJoin(id=self._id(), token=self.token, arena=arena), ArenaReply)

    async def arena_pause(self, arena: str) -> Ok:
        """Stop being paired in an arena."""
        return await self.request(ArenaPause(id=self._id(), token=self.token, arena=arena), Ok)

    async def arena_berserk(self, arena: str, race: str) -> Ok:
        """Go berserk in one's arena race ``race`` before it starts (half the time limit)."""
        return await self.request(ArenaBerserk(id=self._id(), token=self.token, arena=arena, race=race), Ok)

    async def arena_watch(self, arena: str) -> ArenaReply:
        """Follow an arena without playing: ``arena_standings`` follow as events."""
        return await self.request(ArenaWatch(id=self._id(), token=self.token, arena=arena), ArenaReply)

    async def arena_unwatch(self, arena: str) -> Ok:
        """Stop following an arena (``arena_watch``)."""
        return await self.request(ArenaUnwatch(id=self._id(), token=self.token, arena=arena), Ok)

    async def arena_list(self) -> ArenaListReply:
        """The listed arenas: upcoming, running and the newest finished."""
        return await self.request(ArenaList(id=self._id(), token=self.token), ArenaListReply)

    async def arena_standings(self, arena: str) -> ArenaReply:
        """An arena and its standings."""
        return await self.request(ArenaStandingsRequest(id=self._id(), token=self.token, arena=arena), ArenaReply)

    async def arena_record(self, arena: str) -> ArenaRecordReply:
        """An arena's signed record: its table and each player's races (``flowergarden export --arena``)."""
        return await self.request(ArenaRecordRequest(id=self._id(), token=self.token, arena=arena), ArenaRecordReply)

    async def ghost_race(
        self, source: GhostSource, *, day: str | None = None, handle: str | None = None, race: str | None = None, slot: int = 0
    ) -> Seated:
        """Race a ghost: a recorded attempt (a finished day's by ``handle``, or seat ``slot`` of a finished ``race``)
        replayed at its pace in seat 1 of a new private, unrated race; the countdown starts at once."""
        request = GhostRace(id=self._id(), token=self.token, source=source, day=day, handle=handle, race=race, slot=slot)
        return await self.request(request, Seated)

    # --- the daily deal (docs/COMMUNITY.md) -----------------------------------------------------

    async def daily(self, day: str | None = None) -> Daily:
        """A day's daily deal (``day`` None: today): its commitment and, once the day is over, its reveal, leaderboard
        top and statistics; this session's own attempt and streaks."""
        return await self.request(DailyRequest(id=self._id(), token=self.token, day=day), Daily)

    async def daily_start(self, day: str | None = None) -> DailyAttempt:
        """Start or resume an attempt at a day's deal (today's: a registered player's one counted attempt)."""
        return await self.request(DailyStart(id=self._id(), token=self.token, day=day), DailyAttempt)

    async def daily_move(self, attempt: str, seq: int, move: str) -> DailyMoved:
        """Play one move of a daily attempt (``seq``: the moves made before it)."""
        return await self.request(DailyMove(id=self._id(), token=self.token, attempt=attempt, seq=seq, move=move), DailyMoved)

    async def daily_stop(self, attempt: str) -> DailyMoved:
        """End a daily attempt where it stands."""
        return await self.request(DailyStop(id=self._id(), token=self.token, attempt=attempt), DailyMoved)

    async def daily_board(self, day: str, *, offset: int = 0, limit: int = 20) -> DailyBoard:
        """A page of a finished day's leaderboard and its statistics."""
        return await self.request(DailyBoardRequest(id=self._id(), token=self.token, day=day, offset=offset, limit=limit), DailyBoard)

    async def daily_replay(self, day: str, handle: str | None = None) -> DailyReplay:
        """A counted attempt of ``day`` with its moves and their times (another's only once the day is over)."""
        return await self.request(DailyReplayRequest(id=self._id(), token=self.token, day=day, handle=handle), DailyReplay)

    async def daily_archive(self, *, offset: int = 0, limit: int = 31) -> DailyArchive:
        """The past days, newest first, with this account's own results (its calendar) and streaks."""
        return await self.request(DailyArchiveRequest(id=self._id(), token=self.token, offset=offset, limit=limit), DailyArchive)

    # --- spectating ---------------------------------------------------------------------------

    async def live_races(self, limit: int = 50) -> list[RaceInfo]:
        """The races being played now (countdown or running), latest first, with players and progress."""
        return (await self.request(LiveRaces(id=self._id(), token=self.token, limit=limit), RaceList)).races

    async def watch(self, race: str, after: int | None = None) -> Watching:
        """Spectate a race: the snapshot as of now minus its delay; its later events arrive through :meth:`events`."""
        reply = await self.request(Watch(id=self._id(), token=self.token, race=race, after=after), Watching)
        self._follow(race, playing=False, after=reply.race.event_seq if after is None else min(after, reply.race.event_seq))
        return reply

    async def unwatch(self, race: str) -> Ok:
        """Stop spectating a race."""
        reply = await self.request(Unwatch(id=self._id(), token=self.token, race=race), Ok)
        self._watching.discard(race)
        return reply

    async def replay_page(self, race: str, after: int = 0, limit: int | None = None) -> ReplayPage:
        """One page of a finished race's event log (``not_finished`` while it runs)."""
        request = Replay(id=self._id(), token=self.token, race=race, after=after) if limit is None else Replay(
            id=self._id(), token=self.token, race=race, after=after, limit=limit
        )
        return await self.request(request, ReplayPage)

    async def analysis(self, race: str) -> AnalysisReport:
        """The post-race analysis of a finished race (``analysis`` nil while the server computes it; an ``analysis``
        event follows on a connection that follows the race). ``not_finished`` while the race runs."""
        return await self.request(GetAnalysis(id=self._id(), token=self.token, race=race), AnalysisReport)

    async def solve_from(self, race: str, slot: int, actions: int) -> Solution:
        """The server's solver on a finished race's position: the line of the player in seat ``slot`` after its first
        ``actions`` actions (0: the deal). ``not_finished`` while the race runs; ``rate_limited`` past the server's
        budget (a cached answer is free)."""
        return await self.request(SolveFrom(id=self._id(), token=self.token, race=race, slot=slot, actions=actions), Solution)

    async def replay(self, race: str, *, speed: float | None = None) -> AsyncIterator[RaceEvent]:
        """Every event of a finished race in order, with every move of both players and its time (``at``).

        With ``speed`` the events come at the race's own pace (1.0), faster (2.0) or slower (0.5).
        """
        after, previous_at = 0, None
        while True:
            page = await self.replay_page(race, after)
            for event in page.events:
                if speed is not None and previous_at is not None:
                    await asyncio.sleep(max(0, event.at - previous_at) / 1000 / speed)
                previous_at = event.at
                yield event
            if page.complete or not page.events:
                return
            after = page.events[-1].seq

    def _follow(self, race: str, *, playing: bool, after: int = 0) -> None:
        """Remember how this session follows ``race`` (for :meth:`reconnect`)."""
        (self._playing if playing else self._watching).add(race)
        (self._watching if playing else self._playing).discard(race)
        self.last_seq[race] = max(self.last_seq.get(race, 0), after)

    async def request(self, message: Request, expect: type[M]) -> M:
        """Send a request and wait for its reply of type ``expect``; ServerError on an ``error`` reply."""
        reply = await self._exchange(message)
        if not isinstance(reply, expect):
            raise TypeError(f"expected {expect.TYPE}, got {reply.TYPE}")
        return reply

    async def request_either(self, message: Request, first: type[M], second: type[N]) -> M | N:
        """A request answered by one of two reply types."""
        reply = await self._exchange(message)
        if not isinstance(reply, first | second):
            raise TypeError(f"expected {first.TYPE} or {second.TYPE}, got {reply.TYPE}")
        return reply

    async def _exchange(self, message: Request) -> Message:
        """Send a request and wait for its reply; ServerError on an ``error`` reply."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiting[message.id] = future
        try:
            try:
                await self.connection.send(encode(message))
            except ConnectionClosed:
                raise self._lost() from None
            async with asyncio.timeout(self.request_timeout):
                reply = await future
        finally:
            self._waiting.pop(message.id, None)
        if isinstance(reply, Error):
            raise ServerError(reply)
        return reply

    async def send_raw(self, data: bytes | str | dict[str, Any]) -> None:
        """Send a frame as is (a map is packed first): for tests and tools probing the server."""
        await self.connection.send(pack(data) if isinstance(data, dict) else data)

    def _id(self) -> int:
        return next(self._ids)

    # --- incoming ------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[Incoming]:
        """Race events (and unsolicited errors, and a shutdown notice) in arrival order; ends when the connection closes."""
        while True:
            item = await self._events.get()
            if isinstance(item, ConnectionLost):
                self._events.put_nowait(item)
                return
            yield item

    async def next_event(self, timeout: float = 10.0) -> Incoming:
        """The next event; ConnectionLost if the connection closed, TimeoutError after ``timeout``."""
        async with asyncio.timeout(timeout):
            item = await self._events.get()
        if isinstance(item, ConnectionLost):
            self._events.put_nowait(item)
            raise item
        return item

    async def follow(self, urls: Sequence[str] | None = None, *, attempts: int = 10) -> AsyncIterator[Incoming | Resumed]:
        """Like :meth:`events`, but across connections: when the connection drops or the server shuts down,
        reconnect (trying ``urls`` in turn, default the current URL — behind a load balancer that reaches
        another process), yield the :class:`Resumed`, and go on with the events, none missed, none twice.

        Ends when :meth:`close` is called; raises ConnectionLost after ``attempts`` failed rounds.
        """
        while True:
            async for item in self.events():
                yield item
            if self._closed_here:
                return
            yield await self._reconnect_patiently(list(urls) if urls else [], attempts)

    async def _reconnect_patiently(self, urls: list[str], attempts: int) -> Resumed:
        candidates: list[str | None] = [*urls] or [None]
        for attempt in range(attempts):
            for url in candidates:
                try:
                    return await self.reconnect(url)
                except (OSError, ConnectionLost, WebSocketException):
                    continue
            await asyncio.sleep(min(0.1 * 2**attempt, 3.0))
        raise ConnectionLost(None, f"could not reconnect after {attempts} attempts")

    async def wait_for(self, kind: type[M], timeout: float = 10.0) -> M:
        """Skip events until one of type ``kind`` arrives."""
        async with asyncio.timeout(timeout):
            while True:
                event = await self.next_event(timeout)
                if isinstance(event, kind):
                    return event

    async def closed(self) -> ConnectionLost:
        """Wait until the connection closes; its close code and reason."""
        await asyncio.shield(self._reader)
        return self._lost()

    def _apply_lobby_change(self, event: LobbyEvent) -> None:
        if isinstance(event, LobbyAdded | LobbyChanged):
            self.lobby[event.entry.race] = event.entry
        elif isinstance(event, LobbyRemoved):
            self.lobby.pop(event.race, None)
        elif isinstance(event, LobbyReset):
            self.lobby = {entry.race: entry for entry in event.races}

    def _lost(self) -> ConnectionLost:
        return ConnectionLost(self.connection.close_code, self.connection.close_reason or "")

    def _deliver(self, message: Message) -> None:
        """Hand one server message to the request waiting for it, or queue it as an event (a race's sequence number
        and the lobby's mirror updated first)."""
        request_id = getattr(message, "id", None)
        future = self._waiting.get(request_id) if isinstance(request_id, int) else None
        if future is not None and not future.done():
            future.set_result(message)
        elif isinstance(message, RaceEvent):
            self.last_seq[message.race] = max(self.last_seq.get(message.race, 0), message.seq)
            if isinstance(message, RaceClosed) and message.new_race is not None:
                self._follow(message.new_race, playing=True)  # rated quick match seated us there
            self._events.put_nowait(message)
        elif isinstance(message, LobbyEvent):
            self._apply_lobby_change(message)
            self._events.put_nowait(message)
        elif isinstance(message, Error):
            self._events.put_nowait(Unsolicited(message))
        elif isinstance(message, ServerShutdown | Notice | ArenaPaired | ArenaStandings):
            self._events.put_nowait(message)

    async def _read(self) -> None:
        try:
            async for frame in self.connection:
                if isinstance(frame, str):
                    continue
                try:
                    message = decode_server_message(frame)
                except ProtocolError:
                    continue  # a newer server's message this client does not know
                self._deliver(message)
        except ConnectionClosed:
            pass
        finally:
            lost = self._lost()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(lost)
            self._events.put_nowait(lost)


def _without_closings(queue: asyncio.Queue[Incoming | ConnectionLost]) -> asyncio.Queue[Incoming | ConnectionLost]:
    """The queue's items minus the end-of-connection markers of a connection that has been replaced."""
    kept: asyncio.Queue[Incoming | ConnectionLost] = asyncio.Queue()
    while not queue.empty():
        item = queue.get_nowait()
        if not isinstance(item, ConnectionLost):
            kept.put_nowait(item)
    return kept
