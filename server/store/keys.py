"""Every Redis key name of the project (docs/STORAGE.md lists them with types and TTLs).

All keys of one race share the hash tag ``{race:<id>}`` so that a race's scripts
touch a single Cluster slot.
"""

from __future__ import annotations

import hashlib

PREFIX = "fgr"
TIMERS = f"{PREFIX}:timers"
"""Sorted set: race id -> next due time (ms) of one of its deadlines; polled by every process."""
LIVE = f"{PREFIX}:live"
"""Sorted set: race id -> start time (ms) of races being played; finished ones are pruned when listed."""


def race_keys(race_id: str) -> list[str]:
    """The keys of one race in the order the Lua scripts expect them (see lua/common.lua)."""
    tag = f"{PREFIX}:{{race:{race_id}}}"
    return [
        f"{tag}:state", f"{tag}:events", f"{tag}:moves:0", f"{tag}:moves:1", f"{tag}:move_ids:0", f"{tag}:move_ids:1",
        f"{tag}:presence:0", f"{tag}:presence:1", f"{tag}:watchers",
    ]  # fmt: skip


STATE, EVENTS, MOVES_0, MOVES_1, MOVE_IDS_0, MOVE_IDS_1, PRESENCE_0, PRESENCE_1, WATCHERS = range(9)
"""Indexes into :func:`race_keys`."""


def session_key(token: str) -> str:
    """A session hash, keyed by the SHA-256 of its token so a leaked key list reveals no token."""
    return f"{PREFIX}:session:{hashlib.sha256(token.encode()).hexdigest()}"
