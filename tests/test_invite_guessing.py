"""Guessing invite codes stays hopeless: wrong codes are limited per player, per source address (with a lockout that
doubles each time) and overall, whatever number of sessions or processes a guesser uses (issue 17, section 4)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import pytest
import pytest_asyncio
from lobby_helpers import players, refused
from race_helpers import GENEROUS_INVITE_LIMITS, server_config
from redis.asyncio import Redis

from server.app import RaceServer
from server.services.lobby import INVITE_ALPHABET, INVITE_LENGTH, LobbyLimits
from server.store import InviteLimits, LobbyStore, keys
from server.transport import client_address
from shared.protocol import RaceSettings

WRONG = "2" * INVITE_LENGTH


@pytest_asyncio.fixture
async def store(redis_url: str) -> AsyncIterator[LobbyStore]:
    """A lobby store whose guessing counters start empty and are emptied again (every test client is 127.0.0.1)."""
    redis = Redis.from_url(redis_url)

    async def forget_guesses() -> None:
        found = [key async for key in redis.scan_iter(match=f"{keys.INVITE_GUARD_TAG}:*")]
        if found:
            await redis.delete(*found)

    await forget_guesses()
    yield LobbyStore(redis)
    await forget_guesses()
    await redis.aclose()


async def test_a_source_is_locked_out_after_its_misses_for_twice_as_long_each_time(store: LobbyStore) -> None:
    limits = InviteLimits(per_player=1000, per_source=3, overall=1000, first_lockout_ms=300, longest_lockout_ms=1000)
    for strike, lockout in enumerate((300, 600, 1000, 1000)):  # doubles, up to the longest
        for _ in range(3):
            assert await store.invite_attempt("eve", "198.51.100.7", limits) == 0
        refusal = await store.invite_attempt("eve", "198.51.100.7", limits)
        assert refusal is not None and (refusal.limit, refusal.retry_after_ms) == ("source", lockout)
        still = await store.invite_attempt("eve", "198.51.100.7", limits)
        assert still is not None and still.limit == "source" and 0 < still.retry_after_ms <= lockout
        assert await store.invite_attempt("eve", f"203.0.113.{strike}", limits) == 0  # another address is not affected
        await asyncio.sleep(lockout / 1000 + 0.05)


async def test_fresh_sessions_do_not_escape_the_limit_of_their_address(store: LobbyStore) -> None:
    limits = InviteLimits(per_player=20, per_source=5, overall=1000)
    for session in range(5):
        assert await store.invite_attempt(f"player-{session}", "198.51.100.7", limits) == 0
    refusal = await store.invite_attempt("yet-another-player", "198.51.100.7", limits)
    assert refusal is not None and refusal.limit == "source"


async def test_everybodys_misses_past_the_overall_limit_slow_guesses_down_and_never_refuse_them(store: LobbyStore) -> None:
    limits = InviteLimits(per_player=20, per_source=20, overall=4, overall_delay_ms=1500)
    for address in range(4):
        assert await store.invite_attempt(f"p{address}", f"198.51.100.{address}", limits) == 0
    assert await store.invite_attempt("p9", "198.51.100.99", limits) == 1500  # slowed, not refused


async def test_a_right_code_joins_while_a_flood_of_wrong_codes_spent_the_overall_limit(redis_url: str, store: LobbyStore) -> None:
    limits = LobbyLimits(invites=InviteLimits(per_player=1000, per_source=1000, overall=5, overall_delay_ms=50))
    async with RaceServer(server_config(redis_url, lobby=limits)) as server, players(server.url, "Ann", "Eve", "Bob") as (ann, eve, bob):
        code = (await ann.create(RaceSettings(private=True))).race.invite
        assert code is not None
        for _ in range(10):  # twice the overall limit, from one guesser
            with refused("unknown_invite"):
                await eve.join_invite(WRONG)
        assert (await bob.join_invite(code)).slot == 1  # before: rate_limited for everybody until the window ended


async def test_a_waiting_private_races_seat_is_not_taken_through_its_watch_link(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Eve", "Bob") as (ann, eve, bob):
        seated = await ann.create(RaceSettings(private=True))
        with refused("invite_required"):
            await eve.join(seated.race.race)  # the race id is the watch link, shared with spectators
        assert seated.race.invite is not None
        assert (await bob.join_invite(seated.race.invite)).slot == 1


async def test_a_right_code_is_not_counted_as_a_miss(store: LobbyStore) -> None:
    limits = InviteLimits(per_player=2, per_source=2, overall=2)
    for _ in range(10):
        assert await store.invite_attempt("ann", "198.51.100.7", limits) == 0
        await store.invite_refund("ann", "198.51.100.7")


async def test_a_guesser_opening_new_sessions_is_refused_even_the_right_code(redis_url: str, store: LobbyStore) -> None:
    limits = LobbyLimits(invites=replace(GENEROUS_INVITE_LIMITS, per_source=3))
    async with RaceServer(server_config(redis_url, lobby=limits)) as server, players(server.url, "Ann", "Eve", "Eve2") as (ann, eve, eve2):
        code = (await ann.create(RaceSettings(private=True))).race.invite
        assert code is not None
        for _ in range(3):
            with refused("unknown_invite"):
                await eve.join_invite(WRONG)
        with refused("rate_limited"):
            await eve2.join_invite(code)  # a fresh session from the same address
        with refused("rate_limited"):
            await eve.join_invite(code)
        public = await ann.create(RaceSettings())
        assert (await eve.join(public.race.race)).slot == 1  # joining by a race id is not limited this way


@dataclass
class Peer:
    """Stands in for a connection: all :func:`client_address` reads is its socket's remote address and its handshake
    request (none here: no X-Forwarded-For)."""

    remote_address: tuple[str, int] | None
    request: None = None


@pytest.mark.parametrize(
    ("remote", "address"),
    [
        (("198.51.100.7", 50123), "198.51.100.7"),
        (("2001:db8:1:2:aaaa::1", 50123), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:bbbb::9", 443), "2001:db8:1:2::/64"),
        (("::ffff:198.51.100.7", 1), "198.51.100.7"),
        (None, "unknown"),
    ],
)
def test_guesses_count_against_an_ipv4_address_or_an_ipv6_64(remote: tuple[str, int] | None, address: str) -> None:
    assert client_address(Peer(remote)) == address  # type: ignore[arg-type]


def test_invite_codes_have_eight_unambiguous_characters() -> None:
    assert INVITE_LENGTH == 8 and len(INVITE_ALPHABET) == 32 and not set(INVITE_ALPHABET) & set("01OI")
