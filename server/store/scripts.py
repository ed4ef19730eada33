"""Loads the Lua scripts: each race script is lua/common.lua followed by its own file; lobby, queue, pool and player scripts stand alone."""

from __future__ import annotations

from importlib import resources

from redis.commands.core import AsyncScript

from server.store.connection import RedisClient

SHARDED_PUBLISH = ("local PUBLISH = 'PUBLISH'", "local PUBLISH = 'SPUBLISH'")
"""The line of lua/common.lua that names the publishing command, and what it becomes for sharded channels."""


def _source(name: str) -> str:
    return resources.files("server.store").joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


class Scripts:
    """The registered scripts of one Redis client (EVALSHA, reloaded by redis-py when Redis forgot them)."""

    def __init__(self, redis: RedisClient, *, sharded_channels: bool = False) -> None:
        """``sharded_channels``: the race scripts publish their events with SPUBLISH (a Redis Cluster of Redis >= 7)."""
        common = _source("common")
        if sharded_channels:
            common = common.replace(SHARDED_PUBLISH[0], SHARDED_PUBLISH[1], 1)
        self.create: AsyncScript = redis.register_script(common + _source("create"))
        self.join: AsyncScript = redis.register_script(common + _source("join"))
        self.apply_action: AsyncScript = redis.register_script(common + _source("apply_action"))
        self.check_action: AsyncScript = redis.register_script(common + _source("check_action"))
        self.end_attempt: AsyncScript = redis.register_script(common + _source("end_attempt"))
        self.tick: AsyncScript = redis.register_script(common + _source("tick"))
        self.presence: AsyncScript = redis.register_script(common + _source("presence"))
        self.leave: AsyncScript = redis.register_script(common + _source("leave"))
        self.rematch_offer: AsyncScript = redis.register_script(common + _source("rematch_offer"))
        self.rematch_link: AsyncScript = redis.register_script(common + _source("rematch_link"))
        self.admin_close: AsyncScript = redis.register_script(common + _source("admin_close"))
        self.due_timers: AsyncScript = redis.register_script(_source("due_timers"))
        self.lobby_open: AsyncScript = redis.register_script(_source("lobby_open"))
        self.lobby_change: AsyncScript = redis.register_script(_source("lobby_change"))
        self.lobby_close: AsyncScript = redis.register_script(_source("lobby_close"))
        self.lobby_snapshot: AsyncScript = redis.register_script(_source("lobby_snapshot"))
        self.invite_attempt: AsyncScript = redis.register_script(_source("invite_attempt"))
        self.invite_refund: AsyncScript = redis.register_script(_source("invite_refund"))
        self.quick_match: AsyncScript = redis.register_script(_source("quick_match"))
        self.quick_match_cancel: AsyncScript = redis.register_script(_source("quick_match_cancel"))
        self.quick_match_requeue: AsyncScript = redis.register_script(_source("quick_match_requeue"))
        self.seed_pool_add: AsyncScript = redis.register_script(_source("seed_pool_add"))
        self.account_register: AsyncScript = redis.register_script(_source("account_register"))
        self.rated_begin: AsyncScript = redis.register_script(_source("rated_begin"))
        self.rated_end: AsyncScript = redis.register_script(_source("rated_end"))
        self.book_race: AsyncScript = redis.register_script(_source("book_race"))
        self.analysis_save: AsyncScript = redis.register_script(common + _source("analysis_save"))
        self.analysis_claim: AsyncScript = redis.register_script(_source("analysis_claim"))
