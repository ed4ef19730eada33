"""Load generator processes of ``flowergarden bench load``: one asyncio loop each, lean clients (raw msgpack frames).

A worker gets a :class:`WorkOrder`, sets up its races, waits at the start barrier (a shared clock time), drives
the load until the end time and returns a :class:`WorkResult`: acknowledged moves, refusals, ack latencies,
events received and the worker's own CPU time during the measured part.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import resource
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from shared import Board, Rules, move_text

PIPELINE_GRACE = 10.0
"""Open loop: how long after the window the generator waits for the acknowledgements of actions in flight."""


@dataclass(frozen=True, slots=True)
class WorkOrder:
    """What one worker process does."""

    target: str
    """``project`` (the race server's protocol) or ``floor`` (the floor server's)."""
    urls: tuple[str, ...]
    mode: str
    """``closed`` (move + undo as fast as acks return), ``open`` (one move per player every ``interval``), ``burst``."""
    races: int
    spectators: int
    seconds: float
    interval: float = 1.0
    first_race: int = 0
    idle_races: int = 0
    """Races set up beside the load that stay idle (one waiting creator each, or one connection on the floor):
    the cost of an event must not grow with them."""
    start_at: float = 0.0
    """time.time() at which the measured part starts (the same for all workers; set once all are ready)."""


@dataclass(slots=True)
class WorkResult:
    """What one worker measured."""

    moves: int = 0
    offered: int = 0
    refusals: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    events: int = 0
    cpu_seconds: float = 0.0
    setup_errors: list[str] = field(default_factory=list)
    unsolicited: int = 0
    """Replies to a request already answered (the burst defect: ``seated`` then ``error``)."""
    started_races: int = 0
    spectator_lag_ms: list[float] = field(default_factory=list)
    """Project: for each move a spectator received, how long after the server stamped it (``at``, Redis' clock, the
    same machine's) it arrived."""
    send_lateness_ms: list[float] = field(default_factory=list)
    """Open loop: how late the generator sent each action against its schedule (its own lateness, not the
    server's: actions never wait for acknowledgements)."""


class LeanClient:
    """One connection: requests by id, replies matched to their futures, events counted."""

    def __init__(self, connection: ClientConnection, result: WorkResult) -> None:
        self.connection = connection
        self.result = result
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.answered: set[int] = set()
        self.started = asyncio.Event()
        self.token = ""
        self.spectating = False
        """Whether this connection watches a race (its moves' lag is recorded)."""
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, result: WorkResult) -> LeanClient:
        """Connect (no compression, as the server)."""
        return cls(await connect(url, compression=None, max_size=2**20, open_timeout=30), result)

    async def _read(self) -> None:
        try:
            async for frame in self.connection:
                if not isinstance(frame, bytes):
                    continue
                message: dict[str, Any] = msgpack.unpackb(frame, raw=False)
                request_id = message.get("id")
                if request_id is not None:
                    future = self.waiting.pop(request_id, None)
                    if future is not None and not future.done():
                        self.answered.add(request_id)
                        future.set_result(message)
                    elif request_id in self.answered:
                        self.result.unsolicited += 1
                    continue
                self.result.events += 1
                if self.spectating and message.get("type") == "move" and isinstance(message.get("at"), int):
                    self.result.spectator_lag_ms.append(time.time() * 1000 - message["at"])
                if message.get("type") == "started":
                    self.started.set()
        except ConnectionClosed:
            pass
        finally:
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed"))

    async def request(self, message: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        """Send a request and wait for its reply."""
        request_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        try:
            await self.connection.send(msgpack.packb({"token": self.token, **message, "id": request_id}))
            return await asyncio.wait_for(future, timeout)
        finally:  # answered, timed out, cancelled or never sent: nothing is left to fail when the connection closes
            self.waiting.pop(request_id, None)

    async def close(self) -> None:
        """Close and stop reading."""
        await self.connection.close()
        self.reader.cancel()


def opening_move(seed: int) -> str:
    """A legal first move of ``seed``'s deal (players alternate it with ``undo``)."""
    return move_text(Board.deal(seed, Rules(undo=True)).legal_moves()[0])


@dataclass(slots=True)
class Seat:
    """One player of one race in the load."""

    client: LeanClient
    race: str
    move: str
    seq: int = 0
    """The race's action count as the last reply said (the next action's ``seq`` in the closed loop)."""
    sent: int = 0
    """Open loop: the ``seq`` of the next action to send (actions in flight are counted already)."""


async def project_race(order: WorkOrder, index: int, result: WorkResult) -> list[Seat]:
    """Two players (on alternating servers when there are two) in one started race."""
    seed = 1000 + order.first_race + index
    urls = order.urls
    ann = await LeanClient.open(urls[index % len(urls)], result)
    bob = await LeanClient.open(urls[(index + 1) % len(urls)], result)
    for client, name in ((ann, "Ann"), (bob, "Bob")):
        welcome = await client.request({"type": "hello", "protocol": 1, "name": name, "token": None})
        client.token = welcome["token"]
    seated = await ann.request({"type": "create", "settings": {"seed": seed, "undo": True}})
    if seated.get("type") != "seated":
        raise RuntimeError(f"create: {seated}")
    race = seated["race"]["race"]
    joined = await bob.request({"type": "join", "race": race})
    if joined.get("type") != "seated":
        raise RuntimeError(f"join: {joined}")
    move = opening_move(seed)
    return [Seat(ann, race, move), Seat(bob, race, move)]


async def floor_race(order: WorkOrder, index: int, result: WorkResult) -> list[Seat]:
    """Two connections of one race on the floor server."""
    race = f"r{order.first_race + index}"
    seats = []
    for player in range(2):
        client = await LeanClient.open(order.urls[(index + player) % len(order.urls)], result)
        await client.request({"type": "join", "race": race})
        seats.append(Seat(client, race, "3S b>5"))
    return seats


async def idle_race(order: WorkOrder, index: int, result: WorkResult) -> LeanClient:
    """A race whose only player waits for an opponent (the floor: one connection joined to its own race)."""
    client = await LeanClient.open(order.urls[index % len(order.urls)], result)
    if order.target == "floor":
        await client.request({"type": "join", "race": f"idle{order.first_race}-{index}"})
        return client
    welcome = await client.request({"type": "hello", "protocol": 1, "name": "Idle", "token": None})
    client.token = welcome["token"]
    seated = await client.request({"type": "create", "settings": {"seed": index + 1}})
    if seated.get("type") != "seated":
        raise RuntimeError(f"create: {seated}")
    return client


async def spectator(order: WorkOrder, race: str, result: WorkResult) -> LeanClient:
    """A connection watching ``race`` (the floor has no spectators: it just joins the race)."""
    client = await LeanClient.open(order.urls[0], result)
    if order.target == "floor":
        await client.request({"type": "join", "race": race})
        return client
    welcome = await client.request({"type": "hello", "protocol": 1, "name": "Eve", "token": None})
    client.token = welcome["token"]
    client.spectating = True
    await client.request({"type": "watch", "race": race, "after": None})
    return client


async def one_move(seat: Seat, result: WorkResult, measured: bool, seq: int | None = None) -> None:
    """Send an action (the opening move or ``undo``, by the parity of its ``seq``: the seat's next by default, or
    the one given when actions are pipelined) and wait for its acknowledgement."""
    seq = seat.seq if seq is None else seq
    text = seat.move if seq % 2 == 0 else "undo"
    sent = time.perf_counter()
    reply = await seat.client.request({"type": "move", "race": seat.race, "seq": seq, "move_id": uuid.uuid4().hex, "move": text})
    if reply.get("type") == "moved":
        seat.seq = max(seat.seq, int(reply["seq"]))
        if measured:
            result.moves += 1
            result.latencies_ms.append((time.perf_counter() - sent) * 1000)
    elif measured:
        code = str(reply.get("code"))
        result.refusals[code] = result.refusals.get(code, 0) + 1
        if code == "out_of_sequence" and reply.get("expected") is not None:
            seat.seq = int(reply["expected"])
            seat.sent = min(seat.sent, seat.seq)  # later actions continue from where the race is


async def closed_loop(seat: Seat, order: WorkOrder, result: WorkResult) -> None:
    """Actions back to back until the end."""
    end = order.start_at + order.seconds
    while time.time() < end:
        await one_move(seat, result, measured=time.time() >= order.start_at)


async def open_loop(seat: Seat, order: WorkOrder, result: WorkResult) -> None:
    """One action every ``interval`` (random phase), each sent on its schedule without waiting for the previous
    one's acknowledgement (a player does not wait for the server to think of the next move: a server that falls
    behind gets a queue, as it would from people). Every action is offered; the ones still unanswered
    ``PIPELINE_GRACE`` seconds after the window count as not acknowledged."""
    next_at = order.start_at + random.uniform(0, order.interval)
    end = order.start_at + order.seconds
    seat.sent = seat.seq
    pending: set[asyncio.Task[None]] = set()
    while next_at < end:
        if (wait := next_at - time.time()) > 0:
            await asyncio.sleep(wait)
        result.send_lateness_ms.append(max(0.0, time.time() - next_at) * 1000)
        result.offered += 1
        next_at += order.interval
        task = asyncio.create_task(_pipelined(seat, result, seat.sent))
        seat.sent += 1
        pending.add(task)
        task.add_done_callback(pending.discard)
    if pending:
        _, late = await asyncio.wait(pending, timeout=PIPELINE_GRACE)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        if late:
            result.refusals["unanswered"] = result.refusals.get("unanswered", 0) + len(late)


async def _pipelined(seat: Seat, result: WorkResult, seq: int) -> None:
    """One pipelined action; a failure (a lost connection) is counted by its type, as the loops' own are."""
    try:
        await one_move(seat, result, measured=True, seq=seq)
    except (ConnectionError, TimeoutError) as error:
        result.refusals[type(error).__name__] = result.refusals.get(type(error).__name__, 0) + 1


async def run_order(order: WorkOrder, ready: Callable[[], float]) -> WorkResult:
    """Set up, report ready (``ready`` blocks until every worker is, and returns the common start time), drive the
    load for ``order.seconds``, report."""
    result = WorkResult()
    make_race = project_race if order.target == "project" else floor_race
    seats: list[Seat] = []
    watchers: list[LeanClient] = []
    if order.mode == "burst":  # the set-up is what is measured: every worker starts it at once
        await asyncio.sleep(max(0.0, await asyncio.to_thread(ready) - time.time()))
    setups = await asyncio.gather(*(make_race(order, index, result) for index in range(order.races)), return_exceptions=True)
    for setup in setups:
        if isinstance(setup, BaseException):
            result.setup_errors.append(repr(setup))
        else:
            seats.extend(setup)
    if order.mode == "burst":
        if order.target == "project":
            await asyncio.gather(*(asyncio.wait_for(seat.client.started.wait(), 60) for seat in seats), return_exceptions=True)
            result.started_races = sum(seat.client.started.is_set() for seat in seats) // 2
        await asyncio.sleep(0.5)  # a second reply to a set-up request would have come by now
        return await _finish(result, seats, watchers)
    if order.target == "project":
        await asyncio.gather(*(asyncio.wait_for(seat.client.started.wait(), 60) for seat in seats), return_exceptions=True)
    races = sorted({seat.race for seat in seats})
    for batch in range(0, order.idle_races, 100):
        idle = await asyncio.gather(
            *(idle_race(order, index, result) for index in range(batch, min(order.idle_races, batch + 100))), return_exceptions=True
        )
        for item in idle:
            if isinstance(item, BaseException):
                result.setup_errors.append(repr(item))
            else:
                watchers.append(item)
    for index in range(order.spectators):
        if races:
            watchers.append(await spectator(order, races[index % len(races)], result))
    start_at = await asyncio.to_thread(ready)
    order = replace(order, start_at=start_at)
    await asyncio.sleep(max(0.0, start_at - time.time()))
    before = resource.getrusage(resource.RUSAGE_SELF)
    driver = closed_loop if order.mode == "closed" else open_loop
    outcomes = await asyncio.gather(*(driver(seat, order, result) for seat in seats), return_exceptions=True)
    after = resource.getrusage(resource.RUSAGE_SELF)
    result.cpu_seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            result.refusals[type(outcome).__name__] = result.refusals.get(type(outcome).__name__, 0) + 1
    return await _finish(result, seats, watchers)


async def _finish(result: WorkResult, seats: list[Seat], watchers: list[LeanClient]) -> WorkResult:
    await asyncio.gather(*(client.close() for client in {seat.client for seat in seats} | set(watchers)), return_exceptions=True)
    return result


def work(order: WorkOrder, barrier: Any, start_time: Any, results: Any) -> None:
    """Entry point of a worker process: ``barrier`` (all workers and the conductor) marks the end of set-up, after
    which ``start_time`` (a shared double) holds the start; the result goes to the ``results`` queue."""

    def ready() -> float:
        barrier.wait()
        barrier.wait()  # the conductor has set the start time between the two
        return float(start_time.value)

    try:
        results.put(asyncio.run(run_order(order, ready)))
    except Exception as error:  # noqa: BLE001 - reported to the conductor, which must not wait forever
        failed = WorkResult()
        failed.setup_errors.append(repr(error))
        results.put(failed)
        barrier.abort()
