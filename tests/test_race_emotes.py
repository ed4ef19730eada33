"""Quick emotes: a seated player sends the opponent one of the fixed phrases; spectators never see it live, the
connection's budget is small, and only a phrase of the closed set goes over the wire."""

from __future__ import annotations

from lobby_helpers import refused
from race_helpers import player, seated_race

from client.race_client import ServerError
from server.app import RaceServer
from server.dispatch import EMOTE_BURST
from shared.protocol import (
    AttemptEnded,
    Emote,
    EmoteRequest,
    EmoteSent,
    Ok,
    RaceEvent,
    RaceResult,
    RaceSettings,
)


async def test_an_emote_reaches_both_players_but_not_a_live_spectator_and_stays_in_the_replay(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=1, spectator_delay=0))
    eve = await player(race_server.url, "Eve")
    try:
        await eve.watch(race.race_id)
        sent = await race.ann.emote(race.race_id, Emote.GOOD_LUCK)
        assert isinstance(sent, Ok) and sent.race == race.race_id
        for client in (race.bob, race.ann):
            emote = await client.wait_for(EmoteSent)
            assert (emote.race, emote.slot, emote.phrase) == (race.race_id, 0, Emote.GOOD_LUCK)

        await race.ann.resign(race.race_id)  # stored after the emote: the spectator receives it, in order
        seen: list[RaceEvent] = []
        while not seen or not isinstance(seen[-1], AttemptEnded):
            event = await eve.next_event()
            if isinstance(event, RaceEvent) and event.race == race.race_id:
                seen.append(event)
        assert not [event for event in seen if isinstance(event, EmoteSent)], "a live spectator received an emote"

        await race.bob.resign(race.race_id)
        await race.bob.wait_for(RaceResult)
        await race.bob.emote(race.race_id, Emote.WELL_PLAYED)  # after the result too
        assert (await race.ann.wait_for(EmoteSent)).phrase == Emote.WELL_PLAYED

        replayed = [event async for event in eve.replay(race.race_id) if isinstance(event, EmoteSent)]
        assert [(event.slot, event.phrase) for event in replayed] == [(0, Emote.GOOD_LUCK), (1, Emote.WELL_PLAYED)]
        with refused("spectating"):  # watching is not sitting: a spectator has no voice
            await eve.emote(race.race_id, Emote.WOW)
    finally:
        await eve.close()
        await race.close()


async def test_emotes_past_the_connection_budget_are_refused_with_emote_limit(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url)
    try:
        for _ in range(EMOTE_BURST):
            await race.ann.emote(race.race_id, Emote.OOPS)
        with refused("emote_limit"):
            await race.ann.emote(race.race_id, Emote.OOPS)
        await race.bob.emote(race.race_id, Emote.THANKS)  # the budget is the connection's own
        phrases = [(await race.bob.wait_for(EmoteSent)).phrase for _ in range(EMOTE_BURST + 1)]
        assert phrases == [Emote.OOPS] * EMOTE_BURST + [Emote.THANKS]
    finally:
        await race.close()


async def test_an_emote_needs_an_opponent_a_seat_and_a_phrase_of_the_fixed_set(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        waiting = await ann.create(RaceSettings())
        with refused("not_started"):  # nobody to say it to yet
            await ann.emote(waiting.race.race, Emote.HELLO)
        with refused("unknown_race"):
            await ann.emote("noSuchRace", Emote.HELLO)
        free_text = EmoteRequest(id=99, token=ann.token, race=waiting.race.race, phrase="you are slow")  # type: ignore[arg-type]
        try:
            await ann.request(free_text, Ok)
        except ServerError as error:
            assert (error.code, error.field) == ("bad_field", "phrase")
        else:
            raise AssertionError("a phrase outside the fixed set was accepted")
    finally:
        await ann.close()
