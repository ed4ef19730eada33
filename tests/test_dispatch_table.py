"""The dispatcher's handler table covers every request type exactly once, each with a handler for that type."""

from __future__ import annotations

from typing import get_type_hints

import pytest

from server.dispatch import HANDLERS, handles
from shared.protocol import REQUEST_TYPES, Hello, Join


def test_every_request_type_but_hello_has_a_handler_and_nothing_else_does() -> None:
    assert set(HANDLERS) == set(REQUEST_TYPES.values()) - {Hello}


def test_each_handler_takes_the_request_type_it_is_registered_for() -> None:
    for request_type, handler in HANDLERS.items():
        assert get_type_hints(handler)["request"] is request_type, handler.__name__


def test_registering_a_second_handler_for_a_request_type_is_refused() -> None:
    with pytest.raises(TypeError, match="two handlers for join"):
        handles(Join)(HANDLERS[Join])
