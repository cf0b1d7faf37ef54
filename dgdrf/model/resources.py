"""Resource vectors, fit checks and dominant shares (thesis 3.1, eqs. 3.1-3.3, 3.7).

Vectors are numpy float arrays over any number of named resources (2 in the thesis:
cpu, memory; 3 for cpu/memory/disk in Ru et al.).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

#: Relative slack of a fit check. Without it 1.2 - 1 = 0.19999... refuses two 0.1-tasks
#: where two fit (ORACLES.md example 3). Scaled by the server's capacity per resource.
FIT_TOLERANCE = 1e-9

#: Relative tolerance under which two dominant shares count as equal (ties go to the
#: lower user id): 10 * (0.1 / 2.2) and 1 / 2.2 differ in the last bit.
SHARE_TIE_TOLERANCE = 1e-9


def as_vector(values: Sequence[float]) -> np.ndarray:
    """A resource vector as a 1-d float64 array."""
    return np.asarray(values, dtype=np.float64)


def fits(demand: np.ndarray, free: np.ndarray, capacity: np.ndarray) -> bool:
    """True when ``demand`` fits into ``free`` (what remains of ``capacity``), eq. 3.2."""
    return bool(np.all(demand <= free + FIT_TOLERANCE * np.maximum(capacity, 1.0)))


def fit_mask(demand: np.ndarray, free: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Per server (rows of ``free``/``capacity``): does ``demand`` fit there? (eq. 3.2)."""
    return np.all(demand <= free + FIT_TOLERANCE * np.maximum(capacity, 1.0), axis=-1)


def task_dominant_share(demand: Sequence[float], total: Sequence[float]) -> float:
    """Global dominant share one task adds: max_r D_ir / C_r (eq. 3.3 with eq. 3.7).

    Because every task of a user has the same demand vector, A_il = z * D_i and
    eq. 3.3 reduces to G_i = (number of tasks of i) * max_r D_ir / C_r.
    A resource with zero cluster total cannot be demanded (the task would fit nowhere);
    it is left out of the max.

    In Python floats, a loop over the resources: the same quotients and maximum as the
    numpy expression it replaced (``np.where(total > 0, demand / total, 0).max()``) for
    a handful of resources, without its call overhead (a distributed scheduler asks at
    every decision).
    """
    best = 0.0
    first = True
    for k in range(min(len(demand), len(total))):  # zip's pairs, without a zip object
        cf = float(total[k])  # as float(d) / c converts c (compiled: C doubles)
        r = float(demand[k]) / cf if cf > 0 else 0.0
        if first or r > best:
            best, first = r, False
    return float(best)


def global_dominant_share(allocations: np.ndarray, total: np.ndarray) -> float:
    """Eq. 3.3 literally: G_i = sum over servers l of max_r A_ilr / C_r.

    ``allocations`` holds one row A_il per server (servers x resources).
    """
    alloc = np.atleast_2d(np.asarray(allocations, dtype=np.float64))
    safe = np.where(total > 0, total, 1.0)
    per_server = np.where(total > 0, alloc / safe, 0.0).max(axis=1)
    return float(per_server.sum())


_DIGITS = re.compile(r"(\d+)")


def natural_key(identifier: str) -> tuple:
    """Sort key for ids so that 'user-2' < 'user-10' (ties go to the lower id)."""
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS.split(identifier))
