"""Fair play through the real server and Redis: the seed hidden until the result, commit-reveal, chosen seeds
flagged, deal tiers, the enforced spectator delay, and the post-race analysis after (never before) the result."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from lobby_helpers import players, refused, wait_until
from player_helpers import new_handle, registered
from race_helpers import Race, deals, play, player, seated_race, server_config, store_of
from redis.asyncio import Redis
from server_processes import flowergarden
from test_fairplay_analysis import FATAL, WINNING_PREFIX
from test_ops_admin import admin
from winning_lines import winning_deal

import client.race_client as race_client_module
from server.app import RaceServer
from server.services.analysis import AnalysisBudget
from server.store import ANALYSIS_SAFETY_MS, PooledSeed, SeedPoolStore, keys
from shared import Board, Rules, action_text, notation_label, parse_action
from shared.commitment import NO_LINE, line_digest, verify_commitment
from shared.protocol import (
    AnalysisReady,
    Countdown,
    Difficulty,
    LineVerdict,
    MoveMade,
    RaceEvent,
    RaceResult,
    RaceSettings,
    Seated,
    Started,
)
from shared.race import board_from_layout, play_reported
from shared.rules import Profile

CHOSEN_SEED = 2**63 + 987_654_321
"""Far from any count, time or sequence number a message carries, so a search for it finds only the seed."""


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    else:
        yield value


def leaks(frame: bytes, seed: int) -> bool:
    """Whether a server frame carries ``seed`` anywhere: as a number, or inside a text."""
    return any(item == seed or (isinstance(item, str) and str(seed) in item) for item in _scalars(msgpack.unpackb(frame, raw=False)))


@pytest.fixture
def frames(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every frame any client of this test receives, in arrival order."""
    received: list[bytes] = []
    decode = race_client_module.decode_server_message

    def recording(frame: bytes) -> Any:
        received.append(frame)
        return decode(frame)

    monkeypatch.setattr(race_client_module, "decode_server_message", recording)
    return received


def before_result(frames: list[bytes]) -> list[bytes]:
    """The frames received before the first ``result``."""
    types = [msgpack.unpackb(frame, raw=False).get("type") for frame in frames]
    return frames[: types.index("result")] if "result" in types else frames


async def test_no_message_to_a_player_a_spectator_or_the_lobby_carries_the_seed_before_the_result(
    race_server: RaceServer, frames: list[bytes]
) -> None:
    """Over every message of a race: lobby entries and changes, seated, countdown, started, moves (one a redeal, one an
    undo), progress, synced, watching with its boards, live races, disconnected/back, attempt_ended; then the result
    reveals it."""
    settings = RaceSettings(seed=CHOSEN_SEED, undo=True, redeal_once=True, spectator_delay=0)
    async with players(race_server.url, "Wes", "Eve") as (lobby_watcher, eve):
        await lobby_watcher.watch_lobby()
        race = await seated_race(race_server.url, settings)
        try:
            await eve.watch(race.race_id)
            await eve.live_races()
            board = board_from_layout(race.countdown.columns, race.countdown.bouquet, Rules(undo=True, redeal_once=True))
            move = await race.ann.move(race.race_id, _first_move(board))
            play_reported(board, move.move, move.columns)
            undone = await race.ann.move(race.race_id, "undo")
            play_reported(board, undone.move, undone.columns)
            redealt = await race.ann.move(race.race_id, "redeal")
            assert redealt.columns is not None  # the redeal's columns come with the reply: the client cannot compute them
            play_reported(board, redealt.move, redealt.columns)
            truth = Board.deal(CHOSEN_SEED, Rules(undo=True, redeal_once=True))
            for text in (move.move, "undo", "redeal"):
                truth.play(parse_action(text))
            assert board.columns == truth.columns and board.bouquet == truth.bouquet
            synced = await race.ann.sync(race.race_id)
            assert synced.redeal_columns == redealt.columns and synced.deal is not None
            bob_move = await race.bob.move(race.race_id, _first_move(board_from_layout(race.countdown.columns, race.countdown.bouquet, Rules())))
            assert bob_move.columns is None
            spectator = await eve.wait_for(MoveMade)
            assert spectator.slot in (0, 1)
            redeal_seen = await _next_redeal(eve)
            assert redeal_seen.columns == redealt.columns
            await race.ann.resign(race.race_id)
            await race.bob.resign(race.race_id)
            result = await race.ann.wait_for(RaceResult)
            await eve.wait_for(RaceResult, timeout=20)
        finally:
            await race.close()
    assert result.seed == CHOSEN_SEED
    hidden = before_result(frames)
    kinds = {msgpack.unpackb(frame, raw=False).get("type") for frame in hidden}
    assert {"lobby", "lobby_added", "seated", "countdown", "started", "move", "moved", "progress", "synced", "watching",
            "race_list", "player_joined"} <= kinds  # fmt: skip
    assert not [frame for frame in hidden if leaks(frame, CHOSEN_SEED)]
    assert any(leaks(frame, CHOSEN_SEED) for frame in frames[len(hidden) :])


def _first_move(board: Board) -> str:
    return action_text(board.legal_moves()[0])


async def _next_redeal(client: Any) -> MoveMade:
    while True:
        event = await client.wait_for(MoveMade, timeout=20)
        if event.move == "redeal":
            return event


async def test_a_random_deal_is_never_named_before_the_result_and_the_reveal_verifies_the_commitment(
    race_server: RaceServer, frames: list[bytes]
) -> None:
    race = await seated_race(race_server.url, RaceSettings(spectator_delay=0))
    try:
        assert not race.countdown.seed_chosen and race.countdown.difficulty is None
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        result = await race.ann.wait_for(RaceResult)
        record = await store_of(race_server).load_race(race.race_id)
    finally:
        await race.close()
    assert record is not None and result.seed == record.deal.seed and result.salt is not None
    assert not [frame for frame in before_result(frames) if leaks(frame, record.deal.seed)]
    salt = bytes.fromhex(result.salt)
    assert verify_commitment(race.countdown.commitment, result.seed, Profile.CLASSIC, salt, NO_LINE)
    assert deals(race.countdown, result.seed)  # the layout played is the seed's
    assert not verify_commitment(race.countdown.commitment, result.seed ^ 1, Profile.CLASSIC, salt)  # a tampered seed
    assert not verify_commitment(race.countdown.commitment, result.seed, Profile.CLASSIC, bytes(16))  # a tampered salt


async def test_a_chosen_seed_is_flagged_in_the_lobby_for_the_joiner_and_in_the_record(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob", "Wes") as (ann, bob, wes):
        chosen = await ann.create(RaceSettings(seed=15))
        random = await ann.create(RaceSettings())
        entries = {entry.race: entry for entry in (await wes.watch_lobby()).races}
        assert entries[chosen.race.race].seed_chosen and not entries[random.race.race].seed_chosen
        seated = await bob.join(chosen.race.race)
        assert seated.race.seed_chosen and seated.race.seed is None
        countdown = await bob.wait_for(Countdown)
        assert countdown.seed_chosen
        record = await store_of(race_server).load_race(chosen.race.race)
        assert record is not None and record.seed_fixed


async def test_a_solvable_only_race_may_ask_for_a_tier_and_its_reveal_includes_the_proving_line(redis_url: str) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url)) as server:
        assert server.redis is not None
        for tier in (None, Difficulty.EASY, Difficulty.HARD):
            await server.redis.delete(keys.seed_pool("classic", None if tier is None else tier.value))
        pool = SeedPoolStore(server.redis)
        await pool.add("classic", PooledSeed(seed, Difficulty.EASY, line), 5, tiered=True)
        async with players(server.url, "Ann", "Bob", "Wes") as (ann, bob, wes):
            with refused("bad_field"):
                await ann.create(RaceSettings(difficulty=Difficulty.EASY))  # a tier needs solvable_only
            with refused("seed_pool_empty"):
                await ann.create(RaceSettings(solvable_only=True, difficulty=Difficulty.HARD))
            seated = await ann.create(RaceSettings(solvable_only=True, difficulty=Difficulty.EASY))
            assert seated.race.difficulty is Difficulty.EASY and seated.race.settings.difficulty is Difficulty.EASY
            entry = next(entry for entry in (await wes.watch_lobby()).races if entry.race == seated.race.race)
            assert entry.difficulty is Difficulty.EASY
            await bob.join(seated.race.race)
            countdown = await bob.wait_for(Countdown)
            assert countdown.difficulty is Difficulty.EASY and deals(countdown, seed)
            await bob.wait_for(Started)
            await ann.resign(seated.race.race)
            await bob.resign(seated.race.race)
            result = await bob.wait_for(RaceResult)
    assert result.seed == seed and result.salt is not None and result.proving_line == list(line)
    assert verify_commitment(countdown.commitment, seed, Profile.CLASSIC, bytes.fromhex(result.salt), line_digest(result.proving_line))
    assert not verify_commitment(countdown.commitment, seed, Profile.CLASSIC, bytes.fromhex(result.salt), NO_LINE)


async def test_a_fresh_connection_watching_a_public_race_never_sees_a_move_before_the_server_minimum(redis_url: str) -> None:
    """The creator asks for no delay and watches from a second connection: the server's minimum (here 2 s) holds."""
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url, min_spectator_delay_seconds=2.0)) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
        second = await player(server.url, "Ann again")
        try:
            watching = await second.watch(race.race_id)
            assert watching.delay_ms == 2000 and watching.race.settings.spectator_delay == 2
            await play(race.ann, race.race_id, line[:6])
            await race.ann.resign(race.race_id)
            await race.bob.resign(race.race_id)
            seen: list[tuple[RaceEvent, float]] = []
            while not seen or not isinstance(seen[-1][0], RaceResult):
                event = await second.next_event(timeout=20)
                if isinstance(event, RaceEvent):
                    seen.append((event, time.time() * 1000))  # Redis runs on this machine: its TIME is this clock
        finally:
            await race.close()
            await second.close()
    moves = [(event, arrived) for event, arrived in seen if isinstance(event, MoveMade)]
    assert len(moves) == 6
    assert all(arrived >= event.at + 2000 for event, arrived in seen)


async def test_a_private_race_below_the_minimum_is_joined_only_by_a_joiner_who_accepts_its_delay(redis_url: str) -> None:
    config = server_config(redis_url, min_spectator_delay_seconds=60.0)
    async with RaceServer(config) as server, players(server.url, "Ann", "Bob", "Eve") as (ann, bob, eve):
        public = await ann.create(RaceSettings(spectator_delay=0))
        assert public.race.settings.spectator_delay == 60  # a public race gets the minimum
        private = await ann.create(RaceSettings(private=True, spectator_delay=5))
        assert private.race.settings.spectator_delay == 5 and private.race.invite is not None
        with refused("delay_not_accepted"):
            await bob.join_invite(private.race.invite)
        with refused("delay_not_accepted"):
            await bob.join_invite(private.race.invite, accept_delay=10)  # accepts less lag than that, not 5 s
        seated = await bob.join_invite(private.race.invite, accept_delay=5)
        assert seated.race.settings.spectator_delay == 5
        assert (await eve.watch(private.race.race)).delay_ms == 5000
        await ann.wait_for(Started)
        await ann.resign(private.race.race)
        await bob.resign(private.race.race)
        await bob.wait_for(RaceResult)
        await ann.rematch(private.race.race)
        rematch = await bob.rematch(private.race.race)  # the delay accepted for the race holds for its rematch
        assert isinstance(rematch, Seated) and rematch.race.settings.spectator_delay == 5


async def test_a_full_private_race_below_the_minimum_answers_race_full_and_already_seated_before_the_delay(
    redis_url: str,
) -> None:
    """PROTOCOL.md's order of join errors: ``delay_not_accepted`` is the last; a race nobody could join answers as any."""
    config = server_config(redis_url, min_spectator_delay_seconds=60.0)
    async with RaceServer(config) as server, players(server.url, "Ann", "Bob", "Eve") as (ann, bob, eve):
        private = await ann.create(RaceSettings(private=True, spectator_delay=5))
        assert private.race.invite is not None
        with refused("already_seated"):
            await ann.join(private.race.race)
        with refused("already_seated"):
            await ann.join_invite(private.race.invite)
        await bob.join_invite(private.race.invite, accept_delay=5)
        with refused("race_full"):
            await eve.join(private.race.race)
        with refused("race_full"):
            await eve.join_invite(private.race.invite)
        with refused("already_seated"):
            await bob.join(private.race.race)


async def test_the_analysis_names_the_fatal_move_after_the_result_and_never_before(redis_url: str) -> None:
    """Seed 7: Ann plays nine moves of a winning line, then 7D b>5, proven to lose the deal; Bob stops still winnable."""
    async with Redis.from_url(redis_url) as redis:
        await redis.delete(keys.analysis_queue())  # races of earlier tests would be analysed first
    config = server_config(redis_url, analysis=True, analysis_budget=AnalysisBudget(seconds=30, signal_seconds=0.5, signal_solves=10))
    async with RaceServer(config) as server:
        race = await seated_race(server.url, RaceSettings(seed=7))
        try:
            await play(race.ann, race.race_id, [*WINNING_PREFIX, FATAL])
            await play(race.bob, race.race_id, WINNING_PREFIX)
            with refused("not_finished"):  # never during the race, to anyone
                await race.ann.analysis(race.race_id)
            async with players(server.url, "Eve") as (eve,):
                with refused("not_finished"):
                    await eve.analysis(race.race_id)
            assert server.analyst is not None and await server.analyst.store.load(race.race_id) is None
            ready = await _resign_both_for_the_analysis(race)
        finally:
            await race.close()
        ann_line, bob_line = sorted(ready.analysis.players, key=lambda p: p.slot)
        assert ann_line.verdict is LineVerdict.LOST_AT
        assert (ann_line.fatal_action, ann_line.fatal_move) == (len(WINNING_PREFIX), FATAL)
        assert bob_line.verdict is LineVerdict.STILL_WINNABLE and bob_line.continuation
        assert ready.analysis.deal == "solved" and ready.analysis.winning_line
        fetched = await _fetch(server.url, race.race_id)
        assert fetched == ready.analysis
        signals = await server.analyst.signals(race.race_id)
        assert signals is not None and [entry["slot"] for entry in signals] == [0, 1]
        assert all(entry["move_times"]["actions"] > 0 and "on_line_share" in entry for entry in signals)
    shown = await admin(redis_url, "--json", "show", race.race_id)  # operators see the signals; players never do
    assert shown.returncode == 0, shown.stdout + shown.stderr
    document = json.loads(shown.stdout)
    assert document["seed_chosen"] is True and document["signals"] == signals
    assert document["analysis"]["players"][0]["fatal_move"] == FATAL


async def test_a_deal_without_a_winning_line_is_analysed_and_the_analyst_goes_on_with_the_next_race(redis_url: str) -> None:
    """An unwinnable deal has no winning line (nil): it once failed the analysis' own schema check, which stopped
    this process' analyst for good."""
    async with Redis.from_url(redis_url) as redis:
        await redis.delete(keys.analysis_queue())
    config = server_config(redis_url, analysis=True, analysis_budget=AnalysisBudget(seconds=2, signal_seconds=0.1, signal_solves=2))
    async with RaceServer(config) as server:
        analyses = []
        for settings in (RaceSettings(profile="foundation-only", seed=3), RaceSettings(seed=winning_deal()[0])):
            race = await seated_race(server.url, settings)
            try:
                await race.ann.resign(race.race_id)
                await race.bob.resign(race.race_id)
                analyses.append((await race.ann.wait_for(AnalysisReady, timeout=120)).analysis)
            finally:
                await race.close()
    unwinnable, winnable = analyses
    assert unwinnable.deal != "solved" and unwinnable.winning_line is None
    assert {line.verdict for line in unwinnable.players} <= {LineVerdict.DEAL_NOT_WINNABLE, LineVerdict.UNKNOWN}
    assert winnable.deal == "solved" and winnable.winning_line


async def test_a_finished_race_is_analysed_from_its_result_without_any_look_at_it_while_it_runs(redis_url: str) -> None:
    """The result queues the race (due at once); while it runs, its safety entry is not due and the analyst, claiming
    again and again meanwhile, never takes it (it used to load every running race every 5 s)."""
    async with Redis.from_url(redis_url) as redis:
        await redis.delete(keys.analysis_queue())
    config = server_config(redis_url, analysis=True, analysis_budget=AnalysisBudget(seconds=2, signal_seconds=0.1, signal_solves=2))
    async with RaceServer(config) as server:
        analyst = server.analyst
        assert analyst is not None
        claims: list[list[str]] = []
        claim = analyst.store.claim

        async def counted_claim(now_ms: int, limit: int, lease_ms: int) -> list[str]:
            claims.append(await claim(now_ms, limit, lease_ms))
            return claims[-1]

        analyst.store.claim = counted_claim  # type: ignore[method-assign]
        race = await seated_race(server.url, RaceSettings(seed=7))
        try:
            await play(race.ann, race.race_id, WINNING_PREFIX[:3])
            looks = len(claims)
            await wait_until(lambda: _true(len(claims) >= looks + 3), timeout=30, what="three more claims of the analyst")
            assert not any(race.race_id in claimed for claimed in claims)
            async with Redis.from_url(redis_url) as redis:
                due = await redis.zscore(keys.analysis_queue(), race.race_id)
            record = await server.races.record(race.race_id)
            assert record.start_at is not None and due == record.start_at + ANALYSIS_SAFETY_MS
            ready = await _resign_both_for_the_analysis(race)
        finally:
            await race.close()
        assert ready.analysis.race == race.race_id
        # Once, after the result. (Not "alone in its claim": another test's race that a timer of this server finished
        # meanwhile may be claimed in the same batch; the queue is shared by every test of the session.)
        assert sum(race.race_id in claimed for claimed in claims) == 1


async def _resign_both_for_the_analysis(race: Race) -> AnalysisReady:
    """Both players resign; the result, then the analysis event Ann gets."""
    await race.ann.resign(race.race_id)
    await race.bob.resign(race.race_id)
    await race.ann.wait_for(RaceResult)
    return await race.ann.wait_for(AnalysisReady, timeout=120)


async def _true(value: bool) -> bool:
    return value


async def _fetch(url: str, race_id: str) -> Any:
    async with players(url, "Cid") as (cid,):
        async def ready() -> bool:
            return (await cid.analysis(race_id)).analysis is not None

        await wait_until(ready, timeout=30, what="the stored analysis")
        return (await cid.analysis(race_id)).analysis


async def run_cli(*args: str) -> tuple[int, str]:
    process = flowergarden(*args)
    output, _ = await asyncio.to_thread(process.communicate, timeout=120)
    return process.returncode, output


async def test_verify_deal_and_analyse_commands_check_a_finished_race(redis_url: str, tmp_path: Path) -> None:
    async with Redis.from_url(redis_url) as redis:
        await redis.delete(keys.analysis_queue())
    config = server_config(redis_url, analysis=True, analysis_budget=AnalysisBudget(seconds=30, signal_seconds=0.2, signal_solves=5))
    async with RaceServer(config) as server:
        race = await seated_race(server.url, RaceSettings(seed=7))
        try:
            await play(race.ann, race.race_id, [*WINNING_PREFIX, FATAL])
            await race.ann.resign(race.race_id)
            await race.bob.resign(race.race_id)
            result = await race.ann.wait_for(RaceResult)
        finally:
            await race.close()
        code, verified = await run_cli("verify-deal", race.race_id, "--server", server.url)
        assert code == 0, verified
        assert "ok     commitment" in verified and "ok     layout" in verified
        code, analysed = await run_cli("analyse", race.race_id, "--server", server.url, "--wait", "100")
        assert code == 0, analysed
        assert f"Ann: lost the win at move {len(WINNING_PREFIX) + 1}: {notation_label(FATAL)}" in analysed
    assert result.salt is not None
    code, tampered = await run_cli("verify-deal", "--commitment", race.countdown.commitment, "--seed", "8", "--salt", result.salt)
    assert code == 1 and "FAILED commitment" in tampered
    record = tmp_path / "race.json"
    record.write_text(json.dumps({"seed": 7, "lines": [[*WINNING_PREFIX, FATAL], WINNING_PREFIX]}))
    code, local = await run_cli("analyse", str(record), "--budget", "30")
    assert code == 0, local
    assert f"Player 1: lost the win at move {len(WINNING_PREFIX) + 1}: {notation_label(FATAL)}" in local
    assert "Player 2: the position was still winnable when the attempt ended" in local


async def test_a_rated_race_refuses_a_chosen_seed_and_uses_the_rated_minimum_delay_even_when_private(redis_url: str) -> None:
    config = server_config(redis_url, min_spectator_delay_seconds=2.0, rated_min_spectator_delay_seconds=7.0)
    async with RaceServer(config) as server:
        ann, bob = await registered(server.url, new_handle("Ann")), await registered(server.url, new_handle("Bob"))
        try:
            with refused("bad_field"):  # a deal the creator chose may have been studied: never rated
                await ann.create(RaceSettings(rated=True, seed=15))
            seated = await ann.create(RaceSettings(rated=True, private=True, spectator_delay=0))
            assert seated.race.settings.spectator_delay == 7 and not seated.race.seed_chosen
            assert seated.race.invite is not None
            joined = await bob.join_invite(seated.race.invite)  # nothing below the server's minimum to accept
            assert joined.race.settings.spectator_delay == 7
        finally:
            await ann.close()
            await bob.close()
