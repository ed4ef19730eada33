#!/usr/bin/env python3
"""Refresh or verify the browser client's vendored copy of @msgpack/msgpack (docs/WEB.md).

    python3 tools/vendor_msgpack.py verify               check the vendored files against SHA256SUMS (no Node needed)
    python3 tools/vendor_msgpack.py refresh [VERSION]    fetch VERSION (default: the one in VERSION) with npm, check the
                                                         tarball against the registry's integrity hash, replace the copy

The copy is the package's built ES modules (``dist.esm/**/*.mjs``, byte for byte as published), its licence and
its version; SHA256SUMS lists every file so a changed or missing file is caught. npm is only needed to refresh.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@msgpack/msgpack"
VENDOR = Path(__file__).resolve().parent.parent / "server" / "web" / "static" / "vendor" / "msgpack"
SUMS = "SHA256SUMS"
VERSION_FILE = "VERSION"
LICENSE_FILE = "LICENSE.txt"


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify(folder: Path = VENDOR) -> list[str]:
    """The problems with the vendored copy (empty when every listed file is present and unchanged and no file is unlisted)."""
    sums_path = folder / SUMS
    if not sums_path.exists():
        return [f"{sums_path} is missing"]
    listed: dict[str, str] = {}
    for line in sums_path.read_text().splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    problems = [f"{name}: missing" for name in listed if not (folder / name).is_file()]
    problems += [f"{name}: checksum differs" for name, digest in listed.items() if (folder / name).is_file() and sha256(folder / name) != digest]
    present = {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()} - {SUMS}
    problems += [f"{name}: not listed in {SUMS}" for name in sorted(present - set(listed))]
    return problems


def refresh(version: str) -> None:
    """Replace the vendored copy with ``version`` from the npm registry, checking the tarball's integrity first."""
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("refresh needs npm (Node.js); verify does not")
    spec = f"{PACKAGE}@{version}"
    integrity = json.loads(subprocess.run([npm, "view", spec, "dist.integrity", "--json"], check=True, capture_output=True, text=True).stdout)
    with tempfile.TemporaryDirectory() as work:
        tarball_name = subprocess.run([npm, "pack", spec, "--silent"], check=True, capture_output=True, text=True, cwd=work).stdout.strip().splitlines()[-1]
        tarball = Path(work) / tarball_name
        algorithm, _, expected = integrity.partition("-")
        actual = base64.b64encode(hashlib.new(algorithm, tarball.read_bytes()).digest()).decode()
        if actual != expected:
            raise SystemExit(f"{tarball_name}: {algorithm} {actual} does not match the registry's {expected}")
        with tarfile.open(tarball) as archive:
            archive.extractall(work, filter="data")
        package = Path(work) / "package"
        published = json.loads((package / "package.json").read_text())["version"]
        if VENDOR.exists():
            shutil.rmtree(VENDOR)
        VENDOR.mkdir(parents=True)
        built = package / "dist.esm"
        for source in sorted(built.rglob("*.mjs")):
            target = VENDOR / source.relative_to(built)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        shutil.copyfile(package / "LICENSE", VENDOR / LICENSE_FILE)
        (VENDOR / VERSION_FILE).write_text(f"{PACKAGE} {published}\nintegrity {integrity}\n")
    names = sorted(path.relative_to(VENDOR).as_posix() for path in VENDOR.rglob("*") if path.is_file() and path.name != SUMS)
    (VENDOR / SUMS).write_text("".join(f"{sha256(VENDOR / name)}  {name}\n" for name in names))
    print(f"vendored {PACKAGE} {published}: {len(names)} files in {VENDOR}")


def current_version() -> str:
    """The version named in the vendored VERSION file."""
    return (VENDOR / VERSION_FILE).read_text().split()[1]


def main(argv: list[str]) -> int:
    """Run ``verify`` or ``refresh``."""
    if argv[:1] == ["verify"]:
        problems = verify()
        for problem in problems:
            print(f"vendor_msgpack: {problem}", file=sys.stderr)
        if not problems:
            print(f"vendored {PACKAGE} {current_version()}: every file matches {SUMS}")
        return 1 if problems else 0
    if argv[:1] == ["refresh"]:
        refresh(argv[1] if len(argv) > 1 else current_version())
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
