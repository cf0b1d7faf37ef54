"""Distinct positions drawn from a numpy generator, the draws a C call away when compiled.

The bootstrap answers every node's first Join with a few peers drawn at random from the
nodes that joined before (``rng.integers(0, n, 2 k)``, the first k distinct, thesis ch.
4); at 10^4 nodes those calls, a few microseconds of numpy's argument handling each, were
half of the first protocol period's time. Compiled, :func:`distinct_draws` takes the
numbers from the generator's bit generator itself (numpy's C interface, ``bitgen_t``)
exactly as ``Generator.integers`` takes them for a range below 2**32: Lemire's
multiply-and-reject on 32-bit words (``random_bounded_uint64_fill`` in numpy's
``distributions.c``), every number of a batch drawn even where the first k distinct come
sooner. Before it is trusted, the C path draws beside ``integers`` on a scratch
generator (:func:`_c_draws_agree`); where they differ (another numpy), the numpy call
stays. Interpreted, the numpy call is the only path; tests/test_draws.py holds both to
``integers`` draw for draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

#: distinct draws wanted at most, for the C path's scratch of 2 k numbers
MAX_WANTED = 4096


def distinct_draws(rng: np.random.Generator, n: int, k: int, exclude: int = -1) -> list[int]:
    """k distinct positions in ``range(n)`` other than ``exclude``, in the order drawn:
    batches of ``rng.integers(0, n, 2 k)`` until k are found. There must be k such
    positions (n - (0 <= exclude < n) >= k)."""
    if cython.compiled and _C_DRAWS and 0 < k <= MAX_WANTED and 1 <= n <= 0xFFFFFFFF:
        bitgen = _bitgen_of(rng)  # type: ignore[name-defined]  # draws.pxd's
        if bitgen != cython.NULL:
            return _distinct_draws_c(bitgen, n, k, exclude)
    picks: dict[int, None] = {}  # distinct, in draw order
    while len(picks) < k:
        for i in rng.integers(0, n, 2 * k).tolist():
            if i != exclude:
                picks[i] = None
                if len(picks) == k:
                    break
    return list(picks)


def _distinct_draws_c(bitgen: Any, n: int, k: int, exclude: int) -> list[int]:
    """:func:`distinct_draws` in C (compiled only): each batch of 2 k numbers drawn as
    ``integers`` draws them, then scanned; a position is new if none picked equals it."""
    m = 2 * k
    r = n - 1
    picks = []
    got = 0
    while got < k:
        for x in range(m):
            _BATCH[x] = _bounded(bitgen, r)  # type: ignore[name-defined]  # draws.pxd's
        for x in range(m):
            i = _BATCH[x]  # type: ignore[name-defined]
            if i == exclude:
                continue
            new = True
            for y in range(got):
                if _PICKED[y] == i:  # type: ignore[name-defined]
                    new = False
                    break
            if new:
                _PICKED[got] = i  # type: ignore[name-defined]
                got += 1
                picks.append(i)
                if got == k:
                    break
    return picks


def _c_draws_agree() -> bool:
    """Whether the C path draws what ``Generator.integers`` draws, on twin scratch
    generators over ranges from 1 to 2**32 (including the whole 32-bit range, drawn
    without rejection, and ranges that reject often), batches interleaved with numpy's
    own calls so that the bit generator's buffered half-word is shared as it is in use."""
    if not cython.compiled:
        return True
    ours = np.random.default_rng(20170601)
    theirs = np.random.default_rng(20170601)
    for n in (1, 2, 3, 10, 1000, 12345, 2**31 + 1, 3 * 2**30, 2**32 - 1, 2**32):
        for k in (1, 3, 8):
            bitgen = _bitgen_of(ours)  # type: ignore[name-defined]  # draws.pxd's
            if bitgen == cython.NULL:
                return False
            got = [_bounded(bitgen, n - 1) for _ in range(2 * k)]  # type: ignore[name-defined]
            if got != theirs.integers(0, n, 2 * k).tolist():
                return False
            if ours.integers(0, 7, 3).tolist() != theirs.integers(0, 7, 3).tolist():  # state carried over alike
                return False
    return True


_C_DRAWS = _c_draws_agree()
