"""Race services: sessions, races, event delivery and timers. A service never touches a socket."""
