"""The Python client of the race server: the library the tests, bots and the terminal client use."""

from client.race_client import ConnectionLost, RaceClient, ServerError, Unsolicited

__all__ = ["ConnectionLost", "RaceClient", "ServerError", "Unsolicited"]
