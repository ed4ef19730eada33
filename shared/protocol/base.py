"""The bases of every protocol message and the declaration of bounded fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeVar

from shared.protocol.codes import MAX_RACE_ID_LEN, MAX_REQUEST_ID, MAX_TOKEN_LEN

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_D = TypeVar("_D", bound="DataclassInstance")
_M = TypeVar("_M", bound="Message")


def bounded(*, max_len: int | None = None, low: int | None = None, high: int | None = None, default: Any = MISSING) -> Any:
    """A dataclass field with limits checked by :func:`decode`: string length, or an integer range."""
    metadata = {"max_len": max_len, "low": low, "high": high}
    if default is MISSING:
        return field(metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every frame; ``TYPE`` is the value of its ``type`` field."""

    TYPE: ClassVar[str] = ""

    def to_wire(self) -> dict[str, Any]:
        """The MessagePack map of this message (``type`` first)."""
        document: dict[str, Any] = {"type": self.TYPE}
        for name in field_names(type(self)):
            value = getattr(self, name)
            document[name] = value if type(value) in _PACKED_AS_IS else plain(value)
        return document


@dataclass(frozen=True, slots=True)
class Request(Message):
    """A client request; the reply (or ``error``) carries the same ``id``."""

    id: int = bounded(low=0, high=MAX_REQUEST_ID)


@dataclass(frozen=True, slots=True)
class SessionRequest(Request):
    """A request authenticated by the session token."""

    token: str = bounded(max_len=MAX_TOKEN_LEN)


@dataclass(frozen=True, slots=True)
class RaceRequest(SessionRequest):
    """A request about one race, authenticated by the session token."""

    race: str = bounded(max_len=MAX_RACE_ID_LEN)


def message_types(namespace: Mapping[str, object], base: type[_M]) -> dict[str, type[_M]]:
    """The messages a module defines (its ``globals()``), by ``TYPE``: every subclass of ``base`` with a ``TYPE``
    defined there (the bases, whose ``TYPE`` is empty, and the classes it imports are left out), so that a new message
    is its class and nothing else."""
    module = namespace["__name__"]
    return {
        value.TYPE: value
        for value in namespace.values()
        if isinstance(value, type) and issubclass(value, base) and value.TYPE and value.__module__ == module
    }


def project(source: object, target: type[_D], **given: Any) -> _D:
    """A ``target`` dataclass made of ``given`` and, for each other field, the attribute of the same name of
    ``source``: a record whose fields include a message's (a stored seat and :class:`PlayerInfo`, a stored move and
    ``moved``) makes the message without copying it field by field."""
    taken = {name: getattr(source, name) for name in field_names(target) if name not in given}
    return target(**taken, **given)


_PACKED_AS_IS: Final = frozenset({str, int, float, bool, bytes, type(None)})
"""Field values that MessagePack takes as they are (an enum member, though a ``str``, is sent as its value)."""


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """The field names of dataclass ``cls``, in order (``dataclasses.fields`` rebuilds them on every call)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(spec.name for spec in fields(cls))
    return names


def plain(value: Any) -> Any:
    """Dataclasses to maps, recursively, for packing."""
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, Message):
        return value.to_wire()  # a message inside a message (events of a replay page) keeps its ``type``
    if hasattr(value, "__dataclass_fields__"):
        return {name: plain(getattr(value, name)) for name in field_names(type(value))}
    if isinstance(value, Enum):
        return value.value
    return value
