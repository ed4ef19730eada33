"""History and stats: finished races newest first, paged, each with its replay; counts, clears and best times."""

from __future__ import annotations

from conftest import ON_BOTH_RECORDS
from player_helpers import booked, new_handle, rated_race, registered
from race_helpers import play
from winning_lines import winning_deal

from server.app import RaceServer
from shared.protocol import RaceResult, RaceSettings, Started


@ON_BOTH_RECORDS
async def test_history_lists_finished_races_newest_first_paged_with_replays_and_stats_add_up(race_server: RaceServer) -> None:
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    ann, bob = await registered(race_server.url, ann_handle), await registered(race_server.url, bob_handle)
    seed, line = winning_deal()
    casual = await ann.create(RaceSettings(seed=seed))
    await bob.join(casual.race.race)
    await ann.wait_for(Started)
    await play(ann, casual.race.race, list(line))
    cleared = await ann.wait_for(RaceResult)
    await booked(race_server, cleared.race)
    rated = await rated_race(bob, ann)  # Ann abandons: Bob wins
    await booked(race_server, rated.race)

    page = await bob.history(ann_handle, limit=1)
    assert page.total == 2 and [item.race for item in page.items] == [rated.race]
    newest = page.items[0]
    assert (newest.outcome, newest.reason, newest.rated, newest.ended) == ("lost", "abandoned", True, "abandoned")
    assert newest.opponent.account == bob_handle and newest.rating is not None and newest.rating.delta < 0
    older = (await bob.history(ann_handle, offset=1, limit=1)).items[0]
    assert page.next is not None and (await bob.history(ann_handle, before=page.next, limit=1)).items[0] == older  # keyset
    assert (await bob.history(ann_handle, offset=1, limit=1)).next is None
    assert (older.race, older.outcome, older.reason, older.rated, older.count) == (cleared.race, "won", "cleared", False, 52)
    assert older.replay_available and older.time_ms == cleared.players[0].time_ms
    events = [event async for event in bob.replay(older.race)]
    assert isinstance(events[-1], RaceResult)

    stats = await bob.stats(ann_handle)
    (classic,) = stats.profiles
    assert (stats.handle, classic.races, classic.wins, classic.losses, classic.draws, classic.clears) == (ann_handle, 2, 1, 1, 0, 1)
    assert classic.best_clear_ms == cleared.players[0].time_ms
    assert classic.average_count == (52 + rated.players[1].count) / 2
    assert classic.rating is not None and classic.rating.games == 1
    bob_stats = await bob.stats()
    assert (bob_stats.profiles[0].wins, bob_stats.profiles[0].losses, bob_stats.profiles[0].clears) == (1, 1, 0)
    await bob.close()


@ON_BOTH_RECORDS
async def test_history_stats_and_leaderboard_asked_right_after_the_result_include_the_race(race_server: RaceServer) -> None:
    """A client that shows "your history" on the result must find the race there: the views book what is finished
    (here the background booking loop is stopped, so only that can book it)."""
    assert race_server.books is not None
    race_server.books.stop()
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    ann, bob = await registered(race_server.url, ann_handle), await registered(race_server.url, bob_handle)
    result = await rated_race(bob, ann)  # Ann abandons: Bob wins
    history = await bob.history()
    assert [item.race for item in history.items] == [result.race] and history.items[0].outcome == "won"
    (classic,) = (await bob.stats()).profiles
    assert (classic.races, classic.wins) == (1, 1) and classic.rating is not None and classic.rating.games == 1
    board = await bob.leaderboard()
    assert board.own_rating is not None and board.own_rating.games == 1
    await bob.close()
