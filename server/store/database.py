"""PostgreSQL, the system of record for finished races: the schema's migrations and the archive (docs/STORAGE.md
"The archive"). The only code that knows SQL; asyncpg is the driver (docs/decisions/0001).

Migrations are the plain SQL files ``server/store/sql/migrations/NNNN_name.sql``, applied in order, each in its own
transaction with its row in ``schema_version``, under an advisory lock (two processes migrating at once apply each
file once). A database whose schema is newer than this code knows is refused: this code might misread it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

import asyncpg
import msgpack

from server.store.errors import StoreError, StoreUnavailable

MIGRATIONS = Path(__file__).resolve().parent / "sql" / "migrations"
MIGRATION_LOCK = 0x6667_7261_6365  # pg_advisory_xact_lock key: 'fgrace'
_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")


class SchemaMismatch(StoreError):
    """The database's schema is not the one this code runs on: the message says what to do."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema change: its version number, name and SQL."""

    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """The schema changes this code knows, in order (versions 1, 2, … without a gap)."""
    found = []
    for path in sorted(MIGRATIONS.glob("*.sql")):
        match = _NAME.match(path.name)
        if match is None:
            raise SchemaMismatch(f"{path.name}: a migration is named NNNN_name.sql")
        found.append(Migration(int(match.group(1)), match.group(2), path.read_text()))
    if [migration.version for migration in found] != list(range(1, len(found) + 1)):
        raise SchemaMismatch("the migrations are not numbered 1, 2, … without a gap")
    return found


LATEST = len(migrations())
"""The schema version this code is written for."""


async def connect(url: str, *, min_size: int = 1, max_size: int = 4) -> asyncpg.Pool:
    """A connection pool to ``url``; StoreUnavailable when the database cannot be reached."""
    try:
        pool: asyncpg.Pool = await asyncpg.create_pool(url, min_size=min_size, max_size=max_size, command_timeout=30)
    except (OSError, asyncpg.PostgresError, TimeoutError) as error:
        raise StoreUnavailable(f"PostgreSQL at {url}: {error}") from error
    return pool


async def schema_version(connection: asyncpg.Connection | asyncpg.pool.PoolConnectionProxy) -> int:
    """The version of the schema in the database (0: none yet)."""
    exists = await connection.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    version = await connection.fetchval("SELECT coalesce(max(version), 0) FROM schema_version")
    return int(version)


def _refuse_newer(version: int) -> None:
    if version > LATEST:
        raise SchemaMismatch(
            f"the database's schema is version {version}, newer than this server knows ({LATEST}): "
            "run a release that knows it (a server never runs on a schema it might misread)"
        )


async def migrate(pool: asyncpg.Pool) -> list[Migration]:
    """Apply the migrations the database lacks, in order; the ones applied. SchemaMismatch on a newer schema."""
    applied = []
    async with sql_errors(), pool.acquire() as connection:
        for migration in migrations():
            async with connection.transaction():
                await connection.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
                await connection.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, name text NOT NULL, "
                    "applied_at timestamptz NOT NULL DEFAULT now())"
                )
                version = await schema_version(connection)
                _refuse_newer(version)
                if migration.version <= version:
                    continue
                await connection.execute(migration.sql)
                await connection.execute("INSERT INTO schema_version (version, name) VALUES ($1, $2)", migration.version, migration.name)
                applied.append(migration)
    return applied


async def check_schema(pool: asyncpg.Pool) -> None:
    """Refuse (SchemaMismatch) a database whose schema is not :data:`LATEST`, saying what to do."""
    async with sql_errors(), pool.acquire() as connection:
        version = await schema_version(connection)
    _refuse_newer(version)
    if version < LATEST:
        raise SchemaMismatch(
            f"the database's schema is version {version}, this server needs {LATEST}: "
            "run `flowergarden db migrate` (or start the server with --migrate)"
        )


@asynccontextmanager
async def sql_errors() -> AsyncIterator[None]:
    """asyncpg's and the socket's failures as the store's: StoreUnavailable (unreachable) or StoreError."""
    try:
        yield
    except (OSError, TimeoutError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError) as error:
        raise StoreUnavailable(f"PostgreSQL: {error}") from error
    except asyncpg.PostgresError as error:
        if isinstance(error, asyncpg.exceptions.CannotConnectNowError | asyncpg.exceptions.AdminShutdownError):
            raise StoreUnavailable(f"PostgreSQL: {error}") from error
        raise StoreError(f"PostgreSQL: {error}") from error


# --- the archive of finished races ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArchivedRace:
    """A finished race as Redis held it: its state hash, both players' action lists, its event stream
    ((sequence number, the stored MessagePack map) per event). The store reads it as it reads Redis."""

    race_id: str
    state: dict[str, str]
    moves: tuple[tuple[str, ...], tuple[str, ...]]
    events: tuple[tuple[int, bytes], ...]

    @classmethod
    def unpack(cls, race_id: str, record: bytes) -> ArchivedRace:
        """The race of a ``record`` column. Its strings may be MessagePack str or bin (``archive_read.lua`` packs
        every Lua string as str, events included), so all are read as bytes and the text ones decoded."""
        body = msgpack.unpackb(record, raw=True)
        moves = body[b"moves"]
        return cls(
            race_id,
            {key.decode(): value.decode() for key, value in body[b"state"].items()},
            (tuple(move.decode() for move in moves[0]), tuple(move.decode() for move in moves[1])),
            tuple((int(seq), bytes(event)) for seq, event in body[b"events"]),
        )


@dataclass(frozen=True, slots=True)
class PackedRace:
    """A finished race ready for its ``finished_races`` row, as ``archive_read.lua`` hands it over: the columns the
    queries use and the packed ``record``, never unpacked on the way (:meth:`ArchivedRace.unpack` reads it)."""

    race_id: str
    finished_at: datetime
    profile: str
    rated: bool
    record: bytes

    def row(self) -> tuple[str, datetime, str, bool, bytes]:
        """The row's columns in the order of :data:`ROW_COLUMNS`."""
        return self.race_id, self.finished_at, self.profile, self.rated, self.record


ROW_COLUMNS = ("race_id", "finished_at", "profile", "rated", "record")
"""The ``finished_races`` columns the archive writes (``archived_at`` is the database's clock)."""


class RaceArchive(Protocol):
    """Where finished races go for good: PostgreSQL (:class:`PostgresRaceArchive`) or, in tests of the services
    alone, memory (:class:`MemoryRaceArchive`). Writing a race twice keeps the first (idempotent by race id)."""

    async def put_many(self, races: Sequence[PackedRace]) -> int:
        """Store the races not stored yet, in one batch; how many were new. StoreUnavailable when unreachable."""

    async def get(self, race_id: str) -> ArchivedRace | None:
        """The archived race, or None."""

    async def count(self) -> int:
        """How many races are archived."""

    async def archived(self, race_ids: Sequence[str]) -> set[str]:
        """The races among ``race_ids`` that are archived."""


class PostgresRaceArchive:
    """The archive in PostgreSQL: a batch is COPYed into a temporary table, then inserted where its id is new."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def put_many(self, races: Sequence[PackedRace]) -> int:
        """See :meth:`RaceArchive.put_many`."""
        if not races:
            return 0
        async with sql_errors(), self.pool.acquire() as connection, connection.transaction():
            return await self.put_on(connection, races)

    @staticmethod
    async def put_on(connection: asyncpg.Connection | asyncpg.pool.PoolConnectionProxy, races: Sequence[PackedRace]) -> int:
        """:meth:`put_many` in the caller's transaction on ``connection`` (``flowergarden db import-redis``'s)."""
        await connection.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS incoming (LIKE finished_races INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        )
        await connection.copy_records_to_table("incoming", records=[race.row() for race in races], columns=ROW_COLUMNS)
        status = await connection.execute(
            "INSERT INTO finished_races (race_id, finished_at, profile, rated, record) "
            "SELECT DISTINCT ON (race_id) race_id, finished_at, profile, rated, record FROM incoming "
            "ON CONFLICT (race_id) DO NOTHING"
        )
        return int(status.split()[-1])

    async def get(self, race_id: str) -> ArchivedRace | None:
        """See :meth:`RaceArchive.get`."""
        async with sql_errors(), self.pool.acquire() as connection:
            record = await connection.fetchval("SELECT record FROM finished_races WHERE race_id = $1", race_id)
        return None if record is None else ArchivedRace.unpack(race_id, record)

    async def count(self) -> int:
        """See :meth:`RaceArchive.count`."""
        async with sql_errors(), self.pool.acquire() as connection:
            return int(await connection.fetchval("SELECT count(*) FROM finished_races"))

    async def archived(self, race_ids: Sequence[str]) -> set[str]:
        """See :meth:`RaceArchive.archived`."""
        async with sql_errors(), self.pool.acquire() as connection:
            rows = await connection.fetch("SELECT race_id FROM finished_races WHERE race_id = ANY($1)", list(race_ids))
        return {row["race_id"] for row in rows}


class MemoryRaceArchive:
    """The archive in a dict: the same promises as PostgreSQL's, for tests of what uses an archive."""

    def __init__(self) -> None:
        self.races: dict[str, PackedRace] = {}

    async def put_many(self, races: Sequence[PackedRace]) -> int:
        """See :meth:`RaceArchive.put_many`."""
        new = 0
        for race in races:
            if race.race_id not in self.races:
                self.races[race.race_id] = race
                new += 1
        return new

    async def get(self, race_id: str) -> ArchivedRace | None:
        """See :meth:`RaceArchive.get`."""
        race = self.races.get(race_id)
        return None if race is None else ArchivedRace.unpack(race_id, race.record)

    async def count(self) -> int:
        """See :meth:`RaceArchive.count`."""
        return len(self.races)

    async def archived(self, race_ids: Sequence[str]) -> set[str]:
        """See :meth:`RaceArchive.archived`."""
        return {race_id for race_id in race_ids if race_id in self.races}
