"""What an install ships (the wheel, the container image): every file the packages read at run time besides their
Python modules is named by pyproject.toml's package data. A file left out works from a checkout and is missing once
installed: the schema migrations were, so the image's servers found no migration, took schema version 0 for the
latest and ran on an empty database (every archive write failed)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "server", "client", "cli")
NOT_SHIPPED = ("*.py", "*.pyc", "*.so", "*.c")
"""Modules are shipped as such; the solver's C source is compiled into the extension module."""


def owning_package(path: Path) -> Path:
    """The nearest folder above ``path`` that is a Python package: the one whose package data must name it."""
    folder = path.parent
    while not (folder / "__init__.py").exists():
        folder = folder.parent
    return folder


def test_every_data_file_of_the_packages_is_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    data_files = [path for package in PACKAGES for path in (ROOT / package).rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts and not any(fnmatch.fnmatch(path.name, glob) for glob in NOT_SHIPPED)]
    assert any(path.suffix == ".sql" for path in data_files)
    missing = []
    for path in data_files:
        package = owning_package(path)
        name = path.relative_to(package).as_posix()
        globs = patterns.get(package.relative_to(ROOT).as_posix().replace("/", "."), [])
        if not any(fnmatch.fnmatch(name, glob) and name.count("/") == glob.count("/") for glob in globs):
            missing.append(path.relative_to(ROOT).as_posix())
    assert not missing, f"not in pyproject.toml [tool.setuptools.package-data]: {missing}"
