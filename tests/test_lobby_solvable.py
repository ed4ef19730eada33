"""Solvable-only races: seeds the solver proved winnable, from a pool in Redis filled in the background."""

from __future__ import annotations

from lobby_helpers import players, refused, wait_until
from race_helpers import deals, server_config
from redis.asyncio import Redis

from server.app import RaceServer
from server.store import PooledSeed, SeedPoolStore, keys
from shared import Board
from shared.protocol import Countdown, RaceSettings
from shared.solver import Budget, Verdict, solve


async def empty_pool(server: RaceServer) -> None:
    assert server.redis is not None
    await server.redis.delete(keys.seed_pool("classic"))


async def test_a_solvable_only_race_is_dealt_a_seed_the_solver_proved_winnable(redis_url: str) -> None:
    async with Redis.from_url(redis_url) as redis:  # seeds left by an earlier test would leave nothing to prove
        await redis.delete(keys.seed_pool("classic"))
    async with RaceServer(server_config(redis_url, seed_pool_target=2, seed_pool_seconds=1.0)) as server:
        pool = server.seed_pool
        assert pool is not None

        async def pool_filled() -> bool:
            return await pool.size("classic") >= 2

        await wait_until(pool_filled, timeout=90, what="the seed pool to fill")
        ready = {PooledSeed.parse(seed.decode()).seed for seed in await server.redis.smembers(keys.seed_pool("classic"))}  # type: ignore[union-attr]
        assert pool.stats.proven >= 2 and pool.stats.tried >= pool.stats.proven

        async with players(server.url, "Ann", "Bob") as (ann, bob):
            seated = await ann.create(RaceSettings(solvable_only=True, undo=True))
            assert seated.race.settings.solvable_only and seated.race.seed is None
            await bob.join(seated.race.race)
            countdown = await ann.wait_for(Countdown)
            seed = next(seed for seed in ready if deals(countdown, seed))
            assert seed in ready
            assert seed not in {PooledSeed.parse(s.decode()).seed for s in await server.redis.smembers(keys.seed_pool("classic"))}  # type: ignore[union-attr]

            board = Board.deal(seed)
            result = solve(board, Budget(seconds=30))
            assert result.verdict is Verdict.SOLVED
            for move in result.moves:
                board.push(move)
            assert board.is_won()


async def test_an_empty_pool_is_refused_with_seed_pool_empty_and_nothing_is_created(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, seed_pool_target=0)) as server:
        await empty_pool(server)
        async with players(server.url, "Ann", "Wes") as (ann, watcher):
            await watcher.watch_lobby()
            with refused("seed_pool_empty"):
                await ann.create(RaceSettings(solvable_only=True))
            with refused("seed_pool_empty"):
                await ann.quick_match(RaceSettings(solvable_only=True))
            assert ann.session is not None
            assert ann.session.player not in {entry.player for entry in (await watcher.watch_lobby()).races}
            with refused("not_queued"):
                await ann.cancel_quick_match()


async def test_seeds_handed_out_leave_the_pool_and_failed_creations_give_them_back(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, seed_pool_target=0, lobby_max_listed=0)) as server:
        await empty_pool(server)
        store = SeedPoolStore(server.redis)  # type: ignore[arg-type]
        assert await store.add("classic", PooledSeed(15, None, ()), 5) == 1  # seed 15 is winnable (tests/winning_lines.py solves it)
        async with players(server.url, "Ann", "Bob") as (ann, bob):
            with refused("lobby_full"):  # the list holds no public race: the seed goes back into the pool
                await ann.create(RaceSettings(solvable_only=True))
            assert await store.size("classic") == 1
            seated = await ann.create(RaceSettings(solvable_only=True, private=True))
            assert await store.size("classic") == 0
            assert seated.race.invite is not None
            await bob.join_invite(seated.race.invite)
            assert deals(await bob.wait_for(Countdown), 15)
            with refused("seed_pool_empty"):
                await bob.create(RaceSettings(solvable_only=True, private=True))


async def test_the_pool_never_grows_past_its_target_whoever_adds(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url)) as server:
        await empty_pool(server)
        store = SeedPoolStore(server.redis)  # type: ignore[arg-type]
        sizes = [await store.add("classic", PooledSeed(seed, None, ()), 3) for seed in range(100, 106)]
        assert sizes == [1, 2, 3, 3, 3, 3]
        assert await store.size("classic") == 3
        await empty_pool(server)


async def test_solvable_only_refuses_a_fixed_seed_and_profiles_without_a_pool(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann") as (ann,):
        with refused("bad_field"):
            await ann.create(RaceSettings(solvable_only=True, seed=3))
        with refused("bad_field"):
            await ann.create(RaceSettings(solvable_only=True, profile="foundation-only"))
