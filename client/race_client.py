"""The async client of the race protocol (docs/PROTOCOL.md), used by tests, bots and the terminal client.

    async with await RaceClient.connect("ws://127.0.0.1:8765") as client:
        await client.hello("Ann")
        seated = await client.create(RaceSettings(seed=7))
        async for event in client.events():
            ...

Requests return their reply or raise :class:`ServerError` with the server's
code. Race events arrive through :meth:`RaceClient.events` in sequence order.
The client keeps each race's next action number and gives every move a
unique ``move_id``, so :meth:`RaceClient.move` can simply be called again
after a lost reply: the server applies a move id once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.protocol import (
    PROTOCOL_VERSION,
    Create,
    Error,
    Hello,
    Join,
    Message,
    Moved,
    MoveRequest,
    Ok,
    ProtocolError,
    RaceEvent,
    RaceSettings,
    Request,
    Resign,
    Seated,
    Stuck,
    Sync,
    Synced,
    Welcome,
    decode_server_message,
    encode,
    pack,
)

M = TypeVar("M", bound=Message)


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


class RaceClient:
    """One connection to a race server."""

    def __init__(self, connection: ClientConnection, *, request_timeout: float = 10.0) -> None:
        self.connection = connection
        self.request_timeout = request_timeout
        self.session: Welcome | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Message]] = {}
        self._events: asyncio.Queue[RaceEvent | Unsolicited | ConnectionLost] = asyncio.Queue()
        self._next_seq: dict[str, int] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, url: str, *, open_timeout: float = 10.0, request_timeout: float = 10.0) -> RaceClient:
        """Open a connection (no ``hello`` yet)."""
        connection = await connect(url, open_timeout=open_timeout, max_size=1 << 20, compression=None)
        return cls(connection, request_timeout=request_timeout)

    async def close(self) -> None:
        """Close the connection."""
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
        return await self.request(Create(id=self._id(), token=self.token, settings=settings or RaceSettings()), Seated)

    async def join(self, race: str) -> Seated:
        """Take seat 1 of a waiting race."""
        return await self.request(Join(id=self._id(), token=self.token, race=race), Seated)

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
        reply = await self.request(request, Moved)
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
        return reply

    async def request(self, message: Request, expect: type[M]) -> M:
        """Send a request and wait for its reply of type ``expect``; ServerError on an ``error`` reply."""
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
        if not isinstance(reply, expect):
            raise TypeError(f"expected {expect.TYPE}, got {reply.TYPE}")
        return reply

    async def send_raw(self, data: bytes | str | dict[str, Any]) -> None:
        """Send a frame as is (a map is packed first): for tests and tools probing the server."""
        await self.connection.send(pack(data) if isinstance(data, dict) else data)

    def _id(self) -> int:
        return next(self._ids)

    # --- incoming ------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[RaceEvent | Unsolicited]:
        """Race events (and unsolicited errors) in arrival order; ends when the connection closes."""
        while True:
            item = await self._events.get()
            if isinstance(item, ConnectionLost):
                self._events.put_nowait(item)
                return
            yield item

    async def next_event(self, timeout: float = 10.0) -> RaceEvent | Unsolicited:
        """The next event; ConnectionLost if the connection closed, TimeoutError after ``timeout``."""
        async with asyncio.timeout(timeout):
            item = await self._events.get()
        if isinstance(item, ConnectionLost):
            self._events.put_nowait(item)
            raise item
        return item

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

    def _lost(self) -> ConnectionLost:
        return ConnectionLost(self.connection.close_code, self.connection.close_reason or "")

    async def _read(self) -> None:
        try:
            async for frame in self.connection:
                if isinstance(frame, str):
                    continue
                try:
                    message = decode_server_message(frame)
                except ProtocolError:
                    continue  # a newer server's message this client does not know
                request_id = getattr(message, "id", None)
                future = self._waiting.get(request_id) if isinstance(request_id, int) else None
                if future is not None and not future.done():
                    future.set_result(message)
                elif isinstance(message, RaceEvent):
                    self._events.put_nowait(message)
                elif isinstance(message, Error):
                    self._events.put_nowait(Unsolicited(message))
        except ConnectionClosed:
            pass
        finally:
            lost = self._lost()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(lost)
            self._events.put_nowait(lost)
