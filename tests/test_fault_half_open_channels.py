"""A race channels' connection that goes silent without being closed (half-open) is noticed by its health check,
and the events published meanwhile still reach every recipient, in order, once (campaign fault3, defect B)."""

from __future__ import annotations

from urllib.parse import urlsplit

from race_helpers import assert_stream_resumed, events_until, play, player, seated_race, server_config
from redis.asyncio import Redis
from tcp_proxy import SilenceableProxy
from winning_lines import winning_deal

from server.app import RaceServer
from server.store import DirectRaceChannels
from shared.protocol import MoveMade, RaceSettings


async def pubsub_ports(admin: Redis) -> set[int]:
    """The client ports of the connections subscribed to channels, as Redis sees them."""
    return {int(entry["addr"].rsplit(":", 1)[1]) for entry in await admin.client_list() if int(entry.get("sub", 0)) > 0}


async def test_a_half_open_channel_connection_is_noticed_and_the_events_published_meanwhile_still_arrive(
    single_redis_url: str,
) -> None:
    seed, line = winning_deal()
    admin = Redis.from_url(single_redis_url)
    async with SilenceableProxy(urlsplit(single_redis_url).port or 6379) as proxy, RaceServer(server_config(proxy.url)) as server:
        assert server.hub is not None and isinstance(server.hub.channels, DirectRaceChannels)
        server.hub.channels.health_check_seconds = 0.3
        race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
        eve = await player(server.url, "Eve")
        try:
            watching = await eve.watch(race.race_id)
            await play(race.bob, race.race_id, line[:2])
            seen = await events_until(eve, lambda event: isinstance(event, MoveMade) and event.move_seq == 2)
            assert proxy.silence(await pubsub_ports(admin)) == 1  # nothing arrives on it any more; it is never closed
            await play(race.bob, race.race_id, line[2:6])  # published into the silent connection
            await assert_stream_resumed(eve, race, watching.race.event_seq, 6, seen)
        finally:
            await race.close()
            await eve.close()
            await admin.aclose()
