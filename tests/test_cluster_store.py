"""The store on a real Redis Cluster: every Lua script names keys of one hash slot, races spread over the nodes,
the reads and pipelines that span races work, sessions and seed pools work, and a cluster that is not whole is
refused at start with a clear error."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from server_processes import ClusterUrl, flowergarden

from server import config
from server.embedded_cluster import LocalCluster
from server.services.dealer import sealed
from server.store import (
    AnalysisStore,
    InviteLimits,
    LobbyStore,
    NewRace,
    PooledSeed,
    QueueEntry,
    QuickMatchStore,
    RaceStore,
    RedisSessionStore,
    SeedPoolStore,
    SessionRecord,
    StoreRefusal,
    presence_member,
)
from server.store.archive_queue import ArchiveQueue
from server.store.arena_store import ArenaMeta, ArenaStore
from server.store.connection import connect_cluster
from server.store.daily_store import COUNTED_PREFIX, DailyDeal, DailyStore
from server.store.durability import Durability, StoreNotReady, check_store
from server.store.online_store import OnlineStore
from server.store.player_store import AccountRecord, LoginBudget, PairRules, PlayerStore, SeatBooking
from server.store.race_store import Identity
from server.store.scripts import Scripts
from shared.arena import ArenaGame
from shared.board import Status
from shared.protocol import AttemptState, CloseReason, Outcome, RaceStatus
from shared.race.settings import SettingsInForce
from shared.rules import Profile


class RecordedScript:
    """Forwards to a registered script and records the keys of every call."""

    def __init__(self, name: str, script: AsyncScript, calls: list[tuple[str, list[str]]]) -> None:
        self.name, self.script, self.calls = name, script, calls
        self.sha = script.sha

    async def __call__(self, keys: Sequence[str] = (), args: Sequence[Any] = (), client: Any = None) -> Any:
        self.calls.append((self.name, list(keys)))
        return await self.script(keys=list(keys), args=list(args), client=client)


def record(scripts: Scripts, calls: list[tuple[str, list[str]]]) -> None:
    for name, value in list(vars(scripts).items()):
        if isinstance(value, AsyncScript):
            setattr(scripts, name, RecordedScript(name, value, calls))


@pytest_asyncio.fixture
async def cluster_client(redis_cluster: LocalCluster) -> AsyncIterator[RedisCluster]:
    client = connect_cluster(redis_cluster.url)
    await client.initialize()
    yield client
    await client.aclose()


def race_id() -> str:
    return secrets.token_hex(6)[:11]


NEW_RACE = NewRace(SettingsInForce(spectator_delay_ms=0, grace_ms=30_000), sealed(Profile.CLASSIC, 7))


async def test_every_script_names_keys_of_one_hash_slot_and_runs_on_the_cluster(cluster_client: RedisCluster) -> None:
    calls: list[tuple[str, list[str]]] = []
    races, lobby = RaceStore(cluster_client), LobbyStore(cluster_client)
    queue, pool = QuickMatchStore(cluster_client, stale_ms=20_000), SeedPoolStore(cluster_client)
    accounts = PlayerStore(cluster_client)
    for store in (races, lobby, queue, pool, accounts):
        record(store.scripts, calls)

    first, second, waiting = race_id(), race_id(), race_id()
    created_at = await races.create_race(first, Identity("ann", "Ann"), NEW_RACE)
    await races.join_race(first, Identity("bob", "Bob"), countdown_ms=0)
    record_ = await races.load_race(first)
    assert record_ is not None
    epoch = record_.epoch
    assert await races.check_action(first, 0, player="ann", epoch=epoch, seq=0, move_id="m1") is None
    await races.apply_action(
        first, 0, player="ann", epoch=epoch, seq=0, move_id="m1", action="5D b>3", count=0, left=52, status=Status.PLAYING, undos=0
    )
    assert await races.epoch_and_actions(first, 0) == (epoch, ["5D b>3"])  # a MULTI on two keys of the race's slot
    await races.apply_action(  # a move that ends its attempt: the full move script (the one above took the common path)
        first, 1, player="bob", epoch=epoch, seq=0, move_id="m2", action="5D b>3", count=0, left=52, status=Status.BLOCKED, undos=0,
        ends=AttemptState.BLOCKED,
    )  # fmt: skip
    await races.presence(first, leave=False, members=[presence_member(0, "p.1"), presence_member(None, "p.2")], lease_ms=5000)
    await races.tick(first)
    assert await races.end_attempt(first, 0, AttemptState.RESIGNED)
    await races.offer_rematch(first, "ann", 60_000)
    await races.offer_rematch(first, "bob", 60_000)
    await races.link_rematch(first, second)
    await races.create_race(waiting, Identity("cat", "Cat"), NEW_RACE)
    assert await races.leave_race(waiting, "cat", next_deal=sealed(Profile.CLASSIC, 8), reason=CloseReason.LEFT) is RaceStatus.CLOSED
    closed = race_id()
    await races.create_race(closed, Identity("eve", "Eve"), NEW_RACE)
    await races.close_by_operator(closed, "closed by the test")
    await races.schedule_many({first: 0})
    await races.due_races()

    entry = {"race": waiting, "name": "Cat"}
    await lobby.open(waiting, entry, created_at)
    await lobby.change(waiting, {**entry, "name": "Cat 2"})
    await lobby.snapshot()
    await lobby.close(waiting, "ABCDEFGH")
    assert await lobby.invite_attempt("cat", "127.0.0.1", InviteLimits()) == 0  # counted, no wait
    await lobby.invite_refund("cat", "127.0.0.1")
    assert await queue.pair_or_wait("classic/test", "dan", waiting) is None
    assert await queue.cancel(QueueEntry(settings_key="classic/test", race_id=waiting, player="dan"))
    assert await queue.requeue(QueueEntry(settings_key="classic/test", race_id=waiting, player="dan"), rating=None, queued_at=created_at)
    await pool.add("classic", PooledSeed(12345, None, ()), 20)
    analyses = AnalysisStore(cluster_client, record_ttl_ms=60_000)
    record(analyses.scripts, calls)
    with pytest.raises(StoreRefusal):
        await races.berserk(first, "nobody")  # refused by its seat check: the script ran on the race's slot
    await races.emote(first, "ann", "good_luck")
    online = OnlineStore(cluster_client, stale_ms=6_000)
    record(online.scripts, calls)
    total_online, total_racing = await online.report("p1", 2, 1)
    assert total_online >= 2 and total_racing >= 1  # other tests' processes may have lines of their own
    await online.forget("p1")
    await races.queue_for_analysis(first, 0)
    assert first in await analyses.claim(await races.now_ms(), 100, 1000)
    analysis = {"race": first, "deal": "unknown", "players": [{"slot": 0, "verdict": "unknown"}], "budget_ms": 1, "computed_at": 1}
    await analyses.save(first, analysis, [])
    handle = f"ann{secrets.token_hex(3)}"
    assert await accounts.register(AccountRecord(handle=handle, player="ann", bot=False, secret_hash="h", salt="s", kdf="k", created_at=1))
    rules = PairRules(address_window_ms=60_000, pair_limit=5, pair_window_ms=60_000, signals_ttl_ms=60_000)
    await accounts.saw("ann", "127.0.0.1", 60_000)
    assert await accounts.begin_rated(first, ("ann", "bob"), (handle, "bob"), 60_000, rules) is None
    await accounts.track(first, created_at)
    seat = SeatBooking(player="ann", handle=handle, bot=False, profile="classic", opponent="bob", item={"race": first}, outcome=Outcome.WON,
                       cleared=False, time_ms=0, count=1)  # fmt: skip
    assert await accounts.book(first, created_at + 1, "classic", [seat])
    budget = LoginBudget(
        per_address=20, overall=1200, attempt_window_ms=60_000, failure_window_ms=900_000, per_handle_address=10, per_handle=10,
        free_failures=5, first_delay_ms=500, longest_delay_ms=10_000, registrations=10, registration_window_ms=3_600_000,
    )  # fmt: skip
    assert (await accounts.login_attempt("127.0.0.1", handle, budget)).delay_ms == 0  # the login limits' keys share a slot
    await accounts.login_refund("127.0.0.1", handle)
    await accounts.end_rated(first, ["ann", "bob"])
    archive = ArchiveQueue(cluster_client, "p1", cache_ttl_ms=60_000)
    record(archive.scripts, calls)
    assert first in await archive.records([first, waiting])  # the finished race, not the closed one
    await archive.confirm([], [first])
    assert 0 < await cluster_client.pttl(f"fgr:{{race:{first}}}:state") <= 60_000
    await daily_and_arena_scripts(cluster_client, calls, handle)

    registered = {name for name, value in vars(Scripts(cluster_client)).items() if isinstance(value, AsyncScript)}
    assert {name for name, _ in calls} == registered  # every script of the project ran here
    for name, script_keys in calls:
        slots = {await cluster_client.cluster_keyslot(key) for key in script_keys}
        assert len(slots) == 1, f"{name} names keys of slots {slots}: {script_keys}"


async def daily_and_arena_scripts(cluster_client: RedisCluster, calls: list[tuple[str, list[str]]], handle: str) -> None:
    """Run every script of the daily deal (one hash tag per day) and of the arenas (one per arena) on the cluster."""
    daily, arenas = DailyStore(cluster_client, practice_ttl_ms=60_000), ArenaStore(cluster_client)
    for store in (daily, arenas):
        record(store.scripts, calls)
    day, attempt, now = "2026-12-02", f"{COUNTED_PREFIX}ann", await daily.now_ms()
    deal = DailyDeal(day=day, seed=7, salt="00", line=(), commitment="0" * 64, profile="classic", difficulty=None, time_limit_ms=600_000,
                     opens_at=now, closes_at=now + 3_600_000)  # fmt: skip
    assert (await daily.open_day(deal)).seed == 7
    assert await daily.start(day, attempt, player="ann", handle=handle, counted=True, started_at=now, deadline=now + 600_000)
    assert await daily.record(day, attempt, player="ann", seq=0, entry="5 5D b>3", count=0, ends=None, now=now + 1) == 1
    arena = race_id()
    await arenas.create(arena, ArenaMeta("Test arena", start_at=0, end_at=now + 3_600_000, time_limit=300))
    for player in ("ann", "bob"):
        await arenas.join(arena, Identity(player, player.title()), 1500.0, now)
    race = race_id()
    assert await arenas.claim(arena, [("ann", "bob", race)], now) == [race]
    assert await arenas.confirm(arena, race, "ann", "bob", now)
    await arenas.started(arena, race)
    games = {"ann": ArenaGame(race, "bob", Outcome.WON, False, 9, 1500.0), "bob": ArenaGame(race, "ann", Outcome.LOST, False, 8, 1500.0)}
    assert await arenas.book(arena, race, games, now)
    assert await arenas.release_stale(arena, cutoff=0, now=now) == 0
    assert await arenas.free_race(arena, race, now) == 0  # booked: nobody is busy in it any more


async def test_races_land_on_different_slots_and_nodes(redis_cluster: LocalCluster, cluster_client: RedisCluster) -> None:
    store = RaceStore(cluster_client)
    ids = [race_id() for _ in range(24)]
    for race in ids:
        await store.create_race(race, Identity("ann", "Ann"), NEW_RACE)
    slots = {race: await cluster_client.cluster_keyslot(f"fgr:{{race:{race}}}:state") for race in ids}
    # Random ids spread over the 16,384 slots: two of 24 share one about 1.7 % of the time (birthday bound), so the
    # check is that they spread, not that all differ; three sharing slots would take a broken hash.
    assert len(set(slots.values())) >= len(ids) - 2
    assert len({redis_cluster.primary_of_slot(slot) for slot in slots.values()}) == redis_cluster.primaries
    # A read that spans races (one pipeline, split by node) sees every one of them.
    assert {race: status for race, (status, _created_at) in (await store.statuses(ids)).items()} == dict.fromkeys(ids, RaceStatus.WAITING)


async def test_sessions_and_seed_pools_work_on_the_cluster(cluster_client: RedisCluster) -> None:
    sessions = RedisSessionStore(cluster_client)
    tokens = [secrets.token_urlsafe(16) for _ in range(6)]
    for index, token in enumerate(tokens):
        await sessions.create(token, SessionRecord(player=f"p{index}", name=f"Player {index}"))
    assert [await sessions.resume(token) for token in tokens] == [SessionRecord(player=f"p{i}", name=f"Player {i}") for i in range(6)]
    pool = SeedPoolStore(cluster_client)
    profile = f"test{secrets.token_hex(3)}"
    for seed in (1, 2, 3):
        await pool.add(profile, PooledSeed(seed, None, ()), target=2)
    assert await pool.size(profile) == 2
    taken = [await pool.take(profile), await pool.take(profile)]
    assert {deal.seed for deal in taken if deal is not None} <= {1, 2, 3} and None not in taken
    assert await pool.take(profile) is None


async def test_every_level_is_checked_against_the_cluster(cluster_client: RedisCluster) -> None:
    await check_store(cluster_client, Durability.PRIMARY)
    await check_store(cluster_client, Durability.REPLICA)  # every primary has its replica
    with pytest.raises(StoreNotReady, match="appendfsync always"):
        await check_store(cluster_client, Durability.FSYNC)  # the session cluster runs appendfsync everysec


async def test_a_cluster_with_a_node_down_is_refused_at_start_with_a_clear_error(tmp_path: Path) -> None:
    with LocalCluster(tmp_path / "cluster", primaries=3, replicas_per_primary=1) as cluster:
        stopped = cluster.nodes[-1]  # a replica: the cluster stays ok, but it is not whole
        address = f"127.0.0.1:{stopped.port}"
        stopped.stop()
        serve = flowergarden("serve", "--redis-cluster", ClusterUrl(cluster.urls[0]), "--port", "0", "--seed-pool-target", "0")
        output, _ = serve.communicate(timeout=60)
    assert serve.returncode != 0
    assert "store_not_ready" in output and address in output, output


def test_the_cluster_settings_come_from_flags_environment_or_file_and_exclude_a_single_redis() -> None:
    settings = config.effective(None, {"REDIS_CLUSTER_URL": "redis://a:7000,redis://b:7001"}, {"durability": "replica"})
    assert (settings.redis_cluster_url, settings.durability) == ("redis://a:7000,redis://b:7001", Durability.REPLICA)
    with pytest.raises(config.ConfigError, match="both set"):
        config.effective(None, {"REDIS_URL": "redis://c:6379/0"}, {"redis_cluster_url": "redis://a:7000"})
    with pytest.raises(config.ConfigError, match="redis_cluster_url"):
        config.effective(None, {}, {"redis_cluster_url": "a:7000"})
    with pytest.raises(config.ConfigError, match="durability must be one of primary, replica, fsync"):
        config.effective(None, {"FLOWERGARDEN_DURABILITY": "disk"}, {})
