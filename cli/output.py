"""How commands report: JSON on stdout with ``--json``, readable text otherwise, never a traceback."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from shared import Board, render
from shared.cards import SUIT_SYMBOLS
from shared.protocol import RaceResult

EXIT_OK = 0
EXIT_REFUSED = 1
"""The input was read but refused (an illegal move, a bad position)."""
EXIT_USAGE = 2
"""The command line or the input document could not be understood."""
EXIT_LOST = 3
"""``race``: the race has a result, and the opponent won it (a win is :data:`EXIT_OK`)."""
EXIT_DRAW = 4
"""``race``: the race ended in a draw."""
EXIT_LEFT = 5
"""``race``: no result for this player: it left first (end of input, ``q``), or the race closed before its start."""
OUTCOMES = {EXIT_OK: "won", EXIT_LOST: "lost", EXIT_DRAW: "draw", EXIT_LEFT: "left"}
"""A race's exit code -> its outcome word (``race --json``'s last line)."""


def race_exit_code(result: RaceResult | None, slot: int | None) -> int:
    """The exit code of ``race`` by the outcome for seat ``slot``: won 0, lost 3, draw 4, no result 5."""
    if result is None or slot is None:
        return EXIT_LEFT
    if result.winner is None:
        return EXIT_DRAW
    return EXIT_OK if result.winner == slot else EXIT_LOST


class CommandError(Exception):
    """A failure a command reports to its user: a stable ``code``, a message, extra JSON fields and an exit code."""

    def __init__(self, code: str, message: str, *, exit_code: int = EXIT_REFUSED, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.fields = fields

    def to_json(self) -> dict[str, Any]:
        """The documented error object: ``{"error": {..fields, "code", "message"}}``."""
        return {"error": {**self.fields, "code": self.code, "message": self.message}}


def counted(count: int, noun: str) -> str:
    """``1 open race``, ``0 open races``: a count and its noun, plural unless the count is one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def help_text(docstring: str | None) -> str:
    """A module docstring as ``--help`` prints it: plain text, without the reST literal quotes (````x````) that
    keep it readable in the source and in generated docs."""
    return (docstring or "").replace("``", "").strip()


def emit_json(document: Any) -> None:
    """Print one JSON document on stdout (with \\u escapes if stdout cannot encode a character such as ♥)."""
    try:
        sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
    except UnicodeEncodeError:
        sys.stdout.write(json.dumps(document) + "\n")


def stdout_can_show(text: str) -> bool:
    """Whether stdout's encoding can write ``text`` (a terminal in Latin-1 cannot write ♣♦♥♠)."""
    try:
        text.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def board_text(board: Board) -> str:
    """``board`` as text for stdout: suit symbols where stdout can show them, letters (S H D C) elsewhere."""
    return render(board, unicode=stdout_can_show(SUIT_SYMBOLS))


def report_error(error: CommandError, as_json: bool) -> int:
    """Show ``error`` (JSON on stdout, or text on stderr) and return its exit code."""
    if as_json:
        emit_json(error.to_json())
        return error.exit_code
    details = {name: value for name, value in error.fields.items() if name != "usage"}
    if "usage" in error.fields:
        print(error.fields["usage"], file=sys.stderr)
    where = f" ({', '.join(f'{name} {value!r}' for name, value in details.items())})" if details else ""
    print(f"flowergarden: error [{error.code}]{where}: {error.message}", file=sys.stderr)
    return error.exit_code


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high`` (none: no upper bound), a one-line usage error
    otherwise (a bare ``int`` type would say ``invalid int value``, or name the checking function)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {value}" if high is not None else f"must be {low} or more, got {value}")
        return value

    return parse


class JsonAwareParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are raised as CommandError ``bad_usage`` (exit 2, with the usage line).

    ``main`` reports them like every other error: a JSON object when ``--json``
    is among the arguments it was given, else the usage and message on stderr.
    """

    def error(self, message: str) -> NoReturn:
        raise CommandError("bad_usage", message, exit_code=EXIT_USAGE, usage=" ".join(self.format_usage().split()))


def read_json_object(name: str, code: str, what: str) -> dict[str, Any]:
    """The JSON object in file ``name`` (``-``: stdin); CommandError ``bad_input`` if unreadable, ``code`` (saying the file
    must hold ``what``) if it is not an object."""
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as error:
        raise CommandError("bad_input", f"cannot read {name}: {error.strerror}", exit_code=EXIT_USAGE) from None
    document = read_json_input(data)
    if not isinstance(document, dict):
        raise CommandError(code, f"the file must hold {what}", exit_code=EXIT_USAGE)
    return document


def read_json_input(data: str | bytes) -> Any:
    """Parse a JSON document given on stdin (text, or bytes in UTF-8/16/32), or raise CommandError ``bad_input``.

    Every way untrusted input can fail is covered: invalid JSON or encoding,
    integers past Python's digit limit (ValueError) and deep nesting (RecursionError).
    """
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:
        if isinstance(error, RecursionError):
            reason = "nested too deeply"
        elif "integer string conversion" in str(error):
            reason = "a number has more than 4300 digits"
        else:
            reason = str(error)[:200]
        raise CommandError("bad_input", f"stdin is not a JSON document: {reason}", exit_code=EXIT_USAGE) from None
