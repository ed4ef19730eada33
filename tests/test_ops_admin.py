"""``flowergarden admin`` end to end: the real command-line tool against running servers on the test Redis.

Close a race (both players see the reason), kick, ban (the connection is closed, the reconnect refused), notice,
list, audit; drain (races finish, the process exits, nothing is lost) with a real server process. Those run on one
Redis and on the suite's Redis Cluster (``--redis-cluster``), where the servers of docker-compose.cluster.yml are.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from conftest import ON_BOTH_STORES, SpawnServers
from ops_helpers import http_base, http_get
from race_helpers import play, player, seated_race, server_config
from server_processes import ROOT, ClusterUrl, store_flags
from websockets.exceptions import InvalidStatus
from winning_lines import winning_deal

from client import ConnectionLost, RaceClient, ServerError
from server import version
from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from server.store import OpsStore, RaceStore, connect_redis
from server.store.connection import connect_cluster
from shared.protocol import Notice, RaceClosed, RaceResult, RaceSettings, ServerShutdown

SECRET = "operator-secret-for-tests"


async def admin(redis_url: str, *args: str, secret: str | None = SECRET) -> subprocess.CompletedProcess[str]:
    """Run ``flowergarden admin ARGS`` as an operator would."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("FLOWERGARDEN_")}
    environment["PYTHONPATH"] = str(ROOT)
    if secret is not None:
        environment["FLOWERGARDEN_OPERATOR_SECRET"] = secret
    command = [sys.executable, "-m", "cli", "admin", *store_flags(redis_url), "--as", "tester", "--wait-replies", "4", *args]
    return await asyncio.to_thread(subprocess.run, command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60)


@pytest_asyncio.fixture
async def operated(redis_url: str) -> AsyncIterator[RaceServer]:
    """An in-process server that obeys the test operator secret, registered before the test starts."""
    async with RaceServer(server_config(redis_url, operator_secret=SECRET)) as server:
        assert server.admin is not None
        await server.admin.heartbeat()
        yield server


async def next_of(client: RaceClient, kind: type, timeout: float = 10.0) -> object:
    """The next item of ``kind`` the client receives (other items skipped); ConnectionLost counts as one."""
    async with asyncio.timeout(timeout):
        while True:
            try:
                item: object = await client.next_event(timeout)
            except ConnectionLost as lost:
                item = lost
            if isinstance(item, kind):
                return item
            if isinstance(item, ConnectionLost):
                raise item


@ON_BOTH_STORES
async def test_closing_a_race_shows_both_players_the_reason_and_is_audited(redis_url: str, operated: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(operated.url, RaceSettings(seed=seed))
    await play(race.ann, race.race_id, line[:3])
    done = await admin(redis_url, "close-race", race.race_id, "--reason", "closed by the moderators: test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "closed (was running)" in done.stdout
    for client in (race.ann, race.bob):
        closed = await client.wait_for(RaceClosed)
        assert (closed.reason, closed.message) == ("operator", "closed by the moderators: test")
    with pytest.raises(ServerError) as refused:
        await race.ann.move(race.race_id, line[3])
    assert refused.value.code == "race_closed"
    shown = await admin(redis_url, "--json", "show", race.race_id)
    assert json.loads(shown.stdout)["status"] == "closed"
    again = await admin(redis_url, "close-race", race.race_id, "--reason", "twice")
    assert again.returncode == 1 and "race_closed" in again.stdout
    trail = json.loads((await admin(redis_url, "--json", "audit", "--count", "5")).stdout)
    closes = [entry for entry in trail if entry["action"] == "close_race" and entry["args"]["race"] == race.race_id]
    assert [entry["ok"] for entry in closes] == [True, False] and closes[0]["operator"] == "tester"
    await race.close()


@ON_BOTH_STORES
async def test_a_banned_player_is_disconnected_and_its_reconnect_refused(redis_url: str, operated: RaceServer) -> None:
    ann = await player(operated.url, "Ann")
    assert ann.session is not None
    token, player_id = ann.session.token, ann.session.player
    done = await admin(redis_url, "ban", f"--player={player_id}", "--for", "1h", "--reason", "abuse")  # ids may start with -
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ban stored, 1 connection(s) closed" in done.stdout
    lost = await next_of(ann, ConnectionLost)
    assert isinstance(lost, ConnectionLost) and lost.code == 4000 and "abuse" in lost.reason
    again = await RaceClient.connect(operated.url)
    with pytest.raises(ServerError) as refused:
        await again.hello("Ann", token)
    assert refused.value.code == "banned" and "abuse" in str(refused.value)
    await again.close()
    listed = await admin(redis_url, "bans")
    assert player_id in listed.stdout and "abuse" in listed.stdout
    lifted = await admin(redis_url, "unban", f"--player={player_id}")
    assert lifted.returncode == 0 and "lifted" in lifted.stdout
    back = await RaceClient.connect(operated.url)
    assert (await back.hello("Ann", token)).player == player_id
    await back.close()


async def test_a_banned_address_is_refused_before_the_handshake(redis_url: str, operated: RaceServer) -> None:
    done = await admin(redis_url, "ban", "--ip", "127.0.0.1", "--for", "10m", "--reason", "flood")
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        with pytest.raises(InvalidStatus) as refused:
            await RaceClient.connect(operated.url)
        assert refused.value.response.status_code == 403
        status, _ = await http_get(f"{http_base(operated.url)}/ready")
        assert status == 200  # the endpoints still answer: only handshakes are refused
    finally:
        assert (await admin(redis_url, "unban", "--ip", "127.0.0.1")).returncode == 0
    client = await player(operated.url, "Cid")
    await client.close()


@ON_BOTH_STORES
async def test_a_notice_reaches_every_client_and_kick_closes_one_connection(redis_url: str, operated: RaceServer) -> None:
    ann, bob = await player(operated.url, "Ann"), await player(operated.url, "Bob")
    sent = await admin(redis_url, "notice", "restart in 5 minutes")
    assert sent.returncode == 0 and "sent to 2 connection(s)" in sent.stdout, sent.stdout + sent.stderr
    for client in (ann, bob):
        notice = await next_of(client, Notice)
        assert isinstance(notice, Notice) and notice.message == "restart in 5 minutes"
    listing = json.loads((await admin(redis_url, "--json", "list")).stdout)
    ours = next(reply for reply in listing if reply["process"] == operated.admin.process_id)  # type: ignore[union-attr]
    bob_connection = next(item for item in ours["result"]["connections"] if item["player"] == bob.session.player)  # type: ignore[union-attr]
    assert bob_connection["peer"] == "127.0.0.1" and bob_connection["role"] == "lobby"
    kicked = await admin(redis_url, "kick", "--connection", bob_connection["connection"], "--reason", "please reconnect")
    assert kicked.returncode == 0 and "1 connection(s) closed" in kicked.stdout
    lost = await next_of(bob, ConnectionLost)
    assert isinstance(lost, ConnectionLost) and (lost.code, lost.reason) == (4000, "please reconnect")
    assert ann.connection.close_code is None
    await ann.close()


async def test_a_command_signed_with_another_secret_is_refused_and_audited(redis_url: str, operated: RaceServer) -> None:
    ann = await player(operated.url, "Ann")
    refused = await admin(redis_url, "notice", "fake", secret="not-the-secret")
    assert refused.returncode == 1 and "bad signature" in refused.stdout
    no_secret = await admin(redis_url, "notice", "fake", secret=None)
    assert no_secret.returncode == 1 and "FLOWERGARDEN_OPERATOR_SECRET" in no_secret.stderr
    trail = json.loads((await admin(redis_url, "--json", "audit", "--count", "1")).stdout)
    assert trail[-1]["action"] == "notice" and not trail[-1]["ok"]
    await ann.close()


@ON_BOTH_STORES
async def test_a_drain_lets_the_race_finish_refuses_newcomers_then_the_process_exits(
    redis_url: str, spawn_servers: SpawnServers, tmp_path: Path
) -> None:
    settings = tmp_path / "server.toml"
    settings.write_text(f'operator_secret = "{SECRET}"\nadmin_drain_timeout_seconds = 60\n', encoding="utf-8")
    (server,) = await spawn_servers(1, "--config", str(settings))
    seed, line = winning_deal()
    race = await seated_race(server.url, RaceSettings(seed=seed))
    lobby = await player(server.url, "Lee")
    processes = json.loads((await admin(redis_url, "--json", "processes")).stdout)
    process_id = next(item["id"] for item in processes if item["address"].endswith(f":{server.port}"))
    assert {item["version"] for item in processes if item["id"] == process_id} == {version()}  # which release it runs

    waiting = asyncio.create_task(admin(redis_url, "drain", process_id, "--wait"))  # returns once the process exited
    assert isinstance(await next_of(lobby, ServerShutdown), ServerShutdown)  # not in a race: sent elsewhere at once
    assert not waiting.done()
    with pytest.raises(InvalidStatus) as refused:
        await RaceClient.connect(server.url)
    assert refused.value.response.status_code == 503
    with pytest.raises(ServerError) as no_new_race:
        await race.ann.create(RaceSettings(seed=3))
    assert no_new_race.value.code == "server_draining"

    await play(race.ann, race.race_id, line[:6])  # the race under way goes on
    await race.bob.resign(race.race_id)
    result = await race.ann.wait_for(RaceResult)
    assert result.winner == 0
    assert await server.exited(timeout=30) == 0
    drained = await asyncio.wait_for(waiting, 30)
    assert drained.returncode == 0, drained.stdout + drained.stderr
    assert "draining (stops within 60 s)" in drained.stdout and "drained: the process(es) exited" in drained.stdout
    assert "drained, stopping" in server.output()

    redis = connect_cluster(redis_url, max_connections=2) if isinstance(redis_url, ClusterUrl) else connect_redis(redis_url, max_connections=2)
    try:
        store = RaceStore(redis)
        record = await store.load_race(race.race_id)
        assert record is not None and record.status == "finished"
        assert await store.actions(race.race_id, 0) == list(line[:6])  # every acknowledged move is stored
        assert process_id not in {item["id"] for item in await OpsStore(redis).processes(await store.now_ms())}
    finally:
        await redis.aclose()
    await race.close()
    await lobby.close()


async def _admin_here(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``flowergarden admin ARGS`` run in ``folder`` with no Redis named: no --redis, no REDIS_URL, no config."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("FLOWERGARDEN_", "REDIS_"))}
    environment["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-m", "cli", "admin", *args]
    return await asyncio.to_thread(subprocess.run, command, cwd=folder, env=environment, capture_output=True, text=True, timeout=60)


async def test_every_admin_option_may_follow_the_action_as_docs_operations_shows(operated: RaceServer, redis_url: str) -> None:
    """OPERATIONS.md: "Every action takes --json, --as NAME, --wait-replies SECONDS and --redis URL / --config FILE"."""
    after = await _admin_here(ROOT, "processes", "--json", "--redis", redis_url, "--wait-replies", "4", "--as", "tester")
    assert after.returncode == 0, after.stderr
    before = await _admin_here(ROOT, "--json", "--redis", redis_url, "processes")
    assert before.returncode == 0, before.stderr
    assert any(item["address"].endswith(f":{operated.port}") for item in json.loads(after.stdout))
    assert json.loads(after.stdout) == json.loads(before.stdout)


@pytest.mark.parametrize("store_kind", ["cluster"], indirect=True)
async def test_admin_takes_the_redis_cluster_from_redis_cluster_url_as_in_the_cluster_compose_file(
    operated: RaceServer, redis_url: str, tmp_path: Path
) -> None:
    """docker-compose.cluster.yml gives the servers REDIS_CLUSTER_URL: ``docker compose exec server-1 flowergarden admin
    ...`` finds the cluster from it, as the server did."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("FLOWERGARDEN_", "REDIS_"))}
    environment.update(PYTHONPATH=str(ROOT), REDIS_CLUSTER_URL=redis_url)
    command = [sys.executable, "-m", "cli", "admin", "--json", "processes"]
    found = await asyncio.to_thread(subprocess.run, command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stdout + found.stderr
    assert any(item["address"].endswith(f":{operated.port}") for item in json.loads(found.stdout))


async def test_admin_with_an_unreachable_redis_exits_1_in_one_line_and_a_bad_config_file_is_a_usage_error(tmp_path: Path) -> None:
    """README/NOTATION.md exit codes: a command understood but Redis not answering is not a usage error (1, like a server
    that cannot be reached); a --config file that cannot be understood is (2)."""
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    text = await _admin_here(tmp_path, "processes", "--redis", url)
    assert text.returncode == 1 and text.stdout == "", text.stdout + text.stderr
    assert text.stderr.count("\n") == 1 and "redis_unreachable" in text.stderr and url in text.stderr and "Traceback" not in text.stderr
    document = await _admin_here(tmp_path, "processes", "--json", "--redis", url)
    assert document.returncode == 1 and json.loads(document.stdout)["error"]["code"] == "redis_unreachable"
    (tmp_path / "bad.toml").write_text("prot = 9000\n")
    bad = await _admin_here(tmp_path, "processes", "--json", "--config", str(tmp_path / "bad.toml"))
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["code"] == "bad_config"


async def test_admin_finds_the_embedded_redis_of_a_server_started_in_the_same_folder(tmp_path: Path) -> None:
    """``python3 dev.py serve`` picks a free port for its embedded Redis: the operator need not look it up."""
    nobody = await _admin_here(tmp_path, "processes")
    assert nobody.returncode == 1 and "no_redis" in nobody.stdout + nobody.stderr and "var/redis" in nobody.stdout + nobody.stderr
    with EmbeddedRedis(tmp_path / "var" / "redis") as embedded:
        async with RaceServer(server_config(embedded.url, operator_secret=SECRET)) as server:
            assert server.admin is not None
            await server.admin.heartbeat()
            found = await _admin_here(tmp_path, "processes", "--json")
    assert found.returncode == 0, found.stdout + found.stderr
    assert [item["address"] for item in json.loads(found.stdout)] == [f"127.0.0.1:{server.port}"]
