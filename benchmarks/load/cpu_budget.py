"""A fixed CPU budget per server process for ``flowergarden bench load --cpu-per-process`` (a Linux cgroup quota).

On a 2-core machine one race server process, Redis and the load generators already share both cores, so a second
server process has no core of its own and "2 processes against 1" measures the machine, not the design. Giving
every server process (the race server's and the floor server's alike) the same quota, e.g. 0.4 of a core, with
enough cores left over for Redis and the load, emulates processes that each have a core of their own at that
speed: the scaling ratio then shows what a second process adds when CPU for it exists.

Each capped process gets its own CPU cgroup (v1: ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` under the ``cpu``
hierarchy; v2: ``cpu.max`` where the ``cpu`` controller is enabled) and is moved into it; the group is removed
once the process has gone. Where neither is possible (no cgroup, no permission), :class:`CpuBudgetUnavailable`
says why: the bench must never run uncapped while claiming a budget.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 100_000
"""The quota's accounting period: 100 ms, the kernel's default; the quota is a fraction of it."""
MIN_FRACTION = 0.05


class CpuBudgetUnavailable(Exception):
    """No CPU cgroup can be created and filled here (the message says why and what would be needed)."""


def budget_fraction(text: str) -> float:
    """``--cpu-per-process`` as argparse reads it: a fraction of a core in [0.05, the machine's cores]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    cores = os.cpu_count() or 1
    if not MIN_FRACTION <= value <= cores:
        raise argparse.ArgumentTypeError(f"a fraction of a core between {MIN_FRACTION} and {cores} (the machine's cores), not {text}")
    return value


@dataclass(frozen=True, slots=True)
class CgroupHierarchy:
    """Where CPU groups are made: the version (1 or 2) and the directory new groups go under."""

    version: int
    parent: Path

    @property
    def label(self) -> str:
        return "cgroup v1 cpu.cfs_quota_us" if self.version == 1 else "cgroup v2 cpu.max"


def find_hierarchy(root: Path = CGROUP_ROOT) -> CgroupHierarchy:
    """The writable CPU cgroup hierarchy of this machine (v1's ``cpu`` controller first, else v2's), or
    :class:`CpuBudgetUnavailable` saying why there is none."""
    reasons = []
    for v1 in (root / "cpu", root / "cpu,cpuacct"):
        if (v1 / "cpu.cfs_quota_us").exists():
            if os.access(v1, os.W_OK):
                return CgroupHierarchy(1, v1)
            reasons.append(f"{v1} is not writable (run as root)")
    for v2 in (root, root / "unified"):
        controllers = v2 / "cgroup.controllers"
        if controllers.exists():
            if "cpu" not in controllers.read_text().split():
                reasons.append(f"{v2} (cgroup v2) has no cpu controller")
            elif not os.access(v2, os.W_OK):
                reasons.append(f"{v2} is not writable (run as root)")
            else:
                return CgroupHierarchy(2, v2)
    if not reasons:
        reasons.append(f"no cgroup CPU controller is mounted under {root}")
    raise CpuBudgetUnavailable("--cpu-per-process needs a writable Linux CPU cgroup: " + "; ".join(reasons))


@dataclass(slots=True)
class CpuGroup:
    """One process's CPU group: created with its quota, filled with the process, read for throttling, removed."""

    hierarchy: CgroupHierarchy
    path: Path
    fraction: float

    @classmethod
    def cap(cls, hierarchy: CgroupHierarchy, pid: int, fraction: float) -> CpuGroup:
        """Put ``pid`` (and its threads) in a new group allowed ``fraction`` of one core."""
        path = hierarchy.parent / f"flowergarden-bench-{os.getpid()}-{pid}"
        quota = max(1000, round(fraction * PERIOD_US))
        try:
            if hierarchy.version == 2:
                control = hierarchy.parent / "cgroup.subtree_control"
                if "cpu" not in control.read_text().split():
                    control.write_text("+cpu")
            path.mkdir()
            if hierarchy.version == 1:
                (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
                (path / "cpu.cfs_quota_us").write_text(str(quota))
            else:
                (path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            (path / "cgroup.procs").write_text(str(pid))
        except OSError as error:
            with_path = path if path.exists() else hierarchy.parent
            if path.exists():
                _remove(path)
            raise CpuBudgetUnavailable(f"could not cap process {pid} at {fraction:g} of a core in {with_path} ({hierarchy.label}): {error}") from None
        group = cls(hierarchy, path, fraction)
        if not group.holds(pid):
            group.remove()
            raise CpuBudgetUnavailable(f"process {pid} did not enter the CPU group {path}: refusing to run uncapped")
        return group

    def holds(self, pid: int) -> bool:
        """Whether the kernel puts ``pid`` in this group (its ``/proc/PID/cgroup`` names it for the cpu controller)."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return False
        for line in lines:
            _, controllers, where = line.split(":", 2)
            cpu = "cpu" in controllers.split(",") if self.hierarchy.version == 1 else controllers == ""
            if cpu and where.rstrip("/").endswith("/" + self.path.name):
                return True
        return False

    def throttling(self) -> tuple[int, int]:
        """(accounting periods so far, periods in which the quota ran out) from the group's ``cpu.stat``."""
        stats: dict[str, int] = {}
        try:
            for line in (self.path / "cpu.stat").read_text().splitlines():
                name, _, value = line.partition(" ")
                if value.strip().isdigit():
                    stats[name] = int(value)
        except OSError:
            return 0, 0
        return stats.get("nr_periods", 0), stats.get("nr_throttled", 0)

    def remove(self) -> None:
        """Delete the group (its process has exited; a group with processes left in it stays and is named)."""
        _remove(self.path)


def _remove(path: Path) -> None:
    try:
        path.rmdir()
    except OSError as error:
        print(f"note: CPU group {path} not removed ({error})", flush=True)
