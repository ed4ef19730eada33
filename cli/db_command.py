"""``flowergarden db``: the PostgreSQL archive's schema (docs/STORAGE.md "The archive", docs/OPERATIONS.md)."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

from cli.output import EXIT_OK, CommandError
from server import config
from server.embedded_redis import running_url
from server.store import StoreUnavailable
from server.store import database as db
from server.store.database import SchemaMismatch

EPILOG = """\
The database is --database-url, else DATABASE_URL, else --config's database_url, else the embedded PostgreSQL of
a server running on --postgres-data-dir (default var/postgres, from the current folder), else that embedded
PostgreSQL started for the command. Migrations are the SQL files server/store/sql/migrations/NNNN_name.sql,
applied in order, each once (table schema_version); a database newer than this release is refused.
"""


def register(subparsers: Any) -> None:
    """Add ``db migrate``."""
    parser = subparsers.add_parser(
        "db", help="the PostgreSQL archive: schema migrations", description="The PostgreSQL archive of finished races.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    actions = parser.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    migrate = actions.add_parser("migrate", help="apply the schema migrations the database lacks", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    migrate.add_argument("--database-url", metavar="URL", help="the PostgreSQL to migrate (default: see below)")
    migrate.add_argument("--config", type=Path, metavar="FILE", help="the servers' config file (its database_url)")
    migrate.add_argument("--postgres-data-dir", metavar="DIR", help="the embedded PostgreSQL's folder (default var/postgres)")
    migrate.set_defaults(handler=run_migrate)


def run_migrate(args: argparse.Namespace) -> int:
    """Migrate the database and say what was applied."""
    flags = {key: value for key, value in (("database_url", args.database_url), ("postgres_data_dir", args.postgres_data_dir)) if value}
    try:
        settings = config.effective(args.config, os.environ, flags)
    except config.ConfigError as error:
        raise CommandError("bad_config", str(error)) from None
    url = settings.database_url or running_url(Path(settings.embedded_database_dir))
    if url:
        return _migrate(url)
    from cli.serve_command import start_embedded_database  # the embedded one, as `serve` starts it

    embedded = start_embedded_database(Path(settings.embedded_database_dir))
    try:
        return _migrate(embedded.url)
    finally:
        embedded.stop()


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
