"""Graceful shutdown of a real server process mid-race: SIGTERM drains (newcomers refused, the race under way plays
to its result on the same process, then the process exits); past the drain's timeout, or with no drain, its clients
are told to go, reconnect to the other process and finish the race there; every acknowledged move is stored
exactly once."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, field

import pytest
from conftest import SpawnServers
from race_helpers import play, player, seated_race
from websockets.exceptions import InvalidStatus
from winning_lines import winning_deal

from client import ConnectionLost, Incoming, RaceClient, Resumed, ServerError
from server.store import RaceStore, connect_redis
from shared.protocol import SHUTDOWN_REASON, CloseCode, RaceEvent, RaceResult, RaceSettings, ServerShutdown, Started


@dataclass
class Runner:
    """A player that keeps playing its moves, moving to ``fallback`` when its server goes away."""

    client: RaceClient
    race_id: str
    moves: list[str]
    fallback: str
    acknowledged: list[str] = field(default_factory=list)
    closes: list[tuple[int | None, str]] = field(default_factory=list)

    async def run(self) -> None:
        while len(self.acknowledged) < len(self.moves):
            try:
                reply = await self.client.move(self.race_id, self.moves[len(self.acknowledged)])
            except ConnectionLost as lost:
                self.closes.append((lost.code, lost.reason))
                resumed = await self.client.reconnect(self.fallback)
                if self.race_id in resumed.resent:  # the move in flight: applied once, now acknowledged
                    self.acknowledged.append(resumed.resent[self.race_id].move)
                continue
            except ServerError as error:
                assert error.code == "race_over"  # the opponent cleared first
                return
            self.acknowledged.append(reply.move)


async def test_sigterm_mid_race_sends_everyone_to_the_other_process_and_the_race_finishes_there(
    spawn_servers: SpawnServers, redis_url: str
) -> None:
    seed, line = winning_deal()
    leaving, staying = await spawn_servers(2, "--sigterm-drain", "0")
    ann, bob, eve = await player(leaving.url, "Ann"), await player(leaving.url, "Bob"), await player(leaving.url, "Eve")
    redis = connect_redis(redis_url)
    try:
        race_id = (await ann.create(RaceSettings(seed=seed, spectator_delay=0))).race.race
        await bob.join(race_id)
        watching = await eve.watch(race_id)
        await ann.wait_for(Started)
        runners = [Runner(ann, race_id, list(line), staying.url), Runner(bob, race_id, list(line[:40]), staying.url)]
        playing = [asyncio.create_task(runner.run()) for runner in runners]
        while len(runners[0].acknowledged) < 10:  # mid-race, moves in flight on both connections
            await asyncio.sleep(0.005)
        leaving.signal(signal.SIGTERM)

        # The spectator is told, follows to the other process and goes on watching from where it was.
        followed: list[Incoming | Resumed] = []
        async for item in eve.follow([staying.url]):
            followed.append(item)
            if isinstance(item, RaceResult):
                break
        kinds = [type(item) for item in followed if not isinstance(item, RaceEvent)]
        assert kinds == [ServerShutdown, Resumed]

        await asyncio.gather(*playing)
        assert await leaving.exited() == 0, leaving.output()
        for runner in runners:
            assert runner.closes == [(CloseCode.GOING_AWAY, SHUTDOWN_REASON)]
        # Every acknowledged move is stored, once, in order; Ann cleared on the other process.
        store = RaceStore(redis)
        assert runners[0].acknowledged == list(line)
        assert runners[1].acknowledged == list(line[:40])
        assert await store.actions(race_id, 0) == list(line)
        assert await store.actions(race_id, 1) == list(line[:40])
        result = followed[-1]
        assert isinstance(result, RaceResult) and (result.winner, result.reason) == (0, "cleared")
        seqs = [event.seq for event in followed if isinstance(event, RaceEvent)]
        assert seqs == list(range(watching.race.event_seq + 1, result.seq + 1))
    finally:
        for client in (ann, bob, eve):
            await client.close()
        await redis.aclose()


async def test_sigterm_drains_the_race_under_way_finishes_on_the_same_process_then_it_exits(spawn_servers: SpawnServers) -> None:
    """The default SIGTERM (what `docker stop` and Kubernetes send): stop accepting, send the lobby away at once,
    let the race play to its result where it is, then exit 0 — long before the drain's timeout."""
    seed, line = winning_deal()
    (server,) = await spawn_servers(1, "--sigterm-drain", "120")
    race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
    lobby = await player(server.url, "Lee")
    try:
        server.signal(signal.SIGTERM)
        assert isinstance(await lobby.wait_for(ServerShutdown), ServerShutdown)  # not in a race: sent away at once
        with pytest.raises(InvalidStatus) as refused:
            await RaceClient.connect(server.url)
        assert refused.value.response.status_code == 503
        await play(race.ann, race.race_id, line)  # the race goes on, on this process, to Ann's clear
        result = await race.ann.wait_for(RaceResult)
        assert (result.winner, result.reason) == (0, "cleared")
        assert await server.exited(timeout=60) == 0
        assert "SIGTERM: draining" in server.output() and "drained, stopping" in server.output()
    finally:
        for client in (race.ann, race.bob, lobby):
            await client.close()


async def test_past_the_sigterm_drain_timeout_the_players_are_handed_to_the_other_process(spawn_servers: SpawnServers) -> None:
    """A race that does not finish within the drain is not cut: its players get server_shutdown, resume on the
    other process and finish there."""
    seed, line = winning_deal()
    leaving, staying = await spawn_servers(2, "--sigterm-drain", "1")
    race = await seated_race(leaving.url, RaceSettings(seed=seed, spectator_delay=0))
    try:
        await play(race.ann, race.race_id, line[:5])
        leaving.signal(signal.SIGTERM)
        assert isinstance(await race.ann.wait_for(ServerShutdown), ServerShutdown)
        assert await leaving.exited(timeout=30) == 0
        assert "SIGTERM: draining" in leaving.output()
        await race.ann.reconnect(staying.url)
        await play(race.ann, race.race_id, line[5:])
        result = await race.ann.wait_for(RaceResult)
        assert (result.winner, result.reason) == (0, "cleared")
    finally:
        await race.close()
