"""Several real server processes on one Redis: a player on process A, the opponent on B and a spectator on C see
one race live and in order; a process that dies leaves no ghost spectators, and its player's grace period is
enforced by another process."""

from __future__ import annotations

import asyncio
import signal

from conftest import ON_BOTH_STORES, ON_EVERY_STORE, SpawnServers
from race_helpers import events_until, events_until_each, play, player
from winning_lines import first_foundation_prefix, winning_deal

from server.app import RaceServer
from shared.protocol import (
    AttemptEnded,
    Disconnected,
    MoveMade,
    Progress,
    RaceEvent,
    RaceResult,
    RaceSettings,
    Started,
    WatcherCount,
)


def is_result(event: RaceEvent) -> bool:
    return isinstance(event, RaceResult)


@ON_EVERY_STORE
async def test_players_on_two_processes_and_a_spectator_on_a_third_see_one_race_in_order(spawn_servers: SpawnServers) -> None:
    seed, line = winning_deal()
    first, second, third = await spawn_servers(3)
    ann, bob, eve = await player(first.url, "Ann"), await player(second.url, "Bob"), await player(third.url, "Eve")
    try:
        race_id = (await ann.create(RaceSettings(seed=seed, spectator_delay=0))).race.race
        await bob.join(race_id)
        watching = await eve.watch(race_id)
        opening = {name: await events_until(client, lambda event: isinstance(event, Started)) for name, client in (("ann", ann), ("bob", bob))}
        # Both play at the same time, each through its own process.
        await asyncio.gather(play(ann, race_id, line[:12]), play(bob, race_id, line[:9]))
        await ann.resign(race_id)
        await bob.resign(race_id)
        views = {name: await events_until(client, is_result) for name, client in (("ann", ann), ("bob", bob), ("eve", eve))}
        for name, events in opening.items():
            views[name] = events + views[name]

        # The spectator: every event after its snapshot, once, in order, with both players' moves in the order applied.
        spectator = views["eve"]
        assert [event.seq for event in spectator] == list(range(watching.race.event_seq + 1, spectator[-1].seq + 1))
        for slot, played in ((0, line[:12]), (1, line[:9])):
            assert [event.move for event in spectator if isinstance(event, MoveMade) and event.slot == slot] == list(played)
        # The players: the same sequence; each sees its own moves and only the opponent's progress.
        by_seq = {event.seq: event for event in spectator}
        for slot, name in ((0, "ann"), (1, "bob")):
            view = views[name]
            assert [event.seq for event in view] == list(range(1, view[-1].seq + 1))
            for event in view:
                if event.seq in by_seq and isinstance(by_seq[event.seq], MoveMade):
                    expected = MoveMade if by_seq[event.seq].slot == slot else Progress  # type: ignore[attr-defined]
                    assert type(event) is expected
            assert any(isinstance(event, WatcherCount) and event.count == 1 for event in view)
        assert views["ann"][-1] == views["bob"][-1] == spectator[-1]
    finally:
        for client in (ann, bob, eve):
            await client.close()


@ON_BOTH_STORES
async def test_a_killed_process_leaves_no_ghosts_and_another_process_ends_its_players_attempt(
    race_server: RaceServer, spawn_servers: SpawnServers
) -> None:
    """Bob and a spectator are on a process that is killed (no goodbye): their presence leases expire, Ann sees
    Bob disconnected and the watcher count drop, and after the grace period the timers (here: Ann's process)
    end Bob's attempt as abandoned."""
    seed, line = winning_deal()
    (doomed,) = await spawn_servers(1, "--presence-lease", "1.2")
    ann = await player(race_server.url, "Ann")
    bob, eve = await player(doomed.url, "Bob"), await player(doomed.url, "Eve")
    try:
        race_id = (await ann.create(RaceSettings(seed=seed, spectator_delay=0, grace=1))).race.race
        await bob.join(race_id)
        await eve.watch(race_id)
        opening = await events_until_each(ann, WatcherCount, Started)  # either may come first
        assert [event.count for event in opening if isinstance(event, WatcherCount)] == [1]
        await play(ann, race_id, first_foundation_prefix(seed, line, 1))
        doomed.signal(signal.SIGKILL)
        seen = await events_until(ann, is_result, timeout=15)
        away = next(event for event in seen if isinstance(event, Disconnected))
        ended = next(event for event in seen if isinstance(event, AttemptEnded))
        assert away.slot == 1 and away.grace_until == away.at + 1000
        assert [event.count for event in seen if isinstance(event, WatcherCount)] == [0]
        assert (ended.slot, ended.reason) == (1, "abandoned") and ended.at >= away.grace_until
        result = seen[-1]
        assert isinstance(result, RaceResult) and (result.winner, result.reason) == (0, "count")
    finally:
        for client in (ann, bob, eve):
            await client.close()
