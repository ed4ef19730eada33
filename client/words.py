"""The words of the terminal clients in the player's language: the tables of :mod:`shared.words`, the web page's too.

The language comes from ``--lang`` (:func:`set_language`), else from the environment's ``LC_ALL``,
``LC_MESSAGES`` or ``LANG`` (``pt_BR.UTF-8`` is Portuguese), else English. Every table has the same keys
(tests/test_client_words.py); a sentence's ``{fields}`` are filled in by :func:`words`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from shared.words import LANGUAGES, TABLES, plural_key

__all__ = ["LANGUAGES", "TABLES", "count_words", "language", "language_from_env", "set_language", "words"]


def language_from_env(environment: Mapping[str, str]) -> str:
    """The language a locale setting names (``fr_FR.UTF-8`` -> ``fr``); English for any other or none."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environment.get(variable, "")
        if value:
            code = value.split("_", 1)[0].split(".", 1)[0].lower()
            return code if code in TABLES else "en"
    return "en"


_current = language_from_env(os.environ)


def set_language(language: str) -> None:
    """Speak ``language`` (one of :data:`LANGUAGES`) from now on."""
    global _current
    if language not in TABLES:
        raise ValueError(f"no words for language {language!r}: one of {', '.join(LANGUAGES)}")
    _current = language


def language() -> str:
    """The language spoken now."""
    return _current


def words(key: str, **fields: object) -> str:
    """The words of ``key`` in the current language, ``fields`` filled in (a key no table has raises KeyError)."""
    text = TABLES[_current][key]
    return text.format(**fields) if fields else text


def count_words(key: str, count: int, **fields: object) -> str:
    """The words of ``key`` for ``count`` things (``1 game``, ``3 games``): its ``.one`` or ``.other`` form, with
    ``{count}`` and ``fields`` filled in."""
    return words(plural_key(key, count), count=count, **fields)
