"""A Docker engine of the container tests' own: Debian's docker.io installed when missing (as root, apt-get), a
``dockerd`` started with its own data root (kept under the user cache, so images built by one run serve the next)
and socket, stopped by its pid after the tests; the stand-in base and service images built by
``deploy/images/build-stand-ins.sh`` when no registry can give them. Where any of it cannot be had, the tests fail
with a message saying what is missing: never skipped."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("docker.io", "containerd", "runc", "debootstrap", "docker-compose")
TOOLS = ("dockerd", "docker", "docker-compose", "debootstrap")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flowergarden"


class EngineUnavailable(RuntimeError):
    """No Docker engine can run here; the message says why and what to do."""


def _install_tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise EngineUnavailable(f"the container tests need {', '.join(missing)}: run `apt-get install -y {' '.join(PACKAGES)}` as root")
    quiet = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]
    if subprocess.run(install, env=quiet, capture_output=True, check=False).returncode != 0:
        subprocess.run(["apt-get", "update"], env=quiet, capture_output=True, check=False)
        done = subprocess.run(install, env=quiet, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise EngineUnavailable(f"apt-get could not install {' '.join(PACKAGES)}: {done.stderr[-500:]}")


@contextmanager
def docker_engine() -> Iterator[dict[str, str]]:
    """The environment (``DOCKER_HOST``) of a running dockerd of these tests, with the stand-in images built."""
    if os.geteuid() != 0:
        raise EngineUnavailable("the container tests start a Docker engine and need root (run python3 dev.py test as root)")
    _install_tools()
    data_root = CACHE / "docker"
    data_root.mkdir(parents=True, exist_ok=True)
    with (open(CACHE / "docker.lock", "w") as lock, tempfile.TemporaryDirectory(prefix="fg-dockerd-") as run,
          open(Path(run) / "dockerd.log", "w") as log):
        fcntl.flock(lock, fcntl.LOCK_EX)  # one daemon per data root
        socket = Path(run) / "docker.sock"
        daemon = subprocess.Popen(
            ["dockerd", "-H", f"unix://{socket}", "--data-root", str(data_root), "--exec-root", f"{run}/exec",
             "--pidfile", f"{run}/dockerd.pid"],
            stdout=log, stderr=subprocess.STDOUT,
        )
        environment = {**os.environ, "DOCKER_HOST": f"unix://{socket}", "DOCKER_BUILDKIT": "0", "COMPOSE_DOCKER_CLI_BUILD": "0"}
        try:
            deadline = time.monotonic() + 60
            while subprocess.run(["docker", "info"], env=environment, capture_output=True, check=False).returncode != 0:
                if daemon.poll() is not None or time.monotonic() > deadline:
                    raise EngineUnavailable(f"dockerd did not start: {(Path(run) / 'dockerd.log').read_text()[-1500:]}")
                time.sleep(0.5)
            built = subprocess.run(["sh", str(ROOT / "deploy" / "images" / "build-stand-ins.sh")], env=environment,
                                   capture_output=True, text=True, check=False)
            if built.returncode != 0:
                raise EngineUnavailable(f"the stand-in images could not be built: {built.stdout[-800:]}{built.stderr[-800:]}")
            yield environment
        finally:
            daemon.terminate()
            try:
                daemon.wait(60)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(10)
