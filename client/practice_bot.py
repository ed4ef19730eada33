"""The practice bot: a player that races through the ordinary protocol, with the solver at a chosen strength.

Level 1 plays like a beginner (often a random legal move, a short search, slow), level 5 like an expert (it
follows the solver's winning line when the solver finds one, quickly). Between moves it waits a human-like
time (a log-normal spread around the level's pace), so a person racing it sees a plausible opponent. It plays
as a registered **bot** account: every view labels it a bot, and it is rated only in races that say so.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from client.race_client import ConnectionLost, Incoming, RaceClient, Resumed, ServerError
from shared import Board, Move, Rules, Status, move_text
from shared.protocol import AttemptEnded, Countdown, Moved, RaceEvent, RaceResult, Started, Synced
from shared.race import board_from_layout, play_reported, replay_reported
from shared.solver import Budget, Verdict, hint, solve


@dataclass(frozen=True, slots=True)
class BotLevel:
    """How strong and how fast the bot plays."""

    level: int
    seconds_per_move: float
    """Mean time between two moves (before the pace factor)."""
    search_seconds: float
    """Solver budget when it plans."""
    accuracy: float
    """Chance of playing the planned move rather than a random legal one."""


LEVELS: dict[int, BotLevel] = {
    1: BotLevel(1, 3.0, 0.05, 0.40),
    2: BotLevel(2, 2.4, 0.10, 0.60),
    3: BotLevel(3, 1.8, 0.25, 0.80),
    4: BotLevel(4, 1.3, 0.50, 0.92),
    5: BotLevel(5, 1.0, 1.00, 1.00),
}
"""The five levels (docs/PLAYERS.md "Practice bot")."""
GIVE_UP_AFTER = 60
"""Moves without a new card on the foundations after which the bot declares itself ``stuck``."""


@dataclass(slots=True)
class BotBrain:
    """Chooses the bot's next move on its own board."""

    level: BotLevel
    rng: random.Random = field(default_factory=random.Random)
    plan: list[Move] = field(default_factory=list)

    def choose(self, board: Board) -> Move | None:
        """The next move, or None when the bot has nothing (sensible) left to play. Runs the solver: call it off the loop."""
        legal = board.legal_moves()
        if not legal:
            return None
        if self.rng.random() >= self.level.accuracy:
            self.plan = []  # a slip: the old plan no longer fits the board
            return self.rng.choice(legal)
        if self.plan and self.plan[0] in legal:
            return self.plan.pop(0)
        budget = Budget(seconds=self.level.search_seconds)
        result = solve(board, budget)
        if result.verdict is Verdict.SOLVED and result.moves:
            self.plan = list(result.moves[1:])
            return result.moves[0]
        self.plan = []
        return hint(board, Budget(seconds=self.level.search_seconds / 2)).move


Mover = Callable[[Countdown], Coroutine[Any, Any, None]]
"""What plays a seat's moves from the start on, given the race's countdown (its layout)."""

Resumer = Callable[[Synced, Moved | None], Coroutine[Any, Any, None]]
"""What plays a seat's moves on after a reconnect, from the seat as the server has it (``synced``) and the reply to
the move that was in flight at the drop and was resent (or None)."""

RECONNECT_ATTEMPTS = 40
"""Rounds of reconnecting a resuming seat tries (about two minutes: a server restart, a failover)."""


async def _items(client: RaceClient, *, follow: bool) -> AsyncIterator[Incoming | Resumed]:
    """The client's events; with ``follow`` across reconnects (RaceClient.follow), else until the connection ends."""
    if follow:
        async for item in client.follow(attempts=RECONNECT_ATTEMPTS):
            yield item
        raise ConnectionLost(None, "the client was closed")
    while True:
        yield await client.next_event(timeout=3600)


async def play_seat(client: RaceClient, race_id: str, slot: int, mover: Mover, *, resume: Resumer | None = None) -> RaceResult:
    """Follow a seat's race until its result: ``mover`` runs from the start until the seat's attempt ends (the practice
    bot's and the ghost's loop). With ``resume`` the seat outlives its connection: when the server goes away (a
    restart, a drain, a lost network) the client reconnects with its session and the seat's moves go on through
    ``resume`` from the position the server stored; without it ConnectionLost ends the seat."""
    seat = _Seat(race_id, slot, mover, resume)
    try:
        async for item in _items(client, follow=resume is not None):
            if isinstance(item, Resumed):
                seat.resumed(item)
            elif isinstance(item, RaceEvent) and item.race == race_id:
                result = seat.event(item)
                if result is not None:
                    return result
        raise ConnectionLost(None, "the connection ended")  # not reached: the events end by raising ConnectionLost
    finally:
        if seat.moving is not None:
            seat.moving.cancel()


@dataclass(slots=True)
class _Seat:
    """The seat :func:`play_seat` follows: the countdown's deal, and the task making its moves while its attempt runs."""

    race_id: str
    slot: int
    mover: Mover
    resume: Resumer | None
    countdown: Countdown | None = None
    moving: asyncio.Task[None] | None = None
    ended: bool = False

    def resumed(self, item: Resumed) -> None:
        """After a reconnect: the moves start again from the position the server stored (while the attempt runs)."""
        synced = item.synced.get(self.race_id)
        if self.resume is not None and self.moving is not None and synced is not None and not self.ended:
            self.moving.cancel()
            self.moving = asyncio.create_task(self.resume(synced, item.resent.get(self.race_id)))

    def event(self, item: RaceEvent) -> RaceResult | None:
        """One event of the race: the moves start at the start and stop when the seat's attempt ends; the result."""
        if isinstance(item, Countdown):
            self.countdown = item
        elif isinstance(item, Started) and self.countdown is not None and self.moving is None:
            self.moving = asyncio.create_task(self.mover(self.countdown))
        elif isinstance(item, AttemptEnded) and item.slot == self.slot and self.moving is not None:
            self.ended = True
            self.moving.cancel()
        elif isinstance(item, RaceResult):
            return item
        return None


def board_of(countdown: Countdown, rules: Rules) -> Board:
    """The bot's board from the deal of the countdown (columns and bouquet: the seed is hidden until the result)."""
    return board_from_layout(countdown.columns, countdown.bouquet, rules)


def board_resumed(synced: Synced, resent: Moved | None, rules: Rules) -> Board:
    """The seat's board after a reconnect: the deal with the seat's stored actions replayed, and the move resent
    at the reconnect if the server applied it only then (its ``seq`` is the next action's number)."""
    if synced.deal is None:
        raise ConnectionLost(None, f"race {synced.race.race} has no deal to resume from")
    board = replay_reported(synced.deal.columns, synced.deal.bouquet, rules, list(synced.moves), synced.redeal_columns)
    if resent is not None and resent.seq == len(synced.moves) + 1:
        play_reported(board, resent.move, resent.columns)
    return board


class PracticeBot:
    """Plays one seat of a race with a :class:`BotBrain`, paced like a person (``pace`` scales the waits; 0: none)."""

    def __init__(self, client: RaceClient, brain: BotBrain, *, pace: float = 1.0, say: Callable[[str], None] | None = None) -> None:
        self.client = client
        self.brain = brain
        self.pace = pace
        self.say = say or (lambda text: None)

    def _think_time(self) -> float:
        return self.pace * self.brain.level.seconds_per_move * self.brain.rng.lognormvariate(0.0, 0.35)

    async def play(self, race_id: str, slot: int, rules: Rules, *, reconnect: bool = False) -> RaceResult:
        """Play the seat until the race has a result, and return it; with ``reconnect`` across server restarts
        (``flowergarden bot``; the server's own bots end with their server)."""

        async def resume(synced: Synced, resent: Moved | None) -> None:
            await self._moves(race_id, board_resumed(synced, resent, rules))

        return await play_seat(
            self.client, race_id, slot, lambda countdown: self._moves(race_id, board_of(countdown, rules)),
            resume=resume if reconnect else None,
        )

    async def _moves(self, race_id: str, board: Board) -> None:
        """Think, wait, move — until no move is left, the bot gives up (``stuck``), or the attempt ends."""
        best, since_progress = board.foundation_count, 0
        try:
            while True:
                started = time.monotonic()
                move = await asyncio.to_thread(self.brain.choose, board.copy())
                await asyncio.sleep(max(0.0, self._think_time() - (time.monotonic() - started)))
                if move is None or since_progress >= GIVE_UP_AFTER:
                    self.say("no progress left: declaring stuck")
                    await self.client.stuck(race_id)
                    return
                moved = await self.client.move(race_id, move_text(move))
                play_reported(board, moved.move, moved.columns)
                if board.foundation_count > best:
                    best, since_progress = board.foundation_count, 0
                else:
                    since_progress += 1
                if moved.status is not Status.PLAYING:
                    return
        except ServerError as error:  # the attempt or the race ended meanwhile
            self.say(f"stopped: {error.code}")
        except ConnectionLost:  # the server went away: a reconnecting seat goes on from what the server stored
            self.say("the connection dropped")


