"""Private races: never listed, joined by a short invite code (or the race id); wrong codes refused and limited."""

from __future__ import annotations

from dataclasses import replace

from lobby_helpers import no_lobby_event, players, refused
from race_helpers import GENEROUS_INVITE_LIMITS, player, server_config

from server.app import RaceServer
from server.services.lobby import INVITE_ALPHABET, INVITE_LENGTH, LobbyLimits
from shared.protocol import Countdown, RaceSettings, Started


async def test_a_private_race_is_never_listed_and_is_joined_by_its_invite_code(race_server: RaceServer) -> None:
    async with players(race_server.url, "Wes", "Ann", "Bob") as (watcher, ann, bob):
        await watcher.watch_lobby()
        seated = await ann.create(RaceSettings(private=True, undo=True))
        code = seated.race.invite
        assert code is not None and len(code) == INVITE_LENGTH == 8 and set(code) <= set(INVITE_ALPHABET)
        assert not set(code) & set("01OI")
        assert seated.race.settings.private
        await no_lobby_event(watcher, seated.race.race)
        assert seated.race.race not in {entry.race for entry in (await watcher.watch_lobby()).races}

        typed = f"{code[:3].lower()}-{code[3:]}"  # as a person might type it
        joined = await bob.join_invite(typed)
        assert (joined.race.race, joined.slot, joined.race.invite) == (seated.race.race, 1, None)  # shown only while waiting
        assert (await ann.wait_for(Countdown)).columns == (await bob.wait_for(Countdown)).columns
        await ann.wait_for(Started)
        await no_lobby_event(watcher, seated.race.race)
        # The code is freed once the race has started.
        cid = await player(race_server.url, "Cid")
        with refused("unknown_invite"):
            await cid.join_invite(code)
        await cid.close()


async def test_wrong_invite_codes_are_refused_with_a_code(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob") as (ann, bob):
        code = (await ann.create(RaceSettings(private=True))).race.invite
        assert code is not None
        wrong = next(c for c in INVITE_ALPHABET if c != code[0]) + code[1:]
        for attempt in (wrong, "ABC", "OOOOOO", "ÄÖÜ123", code + "2"):
            with refused("unknown_invite"):
                await bob.join_invite(attempt)
        assert (await bob.join_invite(code)).slot == 1


async def test_a_private_race_is_joined_by_its_code_not_its_id_and_closes_like_any_other(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob") as (ann, bob):
        seated = await ann.create(RaceSettings(private=True))
        code = seated.race.invite
        assert code is not None
        await ann.leave(seated.race.race)
        with refused("unknown_invite"):
            await bob.join_invite(code)
        other = await ann.create(RaceSettings(private=True))
        with refused("invite_required"):
            await bob.join(other.race.race)  # the id is the watch link (issue 25.5)
        assert other.race.invite is not None
        assert (await bob.join_invite(other.race.invite)).slot == 1


async def test_guessing_invite_codes_is_rate_limited_per_player(redis_url: str) -> None:
    async with (
        RaceServer(server_config(redis_url, lobby=LobbyLimits(invites=replace(GENEROUS_INVITE_LIMITS, per_player=3)))) as server,
        players(server.url, "Ann", "Eve") as (ann, guesser),
    ):
        code = (await ann.create(RaceSettings(private=True))).race.invite
        assert code is not None
        for guess in ("22222222", "33333333", "44444444"):
            with refused("unknown_invite"):
                await guesser.join_invite(guess)
        with refused("rate_limited"):
            await guesser.join_invite(code)  # even the right code, for the rest of the minute


async def test_an_invite_code_answers_unknown_invite_from_the_start_even_before_the_lobby_forgets_it(race_server: RaceServer) -> None:
    """The lobby (another hash slot) forgets a code a timer tick after the start; the race's join script answers for
    it from the start on (campaign: ``race_full``/``already_seated`` for 40-200 ms after the start)."""
    assert race_server.lobby is not None
    async with players(race_server.url, "Ann", "Bob", "Cid") as (ann, bob, cid):
        seated = await ann.create(RaceSettings(private=True))
        code = seated.race.invite
        assert code is not None
        await bob.join_invite(code)
        await ann.wait_for(Started)
        # The state of that window, held open: the lobby still maps the code to the started race.
        await race_server.lobby.store.claim_invite(code, seated.race.race, 60_000)  # if the tick freed it already
        assert await race_server.lobby.store.race_of_invite(code) == seated.race.race
        with refused("unknown_invite"):
            await cid.join_invite(code)
        with refused("unknown_invite"):
            await bob.join_invite(code)
