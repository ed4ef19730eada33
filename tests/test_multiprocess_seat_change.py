"""A seat change before the start, seen by two server processes that cached the race: the second player leaves the
countdown (the race is redealt), a third player takes the seat. No process may act on the old seat or the old deal:
the moves of the new player are accepted, the old player's are refused, the creator plays the new deal, and what
Redis holds replays on the stored deal."""

from __future__ import annotations

import asyncio

import pytest
from conftest import SpawnServers
from race_helpers import events_until, player, server_config

from client import RaceClient, ServerError
from server.app import RaceServer
from server.services.race import replay
from server.store import RaceStore, StaleEpoch, StoreRefusal, connect_redis
from shared import Board, Rules, Status, action_text
from shared.protocol import (
    AttemptState,
    Countdown,
    DealLayout,
    Disconnected,
    ErrorCode,
    MoveMade,
    PlayerLeft,
    RaceSettings,
    Started,
)
from shared.race import board_from_layout


def opening(deal: Countdown | DealLayout) -> Board:
    """The opening position of a layout the server dealt (the seed is hidden until the result)."""
    return board_from_layout(deal.columns, deal.bouquet, Rules())


def legal_texts(opening: Board) -> set[str]:
    """The moves legal on an opening position (classic rules), in notation."""
    return {action_text(move) for move in opening.legal_moves()}


def two_moves(opening: Board) -> list[str]:
    """Two moves playable one after the other from an opening position."""
    board = opening.copy()
    first = board.legal_moves()[0]
    board.play(first)
    return [action_text(first), action_text(board.legal_moves()[0])]


async def refused(client: RaceClient, race_id: str, move: str) -> str:
    """The error code of a move the server must refuse."""
    try:
        reply = await client.move(race_id, move)
    except ServerError as error:
        return error.code
    raise AssertionError(f"{move} was accepted: {reply}")


async def test_after_the_second_player_leaves_the_countdown_no_process_acts_on_the_old_seat_or_the_old_deal(
    redis_url: str, spawn_servers: SpawnServers
) -> None:
    first, second = await spawn_servers(2, "--countdown", "2")  # long enough to act in it on a loaded machine
    ann = await player(first.url, "Ann")
    bob, cid = await player(second.url, "Bob"), await player(second.url, "Cid")
    ann_elsewhere = await RaceClient.connect(second.url)
    await ann_elsewhere.hello("Ann", ann.token)
    redis = connect_redis(redis_url)
    try:
        race_id = (await ann.create(RaceSettings(spectator_delay=0))).race.race
        await bob.join(race_id)
        old_deal = opening(await bob.wait_for(Countdown))
        old_move = min(legal_texts(old_deal))
        # Both processes look at the race in the countdown (and cache what they saw).
        assert await refused(bob, race_id, old_move) == "not_started"
        assert await refused(ann, race_id, old_move) == "not_started"
        assert await refused(ann_elsewhere, race_id, old_move) == "not_started"
        await bob.leave(race_id)
        await cid.join(race_id)
        countdowns = [event for event in await events_until(cid, lambda event: isinstance(event, Started)) if isinstance(event, Countdown)]
        new_deal = opening(countdowns[-1])  # the join replays the race's events from the first: both countdowns
        assert new_deal.columns != old_deal.columns
        only_old = sorted(legal_texts(old_deal) - legal_texts(new_deal))
        assert only_old  # two random deals never offer the same opening moves
        on_new = two_moves(new_deal)

        assert (await cid.move(race_id, on_new[0])).seq == 1
        assert await refused(bob, race_id, on_new[0]) == "not_seated"
        assert await refused(ann, race_id, only_old[0]) not in ("not_started", "not_seated")
        assert (await ann.move(race_id, on_new[0])).seq == 1
        assert (await ann_elsewhere.move(race_id, on_new[1], seq=1)).seq == 2  # the other process: the new deal too

        store = RaceStore(redis)
        record = await store.load_race(race_id)
        assert record is not None and Board.deal(record.deal.seed).columns == new_deal.columns
        assert ann.session is not None and cid.session is not None
        assert [seat.player for seat in record.seats] == [ann.session.player, cid.session.player]
        assert await store.actions(race_id, 0) == [on_new[0], on_new[1]]
        assert await store.actions(race_id, 1) == [on_new[0]]
        for slot in (0, 1):
            replay(record.deal.seed, record.settings.rules, await store.actions(race_id, slot))  # raises if not playable on the deal
    finally:
        for client in (ann, bob, cid, ann_elsewhere):
            await client.close()
        await redis.aclose()


async def test_the_move_script_refuses_a_player_who_no_longer_holds_the_seat_and_a_view_of_an_older_epoch(
    redis_url: str, spawn_servers: SpawnServers
) -> None:
    """The store's own guard, whatever a process has cached: the seat is checked against the player, and the epoch
    (bumped by the join and by the leave) against the one the engine checked with."""
    (server,) = await spawn_servers(1, "--countdown", "2")
    ann, bob, cid = await player(server.url, "Ann"), await player(server.url, "Bob"), await player(server.url, "Cid")
    redis = connect_redis(redis_url)
    store = RaceStore(redis)
    try:
        race_id = (await ann.create(RaceSettings(spectator_delay=0))).race.race
        created = await store.load_race(race_id)
        await bob.join(race_id)
        await bob.leave(race_id)
        await cid.join(race_id)
        record = await store.load_race(race_id)
        assert created is not None and record is not None and record.epoch == created.epoch + 3
        assert bob.session is not None and cid.session is not None
        await cid.wait_for(Started, timeout=10)
        move = two_moves(Board.deal(record.deal.seed))[0]
        arguments = {"seq": 0, "move_id": "m1", "action": move, "count": 0, "left": 52, "status": Status.PLAYING, "undos": 0}
        with pytest.raises(StoreRefusal) as refusal:
            await store.apply_action(race_id, 1, player=bob.session.player, epoch=record.epoch, **arguments)  # type: ignore[arg-type]
        assert refusal.value.code == ErrorCode.NOT_SEATED
        with pytest.raises(StaleEpoch):
            await store.apply_action(race_id, 1, player=cid.session.player, epoch=created.epoch + 1, **arguments)  # type: ignore[arg-type]
        assert await store.actions(race_id, 1) == []
        with pytest.raises(StoreRefusal) as refusal:
            await store.end_attempt(race_id, 1, AttemptState.RESIGNED, player=bob.session.player)
        assert refusal.value.code == ErrorCode.NOT_SEATED
        assert (await store.apply_action(race_id, 1, player=cid.session.player, epoch=record.epoch, **arguments)).move_seq == 1  # type: ignore[arg-type]
    finally:
        for client in (ann, bob, cid):
            await client.close()
        await redis.aclose()


async def test_a_player_who_left_the_countdown_keeps_no_view_of_the_seat_on_its_other_connections(
    redis_url: str, spawn_servers: SpawnServers
) -> None:
    """Bob follows the race on two processes and leaves on one; Cid takes the seat. Bob's other connection gets
    the ``player_left`` and then nothing of Cid's seat (no moves of Cid's, which only Cid and, delayed, spectators
    may see), and its process holds no presence lease for the seat any more: when Cid goes, Ann sees it."""
    first, second = await spawn_servers(2, "--countdown", "2", "--presence-lease", "1.5")
    ann = await player(first.url, "Ann")
    bob, cid = await player(first.url, "Bob"), await player(first.url, "Cid")
    bob_elsewhere = await RaceClient.connect(second.url)
    await bob_elsewhere.hello("Bob", bob.token)
    try:
        race_id = (await ann.create(RaceSettings(spectator_delay=0))).race.race
        await bob.join(race_id)
        await bob_elsewhere.sync(race_id)
        await bob.leave(race_id)
        await cid.join(race_id)
        await events_until(cid, lambda event: isinstance(event, Started))
        await asyncio.sleep(1.2)  # two lease renewals of the second process: none may hold Cid's seat
        synced = await cid.sync(race_id)
        assert synced.deal is not None
        await cid.move(race_id, two_moves(opening(synced.deal))[0])
        await cid.close()
        away = await events_until(ann, lambda event: isinstance(event, Disconnected) and event.slot == 1)
        assert away[-1].slot == 1
        seen = await events_until(bob_elsewhere, lambda event: isinstance(event, PlayerLeft))
        assert isinstance(seen[-1], PlayerLeft) and seen[-1].slot == 1
        with pytest.raises(TimeoutError):
            extra = await bob_elsewhere.next_event(timeout=0.5)
            raise AssertionError(f"Bob's other connection still follows the seat: {extra}")
    finally:
        for client in (ann, bob, cid, bob_elsewhere):
            await client.close()


async def test_a_player_who_leaves_the_countdown_and_joins_again_follows_the_race_from_its_new_seat(redis_url: str) -> None:
    """The catch-up of the new seating replays the old ``player_left``: it must not end the new subscription."""
    async with RaceServer(server_config(redis_url, countdown_seconds=1.0)) as server:
        ann, bob = await player(server.url, "Ann"), await player(server.url, "Bob")
        try:
            race_id = (await ann.create(RaceSettings(spectator_delay=0))).race.race
            await bob.join(race_id)
            await bob.leave(race_id)
            await bob.join(race_id)
            seen = await events_until(bob, lambda event: isinstance(event, Started))
            assert PlayerLeft in [type(event) for event in seen]  # replayed by the new seating's catch-up
            move = two_moves(opening([event for event in seen if isinstance(event, Countdown)][-1]))[0]
            await bob.move(race_id, move)
            own = await events_until(bob, lambda event: isinstance(event, MoveMade))
            assert own[-1].move == move
        finally:
            await ann.close()
            await bob.close()
