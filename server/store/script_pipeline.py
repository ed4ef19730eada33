"""One Redis connection that carries a process's race scripts, pipelined.

redis-py's asyncio client spends most of a script's cost on its own machinery: a pool checkout and release, a
retry wrapper, a timeout context and a stream reader for every reply, observability hooks. Measured on the
project's machine (one EVALSHA of a one-line script, in a loop, embedded Redis): 69 us of the client's CPU per
call through redis-py, 12 us for the same command written on a bare asyncio protocol with hiredis's parser
(docs/BENCHMARKS.md "Third pass"). This module is that bare protocol, for the one command the move path needs:

- every command issued in one turn of the event loop goes out in one write (a busy server sends the scripts of
  many moves at once), and Redis answers in order, so each reply resolves the oldest waiting caller;
- it speaks RESP3 (``HELLO 3``, with ``AUTH`` if the URL has credentials), as redis-py's client does, so a script's
  reply has the same Python type either way; error replies become redis-py's exception classes (NOSCRIPT loads the
  script and runs it again), so the store translates failures exactly as before;
- a reply later than ``timeout`` fails every waiting command with redis-py's ``TimeoutError`` and drops the
  connection (its later replies could no longer be matched); a lost connection fails them with ``ConnectionError``;
  the next command connects again. Commands that arrive while a connection is being made wait for that attempt, and
  if it fails they all fail with it: each waits for one attempt at most, never for a queue of attempts one after the
  other (on a stalled Redis that queue grew by ``connect_timeout`` per waiting command).

Used by :class:`server.store.durability.ScriptRunner` for one Redis reached over TCP or a unix socket, at durability ``primary`` or
``fsync`` (``replica`` sends a WAIT with each script through redis-py's pipeline; a Redis Cluster routes by slot).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio import Redis
from redis.asyncio.connection import Connection, UnixDomainSocketConnection
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server import metrics

P = TypeVar("P", bound=asyncio.Protocol)

INCOMPLETE = object()
"""What the parser returns while a reply has not fully arrived (a script may return ``false``)."""


class ErrorReply(Exception):
    """An error reply as the parser hands it over (turned into redis-py's exception class for it)."""


def redis_error(reply: ErrorReply) -> ResponseError:
    error: ResponseError = BaseParser.parse_error(str(reply))  # type: ignore[no-untyped-call]
    return error


def pack_command(command: tuple[Any, ...]) -> bytes:
    """One command in RESP (its arguments: str, bytes, int or float, as redis-py accepts)."""
    packed: bytes = hiredis.pack_command(command)
    return packed


class _Link(asyncio.Protocol):
    """One TCP connection: queued writes, and replies matched to their callers in order."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.reader = hiredis.Reader(replyError=ErrorReply, notEnoughData=INCOMPLETE)
        self.waiting: deque[tuple[asyncio.Future[Any], float]] = deque()
        """The callers whose commands were written or queued, oldest first, with the time each was issued."""
        self.outgoing: list[bytes] = []
        self.closed = False
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def call(self, packed: bytes) -> asyncio.Future[Any]:
        """Queue one packed command; the future gets its reply (an error reply as an exception *value*)."""
        if self.closed:
            raise RedisConnectionError("the script connection to Redis is closed")
        future: asyncio.Future[Any] = self.loop.create_future()
        if not self.outgoing:
            self.loop.call_soon(self._flush)
        self.outgoing.append(packed)
        self.waiting.append((future, self.loop.time()))
        if self._deadline is None and self.timeout is not None:
            self._deadline = self.loop.call_later(self.timeout, self._check_deadline)
        return future

    def oldest_wait(self) -> float:
        """Seconds the oldest command still unanswered has waited (0 when none waits)."""
        return self.loop.time() - self.waiting[0][1] if self.waiting else 0.0

    def _flush(self) -> None:
        if self.closed or not self.outgoing or self.transport is None:
            return
        outgoing, self.outgoing = self.outgoing, []
        self.transport.write(outgoing[0] if len(outgoing) == 1 else b"".join(outgoing))

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not INCOMPLETE:
            if not self.waiting:
                self.fail(RedisConnectionError("Redis sent a reply no command was waiting for"))
                return
            future, _ = self.waiting.popleft()
            if not future.done():  # its caller may have been cancelled
                future.set_result(redis_error(reply) if isinstance(reply, ErrorReply) else reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(RedisConnectionError("Connection closed by server." if exc is None else f"Error while reading from Redis: {exc}"))

    def _check_deadline(self) -> None:
        """Fail everything once the oldest command has waited ``timeout`` (one timer per connection, not per command)."""
        self._deadline = None
        if self.closed or not self.waiting or self.timeout is None:
            return
        remaining = self.waiting[0][1] + self.timeout - self.loop.time()
        if remaining <= 0:
            self.fail(RedisTimeoutError("Timeout reading from Redis"))
        else:
            self._deadline = self.loop.call_later(remaining, self._check_deadline)

    def fail(self, error: Exception) -> None:
        """Close the connection; every waiting caller gets ``error``."""
        self.closed = True
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        waiting, self.waiting = self.waiting, deque()
        self.outgoing = []
        for future, _ in waiting:
            if not future.done():
                future.set_exception(error)
        if self.transport is not None:
            self.transport.abort()


@dataclass(frozen=True, slots=True)
class DirectAddress:
    """Where and how to reach one Redis over plain TCP or a unix socket, as a redis-py client's pool is configured."""

    host: str
    port: int
    db: int = 0
    path: str | None = None
    """The unix socket, when the Redis is reached through one (then ``host`` and ``port`` are not used)."""
    username: str | None = None
    password: str | None = None
    timeout: float | None = 5.0
    connect_timeout: float | None = 5.0

    @classmethod
    def of(cls, client: Any) -> DirectAddress | None:
        """The address of the Redis that ``client`` (redis-py) talks to, with its credentials and timeouts; None unless
        that is one Redis over plain TCP or a unix socket (a Cluster, TLS or a credential provider are left to redis-py)."""
        if not isinstance(client, Redis):  # a Redis Cluster client is not one
            return None
        pool = client.connection_pool
        settings = pool.connection_kwargs
        if pool.connection_class not in (Connection, UnixDomainSocketConnection) or settings.get("credential_provider") is not None:
            return None
        path = settings.get("path") if pool.connection_class is UnixDomainSocketConnection else None
        return cls(
            str(settings.get("host", "localhost")), int(settings.get("port", 6379)), int(settings.get("db", 0) or 0), path,
            settings.get("username"), settings.get("password"), settings.get("socket_timeout"), settings.get("socket_connect_timeout"),
        )  # fmt: skip

    @property
    def where(self) -> str:
        """The address as error messages say it."""
        return self.path if self.path is not None else f"{self.host}:{self.port}"

    async def open(self, factory: Callable[[], P]) -> P:
        """A new connection with protocol ``factory()``; redis-py's ConnectionError or TimeoutError if it cannot be made."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout):
                if self.path is not None:
                    _, protocol = await loop.create_unix_connection(factory, self.path)
                else:
                    _, protocol = await loop.create_connection(factory, self.host, self.port)
        except TimeoutError:
            raise RedisTimeoutError(f"Timeout connecting to Redis at {self.where}") from None
        except OSError as error:
            raise RedisConnectionError(f"Error connecting to Redis at {self.where}: {error}") from error
        return protocol


class ScriptPipeline:
    """Runs scripts on one Redis over one pipelined connection (opened on first use, again after a failure)."""

    def __init__(self, address: DirectAddress) -> None:
        self.address = address
        self._link: _Link | None = None
        self._connecting = asyncio.Lock()
        self._attempts_ended = 0
        """Connection attempts that succeeded or failed so far."""
        self._failure: Exception | None = None
        """Why the last attempt failed (None once one succeeded, or when it was cancelled)."""

    @classmethod
    def for_client(cls, client: Any) -> ScriptPipeline | None:
        """A pipeline to the Redis ``client`` (redis-py) talks to, if that is one Redis over plain TCP or a unix socket."""
        address = DirectAddress.of(client)
        return None if address is None else cls(address)

    def lag(self) -> float:
        """Seconds the oldest script still unanswered on the connection has waited (0 when none waits): how far this
        process's race commands are behind Redis."""
        link = self._link
        return 0.0 if link is None or link.closed else link.oldest_wait()

    async def run_script(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The script's reply (loading the script first if Redis does not know it); redis-py's exceptions on failure."""
        started = time.perf_counter()
        failed = True
        try:
            reply = await self._command("EVALSHA", script.sha, len(keys), *keys, *args)
            if isinstance(reply, NoScriptError):
                loaded = await self._command("SCRIPT", "LOAD", script.script)
                if isinstance(loaded, Exception):
                    raise loaded
                reply = await self._command("EVALSHA", script.sha, len(keys), *keys, *args)
            if isinstance(reply, Exception):
                raise reply
            failed = False
            return reply
        finally:
            metrics.redis_command("EVALSHA", time.perf_counter() - started, failed)

    async def _command(self, *command: Any) -> Any:
        link = self._link
        if link is None or link.closed:
            link = await self._connect()
        return await link.call(pack_command(command))

    async def _connect(self) -> _Link:
        ended = self._attempts_ended
        async with self._connecting:
            if self._link is not None and not self._link.closed:
                return self._link
            if self._attempts_ended != ended and self._failure is not None:  # the attempt this caller waited for failed
                raise type(self._failure)(str(self._failure))
            self._failure = None
            try:
                link = await self._open()
            except Exception as error:
                self._failure = error
                raise
            finally:
                self._attempts_ended += 1
            self._link = link
            return link

    async def _open(self) -> _Link:
        """A new connection, past its HELLO (and SELECT)."""
        address = self.address
        link = await address.open(lambda: _Link(address.timeout))
        try:
            async with asyncio.timeout(address.connect_timeout):
                hello: tuple[Any, ...] = ("HELLO", 3)
                if address.password is not None:
                    hello += ("AUTH", address.username or "default", address.password)
                replies = [link.call(pack_command(hello))]
                if address.db:
                    replies.append(link.call(pack_command(("SELECT", address.db))))
                for reply in replies:
                    answer = await reply
                    if isinstance(answer, Exception):
                        raise answer
        except TimeoutError:
            link.fail(RedisTimeoutError("Timeout connecting to Redis"))
            raise RedisTimeoutError(f"Timeout connecting to Redis at {address.where}") from None
        except BaseException:
            link.fail(RedisConnectionError("the script connection to Redis failed to start"))
            raise
        return link

    async def close(self) -> None:
        """Close the connection (commands still waiting fail with ConnectionError)."""
        if self._link is not None:
            self._link.fail(RedisConnectionError("the script connection to Redis was closed"))
            self._link = None
