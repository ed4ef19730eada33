"""Rated quick match: close ratings are paired first, the window widens with waiting, and the same two players are
not paired twice in a row while someone else fits."""

from __future__ import annotations

import asyncio

from lobby_helpers import refused
from player_helpers import booked, event_of, new_handle, registered, set_rating
from race_helpers import server_config

from client import RaceClient
from server.app import RaceServer
from server.services.quick_match import RatingWindow
from server.store import keys
from shared.protocol import Countdown, PlayerJoined, PlayerLeft, Queued, RaceClosed, RaceResult, RaceSettings, Seated, Started


def own_queue(limit: int) -> RaceSettings:
    """Rated settings with a time limit no other test uses: a queue (one per settings) of the test's own."""
    return RaceSettings(rated=True, time_limit=limit)


async def test_close_ratings_are_paired_first_and_rated_requests_never_meet_unrated_ones(race_server: RaceServer) -> None:
    url = race_server.url
    far, near, newcomer, casual = [await registered(url, new_handle(name)) for name in ("Far", "Near", "New", "Cas")]
    await set_rating(race_server, far, 1900)
    await set_rating(race_server, near, 1540)
    await set_rating(race_server, newcomer, 1500)
    settings = own_queue(4322)
    assert isinstance(await far.quick_match(settings), Queued)  # waiting longest, but 400 points away
    queued_near = await near.quick_match(settings)
    assert isinstance(queued_near, Queued)  # 360 points from Far: outside the window at once
    assert isinstance(await casual.quick_match(RaceSettings(time_limit=4322)), Queued)  # same rules, unrated: apart
    seated = await newcomer.quick_match(settings)
    assert isinstance(seated, Seated) and seated.race.race == queued_near.race.race
    with refused("account_required"):
        guest = await RaceClient.connect(url)
        await guest.hello("guest")
        try:
            await guest.quick_match(settings)
        finally:
            await guest.close()
    for client in (far, near, newcomer, casual):
        await client.close()


async def test_the_window_widens_with_waiting_until_distant_ratings_pair(redis_url: str) -> None:
    window = RatingWindow(base=100, step_points=100, step_seconds=0.5, anyone_after_seconds=30)
    async with RaceServer(server_config(redis_url, rating_window=window, quick_match_retry_seconds=0.1)) as server:
        low, high = await registered(server.url, new_handle("Low")), await registered(server.url, new_handle("High"))
        await set_rating(server, low, 1300)
        await set_rating(server, high, 1650)
        settings = own_queue(4323)
        waiting_low = await low.quick_match(settings)
        waiting_high = await high.quick_match(settings)
        assert isinstance(waiting_low, Queued) and isinstance(waiting_high, Queued)  # 350 apart: not at once
        # The window reaches 350 after about 1.5 s; whichever entry is retried first moves to the other's race.
        queued = {low: waiting_low.race.race, high: waiting_high.race.race}
        moved = await first_paired(server, queued)
        stayed = low if moved is high else high
        closed = await event_of(moved, queued[moved], RaceClosed)
        assert (closed.reason, closed.new_race) == ("paired", queued[stayed])
        joined = await event_of(stayed, queued[stayed], PlayerJoined)
        while joined.slot != 1:
            joined = await event_of(stayed, queued[stayed], PlayerJoined)
        assert moved.session is not None and joined.account == moved.session.account
        await event_of(moved, queued[stayed], Started)  # the moved player follows its new race
        await low.close()
        await high.close()


async def first_paired(server: RaceServer, queued: dict[RaceClient, str]) -> RaceClient:
    """The waiting client whose race was closed because a later pairing seated it in the other one."""
    assert server.races is not None
    for _ in range(150):
        for client, race_id in queued.items():
            record = await server.races.store.load_race(race_id)
            if record is not None and record.status == "closed":
                return client
        await asyncio.sleep(0.1)
    raise AssertionError("neither waiting player was paired")


async def test_the_same_two_players_are_not_paired_twice_in_a_row_while_someone_else_fits(race_server: RaceServer) -> None:
    url = race_server.url
    ann, bob, cid = [await registered(url, new_handle(name)) for name in ("Ann", "Bob", "Cid")]
    for client, rating in ((ann, 1500), (bob, 1575), (cid, 1650)):
        await set_rating(race_server, client, rating)
    settings = own_queue(4324)
    first = await ann.quick_match(settings)
    paired = await bob.quick_match(settings)
    assert isinstance(first, Queued) and isinstance(paired, Seated) and paired.race.race == first.race.race
    race_id = first.race.race
    await event_of(ann, race_id, Started)
    await ann.resign(race_id)
    await bob.resign(race_id)
    await event_of(ann, race_id, RaceResult)
    await booked(race_server, race_id)
    ann_again = await ann.quick_match(settings)
    cid_waiting = await cid.quick_match(settings)  # about 150 from Ann: both wait
    assert isinstance(ann_again, Queued) and isinstance(cid_waiting, Queued)
    bob_seated = await bob.quick_match(settings)  # about 75 from each: Cid, not Ann again
    assert isinstance(bob_seated, Seated) and bob_seated.race.race == cid_waiting.race.race
    for client in (ann, bob, cid):
        await client.close()


async def test_a_rated_player_whose_partner_left_the_countdown_waits_again_with_its_window_and_is_paired(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=60)) as server:
        ann, bob, cid = [await registered(server.url, new_handle(name)) for name in ("Ann", "Bob", "Cid")]
        for client, rating in ((ann, 1500), (bob, 1550), (cid, 1560)):
            await set_rating(server, client, rating)
        settings = own_queue(4325)
        waiting = await ann.quick_match(settings)
        assert isinstance(waiting, Queued)
        race_id = waiting.race.race
        assert isinstance(await bob.quick_match(settings), Seated)
        await event_of(ann, race_id, Countdown)
        await bob.leave(race_id)
        await event_of(ann, race_id, PlayerLeft)
        assert server.redis is not None and ann.session is not None
        meta = await server.redis.hget(keys.QUICK_MATCH_RATINGS, f"{race_id}:{ann.session.player}")
        record = await server.races.record(race_id)  # type: ignore[union-attr]
        assert meta == f"{1500.0!r}|{record.created_at}".encode()  # its wait counts from its request
        seated = await cid.quick_match(settings)
        assert isinstance(seated, Seated) and (seated.race.race, seated.slot) == (race_id, 1)
        await event_of(ann, race_id, Countdown)
        for client in (ann, bob, cid):
            await client.close()


async def test_a_player_still_in_a_rated_race_is_refused_a_rated_quick_match_instead_of_waiting_in_the_queue(
    race_server: RaceServer,
) -> None:
    url = race_server.url
    ann, bob, cid = [await registered(url, new_handle(name)) for name in ("Ann", "Bob", "Cid")]
    first = await ann.create(RaceSettings(rated=True))
    await bob.join(first.race.race)
    settings = own_queue(4325)
    with refused("rated_busy"):
        await ann.quick_match(settings)
    # Nobody is left in the queue for Cid to be paired with (and refused rated_busy for Ann's race): Cid waits.
    assert isinstance(await cid.quick_match(settings), Queued)
    for client in (ann, bob, cid):
        await client.close()


async def test_a_rated_quick_match_meeting_a_partner_who_started_another_rated_race_waits_and_the_partner_entry_is_cancelled(
    race_server: RaceServer,
) -> None:
    url = race_server.url
    ann, bob, cid = [await registered(url, new_handle(name)) for name in ("Ann", "Bob", "Cid")]
    settings = own_queue(4326)
    queued = await ann.quick_match(settings)
    assert isinstance(queued, Queued)
    other = await ann.create(RaceSettings(rated=True))  # Ann waits in the queue and plays another rated race meanwhile
    await bob.join(other.race.race)
    assert isinstance(await cid.quick_match(settings), Queued)  # not rated_busy: Cid plays no other rated race
    closed = await event_of(ann, queued.race.race, RaceClosed)
    assert closed.reason == "cancelled"
    for client in (ann, bob, cid):
        await client.close()
