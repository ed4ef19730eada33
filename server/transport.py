"""The WebSocket edge: frames in and out, limits, rate limiting, bounded outgoing buffers, the health check.

Everything a hostile or broken client can do ends here: too many connections of one address not through their
handshake yet (HTTP 429) and a process short of file descriptors (HTTP 503), both answered the moment the connection
is accepted (:class:`Door`); oversized frames
(closed by websockets with 1009), text or malformed frames (``bad_frame``),
floods (``rate_limited``, then close 1008), silence before ``hello`` (1008),
too many connections from one address (1008), and not reading (its outgoing
queue, its write buffer and its kernel send buffer are bounded, and a write
that cannot drain within the drain deadline drops the connection, so its
memory cannot grow and a stalled client goes within seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import json
import logging
import resource
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from ssl import SSLContext
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from server import edge_journal, logs, metrics, version
from server.dispatch import ConnectionState, Dispatcher
from server.metrics import Role
from server.peers import PeerResolver
from server.ratelimit import TokenBucket
from server.services.online import PlayerCounts
from server.web.static_site import StaticSite
from shared.protocol import (
    MAX_FRAME_BYTES,
    PROTOCOL_VERSION,
    REQUEST_TYPES,
    SHUTDOWN_REASON,
    CloseCode,
    Error,
    ErrorCode,
    Hello,
    Message,
    ProtocolError,
    ServerShutdown,
    decode_request,
    encode,
    unpack_map,
)
from shared.protocol import Request as ProtocolRequest

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TransportLimits:
    """Per-connection limits (docs/PROTOCOL.md "Limits")."""

    max_frame_bytes: int = MAX_FRAME_BYTES
    rate_per_second: float = 30.0
    burst: int = 100
    """Frames accepted at once before the rate applies."""
    outbox_messages: int = 256
    """Messages waiting for a client that does not read; one more drops the connection."""
    max_write_buffer_bytes: int = 256 * 1024
    """Bytes in the socket's write buffer past which the connection is dropped."""
    drain_timeout: float = 5.0
    """Seconds one message may take to be written out (the client reading it); longer drops the connection."""
    socket_send_buffer_bytes: int = 64 * 1024
    """The kernel send buffer asked for each connection (SO_SNDBUF; Linux doubles it): what the kernel holds for a
    client that stops reading, instead of the megabytes its autotuning would allow."""
    max_connections_per_address: int = 64
    """Open connections from one client address on one server process; more are closed with 1008 (0: no limit)."""
    max_unidentified_per_address: int = 8
    """Of those, connections that have not said ``hello`` yet; more are closed with 1008 (0: no limit)."""
    max_handshakes_per_address: int = 16
    """Connections from one peer address not through their opening handshake yet (a WebSocket handshake or a plain
    HTTP request not answered yet; websockets gives each 10 s); more are answered HTTP 429 at once (0: no limit).
    Counted by the socket's peer, before any header is read: a trusted proxy's connections are not counted; with
    TLS served by the process, from the end of the TLS handshake."""
    descriptor_reserve: int = 128
    """File descriptors kept for the process's own work (Redis and database connections, files): a connection
    accepted when fewer than this are left under the limit is answered HTTP 503 at once (0: never)."""
    watches_per_address_burst: int = 60
    """``watch`` and ``unwatch`` requests of one client address (all its connections) at once, before
    ``watches_per_address_per_second`` applies; more are refused ``rate_limited`` (0: no address budget). Each
    connection also has its own budget of 20 at once, then 1 a second."""
    watches_per_address_per_second: float = 5.0
    handshake_timeout: float = 10.0
    """Seconds a connection has from its accept to the end of its opening handshake (TLS included); then it is closed."""
    hello_timeout: float = 10.0
    allowed_origins: tuple[str, ...] = ()
    """Origins (``https://play.example.org``) whose pages may open a WebSocket besides the page's own (the handshake's
    ``Host``); a client that sends no ``Origin`` (not a browser) is always let through. Others get 403."""
    shutdown_timeout: float = 5.0
    """Graceful shutdown: how long requests in flight may take to be answered before connections are cut."""


@dataclass(slots=True)
class TransportStats:
    """Counters for tests and metrics."""

    connections: int = 0
    dropped_slow: int = 0
    outbox_high_water: int = 0
    refused_address: int = 0
    """Connections closed because their address had too many open (or too many without ``hello``)."""
    refused_origin: int = 0
    """WebSocket handshakes refused (403) because a browser page of another origin opened them."""


class AddressBook:
    """How many connections each client address has open on this process, and how many of them are unidentified."""

    def __init__(self, limits: TransportLimits) -> None:
        self.limits = limits
        self.open: Counter[str] = Counter()
        self.unidentified: Counter[str] = Counter()

    def admit(self, address: str) -> str | None:
        """Count a new (unidentified) connection; the reason to refuse it instead, if its address has too many."""
        most, most_unidentified = self.limits.max_connections_per_address, self.limits.max_unidentified_per_address
        if most and self.open[address] >= most:
            return f"too many connections from your address (at most {most})"
        if most_unidentified and self.unidentified[address] >= most_unidentified:
            return f"too many connections without hello from your address (at most {self.limits.max_unidentified_per_address})"
        self.open[address] += 1
        self.unidentified[address] += 1
        return None

    def identified(self, address: str) -> None:
        """A connection of ``address`` said hello."""
        self._decrement(self.unidentified, address)

    def closed(self, address: str, *, identified: bool) -> None:
        """A connection of ``address`` closed."""
        self._decrement(self.open, address)
        if not identified:
            self._decrement(self.unidentified, address)

    @staticmethod
    def _decrement(counter: Counter[str], address: str) -> None:
        counter[address] -= 1
        if counter[address] <= 0:
            del counter[address]


MAX_FRAMES_PER_WRITE = 64
"""Most queued messages written to a socket at once (one system call for all of them)."""


class Wakeup:
    """Wakes the tasks waiting for something to change (they check their condition again). It holds futures only
    while tasks wait: an asyncio.Event or Queue keeps deques of its own (about 0.6 KiB each), and every connection
    needs several of these."""

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] | None = None

    async def wait(self) -> None:
        """Return at the next :meth:`notify`."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(future)
        try:
            await future
        finally:
            if self._waiters is not None and future in self._waiters:  # cancelled before the wake-up
                self._waiters.remove(future)

    def notify(self) -> None:
        """Wake every task waiting now."""
        waiters, self._waiters = self._waiters, None
        for future in waiters or ():
            if not future.done():
                future.set_result(None)


class FrameCache:
    """The frames of the last few messages encoded, by identity: an event fanned out to a race's audience is the same
    object for every spectator (and the mover), so it is encoded once, not once per recipient. Messages are frozen;
    the cache holds them, so an identity it knows can never be a new object's."""

    SIZE = 4
    """Messages remembered: enough for a fan-out that interleaves a race's event with the opponent's view of it."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._frames: list[bytes] = []

    def frame(self, message: Message) -> bytes:
        """The encoded frame of ``message`` (encoded now unless it was one of the last few)."""
        for index, known in enumerate(self._messages):
            if known is message:
                return self._frames[index]
        frame = encode(message)
        self._messages.insert(0, message)
        self._frames.insert(0, frame)
        del self._messages[self.SIZE :], self._frames[self.SIZE :]
        return frame


FRAMES = FrameCache()
"""The process's cache: one event loop, so every outbox shares it."""


class Outbox:
    """The messages waiting for one client, written in order; never grows past its bound.

    What is queued in one turn of the event loop (a reply and the events queued with it) goes out in one write at the
    end of that turn, from a callback: no writer task per connection (its task, coroutine and wake-ups cost memory
    and two turns of the loop per message). Only while the socket's buffer is full does a task wait for the client to
    read, at most the drain deadline (then the connection is dropped: the client stopped reading and the kernel's
    buffers are full).
    """

    def __init__(self, connection: ServerConnection, limits: TransportLimits, stats: TransportStats, peer: str = "") -> None:
        """``peer`` is the client's address, for the log line of a drop."""
        self.connection = connection
        self.peer = peer
        self.limits = limits
        self.stats = stats
        self.pending: list[bytes] = []
        """Encoded messages not yet written to the socket."""
        self.dropped = False
        self.sealed = False
        self._loop = asyncio.get_running_loop()
        self._scheduled = False
        self._draining: asyncio.Task[None] | None = None
        self._written = Wakeup()

    async def room(self) -> None:
        """Return once at most half the queue's bound is used (or nothing can be sent any more).

        Catch-up pages wait for this, so a client that missed thousands of events gets them as fast as it reads
        instead of overflowing its queue.
        """
        while not (self.dropped or self.sealed) and len(self.pending) > self.limits.outbox_messages // 2:
            await self._written.wait()

    def send(self, message: Message) -> None:
        """Queue a message; drop the connection instead if the client is not keeping up."""
        if self.dropped or self.sealed:
            return
        buffered = self.connection.transport.get_write_buffer_size()
        if len(self.pending) >= self.limits.outbox_messages or buffered > self.limits.max_write_buffer_bytes:
            self._drop(f"{len(self.pending)} queued, {buffered} bytes buffered")
            return
        self.pending.append(FRAMES.frame(message))
        self.stats.outbox_high_water = max(self.stats.outbox_high_water, len(self.pending))
        if not self._scheduled and self._draining is None:
            self._scheduled = True
            self._loop.call_soon(self._write)

    def _write(self) -> None:
        """Write what is queued while the socket takes it (one write per :data:`MAX_FRAMES_PER_WRITE` messages); once
        its buffer is full, wait for it to drain in a task."""
        self._scheduled = False
        if self._draining is not None or not self.pending or self.dropped:
            return
        connection = self.connection
        if connection.protocol.state is not State.OPEN:
            self.close()  # closing or closed: nothing can be written any more
            return
        while self.pending and not connection.paused:
            frames = self.pending[:MAX_FRAMES_PER_WRITE]
            del self.pending[:MAX_FRAMES_PER_WRITE]
            for frame in frames:
                connection.protocol.send_binary(frame)
            connection.send_data()
        self._written.notify()
        if connection.paused:
            self._draining = self._loop.create_task(self._drain())

    async def _drain(self) -> None:
        try:
            async with asyncio.timeout(self.limits.drain_timeout):
                await self.connection.drain()
        except TimeoutError:
            self._drop("its write did not drain in time")
        except OSError:  # the connection was lost while it waited (websockets passes on the transport's error)
            self.close()
        finally:
            self._draining = None
            self._written.notify()
        if not self.dropped and self.pending:
            self._write()

    def _drop(self, why: str) -> None:
        """Cut a client that does not read (no closing handshake: it would wait for the same stalled socket)."""
        if self.dropped:
            return
        self.dropped = True
        self.stats.dropped_slow += 1
        edge_journal.outbox_dropped(self.peer, why)
        self.connection.transport.abort()
        self.close()

    async def flush(self) -> None:
        """Accept nothing more and wait until everything queued is written (shutdown)."""
        self.sealed = True
        while (self.pending or self._draining is not None) and not self.dropped:
            await self._written.wait()

    def close(self) -> None:
        """Nothing can be written any more (the connection closed or was dropped): let flush() and room() return."""
        self.sealed = True
        self.pending.clear()
        if self._draining is not None and self._draining is not asyncio.current_task():
            self._draining.cancel()
        self._written.notify()


KEEPALIVE_SECONDS = 20.0
"""Every open connection is pinged this often, and closed (1011) if its pong has not come back this long after the
ping (docs/PROTOCOL.md "Limits": websockets' defaults, which it runs with one task per connection)."""


KEEPALIVE_WORKER = "transport: keepalive"
"""The keepalive's name in ``flowergarden_background_errors_total``."""


class Keepalive:
    """Pings every open connection from one task (websockets' own keepalive is a sleeping task per connection, about
    1.4 KiB each: 4 KiB of every race with two players and a spectator)."""

    def __init__(self, connections: Callable[[], list[ServerConnection]], interval: float = KEEPALIVE_SECONDS, timeout: float = KEEPALIVE_SECONDS) -> None:
        self.connections = connections
        self.interval = interval
        self.timeout = timeout
        self._closing: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Ping, wait for the pongs, close the connections that gave none; again every ``interval`` seconds. A round
        that fails (any exception: a bug) is logged and counted, and the next one comes as usual: without this task
        no silent connection would ever be closed."""
        loop = asyncio.get_running_loop()
        waited = 0.0
        while True:
            await asyncio.sleep(max(0.0, self.interval - waited))  # a round's wait for pongs counts in its interval
            pinged_at = loop.time()
            try:
                await self._round()
            except Exception:
                log.exception("keepalive: a round of pings failed; the next one comes as usual")
                metrics.worker_failed(KEEPALIVE_WORKER, expected=False)
            waited = loop.time() - pinged_at

    async def _round(self) -> None:
        pongs: list[tuple[ServerConnection, asyncio.Future[float]]] = []
        for connection in self.connections():
            if connection.protocol.state is not State.OPEN or connection.paused:
                continue  # closing, or not reading (its outbox's drain deadline deals with that)
            with contextlib.suppress(ConnectionClosed):
                pongs.append((connection, asyncio.ensure_future(await connection.ping())))
        if not pongs:
            return
        await asyncio.wait([pong for _, pong in pongs], timeout=self.timeout)
        for connection, pong in pongs:
            if not pong.done():
                pong.cancel()
                closing = asyncio.create_task(self._close_silent(connection))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
            elif not pong.cancelled():
                pong.exception()  # the connection closed meanwhile: nothing to do

    @staticmethod
    async def _close_silent(connection: ServerConnection) -> None:
        """Close a connection whose pong did not come, as websockets' keepalive does (1011)."""
        with contextlib.suppress(ConnectionClosed):
            async with connection.send_context():
                connection.protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")


@dataclass(slots=True, eq=False)
class LiveConnection:
    """A connection being served: what a graceful shutdown needs to finish it."""

    connection: ServerConnection
    outbox: Outbox
    state: ConnectionState
    busy: bool = False
    """True while a request of this connection is being handled."""
    answered: Wakeup = field(default_factory=Wakeup)
    """Notified when a request has been handled."""

    async def finish(self) -> None:
        """Let the request in flight be answered and its reply written, then close with 1001."""
        while self.busy:
            await self.answered.wait()
        await self.outbox.flush()
        await self.connection.close(CloseCode.GOING_AWAY, SHUTDOWN_REASON)


async def close_discarding(connection: ServerConnection, code: int, reason: str) -> None:
    """Close, discarding what the client still sends: its backlog must not stall the closing handshake."""
    closing = asyncio.create_task(connection.close(code, reason))
    with contextlib.suppress(ConnectionClosed):
        while True:
            await connection.recv()
    await closing


def closed_by_client(connection: ServerConnection) -> bool:
    """Whether the client ended the connection on purpose (it sent the first close frame, 1000 or 1001) rather
    than dropping it (network, crash) or being closed by the server."""
    protocol = connection.protocol
    received = protocol.close_rcvd
    return received is not None and bool(protocol.close_rcvd_then_sent) and received.code in (CloseCode.NORMAL, CloseCode.GOING_AWAY)


class BatchingConnection(ServerConnection):
    """A connection that writes all the frames waiting to go out with one socket write instead of one each."""

    def send_data(self) -> None:
        """Write the protocol's outgoing frames joined (websockets writes each on its own, and on an idle socket each
        write is a ``send()`` system call); an end of stream among them is handled as websockets does."""
        chunks = self.protocol.data_to_send()
        frames = [chunk for chunk in chunks if chunk]
        if frames:
            self.transport.write(frames[0] if len(frames) == 1 else b"".join(frames))
        if len(frames) == len(chunks):
            return
        if self.transport.can_write_eof():  # the end of stream (after a close frame): half-close when possible
            with contextlib.suppress(Exception):  # write_eof() does not document what it raises
                self.transport.write_eof()
        else:
            self.transport.close()


REFUSAL_LINGER_SECONDS = 1.0
"""How long a connection refused at the door has to read its answer and close: its request is read and dropped
meanwhile, so that closing sends no reset, which would lose the answer on the client's side."""
MAX_LINGERING = 32
"""Refused connections given that time at once (and at most a quarter of ``descriptor_reserve``); more are closed
right after their answer, so that a flood of refused connections cannot hold descriptors itself."""

SHORTAGE_ENDS_AFTER_SECONDS = 1.0
"""A descriptor shortage ends once a connection is admitted this long after the last one refused: under a flood the
count of descriptors in use swings around the limit as refused connections close, and each swing is not a new
shortage to log."""

ACCEPT_OUT_OF_DESCRIPTORS = "socket.accept() out of system resource"
"""asyncio's message (with a traceback) when an accept fails for want of a descriptor; it then stops accepting for 1 s."""


def soft_open_files_limit() -> int:
    """The process's soft descriptor limit now (server/app.py raises it to the hard one at start)."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Door:
    """The first check of every accepted connection, before websockets reads a byte of it: the descriptors left, and
    how many connections of the peer's address are not through their opening handshake yet.

    Each connection holds a descriptor from its accept; one that never finishes its request (a half-sent handshake)
    holds it until websockets' open timeout (10 s). The kernel gives a new socket the lowest free descriptor, so an
    accepted socket numbered N says that descriptors 0 to N are all in use: past the limit less
    ``descriptor_reserve`` the connection is answered 503 (and nothing else is spent on it), which keeps the reserve
    for Redis, files and the connections already served, instead of accepts that fail with a traceback each. A
    shortage is logged once when it starts (``descriptors_short``) and once when it ends (``descriptors_recovered``,
    with how many were refused: the first connection admitted :data:`SHORTAGE_ENDS_AFTER_SECONDS` after the last one
    refused), never once per connection."""

    def __init__(self, limits: TransportLimits, peers: PeerResolver, open_files_limit: Callable[[], int] = soft_open_files_limit) -> None:
        self.limits = limits
        self.peers = peers
        self.open_files_limit = open_files_limit
        self.pending: Counter[str] = Counter()
        """Connections of each peer address admitted and not through their handshake yet."""
        self.short = False
        """True from a connection refused for want of descriptors until one is admitted again."""
        self.refused_short = 0
        self.last_refused = 0.0
        """When a connection was last refused for want of descriptors (monotonic seconds)."""
        self.lingering = 0
        """Refused connections waiting for their client to close (at most :data:`MAX_LINGERING`)."""

    def may_linger(self) -> bool:
        """Take a place for a refused connection to linger, if one is free (:meth:`lingered` gives it back)."""
        reserve = self.limits.descriptor_reserve
        if self.lingering >= (min(MAX_LINGERING, reserve // 4) if reserve else MAX_LINGERING):
            return False
        self.lingering += 1
        return True

    def lingered(self) -> None:
        """A lingering refused connection closed."""
        self.lingering -= 1

    def admit(self, transport: asyncio.BaseTransport) -> tuple[str | None, Response | None]:
        """Admit a connection just accepted: the address it is counted under until :meth:`through` (None: not
        counted), or the answer that refuses it."""
        sock = transport.get_extra_info("socket")
        if sock is not None and self._short_of_descriptors(sock.fileno()):
            metrics.handshake_refused("out_of_descriptors")
            message = "this server is out of connections for now; try again in a few seconds (or another server)"
            return None, Transport.http(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "out_of_descriptors", "message": message}, retry_after=5)
        peer = transport.get_extra_info("peername")
        ip = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if not ip or self.peers.is_trusted(ip):
            return None, None
        address, most = address_of(ip), self.limits.max_handshakes_per_address
        if most and self.pending[address] >= most:
            metrics.handshake_refused("too_many_handshakes")
            message = f"too many connections from your address are still in their opening handshake (at most {most})"
            return None, Transport.http(HTTPStatus.TOO_MANY_REQUESTS, {"error": "too_many_handshakes", "message": message}, retry_after=1)
        self.pending[address] += 1
        return address, None

    def through(self, address: str) -> None:
        """A connection counted under ``address`` finished its handshake (or closed before)."""
        self.pending[address] -= 1
        if self.pending[address] <= 0:
            del self.pending[address]

    def out_of_descriptors(self, where: str) -> None:
        """An accept failed for want of a descriptor (``where``: ``accept``): counted in the shortage under way, or
        the one line that starts one."""
        metrics.handshake_refused("out_of_descriptors")
        self.refused_short += 1
        self.last_refused = time.monotonic()
        if not self.short:
            self.short = True
            logs.warning("descriptors_short", where=where, limit=self.open_files_limit(), reserve=self.limits.descriptor_reserve)

    def _short_of_descriptors(self, descriptor: int) -> bool:
        reserve = self.limits.descriptor_reserve
        if not reserve:
            return False
        limit = self.open_files_limit()
        if descriptor + 1 > limit - reserve:
            self.refused_short += 1
            self.last_refused = time.monotonic()
            if not self.short:
                self.short = True
                logs.warning("descriptors_short", where="handshake", in_use=descriptor + 1, limit=limit, reserve=reserve)
            return True
        if self.short and time.monotonic() - self.last_refused >= SHORTAGE_ENDS_AFTER_SECONDS:
            self.short = False
            logs.event("descriptors_recovered", refused=self.refused_short, in_use=descriptor + 1, limit=limit)
            self.refused_short = 0
        return False


class HttpAwareConnection(BatchingConnection):
    """A connection that passes the :class:`Door` first, and answers ``405`` itself to an HTTP request whose method is
    not GET.

    websockets reads no request body, so it drops a request that has one (a POST with a body) without any answer;
    the method is known from the request line, before anything else is parsed. A connection the door refuses never
    reaches websockets: it gets its answer, its request is read and dropped, and it is closed within
    :data:`REFUSAL_LINGER_SECONDS`.
    """

    MAX_REQUEST_LINE = 8192
    DOOR: Door | None = None
    """The door of the transport this connection class serves (:func:`connection_class`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_line: bytes | None = b""
        """What arrived before the request line was complete; None once it was checked."""
        self._door_address: str | None = None
        """The address this connection is counted under at the door until its handshake is through."""
        self._refused = False
        """Whether the door refused the connection (then websockets never sees it)."""
        self._linger: asyncio.TimerHandle | None = None
        """The timer that closes a refused connection that lingers."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Pass the door, or answer its refusal and close."""
        door = self.DOOR
        if door is None:
            super().connection_made(transport)
            return
        self._door_address, refusal = door.admit(transport)
        if refusal is None:
            super().connection_made(transport)
            return
        assert isinstance(transport, asyncio.WriteTransport)
        self._refused = True
        transport.write(refusal.serialize())
        if not door.may_linger():
            transport.close()
            return
        if transport.can_write_eof():
            with contextlib.suppress(Exception):  # write_eof() does not document what it raises
                transport.write_eof()
        self._linger = asyncio.get_running_loop().call_later(REFUSAL_LINGER_SECONDS, transport.abort)

    def handshake_through(self) -> None:
        """The opening handshake is done: the connection no longer counts at the door."""
        if self._door_address is not None and self.DOOR is not None:
            self.DOOR.through(self._door_address)
        self._door_address = None

    def eof_received(self) -> None:
        """The client closed its side; a refused connection is closed then (asyncio closes it on a None answer)."""
        if not self._refused:
            super().eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        """Closed: a connection refused at the door was never websockets'; one still in its handshake leaves the door."""
        if self._refused:
            if self._linger is not None and self.DOOR is not None:
                self._linger.cancel()
                self.DOOR.lingered()
            return
        self.handshake_through()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Check the method of the request line before websockets sees the request."""
        if self._refused:
            return  # the request of a refused connection: read and dropped
        if self._request_line is None:
            super().data_received(data)
            return
        head = self._request_line + data
        if b"\n" not in head and len(head) < self.MAX_REQUEST_LINE:
            self._request_line = head
            return
        self._request_line = None
        if head.split(b" ", 1)[0] != b"GET":
            self.transport.write(
                Transport.http(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "method not allowed"}, allow="GET").serialize()
            )
            self.transport.close()
            return
        super().data_received(head)


def watch_accept_failures(loop: asyncio.AbstractEventLoop, door: Door) -> None:
    """Make an accept that fails for want of a descriptor count at ``door`` (one line per shortage) instead of
    asyncio's traceback each time; every other report goes where it went before."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if context.get("message") == ACCEPT_OUT_OF_DESCRIPTORS and isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE):
            door.out_of_descriptors("accept")
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def connection_class(door: Door) -> type[HttpAwareConnection]:
    """The connection class of a transport: :class:`HttpAwareConnection` passing ``door``."""

    class DoorConnection(HttpAwareConnection):
        DOOR = door

    return DoorConnection


DIRECT = PeerResolver()
"""No trusted proxies: the socket's peer is the client."""

def client_address(connection: ServerConnection, peers: PeerResolver | None = None, headers: Headers | None = None) -> str:
    """The client's address as every per-address limit, ban and log line names it: the peer's IP, or, when the
    peer is a trusted proxy (``peers``), the client its ``X-Forwarded-For`` names (server/peers.py); an IPv6
    client by its /64 network (one subscriber usually holds a whole /64). ``headers``: the handshake's, when
    the connection does not hold its request yet."""
    if headers is None and connection.request is not None:
        headers = connection.request.headers
    return address_of((peers or DIRECT).client_ip(connection.remote_address, headers))


def address_of(ip: str) -> str:
    """A client IP as the per-address limits count it: itself, an IPv4-mapped IPv6 one as IPv4, any other IPv6 one
    by its /64 network."""
    if not ip:
        return "unknown"
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def forget_handshake_headers(connection: ServerConnection) -> None:
    """Let go of the opening handshake's headers once the client's address is known (a few KiB per connection that
    websockets keeps for the connection's life). The request itself stays: websockets takes a missing one to mean
    that the handshake has not happened yet."""
    if connection.request is not None:
        connection.request = replace(connection.request, headers=Headers())
    connection.response = None


def needs_hello_first(frame: bytes) -> bool:
    """Whether a frame that could not be read as a request is one of a known type other than ``hello``: before
    ``hello`` such a request is answered ``hello_required`` whatever its fields (a natural first request carries no
    token yet)."""
    try:
        kind = unpack_map(frame).get("type")
    except ProtocolError:
        return False
    return isinstance(kind, str) and kind in REQUEST_TYPES and REQUEST_TYPES[kind] is not Hello


def refusal_of(error: ProtocolError, frame: bytes | str, *, said_hello: bool) -> Error:
    """The answer to a frame that could not be read as a request: the error, except before ``hello`` for a request
    of another known type (``hello_required``) or a ``hello`` of another protocol version (``unsupported_protocol``)."""
    if not said_hello and isinstance(frame, bytes):
        if needs_hello_first(frame):
            return Error(id=error.request_id, code=ErrorCode.HELLO_REQUIRED.value, message="say hello first")
        if speaks_another_protocol(frame):
            message = f"this server speaks protocol {PROTOCOL_VERSION} only"
            return Error(id=error.request_id, code=ErrorCode.UNSUPPORTED_PROTOCOL.value, message=message, field="protocol")
    return Error(id=error.request_id, code=error.code.value, message=error.message, field=error.field)


def speaks_another_protocol(frame: bytes) -> bool:
    """Whether a frame that could not be read as a request is a ``hello`` naming another protocol version: its other
    fields may be another version's, so it is answered ``unsupported_protocol`` (the client may say hello again in a
    version it supports), never ``bad_field`` for a field of the hello it sent."""
    try:
        fields = unpack_map(frame)
    except ProtocolError:
        return False
    protocol = fields.get("protocol")
    return fields.get("type") == "hello" and isinstance(protocol, int) and not isinstance(protocol, bool) and protocol != PROTOCOL_VERSION


HealthProbe = Callable[[], Awaitable[bool]]
HttpGate = Callable[[Request, str], Awaitable[Response | None]]
"""Answers a plain HTTP request or refuses a handshake (given the client's address); None lets it through."""


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether a WebSocket handshake's ``Origin`` may connect: none sent (a program, not a browser page), the page's
    own origin (its host and port are the handshake's ``Host``), or one the operator allowed. A page of another site
    (cross-site WebSocket hijacking) and the opaque ``null`` origin may not."""
    if origin is None:
        return True
    if origin.rstrip("/").lower() in {entry.rstrip("/").lower() for entry in allowed}:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and host is not None and parts.netloc.lower() == host.lower()



def _decoded(frame: bytes | str, *, said_hello: bool) -> tuple[ProtocolRequest | None, Error]:
    """The request a frame holds (None for text or a frame that does not decode) and the refusal to send if there is
    none."""
    try:
        request = decode_request(frame) if isinstance(frame, bytes) else None
    except ProtocolError as error:
        return None, refusal_of(error, frame, said_hello=said_hello)
    return request, Error(id=None, code=ErrorCode.BAD_FRAME, message="send binary frames (MessagePack), not text")


class Transport:
    """Serves the protocol on one host and port with a dispatcher behind it."""

    def __init__(
        self, dispatcher: Dispatcher, limits: TransportLimits, health: HealthProbe, site: StaticSite | None = None, *,
        gate: HttpGate | None = None, peers: PeerResolver | None = None,
    ) -> None:
        """``gate`` serves the operator endpoints and refuses banned or draining handshakes (server/operations.py)."""
        self.dispatcher = dispatcher
        self.site = site or StaticSite.default()
        """The browser client's pages and files (docs/WEB.md), served to plain GETs."""
        self.limits = limits
        self.health = health
        self.gate = gate
        self.peers = peers or DIRECT
        self.stats = TransportStats()
        self.addresses = AddressBook(limits)
        self.door = Door(limits, self.peers)
        self.server: Server | None = None
        self.shutting_down = False
        """Set once the server shuts down: closing connections then keep their open races for a takeover elsewhere."""
        self._live: set[LiveConnection] = set()
        self._keepalive: asyncio.Task[None] | None = None

    async def start(self, host: str, port: int, *, ssl: SSLContext | None = None) -> Server:
        """Listen (TLS with ``ssl``); returns the websockets server (its sockets tell the bound port)."""
        self.server = await serve(
            self._handle,
            host,
            port,
            max_size=self.limits.max_frame_bytes,
            open_timeout=self.limits.handshake_timeout,
            max_queue=16,
            compression=None,
            ping_interval=None,  # one Keepalive task for all connections instead
            process_request=self._process_request,
            server_header="flowergarden",
            create_connection=connection_class(self.door),
            ssl=ssl,
        )
        watch_accept_failures(asyncio.get_running_loop(), self.door)
        self._keepalive = asyncio.create_task(Keepalive(lambda: [live.connection for live in self._live]).run(), name="keepalive pings")
        return self.server

    async def stop(self) -> None:
        """Graceful shutdown: stop accepting, tell every client to reconnect elsewhere, answer the requests in flight,
        close with 1001 ``server_shutdown``; connections still open after ``shutdown_timeout`` are cut."""
        if self.server is None:
            return
        if self._keepalive is not None:
            self._keepalive.cancel()
        self.shutting_down = True
        self.server.close(close_connections=False)  # stop accepting; handshakes in progress get 503
        notice = ServerShutdown(message="this server is shutting down: reconnect (to another server), hello with your token, sync")
        live = list(self._live)
        for item in live:
            item.outbox.send(notice)
        if live:
            _, late = await asyncio.wait([asyncio.create_task(item.finish()) for item in live], timeout=self.limits.shutdown_timeout)
            for task in late:
                task.cancel()
        for item in list(self._live):
            item.connection.transport.abort()
        await self.server.wait_closed()

    def _bound_kernel_buffer(self, connection: ServerConnection) -> None:
        sock = connection.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.limits.socket_send_buffer_bytes)

    def live_connections(self) -> list[LiveConnection]:
        """The connections being served now (for metrics and operator commands)."""
        return list(self._live)

    def player_counts(self) -> PlayerCounts:
        """The players this process serves: distinct players that said hello, and of them those racing."""
        online: set[str] = set()
        racing: set[str] = set()
        for live in self._live:
            player = live.state.player
            if player is not None:
                online.add(player)
                if live.state.racing():
                    racing.add(player)
        return PlayerCounts(online=len(online), racing=len(racing))

    def role_counts(self) -> dict[Role, int]:
        """Open connections by role."""
        counts = dict.fromkeys(Role, 0)
        for live in self._live:
            counts[live.state.role()] += 1
        return counts

    async def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """``GET /health`` and the web client's pages answer plain HTTP on the WebSocket port (other methods: :class:`HttpAwareConnection`)."""
        path = request.path.split("?", 1)[0]
        if path == "/live":  # liveness: the event loop answers; asks nothing of Redis, so a Redis blip restarts nobody
            return self.http(HTTPStatus.OK, {"status": "alive", "version": version()})
        if path == "/health":
            healthy = await self.health()
            status = HTTPStatus.OK if healthy else HTTPStatus.SERVICE_UNAVAILABLE
            document = {"status": "ok" if healthy else "unavailable", "store": "ok" if healthy else "unreachable", "version": version()}
            return self.http(status, document)
        if self.gate is not None:
            answer = await self.gate(request, client_address(connection, self.peers, request.headers))
            if answer is not None:
                return answer
        if request.headers.get("Upgrade", "").lower() != "websocket":
            return self.site.respond(path, request.headers)
        if not origin_allowed(request.headers.get("Origin"), request.headers.get("Host"), self.limits.allowed_origins):
            self.stats.refused_origin += 1
            return self.http(HTTPStatus.FORBIDDEN, {"status": "forbidden", "error": "origin_not_allowed"})
        return None

    @staticmethod
    def http(status: HTTPStatus, document: dict[str, str], *, allow: str | None = None, retry_after: int | None = None) -> Response:
        """A plain HTTP response with a JSON body, closing the connection."""
        body = (json.dumps(document) + "\n").encode()
        headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(body))), ("Connection", "close")])
        if allow is not None:
            headers["Allow"] = allow
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return Response(status.value, status.phrase, headers, body)

    async def _next_frame(self, connection: ServerConnection, state: ConnectionState) -> str | bytes:
        """The next frame: before ``hello`` within the hello timeout (else TimeoutError), after it without a timeout
        context (whose set-up costs more than the read)."""
        if state.session is not None:
            return await connection.recv()
        async with asyncio.timeout(self.limits.hello_timeout):
            return await connection.recv()

    @staticmethod
    async def _over_rate(
        connection: ServerConnection, outbox: Outbox, patience: TokenBucket, address: str, connection_id: str, request_id: int | None
    ) -> bool:
        """A frame past the rate limit: dropped with ``rate_limited``, or the connection closed once the refusals' own
        budget (``patience``) is spent too; whether it was closed."""
        if not patience.allow():
            edge_journal.rate_limited(address, connection_id, closed=True)
            await close_discarding(connection, CloseCode.POLICY_VIOLATION, "rate limit exceeded")
            return True
        edge_journal.rate_limited(address, connection_id, closed=False)
        outbox.send(Error(id=request_id, code=ErrorCode.RATE_LIMITED, message="too many frames; this one was dropped"))
        return False

    async def _handle(self, connection: ServerConnection) -> None:
        if isinstance(connection, HttpAwareConnection):
            connection.handshake_through()
        if self.shutting_down:  # opened just as the shutdown began
            await connection.close(CloseCode.GOING_AWAY, SHUTDOWN_REASON)
            return
        address = client_address(connection, self.peers)
        forget_handshake_headers(connection)
        crowded = self.addresses.admit(address)
        if crowded is not None:
            self.stats.refused_address += 1
            await connection.close(CloseCode.POLICY_VIOLATION, crowded)
            return
        self.stats.connections += 1
        self._bound_kernel_buffer(connection)
        outbox = Outbox(connection, self.limits, self.stats, address)
        state = self.dispatcher.connect(outbox.send, address, outbox.room)
        live = LiveConnection(connection, outbox, state)
        edge_journal.connection_opened(address, state.connection_id)
        self._live.add(live)
        bucket = TokenBucket(self.limits.rate_per_second, self.limits.burst)
        # Refusals have a budget of their own: a client that keeps flooding past it is closed.
        patience = TokenBucket(self.limits.rate_per_second, self.limits.burst)
        identified = False
        try:
            while True:
                try:
                    frame = await self._next_frame(connection, state)
                    received = time.perf_counter()
                except TimeoutError:
                    await close_discarding(connection, CloseCode.POLICY_VIOLATION, "no hello in time")
                    return
                if self.shutting_down:
                    continue  # closing: the client resends after reconnecting (moves are idempotent)
                request, refusal = _decoded(frame, said_hello=state.session is not None)
                if not bucket.allow():
                    request_id = request.id if request is not None else refusal.id
                    if await self._over_rate(connection, outbox, patience, address, state.connection_id, request_id):
                        return
                    continue
                if request is None:
                    outbox.send(refusal)
                    continue
                live.busy = True
                try:
                    await self.dispatcher.handle(state, request)
                    metrics.request_handled(request.TYPE, time.perf_counter() - received)
                finally:
                    live.busy = False
                    live.answered.notify()
                if state.session is not None and not identified:
                    identified = True
                    self.addresses.identified(address)
        except ConnectionClosed:
            pass
        finally:
            self.addresses.closed(address, identified=identified)
            self._live.discard(live)
            edge_journal.connection_closed(address, state.connection_id, connection.close_code, connection.close_reason, state.player)
            outbox.close()
            await self.dispatcher.disconnect(state, going_away=self.shutting_down, deliberate=closed_by_client(connection))
