"""Writes ``server/services/data/common_passwords.txt``: the passwords ``register`` and ``change_password`` refuse as
among the commonest (``weak_password``).

    pip install zxcvbn==4.5.0 && python3 tools/common_passwords.py

The source is the password frequency list of zxcvbn (Dropbox's password strength estimator, MIT licence; the
``zxcvbn`` package on PyPI), the 30,000 commonest passwords of public leak corpora ranked by frequency: every entry of
at least 8 characters (shorter ones are refused anyway) in rank order, then :data:`EXTRA`. The server reads the
file it writes, not zxcvbn (whose other lists the server has no use for).
"""

from __future__ import annotations

from pathlib import Path

from zxcvbn.frequency_lists import FREQUENCY_LISTS  # type: ignore[import-untyped]

MIN_PASSWORD_LEN = 8
"""server/services/accounts.py ``MIN_PASSWORD_LEN``."""
EXTRA = (
    "00000000", "12341234", "87654321", "88888888", "99999999", "987654321", "administrator", "chocolate",
    "contraseña", "facebook", "fortnite", "instagram", "jennifer", "michelle", "mobilemail", "monitoring",
    "flowergarden", "flower garden", "patience", "solitaire",
)  # fmt: skip
"""Common passwords that zxcvbn keeps in its other lists (names, words) or that a player of this game would guess."""
TARGET = Path(__file__).resolve().parent.parent / "server" / "services" / "data" / "common_passwords.txt"
HEADER = """\
# The commonest passwords of at least 8 characters (the shortest a password may be), one a line, lower case, in
# order of frequency: register and change_password refuse each in any case (weak_password). Written by
# tools/common_passwords.py from zxcvbn 4.5.0's password frequency list (MIT licence, Copyright (c) 2012-2016
# Dan Wheeler and Dropbox, Inc.; the 30,000 commonest passwords of public leak corpora), plus a few of its own.
"""


def common_passwords() -> list[str]:
    """The list, commonest first, each once."""
    ranked = [entry for entry in FREQUENCY_LISTS["passwords"] if len(entry) >= MIN_PASSWORD_LEN]
    return list(dict.fromkeys([*ranked, *EXTRA]))


def main() -> None:
    TARGET.write_text(HEADER + "".join(f"{entry}\n" for entry in common_passwords()), encoding="utf-8")
    print(f"{TARGET}: {len(common_passwords())} passwords")


if __name__ == "__main__":
    main()
