"""Prometheus metrics of one server process, served at ``GET /metrics`` (docs/OPERATIONS.md "Metrics").

The other layers report through the small functions below (one call per fact), so instrumentation stays one
line where it happens. Every label takes values from a closed set (request types, error codes, close codes,
roles, statuses, worker names): never a race id, player id or address, so the number of series stays bounded.
Counters live as long as the process (one registry per process, as Prometheus expects); gauges that describe
live state are read from their sources when scraped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, TypeVar

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from server import version

CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The Prometheus text exposition format :func:`exposition` writes (what prometheus-client's own server sends)."""


class Role(str, Enum):
    """What an open connection does: a connection seated in any race it follows is a player (its own race waiting
    for an opponent and a quick-match entry included), else one watching a race is a spectator, else it is in the
    lobby (connected, said hello, or watches the lobby list)."""

    PLAYER = "player"
    SPECTATOR = "spectator"
    LOBBY = "lobby"


KNOWN_CLOSE_CODES = frozenset({1000, 1001, 1002, 1003, 1006, 1007, 1008, 1009, 1011, 1012, 1013, 4000, 4001, 4002})
"""Close codes counted under their own label; any other is counted as ``other``."""

disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: they double the output and nobody graphs them

REGISTRY = CollectorRegistry(auto_describe=True)
"""This process's metrics (not prometheus_client's global registry: only what this module defines)."""
ProcessCollector(registry=REGISTRY)  # process_resident_memory_bytes, process_cpu_seconds_total, open fds, ...
PlatformCollector(registry=REGISTRY)  # python_info

BUILD_INFO = Gauge("flowergarden_build_info", "Always 1; the label says which release this process runs.", ["version"], registry=REGISTRY)
BUILD_INFO.labels(version=version()).set(1)
OPEN_FILES_LIMIT = Gauge(
    "flowergarden_open_files_limit", "The file descriptors this process may hold (its soft limit, raised to the hard one at start).", registry=REGISTRY
)


def open_files_limit(limit: int) -> None:
    """The process's descriptor limit in force (after :func:`server.app.raise_open_files_limit`)."""
    OPEN_FILES_LIMIT.set(limit)

_REQUEST_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_REDIS_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0)

CONNECTIONS_OPENED = Counter(
    "flowergarden_connections_opened", "WebSocket connections accepted.", registry=REGISTRY
)
CONNECTIONS_CLOSED = Counter(
    "flowergarden_connections_closed", "WebSocket connections ended, by close code (sent or received).", ["code"], registry=REGISTRY
)
HTTP_REFUSED = Counter(
    "flowergarden_handshakes_refused", "Connection attempts refused before the WebSocket handshake, by reason.", ["reason"],
    registry=REGISTRY,
)
REQUESTS = Histogram(
    "flowergarden_request_seconds",
    "Time from a request frame's arrival to its reply being queued for the client, by request type "
    "(type=move is the move handling latency, receive -> moved/error).",
    ["type"],
    buckets=_REQUEST_BUCKETS,
    registry=REGISTRY,
)
MOVES = Counter("flowergarden_moves", "Actions stored (accepted) and resends answered as duplicates.", ["outcome"], registry=REGISTRY)
MOVES_REFUSED = Counter("flowergarden_moves_refused", "Move requests refused, by error code.", ["code"], registry=REGISTRY)
REFUSALS = Counter("flowergarden_request_errors", "Requests answered with an error, by request type and code.", ["type", "code"], registry=REGISTRY)
RACES = Counter(
    "flowergarden_races",
    "Race status changes made by this process (created, countdown, running, finished, closed); summed over all "
    "processes each change is counted once.",
    ["status"],
    registry=REGISTRY,
)
ATTEMPTS_ENDED = Counter("flowergarden_attempts_ended", "Player attempts ended, by reason.", ["reason"], registry=REGISTRY)
RESULTS = Counter("flowergarden_race_results", "Races decided, by result reason.", ["reason"], registry=REGISTRY)
FANOUT_LAG = Histogram(
    "flowergarden_event_fanout_seconds",
    "Time from a race event being stored to it being handed to a recipient's outbox, by recipient role "
    "(a spectator's deliberate delay is not counted).",
    ["role"],
    buckets=_LAG_BUCKETS,
    registry=REGISTRY,
)
REDIS_COMMANDS = Histogram(
    "flowergarden_redis_command_seconds", "Redis command round trips, by command (EVALSHA = a Lua script).", ["command"],
    buckets=_REDIS_BUCKETS, registry=REGISTRY,
)
REDIS_ERRORS = Counter("flowergarden_redis_errors", "Redis commands that failed, by command.", ["command"], registry=REGISTRY)
RATE_LIMITED = Counter(
    "flowergarden_rate_limited",
    "Rate-limit hits: frames dropped with rate_limited (action=refused), connections closed for flooding (closed).",
    ["action"],
    registry=REGISTRY,
)
OUTBOX_DROPS = Counter(
    "flowergarden_outbox_drops", "Connections dropped because the client did not read (outbox or write buffer full).", registry=REGISTRY
)
SEED_POOL = Gauge("flowergarden_seed_pool_size", "Proven solvable seeds ready, by profile (refreshed every few seconds).", ["profile"], registry=REGISTRY)
ANALYSIS_BACKLOG = Gauge(
    "flowergarden_analysis_backlog",
    "Races in the shared post-race analysis queue due now: finished races waiting for their analysis, and running "
    "ones due for the analyst's next look (refreshed every few seconds; every process reports the same queue).",
    registry=REGISTRY,
)
ARCHIVE_WAITING = Gauge(
    "flowergarden_archive_waiting",
    "Finished races queued for the PostgreSQL archive and not confirmed yet (one queue in Redis: every process reports it).",
    registry=REGISTRY,
)
ARCHIVE_OLDEST = Gauge(
    "flowergarden_archive_oldest_seconds", "Age of the oldest finished race not archived yet (0 when none waits).", registry=REGISTRY
)
RACES_ARCHIVED = Counter("flowergarden_races_archived", "Finished races this process wrote to the PostgreSQL archive.", registry=REGISTRY)
RACES_ANALYSED = Counter(
    "flowergarden_races_analysed", "Finished races the post-race analysis stored, by the solver's verdict on the deal.", ["deal"], registry=REGISTRY
)
CACHED_POSITIONS = Gauge(
    "flowergarden_cached_positions", "Player positions this process keeps for the races played here (two a race).", registry=REGISTRY
)
DEGRADED_ACKS = Counter(
    "flowergarden_degraded_acks", "Race changes acknowledged at primary at durability replica (no replica attached).", registry=REGISTRY
)
WORKER_ERRORS = Counter(
    "flowergarden_background_errors", "Failed rounds of background workers (each retried), by worker and cause.", ["worker", "cause"],
    registry=REGISTRY,
)  # fmt: skip
ADMIN_ACTIONS = Counter("flowergarden_admin_actions", "Operator commands executed by this process, by action and outcome.", ["action", "outcome"], registry=REGISTRY)
LOG_EVENTS = Counter("flowergarden_log_events", "Log events written, by level.", ["level"], registry=REGISTRY)

ConnectionCounts = Callable[[], Mapping[Role, int]]
WorkerStates = Callable[[], Mapping[str, bool]]


class _LiveState(Collector):
    """Gauges read from the running servers of this process when scraped: connections by role, workers alive,
    whether the process accepts new connections."""

    def __init__(self) -> None:
        self.connection_sources: list[ConnectionCounts] = []
        self.worker_sources: list[WorkerStates] = []
        self.accepting_sources: list[Callable[[], bool]] = []
        self.counters: dict[str, tuple[str, Callable[[], int]]] = {}

    def collect(self):  # type: ignore[no-untyped-def]  # prometheus_client's Collector is untyped here
        connections = GaugeMetricFamily("flowergarden_connections", "Open WebSocket connections, by role.", labels=["role"])
        totals = {role: 0 for role in Role}
        for counts in list(self.connection_sources):
            for role, count in counts().items():
                totals[role] += count
        for role, count in totals.items():
            connections.add_metric([role.value], count)
        yield connections
        workers = GaugeMetricFamily(
            "flowergarden_background_worker_up", "1 while a background worker runs (or ended with nothing to do), 0 once it crashed.", labels=["worker"]
        )
        for states in list(self.worker_sources):
            for name, alive in states().items():
                workers.add_metric([name], 1 if alive else 0)
        yield workers
        accepting = GaugeMetricFamily("flowergarden_accepting", "1 while the process accepts new connections (0: draining or stopping).")
        accepting.add_metric([], 1 if any(source() for source in list(self.accepting_sources)) else 0)
        yield accepting
        for name, (documentation, read) in list(self.counters.items()):
            yield CounterMetricFamily(name, documentation, value=read())


_LIVE = _LiveState()
REGISTRY.register(_LIVE)


def exposition() -> bytes:
    """The current metrics in the Prometheus text format."""
    return generate_latest(REGISTRY)


# --- what the layers report -----------------------------------------------------------------------


def close_code_label(code: int | None) -> str:
    """The label of a close code: itself if known, ``none`` when no close frame was exchanged, else ``other``."""
    if code is None:
        return "none"
    return str(code) if code in KNOWN_CLOSE_CODES else "other"


def connection_opened() -> None:
    """A WebSocket connection was accepted."""
    CONNECTIONS_OPENED.inc()


def connection_closed(code: int | None) -> None:
    """A connection ended with close ``code`` (None: dropped without a close frame)."""
    CONNECTIONS_CLOSED.labels(close_code_label(code)).inc()


def handshake_refused(reason: str) -> None:
    """A connection attempt was refused before the handshake (``banned``, ``draining``, ``store_unavailable``)."""
    HTTP_REFUSED.labels(reason).inc()


M = TypeVar("M", Counter, Histogram)
_CHILDREN: dict[tuple[int, str], Any] = {}


def _labelled(metric: M, label: str) -> M:
    """``metric.labels(label)``, looked up once: what a move reports runs several times per move, and prometheus_client
    checks and locks on every ``labels`` call (labels are never removed here, so a child stays valid)."""
    key = (id(metric), label)
    child = _CHILDREN.get(key)
    if child is None:
        child = _CHILDREN[key] = metric.labels(label)
    labelled: M = child
    return labelled


def request_handled(request_type: str, seconds: float) -> None:
    """A request of ``request_type`` was answered ``seconds`` after its frame arrived."""
    _labelled(REQUESTS, request_type).observe(seconds)


def move_stored(duplicate: bool) -> None:
    """A move request was answered ``moved`` (a resend of a stored move when ``duplicate``)."""
    _labelled(MOVES, "duplicate" if duplicate else "accepted").inc()


def request_refused(request_type: str, code: str) -> None:
    """A request was answered with error ``code``."""
    REFUSALS.labels(request_type, code).inc()
    if request_type == "move":
        MOVES_REFUSED.labels(code).inc()


def race_status(status: str) -> None:
    """This process changed a race to ``status`` (``created`` for a new race)."""
    RACES.labels(status).inc()


def attempt_ended(reason: str) -> None:
    """A player's attempt ended for ``reason``."""
    ATTEMPTS_ENDED.labels(reason).inc()


def race_result(reason: str) -> None:
    """A race was decided (``reason`` of the result)."""
    RESULTS.labels(reason).inc()
    RACES.labels("finished").inc()


def event_delivered(player: bool, seconds: float) -> None:
    """An event reached a recipient's outbox ``seconds`` after it was stored (spectator delay excluded)."""
    _labelled(FANOUT_LAG, Role.PLAYER.value if player else Role.SPECTATOR.value).observe(max(seconds, 0.0))


def redis_command(command: str, seconds: float, failed: bool) -> None:
    """A Redis command took ``seconds`` (``failed``: it raised)."""
    _labelled(REDIS_COMMANDS, command).observe(seconds)
    if failed:
        REDIS_ERRORS.labels(command).inc()


def rate_limited(closed: bool) -> None:
    """A frame was dropped for the rate limit, or (``closed``) the connection was closed for flooding."""
    RATE_LIMITED.labels("closed" if closed else "refused").inc()


def outbox_dropped() -> None:
    """A connection was dropped because its client did not read."""
    OUTBOX_DROPS.inc()


def seed_pool_size(profile: str, size: int) -> None:
    """The seed pool of ``profile`` holds ``size`` proven seeds."""
    SEED_POOL.labels(profile).set(size)


def analysis_backlog(races: int) -> None:
    """``races`` wait in the post-race analysis queue now."""
    ANALYSIS_BACKLOG.set(races)


def archive_lag(waiting: int, oldest_seconds: float) -> None:
    """``waiting`` finished races are not archived yet, the oldest for ``oldest_seconds``."""
    ARCHIVE_WAITING.set(waiting)
    ARCHIVE_OLDEST.set(oldest_seconds)


def archived(races: int) -> None:
    """This process wrote ``races`` new races to the archive."""
    RACES_ARCHIVED.inc(races)


def race_analysed(deal: str) -> None:
    """The post-race analysis of a race was stored; ``deal``: ``solved``, ``unsolvable`` or ``unknown``."""
    RACES_ANALYSED.labels(deal).inc()


def cached_positions(count: int) -> None:
    """The race service now keeps ``count`` player positions (dropped when a race ends)."""
    CACHED_POSITIONS.set(count)


def degraded_ack() -> None:
    """A race change was acknowledged at ``primary`` although the durability is ``replica``: its primary has no
    replica attached (``durability_degraded``)."""
    DEGRADED_ACKS.inc()


def worker_failed(worker: str, *, expected: bool) -> None:
    """A round of background worker ``worker`` failed (it retries): ``expected`` for a failure of the kind it knows
    (Redis or its driver, a worker process), else a bug (logged with its traceback)."""
    WORKER_ERRORS.labels(worker, "expected" if expected else "unexpected").inc()


def admin_action(action: str, ok: bool) -> None:
    """This process executed operator command ``action``."""
    ADMIN_ACTIONS.labels(action, "ok" if ok else "refused").inc()


def log_event(level: str) -> None:
    """A log event of ``level`` was written."""
    LOG_EVENTS.labels(level.lower()).inc()


def count_from(name: str, documentation: str, read: Callable[[], int]) -> None:
    """Expose a count kept elsewhere (read when scraped) as counter ``name`` (registering a name again replaces it)."""
    _LIVE.counters[name] = (documentation, read)


def watch_server(connections: ConnectionCounts, workers: WorkerStates, accepting: Callable[[], bool]) -> Callable[[], None]:
    """Read a running server's live gauges when scraped; returns the function that stops reading them."""
    _LIVE.connection_sources.append(connections)
    _LIVE.worker_sources.append(workers)
    _LIVE.accepting_sources.append(accepting)

    def forget() -> None:
        _LIVE.connection_sources.remove(connections)
        _LIVE.worker_sources.remove(workers)
        _LIVE.accepting_sources.remove(accepting)

    return forget
