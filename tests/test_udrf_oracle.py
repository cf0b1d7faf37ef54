"""Offline UDRF (dgdrf/model/udrf.py, Tahir et al. fig. 3 as DIGEST 4a reads it) and its DRF
baseline (fig. 2) on ORACLES.md example 12, exactly; the RDUCs; the freeze-on-any-saturated-
pair rule; and instances built from scenarios with machine classes, and their errors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dgdrf.errors import ScenarioError
from dgdrf.model.constraints import Constraint
from dgdrf.model.scenario import Scenario, ServerSpec, UserSpec, build_scenario
from dgdrf.model.udrf import UdrfInstance, UdrfJob, UdrfUser, rducs, udrf_drf_baseline, udrf_from_scenario, udrf_offline

CLASSES = {"standard": (16, 40), "hadoop": (56, 64), "public-IP": (24, 48), "high-mem": (8, 256)}


def example12() -> UdrfInstance:
    """ORACLES.md 12 (Tahir et al. figs. 1, 2, 4; instance reconstructed)."""
    return UdrfInstance(("cpu", "memory"), CLASSES, (
        UdrfUser("u1", (UdrfJob("job1", {"hadoop": (1, 1)}), UdrfJob("job2", {"standard": (1, 2)}))),
        UdrfUser("u2", (UdrfJob("job", {"standard": (1, 1), "public-IP": (1, 1)}),)),  # task1 + task2
        UdrfUser("u3", (UdrfJob("job", {"public-IP": (1, 4)}),)),
        UdrfUser("u4", (UdrfJob("job", {"high-mem": (1, 25)}),)),
    ))


def shares_on(result, user: str, cls: str) -> tuple[Fraction, ...]:
    """A user's share of each resource of a class, as exact fractions (the results are
    floats of exact rationals with small denominators)."""
    return tuple(Fraction(a / c).limit_denominator(1000) for a, c in zip(result.use[user][cls], CLASSES[cls]))


def test_example12_rducs():
    assert rducs(example12()) == [["u1", "u2", "u3"], ["u4"]]


def test_example12_offline_udrf():
    r = udrf_offline(example12())
    assert r.jobs == {"u1": {"job1": 28, "job2": 8}, "u2": {"job": 8}, "u3": {"job": 10}, "u4": {"job": 8}}
    assert r.levels == {"u1": 1 / 2, "u2": 1 / 2, "u3": 5 / 6, "u4": 1}
    assert r.shares == r.levels  # eq. 12: each user's share is the level it froze at
    assert r.rducs == [["u1", "u2", "u3"], ["u4"]]
    # the shares §III-B prints
    assert shares_on(r, "u1", "standard") == (Fraction(1, 2), Fraction(2, 5))
    assert shares_on(r, "u2", "standard") == (Fraction(1, 2), Fraction(1, 5))
    assert shares_on(r, "u2", "public-IP") == (Fraction(1, 3), Fraction(1, 6))
    assert shares_on(r, "u1", "hadoop") == (Fraction(1, 2), Fraction(7, 16))
    assert shares_on(r, "u3", "public-IP") == (Fraction(5, 12), Fraction(5, 6))
    assert shares_on(r, "u4", "high-mem") == (Fraction(1), Fraction(25, 32))
    # not work-conserving (DIGEST 4e.2): u1 froze when standard's CPU filled, hadoop half idle
    assert r.use["u1"]["hadoop"] == (28, 28)


def test_example12_drf_baseline():
    """Fig. 2: classes as resource types, u1 one bundle of both jobs: 8 and 8 (job1 uses
    1/8 of hadoop's memory, the paper's "around 12 %")."""
    r = udrf_drf_baseline(example12())
    assert r.jobs == {"u1": {"job1": 8, "job2": 8}, "u2": {"job": 8}, "u3": {"job": 10}, "u4": {"job": 8}}
    assert shares_on(r, "u1", "hadoop") == (Fraction(1, 7), Fraction(1, 8))
    assert r.levels == {"u1": 1 / 2, "u2": 1 / 2, "u3": 5 / 6, "u4": 1}


def test_rducs_are_pairs_not_classes():
    """Def. 1: an edge needs a common (class, resource) pair with positive demand; the
    same class on different resources does not link. Chains link through others."""
    inst = UdrfInstance(("cpu", "memory"), {"a": (4, 4), "b": (4, 4)}, (
        UdrfUser("p", (UdrfJob("j", {"a": (1, 0)}),)),
        UdrfUser("q", (UdrfJob("j", {"a": (0, 1)}),)),  # same class, other resource
        UdrfUser("r", (UdrfJob("j", {"b": (1, 0)}),)),
        UdrfUser("s", (UdrfJob("j", {"a": (0, 2)}), UdrfJob("k", {"b": (3, 0)}))),  # links q and r
    ))
    assert rducs(inst) == [["p"], ["q", "r", "s"]]


def test_a_saturated_pair_freezes_all_its_users_jobs():
    """Line 25: u1's job on Y could grow to 100, but X, which its other job uses, fills at
    level 1/2 and freezes u1 whole. Within u1, counts are max-min fair under its share
    cap: job x and job y rise together until x's share reaches the level, y goes on."""
    inst = UdrfInstance(("cpu",), {"X": (4,), "Y": (100,)}, (
        UdrfUser("u1", (UdrfJob("x", {"X": (1,)}), UdrfJob("y", {"Y": (1,)}))),
        UdrfUser("u2", (UdrfJob("x", {"X": (1,)}),)),
    ))
    r = udrf_offline(inst)
    assert r.jobs == {"u1": {"x": 2, "y": 50}, "u2": {"x": 2}}
    assert r.levels == {"u1": 1 / 2, "u2": 1 / 2}
    assert udrf_drf_baseline(inst).jobs == {"u1": {"x": 2, "y": 2}, "u2": {"x": 2}}


def test_zero_capacity_pair_freezes_its_users_at_zero():
    inst = UdrfInstance(("cpu", "gpu"), {"a": (4, 0)}, (
        UdrfUser("g", (UdrfJob("j", {"a": (1, 1)}), UdrfJob("k", {"a": (1, 0)}))),
        UdrfUser("c", (UdrfJob("j", {"a": (1, 0)}),)),
    ))
    r = udrf_offline(inst)
    assert r.jobs == {"g": {"j": 0, "k": 0}, "c": {"j": 4}}
    assert r.levels == {"g": 0, "c": 1}


def test_bad_instances():
    with pytest.raises(ValueError, match="no class 'gpu'"):
        UdrfInstance(("cpu",), {"a": (1,)}, (UdrfUser("u", (UdrfJob("j", {"gpu": (1,)}),)),))
    with pytest.raises(ValueError, match="demands nothing"):
        UdrfInstance(("cpu",), {"a": (1,)}, (UdrfUser("u", (UdrfJob("j", {"a": (0,)}),)),))


# -- from scenarios ----------------------------------------------------------------------------------
def classed(sid: str, cls: str, cap: list[float]) -> dict:
    return {"id": sid, "capacity": cap, "attributes": {"class": cls}}


SERVERS = [classed("s1", "standard", [8, 20]), classed("s2", "standard", [8, 20]), classed("h1", "hadoop", [56, 64]),
           classed("p1", "public-IP", [24, 48]), classed("g1", "high-mem", [8, 256]), ("plain", [4, 4])]


def test_from_scenario_sums_classes_and_keeps_jobs():
    s = build_scenario(["cpu", "memory"], SERVERS, [
        {"id": "u1", "jobs": [{"id": "job1", "demand": [1, 1], "requires": {"class": "hadoop"}},
                              {"id": "job2", "demand": [1, 2], "requires": {"class": "standard"}}]},
        {"id": "u3", "demand": [1, 4], "requires": {"class": "public-IP"}},
        {"id": "u4", "demand": [1, 25], "requires": {"class": "high-mem"}},
    ])
    inst = udrf_from_scenario(s)
    assert dict(inst.classes) == {m: tuple(float(c) for c in cap) for m, cap in CLASSES.items()}  # 'plain' has no class
    assert [(u.id, [(j.id, dict(j.demand)) for j in u.jobs]) for u in inst.users] == [
        ("u1", [("job1", {"hadoop": (1, 1)}), ("job2", {"standard": (1, 2)})]),
        ("u3", [("main", {"public-IP": (1, 4)})]),
        ("u4", [("main", {"high-mem": (1, 25)})]),
    ]
    # without u2, u1 is alone: its jobs fill to its own share 1 (standard's CPU), 56 and 16
    r = udrf_offline(inst)
    assert r.jobs["u1"] == {"job1": 56, "job2": 16} and r.rducs == [["u1"], ["u3"], ["u4"]]


@pytest.mark.parametrize("user, says", [
    ({"id": "u9", "jobs": [{"id": "j7", "demand": [1, 1]}]}, r"users\[0\]\.jobs\[0\]\.requires: user 'u9' job 'j7' names no machine class"),
    ({"id": "u9", "demand": [1, 1], "requires": {"class": ["hadoop", "standard"]}}, r"user 'u9' job 'main' names 2 machine classes"),
    ({"id": "u9", "demand": [1, 1], "requires": {"class": "hadoop", "ssd": True}}, r"user 'u9' job 'main': a machine class is one pool"),
    ({"id": "u9", "demand": [1, 1], "eligible": ["h1"], "requires": {"class": "hadoop"}}, r"user 'u9' job 'main': a machine class is one pool"),
    ({"id": "u9", "demand": [1, 1], "weight": 2, "requires": {"class": "hadoop"}}, r"user 'u9': UDRF .* has no weights"),
])
def test_from_scenario_errors(user, says):
    servers = SERVERS + [{"id": "x", "capacity": [1, 1], "attributes": {"ssd": True, "class": "hadoop"}}]
    with pytest.raises(ScenarioError, match=says):
        udrf_from_scenario(build_scenario(["cpu", "memory"], servers, [user]))


def test_from_scenario_class_no_server_has():
    # the scenario loader refuses such a job first ...
    with pytest.raises(ScenarioError, match="no server matches its constraint"):
        build_scenario(["cpu"], [classed("s1", "hadoop", [4])], [{"id": "u1", "demand": [1], "requires": {"class": "gpu"}}])
    # ... and a scenario made without it gets one clear error here
    s = Scenario(("cpu",), (ServerSpec("s1", (4.0,), (("class", "hadoop"),)),), (UserSpec("u1", (1.0,), constraint=Constraint(requires=(("class", ("gpu",)),))),))
    with pytest.raises(ScenarioError, match=r"user 'u1' job 'main': no server has class = 'gpu' \(classes: hadoop\)"):
        udrf_from_scenario(s)


# -- against an independent implementation: lexicographic max-min by linear programmes -------------
import json  # noqa: E402

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.optimize import linprog  # noqa: E402


def lex_maxmin(a: np.ndarray, cap: np.ndarray, active: list[int]) -> np.ndarray:
    """The lexicographic max-min vector v >= 0 of ``a @ v <= cap`` over the ``active``
    variables (the others stay 0), by the textbook sequence of linear programmes: raise
    the least of the active variables as far as it goes (t), then fix at t every active
    variable that cannot exceed t while the others stay at least t; repeat."""
    n = a.shape[1]
    fixed: dict[int, float] = {i: 0.0 for i in range(n) if i not in active}
    free = list(active)
    while free:
        # max t: v_i >= t (free), v_i = fixed, a v <= cap; variables v (n) and t
        rows = [np.append(a[r], 0.0) for r in range(a.shape[0])] + [np.eye(1, n + 1, i)[0] * -1 + np.eye(1, n + 1, n)[0] for i in free]
        bounds = [(fixed[i], fixed[i]) if i in fixed else (0, None) for i in range(n)] + [(0, None)]
        res = linprog(np.eye(1, n + 1, n)[0] * -1, A_ub=np.array(rows), b_ub=np.concatenate([cap, np.zeros(len(free))]), bounds=bounds, method="highs")
        assert res.status == 0, res.message
        t = res.x[n]
        stuck = []
        for i in free:  # can v_i exceed t while every other free variable keeps t?
            rows_i = [np.append(a[r], 0.0)[:n] for r in range(a.shape[0])] + [-np.eye(1, n, k)[0] for k in free if k != i]
            b_i = np.concatenate([cap, -np.full(len(free) - 1, t)])
            bounds_i = [(fixed[k], fixed[k]) if k in fixed else (0, None) for k in range(n)]
            r_i = linprog(-np.eye(1, n, i)[0], A_ub=np.array(rows_i), b_ub=b_i, bounds=bounds_i, method="highs")
            if r_i.status != 0 or -r_i.fun <= t + 1e-9:
                stuck.append(i)
        assert stuck, "some variable must be stuck at the max-min level"
        for i in stuck:
            fixed[i] = t
        free = [i for i in free if i not in stuck]
    return np.array([fixed[i] for i in range(n)])


def udrf_by_lp(instance: UdrfInstance) -> dict[str, dict[str, float]]:
    """Offline UDRF (Tahir et al. fig. 3, as DIGEST 4a reads it) written apart from
    dgdrf/model/udrf.py: each user's job counts are the lexicographic max-min within the
    capacities (its direction: its shares then reach 1 on some (class, resource) pair);
    the users' levels are the lexicographic max-min of s_u with s_u times its direction
    within the capacities, which is progressive filling that freezes a user once any pair
    it uses is full (every user's use of a pair grows in proportion to its level)."""
    pairs = [(m, r) for m in instance.classes for r in range(len(instance.resources))]
    cap = np.array([float(instance.classes[m][r]) for m, r in pairs])

    def use(job) -> np.ndarray:
        return np.array([float(job.demand[m][r]) if m in job.demand else 0.0 for m, r in pairs])

    direction = {}
    for u in instance.users:
        a = np.array([use(j) for j in u.jobs]).T
        runnable = [i for i in range(len(u.jobs)) if all(cap[p] > 0 for p in np.flatnonzero(a[:, i]))]
        direction[u.id] = lex_maxmin(a, cap, runnable)
    rates = np.array([np.array([use(j) for j in u.jobs]).T @ direction[u.id] for u in instance.users]).T
    live = [k for k, u in enumerate(instance.users) if rates[:, k].any()]
    levels = lex_maxmin(rates, cap, live)
    return {u.id: {j.id: float(levels[k] * direction[u.id][i]) for i, j in enumerate(u.jobs)} for k, u in enumerate(instance.users)}


CLASS_NAMES = ("a", "b", "c")


@st.composite
def udrf_instances(draw) -> UdrfInstance:
    k = draw(st.integers(1, 2))
    classes = {m: tuple(draw(st.integers(1, 12)) for _ in range(k)) for m in CLASS_NAMES[: draw(st.integers(1, 3))]}
    users = []
    for u in range(draw(st.integers(1, 4))):
        jobs = []
        for j in range(draw(st.integers(1, 3))):
            on = draw(st.lists(st.sampled_from(sorted(classes)), min_size=1, max_size=2, unique=True))
            demand = {m: tuple(draw(st.integers(0, 3)) for _ in range(k)) for m in on}
            if not any(any(d) for d in demand.values()):
                demand[on[0]] = (1,) * k
            jobs.append(UdrfJob(f"j{j}", demand))
        users.append(UdrfUser(f"u{u}", tuple(jobs)))
    return UdrfInstance(tuple(f"r{r}" for r in range(k)), classes, tuple(users))


def test_the_linear_programmes_give_example_12():
    assert udrf_by_lp(example12()) == {"u1": {"job1": 28, "job2": 8}, "u2": {"job": 8}, "u3": {"job": 10}, "u4": {"job": 8}}


@settings(max_examples=60, deadline=None)
@given(udrf_instances())
def test_offline_udrf_agrees_with_linear_programmes(instance):
    """dgdrf's offline UDRF (exact fractions, closed-form filling) and the independent
    linear programmes above give the same job counts within 1e-6 on random instances of
    one to three classes, one or two resources, up to four users of up to three jobs,
    each job on one or two classes."""
    ours = udrf_offline(instance).jobs
    theirs = udrf_by_lp(instance)
    for u in instance.users:
        for j in u.jobs:
            assert abs(ours[u.id][j.id] - theirs[u.id][j.id]) <= 1e-6, (u.id, j.id, ours[u.id], theirs[u.id])


def test_the_oracle_command_gives_the_independent_answer_on_a_scenario(capsys, tmp_path):
    """``dgdrf oracle --notion udrf`` on a scenario the project has not seen (three classes,
    a job of parts across two of them, job streams of one tenant) gives the linear
    programmes' counts within 1e-6."""
    from test_cli import cli

    servers = [classed("a1", "a", [6, 10]), classed("a2", "a", [6, 10]), classed("b1", "b", [8, 4]), classed("c1", "c", [5, 20])]
    users = [
        {"id": "t-x", "tenant": "t", "demand": [1, 1], "requires": {"class": "a"}},
        {"id": "t-y", "tenant": "t", "demand": [2, 1], "requires": {"class": "b"}},
        {"id": "v", "jobs": [{"id": "pair", "parts": [{"demand": [1, 2], "requires": {"class": "a"}}, {"demand": [1, 1], "requires": {"class": "c"}}]}]},
        {"id": "w", "demand": [1, 3], "requires": {"class": "c"}},
    ]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "unseen", "resources": ["cpu", "memory"], "servers": servers, "users": users}))
    out = tmp_path / "o.json"
    rc, _, err = cli(capsys, "oracle", "--scenario", str(path), "--notion", "udrf", "--json", str(out), "--quiet")
    assert rc == 0, err
    doc = json.loads(out.read_text())
    want = udrf_by_lp(udrf_from_scenario(build_scenario(["cpu", "memory"], servers, users)))
    assert set(doc["jobs"]) == set(want) == {"t", "v", "w"}
    for user, jobs in want.items():
        assert set(doc["jobs"][user]) == set(jobs)
        for job, count in jobs.items():
            assert abs(doc["jobs"][user][job] - count) <= 1e-6, (user, job, doc["jobs"][user], jobs)
