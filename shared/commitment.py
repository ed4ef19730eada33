"""Commit–reveal of a race's deal: the server fixes the deal, publishes a hash, and reveals the inputs at the end.

When a race's deal is fixed the server draws a random salt and publishes
``commitment = SHA-256(preimage)`` to both players; the seed and the salt are
revealed with the result, and anyone recomputes the hash. The seed cannot
have been changed after the commitment was published, and the commitment
tells nothing about the seed before the reveal (the 128-bit salt makes a
search over seeds useless). docs/PROTOCOL.md ("Fair deals") gives the byte
layout so a client in any language can check it.

Preimage layout (all integers big-endian):

=========  =====================================================================
bytes      content
=========  =====================================================================
16         the ASCII tag ``FGR-DEAL-COMMIT1``
1          :data:`DEAL_ALGORITHM_VERSION`
8          the seed, unsigned 64-bit
1          length P of the profile name, then P bytes of its ASCII name
16         the salt
32         SHA-256 of the proving line (:func:`line_digest`), or 32 zero bytes
=========  =====================================================================
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from shared.deal import MASK64
from shared.rules import Profile

COMMITMENT_TAG = b"FGR-DEAL-COMMIT1"
DEAL_ALGORITHM_VERSION = 1
"""The version of the deal algorithm in docs/NOTATION.md ("Deals"); a change to it changes every layout."""
SALT_BYTES = 16
NO_LINE = bytes(32)
"""The proving-line digest of a race that was not dealt from the solver's pool."""


def line_digest(moves: Sequence[str]) -> bytes:
    """SHA-256 of a winning line: its moves in notation, each followed by a line feed (``"5D b>3\\n…"``)."""
    return hashlib.sha256("".join(f"{move}\n" for move in moves).encode("ascii")).digest()


def commitment_preimage(seed: int, profile: Profile, salt: bytes, line: bytes = NO_LINE) -> bytes:
    """The bytes a deal commitment hashes (layout in the module docstring)."""
    if not 0 <= seed <= MASK64:
        raise ValueError("the seed is an unsigned 64-bit integer")
    if len(salt) != SALT_BYTES:
        raise ValueError(f"the salt is {SALT_BYTES} bytes")
    if len(line) != 32:
        raise ValueError("the line digest is 32 bytes")
    name = profile.value.encode("ascii")
    return COMMITMENT_TAG + bytes([DEAL_ALGORITHM_VERSION]) + seed.to_bytes(8, "big") + bytes([len(name)]) + name + salt + line


def deal_commitment(seed: int, profile: Profile, salt: bytes, line: bytes = NO_LINE) -> str:
    """The commitment published in ``countdown``: the preimage's SHA-256 as 64 lower-case hex digits."""
    return hashlib.sha256(commitment_preimage(seed, profile, salt, line)).hexdigest()


def verify_commitment(commitment: str, seed: int, profile: Profile, salt: bytes, line: bytes = NO_LINE) -> bool:
    """Whether the revealed seed, salt (and line digest) hash to ``commitment`` (compared in constant time)."""
    try:
        expected = deal_commitment(seed, profile, salt, line)
    except ValueError:
        return False
    return hmac.compare_digest(expected.encode(), commitment.lower().encode())  # bytes: a str with non-ASCII would raise
