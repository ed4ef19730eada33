"""Helpers of the lobby tests: waiting for conditions and events, and a race server in a separate process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TypeVar

import pytest
from race_helpers import player

from client import RaceClient, ServerError
from shared.protocol import LobbyAdded, LobbyChanged, LobbyEvent, LobbyRemoved, Message

M = TypeVar("M", bound=Message)


@asynccontextmanager
async def players(url: str, *names: str) -> AsyncIterator[list[RaceClient]]:
    """Connected clients that said hello with ``names``, closed at the end of the block."""
    clients: list[RaceClient] = []
    try:
        for name in names:
            clients.append(await player(url, name))
        yield clients
    finally:
        for client in clients:
            await client.close()


@contextmanager
def refused(code: str) -> Iterator[None]:
    """The block must raise ServerError with ``code``."""
    with pytest.raises(ServerError) as error:
        yield
    assert error.value.code == code, f"expected {code}, got {error.value.code}: {error.value}"


async def wait_until(condition: Callable[[], Awaitable[bool]], timeout: float = 10.0, what: str = "the condition") -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    try:
        async with asyncio.timeout(timeout):
            while not await condition():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"gave up waiting for {what}") from None


def _about(event: LobbyEvent) -> set[str]:
    """The races a lobby event is about (a reset is about every race)."""
    if isinstance(event, LobbyAdded | LobbyChanged):
        return {event.entry.race}
    if isinstance(event, LobbyRemoved):
        return {event.race}
    return {ANY_RACE}


ANY_RACE = "*"


async def next_lobby_event(client: RaceClient, race_id: str, timeout: float = 10.0) -> LobbyEvent:
    """The client's next lobby event about ``race_id`` (or a reset). The lobby is shared by every test of the session,
    so changes of other tests' races (closed by a stale-heartbeat sweep, say) and race events are skipped."""
    async with asyncio.timeout(timeout):
        while True:
            event = await client.next_event(timeout)
            if isinstance(event, LobbyEvent) and _about(event) & {race_id, ANY_RACE}:
                return event


async def no_lobby_event(client: RaceClient, race_id: str, wait: float = 0.3) -> None:
    """Fail if a lobby event about ``race_id`` arrives within ``wait`` seconds."""
    try:
        event = await next_lobby_event(client, race_id, timeout=wait)
    except TimeoutError:
        return
    raise AssertionError(f"unexpected lobby event {event}")
