"""What every command that talks to a race server shares: its options, checked, and its failures as errors.

The options are checked by argparse itself (a URL without ``ws://``, an empty name, a
time limit out of range are one-line usage errors, never a traceback), and
:func:`wants_full_screen` decides between the full-screen app and the line mode.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from websockets.exceptions import WebSocketException

from cli.output import EXIT_OK, CommandError
from client import ConnectionLost, ServerError
from client.words import LANGUAGES
from shared.protocol import MAX_NAME_LEN, MAX_TIME_LIMIT_SECONDS

DEFAULT_SERVER = "ws://127.0.0.1:8765"
SERVER_ENV = "FLOWERGARDEN_SERVER"
"""The environment variable that sets the default of ``--server``."""


def default_server() -> str:
    """``--server``'s default: $FLOWERGARDEN_SERVER, else the local server."""
    return os.environ.get(SERVER_ENV, "").strip() or DEFAULT_SERVER


def server_url(text: str) -> str:
    """argparse type of ``--server``: a ``ws://`` or ``wss://`` URL with a host."""
    try:
        parts = urlsplit(text.strip())
        _ = parts.port  # ValueError for a port that is not a number or out of range
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a server URL: {error}") from None
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        hint = f" (did you mean ws://{text.strip()}?)" if "://" not in text else ""
        raise argparse.ArgumentTypeError(f"{text!r} is not a server URL: it must start with ws:// or wss://{hint}")
    return text.strip()


def display_name(text: str) -> str:
    """argparse type of ``--name``: 1 to 32 characters, not only spaces."""
    name = text.strip()
    if not name:
        raise argparse.ArgumentTypeError("the name must not be empty")
    if len(name) > MAX_NAME_LEN:
        raise argparse.ArgumentTypeError(f"the name has {len(name)} characters; at most {MAX_NAME_LEN} are allowed")
    return name


def number_in_range(convert: Callable[[str], float], low: float, high: float, what: str, *, low_open: bool = False) -> Callable[[str], Any]:
    """An argparse type: ``convert`` the text (int or float), then check it lies in ``low``..``high``
    (above ``low`` with ``low_open``); ``what`` names the value in the one-line error."""

    def check(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not (low < value if low_open else low <= value) or not value <= high:
            bound = f"above {low:g}" if low_open else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"{text} must be {bound} and at most {high:g}")
        return value

    return check


time_limit = number_in_range(int, 1, MAX_TIME_LIMIT_SECONDS, "a whole number of seconds")
"""argparse type of ``--time-limit``: whole seconds from 1 to 24 hours."""
positive_speed = number_in_range(float, 0, 1000, "a number", low_open=True)
"""argparse type of ``--speed``: a factor above 0 (2 = twice the race's pace)."""


def add_server_argument(parser: argparse.ArgumentParser) -> None:
    """``--server URL`` (checked)."""
    parser.add_argument(
        "--server", type=server_url, default=default_server(),
        help=f"server URL, ws:// or wss:// (default ${SERVER_ENV}, else {DEFAULT_SERVER})",
    )


def add_plain_argument(parser: argparse.ArgumentParser) -> None:
    """``--plain``: the line mode even on a terminal; ``--lang``: the words' language (``main`` sets it)."""
    parser.add_argument(
        "--plain",
        action="store_true",
        help="print lines instead of the full-screen app (the default when stdout is not a terminal)",
    )
    parser.add_argument(
        "--lang", choices=LANGUAGES, help="the language of the race's words (default: from $LANG, else en)"
    )


def wants_full_screen(args: argparse.Namespace) -> bool:
    """The full-screen app unless ``--plain``, ``--json`` or stdin/stdout is not a terminal."""
    if getattr(args, "plain", False) or getattr(args, "json", False):
        return False
    return sys.stdout.isatty() and sys.stdin.isatty()


CONNECTION_FAILURES = (OSError, ConnectionLost, TimeoutError, WebSocketException)
"""What reaching or keeping a race server can fail with (the error ``connection_failed``)."""


def unreachable(server: str, error: BaseException) -> CommandError:
    """``connection_failed`` for ``error`` in words a person can act on, with the library's own text after them:
    ``ws://host:1: nothing answers there (connection refused): is 'flowergarden serve' running, or is --server wrong?``."""
    detail = str(error) or type(error).__name__
    if isinstance(error, ConnectionRefusedError) or "Connect call failed" in detail:
        why = "nothing answers there (connection refused): is 'flowergarden serve' running there, or is --server wrong?"
    elif isinstance(error, socket.gaierror):
        why = f"no such host ({detail}): check --server"
    elif isinstance(error, TimeoutError):
        why = "no answer in time (timed out): the server or the network is down or overloaded"
    elif isinstance(error, ConnectionLost):
        why = f"the connection was lost ({detail})"
    elif isinstance(error, WebSocketException):
        why = f"it does not speak the race protocol ({detail}): is --server the race server's ws:// address?"
    else:
        why = detail
    return CommandError("connection_failed", f"{server}: {why}")


def run_connected(args: argparse.Namespace, work: Callable[[argparse.Namespace], Coroutine[Any, Any, int | None]]) -> int:
    """Run ``work(args)``: a refusal becomes its code, an unreachable or lost server ``connection_failed``."""
    try:
        code = asyncio.run(work(args))
    except ServerError as error:
        raise CommandError(error.code, error.error.message) from None  # the code is shown once, by CommandError
    except BrokenPipeError:
        raise  # stdout's reader went away (``| head``), not the server: main ends quietly
    except CONNECTION_FAILURES as error:
        raise unreachable(args.server, error) from None
    return EXIT_OK if code is None else code
