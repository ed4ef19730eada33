"""What the wire schema costs per frame: shared/protocol's hand-written checker against msgspec (issue 23 item 5).

    python3 benchmarks/wire_schema.py [--frames 20000] [--rounds 5]

Decodes realistic client frames (``move``, ``hello``, ``create`` with full settings) with
``shared.protocol.decode_request`` (msgpack.unpackb with the frame limits, then the dataclass checks of every field's
type and bounds) and with msgspec (``msgspec.msgpack.Decoder`` of a tagged union of typed Structs carrying the same
bounds: ``Meta(ge, le, max_length)``, the enums, nil where the field may be nil), and encodes the main server frames
(the ``moved`` reply, the ``move`` event) with ``shared.protocol.encode`` and with ``msgspec.msgpack.Encoder``. Each
figure is the median over ``--rounds`` rounds of the time per frame, in microseconds.

The Structs below cover only the measured messages: enough for the figures, not an implementation of the protocol
(docs/decisions/0004-wire-schema-msgspec-measured.md says what adopting it would take).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
from msgspec import Meta

from shared.board import Status
from shared.protocol import Difficulty, Moved, MoveMade, Spectators, decode_request, encode, pack
from shared.protocol.codes import (
    MAX_GRACE_SECONDS,
    MAX_MOVE_ID_LEN,
    MAX_MOVE_TEXT_LEN,
    MAX_NAME_LEN,
    MAX_RACE_ID_LEN,
    MAX_REQUEST_ID,
    MAX_SPECTATOR_DELAY_SECONDS,
    MAX_TIME_LIMIT_SECONDS,
    MAX_TOKEN_LEN,
)

RequestId = Annotated[int, Meta(ge=0, le=MAX_REQUEST_ID)]
Token = Annotated[str, Meta(max_length=MAX_TOKEN_LEN)]


class HelloStruct(msgspec.Struct, tag_field="type", tag="hello", frozen=True):
    """``hello`` as a msgspec Struct, with the bounds of shared/protocol/requests.py."""

    id: RequestId
    protocol: Annotated[int, Meta(ge=0, le=2**31)]
    name: Annotated[str, Meta(max_length=MAX_NAME_LEN)]
    token: Token | None = None


class SettingsStruct(msgspec.Struct, frozen=True):
    """``RaceSettings`` as a msgspec Struct."""

    profile: str = "classic"
    undo: bool = False
    redeal_once: bool = False
    time_limit: Annotated[int, Meta(ge=1, le=MAX_TIME_LIMIT_SECONDS)] | None = None
    seed: Annotated[int, Meta(ge=0)] | None = None
    """msgspec bounds only int64: ``le=MAX_SEED`` (2**64 - 1) is refused, so a 64-bit seed needs a check of its own."""
    spectator_delay: Annotated[int, Meta(ge=0, le=MAX_SPECTATOR_DELAY_SECONDS)] | None = None
    grace: Annotated[int, Meta(ge=1, le=MAX_GRACE_SECONDS)] | None = None
    solvable_only: bool = False
    private: bool = False
    spectators: Spectators | None = None
    rated: bool = False
    difficulty: Difficulty | None = None


class CreateStruct(msgspec.Struct, tag_field="type", tag="create", frozen=True):
    """``create`` as a msgspec Struct."""

    id: RequestId
    token: Token
    settings: SettingsStruct = SettingsStruct()


class MoveStruct(msgspec.Struct, tag_field="type", tag="move", frozen=True):
    """``move`` as a msgspec Struct."""

    id: RequestId
    token: Token
    race: Annotated[str, Meta(max_length=MAX_RACE_ID_LEN)]
    seq: Annotated[int, Meta(ge=0, le=2**31)]
    move_id: Annotated[str, Meta(max_length=MAX_MOVE_ID_LEN)]
    move: Annotated[str, Meta(max_length=MAX_MOVE_TEXT_LEN)]


class MovedStruct(msgspec.Struct, tag_field="type", tag="moved", frozen=True):
    """The ``moved`` reply as a msgspec Struct."""

    id: int
    race: str
    move: str
    seq: int
    count: int
    left: int
    status: Status
    undos: int
    duplicate: bool
    columns: list[list[str]] | None = None


class MoveEventStruct(msgspec.Struct, tag_field="type", tag="move", frozen=True):
    """The ``move`` event as a msgspec Struct."""

    race: str
    seq: int
    at: int
    slot: int
    move: str
    move_seq: int
    count: int
    left: int
    status: Status
    columns: list[list[str]] | None = None


TOKEN = "tZ3q8Yp2LkV0aB7cD9eF1gH4iJ6kL8mN"
RACE = "9f2c4e1a7b3d5e60"
FRAMES: dict[str, dict[str, Any]] = {
    "move": {"type": "move", "id": 4711, "token": TOKEN, "race": RACE, "seq": 17, "move_id": "m-17-a3f9", "move": "7D b>5"},
    "hello": {"type": "hello", "id": 1, "protocol": 1, "name": "Ann", "token": TOKEN},
    "create": {
        "type": "create", "id": 2, "token": TOKEN,
        "settings": {"profile": "classic", "undo": False, "redeal_once": True, "time_limit": 300, "seed": None,
                     "spectator_delay": 30, "grace": 60, "solvable_only": True, "private": False, "spectators": "anyone",
                     "rated": False, "difficulty": "medium"},
    },
}
MOVED = Moved(id=4711, race=RACE, move="7D b>5", seq=18, count=9, left=43, status=Status.PLAYING, undos=0, duplicate=False)
MOVE_EVENT = MoveMade(race=RACE, seq=41, at=1_764_000_000_123, slot=0, move="7D b>5", move_seq=18, count=9, left=43, status=Status.PLAYING)


def per_frame_us(work: Callable[[], object], frames: int, rounds: int) -> float:
    """The median over ``rounds`` of the time of one call of ``work`` (µs), each round ``frames`` calls."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(frames):
            work()
        samples.append((time.perf_counter() - started) / frames * 1e6)
    return statistics.median(samples)


def main() -> None:
    """Print a table: each frame's decode or encode time with today's checker and with msgspec."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=20_000, help="calls per round (default 20000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each figure is their median (default 5)")
    args = parser.parse_args()
    decoder = msgspec.msgpack.Decoder(HelloStruct | CreateStruct | MoveStruct)
    encoder = msgspec.msgpack.Encoder()
    print(f"{'frame':<18} {'today (µs)':>11} {'msgspec (µs)':>13} {'ratio':>6}")
    for name, document in FRAMES.items():
        frame = pack(document)
        assert type(decoder.decode(frame)).__name__.lower().startswith(name)  # both read the same frame
        today = per_frame_us(partial(decode_request, frame), args.frames, args.rounds)
        other = per_frame_us(partial(decoder.decode, frame), args.frames, args.rounds)
        print(f"{'decode ' + name:<18} {today:>11.2f} {other:>13.2f} {today / other:>6.1f}")
    moved = MovedStruct(**{name: getattr(MOVED, name) for name in MovedStruct.__struct_fields__})
    event = MoveEventStruct(**{name: getattr(MOVE_EVENT, name) for name in MoveEventStruct.__struct_fields__})
    for name, message, struct in (("encode moved", MOVED, moved), ("encode move event", MOVE_EVENT, event)):
        assert msgspec.msgpack.decode(encoder.encode(struct)) == msgspec.msgpack.decode(encode(message))  # the same map
        today = per_frame_us(partial(encode, message), args.frames, args.rounds)
        other = per_frame_us(partial(encoder.encode, struct), args.frames, args.rounds)
        print(f"{name:<18} {today:>11.2f} {other:>13.2f} {today / other:>6.1f}")


if __name__ == "__main__":
    main()
