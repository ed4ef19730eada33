"""Lines typed on stdin for the line-mode commands, read so that the process can always end at once.

Reading stdin from an executor thread (``asyncio.to_thread(sys.stdin.readline)``)
kept the process alive after a race ended until Enter was pressed, and that line was
swallowed: ``asyncio.run`` waits for executor threads. Here a daemon thread reads the
raw file descriptor (no Python buffer lock, so interpreter shutdown never waits for it)
and hands each line to the event loop; the process ends whenever the command is done.
:func:`discard_typeahead` then drops what was typed but not read, so nothing typed
for the race reaches the shell.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import termios
import threading


class StdinLines:
    """The lines of stdin as an async iterator; iteration ends at end of input (Ctrl-D on a terminal)."""

    def __init__(self, descriptor: int | None = None) -> None:
        self._descriptor = sys.stdin.fileno() if descriptor is None else descriptor
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.ended = asyncio.Event()
        """Set at end of input (the lines before it may still be waiting to be read)."""
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, name="stdin-lines", daemon=True).start()

    def _read(self) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(self._descriptor, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                if pending:
                    self._hand_over(pending.decode(errors="replace"))
                self._hand_over(None)
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if not self._hand_over(line.decode(errors="replace")):
                    return

    def _hand_over(self, line: str | None) -> bool:
        try:
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line)
            if line is None:
                self._loop.call_soon_threadsafe(self.ended.set)
        except RuntimeError:  # the loop is closed: the command is over
            return False
        return True

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)
            raise StopAsyncIteration
        return line


def read_first_line(descriptor: int | None = None) -> str:
    """One line of stdin read byte by byte from the file descriptor, without its line end ('' at end of input).

    Python's buffered ``sys.stdin.readline`` may take more than the line from a pipe (a password followed by the
    moves of a script), and :class:`StdinLines`, reading the descriptor, would never see the rest.
    """
    fd = sys.stdin.fileno() if descriptor is None else descriptor
    line = bytearray()
    while (byte := os.read(fd, 1)) and byte != b"\n":
        line += byte
    return line.decode(errors="replace").rstrip("\r")


def discard_typeahead() -> None:
    """Drop input typed on the terminal but not read yet, so it is not run by the shell after the command."""
    with contextlib.suppress(OSError, ValueError, termios.error):
        if sys.stdin.isatty():
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
