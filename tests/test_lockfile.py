"""requirements.lock and requirements-runtime.lock pin every package pyproject.toml asks for, within its bounds, with hashes.

`dev.py test` (and so CI) installs from requirements.lock (the dependencies and the test extra), an image from
requirements-runtime.lock (the dependencies alone), both with ``pip --require-hashes``. A dependency added to
pyproject.toml without compiling the locks again (the commands are in their headers) fails here, not on a fresh
machine, and the two locks agree on every version they share.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
RUNTIME_LOCK = ROOT / "requirements-runtime.lock"


def locked_versions(lock: Path = LOCK) -> dict[str, str]:
    """Every ``name==version`` line of a lock file, by canonical name."""
    text = lock.read_text(encoding="utf-8")
    return {canonicalize_name(name): version for name, version in re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", text, re.MULTILINE)}


def wanted(*, test: bool = True) -> list[Requirement]:
    """The project's dependencies, and its test extra unless ``test`` is false."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(line) for line in [*project["dependencies"], *(project["optional-dependencies"]["test"] if test else [])]]


@pytest.mark.parametrize(("lock", "test"), [(LOCK, True), (RUNTIME_LOCK, False)], ids=["test", "runtime"])
def test_every_dependency_of_pyproject_is_locked_at_a_version_it_allows(lock: Path, test: bool) -> None:
    locked = locked_versions(lock)
    for requirement in wanted(test=test):
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement.name} is not in requirements.lock: compile it again (see its header)"
        assert requirement.specifier.contains(locked[name], prereleases=True), f"the lock has {name}=={locked[name]}, pyproject wants {requirement}"


def test_the_runtime_lock_has_the_versions_of_the_test_lock() -> None:
    everything = locked_versions(LOCK)
    assert {name: everything.get(name) for name in locked_versions(RUNTIME_LOCK)} == locked_versions(RUNTIME_LOCK)


@pytest.mark.parametrize("lock", [LOCK, RUNTIME_LOCK], ids=["test", "runtime"])
def test_every_locked_package_has_a_hash_and_the_lock_names_no_machine_local_index(lock: Path) -> None:
    text = lock.read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", text)
    pinned = [entry for entry in entries if re.match(r"[A-Za-z0-9_.-]+==", entry)]
    assert len(pinned) == len(locked_versions(lock))
    assert all("--hash=sha256:" in entry for entry in pinned)
    assert not re.search(r"^--(extra-)?index-url|^--find-links", text, re.MULTILINE)


def test_redis_and_hiredis_are_bounded_to_their_tested_major_version() -> None:
    bounds = {str(canonicalize_name(requirement.name)): requirement.specifier for requirement in wanted()}
    for name in ("redis", "hiredis"):
        assert any(spec.operator == "<" for spec in bounds[name]), f"{name} has no upper bound in pyproject.toml"
