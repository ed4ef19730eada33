"""The one exception type services raise: a protocol error code with a message for people."""

from __future__ import annotations

from shared.protocol import AnyErrorCode


class ServiceError(Exception):
    """A refused request; ``code`` is one of the protocol's error codes or an engine code (never a bare string)."""

    def __init__(self, code: AnyErrorCode, message: str, *, field: str | None = None, expected: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.expected = expected
