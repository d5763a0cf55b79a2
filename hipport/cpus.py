"""How many CPUs this process may really use: what ``--jobs 0`` (the default) means.

``os.cpu_count()`` counts the machine's CPUs. A process pinned to some of them
(``taskset``, a batch scheduler) or in a container with a CPU quota (Docker's ``--cpus``,
Kubernetes limits) that starts one worker per machine CPU only makes its workers queue
for the CPUs it has. So: the CPUs in the affinity mask, capped by the tightest cgroup CPU
quota on the way from this process's cgroup to the root (rounded up), at least one.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cpus(cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        n = os.cpu_count() or 1
    quota = cgroup_quota(cgroup_root, proc_cgroup)
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


def cgroup_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")) -> float | None:
    """CPUs' worth of time this process's cgroups allow (the tightest), or None if unlimited."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    quotas: list[float] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # cgroup v2: <root>/<path>/cpu.max = "QUOTA PERIOD" | "max PERIOD"
            dirs = [root]
            reader = _v2
        elif "cpu" in controllers.split(","):  # v1: cpu.cfs_quota_us / cpu.cfs_period_us
            dirs = [root / controllers, root / "cpu", root / "cpu,cpuacct"]
            reader = _v1
        else:
            continue
        rel = Path(path.lstrip("/"))
        for base in dirs:
            if not base.is_dir():
                continue
            for group in (base / rel, *(base / p for p in rel.parents)):
                q = reader(group)
                if q is not None:
                    quotas.append(q)
            break
    return min(quotas) if quotas else None


def _v2(group: Path) -> float | None:
    try:
        quota, period = (group / "cpu.max").read_text().split()[:2]
        return int(quota) / int(period) if quota != "max" and int(period) > 0 else None
    except (OSError, ValueError):
        return None


def _v1(group: Path) -> float | None:
    try:
        quota = int((group / "cpu.cfs_quota_us").read_text())
        period = int((group / "cpu.cfs_period_us").read_text())
        return quota / period if quota > 0 and period > 0 else None
    except (OSError, ValueError):
        return None
