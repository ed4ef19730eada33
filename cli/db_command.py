"""``flowergarden db``: the PostgreSQL schema, and the import of what Redis kept (docs/STORAGE.md "The archive",
"Player records", docs/OPERATIONS.md)."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli.output import EXIT_OK, CommandError
from server import config
from server.app import ServerConfig
from server.embedded_redis import running_url
from server.store import StoreUnavailable
from server.store import database as db
from server.store.database import SchemaMismatch
from server.store.redis_import import KindProgress, import_into

EPILOG = """\
The database is --database-url, else DATABASE_URL, else --config's database_url, else the embedded PostgreSQL of
a server running on --postgres-data-dir (default var/postgres, from the current folder), else that embedded
PostgreSQL started for the command. Migrations are the SQL files server/store/sql/migrations/NNNN_name.sql,
applied in order, each once (table schema_version); a database newer than this release is refused.
"""

IMPORT_EPILOG = """Moves the accounts, ratings, histories, stats and finished races that an earlier release (or a server without a
database) kept in Redis into PostgreSQL (migrated first), printing its progress per batch. It only reads Redis
(an imported finished race gets the archive's cache TTL, as the archiver leaves it). Idempotent and resumable:
each batch commits with its SCAN cursor, so a run stopped any way resumes after its last batch, and a second run
imports what was added meanwhile (a rating or stats row only replaces one with fewer games or races). Servers
with a database neither read nor write those Redis keys: run it once when moving to a release with a database,
and again after the last server without one stopped. Redis is --redis, else REDIS_URL, else --config's
redis_url, else the embedded Redis of a server running on --data-dir (default var/redis). A single Redis only.
""" + EPILOG


def register(subparsers: Any) -> None:
    """Add ``db migrate`` and ``db import-redis``."""
    parser = subparsers.add_parser(
        "db", help="PostgreSQL: schema migrations, the import of what Redis kept",
        description="PostgreSQL, the lasting records: finished races, accounts, ratings, histories, stats.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    actions = parser.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    migrate = actions.add_parser("migrate", help="apply the schema migrations the database lacks", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    migrate.add_argument("--database-url", metavar="URL", help="the PostgreSQL to migrate (default: see below)")
    migrate.add_argument("--config", type=Path, metavar="FILE", help="the servers' config file (its database_url)")
    migrate.add_argument("--postgres-data-dir", metavar="DIR", help="the embedded PostgreSQL's folder (default var/postgres)")
    migrate.set_defaults(handler=run_migrate)
    move = actions.add_parser("import-redis", help="move the records Redis kept into PostgreSQL (resumable)", epilog=IMPORT_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    move.add_argument("--database-url", metavar="URL", help="the PostgreSQL to import into (default: see below)")
    move.add_argument("--redis", metavar="URL", help="the Redis to read (default: see below)")
    move.add_argument("--config", type=Path, metavar="FILE", help="the servers' config file (its database_url, redis_url)")
    move.add_argument("--data-dir", metavar="DIR", help="the embedded Redis's folder (default var/redis)")
    move.add_argument("--postgres-data-dir", metavar="DIR", help="the embedded PostgreSQL's folder (default var/postgres)")
    move.set_defaults(handler=run_import)


def _settings(args: argparse.Namespace) -> ServerConfig:
    names = ("database_url", "postgres_data_dir", "redis_url", "data_dir")
    given = {"database_url": args.database_url, "postgres_data_dir": args.postgres_data_dir,
             "redis_url": getattr(args, "redis", None), "data_dir": getattr(args, "data_dir", None)}  # fmt: skip
    try:
        return config.effective(args.config, os.environ, {name: given[name] for name in names if given[name]})
    except config.ConfigError as error:
        raise CommandError("bad_config", str(error)) from None


def _with_database(settings: ServerConfig, run: Callable[[str], int]) -> int:
    """``run`` on the database's URL: the given one, the running embedded one, else the embedded one started for it."""
    url = settings.database_url or running_url(Path(settings.embedded_database_dir))
    if url:
        return run(url)
    from cli.serve_command import start_embedded_database  # the embedded one, as `serve` starts it

    embedded = start_embedded_database(Path(settings.embedded_database_dir))
    try:
        return run(embedded.url)
    finally:
        embedded.stop()


def run_migrate(args: argparse.Namespace) -> int:
    """Migrate the database and say what was applied."""
    return _with_database(_settings(args), _migrate)


def run_import(args: argparse.Namespace) -> int:
    """Import what Redis kept into the (migrated) database, printing the progress."""
    settings = _settings(args)
    redis_url = settings.redis_url or running_url(Path(settings.data_dir))
    if not redis_url:
        raise CommandError(
            "no_redis", "no Redis to import from: give --redis (or REDIS_URL), or start the server whose embedded Redis it is"
        )

    def progress(state: KindProgress) -> None:
        print(f"{state.kind}: {state.imported} imported by this run, {state.total} in all" + (" (done)" if state.finished else ""), flush=True)

    def imported(url: str) -> int:
        try:
            asyncio.run(import_into(url, redis_url, progress, cache_ttl_ms=settings.archive_cache_seconds * 1000))
        except SchemaMismatch as error:
            raise CommandError("schema_mismatch", str(error)) from None
        except StoreUnavailable as error:
            raise CommandError("unavailable", f"{error} (run it again: it resumes after its last batch)") from None
        print("imported: servers with a database read these records from PostgreSQL", flush=True)
        return EXIT_OK

    return _with_database(settings, imported)


def _migrate(url: str) -> int:
    async def migrate() -> list[db.Migration]:
        pool = await db.connect(url)
        try:
            return await db.migrate(pool)
        finally:
            await pool.close()

    try:
        applied = asyncio.run(migrate())
    except SchemaMismatch as error:
        raise CommandError("schema_mismatch", str(error)) from None
    except StoreUnavailable as error:
        raise CommandError("unavailable", str(error)) from None
    for migration in applied:
        print(f"applied {migration.version:04d}_{migration.name}")
    print(f"schema at version {db.LATEST}" + ("" if applied else " (nothing to apply)"))
    return EXIT_OK
