"""Running a command that talks to a race server: its failures become the command's documented errors."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from cli.output import EXIT_OK, CommandError
from client import ConnectionLost, ServerError


def run_connected(args: argparse.Namespace, work: Callable[[argparse.Namespace], Coroutine[Any, Any, None]]) -> int:
    """Run ``work(args)``: a refusal becomes its code, an unreachable or lost server ``connection_failed``."""
    try:
        asyncio.run(work(args))
    except ServerError as error:
        raise CommandError(error.code, str(error)) from None
    except (OSError, ConnectionLost) as error:
        raise CommandError("connection_failed", f"{args.server}: {error}") from None
    return EXIT_OK
