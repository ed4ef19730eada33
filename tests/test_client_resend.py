"""The client resends a move whose outcome is unknown (``unavailable``, ``internal_error``) with the same move_id and seq
(docs/PROTOCOL.md "Error codes"), against a scripted server that refuses a chosen number of times first."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from websockets.asyncio.server import ServerConnection, serve

from client import RaceClient, ServerError
from client.race_client import OUTCOME_UNKNOWN_RETRIES
from shared.protocol import Error, Hello, Moved, MoveRequest, Welcome, decode_request, encode


@asynccontextmanager
async def scripted_server(refusals: list[str]) -> AsyncIterator[tuple[str, list[MoveRequest]]]:
    """A server that welcomes, refuses moves with ``refusals`` in turn, then acknowledges; yields its URL and the moves."""
    received: list[MoveRequest] = []

    async def handle(connection: ServerConnection) -> None:
        async for frame in connection:
            assert isinstance(frame, bytes)
            request = decode_request(frame)
            if isinstance(request, Hello):
                await connection.send(encode(Welcome(id=request.id, protocol=1, token="t", player="p", name="Ann", server_time=0)))
            elif isinstance(request, MoveRequest):
                received.append(request)
                if len(received) <= len(refusals):
                    await connection.send(encode(Error(id=request.id, code=refusals[len(received) - 1], message="scripted")))
                else:
                    reply = Moved(
                        id=request.id, race=request.race, move=request.move, seq=request.seq + 1, count=0, left=52,
                        status="playing", undos=0, duplicate=len(received) > 1,
                    )  # fmt: skip
                    await connection.send(encode(reply))

    async with serve(handle, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}", received


@pytest.mark.parametrize("code", ["unavailable", "internal_error"])
async def test_a_move_refused_with_an_unknown_outcome_is_resent_with_the_same_move_id_and_seq(code: str) -> None:
    async with scripted_server([code, code]) as (url, received):
        client = await RaceClient.connect(url)
        try:
            await client.hello("Ann")
            moved = await client.move("race1", "AC b>f")
            assert moved.duplicate and len(received) == 3
            assert len({(request.move_id, request.seq, request.move) for request in received}) == 1
            assert len({request.id for request in received}) == 3  # each resend is a request of its own
        finally:
            await client.close()


async def test_a_move_still_refused_after_the_resends_stays_pending_for_the_reconnect() -> None:
    async with scripted_server(["unavailable"] * (OUTCOME_UNKNOWN_RETRIES + 1)) as (url, received):
        client = await RaceClient.connect(url)
        try:
            await client.hello("Ann")
            with pytest.raises(ServerError) as refused:
                await client.move("race1", "AC b>f", move_id="kept")
            assert refused.value.code == "unavailable" and len(received) == OUTCOME_UNKNOWN_RETRIES + 1
            assert client._unacknowledged["race1"].move_id == "kept"  # reconnect() resends it
        finally:
            await client.close()


async def test_a_move_refused_for_good_is_not_resent() -> None:
    async with scripted_server(["attempt_over"]) as (url, received):
        client = await RaceClient.connect(url)
        try:
            await client.hello("Ann")
            with pytest.raises(ServerError):
                await client.move("race1", "AC b>f")
            assert len(received) == 1 and "race1" not in client._unacknowledged
        finally:
            await client.close()
