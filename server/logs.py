"""Structured logs: one event per thing that happened, with its facts as fields, as text or JSON lines.

structlog, not a hand-written JSON formatter: it renders the server's own events (``event("race_created",
race=...)``) and every standard-library record (websockets', redis-py's, the server's older ``log.info`` lines)
through one chain of processors, so one switch (``--log-format``) turns every line into JSON with the same
fields (timestamp, level, logger, event), and one processor keeps secrets out of all of them.
"""

from __future__ import annotations

import logging
import sys
import time
from enum import Enum
from typing import Any

import structlog
from structlog.typing import EventDict, Processor

from server import metrics

SECRET_FIELDS = frozenset({"token", "password", "invite", "invite_code", "secret", "operator_secret", "authorization", "signature"})
"""Fields that are never written: a processor replaces their values before any line is rendered."""

REDACTED = "[redacted]"

EVENTS_LOGGER = "flowergarden.events"


class LogFormat(str, Enum):
    """How log lines are written."""

    TEXT = "text"
    """``timestamp [level] event  key=value ...`` for people at a terminal."""
    JSON = "json"
    """One JSON object per line for log collectors."""


def redact_secrets(_logger: Any, _method: str, event_dict: EventDict) -> EventDict:
    """Replace the value of every secret field (:data:`SECRET_FIELDS`), wherever an event carries one."""
    for key in SECRET_FIELDS.intersection(event_dict):
        event_dict[key] = REDACTED
    return event_dict


def count_event(_logger: Any, method: str, event_dict: EventDict) -> EventDict:
    """Count every line by level (``flowergarden_log_events_total``)."""
    metrics.log_event(str(event_dict.get("level", method)))
    return event_dict


_SHARED: list[Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    redact_secrets,
    count_event,
]

structlog.configure(
    processors=[structlog.stdlib.filter_by_level, *_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
    logger_factory=structlog.stdlib.LoggerFactory(),
    wrapper_class=structlog.stdlib.BoundLogger,
    cache_logger_on_first_use=True,
)


def configure(log_format: LogFormat, level: str) -> None:
    """Write every log line (the server's events and all standard-library loggers) to stderr in ``log_format``."""
    renderer: Processor = (
        structlog.processors.JSONRenderer(sort_keys=False)
        if log_format is LogFormat.JSON
        else structlog.dev.ConsoleRenderer(colors=False, pad_event_to=0)
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            renderer,
        ],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    # websockets logs every handshake and close at INFO; the server's own connection events say more (peer, code).
    logging.getLogger("websockets").setLevel(max(logging.getLevelName(level), logging.WARNING) if level != "DEBUG" else logging.DEBUG)


_events = structlog.stdlib.get_logger(EVENTS_LOGGER)


def event(name: str, **fields: Any) -> None:
    """Log event ``name`` (snake_case, e.g. ``race_created``) at INFO with its facts as fields."""
    _events.info(name, **fields)


def warning(name: str, **fields: Any) -> None:
    """Log event ``name`` at WARNING."""
    _events.warning(name, **fields)


class Throttle:
    """At most one log line per ``seconds`` for one kind of repeated fact (a flood must not flood the logs): counts
    what it held back, so the line that is written says how many were not."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.last = -seconds
        self.held_back = 0

    def due(self) -> int | None:
        """None while a line was written less than ``seconds`` ago, else how many were held back since."""
        now = time.monotonic()
        if now - self.last < self.seconds:
            self.held_back += 1
            return None
        held_back, self.last, self.held_back = self.held_back, now, 0
        return held_back
