"""The one encoder and decoder of frames, with the limits for untrusted input."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import MISSING, fields
from enum import Enum
from functools import cache
from typing import Any, Final, TypeVar, Union, cast, get_args, get_origin, get_type_hints

import msgpack

from shared.protocol.base import Message, Request, plain
from shared.protocol.codes import MAX_FRAME_BYTES, MAX_REQUEST_ID, ErrorCode, ProtocolError
from shared.protocol.events import EVENT_TYPES, RaceEvent
from shared.protocol.lobby import LOBBY_EVENT_TYPES
from shared.protocol.replies import REPLY_TYPES
from shared.protocol.requests import REQUEST_TYPES

# Bounds for unpacking untrusted input: msgpack bounds lengths by the input size,
# but a 16 KiB frame of nils would still become a 16k-item list without these.
_CLIENT_FRAME_LIMITS: Final = {"max_array_len": 64, "max_map_len": 32, "max_str_len": MAX_FRAME_BYTES, "max_bin_len": 0}
_SERVER_FRAME_LIMITS: Final = {"max_array_len": 4096, "max_map_len": 64, "max_str_len": 1 << 20, "max_bin_len": 0}


SERVER_MESSAGE_TYPES: Final[dict[str, type[Message]]] = {**REPLY_TYPES, **EVENT_TYPES, **LOBBY_EVENT_TYPES}


def as_map(value: Any) -> dict[str, Any]:
    """A dataclass of this module as the plain map it travels as (to store a :class:`LobbyEntry`)."""
    document: dict[str, Any] = plain(value)
    return document


def encode(message: Message) -> bytes:
    """The frame of one message."""
    return pack(message.to_wire())


def pack(document: dict[str, Any]) -> bytes:
    """A map as MessagePack bytes (used by tests and tools that send hand-made frames)."""
    data: bytes = msgpack.packb(document, use_bin_type=True)
    return data


def _reject_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"extension type {code} is not allowed")


def unpack_map(data: bytes, *, from_server: bool = False) -> dict[str, Any]:
    """The MessagePack map of a frame, with limits for untrusted input; ProtocolError ``bad_frame`` otherwise."""
    limits = _SERVER_FRAME_LIMITS if from_server else _CLIENT_FRAME_LIMITS
    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=True, ext_hook=_reject_ext, max_ext_len=0, **limits)
    except (ValueError, TypeError, RecursionError) as error:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"not a MessagePack frame: {str(error) or 'unreadable bytes'}") from None
    if not isinstance(document, dict):
        raise ProtocolError(ErrorCode.BAD_FRAME, "a frame is one MessagePack map")
    return document


def decode_request(data: bytes) -> Request:
    """Read a client frame into its request dataclass; raises :class:`ProtocolError`."""
    return _decode(unpack_map(data), REQUEST_TYPES)


def decode_server_message(data: bytes) -> Message:
    """Read a server frame (a reply, an error or a race event); raises :class:`ProtocolError`."""
    return _decode(unpack_map(data, from_server=True), SERVER_MESSAGE_TYPES)


def event_from_map(document: dict[str, Any]) -> RaceEvent:
    """A race event from its map (as stored in the race's event stream); raises :class:`ProtocolError`."""
    return _decode(document, EVENT_TYPES)


M = TypeVar("M", bound=Message)


def _decode(document: dict[str, Any], registry: dict[str, type[M]]) -> M:
    request_id = document.get("id")
    request_id = request_id if isinstance(request_id, int) and not isinstance(request_id, bool) and 0 <= request_id <= MAX_REQUEST_ID else None
    kind = document.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(ErrorCode.BAD_FIELD, "every frame needs a string field 'type'", field="type", request_id=request_id)
    cls = registry.get(kind)
    if cls is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}", field="type", request_id=request_id)
    try:
        return from_map(cls, document)
    except ProtocolError as error:
        error.request_id = request_id
        raise


T = TypeVar("T")


def from_map(cls: type[T], document: dict[str, Any], prefix: str = "") -> T:
    """An instance of dataclass ``cls`` from a map, checking every field's type and limits.

    Unknown keys are ignored; a missing field that may be nil is nil.
    """
    hints = _hints(cast(Any, cls))
    values: dict[str, Any] = {}
    for spec in fields(cls):  # type: ignore[arg-type]
        name = prefix + spec.name
        if spec.name not in document:
            if spec.default is MISSING and spec.default_factory is MISSING:
                if type(None) not in get_args(hints[spec.name]):
                    raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} is missing", field=name)
                values[spec.name] = None
            continue
        values[spec.name] = _check(document[spec.name], hints[spec.name], name, spec.metadata)
    return cls(**values)


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return get_type_hints(cls)


def _check(value: Any, hint: Any, name: str, limits: Any) -> Any:
    """``value`` as the field's type ``hint`` requires; ProtocolError ``bad_field`` naming the field otherwise."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        (inner,) = [option for option in options if option is not type(None)]
        return _check(value, inner, name, limits)
    if origin is list:
        (item_hint,) = get_args(hint)
        return [_check(item, item_hint, f"{name}[{index}]", {}) for index, item in enumerate(_expect(value, list, "a list", name))]
    scalar = _SCALARS.get(hint)
    if scalar is not None:
        return scalar(value, name, limits)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _check_enum(value, hint, name)
    if hint is RaceEvent:
        return _decode(_expect(value, dict, "a map", name), EVENT_TYPES)
    if isinstance(hint, type) and hasattr(hint, "__dataclass_fields__"):
        return from_map(hint, _expect(value, dict, "a map", name), prefix=name + ".")
    raise TypeError(f"unsupported field type {hint!r}")  # a bug in a message declaration


def _expect(value: Any, kind: type[T], what: str, name: str) -> T:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be {what}", field=name)
    return value


def _check_bool(value: Any, name: str, limits: Any) -> bool:
    return _expect(value, bool, "true or false", name)


def _check_int(value: Any, name: str, limits: Any) -> int:
    number = _expect(value, int, "an integer", name)
    low, high = limits.get("low"), limits.get("high")
    if (low is not None and number < low) or (high is not None and number > high):
        raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be from {low} to {high}", field=name)
    return number


def _check_float(value: Any, name: str, limits: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be a number", field=name)
    return float(value)


def _check_str(value: Any, name: str, limits: Any) -> str:
    text = _expect(value, str, "a string", name)
    max_len = limits.get("max_len")
    if max_len is not None and not 1 <= len(text) <= max_len:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must have 1 to {max_len} characters", field=name)
    return text


def _check_enum(value: Any, enum: type[Enum], name: str) -> Enum:
    try:
        return enum(_expect(value, str, "a string", name))
    except ValueError:
        allowed = ", ".join(str(member.value) for member in enum)
        raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} must be one of {allowed}", field=name) from None


_SCALARS: Final[dict[Any, Callable[[Any, str, Any], Any]]] = {bool: _check_bool, int: _check_int, float: _check_float, str: _check_str}
