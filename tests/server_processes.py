"""Real ``flowergarden serve`` processes on one Redis, for the multi-process tests (this checkout's code)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import resource
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from client import RaceClient
from shared.protocol import RaceResult

ROOT = Path(__file__).resolve().parent.parent


def flowergarden(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    """``python -m cli ARGS`` with this checkout's packages; stdin/stdout piped unless ``kwargs`` say otherwise
    (``env``: variables added to the environment)."""
    extra_environment: dict[str, str] = kwargs.pop("env", {})  # type: ignore[assignment]
    options: dict[str, object] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, **kwargs}
    options.setdefault("cwd", ROOT)
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **extra_environment}
    return subprocess.Popen([sys.executable, "-m", "cli", *args], env=environment, text=True, **options)  # type: ignore[call-overload, no-any-return]


@contextlib.asynccontextmanager
async def cli_player(host: RaceClient, *args: str) -> AsyncIterator[subprocess.Popen[str]]:
    """A ``flowergarden ARGS`` process playing against ``host``; on leaving, it is killed if still running and
    ``host`` is closed."""
    process = flowergarden(*args)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        await host.close()


async def read_until(process: subprocess.Popen[str], text: str, timeout: float = 10) -> str:
    """What ``process`` printed up to and including the first line containing ``text`` (fails after ``timeout``)."""
    assert process.stdout is not None
    stdout = process.stdout

    def read() -> str:
        lines: list[str] = []
        while not lines or text not in lines[-1]:
            line = stdout.readline()
            assert line, f"the process ended without printing {text!r}: {''.join(lines)}"
            lines.append(line)
        return "".join(lines)

    return await asyncio.wait_for(asyncio.to_thread(read), timeout)


async def resign_and_read(host: RaceClient, race_id: str, process: subprocess.Popen[str]) -> tuple[RaceResult, str]:
    """``host`` resigns the race; its result and everything the CLI player printed until it ended."""
    await host.resign(race_id)
    result = await host.wait_for(RaceResult, timeout=10)
    output, _ = await asyncio.to_thread(process.communicate, timeout=10)
    return result, output


class ClusterUrl(str):
    """The comma-joined node URLs of a test Redis Cluster: a ``str`` so that tests written for one Redis take it, and
    the helpers that start servers pass it as ``--redis-cluster`` (``ServerConfig.redis_cluster_url``)."""


def store_flags(redis_url: str) -> tuple[str, str]:
    """The ``flowergarden serve`` flag and value that select this store."""
    return ("--redis-cluster" if isinstance(redis_url, ClusterUrl) else "--redis", redis_url)


LISTENING = re.compile(r"serving races on ws://[^:\s]+:(\d+)")
"""The line ``flowergarden serve`` prints once it listens."""

FAST_FLAGS = (
    "--countdown", "0.05", "--spectator-delay", "0", "--min-spectator-delay", "0", "--seed-pool-target", "0", "--no-analysis",
    "--log-level", "WARNING", "--max-new-sessions-per-address", "0", "--max-open-races-per-address", "0",
)  # fmt: skip
"""Short countdown, no spectator delay, no solver filling the seed pool or analysing races by default, so the tests
stay fast; every client of the suite comes from 127.0.0.1, so the per-address session and open-race budgets are off
(tests of those limits set their own)."""


class ServerProcess:
    """One server process; its output goes to a file (read it with :meth:`output`)."""

    def __init__(self, redis_url: str, log_path: Path, flags: Sequence[str] = (), *, open_files: int | None = None) -> None:
        """``open_files``: the process's descriptor limit, soft and hard (it cannot raise it past that)."""
        self.port = 0  # the process picks a free port and prints it (:meth:`ready` reads it)
        self.log_path = log_path
        self._log = log_path.open("w")
        self.process = flowergarden(
            "serve", *store_flags(redis_url), "--port", "0", *FAST_FLAGS, *flags, stdin=subprocess.DEVNULL, stdout=self._log,
            preexec_fn=None if open_files is None else functools.partial(resource.setrlimit, resource.RLIMIT_NOFILE, (open_files, open_files)),
        )

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def ready(self, timeout: float = 20.0) -> None:
        """Wait until the process says where it listens and its health check answers 200."""
        async with asyncio.timeout(timeout):
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server process exited early:\n{self.output()}")
                listening = LISTENING.search(self.output())
                if listening is not None:
                    self.port = int(listening.group(1))
                    try:
                        if await asyncio.to_thread(self._healthy):
                            return
                    except OSError:
                        pass
                await asyncio.sleep(0.05)

    def _healthy(self) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1) as response:
            return bool(response.status == 200)

    def signal(self, number: signal.Signals) -> None:
        self.process.send_signal(number)

    async def exited(self, timeout: float = 20.0) -> int:
        """Wait for the process to end; its exit code."""
        return await asyncio.to_thread(self.process.wait, timeout)

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def stop(self) -> None:
        """Kill the process if it still runs (test cleanup)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self._log.close()


async def start_servers(redis_url: str, folder: Path, count: int, flags: Sequence[str] = (), *, first: int = 0) -> list[ServerProcess]:
    """``count`` server processes on ``redis_url``, all ready (logs ``server-<n>.log`` in ``folder`` from ``first``)."""
    servers = [ServerProcess(redis_url, folder / f"server-{first + index}.log", flags) for index in range(count)]
    try:
        await asyncio.gather(*(server.ready() for server in servers))
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers
