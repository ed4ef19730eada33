"""The servers' signature on exported race records (docs/FAIRPLAY.md "What verify proves").

Every process signs with one Ed25519 key (the ``cryptography`` package), kept in the store: the first process to
start makes it. A finished race's last replay page carries the signature of :func:`shared.race.record.record_digest`
of the record a client assembles from the pages, so ``flowergarden verify --key-url`` can prove the record is what
the server stored. The public key is served at ``GET /record-key`` and printed by ``flowergarden admin record-key``.
"""

from __future__ import annotations

import json
import os
from http import HTTPStatus
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from websockets.datastructures import Headers
from websockets.http11 import Response

from server.store import OpsStore

RECORD_KEY_PATH = "/record-key"
"""Where the public key is served (JSON ``{"algorithm": "ed25519", "public_key": hex}``)."""


class RecordSigner:
    """Signs record digests with the servers' key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = public_hex(private_key.public_key())
        """The public key, 64 hex digits."""

    @classmethod
    async def of_store(cls, ops: OpsStore) -> RecordSigner:
        """The signer of the key kept in the store (made now if this is the first process)."""
        fresh = Ed25519PrivateKey.generate().private_bytes_raw()
        return cls(Ed25519PrivateKey.from_private_bytes(await ops.record_signing_key(fresh)))

    @classmethod
    def of_file(cls, path: Path) -> RecordSigner:
        """The signer of the key in ``path`` (32 raw bytes), made there now (mode 0600) if the file does not exist: for
        operators who keep the key out of Redis (``record_key_file``). Every process of a deployment needs the same file."""
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                file.write(Ed25519PrivateKey.generate().private_bytes_raw())
        return cls(Ed25519PrivateKey.from_private_bytes(path.read_bytes()))

    def sign(self, digest: bytes) -> str:
        """The signature of a record digest (128 hex digits)."""
        return self._key.sign(digest).hex()

    def response(self) -> Response:
        """The answer of ``GET /record-key``."""
        body = (json.dumps({"algorithm": "ed25519", "public_key": self.public_key}) + "\n").encode()
        headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(body))), ("Connection", "close")])
        return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)


def public_hex(key: Ed25519PublicKey) -> str:
    """A public key as 64 hex digits."""
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
