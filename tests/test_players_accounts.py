"""Accounts: unique handles, passwords kept only as slow hashes, logins from any client, limits on guessing, and
anonymous names that can never pass for a registered handle."""

from __future__ import annotations

import os
import threading
from dataclasses import replace

import pytest
from lobby_helpers import next_lobby_event, players, refused
from player_helpers import PASSWORD, from_address, new_handle, registered
from race_helpers import SUITE_LOGIN_LIMITS, player, seated_race, server_config

from client import RaceClient, ServerError
from server.app import RaceServer
from server.services import accounts
from server.services.accounts import KDF, hash_secret
from server.store import keys
from shared.protocol import LobbyAdded, RaceSettings


async def test_a_handle_is_unique_regardless_of_case_and_must_fit_the_alphabet(race_server: RaceServer) -> None:
    handle = new_handle("Ann")
    async with players(race_server.url, "one", "two") as (first, second):
        reply = await first.register(handle, PASSWORD)
        assert (reply.handle, reply.name, reply.bot, reply.key) == (handle, handle, False, None)
        with refused("handle_taken"):
            await second.register(handle.upper(), PASSWORD)
        for bad in ("ab", "x" * 21, "-dash", "sp ace", "ünï"):
            with refused("bad_field"):
                await second.register(bad, PASSWORD)
        with refused("bad_field"):
            await second.register(new_handle("Short"), "short")


async def test_a_hash_of_older_parameters_still_logs_in_and_is_made_again_with_todays(race_server: RaceServer) -> None:
    handle = new_handle("Old")
    await (await registered(race_server.url, handle)).close()
    assert race_server.redis is not None
    old = "scrypt:n=16384,r=8,p=1,len=32"
    salt = bytes(16)
    await race_server.redis.hset(keys.account_key(handle), mapping={"kdf": old, "salt": salt.hex(), "secret_hash": (await hash_secret(PASSWORD, salt, old)).hex()})
    async with players(race_server.url, "again") as (again,):
        assert (await again.login(handle, PASSWORD)).handle == handle
    assert await race_server.redis.hget(keys.account_key(handle), "kdf") == KDF.encode()
    async with players(race_server.url, "once more") as (once_more,):
        assert (await once_more.login(handle, PASSWORD)).handle == handle


async def test_the_password_is_stored_only_as_a_salted_scrypt_hash(race_server: RaceServer) -> None:
    handle = new_handle("Hash")
    client = await registered(race_server.url, handle)
    await client.close()
    assert race_server.redis is not None
    stored = {key.decode(): value.decode() for key, value in (await race_server.redis.hgetall(keys.account_key(handle))).items()}
    assert stored["kdf"] == "scrypt:n=16384,r=8,p=5,len=32"  # at OWASP's minimum (N=2^17, r=8, p=1 or an equivalent)
    assert PASSWORD not in str(stored) and len(bytes.fromhex(stored["salt"])) == 16
    session_fields = [await race_server.redis.hgetall(key) async for key in race_server.redis.scan_iter(f"{keys.PREFIX}:session:*")]
    assert all(PASSWORD.encode() not in value for fields in session_fields for value in fields.values())


async def test_logging_in_from_another_client_plays_as_the_same_account_and_a_resumed_session_stays_logged_in(race_server: RaceServer) -> None:
    handle = new_handle("Bea")
    first = await registered(race_server.url, handle)
    other = await player(race_server.url, "laptop")
    try:
        reply = await other.login(handle.lower(), PASSWORD)
        assert first.session is not None and other.session is not None
        assert reply.player == first.session.player == other.session.player
        assert (reply.handle, other.session.account) == (handle, handle)
        token = other.token
        await other.close()
        back = await RaceClient.connect(race_server.url)
        welcome = await back.hello("whatever", token)
        assert (welcome.account, welcome.name, welcome.player) == (handle, handle, reply.player)
        await back.close()
    finally:
        await first.close()


async def test_registering_logs_the_session_in_to_the_new_account_even_a_bot_account_registered_while_logged_in(
    race_server: RaceServer,
) -> None:
    """PROTOCOL.md "register": the session then plays as the account it registered, whatever it was before."""
    human, bot = new_handle("Hum"), new_handle("Bot")
    async with players(race_server.url, "one") as (client,):
        first = await client.register(human, PASSWORD)
        second = await client.register(bot, bot=True)
        token = client.token
    back = await RaceClient.connect(race_server.url)
    try:
        welcome = await back.hello("whatever", token)
        assert (welcome.account, welcome.bot, welcome.player) == (bot, True, second.player) != (human, False, first.player)
    finally:
        await back.close()


async def test_logging_in_or_registering_is_refused_while_the_session_waits_in_a_race_even_from_another_connection(
    race_server: RaceServer,
) -> None:
    """PROTOCOL.md "Accounts and ratings": a seat belongs to the player id that took it, so a session that plays on in
    a race may not change its player id; once it left the race it may."""
    handle = new_handle("Late")
    await (await registered(race_server.url, handle)).close()
    async with players(race_server.url, "Ann") as (ann,):
        race_id = (await ann.create(RaceSettings())).race.race
        with refused("already_seated"):
            await ann.login(handle, PASSWORD)
        with refused("already_seated"):
            await ann.register(new_handle("New"), PASSWORD)
        other = await RaceClient.connect(race_server.url)  # the same session, which has not synced the race
        try:
            await other.hello("whatever", ann.token)
            with refused("already_seated"):
                await other.login(handle, PASSWORD)
        finally:
            await other.close()
        assert (await ann.sync(race_id)).slot == 0  # the refusals left the seat as it was
        await ann.leave(race_id)
        reply = await ann.login(handle, PASSWORD)
        assert ann.session is not None and ann.session.player == reply.player
        assert (await ann.create(RaceSettings())).race.players[0].account == handle


async def test_a_player_whose_attempt_ended_may_log_in_while_the_opponent_still_plays(race_server: RaceServer) -> None:
    """Only a race the player still plays in holds the session back: resigning ends the player's part."""
    handle = new_handle("Done")
    await (await registered(race_server.url, handle)).close()
    race = await seated_race(race_server.url)
    try:
        with refused("already_seated"):
            await race.ann.login(handle, PASSWORD)
        await race.ann.resign(race.race_id)
        assert (await race.ann.login(handle, PASSWORD)).handle == handle
    finally:
        await race.close()


async def test_a_wrong_password_and_an_unknown_handle_get_the_same_refusal(race_server: RaceServer) -> None:
    handle = new_handle("Cid")
    await (await registered(race_server.url, handle)).close()
    async with players(race_server.url, "guesser") as (guesser,):
        with pytest.raises(ServerError) as wrong:
            await guesser.login(handle, "wrong password")
        with pytest.raises(ServerError) as unknown:
            await guesser.login(new_handle("Nobody"), "wrong password")
        assert wrong.value.code == unknown.value.code == "bad_credentials"
        assert str(wrong.value) == str(unknown.value)


async def test_failed_logins_lock_out_one_handle_and_address_and_never_the_owner_elsewhere(redis_url: str) -> None:
    limits = replace(SUITE_LOGIN_LIMITS, per_handle_address=3, per_handle=0)
    async with RaceServer(server_config(redis_url, login=limits)) as server:
        handle = new_handle("Dee")
        await (await registered(server.url, handle)).close()
        guesser = await from_address(server.url, "127.0.0.11", "guesser")
        owner = await from_address(server.url, "127.0.0.12", "owner")
        try:
            for attempt in range(3):
                with refused("bad_credentials"):
                    await guesser.login(handle, f"guess {attempt}")
            with refused("rate_limited"):
                await guesser.login(handle, PASSWORD)  # locked out of this handle from this address, even the right one
            assert (await owner.login(handle, PASSWORD)).handle == handle  # the owner elsewhere is not
        finally:
            await guesser.close()
            await owner.close()


async def test_past_the_handles_ceiling_logins_are_delayed_and_the_right_password_still_logs_in(redis_url: str) -> None:
    limits = replace(SUITE_LOGIN_LIMITS, per_handle_address=0, per_handle=2, first_delay_seconds=0.05, longest_delay_seconds=0.2)
    async with RaceServer(server_config(redis_url, login=limits)) as server:
        assert server.redis is not None
        handle = new_handle("Ivy")
        await (await registered(server.url, handle)).close()
        for attempt in range(5):  # past the ceiling of 2 from fresh connections
            async with players(server.url, f"guesser{attempt}") as (guesser,):
                with refused("bad_credentials"):
                    await guesser.login(handle, f"guess {attempt}")
        assert await server.redis.get(keys.login_guard_keys("127.0.0.1", handle)[4]) == b"5"
        async with players(server.url, "owner again") as (again,):
            assert (await again.login(handle, PASSWORD)).handle == handle


async def test_an_anonymous_name_equal_to_a_handle_is_shown_as_anonymous_in_the_lobby_and_the_race(race_server: RaceServer) -> None:
    handle = new_handle("Eve")
    real = await registered(race_server.url, handle)
    async with players(race_server.url, "watcher", handle) as (watcher, impostor):
        await watcher.watch_lobby()
        fake = await impostor.create(RaceSettings())
        added = await next_lobby_event(watcher, fake.race.race)
        assert isinstance(added, LobbyAdded)
        assert (added.entry.creator, added.entry.creator_account) == (handle, None)
        genuine = await real.create(RaceSettings())
        assert (await next_lobby_event(watcher, genuine.race.race)).entry.creator_account == handle  # type: ignore[attr-defined]
        joined = await real.join(fake.race.race)
        seats = {info.slot: info for info in joined.race.players}
        assert (seats[0].name, seats[0].account) == (handle, None)
        assert (seats[1].name, seats[1].account, seats[1].bot) == (handle, handle, False)
    await real.close()


async def test_registrations_and_logins_are_limited_per_address_across_connections(redis_url: str) -> None:
    limits = replace(SUITE_LOGIN_LIMITS, registrations_per_address=2, per_address=4)
    async with RaceServer(server_config(redis_url, login=limits)) as server:
        clients = [await from_address(server.url, "127.0.0.13", f"client{index}") for index in range(6)]
        try:
            await clients[0].register(new_handle("Reg"), PASSWORD)
            await clients[1].register(new_handle("Reg"), PASSWORD)
            with refused("rate_limited"):
                await clients[2].register(new_handle("Reg"), PASSWORD)  # a third account from the same address this hour
            for client in clients[3:5]:
                with refused("bad_credentials"):
                    await client.login(new_handle("Who"), "a wrong guess")
            with refused("rate_limited"):
                await clients[5].login(new_handle("Who"), "a wrong guess")  # the 5th counted this minute (refusals are not)
        finally:
            for client in clients:
                await client.close()


async def test_a_blank_repeated_or_common_password_is_refused_weak_password(race_server: RaceServer) -> None:
    async with players(race_server.url, "new") as (client,):
        # The last two: the 1,000th and 5,000th commonest of 8 characters or more (zxcvbn's list), in any case.
        for weak in (" " * 10, "aaaaaaaa", "PassWord1", "qwertyuiop", "12345678", "1A2S3D4F", "Gilgames"):
            with refused("weak_password"):
                await client.register(new_handle("Weak"), weak)
        await client.register(new_handle("Strong"), PASSWORD)


async def test_password_hashes_run_at_a_lower_priority_than_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    def priority_of_the_hashing_thread(secret: str, salt: bytes, kdf: str) -> bytes:
        return str(os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).encode()

    monkeypatch.setattr(accounts, "_derive", priority_of_the_hashing_thread)
    seen = int(await accounts.hash_secret("a password", b"salt"))
    assert seen == min(19, os.getpriority(os.PRIO_PROCESS, 0) + accounts.HASH_NICENESS)
