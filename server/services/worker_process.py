"""A solver worker: a separate low-priority Python program that answers one request line with one answer line.

The seed pool's prover and the post-race analyst are such programs: the solver is pure Python, and in a thread it
would hold the GIL against the event loop; a separate program also never re-imports the embedding program's main
module and can be stopped at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def answer_lines(answer: Callable[[str], Any], *, niceness: int) -> int:
    """A worker program's main loop: at low priority (``os.nice(niceness)``), one JSON answer line for each request
    line until the end of input. A server that went away (killed: its end of the pipe closed) ends the worker
    quietly, with no ``BrokenPipeError`` traceback, then or at exit."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(niceness)
    try:
        for line in sys.stdin:
            print(json.dumps(answer(line)), flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush must not fail again
    return 0


class WorkerFailed(Exception):
    """The worker process died or answered nonsense; it is restarted for the next request."""


class WorkerProcess:
    """One ``python -m <module>`` worker, started on first use; one request at a time (the caller's to ensure).

    A request cancelled while it waits for its answer stops the worker, so no answer ever goes to the wrong request."""

    def __init__(self, module: str) -> None:
        self.module = module
        self._process: asyncio.subprocess.Process | None = None
        self._abandoned: list[asyncio.subprocess.Process] = []
        """Workers killed mid-request, not waited for then: :meth:`close` reaps them, so that no pipe of theirs is
        left for the garbage collector to close after the event loop has gone."""

    async def ask(self, request: str) -> bytes:
        """Send one request line and return the answer line (WorkerFailed if the worker failed)."""
        process = await self._running()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(request.encode() + b"\n")
            await process.stdin.drain()
            answer = await process.stdout.readline()
        except (OSError, ValueError) as error:
            await self.close()
            raise WorkerFailed(f"{self.module}: {error}") from None
        except asyncio.CancelledError:
            self._abandon()  # its answer, still to come, would be read as the answer to the next request
            raise
        if not answer:
            await self.close()
            raise WorkerFailed(f"{self.module} exited")
        return answer

    async def fail(self, message: str) -> WorkerFailed:
        """Stop a worker that answered nonsense; the error to raise."""
        await self.close()
        return WorkerFailed(f"{self.module}: {message}")

    async def close(self) -> None:
        """Stop the worker (at once: a request in progress is abandoned), and reap the workers abandoned before."""
        process, self._process = self._process, None
        stopping, self._abandoned = [*self._abandoned, *([process] if process is not None else [])], []
        for worker in stopping:
            if worker.stdin is not None:
                worker.stdin.close()  # its pipe is ours to close: the worker's exit does not
            if worker.returncode is None:
                worker.kill()
            await worker.wait()

    def _abandon(self) -> None:
        """Kill the worker without waiting (asyncio reaps it); the next request starts a new one."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.kill()
            self._abandoned.append(process)

    async def _running(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            source_root = str(Path(__file__).resolve().parents[2])  # the worker imports this checkout's engine
            path = os.pathsep.join(filter(None, [source_root, os.environ.get("PYTHONPATH")]))
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                self.module,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": path},
                limit=1 << 22,
            )
        return self._process
