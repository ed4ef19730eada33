"""From decoded requests to service calls and back to reply messages; the glue between protocol and services.

It knows the connection only as a ``send`` function and a :class:`ConnectionState`;
the sockets, limits and frames are the transport's business.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.protocol import (
    PROTOCOL_VERSION,
    Create,
    Error,
    ErrorCode,
    Hello,
    Join,
    Message,
    Moved,
    MoveRequest,
    Ok,
    Request,
    Resign,
    Seated,
    Stuck,
    Sync,
    Synced,
    Welcome,
)
from server.services.errors import ServiceError
from server.services.event_hub import EventHub, Subscription
from server.services.race import RaceService
from server.services.sessions import Session, SessionService

log = logging.getLogger(__name__)

Send = Callable[[Message], None]
"""Queues one message for the connection; never blocks."""


@dataclass(slots=True)
class ConnectionState:
    """What one connection has established: its session and the races it receives events of."""

    send: Send
    session: Session | None = None
    subscriptions: dict[str, Subscription] = field(default_factory=dict)


class Dispatcher:
    """Answers each request with exactly one reply or one ``error``."""

    def __init__(self, sessions: SessionService, races: RaceService, hub: EventHub) -> None:
        self.sessions = sessions
        self.races = races
        self.hub = hub

    async def handle(self, state: ConnectionState, request: Request) -> None:
        """Run one request; every failure becomes an ``error`` reply with a documented code."""
        try:
            await self._route(state, request)
        except ServiceError as error:
            state.send(Error(id=request.id, code=error.code, message=error.message, field=error.field, expected=error.expected))
        except (RedisConnectionError, RedisTimeoutError, OSError) as error:
            log.warning("store unavailable during %s: %s", request.TYPE, error)
            state.send(Error(id=request.id, code=ErrorCode.UNAVAILABLE.value, message="the store is unavailable; try again"))
        except Exception:
            log.exception("internal error handling %s", request.TYPE)
            state.send(Error(id=request.id, code=ErrorCode.INTERNAL_ERROR.value, message="internal server error"))

    def disconnect(self, state: ConnectionState) -> None:
        """Forget a closed connection's subscriptions."""
        for subscription in state.subscriptions.values():
            self.hub.unsubscribe(subscription)
        state.subscriptions.clear()

    async def _route(self, state: ConnectionState, request: Request) -> None:
        if isinstance(request, Hello):
            await self._hello(state, request)
            return
        session = self._session_for(state, request)
        if isinstance(request, Create):
            seated = await self.races.create(session, request.settings)
            state.send(Seated(id=request.id, race=seated.info, slot=seated.slot))
            await self._subscribe(state, seated.info.race, seated.slot, 0)
        elif isinstance(request, Join):
            seated = await self.races.join(session, request.race)
            state.send(Seated(id=request.id, race=seated.info, slot=seated.slot))
            await self._subscribe(state, request.race, seated.slot, 0)
        elif isinstance(request, MoveRequest):
            outcome = await self.races.move(session, request.race, seq=request.seq, move_id=request.move_id, text=request.move)
            state.send(
                Moved(
                    id=request.id,
                    race=request.race,
                    move=outcome.move,
                    seq=outcome.move_seq,
                    count=outcome.count,
                    left=outcome.left,
                    status=outcome.status.value,
                    undos=outcome.undos,
                    duplicate=outcome.duplicate,
                )
            )
        elif isinstance(request, Resign | Stuck):
            await self.races.end_attempt(session, request.race, "resigned" if isinstance(request, Resign) else "stuck")
            state.send(Ok(id=request.id, race=request.race))
        elif isinstance(request, Sync):
            seated, moves = await self.races.sync(session, request.race)
            state.send(Synced(id=request.id, race=seated.info, slot=seated.slot, moves=moves))
            await self._subscribe(state, request.race, seated.slot, request.after)
        else:  # pragma: no cover - REQUEST_TYPES and this method list the same types
            raise ServiceError(ErrorCode.UNKNOWN_TYPE.value, f"unhandled request type {request.TYPE}")

    async def _hello(self, state: ConnectionState, hello: Hello) -> None:
        if state.session is not None:
            raise ServiceError(ErrorCode.ALREADY_HELLO.value, "this connection already said hello")
        if hello.protocol != PROTOCOL_VERSION:
            raise ServiceError(
                ErrorCode.UNSUPPORTED_PROTOCOL.value, f"this server speaks protocol {PROTOCOL_VERSION} only", field="protocol"
            )
        state.session = await self.sessions.hello(hello.name, hello.token)
        state.send(
            Welcome(
                id=hello.id,
                protocol=PROTOCOL_VERSION,
                token=state.session.token,
                player=state.session.player,
                name=state.session.name,
                server_time=await self.races.now_ms(),
            )
        )

    @staticmethod
    def _session_for(state: ConnectionState, request: Request) -> Session:
        """The connection's session, provided the request carries its token (not another player's)."""
        if state.session is None:
            raise ServiceError(ErrorCode.HELLO_REQUIRED.value, "say hello first")
        token = getattr(request, "token", None)
        if not isinstance(token, str) or not secrets.compare_digest(token.encode(), state.session.token.encode()):
            raise ServiceError(ErrorCode.BAD_TOKEN.value, "the token is not this connection's session token", field="token")
        return state.session

    async def _subscribe(self, state: ConnectionState, race_id: str, slot: int, after_seq: int) -> None:
        """Deliver the race's events to this connection from ``after_seq`` on (replacing an older subscription)."""
        old = state.subscriptions.pop(race_id, None)
        if old is not None:
            self.hub.unsubscribe(old)
        subscription = Subscription(race_id, slot, state.send, after_seq)
        state.subscriptions[race_id] = subscription
        await self.hub.subscribe(subscription)

