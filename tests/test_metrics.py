"""Fairness metrics: ORACLES.md example 9 and the definitions of thesis 2.2."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dgdrf.model import metrics
from dgdrf.model.resources import global_dominant_share, task_dominant_share


def test_gini_oracle9():
    assert round(metrics.gini([1, 2, 3, 4, 5]), 4) == 0.2667
    assert round(metrics.gini([1, 5, 5, 5, 5]), 4) == 0.1524
    assert metrics.gini([0.3] * 7) == 0.0
    for n in (2, 5, 20):
        assert metrics.gini([0] * (n - 1) + [1]) == pytest.approx((n - 1) / n)


@given(st.lists(st.floats(min_value=0, max_value=1e3, allow_nan=False), min_size=1, max_size=30))
def test_gini_equals_the_double_sum_of_eq_2_6(xs):
    total = sum(xs)
    expected = 0.0 if total <= 0 else sum(abs(a - b) for a, b in itertools.product(xs, xs)) / (2 * len(xs) * total)
    assert metrics.gini(xs) == pytest.approx(expected, abs=1e-9)


def test_min_share_ratio_and_jain():
    assert metrics.min_share([0.3, 0.1, 0.2]) == 0.1
    assert metrics.ratio_20_20([1, 1, 1, 1, 1]) == 1.0
    assert metrics.ratio_20_20([1, 2, 3, 4, 5]) == 5.0
    assert metrics.ratio_20_20([0, 1, 1, 1, 1]) == float("inf")  # thesis 2.2.2: division by zero
    assert metrics.jain([2, 2, 2]) == pytest.approx(1.0)
    assert metrics.jain([0, 0, 0, 1]) == pytest.approx(0.25)


def test_utilization_per_resource():
    cap = np.array([[10, 20], [10, 0]])
    used = np.array([[5, 10], [10, 0]])
    assert metrics.utilization(used, cap).tolist() == [0.75, 0.5]


@given(st.lists(st.integers(0, 20), min_size=1, max_size=6), st.lists(st.floats(0.01, 5), min_size=2, max_size=2))
def test_eq_3_3_equals_tasks_times_task_share(counts, demand):
    """Eq. 3.3 (sum over servers of max_r A_ilr / C_r) = n_i * max_r D_ir / C_r (eq. 3.7)."""
    demand = np.array(demand)
    total = np.array([7.0, 11.0])
    alloc = np.array([c * demand for c in counts])
    assert global_dominant_share(alloc, total) == pytest.approx(sum(counts) * task_dominant_share(demand, total))


# -- the hot-path arithmetic in Python floats gives numpy's bits (issue 16: the same
# results as before, where these were numpy expressions) -----------------------------
_FLOATS = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, 1e-12, 0.5, 0.1, 0.3])


@given(st.lists(_FLOATS, max_size=300))
def test_pairwise_sum_is_numpys_sum_bit_for_bit(xs):
    assert metrics.pairwise_sum(xs) == float(np.sum(np.asarray(xs, dtype=np.float64)))


@given(st.lists(_FLOATS, max_size=metrics.SMALL_GINI))
def test_small_gini_is_numpys_gini_bit_for_bit(xs):
    assert metrics.gini(xs) == metrics._gini_numpy(xs)


@given(st.lists(st.tuples(_FLOATS, _FLOATS | st.just(0.0)), max_size=4))
def test_task_dominant_share_is_the_numpy_expression_bit_for_bit(pairs):
    demand = np.asarray([d for d, _ in pairs], dtype=np.float64)
    total = np.asarray([c for _, c in pairs], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # huge / tiny: inf on both sides
        ratios = np.where(total > 0, demand / np.where(total > 0, total, 1.0), 0.0)
    expected = float(ratios.max()) if ratios.size else 0.0
    assert task_dominant_share(demand.tolist(), total.tolist()) == expected
