"""A real PostgreSQL started by this process: the default database of ``flowergarden serve`` and the tests' one.

It listens on a unix socket only (no TCP), in a folder of mode 0700 that only the server's user can enter, with
``trust`` authentication for that socket: whoever can open the socket is the server's own user (or root).

The binaries are pgserver's (a pip dependency that bundles PostgreSQL 16) when that package is installed, else
Debian's ``postgresql`` (``/usr/lib/postgresql/N/bin``, newest first) or ``postgres`` on PATH. A data folder keeps
the major version it was made with (``PG_VERSION``); a binary of another major version is never run on it.
PostgreSQL refuses to run as root: started by root, it runs as the system user ``postgres`` when that exists (Debian's
package makes it), else as a system user ``flowergarden-db`` made for it (``useradd``).
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from server.embedded_redis import FolderLock, log_tail, stop_orphan

HOW_TO_GET_POSTGRES = """\
No PostgreSQL server was found. Any one of these works:
  * pip install pgserver             (bundles PostgreSQL 16; Linux and macOS; the project's default)
  * apt-get install postgresql       (Debian/Ubuntu; brew install postgresql on macOS)
  * run your own PostgreSQL and pass --database-url postgresql://USER@HOST/DB (or set DATABASE_URL)"""

SOCKET_PORT = 5432
"""The port number in the socket's file name (``.s.PGSQL.5432``); nothing listens on TCP."""
RUN_AS_WHEN_ROOT = ("postgres", "flowergarden-db")
"""The system users PostgreSQL runs as when root starts it: the first that exists, else the last, made."""


class PostgresUnavailable(Exception):
    """No PostgreSQL binaries, or the server did not start; the message says what to do."""


class DatabaseFolderInUse(PostgresUnavailable):
    """Another server runs on the database folder (it holds the folder's lock)."""


@dataclass(frozen=True, slots=True)
class PostgresBinaries:
    """One installation's ``bin`` folder and its major version."""

    folder: Path
    major: int
    origin: str
    """Where it comes from, as ``--help`` and the start message say it: 'pgserver' or the folder."""

    def tool(self, name: str) -> str:
        """Path of one of its programs (``initdb``, ``postgres``, ``pg_isready``)."""
        return str(self.folder / name)


def _major_of(folder: Path) -> int | None:
    try:
        output = subprocess.run([str(folder / "postgres"), "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return None
    match = re.search(r"\(PostgreSQL\) (\d+)", output)
    return int(match.group(1)) if match else None


def installed_binaries() -> list[PostgresBinaries]:
    """Every PostgreSQL installation found, in the order of preference: pgserver's, Debian's newest first, PATH's."""
    candidates: list[tuple[Path, str]] = []
    spec = importlib.util.find_spec("pgserver")  # found, not imported: importing it sets up its own server machinery
    if spec is not None and spec.origin is not None:
        candidates.append((Path(spec.origin).parent / "pginstall" / "bin", "pgserver"))
    debian = Path("/usr/lib/postgresql")
    if debian.is_dir():
        versions = sorted((p for p in debian.iterdir() if p.name.isdigit()), key=lambda p: int(p.name), reverse=True)
        candidates += [(p / "bin", str(p / "bin")) for p in versions]
    on_path = shutil.which("postgres")
    if on_path is not None:
        folder = Path(on_path).resolve().parent
        candidates.append((folder, str(folder)))
    found: list[PostgresBinaries] = []
    for folder, origin in candidates:
        major = _major_of(folder) if (folder / "initdb").is_file() else None
        if major is not None and all(b.folder != folder.resolve() and b.folder != folder for b in found):
            found.append(PostgresBinaries(folder, major, origin))
    return found


def choose_binaries(data_dir: Path) -> PostgresBinaries:
    """The installation to run on ``data_dir``: the first preferred one of the folder's major version (when it has
    one), else the first preferred one; PostgresUnavailable when none fits."""
    found = installed_binaries()
    if not found:
        raise PostgresUnavailable(HOW_TO_GET_POSTGRES)
    version_file = data_dir / "data" / "PG_VERSION"
    if not version_file.exists():
        return found[0]
    major = int(version_file.read_text().strip())
    for binaries in found:
        if binaries.major == major:
            return binaries
    have = ", ".join(f"{b.major} ({b.origin})" for b in found)
    raise PostgresUnavailable(
        f"the database folder {data_dir} was made by PostgreSQL {major}; only {have} is installed here. "
        f"Install PostgreSQL {major}, or dump it with that version's pg_dump and restore it into a new folder"
    )


def _run_as() -> pwd.struct_passwd | None:
    """The user PostgreSQL runs as: None (this process's own) unless this process is root."""
    if os.geteuid() != 0:
        return None
    for name in RUN_AS_WHEN_ROOT:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    name = RUN_AS_WHEN_ROOT[-1]
    made = subprocess.run(
        ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if made.returncode != 0:
        raise PostgresUnavailable(f"PostgreSQL refuses to run as root, and the user {name} could not be made: {made.stderr}")
    return pwd.getpwnam(name)


def open_path_to(folder: Path, user: pwd.struct_passwd) -> list[Path]:
    """Let ``user`` reach ``folder``: each parent folder it could not pass through gains search permission for others
    (``o+x``: pass through, never list). Returns the folders changed (what root's 0700 temporary folders need)."""
    changed = []
    for parent in reversed(folder.resolve().parents):
        mode = parent.stat()
        passable = mode.st_mode & 0o001 or (mode.st_uid == user.pw_uid and mode.st_mode & 0o100)
        if not passable:
            parent.chmod(mode.st_mode | 0o001)
            changed.append(parent)
    return changed


class EmbeddedPostgres:
    """Starts ``postgres`` on a unix socket in ``data_dir`` (made mode 0700) and stops it (SIGINT: a fast shutdown).

    Layout: ``data_dir/data`` the cluster (initdb on first start), ``data_dir/.s.PGSQL.5432`` the socket,
    ``data_dir/postgres.log`` its log, ``data_dir/flowergarden.lock`` (mode 0600) held while it runs.
    """

    def __init__(self, data_dir: Path, *, binaries: PostgresBinaries | None = None, fsync: bool = True) -> None:
        """``fsync=False`` trades durability against a machine crash for speed (the tests' throwaway databases)."""
        self.data_dir = data_dir
        self.binaries = binaries
        self.fsync = fsync
        self.process: subprocess.Popen[bytes] | None = None
        self.opened: list[Path] = []
        """Parent folders given ``o+x`` at start so that PostgreSQL's user reaches the data (:func:`open_path_to`)."""
        self._lock = FolderLock(data_dir / "flowergarden.lock")
        self._log: IO[bytes] | None = None

    @property
    def socket_dir(self) -> Path:
        """The folder of the server's unix socket (the data folder itself: mode 0700)."""
        return self.data_dir.resolve()

    @property
    def url(self) -> str:
        """The libpq URL of the running server (database ``postgres`` as user ``postgres``, over the socket)."""
        return f"postgresql://postgres@/postgres?host={self.socket_dir}&port={SOCKET_PORT}"

    def start(self, timeout: float = 30.0) -> None:
        """Make the cluster if the folder has none, start the server and wait until it accepts connections."""
        binaries = self.binaries or choose_binaries(self.data_dir)
        self.binaries = binaries
        user = _run_as()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)
        if user is not None:
            os.chown(self.data_dir, user.pw_uid, user.pw_gid)
            self.opened = open_path_to(self.data_dir, user)
        if not self._lock.hold(self.url):
            raise DatabaseFolderInUse(f"another process uses the database folder {self.data_dir}; stop it, or pass --database-url")
        try:
            self._stop_orphan()
            if not (self.data_dir / "data" / "PG_VERSION").exists():
                self._initdb(binaries, user)
            self._launch(binaries, user, timeout)
        except BaseException:
            self.stop()
            raise

    def _as_user(self, user: pwd.struct_passwd | None) -> dict[str, object]:
        return {} if user is None else {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    def _initdb(self, binaries: PostgresBinaries, user: pwd.struct_passwd | None) -> None:
        data = self.data_dir / "data"
        shutil.rmtree(data, ignore_errors=True)  # a half-made cluster from an interrupted first start
        made = subprocess.run(
            [binaries.tool("initdb"), "-D", str(data.resolve()), "-U", "postgres", "--auth-local=trust", "--auth-host=reject",
             "--encoding=UTF8", "--locale=C", "--no-instructions"],
            capture_output=True, text=True, check=False, **self._as_user(user),  # type: ignore[call-overload]
        )  # fmt: skip
        if made.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {made.stderr or made.stdout}")

    def _launch(self, binaries: PostgresBinaries, user: pwd.struct_passwd | None, timeout: float) -> None:
        if self._log is None:
            self._log = open(self.data_dir / "postgres.log", "ab")  # noqa: SIM115 - written by the server while it runs
        command = [
            binaries.tool("postgres"), "-D", str((self.data_dir / "data").resolve()), "-k", str(self.socket_dir),
            "-p", str(SOCKET_PORT), "-c", "listen_addresses=", "-c", "unix_socket_permissions=0700",
            "-c", f"fsync={'on' if self.fsync else 'off'}", "-c", "logging_collector=off",
        ]  # fmt: skip
        # A session of its own: Ctrl-C in the terminal must not stop PostgreSQL before the server has shut down.
        self.process = subprocess.Popen(  # type: ignore[call-overload]
            command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, start_new_session=True, **self._as_user(user)
        )
        deadline = time.monotonic() + timeout
        ready = [binaries.tool("pg_isready"), "-q", "-h", str(self.socket_dir), "-p", str(SOCKET_PORT), "-U", "postgres"]
        while subprocess.run(ready, check=False).returncode != 0:
            assert self.process is not None
            if self.process.poll() is not None:
                raise PostgresUnavailable(f"postgres exited at start: {self._log_tail()}")
            if time.monotonic() > deadline:
                raise PostgresUnavailable(f"postgres did not accept connections within {timeout} s: {self._log_tail()}")
            time.sleep(0.05)

    def _stop_orphan(self) -> None:
        """Stop a postgres left running on this folder by a server that died without stopping it (holding the folder
        lock proves its owner is gone): a fast shutdown (SIGINT), waited for."""
        try:
            pid = int((self.data_dir / "data" / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        stop_orphan(pid, b"postgres", signal.SIGINT, 30)

    def _log_tail(self) -> str:
        return log_tail(self.data_dir / "postgres.log")

    def kill(self) -> None:
        """SIGKILL the postmaster, as a crash would (the tests' outage); :meth:`restart` brings it back."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()

    def restart(self, timeout: float = 60.0) -> None:
        """Start the server again on the same folder after :meth:`kill` (crash recovery replays the WAL)."""
        assert self.binaries is not None
        deadline = time.monotonic() + timeout
        while True:  # the killed postmaster's backends may hold its shared memory for a moment
            try:
                self._launch(self.binaries, _run_as(), timeout)
                return
            except PostgresUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        """Stop the server (a fast shutdown, waited for) and release the folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        self._lock.release()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()
