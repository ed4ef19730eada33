"""The codec never raises anything but ProtocolError on untrusted input: any bytes, any MessagePack value, any
mutation of a valid request become a request or a documented ``error`` code."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from shared.protocol import ERROR_CODES, REQUEST_TYPES, ErrorCode, ProtocolError, Request, decode_request, decode_server_message

DOCUMENTED = {ErrorCode.BAD_FRAME, ErrorCode.BAD_FIELD, ErrorCode.UNKNOWN_TYPE}

scalars = st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.floats() | st.text(max_size=40) | st.binary(max_size=20)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5), max_leaves=20)
field_names = st.sampled_from(sorted({"id", "token", "race", "seq", "move_id", "move", "after", "limit", "code", "settings", "protocol", "name", "type"}))


def outcome(frame: bytes) -> Request | ErrorCode:
    try:
        return decode_request(frame)
    except ProtocolError as error:
        assert error.code in DOCUMENTED and error.code.value in ERROR_CODES
        assert error.request_id is None or isinstance(error.request_id, int)
        assert error.message.strip() and not error.message.rstrip().endswith(":"), f"a message that says nothing: {error.message!r}"
        return error.code


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_to_a_request_or_a_documented_error(frame: bytes) -> None:
    outcome(frame)


@settings(max_examples=examples(300), deadline=None)
@given(values)
def test_any_msgpack_value_decodes_to_a_request_or_a_documented_error(value: Any) -> None:
    outcome(msgpack.packb(value, use_bin_type=True))


@settings(max_examples=examples(500), deadline=None)
@given(st.sampled_from(sorted(REQUEST_TYPES)), st.dictionaries(field_names, values, max_size=8))
def test_any_fields_under_a_known_type_decode_to_that_request_or_bad_field(kind: str, fields: dict[str, Any]) -> None:
    result = outcome(msgpack.packb({**fields, "type": kind}, use_bin_type=True))
    assert isinstance(result, ErrorCode) or type(result) is REQUEST_TYPES[kind]
    assert result in (ErrorCode.BAD_FIELD, ErrorCode.BAD_FRAME) or isinstance(result, Request)


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_from_a_server_decode_to_a_message_or_a_protocol_error(frame: bytes) -> None:
    try:
        decode_server_message(frame)
    except ProtocolError as error:
        assert error.code in DOCUMENTED


def test_a_frame_of_unreadable_bytes_is_refused_with_a_message_that_says_so() -> None:
    assert outcome(b"\xc1") is ErrorCode.BAD_FRAME  # 0xc1 is never used by MessagePack: its decoder gives no reason
