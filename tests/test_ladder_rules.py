"""The ladder cannot be farmed (issue 25.1; docs/PLAYERS.md "Ladder rules"): a rated race too short to mean anything is
aborted and rated for nobody, two accounts of one client address never play rated against each other, a pair plays a
bounded number of rated races a day, the leaderboard lists only players with enough distinct opponents, and the
operators see the pairs that tried (``flowergarden admin pairs``)."""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import replace
from pathlib import Path

import pytest
from lobby_helpers import refused
from player_helpers import PASSWORD, booked, event_of, new_handle, rated_race, registered
from race_helpers import OPEN_LADDER, server_config
from server_processes import ServerProcess
from test_ops_admin import admin
from websockets.asyncio.client import connect

from client import RaceClient, ServerError
from server.app import RaceServer
from shared.protocol import RaceResult, RaceSettings, Started


async def client_from(url: str, port: int, source: str, handle: str, *, register: bool = True) -> RaceClient:
    """A client of another loopback address (``127.0.0.x`` stands in for another client's address), registered to
    (or logged in to) ``handle``."""
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    client = RaceClient(await connect(url, sock=sock, compression=None), url=url)
    await client.hello(handle)
    if register:
        await client.register(handle, PASSWORD)
    else:
        await client.login(handle, PASSWORD)
    return client


async def abandoned_at_once(farmer: RaceClient, puppet: RaceClient) -> RaceResult:
    """The farming move of issue 25: a private rated race with a 1 s grace period, which the puppet joins by its
    invite code and leaves at the start without a move (its attempt ends abandoned, which loses a rated race)."""
    seated = await farmer.create(RaceSettings(rated=True, private=True, grace=1))
    assert seated.race.invite is not None
    await puppet.join_invite(seated.race.invite)
    await event_of(farmer, seated.race.race, Started)
    await puppet.close()
    return await event_of(farmer, seated.race.race, RaceResult, timeout=20)


async def test_a_farming_run_of_puppets_changes_no_rating_and_lists_the_pairs_for_the_operators(redis_url: str, tmp_path: Path) -> None:
    """The run of issue 25 against a real ``flowergarden serve`` with its default ladder rules (the login budgets per
    address are off: every test of the suite registers from 127.0.0.1): a puppet of the
    farmer's own address is refused the rated race; puppets of other addresses that leave at once without a move
    give aborted results; no rating moves, and ``flowergarden admin pairs`` lists every pair with its signal."""
    settings = tmp_path / "server.toml"  # the suite's registrations all come from 127.0.0.1: no login budgets there
    settings.write_text("[login]\nper_address = 0\noverall = 0\nregistrations_per_address = 0\nfree_failures_per_address = 0\n")
    server = ServerProcess(redis_url, tmp_path / "server.log", ("--config", str(settings)))
    try:
        await server.ready()
        farmer_handle = new_handle("Farm")
        farmer = await client_from(server.url, server.port, "127.0.0.1", farmer_handle)
        same_address = await client_from(server.url, server.port, "127.0.0.1", new_handle("Pup"))
        seated = await farmer.create(RaceSettings(rated=True, private=True, grace=1))
        assert seated.race.invite is not None
        with refused("rated_same_network"):
            await same_address.join_invite(seated.race.invite)
        await farmer.leave(seated.race.race)
        await same_address.close()
        puppets = [new_handle("Pup") for _ in range(3)]
        for index, puppet_handle in enumerate(puppets):
            puppet = await client_from(server.url, server.port, f"127.0.0.{10 + index}", puppet_handle)
            result = await abandoned_at_once(farmer, puppet)
            assert (result.winner, result.reason, result.aborted) == (0, "abandoned", "too_few_moves")
            assert [standing.rating for standing in result.players] == [None, None]
        async with asyncio.timeout(20):  # the booking: history lines of rated races with no rating change
            while len((await farmer.history()).items) < len(puppets):
                await asyncio.sleep(0.1)
        assert all(item.rating is None for item in (await farmer.history()).items)
        assert (await farmer.leaderboard()).own_rating is None  # never rated: still the newcomer's 1500 ± 350
        listed = await admin(redis_url, "pairs", "--json")
        assert listed.returncode == 0, listed.stderr
        pairs = {frozenset(pair["handles"]): pair for pair in json.loads(listed.stdout)}
        (refused_pair,) = [pair for handles, pair in pairs.items() if farmer_handle in handles and pair["same_address"]]
        assert (refused_pair["same_address"], refused_pair["rated"]) == (1, 0)
        for puppet_handle in puppets:
            pair = pairs[frozenset({farmer_handle, puppet_handle})]
            assert (pair["aborted"], pair["rated"], pair["same_address"]) == (1, 1, 0)
        text = await admin(redis_url, "pairs")
        assert f"{farmer_handle} vs " in text.stdout or f" vs {farmer_handle}" in text.stdout
        await farmer.close()
    finally:
        server.stop()


async def test_a_rated_race_that_ends_too_soon_after_its_start_is_aborted_for_both(redis_url: str) -> None:
    ladder = replace(OPEN_LADDER, min_seconds=30)
    async with RaceServer(server_config(redis_url, ladder=ladder)) as server:
        ann, bob = await registered(server.url, new_handle("Ann")), await registered(server.url, new_handle("Bob"))
        result = await rated_race(ann, bob)
        assert (result.reason, result.aborted) == ("abandoned", "too_short")
        assert [standing.rating for standing in result.players] == [None, None]
        await booked(server, result.race)
        assert (await ann.leaderboard()).own_rating is None
        await ann.close()


async def test_a_pair_plays_a_bounded_number_of_rated_races_a_day(redis_url: str) -> None:
    ladder = replace(OPEN_LADDER, pair_races_per_day=2)
    async with RaceServer(server_config(redis_url, ladder=ladder)) as server:
        ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
        ann = await registered(server.url, ann_handle)
        for index in range(2):
            bob = await registered(server.url, bob_handle) if index == 0 else await _login(server.url, bob_handle)
            result = await rated_race(ann, bob)
            assert result.aborted is None and result.players[0].rating is not None
            await booked(server, result.race)
        bob = await _login(server.url, bob_handle)
        seated = await bob.create(RaceSettings(rated=True))  # whoever creates it: the pair is the same
        with pytest.raises(ServerError) as error:
            await ann.join(seated.race.race)
        assert (error.value.code, error.value.expected) == ("rated_pair_limit", 2)
        carl = await registered(server.url, new_handle("Carl"))
        await carl.join(seated.race.race)  # another pair: rated as usual
        assert server.books is not None
        (pair,) = [pair for pair in await server.books.suspicious_pairs() if set(pair.handles) == {ann_handle, bob_handle}]
        assert (pair.over_limit, pair.rated) == (1, 2)
        await asyncio.gather(ann.close(), bob.close(), carl.close())


async def _login(url: str, handle: str) -> RaceClient:
    client = await RaceClient.connect(url)
    await client.hello(handle)
    await client.login(handle, PASSWORD)
    return client


async def test_the_leaderboard_lists_a_player_only_after_rated_races_against_enough_distinct_opponents(redis_url: str) -> None:
    ladder = replace(OPEN_LADDER, leaderboard_min_opponents=2)
    async with RaceServer(server_config(redis_url, ladder=ladder, provisional_deviation=1000.0)) as server:
        ann_handle = new_handle("Ann")
        ann = await registered(server.url, ann_handle)
        bob_handle = new_handle("Bob")
        for index in range(2):  # twice the same opponent: still one
            bob = await registered(server.url, bob_handle) if index == 0 else await _login(server.url, bob_handle)
            await booked(server, (await rated_race(ann, bob)).race)
        board = await ann.leaderboard()
        assert ann_handle not in [entry.handle for entry in board.entries] and board.own is None
        carl = await registered(server.url, new_handle("Carl"))
        await booked(server, (await rated_race(ann, carl)).race)
        board = await ann.leaderboard()
        assert ann_handle in [entry.handle for entry in board.entries]
        await ann.close()
