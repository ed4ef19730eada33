"""Race channels on a bare pub/sub connection (server/store/direct_channels.py): a subscription is confirmed before
its events, events arrive in the order published, and a lost connection is raised once what arrived was read."""

from __future__ import annotations

import pytest

from server.store import DirectRaceChannels, LiveEvent, StoreUnavailable, Subscribed, connect_redis
from server.store.race_channel import race_channel
from server.store.script_pipeline import DirectAddress


async def read_until(channels: DirectRaceChannels, count: int) -> list[object]:
    found: list[object] = []
    for _ in range(50):
        found.extend(await channels.read(timeout=0.1))
        if len(found) >= count:
            break
    return found


async def test_a_subscription_is_confirmed_then_its_events_arrive_in_order_then_a_lost_connection_is_raised(
    single_redis_url: str,
) -> None:
    client = connect_redis(single_redis_url)
    address = DirectAddress.of(client)
    assert address is not None
    channels = DirectRaceChannels(address)
    try:
        assert await channels.read(timeout=0.05) == []  # nothing subscribed yet: nothing to read
        await channels.listen(["direct-a"])
        assert await read_until(channels, 1) == [Subscribed("direct-a")]
        for seq in range(1, 4):
            await client.publish(race_channel("direct-a"), f"{seq} ".encode() + bytes([0x81, 0xA4]) + b"type" + bytes([0xA5]) + b"ready")
        events = await read_until(channels, 3)
        assert [(item.race_id, item.event.seq) for item in events if isinstance(item, LiveEvent)] == [("direct-a", 1), ("direct-a", 2), ("direct-a", 3)]
        await client.publish(race_channel("direct-a"), b"4 " + bytes([0x81, 0xA4]) + b"type" + bytes([0xA5]) + b"ready")
        assert await client.client_kill_filter(_type="pubsub") >= 1
        with pytest.raises(StoreUnavailable):
            for _ in range(50):
                await channels.read(timeout=0.1)  # event 4 (if it came first), then the lost connection
        channels.drop()
        await channels.listen(["direct-a"])
        assert await read_until(channels, 1) == [Subscribed("direct-a")]
    finally:
        channels.drop()
        await client.aclose()
