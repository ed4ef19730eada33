"""Live lobby lists: a snapshot for each watcher, then every change, from the lobby feed in Redis.

Every change of the lobby list is appended to one Redis Stream (the feed) by
the same script that changes the list, so any process's changes reach every
process. One reader task per process blocks on the feed and hands each change
to this process's watchers. A watcher registers *before* its snapshot is read
and buffers what arrives meanwhile, then takes only changes newer than the
snapshot: nothing is missed or repeated. If the reader loses Redis, it cannot
know what it missed, so every watcher gets a fresh snapshot (``lobby_reset``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from server.services.background import BackgroundLoop
from server.services.views import lobby_event
from server.store import LobbyChange, LobbyFeedReader, LobbyStore
from shared.protocol import LobbyEntry, LobbyEvent, LobbyReset, from_map

log = logging.getLogger(__name__)


def _feed_order(feed_id: str) -> tuple[int, int]:
    milliseconds, sequence = feed_id.split("-")
    return int(milliseconds), int(sequence)


class LobbyWatcher:
    """One connection watching the lobby: each change once, in feed order, after its snapshot."""

    def __init__(self, send: Callable[[LobbyEvent], None]) -> None:
        self.send = send
        self.last_id = "0-0"
        self._pending: list[LobbyChange] | None = []
        self._reset: tuple[str, LobbyReset] | None = None

    def offer(self, change: LobbyChange) -> None:
        """A change from the reader."""
        if self._pending is not None:
            self._pending.append(change)
        else:
            self._deliver(change)

    def caught_up(self, snapshot_id: str) -> None:
        """The snapshot (up to ``snapshot_id``) was sent: deliver what is newer, then go live."""
        self.last_id = snapshot_id
        if self._reset is not None and _feed_order(self._reset[0]) > _feed_order(snapshot_id):
            self.last_id, event = self._reset
            self.send(event)
        self._reset = None
        pending, self._pending = self._pending or [], None
        for change in pending:
            self._deliver(change)

    def reset(self, snapshot_id: str, event: LobbyReset) -> None:
        """Replace the watcher's list with a newer snapshot (sent after its first snapshot if that is still on its way)."""
        if self._pending is not None:
            self._reset = (snapshot_id, event)
            return
        self.last_id = snapshot_id
        self.send(event)

    def _deliver(self, change: LobbyChange) -> None:
        if _feed_order(change.feed_id) <= _feed_order(self.last_id):
            return
        self.last_id = change.feed_id
        self.send(lobby_event(change))


class LobbyFeed:
    """Fans the lobby feed out to this process's watchers."""

    def __init__(self, store: LobbyStore, reader: LobbyFeedReader, *, block_ms: int = 1000) -> None:
        self.store = store
        self.reader = reader
        self.block_ms = block_ms
        self._watchers: set[LobbyWatcher] = set()
        self._cursor: str | None = None
        self._loop = BackgroundLoop("lobby feed: reading")
        self.read_failures = 0
        """Failed reads of the feed so far (each one is followed by a fresh snapshot for every watcher)."""

    async def start(self) -> None:
        """Fix the reader's starting point; call before the first watcher can register."""
        self._cursor = await self.reader.latest_id()

    async def watch(self, watcher: LobbyWatcher, reply: Callable[[list[LobbyEntry]], None]) -> None:
        """Send the current list through ``reply``, then changes through the watcher."""
        self._watchers.add(watcher)
        try:
            snapshot_id, entries = await self.snapshot()
        except BaseException:
            self._watchers.discard(watcher)
            raise
        reply(entries)
        watcher.caught_up(snapshot_id)

    def unwatch(self, watcher: LobbyWatcher) -> None:
        """Stop sending changes to ``watcher``."""
        self._watchers.discard(watcher)

    async def snapshot(self) -> tuple[str, list[LobbyEntry]]:
        """The listed races, oldest first, and the id of the latest change they include."""
        snapshot_id, entries = await self.store.snapshot()
        return snapshot_id, [from_map(LobbyEntry, entry) for entry in entries]

    @property
    def reading(self) -> bool:
        """False from a failed read of the feed until a read succeeds again (``/ready``: this process's watchers
        are not being sent the lobby's changes meanwhile)."""
        return not self._loop.failing

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """Read the feed and dispatch until stopped; after a Redis failure, re-snapshot every watcher."""
        lost = self._cursor is None

        async def step() -> None:
            nonlocal lost
            if lost:
                await self._reset_watchers()
                lost = False
            assert self._cursor is not None
            self._dispatch(await self.reader.read(self._cursor, self.block_ms))

        def failed(_error: Exception) -> None:
            nonlocal lost
            self.read_failures += 1
            lost = True

        await self._loop.run(step, retry_seconds=0.5, on_failure=failed)

    def _dispatch(self, changes: list[LobbyChange]) -> None:
        """Offer each change to every watcher, in order."""
        for change in changes:
            self._cursor = change.feed_id
            for watcher in list(self._watchers):
                try:
                    watcher.offer(change)
                except Exception:
                    log.exception("lobby feed: delivering change %s failed", change.feed_id)

    async def _reset_watchers(self) -> None:
        """Continue from now: every watcher gets the whole list again (changes may have been missed)."""
        snapshot_id, entries = await self.snapshot()
        self._cursor = snapshot_id
        if not self._watchers:
            return
        event = LobbyReset(at=await self.store.now_ms(), races=entries)
        for watcher in list(self._watchers):
            watcher.reset(snapshot_id, event)
