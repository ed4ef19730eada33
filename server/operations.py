"""What an operator's infrastructure talks to: ``/metrics``, ``/ready``, bans at the door, and draining.

``/health`` (in the transport) says the process is alive and reaches Redis; ``/ready`` says a load balancer
may send it new connections: it listens, reaches Redis and is not draining. A draining process refuses new
connections (HTTP 503) and seats nobody in a new race, lets the races under way finish, sends every other
connection ``server_shutdown`` (so it reconnects elsewhere), and stops once nothing is left to finish.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine
from http import HTTPStatus
from typing import Any

from websockets.datastructures import Headers
from websockets.http11 import Request as HttpRequest
from websockets.http11 import Response

from server import logs, metrics
from server.record_signing import RECORD_KEY_PATH, RecordSigner
from server.services.errors import ServiceError
from server.store import BanKind, OpsStore, RaceStore, StoreUnavailable
from server.transport import LiveConnection, Transport
from shared.protocol import OVERLOAD_RETRY_SECONDS, CloseCode, ErrorCode, RaceStatus, Request, ServerShutdown

DRAIN_CHECK_SECONDS = 0.5
UNFINISHED = frozenset({RaceStatus.COUNTDOWN, RaceStatus.RUNNING})

NEW_RACE_REQUESTS = frozenset({"create", "join", "join_invite", "quick_match", "rematch"})
"""Requests that seat a player in a new race: refused while draining."""
NEW_WORK_REQUESTS = NEW_RACE_REQUESTS | {"watch"}
"""Requests that add a race or a spectator: refused while the process is overloaded (the races under way first)."""


def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body))), ("Connection", "close")])
    return Response(status.value, status.phrase, headers, body)


def _json(status: HTTPStatus, document: dict[str, str]) -> Response:
    return _response(status, (json.dumps(document) + "\n").encode(), "application/json")


class Operations:
    """The operator-facing side of one server process (see the module docstring)."""

    def __init__(
        self, ops_store: OpsStore, race_store: RaceStore, store_reachable: Callable[[], Awaitable[bool]],
        overloaded: Callable[[], bool] = lambda: False,
    ) -> None:  # fmt: skip
        self.ops_store = ops_store
        self.race_store = race_store
        self.store_reachable = store_reachable
        self.signer: RecordSigner | None = None
        """Serves the record-signing public key at ``/record-key``."""
        self.overloaded = overloaded
        """Whether the process is past its capacity now (server/app.py: its store commands queue behind the pool)."""
        self.transport: Transport | None = None
        self.accepting = False
        """Set once the server listens, cleared when it drains or stops."""
        self.draining = False
        self.drained = asyncio.Event()
        """Set when a drain has finished every race under way: the process may stop."""
        self.readers_failing: Callable[[], list[str]] = list
        """The names of this process's readers of Redis (lobby feed, race channels) whose latest read failed."""
        self.archive_lag: Callable[[], tuple[int, float] | None] = lambda: None
        """Finished races not archived yet and the oldest one's age (s); None without an archive."""
        self._drainer: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._finished_seen: set[LiveConnection] = set()
        """Players whose race was seen finished at the last drain check."""

    # --- HTTP: the endpoints and the door -----------------------------------------------------------

    async def gate(self, request: HttpRequest, client: str) -> Response | None:
        """``/metrics``, ``/ready``; refuse a WebSocket handshake from a banned address or while draining; else None."""
        path = request.path.split("?", 1)[0]
        if path == "/metrics":
            return _response(HTTPStatus.OK, metrics.exposition(), metrics.CONTENT_TYPE)
        if path == "/ready":
            return await self._ready()
        if path == RECORD_KEY_PATH and self.signer is not None:
            return self.signer.response()
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return None  # plain HTTP (other endpoints, static files): bans and draining concern new connections only
        if not self.accepting:
            metrics.handshake_refused("draining")
            return _json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "server_draining", "message": "this server accepts no new connections"})
        try:
            ban = await self.ops_store.ban_of(BanKind.IP, client)
        except StoreUnavailable as error:  # the ban cannot be checked: refuse, as /ready says, and let the client retry
            metrics.handshake_refused("store_unavailable")
            logs.warning("connection_refused_store_unavailable", peer=client, error=str(error))
            return _json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "unavailable", "message": "the store is unavailable; try again"})
        if ban is not None:
            metrics.handshake_refused("banned")
            logs.event("connection_refused_banned", peer=client, until=ban.until)
            return _json(HTTPStatus.FORBIDDEN, {"error": "banned", "message": f"this address is banned: {ban.reason}", "until": str(ban.until)})
        return None

    async def _ready(self) -> Response:
        reachable = await self.store_reachable()
        failing = self.readers_failing()  # e.g. a reader on a Cluster node that died while the others answer
        ready = self.accepting and reachable and not failing
        document = {
            "status": "ready" if ready else "not_ready",
            "accepting": "yes" if self.accepting else "no",
            "draining": "yes" if self.draining else "no",
            "store": "ok" if reachable else "unreachable",
            "readers": ",".join(failing) or "ok",
        }
        lag = self.archive_lag()
        if lag is not None:  # archiving late delays nothing a player waits for: shown, never a reason to be not ready
            document["archive_waiting"], document["archive_oldest_seconds"] = str(lag[0]), f"{lag[1]:.1f}"
        return _json(HTTPStatus.OK if ready else HTTPStatus.SERVICE_UNAVAILABLE, document)

    # --- requests -----------------------------------------------------------------------------------

    async def admit(self, player: str) -> None:
        """Refuse ``hello`` of a banned player (ServiceError ``banned``)."""
        ban = await self.ops_store.ban_of(BanKind.PLAYER, player)
        if ban is not None:
            logs.event("hello_refused_banned", player=player, until=ban.until)
            raise ServiceError(ErrorCode.BANNED, f"you are banned until {ban.until} (server time, ms): {ban.reason}")

    def refuse_now(self, request: Request) -> ServiceError | None:
        """The refusal of a request that would seat a player in a new race while this process drains, or add a race
        or a spectator while it is overloaded (``overloaded``, retry after :data:`OVERLOAD_RETRY_SECONDS`)."""
        if self.draining and request.TYPE in NEW_RACE_REQUESTS:
            return ServiceError(ErrorCode.SERVER_DRAINING, "this server is draining for maintenance: reconnect to start a new race")
        if request.TYPE in NEW_WORK_REQUESTS and self.overloaded():
            return ServiceError(
                ErrorCode.OVERLOADED, f"this server is past its capacity: try again in {OVERLOAD_RETRY_SECONDS} s",
                expected=OVERLOAD_RETRY_SECONDS,
            )  # fmt: skip
        return None

    # --- draining -----------------------------------------------------------------------------------

    def drain(self, timeout: float) -> bool:
        """Start draining (False if already draining): see the module docstring; after ``timeout`` seconds the
        process stops anyway (clients reconnect elsewhere; every acknowledged move is stored)."""
        if self.draining:
            return False
        self.draining = True
        self.accepting = False
        logs.event("drain_begin", timeout=timeout)
        self._drainer = asyncio.create_task(self._drain(timeout), name="drain")
        return True

    async def _drain(self, timeout: float) -> None:
        assert self.transport is not None
        try:
            async with asyncio.timeout(timeout):
                while True:
                    unfinished = await self._send_away_idle(self.transport.live_connections())
                    if unfinished == 0:
                        break
                    await asyncio.sleep(DRAIN_CHECK_SECONDS)
            logs.event("drain_end", outcome="races_finished")
        except TimeoutError:
            logs.warning("drain_end", outcome="timeout")
        self.drained.set()

    async def _send_away_idle(self, live: list[LiveConnection]) -> int:
        """Close (``server_shutdown``, 1001) every connection not seated in an unfinished race; returns how many remain.

        A player whose race has just finished is sent away one check later, so that the race's last events (read
        from its stream by the event hub) are in its outbox before the notice seals it."""
        races = {race for item in live for race, subscription in item.state.subscriptions.items() if subscription.viewer_slot is not None}
        statuses = await self.race_store.statuses(races)
        remaining = 0
        for item in live:
            seated = [race for race, subscription in item.state.subscriptions.items() if subscription.viewer_slot is not None]
            if any(statuses.get(race, (None, 0))[0] in UNFINISHED for race in seated):
                remaining += 1
            elif seated and item not in self._finished_seen:
                self._finished_seen.add(item)
                remaining += 1
            elif not item.outbox.sealed:
                item.outbox.send(ServerShutdown(message="this server is draining for maintenance: reconnect (to another server)"))
                self._spawn(item.finish())
        return remaining

    def _spawn(self, closing: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(closing)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def kick(self, item: LiveConnection, reason: str) -> None:
        """Close a connection on an operator's word: what was queued for it is written, then close 4000 ``reason``."""
        self._spawn(_close_kicked(item, reason))


async def _close_kicked(item: LiveConnection, reason: str) -> None:
    await item.outbox.flush()
    await item.connection.close(CloseCode.KICKED, reason.encode()[:120].decode(errors="ignore"))
