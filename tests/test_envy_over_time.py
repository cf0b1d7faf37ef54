"""Envy-freeness over time (model/envy_over_time.py; issue 35): the audit's EF for
workloads whose tasks arrive and end, sampled in the result of every such run."""

from __future__ import annotations

import numpy as np
import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.envy_over_time import FLOOR_SLACK, EnvyOverTime, bundle_values, envy_now
from dgdrf.model.scenario import build_scenario

# two servers, two resources: a holds 2 tasks [1, 1] on s1, b 3 tasks [2, 1] on s2
HELD = np.zeros((2, 2, 2))
HELD[0, 0] = [2.0, 2.0]
HELD[1, 1] = [6.0, 3.0]
DEMAND = np.array([[1.0, 1.0], [2.0, 1.0]])
BOTH = np.ones((2, 2), dtype=bool)
WANT = np.array([True, True])


def test_a_bundle_is_worth_the_whole_next_tasks_it_runs_on_the_servers_the_user_may_use():
    """a's task fits 3 times in b's [6, 3] (min(6/1, 3/1)), b's once in a's [2, 2]
    (min(2/2, 2/1)). Barred from s2, a values b's bundle at nothing."""
    assert bundle_values(HELD, DEMAND, BOTH).tolist() == [[2.0, 3.0], [1.0, 3.0]]
    only_s1 = np.array([[True, False], [True, True]])
    assert bundle_values(HELD, DEMAND, only_s1).tolist() == [[2.0, 0.0], [1.0, 3.0]]


def test_envy_and_envy_beyond_one_task_with_weights_and_what_a_user_asks_for():
    """a runs 2 and would run 3 with b's bundle: it envies b, but not beyond one task
    (2 + 1 >= 3). With weight 1/2, a's claim halves: 3 > 2 * 2 is false, no envy. If a
    has only 2 tasks at all (asks 2), b's bundle is worth 2 to it: no envy either.
    (envy_now returns who envies, then who envies beyond one task.)"""
    many = np.array([10, 10])
    assert [m.tolist() for m in envy_now(HELD, DEMAND, BOTH, np.ones(2), WANT, many)] == [[True, False], [False, False]]
    assert [m.tolist() for m in envy_now(HELD, DEMAND, BOTH, np.array([0.5, 1.0]), WANT, many)] == [[False, False], [False, False]]
    assert [m.tolist() for m in envy_now(HELD, DEMAND, BOTH, np.ones(2), WANT, np.array([2, 10]))] == [[False, False], [False, False]]
    held = HELD.copy()
    held[1, 1] = [8.0, 4.0]  # b: 4 tasks; a would run 4 with them, 2 + 1 < 4
    assert [m.tolist() for m in envy_now(held, DEMAND, BOTH, np.ones(2), WANT, many)] == [[True, False], [True, False]]
    assert [m.tolist() for m in envy_now(held, DEMAND, BOTH, np.ones(2), np.array([False, True]), many)] == [[False, False], [False, False]]


def test_each_sample_counts_until_the_next():
    """a wants from t = 0 and envies until the sample at t = 10, then not; b wants from
    t = 20 and envies beyond one task: over [0, 40), a envied 10 of 40 s, b 20 of 20."""
    e = EnvyOverTime(["a", "b"], servers=2)
    many = np.array([10, 10])
    e.sample(0.0, HELD, DEMAND, BOTH, np.ones(2), np.array([True, False]), many)
    e.sample(10.0, np.zeros((2, 2, 2)), DEMAND, BOTH, np.ones(2), np.array([True, False]), many)
    held = np.zeros((2, 2, 2))
    held[0, 0] = [8.0, 8.0]  # a: 8 tasks on s1; b would run min(8/2, 8/1) = 4 of its own there
    e.sample(20.0, held, DEMAND, BOTH, np.ones(2), np.array([True, True]), many)
    r = e.result(40.0)
    assert r["users"] == {"a": {"wanting_s": 40.0, "envious": 0.25, "beyond_one": 0.0}, "b": {"wanting_s": 20.0, "envious": 1.0, "beyond_one": 1.0}}
    assert r["most_envious"] == 1.0 and r["users_ever_beyond_one"] == ["b"] and r["samples"] == 3
    assert r["envious_overall"] == pytest.approx(30 / 60) and r["beyond_one_overall"] == pytest.approx(20 / 60)


def _two_equal_users():
    """One server [4, 4]; two users with 12 tasks [1, 1] of 10 s each from t = 0."""
    return build_scenario(["cpu", "mem"], [("s1", [4.0, 4.0])], [
        {"id": u, "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 12, "duration": 10.0, "arrival": 0.0}]} for u in ("a", "b")
    ])


def test_drf_keeps_two_equal_users_envy_free_up_to_one_task_and_fifo_does_not():
    """DRF gives two equal users 2 tasks each, so neither would run more than one task
    beyond its own with the other's bundle; FIFO gives the first user the whole server,
    and the second envies it beyond one task while it waits."""
    drf = run_emulation(_two_equal_users(), RunConfig(policy="drf", sample_every=1.0))
    fifo = run_emulation(_two_equal_users(), RunConfig(policy="fifo", sample_every=1.0))
    assert drf.stop_reason == fifo.stop_reason == "drained"
    e, f = drf.envy_over_time, fifo.envy_over_time
    assert e["measured"] and e["most_beyond_one"] == 0.0 and e["users_ever_beyond_one"] == []
    assert f["users_ever_beyond_one"] == ["b"] and f["users"]["b"]["beyond_one"] > 0.5
    for r in (e, f):
        for v in r["users"].values():
            assert 0.0 <= v["beyond_one"] <= v["envious"] <= 1.0


def test_a_run_whose_tasks_never_end_has_none():
    sc = build_scenario(["cpu"], [("s1", [4.0])], [("u", [1.0])])
    r = run_emulation(sc, RunConfig(policy="drf"))
    assert r.envy_over_time is None and "envy_over_time" not in r.to_dict()


def test_too_large_a_run_says_it_was_not_measured():
    e = EnvyOverTime([f"u{i}" for i in range(4_500)], servers=1_000)
    e.sample(0.0, np.zeros((0, 0, 2)), np.zeros((0, 2)), np.zeros((0, 0), dtype=bool), np.ones(0), np.zeros(0, dtype=bool), np.zeros(0))
    r = e.result(10.0)
    assert r["measured"] is False and "users² x servers" in r["why"]


def _bundle_values_reference(held, demand, eligible):
    """bundle_values as one expression a row: held indexed by eligible servers and needed
    resources, divided, the least ratio per server, floored and summed."""
    v = np.zeros((len(demand), held.shape[0]))
    for row, (d, elig) in enumerate(zip(demand, eligible)):
        need = d > 0
        if need.any() and elig.any():
            v[row] = np.floor((held[:, elig][:, :, need] / d[need]).min(axis=2) + FLOOR_SLACK).sum(axis=1)
    return v


def test_bundle_values_are_the_reference_bit_for_bit():
    """Ratios made resource by resource (bundle_values) give the bits of the one-expression
    reference, with and without constraints, on random bundles and demands."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        users, servers, resources = (int(x) for x in rng.integers(1, [25, 40, 4]))
        held = rng.random((users, servers, resources)) * rng.integers(0, 5, (users, servers, resources))
        demand = rng.random((users, resources)) * (rng.random((users, resources)) > 0.3)
        eligible = rng.random((users, servers)) > rng.choice([0.0, 0.4])
        got, want = bundle_values(held, demand, eligible), _bundle_values_reference(held, demand, eligible)
        assert np.array_equal(got.view(np.int64), want.view(np.int64))
