"""The embedded database: one PostgreSQL per data folder, on a private unix socket, data kept across restarts."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import asyncpg
import pytest

from server.embedded_postgres import DatabaseFolderInUse, EmbeddedPostgres, PostgresUnavailable, installed_binaries
from server.embedded_redis import running_url

pytestmark = pytest.mark.postgres


async def query(url: str, sql: str) -> object:
    """The first value of ``sql``'s first row, on a connection of its own."""
    connection = await asyncpg.connect(url)
    try:
        return await connection.fetchval(sql)
    finally:
        await connection.close()


def test_rows_written_before_a_stop_are_there_after_a_restart(postgres_folder: Path) -> None:
    with EmbeddedPostgres(postgres_folder, fsync=False) as first:
        asyncio.run(query(first.url, "CREATE TABLE kept AS SELECT 'yes'::text AS value"))
    with EmbeddedPostgres(postgres_folder, fsync=False) as second:
        assert asyncio.run(query(second.url, "SELECT value FROM kept")) == "yes"


def test_the_database_listens_on_a_private_unix_socket_only(postgres_folder: Path) -> None:
    with EmbeddedPostgres(postgres_folder, fsync=False) as server:
        assert asyncio.run(query(server.url, "SHOW listen_addresses")) == ""
        folder = postgres_folder.stat()
        assert stat.S_IMODE(folder.st_mode) == 0o700
        assert stat.S_IMODE((postgres_folder / "flowergarden.lock").stat().st_mode) == 0o600
        assert stat.S_IMODE((postgres_folder / ".s.PGSQL.5432").stat().st_mode) & 0o077 == 0


def test_a_second_server_on_the_same_folder_is_refused_and_tools_find_the_first(postgres_folder: Path) -> None:
    with EmbeddedPostgres(postgres_folder, fsync=False) as server:
        with pytest.raises(DatabaseFolderInUse, match="another process uses the database folder"):
            EmbeddedPostgres(postgres_folder, fsync=False).start()
        assert running_url(postgres_folder) == server.url
    assert running_url(postgres_folder) is None


def test_a_postgres_orphaned_by_a_dead_server_is_stopped_before_a_new_one_starts(postgres_folder: Path) -> None:
    orphaned = EmbeddedPostgres(postgres_folder, fsync=False)
    orphaned.start()
    orphan_process = orphaned.process
    assert orphan_process is not None
    orphaned._lock.release()  # what the death of the owning server does: the lock goes, postgres stays
    try:
        with EmbeddedPostgres(postgres_folder, fsync=False) as successor:
            assert orphan_process.wait(timeout=30) is not None
            assert asyncio.run(query(successor.url, "SELECT 1")) == 1
    finally:
        if orphan_process.poll() is None:
            orphan_process.kill()


def test_a_killed_postgres_restarts_on_its_folder_with_its_committed_rows(postgres_folder: Path) -> None:
    with EmbeddedPostgres(postgres_folder, fsync=False) as server:
        asyncio.run(query(server.url, "CREATE TABLE kept AS SELECT 'yes'::text AS value"))
        server.kill()
        server.restart()
        assert asyncio.run(query(server.url, "SELECT value FROM kept")) == "yes"


def test_a_folder_made_by_another_major_version_is_refused_with_what_to_do(postgres_folder: Path) -> None:
    (postgres_folder / "data").mkdir(parents=True)
    (postgres_folder / "data" / "PG_VERSION").write_text("9\n")
    with pytest.raises(PostgresUnavailable, match="made by PostgreSQL 9.*pg_dump"):
        EmbeddedPostgres(postgres_folder).start()


def test_the_preferred_binaries_are_found_here() -> None:
    """pgserver's (a dependency of the project) first; Debian's where installed."""
    found = installed_binaries()
    assert found and found[0].origin == "pgserver"
