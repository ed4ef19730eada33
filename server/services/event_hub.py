"""Delivery of race events from the races' Redis Streams to this process's recipients.

Every change of a race appends to its stream inside the same Lua script, so the stream is the single ordered
truth; the script also publishes the event on the race's pub/sub channel. This process subscribes to the
channel of each race it has recipients for, so the cost of an event is one message to each process that
follows that race, whatever the number of other live races (the old design named every stream in one
blocking XREAD, whose cost grew with the number of races).

Per race, a :class:`RaceFeed` keeps the events received live since the subscription was confirmed (once, for
every recipient of the race in this process) and knows ``base``: every event after it is in its buffer. A
recipient (:class:`Subscription`) is *live* when it has everything up to ``base``: it is then served from the
buffer, each event exactly once and in sequence order. Otherwise it *catches up* from the stream in pages of
:data:`PAGE_EVENTS`, each read only once its connection's outgoing queue has room again, so a client that
missed thousands of events is paced by its own socket instead of overflowing its outbox (issue 17 §2).

Spectators get each event no earlier than its time plus the race's spectator delay (fair play). Delayed
events are released from the feed's one shared buffer by a timer, never copied per spectator; a spectator
whose next event has left the buffer (more than :data:`MAX_BUFFERED` events in its delay) reads it from the
stream when it is due. Pub/sub loses what is published while the connection is down: every (re)confirmed
subscription therefore starts a new generation, whose recipients all catch up from the stream again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

from server import metrics
from server.services.background import BackgroundLoop, Backoff
from server.services.clock import ServerClock
from server.services.views import event_for, shown_live
from server.store import (
    AnyRaceChannels,
    LiveEvent,
    RaceStore,
    StoredEvent,
    StoreError,
    Subscribed,
    UndecodableEvent,
)
from shared.protocol import PlayerJoined, RaceEvent

log = logging.getLogger(__name__)

PAGE_EVENTS = 64
"""Events read from the stream at once while catching up (then the connection must drain before the next page)."""
MAX_BUFFERED = 512
"""Events a race's feed holds for its delayed spectators at most; beyond that they read from the stream."""
IDLE_FEED_SECONDS = 5.0
"""A race's channel stays subscribed this long after its last recipient left (watch/unwatch churn is cheap)."""
RETRY_SECONDS = 0.5


async def always_room() -> None:
    """The pacing of a recipient without an outgoing queue: never wait."""


class Subscription:
    """One recipient's view of one race: delivers each event once, in sequence order, cut down for its seat.

    With ``delay_ms`` (spectators) each event is sent no earlier than the server time ``event.at + delay_ms``.
    ``room`` returns once the recipient's outgoing queue can take a page of catch-up events. A player's
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
        room: Callable[[], Awaitable[None]] = always_room,
        seat: tuple[str, int] | None = None,
        on_unseated: Callable[[], None] | None = None,
    ) -> None:
        if delay_ms > 0 and clock is None:
            raise ValueError("a delayed subscription needs the server clock")
        self.race_id = race_id
        self.viewer_slot = viewer_slot
        self.send = send
        self.last_seq = after_seq
        """The last event delivered (or skipped as asked by ``after_seq``)."""
        self.delay_ms = delay_ms
        self.clock = clock
        self.room = room
        self.seat = seat
        self.on_unseated = on_unseated
        self.live = False
        """Served from the feed's buffer (else catching up from the stream)."""
        self.closed = False
        self.catch_up: asyncio.Task[None] | None = None

    def wait_ms(self, event: StoredEvent) -> float:
        """How long ``event`` must still be held (0 or less: send now): until the server time ``at + delay_ms``."""
        if self.delay_ms <= 0 or isinstance(event, UndecodableEvent):
            return 0
        assert self.clock is not None
        return event.at + self.delay_ms - self.clock.now_ms()

    def deliver(self, event: StoredEvent) -> None:
        """Send ``event`` unless it was delivered already (or the subscription is closed)."""
        if self.closed or event.seq <= self.last_seq:
            return
        self.last_seq = event.seq
        if isinstance(event, UndecodableEvent):
            return  # counted and logged by the store when it read it; its place in the sequence is passed
        if self._unseats(event):
            self.close()
            if self.on_unseated is not None:
                self.on_unseated()
            return
        if not shown_live(event, self.viewer_slot):
            return  # its place in the sequence is passed: nothing after it is held back
        message = event_for(event, self.viewer_slot)
        self.send(message)
        if self.clock is not None:  # how long after it was stored (beyond the delay) the event went out
            metrics.event_delivered(self.viewer_slot is not None, (self.clock.now_ms() - message.at - self.delay_ms) / 1000)

    def _unseats(self, event: RaceEvent) -> bool:
        """Whether ``event`` gives this subscription's seat to another player (after the subscriber held it)."""
        if self.seat is None or not isinstance(event, PlayerJoined):
            return False
        player, seated_at = self.seat
        return event.seq > seated_at and event.slot == self.viewer_slot and event.player != player

    def close(self) -> None:
        """Deliver nothing more."""
        self.closed = True
        if self.catch_up is not None:
            self.catch_up.cancel()


class RaceFeed:
    """This process's live events of one race, shared by all its recipients here.

    ``buffer`` holds consecutive events; once ``base`` is known, every event after ``base`` received so far is
    in it. Recipients that are live all have ``last_seq >= base``.
    """

    def __init__(self, race_id: str) -> None:
        self.race_id = race_id
        self.subscribers: set[Subscription] = set()
        self.buffer: deque[StoredEvent] = deque()
        self.base: int | None = None
        self.confirmed = False
        """Redis confirmed the subscription of the current generation: events published from then on arrive."""
        self.generation = 0
        self.ready = asyncio.Event()
        """Set once ``base`` is known for the current generation."""
        self.idle_since: float | None = time.monotonic()
        self.release_timer: asyncio.TimerHandle | None = None
        self.release_at = 0.0

    def index_of(self, seq: int) -> int:
        """Position of event ``seq`` in the buffer (may lie outside it)."""
        return seq - self.buffer[0].seq if self.buffer else 0

    def live_subscribers(self) -> list[Subscription]:
        """Recipients served from the buffer."""
        return [subscription for subscription in self.subscribers if subscription.live]


class EventHub:
    """Fans out the events of every race that has a recipient in this process (one channel per race)."""

    def __init__(self, store: RaceStore, channels: AnyRaceChannels, clock: ServerClock | None = None) -> None:
        self.store = store
        self.channels = channels
        self.clock = clock
        self._feeds: dict[str, RaceFeed] = {}
        self._to_listen: set[str] = set()
        self._to_forget: set[str] = set()
        self._control = asyncio.Event()
        self._background: set[asyncio.Task[None]] = set()
        self._running = True
        self._reading = BackgroundLoop("event hub: reading the race channels")
        self._subscribing = BackgroundLoop("event hub: subscribing to race channels")

    # --- recipients -------------------------------------------------------------------------------

    def subscribe(self, subscription: Subscription) -> None:
        """Start delivering a race's events after ``subscription.last_seq``; sends nothing before this returns
        unless the race's feed already holds them (so a reply sent before this call comes first)."""
        feed = self._feeds.get(subscription.race_id)
        if feed is None:
            feed = self._feeds[subscription.race_id] = RaceFeed(subscription.race_id)
            self._request_listen(feed.race_id)
        feed.subscribers.add(subscription)
        feed.idle_since = None
        if feed.ready.is_set() and feed.base is not None and subscription.last_seq >= feed.base:
            self._go_live(feed, subscription)
        else:
            self._start_catch_up(feed, subscription)

    def deliver_next(self, subscription: Subscription, event: StoredEvent) -> None:
        """Deliver ``event`` now if it is exactly the next one ``subscription`` is owed and may have at once (live,
        not delayed): a mover's own ``move`` event then goes out with the ``moved`` reply, in the same write, instead
        of a separate frame when the race's channel brings it. Otherwise, or if it came already, the feed delivers it
        as usual; :meth:`Subscription.deliver` skips what a recipient has, so nothing is sent twice or out of order."""
        if subscription.live and subscription.delay_ms <= 0 and event.seq == subscription.last_seq + 1:
            subscription.deliver(event)

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop delivering to ``subscription``."""
        subscription.close()
        feed = self._feeds.get(subscription.race_id)
        if feed is None:
            return
        feed.subscribers.discard(subscription)
        if not feed.subscribers:
            feed.idle_since = time.monotonic()
        self._trim(feed)

    def feed_count(self) -> int:
        """Races whose channel this process follows (for tests and metrics)."""
        return len(self._feeds)

    def buffered_events(self) -> int:
        """Events held in all feeds' buffers (for tests and metrics)."""
        return sum(len(feed.buffer) for feed in self._feeds.values())

    # --- catching up from the stream --------------------------------------------------------------

    def _start_catch_up(self, feed: RaceFeed, subscription: Subscription) -> None:
        subscription.live = False
        if subscription.catch_up is None or subscription.catch_up.done():
            subscription.catch_up = asyncio.create_task(self._catch_up(feed, subscription), name=f"catch-up {feed.race_id}")

    async def _catch_up(self, feed: RaceFeed, subscription: Subscription) -> None:
        """Deliver from the stream, a page at a time as the connection drains, until the feed's buffer covers the rest."""
        backoff = Backoff(RETRY_SECONDS)
        while not subscription.closed:
            await feed.ready.wait()
            if feed.base is None:
                continue
            if subscription.last_seq >= feed.base:
                self._go_live(feed, subscription)
                return
            try:
                await subscription.room()
                if feed.base is not None and feed.base - subscription.last_seq <= PAGE_EVENTS and await self._extend_back(feed, subscription.last_seq):
                    continue
                page = await self.store.events_after(feed.race_id, subscription.last_seq, PAGE_EVENTS)
            except StoreError as error:
                log.warning("event hub: catching up race %s failed (%s); retrying", feed.race_id, error)
                await asyncio.sleep(backoff.next_delay())
                continue
            backoff.reset()
            if not page:  # nothing after it in the stream (an expired stream, an ``after`` beyond its end)
                self._go_live(feed, subscription)
                return
            for event in page:
                wait_ms = subscription.wait_ms(event)
                if wait_ms > 0:  # the rest is not due: hold it in the shared buffer if it fits, else read it when due
                    if await self._hold_back(feed, subscription):
                        break
                    await asyncio.sleep(wait_ms / 1000)
                    break
                subscription.deliver(event)

    async def _hold_back(self, feed: RaceFeed, subscription: Subscription) -> bool:
        """For a delayed recipient whose next event is not due: bring the events up to the feed's base into the
        shared buffer (released from there by the timer, so nothing is sent early nor all at once)."""
        base = feed.base
        if not feed.ready.is_set() or base is None:
            return False
        if subscription.last_seq >= base:
            return True
        if base - subscription.last_seq + len(feed.buffer) > MAX_BUFFERED:
            return False
        try:
            return await self._extend_back(feed, subscription.last_seq)
        except StoreError:
            return False

    async def _extend_back(self, feed: RaceFeed, after: int) -> bool:
        """Read the events between ``after`` and the feed's base into the feed (one read, shared by every recipient
        of the race: a late spectator, or a player back after a short drop, then goes live). False if the stream
        does not hold them all (the caller reads it page by page instead)."""
        base, generation = feed.base, feed.generation
        assert base is not None
        missing = await self.store.events_after(feed.race_id, after, base - after)
        if feed.generation != generation or feed.base != base or not feed.ready.is_set():
            return True  # the feed moved on meanwhile: look again
        if [event.seq for event in missing] != list(range(after + 1, base + 1)):
            return False
        feed.buffer.extendleft(reversed(missing))
        feed.base = after
        return True

    def _go_live(self, feed: RaceFeed, subscription: Subscription) -> None:
        if subscription.closed:
            return
        subscription.live = True
        subscription.catch_up = None
        self._pump(feed, subscription)
        self._schedule_release(feed)
        self._trim(feed)

    # --- live delivery ------------------------------------------------------------------------------

    def _pump(self, feed: RaceFeed, subscription: Subscription) -> None:
        """Send a live recipient the buffered events after its last one that are due."""
        if not feed.buffer:
            return
        index = max(0, feed.index_of(subscription.last_seq + 1))
        while index < len(feed.buffer) and not subscription.closed:
            event = feed.buffer[index]
            if subscription.wait_ms(event) > 0:
                return
            try:
                subscription.deliver(event)
            except Exception:
                log.exception("event hub: delivering event %d of race %s failed", event.seq, feed.race_id)
            index += 1

    def _on_event(self, feed: RaceFeed, event: StoredEvent) -> None:
        if not feed.confirmed:
            return  # published before this generation's subscription: the catch-up reads it from the stream
        expected = feed.buffer[-1].seq + 1 if feed.buffer else (None if feed.base is None else feed.base + 1)
        if expected is not None and event.seq < expected:
            return
        if expected is not None and event.seq > expected:  # cannot happen on one connection; recover all the same
            log.warning("event hub: race %s jumped from event %d to %d; catching up from the stream", feed.race_id, expected - 1, event.seq)
            feed.buffer.clear()
            feed.base = event.seq - 1
            for subscription in feed.live_subscribers():
                if subscription.last_seq < feed.base:
                    self._start_catch_up(feed, subscription)
        feed.buffer.append(event)
        if not feed.ready.is_set():
            return
        for subscription in feed.live_subscribers():
            self._pump(feed, subscription)
        self._schedule_release(feed)
        self._trim(feed)

    def _schedule_release(self, feed: RaceFeed) -> None:
        """Arm the feed's timer for the earliest held event of its delayed live recipients."""
        earliest: float | None = None
        for subscription in feed.live_subscribers():
            if subscription.delay_ms <= 0:
                continue
            index = max(0, feed.index_of(subscription.last_seq + 1))
            if index < len(feed.buffer):
                wait = subscription.wait_ms(feed.buffer[index])
                earliest = wait if earliest is None else min(earliest, wait)
        if earliest is None:
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + max(0, earliest) / 1000
        if feed.release_timer is not None and not feed.release_timer.cancelled() and feed.release_at <= when:
            return
        if feed.release_timer is not None:
            feed.release_timer.cancel()
        feed.release_at = when
        feed.release_timer = loop.call_at(when, self._release, feed)

    def _release(self, feed: RaceFeed) -> None:
        feed.release_timer = None
        for subscription in feed.live_subscribers():
            if subscription.delay_ms > 0:
                self._pump(feed, subscription)
        self._schedule_release(feed)
        self._trim(feed)

    def _trim(self, feed: RaceFeed) -> None:
        """Drop buffered events that every recipient has (a recipient still catching up will want the later ones once
        it reaches them); past :data:`MAX_BUFFERED`, the oldest regardless (who needed them reads the stream)."""
        if feed.base is None or not feed.ready.is_set():
            return
        needed = min((subscription.last_seq for subscription in feed.subscribers), default=None)
        overflow = False
        while feed.buffer and ((needed is None or feed.buffer[0].seq <= needed) or len(feed.buffer) > MAX_BUFFERED):
            overflow = overflow or (needed is not None and feed.buffer[0].seq > needed)
            feed.base = max(feed.base, feed.buffer.popleft().seq)
        if overflow:
            for subscription in feed.live_subscribers():
                if subscription.last_seq < feed.base:
                    self._start_catch_up(feed, subscription)

    # --- the channel connection ------------------------------------------------------------------------

    def _request_listen(self, race_id: str) -> None:
        self._to_forget.discard(race_id)
        self._to_listen.add(race_id)
        self._control.set()

    def _on_subscribed(self, feed: RaceFeed) -> None:
        """A (re)confirmed subscription: a new generation; everyone catches up from the stream to the new base."""
        feed.generation += 1
        feed.confirmed = True
        feed.buffer.clear()
        feed.base = None
        feed.ready.clear()
        for subscription in feed.live_subscribers():
            self._start_catch_up(feed, subscription)
        self._spawn(self._establish_base(feed, feed.generation))

    async def _establish_base(self, feed: RaceFeed, generation: int) -> None:
        """Read the stream's last page after the subscription was confirmed: every later event arrives live, so the
        buffer then holds everything after the page's first event (recent joiners start live from it)."""
        backoff = Backoff(RETRY_SECONDS)
        while self._running and feed.generation == generation:
            try:
                tail = await self.store.last_events(feed.race_id, PAGE_EVENTS)
            except StoreError as error:
                log.warning("event hub: reading the end of race %s failed (%s); retrying", feed.race_id, error)
                await asyncio.sleep(backoff.next_delay())
                continue
            if feed.generation != generation:
                return
            last = tail[-1].seq if tail else 0
            arrived = [event for event in feed.buffer if event.seq > last]
            if arrived and arrived[0].seq != last + 1:  # cannot happen (published after the read); keep what is sure
                tail = []
                last = arrived[0].seq - 1
            feed.buffer = deque([*tail, *arrived])
            feed.base = tail[0].seq - 1 if tail else last
            feed.ready.set()
            for subscription in feed.live_subscribers():
                self._pump(feed, subscription)
            return

    def _lost_connection(self) -> None:
        """Every subscription is gone with the connection: all recipients wait for the next generation."""
        for feed in self._feeds.values():
            feed.confirmed = False
            feed.ready.clear()
            feed.buffer.clear()
            feed.base = None
            for subscription in feed.live_subscribers():
                self._start_catch_up(feed, subscription)
        self._to_forget.clear()
        self._to_listen = set(self._feeds)
        self._control.set()

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @property
    def reading(self) -> bool:
        """False from a failed read of (or subscription to) the race channels until one succeeds again (``/ready``:
        this process's players and spectators are not being sent their races' events meanwhile)."""
        return not (self._reading.failing or self._subscribing.failing)

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._running = False
        self._reading.stop()
        self._subscribing.stop()
        self._control.set()

    async def run(self) -> None:
        """Read the channels and dispatch until stopped; survives Redis outages (recipients catch up afterwards)."""
        control = asyncio.create_task(
            self._subscribing.run(self._subscribe_once, retry_seconds=RETRY_SECONDS, on_failure=self._channels_failed),
            name="event hub subscriptions",
        )
        try:
            await self._reading.run(self._read_once, retry_seconds=RETRY_SECONDS, on_failure=self._channels_failed)
        finally:
            control.cancel()
            for task in list(self._background):
                task.cancel()
            for feed in self._feeds.values():
                for subscription in feed.subscribers:
                    subscription.close()
                if feed.release_timer is not None:
                    feed.release_timer.cancel()

    async def _read_once(self) -> None:
        """Dispatch what arrived on the channels (waiting up to a second for it)."""
        for message in await self.channels.read(timeout=1.0):
            feed = self._feeds.get(message.race_id)
            if feed is None:
                continue
            if isinstance(message, Subscribed):
                self._on_subscribed(feed)
            elif isinstance(message, LiveEvent):
                self._on_event(feed, message.event)

    def _channels_failed(self, error: Exception) -> None:
        """The channel connection failed: drop it; every race is subscribed again and its recipients catch up."""
        self._lost_connection()
        self.channels.drop()

    async def _subscribe_once(self) -> None:
        """Send SUBSCRIBE/UNSUBSCRIBE as races gain their first recipient or stay without one."""
        try:
            async with asyncio.timeout(IDLE_FEED_SECONDS / 2):
                await self._control.wait()
        except TimeoutError:
            pass
        self._control.clear()
        self._forget_idle_feeds()
        listen, forget = sorted(self._to_listen), sorted(self._to_forget)
        self._to_listen, self._to_forget = set(), set()
        await self.channels.forget(forget)
        await self.channels.listen(listen)

    def _forget_idle_feeds(self) -> None:
        now = time.monotonic()
        for race_id, feed in list(self._feeds.items()):
            if feed.idle_since is not None and now - feed.idle_since >= IDLE_FEED_SECONDS:
                del self._feeds[race_id]
                if feed.release_timer is not None:
                    feed.release_timer.cancel()
                self._to_listen.discard(race_id)
                self._to_forget.add(race_id)
