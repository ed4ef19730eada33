"""The protocol's registries of messages are read from the modules that define them (shared.protocol.message_types):
a new request, reply or event is its class, and the codec, the handler table test and the package know it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import shared.protocol
from shared.protocol import (
    EVENT_TYPES,
    LOBBY_EVENT_TYPES,
    SERVER_MESSAGE_TYPES,
    Message,
    Moved,
    Request,
    events,
    lobby,
    message_types,
    replies,
    requests,
)
from shared.protocol.requests import REQUEST_TYPES


def defined(module: object, base: type) -> set[type]:
    return {
        value for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, base) and value.__module__ == module.__name__  # type: ignore[attr-defined]
    }  # fmt: skip


def test_every_message_a_protocol_module_defines_is_registered_by_its_type() -> None:
    assert defined(requests, Request) - {requests.RaceRequest, requests.SessionRequest} == set(REQUEST_TYPES.values())
    assert defined(events, Message) - {events.RaceEvent} == set(EVENT_TYPES.values())
    assert defined(lobby, Message) - {lobby.LobbyEvent} == set(LOBBY_EVENT_TYPES.values())
    assert defined(replies, Message) | set(EVENT_TYPES.values()) | set(LOBBY_EVENT_TYPES.values()) == set(SERVER_MESSAGE_TYPES.values())
    assert all(getattr(shared.protocol, cls.__name__) is cls for cls in SERVER_MESSAGE_TYPES.values())  # the package has each


@dataclass(frozen=True, slots=True)
class Pinged(Message):
    TYPE: ClassVar[str] = "pinged"


def test_a_module_registers_the_messages_it_defines_not_the_ones_it_imports_nor_the_bases() -> None:
    namespace = {"__name__": __name__, "Pinged": Pinged, "Moved": Moved, "Message": Message}
    assert message_types(namespace, Message) == {"pinged": Pinged}
