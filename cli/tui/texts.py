"""Texts the full-screen screens show and their line-mode commands print too: the race keys, a lobby entry's words.

The screens own them (the commands that launch a screen import from here, never the other way round), and the
module imports no Textual, so ``flowergarden --help`` and the line modes stay quick to start.
"""

from __future__ import annotations

from client.race_view import player_label, time_limit_words
from client.words import words
from shared import Profile
from shared.protocol import LobbyEntry
from shared.words.en import WORDS

KEYS_HELP = WORDS["term.keys_help"]
"""The race keys in English (``race --help``); the help screen speaks the player's language (``term.keys_help``)."""
LINE_HELP = WORDS["term.line_help"]
"""The line mode's words in English (``race --help``); its ``help`` speaks the player's language (``term.line_help``)."""


def entry_options(entry: LobbyEntry) -> str:
    """A race's settings in short, in the player's language: ``classic, rated, time limit 5:00``."""
    settings = entry.settings
    options = [words("setting.foundation_only" if settings.profile == Profile.FOUNDATION_ONLY else "setting.classic")]
    flags = (("setting.rated", settings.rated), ("setting.undo", settings.undo), ("setting.redeal", settings.redeal_once), ("setting.solvable", settings.solvable_only), ("setting.hints", settings.hints))
    options += [words(key) for key, on in flags if on]
    if settings.time_limit:
        options.append(time_limit_words(settings.time_limit))
    if entry.difficulty is not None:
        options.append(words(f"difficulty.{entry.difficulty.value}"))
    if entry.seed_chosen:
        options.append(words("term.chosen_seed"))
    return ", ".join(options)


def creator_label(entry: LobbyEntry) -> str:
    """The race's creator as shown: its account, ``(bot)`` or ``(guest)`` label (see :func:`player_label`)."""
    return player_label(entry.creator, entry.creator_account, entry.creator_bot)
