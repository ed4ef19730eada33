"""Operations in Redis: bans, the operator command stream and its replies, the audit trail, the process registry.

Commands and replies are JSON documents in Streams: every server process reads the command stream from the
moment it starts, so a command reaches every live process once, in order, whichever process the operator's
tool could reach (docs/OPERATIONS.md "Administration").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from server.store import keys
from server.store.connection import RedisClient
from server.store.errors import translate_errors

REPLY_TTL_MS = 60_000
COMMANDS_KEPT = 1000
AUDIT_KEPT = 100_000


class BanKind(str, Enum):
    """What a ban applies to."""

    PLAYER = "player"
    """A player id: its ``hello`` is refused with ``banned``."""
    IP = "ip"
    """A client address: its connection attempts are refused with HTTP 403 before the handshake."""


@dataclass(frozen=True, slots=True)
class Ban:
    """A ban in force."""

    kind: BanKind
    subject: str
    reason: str
    until: int
    """When it ends (ms since the Unix epoch)."""
    by: str
    """The operator who set it."""


def _documents(entries: Any) -> list[tuple[str, dict[str, Any]]]:
    """``(entry id, JSON document)`` pairs of stream entries (an XRANGE answer)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for entry_id, fields in entries or []:
        found.append((entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id), json.loads(fields[b"d"])))
    return found


def _read_documents(response: Any) -> list[tuple[str, dict[str, Any]]]:
    """The documents of an XREAD answer for one stream (a map in RESP3, a list of pairs in RESP2)."""
    items: Sequence[Any] = list(response.items()) if isinstance(response, dict) else (response or [])
    return [document for _key, entries in items for document in _documents(entries)]


@translate_errors
class OpsStore:
    """Reads and writes the operations keys."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis

    # --- bans ----------------------------------------------------------------------------------------

    async def ban(self, ban: Ban, now_ms: int) -> None:
        """Store ``ban``; it lapses by itself at ``ban.until``."""
        document = {"reason": ban.reason, "until": ban.until, "by": ban.by}
        await self.redis.set(keys.ban_key(ban.kind.value, ban.subject), json.dumps(document), px=max(ban.until - now_ms, 1))

    async def unban(self, kind: BanKind, subject: str) -> bool:
        """Lift a ban; False if there was none."""
        return bool(await self.redis.delete(keys.ban_key(kind.value, subject)))

    async def ban_of(self, kind: BanKind, subject: str) -> Ban | None:
        """The ban in force on ``subject``, if any."""
        raw = await self.redis.get(keys.ban_key(kind.value, subject))
        if raw is None:
            return None
        document = json.loads(raw)
        return Ban(kind, subject, document["reason"], int(document["until"]), document["by"])

    async def record_signing_key(self, fresh: bytes) -> bytes:
        """The servers' record-signing key: the stored one, or ``fresh`` stored now if there is none yet (the first
        process to start makes it; every later one reads the same)."""
        await self.redis.set(keys.RECORD_SIGNING_KEY, fresh, nx=True)
        stored: Any = await self.redis.get(keys.RECORD_SIGNING_KEY)
        return bytes(stored)

    async def bans(self) -> list[Ban]:
        """Every ban in force (a SCAN: for the operator's tool, not for request paths)."""
        found: list[Ban] = []
        async for key in self.redis.scan_iter(match=f"{keys.PREFIX}:ban:*", count=500):
            _, _, kind, subject = (key.decode() if isinstance(key, bytes) else key).split(":", 3)
            ban = await self.ban_of(BanKind(kind), subject)
            if ban is not None:
                found.append(ban)
        return sorted(found, key=lambda ban: (ban.kind.value, ban.subject))

    # --- commands and replies -----------------------------------------------------------------------

    async def send_command(self, document: dict[str, Any]) -> str:
        """Append a (signed) command for every process; returns its stream id."""
        entry: Any = await self.redis.xadd(keys.ADMIN_COMMANDS, {"d": json.dumps(document)}, maxlen=COMMANDS_KEPT, approximate=True)
        return entry.decode() if isinstance(entry, bytes) else str(entry)

    async def last_command_id(self) -> str:
        """The id of the newest command (``0-0`` if none): a process starting now reads only what comes after."""
        entries: Any = await self.redis.xrevrange(keys.ADMIN_COMMANDS, count=1)
        return _documents(entries)[0][0] if entries else "0-0"

    async def read_commands(self, after_id: str, block_ms: int) -> list[tuple[str, dict[str, Any]]]:
        """Commands after ``after_id``, waiting up to ``block_ms`` for one."""
        return _read_documents(await self.redis.xread({keys.ADMIN_COMMANDS: after_id}, block=block_ms, count=100))

    async def claim(self, command_id: str, process_id: str) -> bool:
        """Whether this process is the one to carry out the command's one-time part (the first to ask)."""
        return bool(await self.redis.set(keys.admin_claim_key(command_id), process_id, nx=True, px=REPLY_TTL_MS))

    async def reply(self, command_id: str, document: dict[str, Any]) -> None:
        """A process's answer to a command."""
        key = keys.admin_reply_key(command_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(key, {"d": json.dumps(document)})
            pipe.pexpire(key, REPLY_TTL_MS)
            await pipe.execute()

    async def read_replies(self, command_id: str, after_id: str, block_ms: int) -> list[tuple[str, dict[str, Any]]]:
        """Replies to a command after ``after_id``, waiting up to ``block_ms`` for one."""
        return _read_documents(await self.redis.xread({keys.admin_reply_key(command_id): after_id}, block=block_ms, count=100))

    # --- audit ----------------------------------------------------------------------------------------

    async def audit(self, document: dict[str, Any]) -> None:
        """Record an executed (or refused) operator command."""
        await self.redis.xadd(keys.ADMIN_AUDIT, {"d": json.dumps(document)}, maxlen=AUDIT_KEPT, approximate=True)

    async def audit_trail(self, count: int) -> list[dict[str, Any]]:
        """The newest ``count`` audit entries, oldest first."""
        entries: Any = await self.redis.xrevrange(keys.ADMIN_AUDIT, count=count)
        return [document for _, document in reversed(_documents(entries))]

    # --- the process registry ---------------------------------------------------------------------------

    async def register_process(self, process_id: str, info: dict[str, Any], *, now_ms: int, lease_ms: int) -> None:
        """Add or renew this process's registration (``info``: a flat map) for ``lease_ms``."""
        key = keys.process_key(process_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping={name: json.dumps(value) for name, value in info.items()})
            pipe.pexpire(key, lease_ms)
            pipe.zadd(keys.PROCESSES, {process_id: now_ms + lease_ms})
            pipe.zremrangebyscore(keys.PROCESSES, "-inf", now_ms)
            await pipe.execute()

    async def unregister_process(self, process_id: str) -> None:
        """Remove this process from the registry (it stops)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(keys.PROCESSES, process_id)
            pipe.delete(keys.process_key(process_id))
            await pipe.execute()

    async def processes(self, now_ms: int) -> list[dict[str, Any]]:
        """Live processes' registrations (each with its ``id``)."""
        ids: Sequence[Any] = await self.redis.zrangebyscore(keys.PROCESSES, now_ms, "+inf")
        found: list[dict[str, Any]] = []
        for raw_id in ids:
            process_id = raw_id.decode() if isinstance(raw_id, bytes) else str(raw_id)
            raw: dict[Any, Any] = await self.redis.hgetall(keys.process_key(process_id))
            if raw:
                found.append({"id": process_id, **{key.decode(): json.loads(value) for key, value in raw.items()}})
        return found
