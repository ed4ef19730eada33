"""Quick match: players asking for the same settings are paired (once, atomically, across processes) and race."""

from __future__ import annotations

import asyncio

from conftest import ON_BOTH_STORES, ON_EVERY_STORE
from lobby_helpers import no_lobby_event, players, refused, wait_until
from race_helpers import player, server_config

from client import RaceClient
from server.app import RaceServer
from shared.protocol import Countdown, PlayerJoined, PlayerLeft, Queued, RaceClosed, RaceSettings, Seated, Started


@ON_BOTH_STORES
async def test_two_players_with_the_same_settings_are_paired_and_race(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob", "Wes") as (ann, bob, watcher):
        await watcher.watch_lobby()
        settings = RaceSettings(undo=True, time_limit=90)
        waiting = await ann.quick_match(settings)
        assert isinstance(waiting, Queued) and waiting.race.status == "waiting"
        paired = await bob.quick_match(RaceSettings(undo=True, time_limit=90, private=True))  # private does not matter
        assert isinstance(paired, Seated) and paired.slot == 1 and paired.race.race == waiting.race.race
        assert paired.race.settings.undo and paired.race.settings.time_limit == 90
        joined = [await ann.wait_for(PlayerJoined), await ann.wait_for(PlayerJoined)]
        assert [(event.slot, event.name) for event in joined] == [(0, "Ann"), (1, "Bob")]
        assert (await ann.wait_for(Countdown)).columns == (await bob.wait_for(Countdown)).columns
        await ann.wait_for(Started)
        await bob.wait_for(Started)
        assert waiting.race.race not in watcher.lobby  # quick-match races are never listed
        await no_lobby_event(watcher, waiting.race.race)
        with refused("not_queued"):
            await ann.cancel_quick_match()


async def test_players_with_different_settings_are_not_paired(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob", "Cid") as (ann, bob, cid):
        assert isinstance(await ann.quick_match(RaceSettings(profile="classic")), Queued)
        assert isinstance(await bob.quick_match(RaceSettings(profile="foundation-only")), Queued)
        assert isinstance(await cid.quick_match(RaceSettings(profile="classic", time_limit=60)), Queued)
        dan = await player(race_server.url, "Dan")
        paired = await dan.quick_match(RaceSettings(profile="foundation-only"))
        assert isinstance(paired, Seated) and paired.race.players[0].name == "Bob"
        await dan.close()


async def test_a_cancelled_or_disconnected_player_leaves_the_queue(race_server: RaceServer) -> None:
    settings = RaceSettings(redeal_once=True, time_limit=33)
    ann = await player(race_server.url, "Ann")
    bob = await player(race_server.url, "Bob")
    cid = await player(race_server.url, "Cid")
    lobby = race_server.lobby
    assert lobby is not None
    try:
        queued = await ann.quick_match(settings)
        assert isinstance(queued, Queued)
        await ann.cancel_quick_match()
        closed = await ann.wait_for(RaceClosed)
        assert (closed.race, closed.reason) == (queued.race.race, "cancelled")
        with refused("not_queued"):
            await ann.cancel_quick_match()

        assert isinstance(await bob.quick_match(settings), Queued)  # not paired with Ann's cancelled entry
        bob_player = bob.session.player  # type: ignore[union-attr]
        await bob.close()

        async def bob_left_the_queue() -> bool:
            return await lobby.queue.entry_of(bob_player) is None

        await wait_until(bob_left_the_queue, what="the disconnected player's entry to go")
        assert isinstance(await cid.quick_match(settings), Queued)  # not paired with Bob, who is gone
    finally:
        for client in (ann, cid):
            await client.close()


async def test_asking_again_replaces_the_earlier_queue_entry(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob") as (ann, bob):
        first = await ann.quick_match(RaceSettings(profile="foundation-only"))
        assert isinstance(first, Queued)
        second = await ann.quick_match(RaceSettings(undo=True))
        assert isinstance(second, Queued) and second.race.race != first.race.race
        assert (await ann.wait_for(RaceClosed)).race == first.race.race
        assert isinstance(await bob.quick_match(RaceSettings(profile="foundation-only")), Queued)
        paired = await bob.quick_match(RaceSettings(undo=True))
        assert isinstance(paired, Seated) and paired.race.race == second.race.race


@ON_EVERY_STORE
async def test_concurrent_requests_on_two_processes_pair_every_player_exactly_once(redis_url: str) -> None:
    """Ten players ask at once, half on each process: five races, every player in exactly one."""
    settings = RaceSettings(time_limit=7)
    async with RaceServer(server_config(redis_url)) as first, RaceServer(server_config(redis_url)) as second:
        clients = [await player((first if index % 2 else second).url, f"P{index}") for index in range(10)]
        try:
            replies = await asyncio.gather(*(client.quick_match(settings) for client in clients))
            races: dict[str, list[str]] = {}
            for client, reply in zip(clients, replies):
                if isinstance(reply, Queued):
                    await client.wait_for(Countdown)  # someone joined this player's race
                races.setdefault(reply.race.race, []).append(client.session.player)  # type: ignore[union-attr]
            assert len(races) == 5
            assert all(len(players) == 2 for players in races.values())
            assert len({p for players in races.values() for p in players}) == 10
            for race_id, players in races.items():
                record = await first.races.record(race_id)  # type: ignore[union-attr]
                assert sorted(seat.player for seat in record.seats) == sorted(players)
        finally:
            for client in clients:
                await client.close()


async def test_quick_match_refuses_settings_it_cannot_deal(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann") as (ann,):
        with refused("bad_field"):
            await ann.quick_match(RaceSettings(profile="spider"))
        with refused("bad_field"):
            await ann.quick_match(RaceSettings(solvable_only=True, seed=5))


async def test_a_client_that_closes_while_queued_does_not_leave_a_ghost_entry_on_reconnect(race_server: RaceServer) -> None:
    """After the connection drops, the same player (same token) can queue again and gets paired normally."""
    settings = RaceSettings(time_limit=44)
    ann = await player(race_server.url, "Ann")
    token = ann.token
    assert isinstance(await ann.quick_match(settings), Queued)
    await ann.close()
    again = await RaceClient.connect(race_server.url)
    async with players(race_server.url, "Bob") as (bob,):
        await again.hello("Ann", token=token)
        queued = await again.quick_match(settings)
        paired = await bob.quick_match(settings)
        assert isinstance(paired, Seated) and paired.race.race == queued.race.race


async def test_a_waiting_player_whose_partner_left_the_countdown_is_queued_again_and_paired_with_the_next_request(
    redis_url: str,
) -> None:
    """Ann waits, Bob (another process) is paired and leaves in the countdown: Ann's race is queued again, so Cid is
    paired with it; when Cid leaves too, Ann can cancel, and Dan is then not paired with the cancelled race."""
    settings = RaceSettings(time_limit=48)
    async with (
        RaceServer(server_config(redis_url, countdown_seconds=60)) as first,
        RaceServer(server_config(redis_url, countdown_seconds=60)) as second,
        players(first.url, "Ann") as (ann,),
        players(second.url, "Bob", "Cid", "Dan") as (bob, cid, dan),
    ):
        waiting = await ann.quick_match(settings)
        assert isinstance(waiting, Queued)
        race_id = waiting.race.race
        paired = await bob.quick_match(settings)
        assert isinstance(paired, Seated) and paired.race.race == race_id
        await ann.wait_for(Countdown)
        await bob.leave(race_id)
        assert (await ann.wait_for(PlayerLeft)).slot == 1

        again = await cid.quick_match(settings)
        assert isinstance(again, Seated) and (again.race.race, again.slot) == (race_id, 1)
        assert again.race.players[0].name == "Ann"
        joined = await ann.wait_for(PlayerJoined)
        assert (joined.slot, joined.name) == (1, "Cid")
        await ann.wait_for(Countdown)

        await cid.leave(race_id)
        await ann.wait_for(PlayerLeft)
        await ann.cancel_quick_match()
        closed = await ann.wait_for(RaceClosed)
        assert (closed.race, closed.reason) == (race_id, "cancelled")
        assert isinstance(await dan.quick_match(settings), Queued)  # not paired with Ann's cancelled race


async def test_a_new_request_replaces_a_race_queued_again_after_its_partner_left(redis_url: str) -> None:
    settings = RaceSettings(time_limit=49)
    async with (
        RaceServer(server_config(redis_url, countdown_seconds=60)) as server,
        players(server.url, "Ann", "Bob") as (ann, bob),
    ):
        waiting = await ann.quick_match(settings)
        assert isinstance(waiting, Queued)
        assert isinstance(await bob.quick_match(settings), Seated)
        await bob.leave(waiting.race.race)
        replacing = await ann.quick_match(RaceSettings(time_limit=50))
        assert isinstance(replacing, Queued) and replacing.race.race != waiting.race.race
        closed = await ann.wait_for(RaceClosed)
        assert (closed.race, closed.reason) == (waiting.race.race, "cancelled")


async def test_a_race_queued_again_is_paired_with_a_player_who_queued_during_its_countdown(redis_url: str) -> None:
    """Cid asked for the same settings while Ann's countdown ran, so it waits in a race of its own: once Bob leaves,
    one of the two waiting players is moved into the other's race (``paired``) and they race."""
    settings = RaceSettings(time_limit=51)
    config = server_config(redis_url, countdown_seconds=60, quick_match_retry_seconds=0.1)
    async with RaceServer(config) as server, players(server.url, "Ann", "Bob", "Cid") as (ann, bob, cid):
        waiting = await ann.quick_match(settings)
        assert isinstance(waiting, Queued)
        assert isinstance(await bob.quick_match(settings), Seated)
        await ann.wait_for(Countdown)
        cid_waiting = await cid.quick_match(settings)
        assert isinstance(cid_waiting, Queued) and cid_waiting.race.race != waiting.race.race
        await bob.leave(waiting.race.race)
        races = server.races
        assert races is not None

        async def one_race_closed() -> bool:
            statuses = [(await races.record(race_id)).status for race_id in (waiting.race.race, cid_waiting.race.race)]
            return "closed" in statuses

        await wait_until(one_race_closed, timeout=15, what="one waiting player to be moved into the other's race")
        ann_moved = (await races.record(waiting.race.race)).status == "closed"
        mover, stayer = (ann, cid) if ann_moved else (cid, ann)
        left_race, stayed_race = (waiting.race.race, cid_waiting.race.race) if ann_moved else (cid_waiting.race.race, waiting.race.race)
        closed = await mover.wait_for(RaceClosed)
        assert (closed.race, closed.reason, closed.new_race) == (left_race, "paired", stayed_race)
        joined = await stayer.wait_for(PlayerJoined)
        while joined.race != stayed_race or joined.slot != 1:
            joined = await stayer.wait_for(PlayerJoined)
        assert joined.name == ("Ann" if ann_moved else "Cid")
        await stayer.wait_for(Countdown)
