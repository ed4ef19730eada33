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
    values: dict[str, Any] = {}
    for field_name, check, required, nullable in _plan(cast(Any, cls)):
        name = prefix + field_name if prefix else field_name
        if field_name not in document:
            if required:
                if not nullable:
                    raise ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r} is missing", field=name)
                values[field_name] = None
            continue
        values[field_name] = check(document[field_name], name)
    return cls(**values)


Check = Callable[[Any, str], Any]
"""A field's check: the value as its type requires (given the value and the field's name for the error), or
ProtocolError ``bad_field``."""


@cache
def _plan(cls: Any) -> tuple[tuple[str, Check, bool, bool], ...]:
    """(name, check, required, may be nil) of each field of dataclass ``cls``, worked out once per class from its
    type hints (reading the hints on every frame cost more than the checks themselves)."""
    hints = get_type_hints(cls)
    return tuple(
        (spec.name, _checker(hints[spec.name], spec.metadata), spec.default is MISSING and spec.default_factory is MISSING,
         type(None) in get_args(hints[spec.name]))
        for spec in fields(cls)
    )  # fmt: skip


def _checker(hint: Any, limits: Any) -> Check:
    """The check of a field of type ``hint`` (with ``bounded`` limits). Each check takes a fast path for a valid
    value and leaves everything else to the ``_check_*`` functions, which word the error."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return _optional_check(hint, limits)
    if origin is list:
        (item_hint,) = get_args(hint)
        item_check = _checker(item_hint, {})
        return lambda value, name: [item_check(item, f"{name}[{index}]") for index, item in enumerate(_expect(value, list, "a list", name))]
    scalar = _SCALAR_CHECKS.get(hint)
    if scalar is not None:
        return scalar(limits)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum_check(hint)
    if hint is RaceEvent:
        return lambda value, name: _decode(_expect(value, dict, "a map", name), EVENT_TYPES)
    if isinstance(hint, type) and hasattr(hint, "__dataclass_fields__"):
        nested = hint
        return lambda value, name: from_map(nested, _expect(value, dict, "a map", name), prefix=name + ".")
    raise TypeError(f"unsupported field type {hint!r}")  # a bug in a message declaration


def _optional_check(hint: Any, limits: Any) -> Check:
    """The check of ``X | None`` (nil passes) or of a union whose one non-nil member is ``X``."""
    (inner,) = [option for option in get_args(hint) if option is not type(None)]
    inner_check = _checker(inner, limits)
    if type(None) not in get_args(hint):
        return inner_check
    return lambda value, name: None if value is None else inner_check(value, name)


def _bool_check(limits: Any) -> Check:
    return lambda value, name: value if type(value) is bool else _check_bool(value, name, limits)


def _int_check(limits: Any) -> Check:
    low, high = limits.get("low"), limits.get("high")
    return lambda value, name: (
        value if type(value) is int and (low is None or value >= low) and (high is None or value <= high) else _check_int(value, name, limits)
    )


def _float_check(limits: Any) -> Check:
    return lambda value, name: value if type(value) is float else _check_float(value, name, limits)


def _str_check(limits: Any) -> Check:
    max_len = limits.get("max_len")
    return lambda value, name: (
        value if type(value) is str and (max_len is None or 1 <= len(value) <= max_len) else _check_str(value, name, limits)
    )


_SCALAR_CHECKS: Final[dict[Any, Callable[[Any], Check]]] = {bool: _bool_check, int: _int_check, float: _float_check, str: _str_check}
"""The check factory of each scalar field type, given the field's ``bounded`` limits."""


def _enum_check(enum: type[Enum]) -> Check:
    members: dict[Any, Enum] = {member.value: member for member in enum}
    return lambda value, name: members[value] if type(value) is str and value in members else _check_enum(value, enum, name)


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


