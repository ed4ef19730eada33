"""GET /metrics after a scripted race: moves, refusals by code, races by status, latency and fan-out series;
GET /ready beside /health."""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import msgpack
import pytest
import pytest_asyncio
from ops_helpers import delta, http_base, http_get, ready, scrape, value
from race_helpers import play, seated_race, server_config
from winning_lines import winning_deal

import server
from client import RaceClient, ServerError
from server import metrics
from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from server.store import connect_redis, keys
from shared.protocol import CloseCode, RaceResult, RaceSettings


@pytest_asyncio.fixture
async def quiet_server(redis_url: str) -> AsyncIterator[RaceServer]:
    """A server on a Redis database of its own: no race left by another test is finished by its timers meanwhile."""
    async with RaceServer(server_config(redis_url.rsplit("/", 1)[0] + "/9")) as server:
        await server.redis.flushdb()  # type: ignore[union-attr]
        yield server


async def test_metrics_count_a_scripted_race_moves_refusals_and_statuses(quiet_server: RaceServer) -> None:
    race_server = quiet_server
    base = http_base(race_server.url)
    before = await scrape(base)
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    during = await scrape(base)
    assert value(during, "flowergarden_connections", role="player") >= 2
    await play(race.ann, race.race_id, line[:4])
    await race.ann.move(race.race_id, line[4], seq=4, move_id="fifth")
    resent = await race.ann.move(race.race_id, line[4], seq=4, move_id="fifth")  # a resend: answered, not stored again
    assert resent.duplicate
    for bad in ("KS 1>f", "zz"):
        with pytest.raises(ServerError):
            await race.ann.move(race.race_id, bad)
    await race.bob.resign(race.race_id)  # Ann leads and cannot fall back (no undo): she wins on count at once
    await race.ann.wait_for(RaceResult)
    after = await scrape(base)
    await race.close()

    assert delta(before, after, "flowergarden_moves_total", outcome="accepted") == 5
    assert delta(before, after, "flowergarden_moves_total", outcome="duplicate") == 1
    refused = {labels: count for (name, labels), count in after.items() if name == "flowergarden_moves_refused_total"}
    refused_now = sum(refused.values()) - sum(c for (n, _), c in before.items() if n == "flowergarden_moves_refused_total")
    assert refused_now == 2
    assert delta(before, after, "flowergarden_moves_refused_total", code="bad_move") == 1
    for status in ("created", "countdown", "running", "finished"):
        assert delta(before, after, "flowergarden_races_total", status=status) == 1, status
    assert delta(before, after, "flowergarden_attempts_ended_total", reason="resigned") == 1
    assert delta(before, after, "flowergarden_race_results_total", reason="count") == 1
    assert delta(before, after, "flowergarden_request_seconds_count", type="move") == 8  # 5 stored, 1 resend, 2 refused
    assert delta(before, after, "flowergarden_event_fanout_seconds_count", role="player") > 0
    assert delta(before, after, "flowergarden_redis_command_seconds_count", command="EVALSHA") > 0
    assert value(after, "process_resident_memory_bytes") > 0
    assert value(after, "flowergarden_background_worker_up", worker="EventHub") == 1
    assert value(after, "flowergarden_accepting") == 1


async def test_the_analysis_backlog_gauge_counts_the_finished_races_waiting_for_an_analyst(quiet_server: RaceServer) -> None:
    """Nothing analyses here (the tests' servers run ``analysis: False``): a finished race waits in the queue until an
    analyst looks, and a race an analyst has claimed is not counted."""
    base = http_base(quiet_server.url)
    assert quiet_server.admin is not None and quiet_server.analyst is not None
    await quiet_server.admin.heartbeat()
    assert value(await scrape(base), "flowergarden_analysis_backlog") == 0
    race = await seated_race(quiet_server.url)
    await race.ann.resign(race.race_id)
    await race.bob.resign(race.race_id)
    await race.ann.wait_for(RaceResult)
    await race.close()
    await quiet_server.admin.heartbeat()
    assert value(await scrape(base), "flowergarden_analysis_backlog") == 1
    assert race.race_id in await quiet_server.analyst.store.claim(await quiet_server.analyst.races.now_ms(), 100, 60_000)
    await quiet_server.admin.heartbeat()
    assert value(await scrape(base), "flowergarden_analysis_backlog") == 0


async def test_ready_answers_ok_while_accepting_and_503_while_draining(race_server: RaceServer) -> None:
    base = http_base(race_server.url)
    status, document = await ready(base)
    assert (status, document["status"], document["store"]) == (200, "ready", "ok")
    assert race_server.operations is not None
    race_server.operations.drain(timeout=30)
    status, document = await ready(base)
    assert (status, document["draining"]) == (503, "yes")
    health, _ = await http_get(f"{base}/health")
    assert health == 200  # alive, just not taking new connections


async def test_live_answers_without_redis_while_health_fails_and_both_carry_the_version(tmp_path: Path) -> None:
    """/live is liveness: it asks nothing of Redis, so a Redis outage (which fails /health on every process at
    once) does not make an orchestrator restart every server; the release shows in /live, /health, /metrics."""
    store = EmbeddedRedis(tmp_path / "redis")
    store.start()
    try:
        async with RaceServer(server_config(store.url)) as race_server:
            base = http_base(race_server.url)
            assert value(await scrape(base), "flowergarden_build_info", version=server.version()) == 1
            store.stop()
            live, body = await http_get(f"{base}/live")
            assert (live, json.loads(body)) == (200, {"status": "alive", "version": server.version()})
            health, body = await http_get(f"{base}/health")
            assert (health, json.loads(body)["version"]) == (503, server.version())
    finally:
        store.stop()


def test_the_version_is_the_installed_project_release() -> None:
    pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert server.version() == pyproject["project"]["version"]


def test_every_metric_is_documented_in_operations_md() -> None:
    document = (Path(__file__).resolve().parent.parent / "docs" / "OPERATIONS.md").read_text(encoding="utf-8")
    families = {family.name for family in metrics.REGISTRY.collect() if family.name.startswith("flowergarden_")}
    assert families
    for name in sorted(families):
        exposed = name + "_total" if f"`{name}_total`" in document else name
        assert f"`{exposed}`" in document, f"{name} is not in the metrics table"


async def test_a_flood_counts_rate_limit_hits_and_its_1008_close(race_server: RaceServer) -> None:
    base = http_base(race_server.url)
    before = await scrape(base)
    client = await RaceClient.connect(race_server.url)
    frame = msgpack.packb({"type": "teleport", "id": 1})
    for _ in range(race_server.config.limits.burst * 3):
        await client.send_raw(frame)
    async for _event in client.events():
        pass  # the unknown_type and rate_limited refusals, until the server closes
    assert (await client.closed()).code == CloseCode.POLICY_VIOLATION
    await client.close()
    after = await scrape(base)
    for _ in range(50):  # the server's side of the close is counted once its handler has finished
        if delta(before, after, "flowergarden_connections_closed_total", code="1008") >= 1:
            break
        await asyncio.sleep(0.05)
        after = await scrape(base)
    assert delta(before, after, "flowergarden_rate_limited_total", action="refused") > 0
    assert delta(before, after, "flowergarden_rate_limited_total", action="closed") == 1
    assert delta(before, after, "flowergarden_connections_closed_total", code="1008") == 1


async def test_ready_is_503_when_the_store_is_unreachable(race_server: RaceServer) -> None:
    assert race_server.operations is not None

    async def unreachable() -> bool:
        return False

    race_server.operations.store_reachable = unreachable
    status, document = await ready(http_base(race_server.url))
    assert (status, document["store"], document["accepting"]) == (503, "unreachable", "yes")


async def test_ready_is_503_while_the_lobby_feed_reader_cannot_read_and_200_once_it_reads_again(redis_url: str) -> None:
    """Issue 27.9: a reader failing while PING answers (on a Cluster: its node died, the others answer) must not
    leave the process ready. Here the feed's key holds a string on a database of the test's own: every XREAD of
    it fails (WRONGTYPE) until the key is gone."""
    async with RaceServer(server_config(redis_url.rsplit("/", 1)[0] + "/10")) as server:
        assert server.redis is not None
        await server.redis.flushdb()
        base = http_base(server.url)
        assert (await ready(base))[0] == 200
        await server.redis.set(keys.LOBBY_FEED, "not a stream")
        assert server.lobby_feed is not None
        while server.lobby_feed.read_failures == 0:  # the feed's reader failed (and fails again until the key is gone)
            await asyncio.sleep(0.05)
        status, document = await ready(base)
        assert (status, document["status"], document["store"]) == (503, "not_ready", "ok"), document
        assert document["readers"] == "lobby_feed"
        await server.redis.delete(keys.LOBBY_FEED)
        while status != 200:
            await asyncio.sleep(0.05)
            status, document = await ready(base)
        assert document["readers"] == "ok"


async def test_a_script_cache_miss_reloaded_is_not_counted_as_a_redis_error(redis_url: str) -> None:
    """NOSCRIPT (Redis restarted or its script cache flushed) makes the client load the script and run it again:
    normal operation, not a failure for the RedisErrors alert."""
    redis = connect_redis(redis_url)
    try:
        script = redis.register_script("return 7")
        assert await script() == 7
        await redis.script_flush()
        before = metrics.REGISTRY.get_sample_value("flowergarden_redis_errors_total", {"command": "EVALSHA"}) or 0.0
        assert await script() == 7  # NOSCRIPT, SCRIPT LOAD, EVALSHA again
        after = metrics.REGISTRY.get_sample_value("flowergarden_redis_errors_total", {"command": "EVALSHA"}) or 0.0
        assert after == before
    finally:
        await redis.aclose()
