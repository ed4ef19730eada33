"""The solver worker's pipe: one answer line per request line, and a cancelled request never hands its answer to the
next one (a ``solve_from`` answer must belong to the position it was asked for)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
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


SOLVE_FROM = b'{"job": "solve_from", "seed": "7", "profile": "classic", "undo": false, "redeal_once": false, "actions": [], "seconds": 0.05}\n'


@pytest.mark.parametrize(("module", "request_line"), [("server.services.seed_prover", b"classic 7 0.05\n"), ("server.services.race_analyst", SOLVE_FROM)])
def test_a_worker_whose_server_went_away_ends_quietly(module: str, request_line: bytes) -> None:
    """Campaign: after its server was killed (-9) the analysis worker wrote a BrokenPipeError traceback (its answer,
    then the flush at exit, went to a closed pipe). The server's end of the answer pipe is closed here before the
    worker answers."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the server is gone: nobody reads the answers
    try:
        worker = subprocess.run(
            [sys.executable, "-m", module], input=request_line, stdout=write_end,
            stderr=subprocess.PIPE, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert b"Traceback" not in worker.stderr and b"BrokenPipe" not in worker.stderr, worker.stderr.decode()
    assert worker.returncode == 0
