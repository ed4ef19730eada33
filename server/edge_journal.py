"""What happens at the WebSocket edge, in the logs and metrics: connections opened and closed, rate-limit hits,
clients dropped for not reading. One call per fact, so the transport's instrumentation stays one line each."""

from __future__ import annotations

from server import logs, metrics


def connection_opened(peer: str, connection_id: str) -> None:
    """A WebSocket connection from ``peer`` was accepted."""
    metrics.connection_opened()
    logs.event("connection_open", peer=peer, connection=connection_id)


def connection_closed(peer: str, connection_id: str, code: int | None, reason: str | None, player: str | None) -> None:
    """A connection ended with close ``code`` (None: dropped without a close frame)."""
    metrics.connection_closed(code)
    logs.event("connection_closed", peer=peer, connection=connection_id, code=code, reason=reason or None, player=player)


_REFUSALS = logs.Throttle(1.0)


def rate_limited(peer: str, connection_id: str, *, closed: bool) -> None:
    """A frame from ``peer`` was dropped for the rate limit, or (``closed``) the connection was closed for flooding.

    Every hit is counted; dropped frames are logged at most once a second per process (a flood must not flood the
    logs), with the number of hits not logged since; each close is logged."""
    metrics.rate_limited(closed)
    if closed:
        logs.warning("rate_limited", peer=peer, connection=connection_id, action="closed")
        return
    held_back = _REFUSALS.due()
    if held_back is not None:
        logs.warning("rate_limited", peer=peer, connection=connection_id, action="refused", not_logged_since=held_back)


def outbox_dropped(peer: str, why: str) -> None:
    """A client that does not read was dropped (``why``: what was waiting for it, or the write that did not drain)."""
    metrics.outbox_dropped()
    logs.warning("connection_dropped_not_reading", peer=peer, why=why)
