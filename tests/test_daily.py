"""The daily deal on a real Redis with a clock the test sets: one counted attempt per account and day, nothing of
anybody else's attempt visible before the day ends, then the reveal, the leaderboard, the replays, the archive."""

from __future__ import annotations

from daily_helpers import TestClock, daily_server
from lobby_helpers import refused
from player_helpers import new_handle, registered
from race_helpers import player
from winning_lines import winning_deal

from server.app import RaceServer
from server.store import deal_texts
from shared import Profile
from shared.commitment import line_digest, verify_commitment
from shared.daily import DAY_MS, day_of, day_start
from shared.protocol import AttemptState, Difficulty

__all__ = ["daily_server"]  # the fixture


async def test_two_accounts_play_the_day_once_each_and_nothing_shows_until_the_day_ends(daily_server: tuple[RaceServer, TestClock]) -> None:
    server, clock = daily_server
    seed, line = winning_deal()
    ann_handle, bob_handle = new_handle("ann"), new_handle("bob")
    ann, bob, gus = await registered(server.url, ann_handle), await registered(server.url, bob_handle), await player(server.url, "Gus")
    day = day_of(clock.now)
    try:
        info = await ann.daily()
        assert info.day == day and not info.over and info.seed is None and info.proving_line is None and info.top is None
        assert info.difficulty is Difficulty.MEDIUM and len(info.commitment) == 64 and info.own is None

        attempt = await ann.daily_start()
        assert attempt.counted and (attempt.columns, attempt.bouquet) == deal_texts(seed) and attempt.moves == []
        assert attempt.deadline == clock.now + 900_000
        for number, move in enumerate(line):
            clock.now += 1000
            moved = await ann.daily_move(attempt.attempt, number, move)
        assert moved.result.state is AttemptState.CLEARED and moved.result.time_ms == 1000 * len(line)
        with refused("daily_attempt_used"):
            await ann.daily_start()

        bobs = await bob.daily_start()
        await bob.daily_move(bobs.attempt, 0, line[0])
        with refused("undo_not_allowed"):
            await bob.daily_move(bobs.attempt, 1, "undo")
        with refused("out_of_sequence"):
            await bob.daily_move(bobs.attempt, 0, line[1])
        with refused("unknown_attempt"):
            await ann.daily_move(bobs.attempt, 1, line[1])  # nobody plays another's attempt
        resumed = await bob.daily_start()  # the same attempt, where it stood
        assert resumed.attempt == bobs.attempt and resumed.moves == [line[0]]
        clock.now += 5000
        stopped = await bob.daily_stop(bobs.attempt)
        assert stopped.result.state is AttemptState.RESIGNED and stopped.result.time_ms == 5000

        guests = await gus.daily_start()
        assert not guests.counted
        assert (await gus.daily_start()).attempt != guests.attempt  # a guest plays as often as it likes, uncounted

        # Before the day ends: nothing of anybody else's attempt, not the seed, not the leaderboard.
        with refused("daily_not_over"):
            await bob.daily_board(day)
        with refused("daily_not_over"):
            await bob.daily_replay(day, ann_handle)
        assert (await bob.daily_replay(day)).moves == [line[0]]  # one's own attempt, at any time
        seen = await bob.daily()
        assert seen.seed is None and seen.top is None and seen.stats is None and seen.own is not None
        assert seen.own.state is AttemptState.RESIGNED

        clock.now = day_start(day) + DAY_MS + 1000  # the next day
        revealed = await bob.daily(day)
        assert revealed.over and revealed.seed == seed and revealed.salt is not None and revealed.proving_line is not None
        salt = bytes.fromhex(revealed.salt)
        assert verify_commitment(revealed.commitment, seed, Profile.CLASSIC, salt, line_digest(revealed.proving_line))
        assert revealed.commitment == info.commitment
        assert revealed.top is not None and [entry.handle for entry in revealed.top] == [ann_handle, bob_handle]
        assert revealed.stats is not None and (revealed.stats.players, revealed.stats.cleared) == (2, 1)
        minute = 1000 * len(line) // 60_000
        assert revealed.stats.clear_minutes[minute] == 1
        board = await bob.daily_board(day)
        assert board.total == 2 and board.own is not None and board.own.rank == 2
        replay = await bob.daily_replay(day, ann_handle)
        assert replay.moves == list(line) and replay.times == [1000 * (number + 1) for number in range(len(line))]

        archive = await ann.daily_archive()
        past = next(entry for entry in archive.days if entry.day == day)
        assert past.own is not None and past.own.state is AttemptState.CLEARED and (past.players, past.cleared) == (2, 1)
        assert (archive.streak, archive.best_streak) == (1, 1)

        again = await ann.daily_start(day)  # a past day: played again, never counted
        assert not again.counted and again.moves == []
        await ann.daily_move(again.attempt, 0, line[0])
        assert [entry.handle for entry in (await bob.daily_board(day)).entries] == [ann_handle, bob_handle]
    finally:
        for client in (ann, bob, gus):
            await client.close()


async def test_an_attempt_started_late_ends_with_the_day(daily_server: tuple[RaceServer, TestClock]) -> None:
    server, clock = daily_server
    _, line = winning_deal()
    day = day_of(clock.now)
    clock.now = day_start(day) + DAY_MS - 60_000  # 23:59
    cat = await registered(server.url, new_handle("cat"))
    try:
        attempt = await cat.daily_start()
        assert attempt.deadline == day_start(day) + DAY_MS  # not 15 minutes: the seed is revealed at the day's end
        await cat.daily_move(attempt.attempt, 0, line[0])
        clock.now = attempt.deadline
        with refused("attempt_over"):
            await cat.daily_move(attempt.attempt, 1, line[1])
        info = await cat.daily(day)
        assert info.own is not None and info.own.state is AttemptState.TIME_LIMIT and info.own.time_ms == 60_000
        with refused("unknown_day"):
            await cat.daily(day_of(clock.now + 2 * DAY_MS))
    finally:
        await cat.close()
