"""JSON logs of a real server process: one event per race lifecycle step and per connection, the shutdown, and
never a token, an invite code or the operator secret."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest
from conftest import SpawnServers
from race_helpers import play, player, server_config
from winning_lines import winning_deal

from client import ServerError
from server.app import RaceServer
from server.services.analysis import RaceAnalyst
from shared.protocol import Countdown, RaceResult, RaceSettings, Started

SECRET = "operator-secret-never-logged"


def events(output: str) -> list[dict[str, object]]:
    """The JSON log lines of a server's output (its two plain start-up lines skipped)."""
    found = []
    for line in output.splitlines():
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


async def test_json_logs_follow_a_race_and_never_contain_a_secret(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    settings = tmp_path / "server.toml"
    settings.write_text(f'operator_secret = "{SECRET}"\n', encoding="utf-8")
    (server,) = await spawn_servers(1, "--config", str(settings), "--log-format", "json", "--log-level", "INFO")
    seed, line = winning_deal()
    ann, bob = await player(server.url, "Ann"), await player(server.url, "Bob")
    created = await ann.create(RaceSettings(seed=seed, private=True))
    invite = created.race.invite
    assert invite
    with pytest.raises(ServerError):
        await bob.join_invite("WRONG-CODE")
    await bob.join_invite(invite)
    race_id = created.race.race
    await ann.wait_for(Countdown)
    await ann.wait_for(Started)
    await play(ann, race_id, line[:3])
    with pytest.raises(ServerError):
        await ann.move(race_id, "KS 1>f")
    await bob.resign(race_id)
    await ann.wait_for(RaceResult)
    tokens = [client.session.token for client in (ann, bob) if client.session is not None]
    await ann.close()
    await bob.close()
    server.signal(signal.SIGTERM)
    assert await server.exited() == 0

    output = server.output()
    logged = events(output)
    assert logged, output
    for secret in (*tokens, invite, invite.replace("-", ""), SECRET):
        assert secret not in output, f"a secret appears in the logs: {secret[:4]}..."
    for entry in logged:
        assert {"event", "level", "timestamp", "logger"} <= set(entry), entry
    race_steps = [entry for entry in logged if entry.get("race") == race_id]
    kinds = [str(entry["event"]) for entry in race_steps]
    for step in ("race_created", "race_countdown", "race_started", "move_refused", "attempt_ended", "race_result"):
        assert step in kinds, f"no {step} in {kinds}"
    assert kinds.index("race_created") < kinds.index("race_countdown") < kinds.index("race_started") < kinds.index("race_result")
    refused = next(entry for entry in race_steps if entry["event"] == "move_refused")
    assert refused["code"] and refused["player"] == ann.session.player  # type: ignore[union-attr]
    ended = next(entry for entry in race_steps if entry["event"] == "attempt_ended")
    assert (ended["reason"], ended["slot"]) == ("resigned", 1)
    result = next(entry for entry in race_steps if entry["event"] == "race_result")
    assert (result["winner"], result["reason"]) == (0, "count")
    opened = [entry for entry in logged if entry["event"] == "connection_open"]
    closed = [entry for entry in logged if entry["event"] == "connection_closed"]
    assert len(opened) >= 2 and all(entry["peer"] == "127.0.0.1" for entry in opened)
    assert {entry["code"] for entry in closed} >= {1000}
    shutdown = [str(entry["event"]) for entry in logged if str(entry["event"]).startswith("shutdown_")]
    assert shutdown == ["shutdown_begin", "shutdown_end"]


async def test_text_logs_are_readable_lines(spawn_servers: SpawnServers) -> None:
    (server,) = await spawn_servers(1, "--log-format", "text", "--log-level", "INFO")
    client = await player(server.url, "Ann")
    await client.close()
    server.signal(signal.SIGTERM)
    assert await server.exited() == 0
    output = server.output()
    assert "connection_open" in output and "peer=127.0.0.1" in output
    assert not any(line.startswith("{") for line in output.splitlines())


async def test_a_background_worker_that_crashes_is_logged_with_its_cause(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Its gauge drops to 0, and the operator can read why in the log (it once died without a line)."""
    async def crash(self: RaceAnalyst) -> None:
        raise RuntimeError("the analyst's own bug")

    monkeypatch.setattr(RaceAnalyst, "run", crash)
    async with RaceServer(server_config(redis_url, analysis=True)):
        await asyncio.sleep(0.2)
    crashed = [record for record in caplog.records if "background worker RaceAnalyst crashed" in record.getMessage()]
    assert crashed and crashed[0].levelname == "ERROR" and crashed[0].exc_info is not None
    assert "the analyst's own bug" in str(crashed[0].exc_info[1])


async def test_a_flood_of_refused_watches_writes_a_line_a_second_not_a_line_each(spawn_servers: SpawnServers) -> None:
    # One connection's watch budget is 20 at once: most of the next 100 are refused rate_limited, each counted in the metrics
    # but logged at most once a second, the line saying how many were not logged since (main before: a line each).
    (server,) = await spawn_servers(1, "--log-format", "json", "--log-level", "INFO")
    ann, bob = await player(server.url, "Ann"), await player(server.url, "Bob")
    race = (await ann.create(RaceSettings())).race.race
    watcher = await player(server.url, "Churn")
    refused = 0
    for _ in range(60):
        for request in (watcher.watch, watcher.unwatch):
            try:
                await request(race)
            except ServerError as error:
                assert error.code == "rate_limited"
                refused += 1
    for client in (ann, bob, watcher):
        await client.close()
    server.signal(signal.SIGTERM)
    assert await server.exited() == 0
    lines = [line for line in events(server.output()) if line.get("event") == "rate_limited" and line.get("request") in ("watch", "unwatch")]
    assert refused >= 80  # the budget refills at one a second while the loop runs
    assert 1 <= len(lines) <= 10, lines
    assert sum(int(str(line["not_logged_since"])) for line in lines) + len(lines) <= refused  # the last ones wait for a next line
