"""Delivery of race events from the races' Redis Streams to this process's recipients.

Every change of a race appends to its stream inside the same Lua script, so
the stream is the single ordered truth. One reader task per process blocks on
all watched streams at once (XREAD); a recipient that subscribes first catches
up from the stream (XRANGE after its last sequence number), then receives live
events, each exactly once and in order. Events written by any process reach
every process this way: players and spectators on different processes see the
same race. Spectators get each event no earlier than its time plus the race's
spectator delay (fair play: a player cannot follow the opponent's line live).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from server import metrics
from server.services.background import BackgroundLoop
from server.services.clock import ServerClock
from server.services.views import event_for
from server.store import EventReader, RaceStore, StoredEvent, UndecodableEvent
from shared.protocol import PlayerJoined, RaceEvent

log = logging.getLogger(__name__)


class Subscription:
    """One recipient's view of one race: delivers each event once, in sequence order, cut down for its seat.

    With ``delay_ms`` (spectators) each event is held until the server time ``event.at + delay_ms``. A player's
    subscription (``seat``: the player in seat ``viewer_slot`` and the event seq at which it held it) ends when
    another player takes that seat after that seq (the player left it, maybe on another connection):
    ``on_unseated`` is called then, and nothing of the seat's next player reaches this connection.
    """

    def __init__(
        self,
        race_id: str,
        viewer_slot: int | None,
        send: Callable[[RaceEvent], None],
        after_seq: int = 0,
        *,
        delay_ms: int = 0,
        clock: ServerClock | None = None,
        seat: tuple[str, int] | None = None,
        on_unseated: Callable[[], None] | None = None,
    ) -> None:
        if delay_ms > 0 and clock is None:
            raise ValueError("a delayed subscription needs the server clock")
        self.race_id = race_id
        self.viewer_slot = viewer_slot
        self.send = send
        self.last_seq = after_seq
        self.delay_ms = delay_ms
        self.clock = clock
        self.seat = seat
        self.on_unseated = on_unseated
        self._pending: list[StoredEvent] | None = []
        """Live events that arrive while the catch-up read is in flight."""
        self._held: deque[RaceEvent] = deque()
        """Delayed events waiting for their time, in order."""
        self._releaser: asyncio.Task[None] | None = None
        self._closed = False

    def offer(self, event: StoredEvent) -> None:
        """A live event from the hub."""
        if self._pending is not None:
            self._pending.append(event)
        else:
            self._deliver(event)

    def caught_up(self, history: list[StoredEvent]) -> None:
        """Deliver the catch-up read, then whatever arrived meanwhile."""
        for event in history:
            self._deliver(event)
        pending, self._pending = self._pending or [], None
        for event in pending:
            self._deliver(event)

    def _deliver(self, event: StoredEvent) -> None:
        if self._closed or event.seq <= self.last_seq:
            return
        self.last_seq = event.seq
        if isinstance(event, UndecodableEvent):
            return  # counted and logged by the store when it read it
        if self._unseats(event):
            self.close()
            if self.on_unseated is not None:
                self.on_unseated()
            return
        message = event_for(event, self.viewer_slot)
        if self.delay_ms <= 0:
            self._send(message)
            return
        self._held.append(message)
        if self._releaser is None:
            self._releaser = asyncio.create_task(self._release())

    def _unseats(self, event: RaceEvent) -> bool:
        """Whether ``event`` gives this subscription's seat to another player (after the subscriber held it)."""
        if self.seat is None or not isinstance(event, PlayerJoined):
            return False
        player, seated_at = self.seat
        return event.seq > seated_at and event.slot == self.viewer_slot and event.player != player

    async def _release(self) -> None:
        """Send held events in order, each once the server clock reaches its time plus the delay."""
        assert self.clock is not None
        try:
            while self._held:
                wait_ms = self._held[0].at + self.delay_ms - self.clock.now_ms()
                if wait_ms > 0:
                    await asyncio.sleep(wait_ms / 1000)
                    continue
                self._send(self._held.popleft())
        finally:
            self._releaser = None

    def _send(self, message: RaceEvent) -> None:
        """Hand an event to the recipient, measuring how long after it was stored (beyond the delay) it went."""
        self.send(message)
        if self.clock is not None:
            metrics.event_delivered(self.viewer_slot is not None, (self.clock.now_ms() - message.at - self.delay_ms) / 1000)

    def close(self) -> None:
        """Deliver nothing more: drop held events and stop the delayed delivery."""
        self._closed = True
        self._held.clear()
        if self._releaser is not None:
            self._releaser.cancel()


class EventHub:
    """Fans out the events of every race that has a subscriber in this process."""

    def __init__(self, store: RaceStore, reader: EventReader, *, block_ms: int = 1000) -> None:
        self.store = store
        self.reader = reader
        self.block_ms = block_ms
        self._subscriptions: dict[str, set[Subscription]] = {}
        self._cursors: dict[str, int] = {}
        self._loop = BackgroundLoop("event hub: reading streams")

    async def subscribe(self, subscription: Subscription) -> None:
        """Start delivering a race's events after ``subscription.last_seq``."""
        race_id = subscription.race_id
        watched = self._subscriptions.setdefault(race_id, set())
        watched.add(subscription)
        if race_id not in self._cursors:
            self._cursors[race_id] = subscription.last_seq
            await self.reader.wake()
        subscription.caught_up(await self.store.events_after(race_id, subscription.last_seq))

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop delivering to ``subscription``."""
        subscription.close()
        watched = self._subscriptions.get(subscription.race_id)
        if watched is None:
            return
        watched.discard(subscription)
        if not watched:
            del self._subscriptions[subscription.race_id]
            self._cursors.pop(subscription.race_id, None)

    def stop(self) -> None:
        """Make :meth:`run` return (a cancelled Redis read may surface as a connection error, not a cancellation)."""
        self._loop.stop()

    async def run(self) -> None:
        """Read and dispatch until stopped; survives Redis outages by retrying."""
        await self._loop.run(self._read_once, retry_seconds=0.5)

    async def _read_once(self) -> None:
        """One blocking read of every watched stream, dispatched to the subscriptions."""
        found = await self.reader.read(dict(self._cursors), self.block_ms)
        for race_id, event in found:
            if race_id not in self._cursors:
                continue
            self._cursors[race_id] = max(self._cursors[race_id], event.seq)
            for subscription in list(self._subscriptions.get(race_id, ())):
                try:
                    subscription.offer(event)
                except Exception:
                    log.exception("event hub: delivering event %d of race %s failed", event.seq, race_id)
