"""The offline progressive-filling oracle (dgdrf/model/lp_filling.py, Wang et al. Alg. 1 by
LP, divisible tasks) on ORACLES.md examples 1, 3, 6, 7 and 11, and a max-min certificate
written here (not the oracle's Freeze test) on small random constrained problems.
Only per-user totals and shares are compared (tolerance 1e-6): per-server splits are not
unique."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from dgdrf.model.lp_filling import progressive_filling_lp, tidy
from dgdrf.model.oracle import progressive_filling
from dgdrf.model.problem import Problem
from dgdrf.model.scenario import build_scenario

TOL = 1e-6


def approx(x: float) -> object:
    return pytest.approx(x, rel=TOL, abs=TOL)


def wang_fig4() -> Problem:
    """ORACLES.md 6 (Wang et al. fig. 4)."""
    return Problem.from_scenario(build_scenario(["cpu", "memory"], [("m1", [9, 12]), ("m2", [3, 4]), ("m3", [9, 12])], [
        {"id": "u1", "demand": [1, 2], "eligible": ["m1", "m2"]},
        {"id": "u2", "demand": [3, 1], "eligible": ["m2"]},
        {"id": "u3", "demand": [1, 4]},
    ]))


def wang_fig2(u2_claims: list[str]) -> Problem:
    """ORACLES.md 7 and 11 (Wang et al. fig. 2): u2 runs on m2 only; ``u2_claims`` is the
    constraint it reports."""
    return Problem.from_scenario(build_scenario(["cpu", "memory"], [("m1", [18, 18]), ("m2", [18, 18])], [
        {"id": "u1", "demand": [1, 2], "eligible": ["m1", "m2"]},
        {"id": "u2", "demand": [1, 3], "eligible": u2_claims},
    ]))


def test_example6_offline_tsf_rounds():
    r = progressive_filling_lp(wang_fig4(), "tsf")
    assert r.units == {"u1": approx(14), "u2": approx(7), "u3": approx(7)}
    assert r.tasks == {"u1": approx(6), "u2": approx(1), "u3": approx(3)}
    assert r.shares == {"u1": approx(3 / 7), "u2": approx(1 / 7), "u3": approx(3 / 7)}
    assert r.rounds == [["u2"], ["u1", "u3"]]
    assert r.levels == [approx(1 / 7), approx(3 / 7)]
    assert r.display_tasks() == {"u1": 6.0, "u2": 1.0, "u3": 3.0}
    # the paper's Freeze, one LP per active user, reaches the same rounds
    each = progressive_filling_lp(wang_fig4(), "tsf", freeze="each")
    assert each.rounds == r.rounds and each.tasks == {u: approx(n) for u, n in r.tasks.items()}


def test_example7_cdrf_and_tsf():
    p = wang_fig2(["m2"])
    cdrf = progressive_filling_lp(p, "cdrf")
    assert cdrf.units == {"u1": approx(18), "u2": approx(6)}  # M_i, constraints kept
    assert cdrf.tasks == {"u1": approx(12), "u2": approx(4)}
    assert cdrf.shares == {"u1": approx(2 / 3), "u2": approx(2 / 3)}
    tsf = progressive_filling_lp(p, "tsf")
    assert tsf.units == {"u1": approx(18), "u2": approx(12)}  # h_i, constraints removed
    assert tsf.tasks == {"u1": approx(9), "u2": approx(6)}
    assert tsf.shares == {"u1": approx(1 / 2), "u2": approx(1 / 2)}


def true_tasks_on_m2_at_most(p: Problem, totals: dict[str, float]) -> float:
    """The most of u2's tasks that can be on m2 (where they really run) in a split of
    ``totals`` over ``p``'s claimed constraints: the totals of a lie do not fix its split."""
    # variables n_u1m1, n_u1m2, n_u2m1, n_u2m2; maximise n_u2m2
    d = p.demand
    a_ub = [[d[0, r], 0, d[1, r], 0] for r in range(2)] + [[0, d[0, r], 0, d[1, r]] for r in range(2)]
    res = linprog([0, 0, 0, -1], A_ub=a_ub, b_ub=[18, 18, 18, 18], A_eq=[[1, 1, 0, 0], [0, 0, 1, 1]], b_eq=[totals["u1"], totals["u2"]], bounds=(0, None), method="highs")
    assert res.status == 0
    return float(-res.fun)


def test_example11_cdrf_rewards_a_lie_tsf_does_not():
    truth, lie = wang_fig2(["m2"]), wang_fig2(["m1", "m2"])
    cdrf = progressive_filling_lp(lie, "cdrf")
    assert cdrf.units["u2"] == approx(12)  # the lie inflates M_2 from 6 to 12
    assert cdrf.tasks == {"u1": approx(9), "u2": approx(6)}
    # u2's true tasks are those on m2: the paper's allocation (u1 all on m1) puts all 6
    # there, 2 more than the truthful 4. The LP's split is one of many, so it is asked
    # what it can hold on m2, not which split it returned.
    assert true_tasks_on_m2_at_most(lie, cdrf.tasks) == approx(6)
    assert progressive_filling_lp(truth, "cdrf").tasks["u2"] == approx(4)
    # TSF's h ignores constraints: the lie changes nothing
    assert progressive_filling_lp(lie, "tsf").tasks == {u: approx(n) for u, n in progressive_filling_lp(truth, "tsf").tasks.items()}
    assert progressive_filling_lp(truth, "tsf").tasks == {"u1": approx(9), "u2": approx(6)}


def test_one_server_tsf_is_drf(oracle1):
    """Wang et al. Thm 6: on one machine h_i = 1 / max_r (d_ir / C_r), so the task share is
    the dominant share and TSF is DRF (here DRFH, divisible)."""
    p = Problem.from_scenario(oracle1)
    tsf, drfh = progressive_filling_lp(p, "tsf"), progressive_filling_lp(p, "drfh")
    assert tsf.units == {u: approx(x) for u, x in drfh.units.items()}
    assert tsf.tasks == {u: approx(x) for u, x in drfh.tasks.items()}
    dominant = {u: tsf.tasks[u] * max(p.demand[i] / p.total) for i, u in enumerate(p.user_ids)}
    assert dominant["A"] == approx(dominant["B"])  # equal dominant shares, DRF's answer
    used = sum(tsf.tasks[u] * p.demand[i] for i, u in enumerate(p.user_ids))
    assert max(used / p.total) == approx(1.0)  # and a resource is full (CPU)
    # divisible DRF happens to land on whole tasks here: the discrete oracle's 3 and 2
    assert tsf.tasks == {u: approx(n) for u, n in progressive_filling(oracle1).tasks.items()}


def test_example3_drfh_divisible_against_discrete_drf(oracle3):
    """Divisible DRFH equalises the global dominant shares at 1/2 (U1 = 1.1 tasks, U2 =
    11); discrete DRF (ORACLES.md 3) ends at U1 = 1, U2 = 12, its lowest share 1/2.2
    below the divisible level, which bounds it."""
    r = progressive_filling_lp(Problem.from_scenario(oracle3), "drfh")
    assert r.units == {"U1": approx(2.2), "U2": approx(22)}
    assert r.tasks == {"U1": approx(1.1), "U2": approx(11)}
    assert r.shares == {"U1": approx(0.5), "U2": approx(0.5)}
    assert r.rounds == [["U1", "U2"]]
    discrete = progressive_filling(oracle3)
    assert discrete.tasks == {"U1": 1, "U2": 12}
    assert min(discrete.shares.values()) <= min(r.shares.values()) + TOL


def test_weights_scale_shares():
    p = Problem.from_scenario(build_scenario(["cpu"], [("s1", [12])], [{"id": "a", "demand": [1], "weight": 2}, {"id": "b", "demand": [1]}]))
    for notion in ("tsf", "cdrf", "drfh"):
        r = progressive_filling_lp(p, notion)
        assert r.tasks == {"a": approx(8), "b": approx(4)}
        assert r.shares["a"] == approx(r.shares["b"])


def test_nothing_fits_frozen_at_zero_first():
    """A user demanding a resource no server has counts nothing (unit 0): frozen at 0
    in a first round at level 0; the others fill as without it."""
    p = Problem(server_ids=("s1",), user_ids=("gpu", "a"), capacity=np.array([[4.0, 0.0]]), demand=np.array([[1.0, 1.0], [1.0, 0.0]]), eligible=np.ones((2, 1), dtype=bool))
    for notion in ("tsf", "cdrf", "drfh"):
        r = progressive_filling_lp(p, notion)
        assert r.units["gpu"] == 0 and r.tasks["gpu"] == 0 and r.shares["gpu"] == 0
        assert r.rounds == [["gpu"], ["a"]] and r.levels[0] == 0
        assert r.tasks["a"] == approx(4)


def test_unknown_notion():
    with pytest.raises(ValueError, match="unknown notion"):
        progressive_filling_lp(wang_fig4(), "drf")


def test_tidy_is_for_display():
    assert tidy(6.0000000001) == 6.0 and tidy(5.9999999999) == 6.0
    assert tidy(6.01) == 6.01 and tidy(0.5) == 0.5


# -- a max-min certificate, by an LP written here (not the oracle's Freeze) ----------------------
@st.composite
def problems(draw) -> Problem:
    s = draw(st.integers(1, 4))
    u = draw(st.integers(1, 4))
    cap = np.array(draw(st.lists(st.lists(st.integers(1, 20), min_size=2, max_size=2), min_size=s, max_size=s)), dtype=np.float64)
    dem = np.array(draw(st.lists(st.lists(st.integers(1, 6), min_size=2, max_size=2), min_size=u, max_size=u)), dtype=np.float64)
    rows = [draw(st.lists(st.booleans(), min_size=s, max_size=s).filter(any)) for _ in range(u)]
    weight = np.array(draw(st.lists(st.sampled_from([1.0, 1.0, 2.0, 3.0]), min_size=u, max_size=u)))
    return Problem(server_ids=tuple(f"m{m}" for m in range(s)), user_ids=tuple(f"u{i}" for i in range(u)), capacity=cap, demand=dem, eligible=np.array(rows, dtype=bool), weight=weight)


def units_by_hand(p: Problem, notion: str) -> np.ndarray:
    """u_i (demands > 0 here): h_i = sum over machines of min_r C_mr / d_ir, constraints
    removed (tsf); M_i, the same over i's machines (cdrf); 1 / max_r d_ir / C_r (drfh)."""
    servers, users = range(len(p.server_ids)), range(len(p.user_ids))
    if notion == "drfh":
        return np.array([1 / max(p.demand[i] / p.capacity.sum(axis=0)) for i in users])
    return np.array([sum(min(p.capacity[m] / p.demand[i]) for m in servers if notion == "tsf" or p.eligible[i, m]) for i in users])


def most_share(p: Problem, notion: str, i: int, keep: dict[int, float]) -> float:
    """The highest share user i can have on ``p`` with every user j in ``keep`` at share
    >= keep[j]: variables n_jm (0 where j may not run on m)."""
    n_u, n_s = p.eligible.shape
    unit = units_by_hand(p, notion) * p.weight
    var = lambda j, m: j * n_s + m  # noqa: E731
    a_ub, b_ub = [], []
    for m in range(n_s):
        for r in range(p.capacity.shape[1]):
            row = np.zeros(n_u * n_s)
            for j in range(n_u):
                row[var(j, m)] = p.demand[j, r]
            a_ub.append(row)
            b_ub.append(p.capacity[m, r])
    for j, share in keep.items():
        row = np.zeros(n_u * n_s)
        for m in range(n_s):
            row[var(j, m)] = -1.0 / unit[j]
        a_ub.append(row)
        b_ub.append(-share)
    c = np.zeros(n_u * n_s)
    for m in range(n_s):
        c[var(i, m)] = -1.0 / unit[i]
    bounds = [(0, None if p.eligible[j, m] else 0) for j in range(n_u) for m in range(n_s)]
    res = linprog(c, A_ub=np.array(a_ub), b_ub=np.array(b_ub), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(-res.fun)


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from(["tsf", "tsf", "cdrf", "drfh"]))
def test_filling_is_max_min_fair(p, notion):
    """No user's share can rise without lowering a share no higher than its own (Wang et
    al. Def. 7; App. B for CDRF and DRFH): for each i, the most i can have while every j
    with a share <= i's keeps its share is i's share."""
    r = progressive_filling_lp(p, notion)
    share = np.array([r.shares[u] for u in p.user_ids])
    assert np.allclose([r.units[u] for u in p.user_ids], units_by_hand(p, notion))
    for i in range(len(p.user_ids)):
        keep = {j: share[j] * (1 - 1e-10) for j in range(len(p.user_ids)) if j != i and share[j] <= share[i] * (1 + TOL)}
        assert most_share(p, notion, i, keep) <= share[i] * (1 + TOL) + 1e-9
    # one feasible split of the totals: eligible, within every machine, summing to them
    split = np.array([[r.one_split[u].get(s, 0.0) for s in p.server_ids] for u in p.user_ids])
    assert (split >= 0).all() and not split[~p.eligible].any()
    assert (split.T @ p.demand <= p.capacity * (1 + 1e-9) + 1e-9).all()
    assert np.allclose(split.sum(axis=1), [r.tasks[u] for u in p.user_ids], rtol=TOL, atol=TOL)
    # every user frozen once; levels rise
    assert sorted(u for group in r.rounds for u in group) == sorted(p.user_ids)
    assert all(a <= b * (1 + TOL) for a, b in zip(r.levels, r.levels[1:]))
    # the paper's Freeze (one LP per active user) agrees
    each = progressive_filling_lp(p, notion, freeze="each")
    assert each.rounds == r.rounds
    assert np.allclose([each.tasks[u] for u in p.user_ids], [r.tasks[u] for u in p.user_ids], rtol=TOL, atol=TOL)
