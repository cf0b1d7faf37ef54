"""Sharing incentive over time (model/sharing_over_time.py; issue 35): the audit's SI for
workloads whose tasks arrive and end, in the result of every such run."""

from __future__ import annotations

import numpy as np
import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.scenario import build_scenario
from dgdrf.model.sharing_over_time import SharingOverTime, guarantee_shares


def test_the_integrals_by_hand():
    """Two users from t = 0: a holds 0.5 throughout (guaranteed 0.25); b is active from
    t = 2, holds nothing until t = 6 while guaranteed 0.5, then 0.5 until t = 10."""
    s = SharingOverTime(["a", "b"], 0.0)
    s.changed(0.0, np.array([0.5, 0.0]), np.array([0.25, 0.0]), np.array([True, False]))
    s.changed(2.0, np.array([0.5, 0.0]), np.array([0.25, 0.5]), np.array([True, True]))
    s.changed(6.0, np.array([0.5, 0.5]), np.array([0.25, 0.5]), np.array([True, True]))
    r = s.result(10.0)
    assert r["users"]["a"] == {"held": 0.5, "guarantee": 0.25, "below": 0.0, "shortfall": 0.0}
    assert r["users"]["b"] == pytest.approx({"held": 0.25, "guarantee": 0.5, "below": 0.5, "shortfall": 0.5})
    assert r["most_below"] == 0.5 and r["users_ever_below"] == ["b"]


def test_a_guarantee_counts_whole_tasks_of_the_slice_on_live_eligible_servers():
    """Slice 1/2 of two servers [4, 4] and [3, 3] for tasks [1, 1]: 2 + 1 whole tasks,
    each 1/7 of the cluster; a constraint or a departed server takes its part away."""
    cap = np.array([[4.0, 4.0], [3.0, 3.0]])
    demand = np.array([[1.0, 1.0], [1.0, 1.0]])
    total = cap.sum(axis=0)
    both = np.ones((2, 2), dtype=bool)
    halves = np.full(2, 0.5)
    assert guarantee_shares(cap, np.array([True, True]), demand, both, halves, total) == pytest.approx([3 / 7, 3 / 7])
    only_first = np.array([[True, False], [True, True]])
    assert guarantee_shares(cap, np.array([True, True]), demand, only_first, halves, total) == pytest.approx([2 / 7, 3 / 7])
    assert guarantee_shares(cap, np.array([True, False]), demand[1:], both[1:], halves[1:], total) == pytest.approx([2 / 7])


def test_a_newcomer_waits_below_its_slice_until_tasks_end():
    """One server [4, 4]; a's 4 tasks of 10 s fill it from t = 0, b's 2 tasks come at t = 1
    and start when a's end (t = 10): b is below its guarantee (its slice, 2 tasks) for
    about 9 of its about 19 active seconds; a only while its own tasks are placed, one a
    tick (2 %)."""
    sc = build_scenario(["cpu", "mem"], [("s1", [4.0, 4.0])], [
        {"id": "a", "jobs": [{"id": "ja", "demand": [1.0, 1.0], "tasks": 4, "duration": 10.0, "arrival": 0.0}]},
        {"id": "b", "jobs": [{"id": "jb", "demand": [1.0, 1.0], "tasks": 2, "duration": 10.0, "arrival": 1.0}]},
    ])
    r = run_emulation(sc, RunConfig(policy="drf"))
    assert r.stop_reason == "drained"
    s = r.sharing_over_time
    assert s["users"]["a"]["below"] < 0.03 and s["users"]["a"]["shortfall"] < 0.03
    assert s["users"]["b"]["below"] == pytest.approx(9 / 19, abs=0.01)
    assert s["users"]["b"]["shortfall"] == pytest.approx(9 / 19, abs=0.01)
    assert s["users"]["b"]["guarantee"] == pytest.approx(0.5, abs=0.01)


def test_a_run_whose_tasks_never_end_has_none():
    sc = build_scenario(["cpu"], [("s1", [4.0])], [("u", [1.0])])
    r = run_emulation(sc, RunConfig(policy="drf"))
    assert r.sharing_over_time is None and "sharing_over_time" not in r.to_dict()

