"""The servers' signature of an exported record, checked by ``flowergarden verify --key/--key-url``
(docs/FAIRPLAY.md "What verify proves"; the server side is server/record_signing.py)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from cli.output import EXIT_USAGE, CommandError
from shared.arena_record import ARENA_RECORD_FORMAT, arena_record_digest
from shared.race.record import RecordInvalid, record_digest

RECORD_KEY_PATH = "/record-key"
"""Where a server serves its public key (server/record_signing.py)."""


def key_url(server: str) -> str:
    """The public key's URL of a server given as ``ws://HOST:PORT`` (or ``wss://``, ``http(s)://``); a URL that already
    names a path is taken as it is."""
    parts = urlsplit(server)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    path = parts.path if parts.path not in ("", "/") else RECORD_KEY_PATH
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def fetch_key(url: str) -> str:
    """The public key (64 hex digits) a server serves; ``bad_key`` when it cannot be read."""
    try:
        with urllib.request.urlopen(key_url(url), timeout=10) as response:
            document: Any = json.loads(response.read())
        key = document["public_key"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CommandError("bad_key", f"cannot read the server's record key from {key_url(url)}: {error}", exit_code=EXIT_USAGE) from None
    return str(key)


def check_signature(document: Mapping[str, Any], public_hex: str) -> None:
    """RecordInvalid unless the record's ``signature`` is the key's signature of its digest: a race record's race and
    events, an arena record's :data:`shared.arena_record.SIGNED_FIELDS`."""
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex))
    except ValueError:
        raise CommandError("bad_key", "a record key is 64 hex digits (an Ed25519 public key)", exit_code=EXIT_USAGE) from None
    signature = document.get("signature")
    if not isinstance(signature, str):
        raise RecordInvalid("the record carries no server signature")
    try:
        digest = (
            arena_record_digest(document)
            if document.get("format") == ARENA_RECORD_FORMAT
            else record_digest(document.get("race", {}), document.get("events", []))
        )
        key.verify(bytes.fromhex(signature), digest)
    except (InvalidSignature, ValueError):
        raise RecordInvalid("the server's signature does not match: the record is not what the server stored") from None
