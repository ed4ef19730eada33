"""Post-race analyses in Redis: the queue of races to analyse, and each race's stored analysis (docs/STORAGE.md)."""

from __future__ import annotations

import json
from typing import Any

from server.store import keys
from server.store.connection import RedisClient, count_in_window
from server.store.errors import translate_errors
from server.store.race_store import StoreRefusal
from server.store.scripts import Scripts, script_arguments
from shared.protocol import ErrorCode


def _compact(value: Any) -> Any:
    """A JSON value without nulls and empty lists (Lua's cjson and cmsgpack would turn those into other things)."""
    if isinstance(value, dict):
        return {key: _compact(item) for key, item in value.items() if item is not None and item != []}
    if isinstance(value, list):
        return [_compact(item) for item in value]
    return value


@translate_errors
class AnalysisStore:
    """The analysis queue (race id -> due time) and the stored analyses, kept as long as race records."""

    def __init__(self, redis: RedisClient, *, record_ttl_ms: int) -> None:
        self.redis = redis
        self.scripts = Scripts(redis)
        self.record_ttl_ms = record_ttl_ms

    async def claim(self, now_ms: int, limit: int, lease_ms: int) -> list[str]:
        """Races due by ``now_ms``, each leased to this caller for ``lease_ms``."""
        raw: list[bytes] = await self.scripts.analysis_claim(keys=[keys.analysis_queue()], args=script_arguments(now_ms=now_ms, limit=limit, lease_ms=lease_ms))
        return [item.decode() for item in raw]

    async def done(self, race_id: str) -> None:
        """Take the race out of the queue."""
        await self.redis.zrem(keys.analysis_queue(), race_id)

    async def due(self, now_ms: int) -> int:
        """Races in the queue due by ``now_ms`` (one ZCOUNT)."""
        return int(await self.redis.zcount(keys.analysis_queue(), "-inf", now_ms))

    async def save(self, race_id: str, analysis: dict[str, Any], signals: list[dict[str, Any]]) -> None:
        """Store the analysis (and the signals, for operators) and emit the race's ``analysis`` event, once.

        StoreRefusal ``not_finished`` for a race without a result: an analysis is never given before it."""
        record = json.dumps({"analysis": analysis, "signals": signals})
        result: list[Any] = await self.scripts.analysis_save(
            keys=[*keys.race_keys(race_id), keys.race_analysis(race_id)],
            args=script_arguments(record=record, analysis=json.dumps(_compact(analysis)), ttl_ms=self.record_ttl_ms),
        )
        if result[0] == 0:
            raise StoreRefusal(ErrorCode(result[1].decode()))

    async def load(self, race_id: str) -> dict[str, Any] | None:
        """The stored record (``analysis``, with ``computed_at`` missing, and ``signals``), or None."""
        raw: Any = await self.redis.get(keys.race_analysis(race_id))
        return None if raw is None else dict(json.loads(raw))

    async def load_solution(self, race_id: str, slot: int, actions: int) -> dict[str, Any] | None:
        """The cached ``solve_from`` answer for that position (``verdict``, ``line``), or None."""
        raw: Any = await self.redis.get(keys.race_solution(race_id, slot, actions))
        return None if raw is None else dict(json.loads(raw))

    async def save_solution(self, race_id: str, slot: int, actions: int, answer: dict[str, Any]) -> None:
        """Cache a ``solve_from`` answer, kept as long as race records."""
        ttl = self.record_ttl_ms if self.record_ttl_ms > 0 else None
        await self.redis.set(keys.race_solution(race_id, slot, actions), json.dumps(answer), px=ttl)

    async def count_solve(self, kind: str, who: str, window_ms: int) -> int:
        """Count one solver run for a session (``player``) or client address (``address``); returns the count in the
        current window."""
        return await count_in_window(self.redis, keys.solve_from_key(kind, who), window_ms)
