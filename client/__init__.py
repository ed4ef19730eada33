"""The Python client of the race server: the library the tests, bots and the terminal client use."""

from client.race_client import ConnectionLost, Incoming, RaceClient, Resumed, ServerError, Unsolicited

__all__ = ["ConnectionLost", "Incoming", "RaceClient", "Resumed", "ServerError", "Unsolicited"]
