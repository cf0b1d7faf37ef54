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
