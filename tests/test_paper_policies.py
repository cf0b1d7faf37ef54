"""The other papers' online policies through the full emulation and through ``dgdrf run``:
ORACLES.md examples 5 (Ru et al.'s share levels), 6 and 7 (Wang et al.'s TSF and CDRF with
server offers) and 8 (Kesidis et al.'s PS-DSF and rPS-DSF); each test names the
algorithm its answer holds for. Exact numbers, invariants, and the notions' figures."""

from __future__ import annotations

import json

import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.scenario import build_scenario
from test_cli import assert_one_line_error, cli

FIG4 = dict(
    resources=["cpu", "mem"],
    servers=[("m1", [9, 12]), ("m2", [3, 4]), ("m3", [9, 12])],
    users=[{"id": "u1", "demand": [1, 2], "eligible": ["m1", "m2"]}, {"id": "u2", "demand": [3, 1], "eligible": ["m2"]}, {"id": "u3", "demand": [1, 4]}],
)
FIG2 = dict(
    resources=["cpu", "mem"],
    servers=[("m1", [18, 18]), ("m2", [18, 18])],
    users=[{"id": "u1", "demand": [1, 2]}, {"id": "u2", "demand": [1, 3], "eligible": ["m2"]}],
)
KESIDIS = dict(resources=["cpu", "mem"], servers=[("w1", [100, 30]), ("w2", [30, 100])], users=[("p1", [5, 1]), ("p2", [1, 5])])


def emulate(spec, policy, **options):
    result = run_emulation(build_scenario(**spec), RunConfig(policy=policy, per_server=True, **options))
    assert result.invariant_violations == []
    assert result.stop_reason == "saturated"
    return result


def test_example6_tsf_with_one_task_per_server_offer():
    """Online TSF, server offers in id order, one task per offer: u1 = 6 on m1, u2 = 1 on
    m2, u3 = 3 on m3; task shares 3/7, 1/7, 3/7 (h = 14, 7, 7); no offer went to a user
    other than the lowest that fit."""
    r = emulate(FIG4, "tsf")
    assert r.per_server == {"u1": {"m1": 6}, "u2": {"m2": 1}, "u3": {"m3": 3}}
    assert r.fairness == "tsf"
    assert r.notion_shares == pytest.approx({"u1": 3 / 7, "u2": 1 / 7, "u3": 3 / 7}, abs=1e-12)
    assert r.min_share == pytest.approx(1 / 7) and r.error_ratio == 0.0


def test_example6_user_driven_first_fit_is_not_tsf():
    """The user-driven first-fit greedy (drf's mechanism) gives 4/1/4: u3 takes a slot on
    m1 early. Here under drf, whose dominant shares rank the users as task shares do."""
    r = emulate(FIG4, "drf")
    assert r.per_server == {"u1": {"m1": 4}, "u2": {"m2": 1}, "u3": {"m1": 1, "m3": 3}}


def test_example7_cdrf_and_tsf_online():
    """CDRF, server offers, one task per offer: u1 = 12 (9 on m1, 3 on m2), u2 = 4 on m2,
    slowdowns 2/3. TSF with one task per offer does not reach the example's 9/6: the
    alternating offers give u1 a slot on m2 in the third round (a tie at 1/6, to the lower id), for good;
    with ``fill`` offers (Mesos's) it does: u1 = 9 on m1, u2 = 6 on m2, task shares 1/2."""
    cdrf = emulate(FIG2, "cdrf")
    assert cdrf.per_server == {"u1": {"m1": 9, "m2": 3}, "u2": {"m2": 4}}
    assert cdrf.notion_shares == pytest.approx({"u1": 2 / 3, "u2": 2 / 3})
    one = emulate(FIG2, "tsf")
    assert one.per_server == {"u1": {"m1": 9, "m2": 1}, "u2": {"m2": 5}}
    fill = emulate(FIG2, "tsf", offer_tasks="fill")
    assert fill.per_server == {"u1": {"m1": 9}, "u2": {"m2": 6}}
    assert fill.notion_shares == pytest.approx({"u1": 0.5, "u2": 0.5})
    assert emulate(FIG4, "tsf", offer_tasks="fill").per_server == {"u1": {"m1": 6}, "u2": {"m2": 1}, "u3": {"m3": 3}}


def test_cmmf_on_fig4_ranks_by_one_resource():
    """Wang et al.'s baselines "CPU" and "Mem" (CMMF after Choosy) on fig. 4, server offers
    in id order, one task per offer, worked by hand. CPU shares (C_cpu = 21): u1 and u3
    tie on m1 every round until u1 is at 4/21 and u3 at 3/21, so u3 takes m1's last
    memory: 4/1/4, shares 4/21, 3/21, 4/21. Memory shares (C_mem = 28): u1's 2 a task
    stays below u3's 4, so u1 fills m1: 6/1/3, TSF's answer, shares 12/28, 1/28, 12/28."""
    cpu = emulate(FIG4, "cmmf-cpu")
    assert cpu.per_server == {"u1": {"m1": 4}, "u2": {"m2": 1}, "u3": {"m1": 1, "m3": 3}}
    assert cpu.fairness == "cmmf-cpu"
    assert cpu.notion_shares == pytest.approx({"u1": 4 / 21, "u2": 3 / 21, "u3": 4 / 21}, abs=1e-12)
    mem = emulate(FIG4, "cmmf-mem")
    assert mem.per_server == {"u1": {"m1": 6}, "u2": {"m2": 1}, "u3": {"m3": 3}}
    assert mem.notion_shares == pytest.approx({"u1": 12 / 28, "u2": 1 / 28, "u3": 12 / 28}, abs=1e-12)
    assert mem.min_share == pytest.approx(1 / 28) and mem.error_ratio == 0.0


def test_cmmf_weighted_and_its_json_key(capsys, tmp_path):
    """A weight divides the resource share (w = 2: u3's CPU share is halved), and the
    shares go to the result's ``resource_shares``; a scenario without the resource is a
    one-line error naming it."""
    spec = dict(FIG4, users=[*FIG4["users"][:2], {"id": "u3", "demand": [1, 4], "weight": 2}])
    path = tmp_path / "fig4w.json"
    build_scenario(**spec).write_json(path)
    out = tmp_path / "r.json"
    rc, _, err = cli(capsys, "run", "--scenario", path, "--policy", "cmmf-cpu", "--json", out)
    assert rc == 0, err
    doc = json.loads(out.read_text())
    tasks = doc["tasks"]
    assert doc["resource_shares"] == pytest.approx({"u1": tasks["u1"] / 21, "u2": 3 * tasks["u2"] / 21, "u3": tasks["u3"] / 42})
    one = tmp_path / "one.json"
    build_scenario(resources=["cpu"], servers=[("s1", [4])], users=[("u1", [1])]).write_json(one)
    assert_one_line_error(*cli(capsys, "run", "--scenario", one, "--policy", "cmmf-mem")[::2], "cmmf-mem", "memory")


def test_example8_rpsdsf_one_task_per_offer_in_every_order():
    """rPS-DSF, one task per offer: 19 + 2 / 2 + 19 in fixed order and in random orders."""
    for options in ({}, *({"offer_order": "random", "seed": s} for s in (1, 2, 3, 4))):
        r = emulate(KESIDIS, "rpsdsf", **options)
        assert r.per_server == {"p1": {"w1": 19, "w2": 2}, "p2": {"w1": 2, "w2": 19}}, options
        assert r.fairness == "rpsdsf" and r.error_ratio == 0.0


def test_example8_psdsf_and_drf():
    """PS-DSF, one task per offer, random orders: at least 19 on the matching worker and
    20 per process (the paper's averages are order-dependent); both of its endings,
    20/0/0/20 and 19/2/2/19, occur. Global DRF, user-driven first fit: 5 of each on each
    worker."""
    endings = set()
    for seed in range(1, 7):
        r = emulate(KESIDIS, "psdsf", offer_order="random", seed=seed)
        assert r.per_server["p1"]["w1"] >= 19 and r.per_server["p2"]["w2"] >= 19
        assert r.tasks["p1"] >= 20 and r.tasks["p2"] >= 20
        endings.add(r.tasks["p1"])
    assert endings == {20, 21}
    assert emulate(KESIDIS, "drf").per_server == {"p1": {"w1": 5, "w2": 5}, "p2": {"w1": 5, "w2": 5}}


@pytest.mark.parametrize("level", [1, 2, 3])
def test_example5_share_levels(oracle5, level):
    """Ru et al. fig. 1 at every share level: a = 4, b = 3, c = 4 (the same under every
    tie rule at levels 1 and 2, and with skip semantics at level 3: DIGEST 3c)."""
    r = run_emulation(oracle5, RunConfig(policy="drf", share_level=level))
    assert r.tasks == {"a": 4, "b": 3, "c": 4} and r.invariant_violations == []
    assert r.utilization == pytest.approx({"cpu": 21 / 24, "memory": 34 / 36, "disk": 1.0})
    if level == 1:
        assert r.fairness is None  # the thesis's own path: its results byte for byte
    else:
        assert r.fairness == f"drf level {level}"
        usage = {"a": [8, 16, 12], "b": [9, 6, 18], "c": [4, 12, 24]}
        want = {u: sorted(v / c for v, c in zip(a, (24, 36, 54)))[-level] for u, a in usage.items()}
        assert r.notion_shares == pytest.approx(want)


def test_run_json_holds_task_shares_and_per_server(capsys, tmp_path):
    path = tmp_path / "fig4.json"
    build_scenario(**FIG4).write_json(path)
    out = tmp_path / "r.json"
    rc, _, err = cli(capsys, "run", "--scenario", path, "--policy", "tsf", "--per-server", "--json", out)
    assert rc == 0, err
    doc = json.loads(out.read_text())
    assert doc["task_shares"] == pytest.approx({"u1": 3 / 7, "u2": 1 / 7, "u3": 3 / 7})
    assert doc["per_server"] == {"u1": {"m1": 6}, "u2": {"m2": 1}, "u3": {"m3": 3}}
    assert doc["fairness"] == "tsf" and "notion_shares" not in doc


def test_bad_share_levels(capsys, tmp_path):
    path = tmp_path / "fig4.json"
    build_scenario(**FIG4).write_json(path)
    assert_one_line_error(*cli(capsys, "run", "--scenario", path, "--policy", "tsf", "--share-level", "2")[::2], "share_level", "tsf")
    assert_one_line_error(*cli(capsys, "run", "--scenario", path, "--share-level", "3")[::2], "share_level", "resources")
    rc, _, err = cli(capsys, "run", "--scenario", path, "--share-level", "4")
    assert rc == 2 and "Traceback" not in err and "share" in err


def test_udrf_online_is_work_conserving(capsys, tmp_path):
    """Tahir et al.'s online rule (fig. 5) on ORACLES.md example 12, u2's task pair one job
    of two parts placed whole: the lowest tenant's share over machine classes goes first;
    u2 runs 8 whole jobs and u3 10 (the paper's fig. 4); it is work conserving, so u1's
    job1 grows to all of hadoop, 56 tasks (the offline rule freezes it at 28: dgdrf oracle
    --notion udrf, which gives example 12 exactly)."""
    from dgdrf.config import load_scenario

    scenario = load_scenario("configs/tahir-example12.toml")
    assert [u.tenant for u in scenario.users] == ["u1", "u1", "", "", ""] and scenario.gangs
    r = run_emulation(scenario, RunConfig(policy="udrf", per_server=True))
    assert r.stop_reason == "saturated" and r.invariant_violations == [] and r.error_ratio == 0.0
    assert r.per_server["u1-job1"] == {"hadoop": 56} and r.tasks["u1-job2"] == 8
    assert r.instances == {"u2": {"job": 8}} and r.per_server["u2"] == {"standard": 8, "public-ip": 8} and r.tasks["u3"] == 10
    # a stream's share is its tenant's: max over (class, resource) of the tenant's use / capacity
    assert r.notion_shares["u1-job1"] == r.notion_shares["u1-job2"] == 1.0  # hadoop full
    assert r.notion_shares["u4"] == 1.0 and r.fairness == "udrf"
    out = tmp_path / "o.json"
    rc, _, err = cli(capsys, "oracle", "--scenario", "configs/tahir-example12.toml", "--notion", "udrf", "--json", out, "--quiet")
    assert rc == 0, err
    doc = json.loads(out.read_text())
    assert doc["jobs"]["u1"] == {"u1-job1": 28, "u1-job2": 8}  # a tenant's streams are one UDRF user's jobs
    assert doc["jobs"]["u2"] == {"job": 8} and doc["jobs"]["u3"] == {"main": 10} and doc["jobs"]["u4"] == {"main": 8}  # example 12, exactly


def test_the_papers_drf_baseline_online_on_example12():
    """Tahir et al.'s DRF (fig. 2: the (class, resource) pairs as resources, a user's jobs one
    bundle in equal counts) online: u1's job1 may run at most one instance more than its
    job2, which standard's CPU stops at 8, so job1 stops at 9 while hadoop is 47/56 idle
    (the divisible offline baseline gives 8 and 8: dgdrf.model.udrf.udrf_drf_baseline);
    u2 8 whole jobs, u3 10, u4 8 as the offline baseline. The run is saturated although
    u1's job1 fits: the policy does not place it (Policy.placeable), and no allocation is
    judged an error."""
    from dgdrf.config import load_scenario
    from dgdrf.model.udrf import udrf_drf_baseline, udrf_from_scenario

    scenario = load_scenario("configs/tahir-example12.toml")
    r = run_emulation(scenario, RunConfig(policy="drf-bundle", per_server=True))
    assert r.stop_reason == "saturated" and r.invariant_violations == [] and r.error_ratio == 0.0
    assert r.tasks == {"u1-job1": 9, "u1-job2": 8, "u2": 16, "u3": 10, "u4": 8} and r.instances == {"u2": {"job": 8}}
    offline = udrf_drf_baseline(udrf_from_scenario(scenario)).jobs
    assert offline == {"u1": {"u1-job1": 8, "u1-job2": 8}, "u2": {"job": 8}, "u3": {"main": 10}, "u4": {"main": 8}}


def test_tenant_round_trips_and_bad_tenants(capsys, tmp_path):
    spec = dict(resources=["cpu"], servers=[("s", [4])], users=[{"id": "a", "demand": [1], "tenant": "t"}, {"id": "b", "demand": [1]}])
    s = build_scenario(**spec)
    assert s.users[0].tenant == "t" and not s.users[0].classic and s.users[1].classic
    assert build_scenario(s.resources, s.servers, s.users).to_dict() == s.to_dict()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"resources": ["cpu"], "servers": [{"id": "s", "capacity": [4]}], "users": [{"id": "a", "demand": [1], "tenant": 3}]}))
    assert_one_line_error(*cli(capsys, "run", "--scenario", path)[::2], "tenant")
