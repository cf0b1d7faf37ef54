"""Fairness and utilisation metrics (thesis 2.2 and ch. 5).

All take the users' final global dominant shares G_i (eq. 3.3) as a sequence.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np


#: up to this many values :func:`gini` computes in Python floats (PDGDRF's test of eq.
#: 4.7 asks twice per decision over a server and its few neighbours, where numpy's call
#: overhead was 16 % of a run), beyond it with numpy; the two give the same bits
SMALL_GINI = 64


def pairwise_sum(x: Sequence[float], lo: int = 0, n: int = -1) -> float:
    """Sum of ``x[lo:lo + n]`` (all of ``x`` by default) with the rounding of numpy's
    ``add.reduce`` on a contiguous float64 array (its pairwise summation: eight running
    sums over blocks of up to 128 values, halves above that), so that a float computed
    here equals the one numpy computes (tests/test_metrics.py checks it bit for bit)."""
    if n < 0:
        n = len(x) - lo
    return _pairwise_sum(array("d", x), lo, n)


def _pairwise_sum(x: Any, lo: int, n: int) -> float:
    """:func:`pairwise_sum` of an array of doubles (compiled: in C doubles, which round
    as Python floats do)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += x[i]
        return res
    if n <= 128:
        r0, r1, r2, r3, r4, r5, r6, r7 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3], x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
        i = 8
        end = n - n % 8
        while i < end:
            j = lo + i
            r0 += x[j]
            r1 += x[j + 1]
            r2 += x[j + 2]
            r3 += x[j + 3]
            r4 += x[j + 4]
            r5 += x[j + 5]
            r6 += x[j + 6]
            r7 += x[j + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += x[lo + i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(x, lo, half) + _pairwise_sum(x, lo + half, n - half)


def gini(shares: Sequence[float] | np.ndarray) -> float:
    """Gini coefficient, eq. 2.6/2.7: sum_ij |x_i - x_j| / (2 n sum_i x_i).

    Computed in O(n log n) from the sorted values (same value as the double sum).
    0 for all-equal shares (and for all-zero shares, where nobody is better off).
    """
    if len(shares) <= SMALL_GINI:
        return _gini_small([float(v) for v in shares])
    return _gini_numpy(shares)


def _gini_numpy(shares: Sequence[float] | np.ndarray) -> float:
    """:func:`gini` in numpy, for more than :data:`SMALL_GINI` shares; the bits that
    :func:`_gini_small` must give for fewer (tests/test_metrics.py)."""
    x = np.sort(np.asarray(shares, dtype=np.float64))
    n = x.size
    total = x.sum()
    if n == 0 or total <= 0 or x[0] == x[-1]:
        return 0.0
    # sum_ij |x_i - x_j| = 2 * sum_k (2k - n - 1) x_(k), k = 1..n over sorted values
    k = np.arange(1, n + 1)
    return max(0.0, float(2.0 * np.sum((2 * k - n - 1) * x) / (2.0 * n * total)))


def _gini_small(x: list[float]) -> float:
    """:func:`gini`'s numpy arithmetic, step for step in Python floats (:func:`_gini_of`);
    compiled, in C doubles."""
    n = len(x)
    return _gini_of(array("d", x), array("d", [0.0]) * n, n)


#: scratch of :func:`gini_falls`: the values, and their Gini terms (grown when short)
_GX = array("d", [0.0]) * 16
_GT = array("d", [0.0]) * 16


def gini_falls(share: float, step: float, utilities: Any, n: int) -> bool:
    """PDGDRF's test (alg. 6 on eq. 4.7): whether the Gini coefficient of a server's
    lowest share raised by ``step`` and its neighbours' shares is below that of the same
    values with the share as it is. A neighbour's share is minus its utility (eq. 4.2),
    for the first ``n`` of ``utilities``; one of utility -inf (a server without users)
    or NaN is left out. The same bits as ``gini([share + step, *others]) <
    gini([share, *others])``, computed once the values are in place (compiled: in C
    doubles, on scratch arrays, no list or float object made)."""
    global _GX, _GT
    if len(_GX) < n + 1:
        _GX = array("d", [0.0]) * (2 * n + 2)
        _GT = array("d", [0.0]) * (2 * n + 2)
    m = 1
    for k in range(n):
        u = utilities[k]
        if u - u == 0.0:  # finite
            _GX[m] = -u
            m += 1
    _GX[0] = share + step
    raised = _gini_of(_GX, _GT, m)
    _GX[0] = share
    return raised < _gini_of(_GX, _GT, m)


def _gini_of(x: Any, terms: Any, n: int) -> float:
    """The Gini coefficient of ``x[:n]`` with numpy's arithmetic: the values sorted into
    ``terms`` (a stable insertion sort: the order list.sort gives), then the weights 2k -
    n - 1 (exact integers) times the sorted values, both sums rounded as numpy rounds them
    (:func:`pairwise_sum`), the terms computed in place."""
    for k in range(n):  # terms[:k] sorted; x[k] goes after every value not above it
        v = x[k]
        j = k
        while j > 0 and terms[j - 1] > v:
            terms[j] = terms[j - 1]
            j -= 1
        terms[j] = v
    total = _pairwise_sum(terms, 0, n)
    if n == 0 or total <= 0 or terms[0] == terms[n - 1]:
        return 0.0
    for k in range(n):
        terms[k] = (2 * k + 1 - n) * terms[k]
    g = 2.0 * _pairwise_sum(terms, 0, n) / (2.0 * n * total)
    return g if g > 0.0 else 0.0


def min_share(shares: Sequence[float] | np.ndarray) -> float:
    """The DRF objective (eq. 2.3/3.4): the minimum global dominant share."""
    return float(np.min(shares)) if len(shares) else 0.0


def ratio_20_20(shares: Sequence[float] | np.ndarray) -> float:
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


def jain(shares: Sequence[float] | np.ndarray) -> float:
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
