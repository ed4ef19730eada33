"""``flowergarden admin``: operate running servers through their Redis (docs/OPERATIONS.md "Administration").

Commands that change something are signed with the operator secret and carried out by the server processes,
which reply and audit them; read-only commands (processes, show, bans, audit) read Redis directly.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cli.output import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, CommandError, emit_json, whole_number
from server import config
from server.admin_signing import sign
from server.app import ServerConfig
from server.embedded_redis import running_url
from server.record_signing import public_hex
from server.store import AnalysisStore, ArenaStore, BanKind, OpsStore, PlayerStore, RaceStore, StoreError, keys, open_client
from shared.arena import Schedule, parse_schedule
from shared.protocol import RaceStatus

EPILOG = """\
The tool talks to Redis, never to the public port: give the servers' Redis with --redis, REDIS_URL or the
redis_url of --config FILE (a Redis Cluster: --redis-cluster URL[,URL...], REDIS_CLUSTER_URL or
redis_cluster_url); without them it uses the embedded Redis of a server running on the data folder
(data_dir, default var/redis: run it where `flowergarden serve` / `python3 dev.py serve` was started). Commands that change something are signed with the operator secret
(FLOWERGARDEN_OPERATOR_SECRET, or operator_secret in the config file): the servers obey only commands signed
with their own secret, at most a minute old. Each live process replies; the tool waits for all of them
(--wait-replies seconds at most) and prints one line per process. Every command is audited in Redis
(`flowergarden admin audit`) and logged by the process that carried it out.

examples:
  flowergarden admin processes
  flowergarden admin list
  flowergarden admin show inQH4SkJQ5Y
  flowergarden admin close-race inQH4SkJQ5Y --reason "reported: abusive names"
  flowergarden admin kick --player p_3f9a --reason "please reconnect"
  flowergarden admin ban --player p_3f9a --for 7d --reason "abuse"
  flowergarden admin ban --ip 203.0.113.9 --for 1h --reason "connection flood"
  flowergarden admin notice "restart at 10:00 UTC (in 5 minutes)"
  flowergarden admin drain 3c9e1f0a2b4d6e8f --wait
  flowergarden admin pairs
  flowergarden admin tournament add "Hourly 5-minute" --every 60 --minutes 55 --time-limit 300
  flowergarden admin tournament list
"""

DURATION = re.compile(r"^(\d+)([smhd]?)$")
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(text: str) -> int:
    match = DURATION.fullmatch(text.strip())
    if match is None or int(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"a duration is a positive number with s, m, h or d (30m, 12h, 7d), got {text!r}")
    return int(match.group(1)) * UNIT_SECONDS[match.group(2)]


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no USER/LOGNAME and no passwd entry (some containers)
        return "operator"


def register(subparsers: Any) -> None:
    """Add ``admin`` and its subcommands."""
    parser = subparsers.add_parser(
        "admin", help="operate running servers (list, close races, kick, ban, notice, drain)",
        description="Operate running Flower Garden Race servers through their Redis.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common_options(parser)
    subcommands = parser.add_subparsers(dest="admin_command", required=True, metavar="ACTION")

    def action(name: str, help: str) -> argparse.ArgumentParser:
        """An action whose ``--help`` opens with the line the ``admin --help`` list gives it."""
        added: argparse.ArgumentParser = subcommands.add_parser(name, help=help, description=f"{help[:1].upper()}{help[1:]}.")
        return added


    action("processes", "the live server processes (id, address, connections, draining)")
    listing = action("list", "each process's connections and the races they play or watch")
    listing.add_argument("--process", metavar="ID", help="only this process")
    show = action("show", "a race's record: status, seats, counts")
    show.add_argument("race", metavar="RACE", help="the race id")
    close = action("close-race", "close a race without a result; both players see the reason")
    close.add_argument("race", metavar="RACE", help="the race id")
    close.add_argument("--reason", required=True, help="shown to the players and spectators")
    kick = action("kick", "close connections (code 4000); they may reconnect")
    _subject(kick, connection=True)
    kick.add_argument("--reason", default="closed by an operator", help="the close reason the client sees")
    ban = action("ban", "ban a player or an address for a time; its connections are closed")
    _subject(ban)
    ban.add_argument("--for", dest="seconds", type=_duration, required=True, metavar="DURATION", help="e.g. 30m, 12h, 7d")
    ban.add_argument("--reason", required=True, help="shown to the banned client")
    unban = action("unban", "lift a ban")
    _subject(unban)
    action("bans", "the bans in force")
    notice = action("notice", "a message to every connected client (e.g. a restart warning)")
    notice.add_argument("message", metavar="MESSAGE", help="the text every client shows")
    drain = action("drain", "let a process finish its races, refuse new ones, then exit")
    drain.add_argument("process", help="the process id (flowergarden admin processes), or 'all'")
    drain.add_argument("--timeout", type=float, metavar="SECONDS", help="stop anyway after this long (default: the server's admin_drain_timeout_seconds)")
    drain.add_argument("--wait", action="store_true", help="wait until the process has exited")
    pairs = action("pairs", "pairs of accounts whose rated races look farmed (shared address, pair limit, aborted results)")
    pairs.add_argument("--count", type=whole_number(1), default=50, metavar="N", help="how many pairs, newest signal first (default %(default)s)")
    tournament = action("tournament", "recurring arena tournaments: add, list, remove (docs/OPERATIONS.md \"Recurring arenas\")")
    schedules = tournament.add_subparsers(dest="tournament_command", required=True, metavar="ACTION")
    add = schedules.add_parser("add", help="add (or replace) a recurring arena", description=(
        "Add a recurring arena, or replace the one of that name: one opens every EVERY minutes counted from 00:00 UTC "
        "(60: on the hour), listed AHEAD minutes before its start, and pairs for MINUTES. Arenas it opened stay as they are."))
    add.add_argument("name", metavar="NAME", help="its name, shown in the list (at most 32 characters, no ';')")
    add.add_argument("--every", type=whole_number(1), required=True, metavar="MINUTES", help="minutes from one start to the next (60: hourly)")
    add.add_argument("--minutes", type=whole_number(1), required=True, metavar="MINUTES", help="minutes of pairing (at most --every)")
    add.add_argument("--time-limit", type=whole_number(10), default=300, metavar="SECONDS", help="seconds of each race (default %(default)s)")
    add.add_argument("--rated", action="store_true", help="its races change the classic ratings")
    add.add_argument("--max-players", type=whole_number(0), default=0, metavar="N", help="the most players who may join (default 0: no cap)")
    add.add_argument("--ahead", type=whole_number(0), default=60, metavar="MINUTES", help="listed this long before its start (default %(default)s)")
    schedules.add_parser("list", help="the recurring arenas (stored and of the config file) and the listed arenas to come",
                         description="The recurring arenas (those added here and those of the config file's arena.recurring) and the listed arenas running or to come.")
    remove = schedules.add_parser("remove", help="remove a recurring arena (the arenas it opened stay)",
                                  description="Remove a recurring arena added with `add` (the arenas it opened stay and finish).")
    remove.add_argument("name", metavar="NAME", help="its name")
    for schedule_parser in schedules.choices.values():
        _common_options(schedule_parser, given_here_only=True)
    action("record-key", "the public key the servers sign exported race records with (flowergarden verify --key)")
    audit = action("audit", "the newest audited operator commands")
    audit.add_argument("--count", type=whole_number(1), default=20, metavar="N", help="how many of the newest entries (default %(default)s)")
    for action_parser in subcommands.choices.values():
        _common_options(action_parser, given_here_only=True)
    parser.set_defaults(handler=run_admin)


def _common_options(parser: argparse.ArgumentParser, *, given_here_only: bool = False) -> None:
    """The options every action takes, before the action (``admin --json list``) or after it (``admin list --json``).

    After the action they default to nothing (``SUPPRESS``), so that a value given before it stands.
    """
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if given_here_only else value

    parser.add_argument("--redis", metavar="URL", default=default(None),
                        help="the servers' Redis (default REDIS_URL, --config's redis_url, or the embedded Redis of a server "
                        "started from this folder: its data_dir)")
    parser.add_argument("--redis-cluster", metavar="URL[,URL...]", default=default(None),
                        help="the servers' Redis Cluster instead: node URLs, comma-separated, any reachable one is enough "
                        "(default REDIS_CLUSTER_URL or --config's redis_cluster_url)")
    parser.add_argument("--config", type=Path, metavar="FILE", default=default(None),
                        help="a server config file to take redis_url (or redis_cluster_url), data_dir and operator_secret from")
    parser.add_argument("--as", dest="operator", default=default(_login()), help=f"your name in the audit trail (default {_login()})")
    parser.add_argument("--wait-replies", type=float, default=default(5.0), metavar="SECONDS",
                        help="how long to wait for the processes' replies (default 5)")
    parser.add_argument("--json", action="store_true", default=default(False), help="print JSON documents instead of text")


def _subject(parser: argparse.ArgumentParser, *, connection: bool = False) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    if connection:
        group.add_argument("--connection", metavar="ID", help="a connection id (flowergarden admin list)")
    group.add_argument("--player", metavar="ID", help="a player id")
    group.add_argument("--ip", metavar="ADDRESS", help="a client address (as the servers see it, behind trusted proxies)")


class Admin:
    """One admin session: the stores, the secret, the operator's name."""

    def __init__(self, ops: OpsStore, races: RaceStore, secret: str | None, operator: str, wait_replies: float) -> None:
        self.ops = ops
        self.races = races
        self.secret = secret
        self.operator = operator
        self.wait_replies = wait_replies

    async def now_ms(self) -> int:
        """Redis' clock."""
        return await self.races.now_ms()

    async def command(self, action: str, args: dict[str, Any], target: str = "*") -> list[dict[str, Any]]:
        """Send a signed command; the replies of the live processes it targets."""
        if not self.secret:
            raise CommandError("no_secret", "set FLOWERGARDEN_OPERATOR_SECRET (or operator_secret in --config) to the servers' secret")
        now = await self.now_ms()
        expected = {process["id"] for process in await self.ops.processes(now) if target in ("*", process["id"])}
        if not expected:
            raise CommandError("no_process", "no live server process" + ("" if target == "*" else f" with id {target}"))
        command_id = uuid.uuid4().hex
        document = {"id": command_id, "action": action, "args": args, "target": target, "operator": self.operator, "at": now}
        await self.ops.send_command(sign(self.secret, document))
        replies: dict[str, dict[str, Any]] = {}
        cursor = "0-0"
        deadline = time.monotonic() + self.wait_replies
        while set(replies) < expected and time.monotonic() < deadline:
            block = max(1, int((deadline - time.monotonic()) * 1000))
            for entry_id, reply in await self.ops.read_replies(command_id, cursor, min(block, 1000)):
                cursor = entry_id
                replies[str(reply.get("process"))] = reply
        for missing in sorted(expected - set(replies)):
            replies[missing] = {"process": missing, "ok": False, "missing": True, "error": f"no reply within {self.wait_replies} s", "result": {}}
        return [replies[key] for key in sorted(replies)]


def run_admin(args: argparse.Namespace) -> int:
    """Run one admin action."""
    settings = _settings(args)
    store = _store_of(args, settings)
    try:
        return asyncio.run(_run(args, store, settings.operator_secret))
    except StoreError as error:
        raise CommandError(  # not a usage error: the command was understood, Redis did not answer (exit 1)
            "redis_unreachable",
            f"cannot reach the servers' Redis at {store.url} ({error}): is it running? Name it with --redis, REDIS_URL, "
            "--redis-cluster, REDIS_CLUSTER_URL or --config",
        ) from None


@dataclass(frozen=True)
class StoreAddress:
    """Where the servers keep their state: one Redis, or (``cluster``) a Redis Cluster's node URLs."""

    url: str
    cluster: bool


def _store_of(args: argparse.Namespace, settings: ServerConfig) -> StoreAddress:
    """The Redis named on the command line (which wins over the environment and the config file), else the
    settings' Redis or Redis Cluster, else the embedded Redis of a server started on the data folder."""
    if args.redis and args.redis_cluster:
        raise CommandError("bad_usage", "give --redis or --redis-cluster, not both", exit_code=EXIT_USAGE)
    if args.redis or args.redis_cluster:
        return StoreAddress(args.redis or args.redis_cluster, cluster=bool(args.redis_cluster))
    if settings.redis_url or settings.redis_cluster_url:
        return StoreAddress(settings.redis_url or settings.redis_cluster_url, cluster=bool(settings.redis_cluster_url))
    embedded = running_url(Path(settings.data_dir))
    if not embedded:
        raise CommandError(
            "no_redis",
            "give the servers' Redis: --redis URL, REDIS_URL or redis_url in --config, or their Redis Cluster: "
            "--redis-cluster URL[,URL...], REDIS_CLUSTER_URL or redis_cluster_url (no server with an embedded Redis "
            f"holds the data folder {settings.data_dir} here: run the command in the folder the server was started in, "
            "or give a --config whose data_dir names its folder)",
        )
    return StoreAddress(embedded, cluster=False)


def _settings(args: argparse.Namespace) -> ServerConfig:
    try:
        return config.effective(args.config, os.environ, {})
    except config.ConfigError as error:
        raise CommandError("bad_config", str(error), exit_code=EXIT_USAGE) from None


async def _run(args: argparse.Namespace, store: StoreAddress, secret: str | None) -> int:
    redis = await open_client(store.url, cluster=store.cluster, max_connections=4)
    races = RaceStore(redis)
    try:
        admin = Admin(OpsStore(redis), races, secret, args.operator, args.wait_replies)
        return await ACTIONS[args.admin_command](admin, args)
    finally:
        await races.close()  # its script connection (server/store/script_pipeline.py), if a script ran
        await redis.aclose()


def _print(args: argparse.Namespace, document: Any, text: str) -> None:
    if args.json:
        emit_json(document)
    else:
        print(text)


def _replies(args: argparse.Namespace, replies: list[dict[str, Any]], describe: Any) -> int:
    """Print each process's reply; exit code 1 if a process refused or none answered (a process that died
    moments ago may still be registered: its missing reply is shown, not counted as a refusal)."""
    lines = []
    for reply in replies:
        where = f"{reply['process']} ({reply.get('address', '?')})"
        if reply.get("missing"):
            lines.append(f"{where}: {reply['error']} (it may have stopped)")
        else:
            lines.append(f"{where}: {describe(reply['result'])}" if reply["ok"] else f"{where}: refused: {reply['error']}")
    _print(args, replies, "\n".join(lines))
    answered = [reply for reply in replies if not reply.get("missing")]
    return EXIT_OK if answered and all(reply["ok"] for reply in answered) else EXIT_REFUSED


async def _processes(admin: Admin, args: argparse.Namespace) -> int:
    found = await admin.ops.processes(await admin.now_ms())
    lines = [
        f"{p['id']}  {p.get('address', '?'):<22} pid {p.get('pid')} on {p.get('host')}  version {p.get('version', '?')}"
        f"  {p.get('connections', 0)} connections"
        + ("  DRAINING" if p.get("draining") else "")
        for p in found
    ]
    _print(args, found, "\n".join(lines) or "no live server process")
    return EXIT_OK


async def _list(admin: Admin, args: argparse.Namespace) -> int:
    replies = await admin.command("list", {}, args.process or "*")
    if args.json:
        emit_json(replies)
        return EXIT_OK if any(reply["ok"] for reply in replies) else EXIT_REFUSED
    for reply in replies:
        if not reply["ok"]:
            print(f"process {reply['process']}: {reply['error']}")
            continue
        result = reply["result"]
        state = " DRAINING" if result.get("draining") else ""
        print(f"process {reply['process']} ({reply.get('address', '?')}){state}: {len(result.get('connections', []))} connections")
        for item in result.get("connections", []):
            races = ", ".join(f"{race} {how}" for race, how in item["races"].items()) or "-"
            print(f"  {item['connection']}  {item['peer']:<16} {item['player'] or '(no hello)':<24} {item['role']:<9} {races}")
        for race, players in result.get("races", {}).items():
            print(f"  race {race}: {', '.join(players)}")
    return EXIT_OK if any(reply["ok"] for reply in replies) else EXIT_REFUSED


def signal_text(entry: dict[str, Any]) -> str:
    """One attempt's assistance signals in words (docs/FAIRPLAY.md: for review, not a verdict)."""
    times = entry.get("move_times", {})
    share = entry.get("on_line_share")
    on_line = "no move judged" if share is None else f"{entry['on_line_moves']}/{entry['judged_moves']} moves on the solver's line ({share:.0%})"
    pace = f"median {times['median_ms']} ms per action (p10 {times['p10_ms']} ms)" if times.get("actions") else "no actions"
    return f"seat {entry['slot']} signals: {on_line}; {pace}"


async def _show(admin: Admin, args: argparse.Namespace) -> int:
    record = await admin.races.load_race(args.race)
    if record is None:
        raise CommandError("unknown_race", f"there is no race {args.race!r}")
    seats: list[dict[str, Any]] = [
        {"slot": seat.slot, "player": seat.player, "name": seat.name, "count": seat.count, "moves": seat.moves, "state": seat.state,
         "connected": seat.connected}
        for seat in record.seats
    ]
    document = {
        "race": record.race_id, "status": record.status, "profile": record.settings.profile, "seed": record.deal.seed, "origin": record.origin,
        "private": record.settings.private, "created_at": record.created_at, "start_at": record.start_at, "finished_at": record.finished_at,
        "winner": record.winner, "result_reason": record.result_reason, "watchers": record.watchers, "seats": seats,
        "seed_chosen": record.seed_fixed, "difficulty": record.deal.difficulty, "commitment": record.deal.commitment,
    }
    stored = await AnalysisStore(admin.races.redis, record_ttl_ms=0).load(record.race_id)
    signals: list[dict[str, Any]] = [] if stored is None else list(stored["signals"])
    if stored is not None:  # the post-race analysis, with the assistance signals (for review, not verdicts: docs/FAIRPLAY.md)
        document["analysis"], document["signals"] = stored["analysis"], signals
    lines = "\n".join(
        f"  seat {seat['slot']}: {seat['name']} ({seat['player']}) {seat['count']}/52 on foundations, {seat['moves']} actions, "
        f"{seat['state']}{'' if seat['connected'] else ', disconnected'}"
        for seat in seats
    )
    result = f", result {record.result_reason} (winner seat {record.winner})" if record.status is RaceStatus.FINISHED else ""
    chosen = " (chosen by the creator)" if record.seed_fixed else ""
    tier = f", {record.deal.difficulty}" if record.deal.difficulty is not None else ""
    lines += "".join(f"\n  {signal_text(entry)}" for entry in signals)
    _print(args, document, f"race {record.race_id}: {record.status}, {record.settings.profile} deal {record.deal.seed}{chosen}{tier}{result}\n{lines}")
    return EXIT_OK


async def _close_race(admin: Admin, args: argparse.Namespace) -> int:
    replies = await admin.command("close_race", {"race": args.race, "reason": args.reason})
    return _replies(args, replies, lambda result: f"closed (was {result['status_before']})" if result else "-")


def _subject_args(args: argparse.Namespace) -> dict[str, str]:
    for name in ("connection", "player", "ip"):
        value = getattr(args, name, None)
        if value:
            return {name: value}
    raise CommandError("no_subject", "name --connection, --player or --ip")  # argparse requires one: not reached


async def _kick(admin: Admin, args: argparse.Namespace) -> int:
    replies = await admin.command("kick", {**_subject_args(args), "reason": args.reason})
    return _replies(args, replies, lambda result: f"{result['kicked']} connection(s) closed")


async def _ban(admin: Admin, args: argparse.Namespace) -> int:
    ((kind, subject),) = _subject_args(args).items()
    replies = await admin.command(
        "ban", {"kind": BanKind(kind).value, "subject": subject, "seconds": args.seconds, "reason": args.reason, "operator": admin.operator}
    )
    return _replies(args, replies, lambda result: ("ban stored, " if result.get("stored") else "") + f"{result['kicked']} connection(s) closed")


async def _unban(admin: Admin, args: argparse.Namespace) -> int:
    ((kind, subject),) = _subject_args(args).items()
    replies = await admin.command("unban", {"kind": BanKind(kind).value, "subject": subject})
    return _replies(args, replies, lambda result: ("lifted" if result.get("lifted") else "there was no such ban") if result else "-")


async def _bans(admin: Admin, args: argparse.Namespace) -> int:
    found = await admin.ops.bans()
    documents = [{"kind": ban.kind.value, "subject": ban.subject, "reason": ban.reason, "until": ban.until, "by": ban.by} for ban in found]
    lines = [f"{ban.kind.value:<6} {ban.subject:<24} until {_when(ban.until)}  by {ban.by}: {ban.reason}" for ban in found]
    _print(args, documents, "\n".join(lines) or "no bans in force")
    return EXIT_OK


async def _notice(admin: Admin, args: argparse.Namespace) -> int:
    replies = await admin.command("notice", {"message": args.message})
    return _replies(args, replies, lambda result: f"sent to {result['sent']} connection(s)")


async def _drain(admin: Admin, args: argparse.Namespace) -> int:
    target = "*" if args.process == "all" else args.process
    replies = await admin.command("drain", {} if args.timeout is None else {"timeout": args.timeout}, target)
    code = _replies(args, replies, lambda result: f"draining (stops within {result['timeout']:.0f} s)")
    if args.wait and code == EXIT_OK:
        draining = {reply["process"] for reply in replies}
        while draining & {process["id"] for process in await admin.ops.processes(await admin.now_ms())}:
            await asyncio.sleep(0.5)
        if not args.json:
            print("drained: the process(es) exited")
    return code


async def _audit(admin: Admin, args: argparse.Namespace) -> int:
    entries = await admin.ops.audit_trail(args.count)
    lines = [
        f"{_when(entry['at'])}  {entry['operator']:<12} {entry['action']:<10} {json.dumps(entry['args'])} "
        f"on {entry['process']}: {'ok ' + json.dumps(entry['result']) if entry['ok'] else 'refused: ' + str(entry['error'])}"
        for entry in entries
    ]
    _print(args, entries, "\n".join(lines) or "no audited commands")
    return EXIT_OK


async def _pairs(admin: Admin, args: argparse.Namespace) -> int:
    """The ladder's signals: each pair with what it did (docs/PLAYERS.md "Ladder rules")."""
    found = await PlayerStore(admin.races.redis).suspicious_pairs(args.count)
    documents = [
        {"handles": list(pair.handles), "players": pair.pair.split("|"), "last_at": pair.last_at, "rated": pair.rated,
         "same_address": pair.same_address, "over_limit": pair.over_limit, "aborted": pair.aborted}
        for pair in found
    ]  # fmt: skip
    lines = [
        f"{_when(pair.last_at)}  {' vs '.join(pair.handles):<44} same address {pair.same_address}, over the pair limit "
        f"{pair.over_limit}, aborted {pair.aborted}, rated races {pair.rated}"
        for pair in found
    ]
    _print(args, documents, "\n".join(lines) or "no suspicious pairs")
    return EXIT_OK


async def _record_key(admin: Admin, args: argparse.Namespace) -> int:
    """The servers' record-signing public key, as GET /record-key serves it."""
    raw: Any = await admin.races.redis.get(keys.RECORD_SIGNING_KEY)
    if raw is None:
        raise CommandError("no_record_key", "no server has started on this Redis yet: the first one makes the key")
    public = public_hex(Ed25519PrivateKey.from_private_bytes(bytes(raw)).public_key())
    _print(args, {"algorithm": "ed25519", "public_key": public}, f"ed25519 {public}")
    return EXIT_OK


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms / 1000))


async def _tournament(admin: Admin, args: argparse.Namespace) -> int:
    """Recurring arenas: add and remove are signed commands (one process stores them), list reads Redis."""
    if args.tournament_command == "add":
        schedule = Schedule(args.name, args.every, args.minutes, args.time_limit, args.rated, args.max_players, args.ahead)
        try:
            spec = parse_schedule(schedule.text()).text()
        except ValueError as error:
            raise CommandError("bad_schedule", str(error), exit_code=EXIT_USAGE) from None
        replies = await admin.command("tournament_add", {"spec": spec})
        return _replies(args, replies, lambda result: f"stored {result['schedule']}" if result.get("stored") else "seen")
    if args.tournament_command == "remove":
        replies = await admin.command("tournament_remove", {"name": args.name})
        return _replies(args, replies, lambda result: f"removed {result['removed']}" if result else "seen")
    store = ArenaStore(admin.races.redis)
    stored = await store.schedules()
    configured = {parse_schedule(spec).name: spec for spec in _settings(args).arena.recurring}
    current, _ = await store.listed(await admin.now_ms(), 0)
    document = {
        "stored": stored, "config": configured,
        "arenas": [{"arena": arena, "name": meta.name, "start_at": meta.start_at, "end_at": meta.end_at, "schedule": meta.schedule or None}
                   for arena, meta in current],
    }  # fmt: skip
    lines = [f"stored  {spec}" for spec in stored.values()] + [f"config  {spec}" for spec in configured.values()]
    lines += [f"arena   {arena}  {meta.name}  {_when(meta.start_at)} to {_when(meta.end_at)}" for arena, meta in current]
    _print(args, document, "\n".join(lines) or "no recurring arena, no listed arena to come")
    return EXIT_OK


ACTIONS = {
    "processes": _processes,
    "list": _list,
    "show": _show,
    "close-race": _close_race,
    "kick": _kick,
    "ban": _ban,
    "unban": _unban,
    "bans": _bans,
    "notice": _notice,
    "drain": _drain,
    "audit": _audit,
    "pairs": _pairs,
    "record-key": _record_key,
    "tournament": _tournament,
}
