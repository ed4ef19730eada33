"""What anyone may look up about registered players: leaderboards, histories, stats and ratings."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

from server.services.errors import ServiceError
from server.services.ratings import RatingPolicy, current_rating
from server.store import AccountRecord, InvalidCursor, PlayerRecords, RaceStore
from shared import Profile
from shared.protocol import (
    ErrorCode,
    HistoryItem,
    LeaderboardEntry,
    ProfileStats,
    RatingInfo,
    from_map,
)


class PlayerViews:
    """Read-only views of the players' books.

    ``settle`` books the finished races not booked yet (the booking loop's :meth:`PlayerBooks.book_once`): the
    leaderboard, a history and stats asked after a ``result`` arrived include that race, even when the booking loop
    (which runs every quarter second) has not got to it yet. Readings asked together share one settling that starts
    after they were asked (a burst of leaderboard reads after a result books it once, not once per read)."""

    def __init__(
        self, store: PlayerRecords, races: RaceStore, policy: RatingPolicy, settle: Callable[[], Awaitable[object]] | None = None
    ) -> None:
        self.store = store
        self.races = races
        self.policy = policy
        self.settle = settle
        self._settling: asyncio.Future[None] | None = None
        """The settling under way, if any."""
        self._next: asyncio.Future[None] | None = None
        """The settling that starts once the one under way is done, shared by the readings asked meanwhile."""

    async def _settled(self) -> None:
        """Book what is finished but not booked yet, so a reading after a result shows it: join the next settling
        not started yet (one starting after this call), or start one."""
        if self.settle is None:
            return
        if self._next is None or self._next.done():  # (done: cancelled before it started, at shutdown)
            self._next = asyncio.ensure_future(self._settle_after(self._settling))
            self._next.add_done_callback(lambda done: done.cancelled() or done.exception())  # retrieved even if all readers left
        await asyncio.shield(self._next)

    async def _settle_after(self, previous: asyncio.Future[None] | None) -> None:
        if previous is not None:
            await asyncio.wait([previous])  # its outcome is its own readers'
        assert self.settle is not None
        this, self._next = self._next, None  # who asks from now on waits for a settling after this one
        self._settling = this
        try:
            await self.settle()
        finally:
            if self._settling is this:
                self._settling = None

    async def account(self, handle: str) -> AccountRecord:
        """The account of ``handle``; ``unknown_account`` if nobody registered it."""
        account = await self.store.account(handle)
        if account is None:
            raise ServiceError(ErrorCode.UNKNOWN_ACCOUNT, f"nobody registered the handle {handle!r}", field="handle")
        return account

    async def rating(self, profile: str, player: str) -> RatingInfo | None:
        """The player's current rating of ``profile`` (deviation grown with inactivity); None if never rated."""
        (stored,) = await self.store.ratings(profile, [player])
        if stored is None:
            return None
        rating = current_rating(stored, await self.races.now_ms(), self.policy)
        return RatingInfo(
            rating=round(rating.rating),
            deviation=round(rating.deviation),
            games=stored.games,
            provisional=self.policy.provisional(rating.deviation),
        )

    async def leaderboard(self, profile: str, limit: int, *, offset: int = 0, after: str | None = None) -> tuple[list[LeaderboardEntry], int, str | None]:
        """``limit`` leaderboard lines after the cursor ``after`` (else from ``offset``), the number of players on it,
        and the next page's cursor (None: the last page)."""
        checked(profile)
        await self._settled()
        with _cursor_checked("after"):
            page = await self.store.leaderboard(profile, limit, offset=offset, after=after)
        entries = [
            LeaderboardEntry(
                rank=page.first_rank + index, player=line.player, handle=line.handle, bot=line.bot, rating=round(line.rating),
                deviation=round(line.deviation), games=line.games,
            )
            for index, line in enumerate(page.lines)
        ]  # fmt: skip
        return entries, page.total, page.next

    async def own_line(self, profile: str, player: str) -> LeaderboardEntry | None:
        """The player's own leaderboard line, if it is on the leaderboard."""
        rank = await self.store.rank_of(profile, player)
        if rank is None:
            return None
        entries, _, _ = await self.leaderboard(profile, 1, offset=rank)
        return entries[0] if entries else None

    async def history(self, player: str, limit: int, *, offset: int = 0, before: str | None = None) -> tuple[list[HistoryItem], int, str | None]:
        """``limit`` of the player's finished races older than the cursor ``before`` (else from ``offset``), newest
        first, each saying whether it still replays (kept in Redis or archived); their number; the next page's cursor."""
        await self._settled()
        with _cursor_checked("before"):
            page = await self.store.history(player, limit, offset=offset, before=before)
        kept = await self.races.replayable(item["race"] for item in page.items)
        items = [from_map(HistoryItem, {**item, "replay_available": item["race"] in kept}) for item in page.items]
        return items, page.total, page.next

    async def stats(self, player: str) -> list[ProfileStats]:
        """The player's record in every profile it raced."""
        await self._settled()
        profiles = []
        for profile in Profile:
            stats = await self.store.stats(player, profile.value)
            if stats is None:
                continue
            profiles.append(
                ProfileStats(
                    profile=profile.value, races=stats.races, wins=stats.wins, losses=stats.losses, draws=stats.draws,
                    clears=stats.clears, best_clear_ms=stats.best_clear_ms,
                    average_count=round(stats.foundations / stats.races, 2) if stats.races else 0.0,
                    rating=await self.rating(profile.value, player),
                )
            )  # fmt: skip
        return profiles


@contextmanager
def _cursor_checked(name: str) -> Iterator[None]:
    """A page cursor the store did not make is the request's ``bad_field``."""
    try:
        yield
    except InvalidCursor as error:
        raise ServiceError(ErrorCode.BAD_FIELD, f"{name}: {error} (use a reply's next)", field=name) from None


def checked(profile: str) -> str:
    """A profile name; ``bad_field`` ``profile`` otherwise."""
    try:
        return Profile(profile).value
    except ValueError:
        raise ServiceError(ErrorCode.BAD_FIELD, f"profile must be one of {', '.join(p.value for p in Profile)}", field="profile") from None
