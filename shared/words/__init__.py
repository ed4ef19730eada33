"""The words of every client, one table per language: the terminal app, its line mode and the web page read these.

Each table (``en``, ``pt``, ``fr``, ``es``) maps a key to a text with ``{field}`` placeholders, filled in by the
client that shows it (:func:`client.words.words` in Python, ``t()`` in ``server/web/static/js/i18n.js``, which gets
the tables from the server as ES modules, ``server/web/static_site.py``). Keys under ``web.`` are the page's own, keys
under ``term.`` the terminal's; the others (race statuses, result reasons, attempt endings, refusals per error code,
places, race messages) are said by both. Every table has exactly the keys of the English one
(tests/test_client_words.py); a count is said with a ``.one`` / ``.other`` pair of keys (:func:`plural_key`).
docs/decisions/0018-one-word-table-per-language.md says why one set of tables.
"""

from __future__ import annotations

from typing import Final

from shared.words import en, es, fr, pt

TABLES: Final[dict[str, dict[str, str]]] = {"en": en.WORDS, "pt": pt.WORDS, "fr": fr.WORDS, "es": es.WORDS}
"""Language code -> its table (key -> words, with ``{field}`` placeholders)."""
LANGUAGES: Final = tuple(TABLES)
"""The languages spoken, English first (the reference table and the fallback of a language nobody asked for)."""


def plural_key(key: str, count: int) -> str:
    """The key of ``key``'s form for ``count`` things: ``key.one`` for exactly one, else ``key.other`` (all four
    languages say 0 with the plural here, as Portuguese and French people read it on a scoreboard)."""
    return f"{key}.one" if count == 1 else f"{key}.other"
