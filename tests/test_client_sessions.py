"""The saved seats (``race --resume``): a file that cannot be written costs the resume, never the race."""

from __future__ import annotations

from pathlib import Path

from race_helpers import player

from client.race_session import RaceSession, SeatRequest
from client.sessions import SavedRace, SessionStore
from server.app import RaceServer

SEAT = SavedRace("ws://127.0.0.1:1", "token", "Ann", "raceA", 0)


def test_a_saved_seat_round_trips_through_the_file(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.json")
    assert store.save(SEAT) is None
    found = store.find("raceA")
    assert found is not None and (found.token, found.slot) == ("token", 0)
    store.forget("raceA")
    assert store.find("raceA") is None


def test_a_config_folder_that_cannot_be_written_returns_the_error_instead_of_raising(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the config folder should be", encoding="utf-8")
    store = SessionStore(blocker / "sessions.json")
    error = store.save(SEAT)
    assert isinstance(error, OSError)
    assert store.load() == [] and store.find("raceA") is None
    store.forget("raceA")  # nothing saved, nothing to write: no error either


async def test_a_seat_that_cannot_be_saved_is_still_taken_and_the_player_told(race_server: RaceServer, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the config folder should be", encoding="utf-8")
    client = await player(race_server.url, "Ann")
    try:
        session = RaceSession(client, SessionStore(blocker / "sessions.json"))
        lines = await session.open(SeatRequest(name="Ann"))
        assert session.race_id and session.unsaved is not None
        assert any("could not be saved for --resume" in line for line in lines)
    finally:
        await client.close()
