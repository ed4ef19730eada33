"""What anyone may look up about registered players: leaderboards, histories, stats and ratings."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from server.services.errors import ServiceError
from server.services.ratings import RatingPolicy, current_rating
from server.store import AccountRecord, PlayerStore, RaceStore, rating_of
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
        self, store: PlayerStore, races: RaceStore, policy: RatingPolicy, settle: Callable[[], Awaitable[object]] | None = None
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
        fields = await self.store.rating_fields(profile, player)
        stored = rating_of(fields)
        if stored is None:
            return None
        rating = current_rating(stored, await self.races.now_ms(), self.policy)
        return RatingInfo(
            rating=round(rating.rating),
            deviation=round(rating.deviation),
            games=stored.games,
            provisional=self.policy.provisional(rating.deviation),
        )

    async def leaderboard(self, profile: str, offset: int, limit: int) -> tuple[list[LeaderboardEntry], int]:
        """Leaderboard lines ``offset + 1`` to ``offset + limit`` and the number of players on it."""
        checked(profile)
        await self._settled()
        rows, total = await self.store.leaderboard(profile, offset, limit)
        entries = [
            LeaderboardEntry(
                rank=offset + index + 1,
                player=player,
                handle=fields.get("handle", "?"),
                bot=fields.get("bot") == "1",
                rating=round(float(fields.get("rating", 0))),
                deviation=round(float(fields.get("deviation", 0))),
                games=int(fields.get("games", 0)),
            )
            for index, (player, fields) in enumerate(rows)
        ]
        return entries, total

    async def own_line(self, profile: str, player: str) -> LeaderboardEntry | None:
        """The player's own leaderboard line, if it is on the leaderboard."""
        rank = await self.store.rank_of(profile, player)
        if rank is None:
            return None
        entries, _ = await self.leaderboard(profile, rank, 1)
        return entries[0] if entries else None

    async def history(self, player: str, offset: int, limit: int) -> tuple[list[HistoryItem], int]:
        """The player's finished races, newest first, each saying whether its record (the replay) is still kept."""
        await self._settled()
        items, total = await self.store.history(player, offset, limit)
        statuses = await self.races.statuses(item["race"] for item in items)
        kept = {race_id for race_id, (status, _created_at) in statuses.items() if status is not None}
        return [from_map(HistoryItem, {**item, "replay_available": item["race"] in kept}) for item in items], total

    async def stats(self, player: str) -> list[ProfileStats]:
        """The player's record in every profile it raced."""
        await self._settled()
        profiles = []
        for profile in Profile:
            fields = await self.store.stats(player, profile.value)
            if not fields:
                continue
            races = int(fields.get("races", 0))
            best = fields.get("best_clear_ms")
            profiles.append(
                ProfileStats(
                    profile=profile.value,
                    races=races,
                    wins=int(fields.get("wins", 0)),
                    losses=int(fields.get("losses", 0)),
                    draws=int(fields.get("draws", 0)),
                    clears=int(fields.get("clears", 0)),
                    best_clear_ms=None if best is None else int(best),
                    average_count=round(int(fields.get("foundations", 0)) / races, 2) if races else 0.0,
                    rating=await self.rating(profile.value, player),
                )
            )
        return profiles


def checked(profile: str) -> str:
    """A profile name; ``bad_field`` ``profile`` otherwise."""
    try:
        return Profile(profile).value
    except ValueError:
        raise ServiceError(ErrorCode.BAD_FIELD, f"profile must be one of {', '.join(p.value for p in Profile)}", field="profile") from None
