"""What a request resent after an unknown outcome (``unavailable``, ``internal_error``, a lost reply) answers when its
first try was stored: PROTOCOL.md "Resending a request" promises each of these, so a client can tell "applied" apart."""

from __future__ import annotations

from lobby_helpers import refused
from player_helpers import PASSWORD, new_handle, registered
from race_helpers import player, seated_race

from server.app import RaceServer
from shared.protocol import Ok, RaceSettings, Seated


async def test_a_resent_resign_join_leave_rematch_and_register_tell_that_the_first_one_was_applied(race_server: RaceServer) -> None:
    url = race_server.url
    race = await seated_race(url, RaceSettings())
    try:
        await race.bob.resign(race.race_id)
        with refused("attempt_over"):
            await race.bob.resign(race.race_id)
        await race.ann.resign(race.race_id)  # the result: a second resign now meets the finished race
        with refused("race_over"):
            await race.ann.resign(race.race_id)
        assert isinstance(await race.ann.rematch(race.race_id), Ok)
        assert isinstance(await race.ann.rematch(race.race_id), Ok)  # a resent offer is the same standing offer
        accepted = await race.bob.rematch(race.race_id)
        again = await race.bob.rematch(race.race_id)
        assert isinstance(accepted, Seated) and isinstance(again, Seated) and again.race.race == accepted.race.race
    finally:
        await race.close()

    ann, bob = await player(url, "Ann"), await player(url, "Bob")
    waiting = await ann.create(RaceSettings())
    await bob.join(waiting.race.race)
    with refused("already_seated"):
        await bob.join(waiting.race.race)
    await bob.leave(waiting.race.race)
    with refused("not_seated"):
        await bob.leave(waiting.race.race)
    await ann.leave(waiting.race.race)
    with refused("race_closed"):
        await ann.leave(waiting.race.race)

    handle = new_handle("Cid")
    cid = await registered(url, handle)
    with refused("handle_taken"):
        await cid.register(handle, PASSWORD)
    await cid.login(handle, PASSWORD)  # what the client does then: the account is its own
    for client in (ann, bob, cid):
        await client.close()
