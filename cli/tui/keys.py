"""The footer's key descriptions in the player's language.

A screen declares its bindings with a word key as description (``Binding("c", "create", "term.lobby.create")``);
:func:`speak_bindings`, called from the screen's ``__init__``, puts that key's words in their place, in the language
spoken when the screen is made (``--lang`` is read before any screen exists).
"""

from __future__ import annotations

from dataclasses import replace

from textual.dom import DOMNode

from client.words import words


def speak_bindings(node: DOMNode) -> None:
    """Replace each of ``node``'s binding descriptions that is a word key (``term.…``) by its words."""
    table = node._bindings.key_to_bindings
    for key, bindings in table.items():
        table[key] = [replace(binding, description=words(binding.description)) if binding.description.startswith("term.") else binding for binding in bindings]
