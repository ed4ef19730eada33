"""How commands report: JSON on stdout with ``--json``, readable text otherwise, never a traceback."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_REFUSED = 1
"""The input was read but refused (an illegal move, a bad position)."""
EXIT_USAGE = 2
"""The command line or the input document could not be understood."""


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


def emit_json(document: Any) -> None:
    """Print one JSON document on stdout."""
    json.dump(document, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


def report_error(error: CommandError, as_json: bool) -> int:
    """Show ``error`` (JSON on stdout, or text on stderr) and return its exit code."""
    if as_json:
        emit_json(error.to_json())
    else:
        print(f"flowergarden: error [{error.code}]: {error.message}", file=sys.stderr)
    return error.exit_code


class JsonAwareParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors become a JSON error object when ``--json`` is on the command line."""

    def error(self, message: str) -> NoReturn:
        if "--json" in sys.argv[1:]:
            emit_json(CommandError("bad_usage", message, exit_code=EXIT_USAGE).to_json())
            raise SystemExit(EXIT_USAGE)
        super().error(message)


def read_json_input(text: str) -> Any:
    """Parse a JSON document given on stdin, or raise CommandError ``bad_input``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError("bad_input", f"stdin is not JSON: {error}", exit_code=EXIT_USAGE) from None
