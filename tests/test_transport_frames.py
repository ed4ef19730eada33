"""The transport encodes an event fanned out to a race's audience once, not once per recipient."""

from __future__ import annotations

from server.transport import FrameCache
from shared import Status
from shared.protocol import MoveMade, encode


def _move(seq: int) -> MoveMade:
    return MoveMade(race="r1", seq=seq, at=1000 + seq, slot=0, move="3S b>5", move_seq=seq, count=seq, left=52 - seq, status=Status.PLAYING)


def test_an_event_sent_to_many_recipients_is_encoded_once_and_framed_as_encode_would() -> None:
    cache = FrameCache()
    event = _move(1)
    first = cache.frame(event)
    assert first == encode(event)
    assert all(cache.frame(event) is first for _ in range(100))  # the same bytes, not encoded again


def test_an_equal_but_distinct_message_and_one_that_aged_out_are_encoded_afresh() -> None:
    cache = FrameCache()
    event = _move(1)
    first = cache.frame(event)
    assert cache.frame(_move(1)) is not first and cache.frame(_move(1)) == first
    for seq in range(2, 2 + FrameCache.SIZE):
        cache.frame(_move(seq))
    assert cache.frame(event) is not first and cache.frame(event) == first
