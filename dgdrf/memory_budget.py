"""Will a run fit in this machine's memory? Estimated before anything is built, so that a
size beyond reach is refused with a line that says so, not a MemoryError traceback after
minutes of work.

The per-server and per-task figures are peaks measured on a whole Google cell
(bench/results/google-cell/README.md; how they were derived:
docs/notes/2026-11-25-google-cell-figures-in-code.md): a run keeps its nodes, and a
record per placed task. Only what is certain is held against the memory available:
the nodes, and a number of tasks that no run can place, so a large run that fits is
never refused.
"""

from __future__ import annotations

import os

import numpy as np

from dgdrf.errors import ConfigError

BYTES_PER_SERVER = 56_000
BYTES_PER_USER = 8_000
BYTES_PER_TASK = 1_500
#: a node's share of generating and writing a scenario (dgdrf scenario), not running it
SCENARIO_BYTES_PER_NODE = 2_000
#: more tasks than any run of this emulator could place (each one is a message exchange)
ABSURD_TASKS = 10**9


def available_bytes() -> int:
    """Memory available to a new process (MemAvailable), or the physical memory."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def check_nodes(servers: int, users: int, per_server: int = BYTES_PER_SERVER, per_user: int = BYTES_PER_USER) -> None:
    """Refuse a cluster whose nodes alone would not fit in the memory available."""
    need = servers * per_server + users * per_user
    have = available_bytes()
    if need > have:
        raise ConfigError(f"{servers:,} servers and {users:,} users need about {need / 1e9:,.1f} GB; this machine has {have / 1e9:,.1f} GB available")


def most_tasks(capacity: np.ndarray, demand: np.ndarray) -> float:
    """An upper bound on the tasks any policy can place: every task takes its user's
    dominant share s_u of some resource and no resource gives more than all of itself
    (eq. 3.3), so at most m / min_u s_u tasks fit."""
    total = capacity.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(total > 0, demand / np.where(total > 0, total, 1.0), np.where(demand > 0, np.inf, 0.0)).max(axis=1)
    smallest = float(shares.min()) if shares.size else np.inf
    return np.inf if smallest == 0 else len(total) / smallest


def check_scenario(capacity: np.ndarray, demand: np.ndarray) -> None:
    """Refuse a scenario whose nodes would not fit in memory, or whose tasks are so small
    against the cluster that the run could not end (an astronomical number of tasks)."""
    check_nodes(capacity.shape[0], demand.shape[0])
    bound = most_tasks(capacity, demand)
    if bound > ABSURD_TASKS:
        raise ConfigError(
            f"the smallest task is a {demand.shape[1] / bound:.3g} share of the cluster: up to {bound:.3g} tasks could be placed, "
            f"each a message exchange and about {BYTES_PER_TASK} bytes of records; scale the demands or the capacities"
        )
