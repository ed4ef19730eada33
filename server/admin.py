"""The server side of ``flowergarden admin``: every process reads the signed operator commands from Redis,
carries out its part, replies, and audits what it did; it also keeps its entry in the process registry.

Commands go through Redis rather than the public port: the admin surface is never exposed to players, reaches
every process behind a load balancer (a command for process X reaches X, whichever balancer route the tool
would have taken), and a process that cannot reach Redis could not carry out most commands anyway.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from server import logs, metrics, version
from server.admin_signing import MAX_AGE_MS, verify
from server.operations import Operations
from server.services.background import BackgroundLoop
from server.services.errors import ServiceError
from server.services.lobby import LobbyService
from server.services.seed_pool import SeedPool
from server.store import ArenaStore, Ban, BanKind, OpsStore, RaceStore, StoreError, StoreRefusal
from server.transport import LiveConnection, Transport
from shared.arena import parse_schedule
from shared.protocol import CloseReason, Notice

Handler = Callable[[dict[str, Any], bool], Awaitable[dict[str, Any]]]
"""An action: its arguments and whether this process claimed the command's one-time part -> its result."""


class AdminError(Exception):
    """A command this process refuses (bad arguments, unknown race); the message goes back to the operator."""


class AdminExecutor:
    """Reads operator commands and the registry heartbeat of one server process (a background service)."""

    def __init__(
        self,
        ops_store: OpsStore,
        race_store: RaceStore,
        operations: Operations,
        lobby: LobbyService,
        seed_pool: SeedPool,
        *,
        process_id: str,
        secret: str | None,
        now_ms: Callable[[], Awaitable[int]],
        heartbeat_seconds: float = 2.0,
        block_ms: int = 1000,
    ) -> None:
        self.ops_store = ops_store
        self.race_store = race_store
        self.operations = operations
        self.lobby = lobby
        self.seed_pool = seed_pool
        self.process_id = process_id
        self.secret = secret
        self.now_ms = now_ms
        self.heartbeat_seconds = heartbeat_seconds
        self.block_ms = block_ms
        self.transport: Transport | None = None
        self.analysis_backlog: Callable[[], Awaitable[int]] | None = None
        """Refreshes the analysis-backlog gauge with each heartbeat (server/services/analysis.py ``backlog``)."""
        self.address = ""
        self.drain_timeout = 3600.0
        self.started_at = int(time.time() * 1000)
        self._loop = BackgroundLoop("AdminExecutor")
        self._obeyed: dict[str, int] = {}
        """Ids of the genuine commands this process carried out -> their signed time (ms), kept while a command of that
        time could still pass :func:`verify`: a signed command written to the stream again is obeyed once."""
        self._handlers: dict[str, Handler] = {
            "list": self._list,
            "kick": self._kick,
            "ban": self._ban,
            "unban": self._unban,
            "close_race": self._close_race,
            "notice": self._notice,
            "drain": self._drain,
            "tournament_add": self._tournament_add,
            "tournament_remove": self._tournament_remove,
        }
        self.arena_store: ArenaStore | None = None
        """Where the operators' recurring arenas are kept (set by the assembly)."""

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """Heartbeat and obey commands until stopped; survives Redis outages (and any failure of one round) by
        retrying (server/services/background.py)."""
        cursor: str | None = None
        next_beat = 0.0

        async def step() -> None:
            nonlocal cursor, next_beat
            if cursor is None:
                cursor = await self.ops_store.last_command_id()
            if time.monotonic() >= next_beat:
                await self.heartbeat()
                next_beat = time.monotonic() + self.heartbeat_seconds
            for entry_id, command in await self.ops_store.read_commands(cursor, self.block_ms):
                cursor = entry_id
                await self._obey(command)

        await self._loop.run(step, retry_seconds=0.5)

    async def close(self) -> None:
        """Leave the process registry (the process stops); if Redis cannot be reached the registration lapses."""
        try:
            await self.ops_store.unregister_process(self.process_id)
        except StoreError:
            pass

    async def heartbeat(self) -> None:
        """Renew this process's registration; refresh the seed-pool and analysis-backlog gauges."""
        live = self.transport.live_connections() if self.transport is not None else []
        info = {
            "address": self.address,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": self.started_at,
            "connections": len(live),
            "draining": self.operations.draining,
            "version": version(),
        }
        await self.ops_store.register_process(self.process_id, info, now_ms=await self.now_ms(), lease_ms=round(self.heartbeat_seconds * 3000))
        for profile in self.seed_pool.profiles:
            metrics.seed_pool_size(profile, await self.seed_pool.size(profile))
        if self.analysis_backlog is not None:
            metrics.analysis_backlog(await self.analysis_backlog())

    async def _obey(self, command: dict[str, Any]) -> None:
        target = command.get("target", "*")
        if target not in ("*", self.process_id):
            return
        action = str(command.get("action"))
        command_id = str(command.get("id"))
        operator = str(command.get("operator", "?"))
        args = command.get("args") if isinstance(command.get("args"), dict) else {}
        assert isinstance(args, dict)
        handler = self._handlers.get(action)
        problem, result = await self._carry_out(command, command_id, action, args)
        ok = problem is None
        metrics.admin_action(action if handler is not None else "unknown", ok)
        outcome = {"process": self.process_id, "address": self.address, "ok": ok, "result": result, "error": problem}
        entry = {"at": await self.now_ms(), "command": command_id, "operator": operator, "action": action, "args": args, **outcome}
        (logs.event if ok else logs.warning)("admin_action", **{key: value for key, value in entry.items() if key != "at"})
        await self.ops_store.audit(entry)
        await self.ops_store.reply(command_id, outcome)

    async def _carry_out(self, command: dict[str, Any], command_id: str, action: str, args: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        """Check the command (secret, signature, age, first time, known action) and run its action once across the
        processes: (why it was refused or failed, else None; the action's result)."""
        now = await self.now_ms()
        problem = "this server has no operator secret configured" if not self.secret else verify(self.secret, command, now)
        if problem is None:
            problem = self._first_time(command_id, int(command["at"]), now)
        handler = self._handlers.get(action)
        if problem is None and handler is None:
            problem = f"unknown action {action[:40]!r}"
        if problem is not None or handler is None:
            return problem, {}
        try:
            claimed = await self.ops_store.claim(command_id, self.process_id)
            return None, await handler(args, claimed)
        except (AdminError, ServiceError) as error:
            return (str(error) if isinstance(error, AdminError) else error.message), {}

    def _first_time(self, command_id: str, at_ms: int, now_ms: int) -> str | None:
        """None the first time this process sees a genuine command id (remembered from now on), else why it is refused:
        a replayed command (the same signed document written again) is obeyed once."""
        for seen, seen_at in list(self._obeyed.items()):  # in signed-time order of arrival: forget what verify refuses anyway
            if abs(now_ms - seen_at) <= 2 * MAX_AGE_MS:
                break
            del self._obeyed[seen]
        if command_id in self._obeyed:
            return "replayed command (this command id was carried out already)"
        self._obeyed[command_id] = at_ms
        return None

    # --- the actions ------------------------------------------------------------------------------------

    def _live(self) -> list[LiveConnection]:
        return self.transport.live_connections() if self.transport is not None else []

    async def _list(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        connections = []
        races: dict[str, list[str]] = {}
        for item in self._live():
            state = item.state
            watched = {race: ("spectator" if sub.viewer_slot is None else f"seat {sub.viewer_slot}") for race, sub in state.subscriptions.items()}
            for race, how in watched.items():
                races.setdefault(race, []).append(f"{state.player or '?'} ({how})")
            connections.append(
                {"connection": state.connection_id, "peer": state.address, "player": state.player, "role": state.role().value, "races": watched}
            )
        return {"draining": self.operations.draining, "connections": connections, "races": races}

    def _matching(self, args: dict[str, Any]) -> list[LiveConnection]:
        connection, player, ip = args.get("connection"), args.get("player"), args.get("ip")
        if not any((connection, player, ip)):
            raise AdminError("name a connection, a player or an ip")
        return [
            item for item in self._live()
            if (connection and item.state.connection_id == connection) or (player and item.state.player == player) or (ip and item.state.address == ip)
        ]

    async def _kick(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        reason = str(args.get("reason") or "closed by an operator")
        matching = self._matching(args)
        for item in matching:
            self.operations.kick(item, reason)
        return {"kicked": len(matching)}

    async def _ban(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        kind = BanKind(args.get("kind"))
        subject, seconds, reason = str(args.get("subject")), int(args.get("seconds", 0)), str(args.get("reason") or "banned")
        if seconds <= 0:
            raise AdminError("a ban needs a duration of at least one second")
        stored = False
        if claimed:
            now = await self.now_ms()
            await self.ops_store.ban(Ban(kind, subject, reason, now + seconds * 1000, str(args.get("operator", "operator"))), now)
            stored = True
        matching = self._matching({kind.value: subject})
        for item in matching:
            self.operations.kick(item, f"banned: {reason}")
        return {"stored": stored, "kicked": len(matching)}

    async def _unban(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        if not claimed:
            return {}
        return {"lifted": await self.ops_store.unban(BanKind(args.get("kind")), str(args.get("subject")))}

    async def _close_race(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        if not claimed:
            return {}
        race_id = str(args.get("race"))
        try:
            before = await self.race_store.close_by_operator(race_id, str(args.get("reason") or "closed by an operator"))
        except StoreRefusal as refusal:
            raise AdminError(f"race {race_id}: {refusal.code}") from None
        await self.lobby.races_ticked([race_id])  # out of the lobby list, its invite code freed
        logs.event("race_closed", race=race_id, reason=CloseReason.OPERATOR, status_before=before)
        metrics.race_status("closed")
        return {"closed": race_id, "status_before": before}

    async def _notice(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        message = str(args.get("message") or "")
        if not message:
            raise AdminError("a notice needs a message")
        live = self._live()
        for item in live:
            item.outbox.send(Notice(message=message[:500]))
        return {"sent": len(live)}

    async def _tournament_add(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        """Add (or replace) a recurring arena; the process that claimed the command stores it, every process opens
        its arenas from its next schedule round on."""
        try:
            schedule = parse_schedule(str(args.get("spec") or ""))
        except ValueError as error:
            raise AdminError(f"bad schedule: {error}") from None
        if claimed and self.arena_store is not None:
            await self.arena_store.put_schedule(schedule.name, schedule.text())
        return {"schedule": schedule.text(), "stored": claimed}

    async def _tournament_remove(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        """Remove a recurring arena (the arenas it opened stay, and finish)."""
        name = str(args.get("name") or "")
        if not claimed or self.arena_store is None:
            return {}
        if not await self.arena_store.remove_schedule(name):
            raise AdminError(f"no recurring arena is named {name[:40]!r} (a config file's arena.recurring is removed there)")
        return {"removed": name}

    async def _drain(self, args: dict[str, Any], claimed: bool) -> dict[str, Any]:
        timeout = float(args.get("timeout") or self.drain_timeout)
        started = self.operations.drain(timeout)
        return {"draining": True, "already": not started, "timeout": timeout}
