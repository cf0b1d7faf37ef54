"""``dgdrf oracle`` and ``dgdrf audit`` from the command line: ORACLES.md examples 6, 7 and
11 offline, Wang et al.'s fig. 2b (CDRF rewards a lie, TSF does not), the audit of DRF on
the embedded default scenario, the audit in every static run's result, and bad input."""

from __future__ import annotations

import json

import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.scenario import build_scenario
from test_cli import assert_one_line_error, cli
from test_paper_policies import FIG2, FIG4


@pytest.fixture
def fig4(tmp_path):
    path = tmp_path / "fig4.json"
    build_scenario(**FIG4).write_json(path)
    return path


@pytest.fixture
def fig2(tmp_path):
    path = tmp_path / "fig2.json"
    build_scenario(**FIG2).write_json(path)
    return path


def oracle(capsys, tmp_path, scenario, notion):
    out = tmp_path / f"{notion}.json"
    rc, _, err = cli(capsys, "oracle", "--scenario", scenario, "--notion", notion, "--json", out, "--quiet")
    assert rc == 0, err
    return json.loads(out.read_text())


def test_oracle_example6_offline_tsf(capsys, tmp_path, fig4):
    """Offline TSF (Wang et al. alg. 1, progressive filling): 6/1/3, task shares 3/7,
    1/7, 3/7; u2 frozen at 1/7 in the first round, u1 and u3 at 3/7 in the second."""
    doc = oracle(capsys, tmp_path, fig4, "tsf")
    assert doc["tasks"] == {"u1": 6, "u2": 1, "u3": 3}
    assert doc["shares"] == pytest.approx({"u1": 3 / 7, "u2": 1 / 7, "u3": 3 / 7}, abs=1e-9)
    assert doc["units"] == {"u1": 14, "u2": 7, "u3": 7}
    assert doc["rounds"] == [["u2"], ["u1", "u3"]]


def test_oracle_example7_cdrf_and_tsf(capsys, tmp_path, fig2):
    """Wang et al. fig. 2a offline: CDRF u1 = 12, u2 = 4 (M = 18, 6; slowdowns 2/3);
    TSF u1 = 9, u2 = 6 (h = 18, 12; task shares 1/2)."""
    cdrf, tsf = oracle(capsys, tmp_path, fig2, "cdrf"), oracle(capsys, tmp_path, fig2, "tsf")
    assert cdrf["tasks"] == {"u1": 12, "u2": 4} and cdrf["units"] == {"u1": 18, "u2": 6}
    assert tsf["tasks"] == {"u1": 9, "u2": 6} and tsf["shares"] == pytest.approx({"u1": 0.5, "u2": 0.5})


def test_audit_fig2b_cdrf_rewards_the_lie_tsf_does_not(capsys, tmp_path, fig2):
    """ORACLES.md example 11: u2 claims m1 too (M_2 = 12): under offline CDRF its true
    tasks grow from 4 to 6; TSF ignores constraints in h, so the lie changes nothing."""
    out = tmp_path / "a.json"
    rc, stdout, err = cli(capsys, "audit", "--scenario", fig2, "--notion", "cdrf", "--misreport", "2", "--json", out)
    assert rc == 0, err
    doc = json.loads(out.read_text())
    assert doc["strategy_proof"] is False
    gains = [(x["user"], x["lie"], round(x["truthful_tasks"], 9), round(x["lying_tasks"], 9)) for x in doc["misreports"] if x["gains"]]
    assert gains == [("u2", "claims every server", 4, 6)]
    assert "u2 lying (claims every server) runs 6 true tasks, 4 truthfully" in stdout
    rc, stdout, _ = cli(capsys, "audit", "--scenario", fig2, "--notion", "tsf", "--misreport", "2,0.5", "--json", out)
    assert rc == 0 and json.loads(out.read_text())["strategy_proof"] is True and "SP ok (5 lies tried)" in stdout


def test_audit_of_drf_on_the_default_scenario(capsys, tmp_path):
    """DRF on the embedded default: sharing-incentive, envy-free and Pareto-efficient in
    their whole-task readings (a user at most one task short of its slice and of another's
    bundle; nothing fits where it stands); the exact Pareto test finds a repacking that runs
    more, which it names."""
    out = tmp_path / "a.json"
    rc, stdout, err = cli(capsys, "audit", "--policy", "drf", "--time-limit", "5", "--json", out)
    assert rc == 0, err
    doc = json.loads(out.read_text())
    assert doc["feasible"] and doc["stop_reason"] == "saturated"
    assert doc["sharing_incentive_up_to_one_task"] and doc["envy_free_up_to_one_task"] and doc["pareto_efficient_in_place"]
    assert doc["pareto_efficient"] is False and doc["pareto"]["best_tasks"] > doc["pareto"]["tasks"]
    assert stdout.splitlines()[1].startswith("SI ok | EF FAIL (ok up to one task)")


def test_audit_online_policy_misreports_run_the_policy_again(capsys, fig2):
    """The online audit runs the policy once per lie: CDRF with one task per server offer
    on fig. 2 is not hurt or helped by u2's claim here (the offers' order decides), and the
    liar, declining m1, never runs there."""
    rc, stdout, err = cli(capsys, "audit", "--scenario", fig2, "--policy", "cdrf", "--misreport", "2")
    assert rc == 0, err
    assert "SP ok (3 lies tried)" in stdout and "tasks {'u1': 12, 'u2': 4}" in stdout


def test_every_static_run_has_its_audit():
    r = run_emulation(build_scenario(**FIG4), RunConfig(policy="tsf"))
    assert r.audit is not None and r.audit["feasible"] and r.audit["sharing_incentive"] is not None
    assert "seconds" not in r.audit["pareto"]  # a result does not depend on the machine
    again = run_emulation(build_scenario(**FIG4), RunConfig(policy="tsf"))
    assert again.audit == r.audit


def test_bad_oracle_and_audit_input(capsys, tmp_path, fig4):
    rc, _, err = cli(capsys, "oracle", "--scenario", fig4, "--notion", "asset")
    assert rc == 2 and "invalid choice" in err and "Traceback" not in err
    assert_one_line_error(*cli(capsys, "oracle", "--scenario", fig4, "--notion", "udrf")[::2], "class")
    assert_one_line_error(*cli(capsys, "audit", "--scenario", fig4, "--policy", "drf,tsf")[::2], "one known policy")
    rc, _, err = cli(capsys, "audit", "--scenario", fig4, "--misreport", "0")
    assert rc == 2 and "positive" in err


@pytest.mark.parametrize("policy", ["drf", "tsf", "cdrf"])
def test_a_liar_declines_the_servers_it_cannot_use(policy):
    """u2 claims m1 and m2 but runs only on m2 (UserSpec.runs_on): it declines m1 as
    unusable, the scheduler queues its task again and proposes m1 to it no more; the run
    saturates (a user-driven drf would otherwise propose m1 to it for ever)."""
    import dataclasses

    import numpy as np

    from dgdrf.misreports import scenario_of
    from dgdrf.model.problem import Problem

    truth = Problem.from_scenario(build_scenario(**FIG2))
    lying = scenario_of(dataclasses.replace(truth, eligible=np.ones_like(truth.eligible)), truth)
    assert [u.runs_on for u in lying.users] == [(), ("m2",)]
    r = run_emulation(lying, RunConfig(policy=policy, per_server=True))
    assert r.stop_reason == "saturated" and r.invariant_violations == []
    assert set(r.per_server["u2"]) == {"m2"} and r.tasks["u1"] + r.tasks["u2"] > 12
