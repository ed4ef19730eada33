"""Operator commands are signed with the operator secret (HMAC-SHA256), so a server process obeys only someone
who knows it, and the secret itself never travels or is stored (docs/OPERATIONS.md "Administration")."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

MAX_AGE_MS = 60_000
"""A command older (or further in the future) than this is refused: a recorded command cannot be replayed later."""


def _canonical(document: dict[str, Any]) -> bytes:
    unsigned = {key: value for key, value in document.items() if key != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":")).encode()


def sign(secret: str, document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its ``signature``."""
    signature = hmac.new(secret.encode(), _canonical(document), hashlib.sha256).hexdigest()
    return {**document, "signature": signature}


def verify(secret: str, document: dict[str, Any], now_ms: int) -> str | None:
    """Why ``document`` must not be obeyed (bad signature, too old), or None when it is genuine and fresh."""
    signature = document.get("signature")
    expected = hmac.new(secret.encode(), _canonical(document), hashlib.sha256).hexdigest()
    if not isinstance(signature, str) or not hmac.compare_digest(signature, expected):
        return "bad signature (is the operator secret the same as the servers'?)"
    at = document.get("at")
    if not isinstance(at, int) or abs(now_ms - at) > MAX_AGE_MS:
        return "stale command (more than a minute old: check the clocks)"
    return None
