"""Ghost races on a real server: a recorded attempt replayed at its pace in seat 1 of a private, unrated race on the
same deal, labelled; never before the ghost's own deal was revealed (the daily deal's day over, the race finished)."""

from __future__ import annotations

from daily_helpers import TestClock, daily_server
from lobby_helpers import refused
from player_helpers import booked, event_of, new_handle, registered
from race_helpers import deals, events_until, play, player
from winning_lines import winning_deal

from client import RaceClient
from server.app import RaceServer
from shared.daily import DAY_MS, day_of, day_start
from shared.protocol import (
    AttemptEnded,
    AttemptState,
    Countdown,
    GhostSource,
    Progress,
    RaceEvent,
    RaceResult,
    RaceSettings,
    Started,
)

__all__ = ["daily_server"]  # the fixture
PACE_MS = 20
"""The recorded attempt's time between two moves."""


async def raced_to_the_end(bob: RaceClient, race_id: str) -> tuple[Countdown, list[RaceEvent]]:
    """What Bob, not moving, sees of a ghost race until its result."""
    events = await events_until(bob, lambda event: isinstance(event, RaceResult) and event.race == race_id, timeout=60)
    countdown = next(event for event in events if isinstance(event, Countdown))
    return countdown, events


async def test_a_finished_days_attempt_and_a_finished_race_run_as_ghosts_at_their_pace(daily_server: tuple[RaceServer, TestClock]) -> None:
    server, clock = daily_server
    seed, line = winning_deal()
    day = day_of(clock.now)
    ann_handle = new_handle("ann")
    ann, bob = await registered(server.url, ann_handle), await player(server.url, "Bob")
    try:
        attempt = await ann.daily_start()
        for number, move in enumerate(line):
            clock.now += PACE_MS
            await ann.daily_move(attempt.attempt, number, move)
        with refused("daily_not_over"):  # the ghost race's result would reveal the day's seed
            await bob.ghost_race(GhostSource.DAILY, day=day, handle=ann_handle)
        with refused("daily_not_over"):  # one's own too
            await ann.ghost_race(GhostSource.DAILY, day=day)
        with refused("bad_field"):
            await bob.create(RaceSettings(ghost="daily nobody"))  # only the server labels a ghost race

        clock.now = day_start(day) + DAY_MS
        seated = await bob.ghost_race(GhostSource.DAILY, day=day, handle=ann_handle)
        race = seated.race
        assert race.settings.ghost == f"daily {day} {ann_handle}" and not race.settings.rated and race.settings.private
        assert race.seed is None and race.seed_chosen  # revealed with the result, as in any race
        countdown, events = await raced_to_the_end(bob, race.race)
        assert deals(countdown, seed)
        counts = [event.count for event in events if isinstance(event, Progress) and event.slot == 1]
        assert counts == sorted(counts) and counts[-1] == 52
        ended = next(event for event in events if isinstance(event, AttemptEnded) and event.slot == 1)
        assert ended.reason is AttemptState.CLEARED
        result = events[-1]
        assert isinstance(result, RaceResult) and result.winner == 1 and result.seed == seed
        assert [standing.name for standing in result.players] == ["Bob", f"Ghost of {ann_handle}"]
        assert result.players[1].time_ms >= PACE_MS * len(line)  # never faster than recorded
        assert result.players[1].moves == len(line)

        with refused("not_finished"):
            waiting = await ann.create(RaceSettings(seed=seed))
            await bob.ghost_race(GhostSource.RACE, race=waiting.race.race)
        again = await bob.ghost_race(GhostSource.RACE, race=race.race, slot=1)  # the ghost race's own ghost
        assert again.race.settings.ghost == f"race {race.race} Ghost of {ann_handle}"
        _, replayed = await raced_to_the_end(bob, again.race.race)
        last = replayed[-1]
        assert isinstance(last, RaceResult) and last.winner == 1 and last.players[1].moves == len(line)
    finally:
        await ann.close()
        await bob.close()


async def test_a_ghost_is_never_offered_while_its_race_runs_and_its_race_is_unrated_and_a_ghost_in_the_history(
    daily_server: tuple[RaceServer, TestClock],
) -> None:
    server, _ = daily_server
    seed, line = winning_deal()
    cy_handle = new_handle("cy")
    cy, dee = await registered(server.url, cy_handle), await player(server.url, "Dee")
    try:
        recorded = (await cy.create(RaceSettings(seed=seed))).race.race
        await dee.join(recorded)
        await event_of(cy, recorded, Started)
        for asker in (dee, cy):  # the seed is still secret while the race runs: even its own player gets no ghost
            with refused("not_finished"):
                await asker.ghost_race(GhostSource.RACE, race=recorded, slot=0)
        await play(cy, recorded, line)
        assert (await event_of(cy, recorded, RaceResult)).winner == 0
        await booked(server, recorded)

        seated = await cy.ghost_race(GhostSource.RACE, race=recorded, slot=0)  # his own best
        ghost_race = seated.race.race
        assert seated.race.seed is None and not seated.race.settings.rated
        with refused("not_finished"):  # the ghost race runs: its own deal is not revealed yet
            await dee.ghost_race(GhostSource.RACE, race=ghost_race, slot=1)
        _, events = await raced_to_the_end(cy, ghost_race)
        result = events[-1]
        assert isinstance(result, RaceResult) and result.winner == 1 and result.seed == seed
        assert result.players[1].rating is None and result.players[0].rating is None
        await booked(server, ghost_race)

        page = await dee.history(cy_handle)  # a friend's view of his history
        newest, original = page.items[0], page.items[1]
        assert (newest.race, original.race) == (ghost_race, recorded)
        assert newest.ghost == f"race {recorded} {cy_handle}" and not newest.rated and newest.rating is None
        assert newest.opponent.name == f"Ghost of {cy_handle}" and newest.outcome == "lost"
        assert original.ghost is None
    finally:
        await cy.close()
        await dee.close()
