"""The Redis store: the only package that knows key names and Lua scripts (docs/STORAGE.md)."""

from server.store.connection import connect_redis
from server.store.race_store import (
    ApplyResult,
    EventReader,
    RaceRecord,
    RaceStore,
    SeatRecord,
    StoredEvent,
    StoreRefusal,
    presence_member,
)
from server.store.session_store import SessionRecord, SessionStore

__all__ = [
    "ApplyResult", "EventReader", "RaceRecord", "RaceStore", "SeatRecord", "SessionRecord", "SessionStore", "StoreRefusal", "StoredEvent",
    "connect_redis", "presence_member",
]
