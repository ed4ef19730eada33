"""The races a player sits in, saved on disk so a killed terminal can take its seat back (``race --resume``).

One JSON file, ``sessions.json`` in the user's config directory (platformdirs:
``~/.config/flowergarden`` on Linux, honouring ``XDG_CONFIG_HOME``), readable by
the user only because it holds session tokens. Each entry is the server, the
session token and name, the race and the seat; the newest comes first. A file
that cannot be read is treated as empty (and rewritten on the next save), and one
that cannot be written only loses the resume, so a damaged file never stops anyone
from racing.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import platformdirs

KEPT = 20
"""How many saved races the file keeps (the oldest are dropped)."""


@dataclass(frozen=True, slots=True)
class SavedRace:
    """What resuming a seat needs: where, who (token and name) and which race and seat."""

    server: str
    token: str
    name: str
    race: str
    slot: int
    saved_at: float = 0.0


def default_path() -> Path:
    """``sessions.json`` in the user's config directory for this program."""
    return Path(platformdirs.user_config_dir("flowergarden", appauthor=False)) / "sessions.json"


class SessionStore:
    """Read and write the saved races (newest first)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def load(self) -> list[SavedRace]:
        """Every saved race, newest first; an unreadable file counts as empty."""
        try:
            document: Any = json.loads(self.path.read_text(encoding="utf-8"))
            return [SavedRace(**entry) for entry in document["races"]]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    def save(self, saved: SavedRace) -> OSError | None:
        """Remember ``saved`` (replacing an older entry of the same race) as the newest; the error if the file could
        not be written (the race goes on: only ``--resume`` will not find it)."""
        stamped = SavedRace(saved.server, saved.token, saved.name, saved.race, saved.slot, time.time())
        races = [stamped, *(entry for entry in self.load() if entry.race != saved.race)][:KEPT]
        try:
            self._write(races)
        except OSError as error:
            return error
        return None

    def forget(self, race: str) -> None:
        """Drop a race that is over (or can no longer be resumed); a file that cannot be written keeps it."""
        races = self.load()
        kept = [entry for entry in races if entry.race != race]
        if len(kept) != len(races):
            with contextlib.suppress(OSError):
                self._write(kept)

    def find(self, race: str | None = None, server: str | None = None) -> SavedRace | None:
        """The saved race ``race`` (any server), else the newest one on ``server`` (any server if None)."""
        for entry in self.load():
            if race is not None and entry.race == race:
                return entry
            if race is None and (server is None or entry.server == server):
                return entry
        return None

    def _write(self, races: list[SavedRace]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump({"races": [asdict(entry) for entry in races]}, file, indent=1)
        try:
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
