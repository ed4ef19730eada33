"""The session store's contract (server/store/session_store.py: SessionStore), run over both implementations: the
in-memory test double (unit tier) and Redis (redis tier), so the double the service tests use keeps Redis's promises.

Lifetimes are checked only in the direction a slow machine cannot break: a session is gone *after* its lifetime
(the test waits longer than it), never "still there before"; the long-lived side of each check lives for days.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable

import pytest

from server.services.errors import ServiceError
from server.services.sessions import SessionLimits, SessionService
from server.store import MemorySessionStore, RedisSessionStore, SessionRecord, SessionStore
from server.store.keys import SESSION_SEATS_KEPT
from shared.protocol import ErrorCode

MakeStore = Callable[..., SessionStore]


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def make_store(request: pytest.FixtureRequest) -> MakeStore:
    """``make_store(**lifetimes)``: a session store of the parametrized kind (the session's Redis for ``redis``)."""
    if request.param == "memory":
        return lambda **lifetimes: MemorySessionStore(**lifetimes)
    client = request.getfixturevalue("redis")
    return lambda **lifetimes: RedisSessionStore(client, **lifetimes)


def token() -> str:
    """A fresh token (the Redis is shared by the whole session)."""
    return secrets.token_urlsafe(16)


async def test_a_new_session_resumes_provisional_and_an_unknown_token_resumes_nothing(make_store: MakeStore) -> None:
    store, ann = make_store(), token()
    await store.create(ann, SessionRecord(player="p-ann", name="Ann", kept=True, account="ann", bot=True))
    assert await store.resume(ann) == SessionRecord(player="p-ann", name="Ann")  # created provisional and anonymous
    assert await store.resume(token()) is None


async def test_a_kept_session_resumes_kept(make_store: MakeStore) -> None:
    store, ann = make_store(), token()
    await store.create(ann, SessionRecord(player="p-ann", name="Ann"))
    await store.keep(ann)
    assert await store.resume(ann) == SessionRecord(player="p-ann", name="Ann", kept=True)


async def test_a_login_moves_the_session_and_its_seats_to_a_fresh_token_and_ends_the_old_one(make_store: MakeStore) -> None:
    store, guest, ann = make_store(), token(), token()
    await store.create(guest, SessionRecord(player="p-guest", name="Guest"))
    await store.add_seat(guest, "r1", 10)
    await store.add_seat(guest, "r2", 20)
    await store.log_in(guest, ann, SessionRecord(player="p-ann", name="ann", account="ann", bot=True))
    assert await store.resume(ann) == SessionRecord(player="p-ann", name="ann", kept=True, account="ann", bot=True)
    assert await store.seat_races(ann) == ["r2", "r1"]
    assert await store.resume(guest) is None
    assert await store.seat_races(guest) == []


async def test_ending_a_session_stops_its_token_and_ending_the_others_spares_the_one_kept(make_store: MakeStore) -> None:
    store, player = make_store(), f"p-{token()}"
    laptop, phone, tablet = token(), token(), token()
    for device in (laptop, phone, tablet):
        await store.log_in(token(), device, SessionRecord(player=player, name="ann", account="ann"))
    await store.end(tablet, player)
    assert await store.resume(tablet) is None
    assert await store.end_others(player, laptop) == 1  # the phone; the tablet had ended already
    assert [await store.resume(device) is not None for device in (laptop, phone)] == [True, False]
    assert await store.end_others(player, laptop) == 0


async def test_seats_come_newest_first_are_forgotten_on_request_and_only_the_newest_are_kept(make_store: MakeStore) -> None:
    store, ann = make_store(), token()
    await store.create(ann, SessionRecord(player="p-ann", name="Ann"))
    for at in range(SESSION_SEATS_KEPT + 2):
        await store.add_seat(ann, f"r{at:03}", 1000 + at)
    await store.add_seat(ann, "r005", 5000)  # synced again: now the newest
    newest = [f"r{at:03}" for at in range(SESSION_SEATS_KEPT + 1, 1, -1) if at != 5]
    assert await store.seat_races(ann) == ["r005", *newest]
    await store.forget_seats(ann, ["r005", newest[0], "never-seated"])
    assert await store.seat_races(ann) == newest[1:]


async def test_new_sessions_are_counted_per_address_in_a_window_that_starts_again_after_it_ends(make_store: MakeStore) -> None:
    store, here, there, brief = make_store(), token(), token(), token()
    assert [await store.count_new(here, 60_000) for _ in range(3)] == [1, 2, 3]
    assert await store.count_new(there, 60_000) == 1
    assert await store.count_new(brief, 1) == 1
    await asyncio.sleep(0.05)  # well past the 1 ms window
    assert await store.count_new(brief, 1) == 1


async def test_an_unused_session_ends_after_its_provisional_lifetime_and_a_login_lives_on(make_store: MakeStore) -> None:
    store, unused, ann = make_store(provisional_ttl_ms=100), token(), token()
    await store.create(unused, SessionRecord(player="p-unused", name="Unused"))
    await store.log_in(token(), ann, SessionRecord(player="p-ann", name="ann", account="ann"))
    await asyncio.sleep(0.3)
    assert await store.resume(unused) is None
    assert await store.resume(ann) is not None


async def test_no_session_outlives_its_absolute_lifetime(make_store: MakeStore) -> None:
    store, guest, ann = make_store(max_age_ms=1), token(), token()
    await store.create(guest, SessionRecord(player="p-guest", name="Guest"))
    await store.log_in(token(), ann, SessionRecord(player="p-ann", name="ann", account="ann"))
    await asyncio.sleep(0.05)
    assert [await store.resume(guest), await store.resume(ann)] == [None, None]


# --- the session service over the in-memory store (unit tier; over Redis: tests/test_players_sessions.py) ----------


async def test_hello_with_an_unknown_token_is_refused_with_bad_token() -> None:
    with pytest.raises(ServiceError) as refused:
        await SessionService(MemorySessionStore()).hello("Ann", token(), "10.0.0.1")
    assert (refused.value.code, refused.value.field) == (ErrorCode.BAD_TOKEN, "token")


async def test_new_sessions_beyond_the_limit_of_one_address_are_refused_and_another_address_is_not() -> None:
    service = SessionService(MemorySessionStore(), SessionLimits(max_new_per_address=2))
    for _ in range(2):
        await service.hello("Ann", None, "10.0.0.1")
    with pytest.raises(ServiceError) as refused:
        await service.hello("Ann", None, "10.0.0.1")
    assert refused.value.code is ErrorCode.RATE_LIMITED
    assert (await service.hello("Bob", None, "10.0.0.2")).name == "Bob"


async def test_a_session_that_takes_a_seat_is_kept_remembers_the_race_and_follows_its_login() -> None:
    service = SessionService(MemorySessionStore())
    guest = await service.hello("  Ann  ", None, "10.0.0.1")
    assert guest.name == "Ann" and not guest.kept
    seated = await service.keep(guest, "r1")
    assert seated.kept and await service.seat_races(seated) == ["r1"]
    assert (await service.hello("ignored", guest.token, "10.0.0.1")).kept
    ann = await service.log_in(seated, player="p-ann", handle="ann", bot=False)
    assert ann.token != guest.token and await service.seat_races(ann) == ["r1"]
    with pytest.raises(ServiceError):
        await service.hello("Ann", guest.token, "10.0.0.1")
    await service.log_out(ann)
    with pytest.raises(ServiceError):
        await service.hello("ann", ann.token, "10.0.0.1")
