"""Flower Garden Race server: transport (WebSockets) -> protocol -> services -> store (Redis)."""

from importlib import metadata


def version() -> str:
    """The installed project's version (pyproject.toml), shown by ``/health``, ``/live``, ``/metrics``
    (``flowergarden_build_info``) and ``flowergarden admin processes``, so that an operator rolling an upgrade
    sees which processes run which release; ``unknown`` when the sources run without being installed."""
    try:
        return metadata.version("flower-garden-race")
    except metadata.PackageNotFoundError:
        return "unknown"
