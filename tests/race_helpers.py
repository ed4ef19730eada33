"""Helpers of the race-server tests: test settings, two seated clients, a started race."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from server_processes import ClusterUrl

from client import RaceClient
from server.app import RaceServer, ServerConfig
from server.services.accounts import LoginLimits
from server.services.lobby import LobbyLimits
from server.services.ratings import LadderRules
from server.services.sessions import SessionLimits
from server.store import InviteLimits, RaceStore, deal_texts
from server.transport import TransportLimits
from shared.protocol import Countdown, MoveMade, Progress, RaceEvent, RaceResult, RaceSettings, Started

SUITE_LOGIN_LIMITS = LoginLimits(per_address=0, overall=0, registrations_per_address=0, free_failures_per_address=0)
"""The login limits of the suite, all from 127.0.0.1: no per-address or global budget, no per-address delay (the
limits per handle stay: every test logs in to handles of its own; tests of the limits set their own)."""
GENEROUS_INVITE_LIMITS = InviteLimits(per_source=1_000_000, overall=1_000_000)
OPEN_LADDER = LadderRules(min_moves=0, min_seconds=0, same_address_window_seconds=0, pair_races_per_day=0, leaderboard_min_opponents=0)
"""Ladder rules that let the suite's registered clients (all on 127.0.0.1) play rated races decided at once."""
"""Invite guessing limits that the whole suite, all from one address, never reaches (tests of the limits set their own)."""


def server_config(redis_url: str, **overrides: object) -> ServerConfig:
    """Server settings for tests: a free port, a short countdown, fast timers, no solver filling the seed pool, no
    minimum spectator delay (the fair-play tests set one)."""
    settings: dict[str, object] = {
        "redis_url": "" if isinstance(redis_url, ClusterUrl) else redis_url,
        "redis_cluster_url": redis_url if isinstance(redis_url, ClusterUrl) else "",
        "port": 0,
        "countdown_seconds": 0.05,
        "timer_interval": 0.05,
        "limits": TransportLimits(),
        "seed_pool_target": 0,
        # Tests open many races on one connection, and every test client comes (and guesses) from 127.0.0.1.
        "lobby": LobbyLimits(max_open_per_owner=64, max_open_per_player=64, max_open_per_address=0, invites=GENEROUS_INVITE_LIMITS),
        "sessions": SessionLimits(max_new_per_address=0),
        "login": SUITE_LOGIN_LIMITS,
        "ladder": OPEN_LADDER,  # rated races of 127.0.0.1 against itself, decided at once (tests/test_ladder_rules.py sets them)
        "spectator_delay_seconds": 10.0,  # the suite's races pick their own delays; FAIRPLAY tests set the minimums
        "min_spectator_delay_seconds": 0.0,
        "analysis": False,  # a test that wants the post-race analysis turns it on (tests/test_fairplay_race.py)
    }
    settings.update(overrides)
    return ServerConfig(**settings)  # type: ignore[arg-type]


@dataclass
class Race:
    """Two connected players seated in one race."""

    race_id: str
    ann: RaceClient
    bob: RaceClient
    countdown: Countdown
    bob_countdown: Countdown

    async def close(self) -> None:
        await self.ann.close()
        await self.bob.close()


async def player(url: str, name: str) -> RaceClient:
    """A connected client that said hello."""
    client = await RaceClient.connect(url)
    await client.hello(name)
    return client


async def seated_race(url: str, settings: RaceSettings | None = None, *, start: bool = True) -> Race:
    """Ann creates a race, Bob joins; with ``start`` both have seen the ``started`` event."""
    ann = await player(url, "Ann")
    bob = await player(url, "Bob")
    seated = await ann.create(settings or RaceSettings(seed=1))
    if seated.race.invite is not None:  # a private race is joined with its code, not its id (the watch link)
        await bob.join_invite(seated.race.invite)
    else:
        await bob.join(seated.race.race)
    countdown = await ann.wait_for(Countdown)
    bob_countdown = await bob.wait_for(Countdown)
    if start:
        await ann.wait_for(Started)
        await bob.wait_for(Started)
    return Race(seated.race.race, ann, bob, countdown, bob_countdown)


async def play(client: RaceClient, race_id: str, moves: list[str] | tuple[str, ...]) -> None:
    """Play ``moves`` one after the other, each acknowledged before the next."""
    for move in moves:
        await client.move(race_id, move)


async def finished_race(url: str, settings: RaceSettings, moves: list[str] | tuple[str, ...] = ()) -> str:
    """A race Ann and Bob raced to its result (Ann plays ``moves``, then both resign), both gone; its id (to replay)."""
    race = await seated_race(url, settings)
    await play(race.ann, race.race_id, moves)
    await race.ann.resign(race.race_id)
    await race.bob.resign(race.race_id)
    await race.ann.wait_for(RaceResult)
    await race.close()
    return race.race_id


async def events_until(client: RaceClient, last: Callable[[RaceEvent], bool], timeout: float = 10.0) -> list[RaceEvent]:
    """The race events a client receives up to and including the first one for which ``last`` is true."""
    events: list[RaceEvent] = []
    while True:
        event = await client.next_event(timeout)
        if isinstance(event, RaceEvent):
            events.append(event)
            if last(event):
                return events


async def assert_stream_resumed(spectator: RaceClient, race: Race, after: int, bob_moves: int, seen: list[RaceEvent] | None = None) -> None:
    """After a fault of the race channels: ``spectator`` (watching after event ``after``; ``seen``: what it received
    already) receives every event up to Bob's move ``bob_moves`` once and in order, and Ann's progress events of them
    come in order, none twice."""
    seen = [*(seen or []), *await events_until(spectator, lambda event: isinstance(event, MoveMade) and event.move_seq == bob_moves)]
    assert [event.seq for event in seen] == list(range(after + 1, seen[-1].seq + 1))
    progress = await events_until(race.ann, lambda event: isinstance(event, Progress) and event.seq == seen[-1].seq)
    assert [event.seq for event in progress] == sorted({event.seq for event in progress})


async def events_until_each(client: RaceClient, *kinds: type[RaceEvent], timeout: float = 10.0) -> list[RaceEvent]:
    """The race events a client receives until one of each of ``kinds`` has arrived, in whatever order."""
    missing = set(kinds)

    def all_seen(event: RaceEvent) -> bool:
        missing.discard(type(event))
        return not missing

    return await events_until(client, all_seen, timeout)


def drop(client: RaceClient) -> None:
    """Cut the client's TCP connection without a closing handshake, as a network failure would."""
    client.connection.transport.abort()


def deals(countdown: Countdown, seed: int) -> bool:
    """Whether the countdown dealt the layout of ``seed`` (its seed itself is hidden until the result)."""
    return (countdown.columns, countdown.bouquet) == deal_texts(seed)


def store_of(server: RaceServer) -> RaceStore:
    """The race store of an in-process server (to read what Redis holds)."""
    assert server.races is not None
    return server.races.store
