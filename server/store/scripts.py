"""Loads the Lua scripts: each race script is the parts of lua/common.lua it uses followed by its own file; lobby,
queue, pool and player scripts stand alone. Every script takes its arguments as one MessagePack map of named fields
(:func:`script_arguments`), read through lua/arguments.lua, which refuses a missing field before the script runs.
A race script's reply is one MessagePack string (:func:`packed_reply`, read back with :func:`script_reply`)."""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Any

import msgpack
from redis.commands.core import AsyncScript

from server.store.connection import RedisClient

SHARDED_PUBLISH = ("local PUBLISH = 'PUBLISH'", "local PUBLISH = 'SPUBLISH'")
"""The line of lua/common.lua that names the publishing command, and what it becomes for sharded channels."""
RACE_SCRIPTS = ("create", "join", "apply_action", "apply_move", "check_action", "end_attempt", "tick", "presence", "leave", "rematch_offer", "rematch_link", "admin_close", "berserk", "emote")
"""The scripts of one race's keys: each starts with the parts of common.lua it uses (its KEYS and ARGV layout), and
replies with one MessagePack string (:func:`packed_reply`)."""

_ARGUMENT = re.compile(r"\bARGS\.(\w+)")
_DEFINITION = re.compile(r"local (?:function (\w+)|([\w, ]+?)\s*=)")
_NAME = re.compile(r"[A-Za-z_]\w*")


@functools.cache
def _source(name: str) -> str:
    """The text of ``lua/<name>.lua``, read once per process (a package file: it cannot change under a running one)."""
    return resources.files("server.store").joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")


def common_definitions(common: str) -> list[tuple[list[str], str]]:
    """The top-level definitions of common.lua, in order: the names each defines (``local function f`` or
    ``local A, B = ...``) and its code (up to the next one, without comments)."""
    lines = common.splitlines(keepends=True)
    starts = [index for index, line in enumerate(lines) if line.startswith("local ")]
    definitions = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        match = _DEFINITION.match(lines[start])
        if match is None:
            raise ValueError(f"common.lua line {start + 1}: a top-level statement that is not a definition")
        names = [match.group(1)] if match.group(1) else [name.strip() for name in match.group(2).split(",")]
        code = "".join(line for line in lines[start:end] if not line.lstrip().startswith("--"))
        definitions.append((names, code))
    return definitions


@functools.cache
def race_script(common: str, own: str) -> str:
    """A race script: the definitions of ``common`` that ``own`` names, directly or through another definition, in
    their order, then ``own``. Redis runs a script's whole text on every call, so every helper defined costs on every
    call: measured on redis-server 6.2, all of common.lua 4.3 us a call, the part the move script uses 2.2 us."""
    definitions = common_definitions(common)
    defined_by = {name: index for index, (names, _) in enumerate(definitions) for name in names}
    needed: set[int] = set()
    unread = [own]
    while unread:
        for name in set(_NAME.findall(_without_comments(unread.pop()))):
            index = defined_by.get(name)
            if index is not None and index not in needed:
                needed.add(index)
                unread.append(definitions[index][1])
    return "".join(definitions[index][1] for index in sorted(needed)) + own


def _without_comments(code: str) -> str:
    """Lua ``code`` without its ``--`` comments (a helper a comment names is not one the code needs)."""
    return "\n".join(line.split("--", 1)[0] for line in code.splitlines())


def script_arguments(**fields: Any) -> list[bytes]:
    """A script's ARGV: its named fields packed as one MessagePack map. None is sent as false, so that the script
    sees the field (a MessagePack nil would vanish from the Lua table and read as a missing field). Bytes and text
    both go as MessagePack raw strings (``use_bin_type=False``): Redis' cmsgpack does not read the bin types."""
    return [msgpack.packb({name: False if value is None else value for name, value in fields.items()}, use_bin_type=False)]


@functools.cache
def with_arguments(script: str) -> str:
    """``script`` preceded by lua/arguments.lua and the line that reads its arguments: every ``ARGS.<name>`` the
    script's code names (comments aside) is required, so a caller that leaves one out is refused before anything
    is written (``script argument missing: <name>``)."""
    names = sorted(set(_ARGUMENT.findall(_without_comments(script))))
    if not names:
        return script
    fields = ", ".join(f"'{name}'" for name in names)
    return _source("arguments") + f"local ARGS = read_arguments(ARGV[1], {{{fields}}})\n" + script


PACKED_REPLY = ("local function script_reply()\n", "\nend\nreturn cmsgpack.pack((script_reply()))\n")
"""What :func:`packed_reply` puts around a script."""


def packed_reply(script: str) -> str:
    """``script`` run as a function whose reply is returned packed as one MessagePack string (:func:`script_reply`
    unpacks it). Redis 6.2 sends a Lua table with a deferred length, which splits the connection's reply buffer into
    pieces it writes with one ``write`` system call each: 3 writes and ~12 us of Redis CPU for the move script's
    reply against 0.13 writes and ~2 us for one string, pipelined (benchmarks/script_replies.py; Redis 7 writes the
    pieces with one ``writev`` and costs about the same either way). Error replies (``error()``) are not packed."""
    return PACKED_REPLY[0] + script + PACKED_REPLY[1]


def script_reply(packed: bytes) -> Any:
    """The reply of a :func:`packed_reply` script as Redis would have converted the Lua value: lists for arrays,
    integers, and bytes for strings (MessagePack raw strings, not decoded). Only a Lua boolean differs (False and
    True here, nil and 1 from Redis): the race scripts reply with numbers 0 and 1 instead."""
    return msgpack.unpackb(packed, raw=True)


class Scripts:
    """The registered scripts of one Redis client (EVALSHA, reloaded by redis-py when Redis forgot them).

    Each store builds its own; the texts are composed once per process (:func:`_source`, :func:`race_script` and
    :func:`with_arguments` are cached): composing them was about half the CPU of starting a race server, which the
    suite does for nearly every test (tests/conftest.py ``race_server``).
    """

    def __init__(self, redis: RedisClient, *, sharded_channels: bool = False) -> None:
        """``sharded_channels``: the race scripts publish their events with SPUBLISH (a Redis Cluster of Redis >= 7)."""
        common = _source("common")
        if sharded_channels:
            common = common.replace(SHARDED_PUBLISH[0], SHARDED_PUBLISH[1], 1)
        race = {name: redis.register_script(packed_reply(with_arguments(race_script(common, _source(name))))) for name in RACE_SCRIPTS}
        self.create: AsyncScript = race["create"]
        self.join: AsyncScript = race["join"]
        self.apply_action: AsyncScript = race["apply_action"]
        self.apply_move: AsyncScript = race["apply_move"]
        self.check_action: AsyncScript = race["check_action"]
        self.end_attempt: AsyncScript = race["end_attempt"]
        self.tick: AsyncScript = race["tick"]
        self.presence: AsyncScript = race["presence"]
        self.leave: AsyncScript = race["leave"]
        self.rematch_offer: AsyncScript = race["rematch_offer"]
        self.rematch_link: AsyncScript = race["rematch_link"]
        self.admin_close: AsyncScript = race["admin_close"]
        self.berserk: AsyncScript = race["berserk"]
        self.emote: AsyncScript = race["emote"]
        self.due_timers: AsyncScript = redis.register_script(with_arguments(_source("due_timers")))
        self.lobby_open: AsyncScript = redis.register_script(with_arguments(_source("lobby_open")))
        self.lobby_change: AsyncScript = redis.register_script(with_arguments(_source("lobby_change")))
        self.lobby_close: AsyncScript = redis.register_script(with_arguments(_source("lobby_close")))
        self.lobby_snapshot: AsyncScript = redis.register_script(with_arguments(_source("lobby_snapshot")))
        self.invite_attempt: AsyncScript = redis.register_script(with_arguments(_source("invite_attempt")))
        self.invite_refund: AsyncScript = redis.register_script(with_arguments(_source("invite_refund")))
        self.quick_match: AsyncScript = redis.register_script(with_arguments(_source("quick_match")))
        self.quick_match_cancel: AsyncScript = redis.register_script(with_arguments(_source("quick_match_cancel")))
        self.quick_match_requeue: AsyncScript = redis.register_script(with_arguments(_source("quick_match_requeue")))
        self.online_report: AsyncScript = redis.register_script(with_arguments(_source("online_report")))
        self.seed_pool_add: AsyncScript = redis.register_script(with_arguments(_source("seed_pool_add")))
        self.account_register: AsyncScript = redis.register_script(with_arguments(_source("account_register")))
        self.login_attempt: AsyncScript = redis.register_script(with_arguments(_source("login_attempt")))
        self.login_refund: AsyncScript = redis.register_script(with_arguments(_source("login_refund")))
        self.rated_begin: AsyncScript = redis.register_script(with_arguments(_source("rated_begin")))
        self.rated_end: AsyncScript = redis.register_script(with_arguments(_source("rated_end")))
        self.book_race: AsyncScript = redis.register_script(with_arguments(_source("book_race")))
        self.analysis_save: AsyncScript = redis.register_script(with_arguments(race_script(common, _source("analysis_save"))))
        self.arena_claim: AsyncScript = redis.register_script(with_arguments(_source("arena_claim")))
        self.arena_join: AsyncScript = redis.register_script(with_arguments(_source("arena_join")))
        self.arena_create: AsyncScript = redis.register_script(with_arguments(_source("arena_create")))
        self.arena_confirm: AsyncScript = redis.register_script(with_arguments(_source("arena_confirm")))
        self.arena_release: AsyncScript = redis.register_script(with_arguments(_source("arena_release")))
        self.arena_result: AsyncScript = redis.register_script(with_arguments(_source("arena_result")))
        self.daily_open: AsyncScript = redis.register_script(with_arguments(_source("daily_open")))
        self.daily_start: AsyncScript = redis.register_script(with_arguments(_source("daily_start")))
        self.daily_move: AsyncScript = redis.register_script(with_arguments(_source("daily_move")))
        self.analysis_claim: AsyncScript = redis.register_script(with_arguments(_source("analysis_claim")))
        self.archive_read: AsyncScript = redis.register_script(_source("archive_read"))
        self.archive_cached: AsyncScript = redis.register_script(with_arguments(_source("archive_cached")))
