"""Fairness and utilisation metrics (thesis 2.2 and ch. 5).

All take the users' final global dominant shares G_i (eq. 3.3) as a sequence.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def gini(shares: Sequence[float]) -> float:
    """Gini coefficient, eq. 2.6/2.7: sum_ij |x_i - x_j| / (2 n sum_i x_i).

    Computed in O(n log n) from the sorted values (same value as the double sum).
    0 for all-equal shares (and for all-zero shares, where nobody is better off).
    """
    x = np.sort(np.asarray(shares, dtype=np.float64))
    n = x.size
    total = x.sum()
    if n == 0 or total <= 0 or x[0] == x[-1]:
        return 0.0
    # sum_ij |x_i - x_j| = 2 * sum_k (2k - n - 1) x_(k), k = 1..n over sorted values
    k = np.arange(1, n + 1)
    return max(0.0, float(2.0 * np.sum((2 * k - n - 1) * x) / (2.0 * n * total)))


def min_share(shares: Sequence[float]) -> float:
    """The DRF objective (eq. 2.3/3.4): the minimum global dominant share."""
    return float(np.min(shares)) if len(shares) else 0.0


def ratio_20_20(shares: Sequence[float]) -> float:
    """20:20 ratio, eq. 2.8: share of the richest 20 % over the share of the poorest 20 %.

    The groups hold ceil(n / 5) users each (at least one). Infinite when the poorest
    group holds nothing, the case the thesis notes (2.2.2) as a division by zero.
    """
    x = np.sort(np.asarray(shares, dtype=np.float64))
    if x.size == 0:
        return 1.0
    k = max(1, int(np.ceil(x.size / 5)))
    poor, rich = x[:k].sum(), x[-k:].sum()
    if poor <= 0:
        return float("inf") if rich > 0 else 1.0
    return float(rich / poor)


def jain(shares: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when equal, 1/n when one holds all."""
    x = np.asarray(shares, dtype=np.float64)
    sq = float(np.sum(x * x))
    if x.size == 0 or sq <= 0:
        return 1.0
    return float(x.sum() ** 2 / (x.size * sq))


def utilization(used: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Per resource: used / capacity over the whole cluster (eq. 1.1)."""
    used_total = np.asarray(used, dtype=np.float64).reshape(-1, np.shape(capacity)[-1]).sum(axis=0)
    cap_total = np.asarray(capacity, dtype=np.float64).reshape(-1, np.shape(capacity)[-1]).sum(axis=0)
    return np.where(cap_total > 0, used_total / np.where(cap_total > 0, cap_total, 1.0), 0.0)
