"""Deal commitments: a published hash binds the seed; the reveal verifies, and a tampered seed or salt does not."""

from __future__ import annotations

import hashlib

import pytest

from shared.commitment import (
    COMMITMENT_TAG,
    NO_LINE,
    commitment_preimage,
    deal_commitment,
    line_digest,
    verify_commitment,
)
from shared.rules import Profile

SALT = bytes(range(16))


def test_the_preimage_has_the_documented_byte_layout() -> None:
    preimage = commitment_preimage(0x0102030405060708, Profile.CLASSIC, SALT)
    assert preimage == COMMITMENT_TAG + b"\x01" + bytes(range(1, 9)) + b"\x07classic" + SALT + NO_LINE
    assert deal_commitment(0x0102030405060708, Profile.CLASSIC, SALT) == hashlib.sha256(preimage).hexdigest()


def test_a_revealed_seed_and_salt_verify_against_the_commitment() -> None:
    line = line_digest(["AD b>f", "AS b>f"])
    commitment = deal_commitment(2**64 - 1, Profile.FOUNDATION_ONLY, SALT, line)
    assert verify_commitment(commitment, 2**64 - 1, Profile.FOUNDATION_ONLY, SALT, line)
    assert verify_commitment(commitment.upper(), 2**64 - 1, Profile.FOUNDATION_ONLY, SALT, line)


@pytest.mark.parametrize(
    "seed, profile, salt, line",
    [
        (16, Profile.CLASSIC, SALT, NO_LINE),
        (15, Profile.FOUNDATION_ONLY, SALT, NO_LINE),
        (15, Profile.CLASSIC, bytes(16), NO_LINE),
        (15, Profile.CLASSIC, SALT, line_digest(["AD b>f"])),
        (15, Profile.CLASSIC, SALT[:15], NO_LINE),
        (-1, Profile.CLASSIC, SALT, NO_LINE),
    ],
)
def test_a_tampered_reveal_does_not_verify(seed: int, profile: Profile, salt: bytes, line: bytes) -> None:
    commitment = deal_commitment(15, Profile.CLASSIC, SALT)
    assert not verify_commitment(commitment, seed, profile, salt, line)


def test_the_line_digest_hashes_each_move_on_its_own_line() -> None:
    assert line_digest(["AD b>f", "AS b>f"]) == hashlib.sha256(b"AD b>f\nAS b>f\n").digest()


@pytest.mark.parametrize("commitment", ["é" * 64, "", "not hex at all"])
def test_a_commitment_that_is_no_hex_digest_does_not_verify(commitment: str) -> None:
    assert not verify_commitment(commitment, 15, Profile.CLASSIC, SALT)
