"""The solver worker's pipe: one answer line per request line, and a cancelled request never hands its answer to the
next one (a ``solve_from`` answer must belong to the position it was asked for)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from server.services.worker_process import WorkerProcess


async def test_a_cancelled_request_never_hands_its_answer_to_the_next_one(monkeypatch: pytest.MonkeyPatch) -> None:
    tests = str(Path(__file__).resolve().parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")])))
    worker = WorkerProcess("slow_echo_worker")
    try:
        assert await worker.ask("first") == b"first\n"
        asking = asyncio.create_task(worker.ask("abandoned"))
        await asyncio.sleep(0.1)  # the worker has the line (or is about to read it) and answers in 0.5 s
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        assert await worker.ask("next") == b"next\n"
    finally:
        await worker.close()
