"""bench/papers/tahir_trends.py's generator on one tiny scenario: every job over c classes is
one job stream of its tenant, a job of c parts run whole; each run under udrf and the
paper's DRF (drf-bundle) drains with no invariant violation (no run with a part missing),
and every job's completion time (its last run's end - its arrival) is computed and at
least one run's. The page's figures come from its raw figures (the run records read back
give the analysis of the runs), and the paper's four claims are judged, each failing on
its alternative (no trend, no difference)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench_scripts import committed_raw, load

from dgdrf.bench.relations import count
from dgdrf.emulation import RunConfig, run_emulation

ROOT = Path(__file__).resolve().parents[1]


trends = load("bench/papers/tahir_trends.py")


def test_generator_jobs_are_jobs_of_parts():
    scenario, jobs = trends.generate(3, jobs=6, tenants=2, max_reps=4)
    users = {u.id: u for u in scenario.users}
    assert len(jobs) == len(users) and scenario.gangs
    for j in jobs:
        assert 1 <= j["repetitions"] <= 4 and 1 <= len(j["classes"]) <= 4
        (stream,) = j["streams"]
        (spec,) = users[stream].jobs
        assert users[stream].tenant == j["tenant"]
        assert spec.tasks == j["repetitions"] and spec.arrival == j["arrival"]
        assert [p.constraint.to_json() for p in spec.parts] == [{"requires": {"class": c}} for c in j["classes"]]
        assert all(p.count == 1 for p in spec.parts)


@pytest.mark.parametrize("policy", trends.POLICIES)
def test_tiny_scenario_drains_and_every_job_has_a_jct(policy):
    scenario, jobs = trends.generate(3, jobs=6, tenants=2, max_reps=4)
    r = run_emulation(scenario, RunConfig(policy=policy, seed=3))
    assert r.stop_reason == "drained", (r.events, r.unfinished_tasks)
    assert r.invariant_violations == []
    assert r.jobs is not None
    jct = trends.job_jct(r.jobs, jobs)
    assert len(jct) == len(jobs)
    assert all(x >= trends.DURATION["min"] for x in jct)  # at least one task's run
    assert max(jct) <= r.makespan


def test_analysis_of_two_tiny_seeds_and_of_their_records_read_back():
    runs = []
    for seed in (1, 2):
        scenario, jobs = trends.generate(seed, jobs=5, tenants=2, max_reps=3)
        row: dict[str, Any] = {"seed": seed, "load": trends.LOAD, "jobs": jobs, "streams": len(scenario.users), "runs": {}}
        for policy in trends.POLICIES:
            backlog = trends.Backlog()
            r = run_emulation(scenario, RunConfig(policy=policy, seed=seed), observers=[backlog])
            assert r.stop_reason == "drained" and not r.invariant_violations
            assert r.jobs is not None
            row["runs"][policy] = {"jct": trends.job_jct(r.jobs, jobs), "makespan": r.makespan, "stop_reason": r.stop_reason, "allocations": r.allocations,
                                   "sim_s": r.runtime_s, "wall_s": 0.0, "backlog": backlog.summary()}
            assert all(math.isnan(x) or 0.0 <= x <= 1.0 for x in backlog.summary()["in_use"])  # nan: no run ever waited at a look
        runs.append(row)
    a = trends.analyse(runs)
    assert a["jobs"] == 10
    assert sum(b["jobs"] for b in a["by_repetitions"]) == 10 and sum(b["jobs"] for b in a["by_classes"]) == 10
    # the page is made from the records as json gives them back: the same jobs, the same figures to the records' rounding
    raw = json.loads(trends.compact_json(trends._round({"load": trends.LOAD, "runs": [trends.run_record(r) for r in runs]})))
    back = trends.runs_from_raw(raw, trends.LOAD)
    assert [j["streams"] for r in back for j in r["jobs"]] == [j["streams"] for r in runs for j in r["jobs"]]
    assert [r["streams"] for r in back] == [r["streams"] for r in runs]
    b = trends.analyse(back)
    assert b["jobs"] == a["jobs"] and b["deciles_udrf_lt_drf"] == a["deciles_udrf_lt_drf"]
    assert math.isclose(b["jct"]["udrf"]["mean"], a["jct"]["udrf"]["mean"], abs_tol=1e-3)


def test_sign_test_tells_a_trend_from_none():
    assert trends.sign_test({"positive": 20, "seeds": 30})  # p = 0.049
    assert not trends.sign_test({"positive": 19, "seeds": 30})  # p = 0.10
    assert not trends.sign_test({"positive": 15, "seeds": 30}) and not trends.sign_test({"positive": 0, "seeds": 0})


def test_the_committed_page_judges_the_papers_four_claims():
    raw = committed_raw(trends)
    tables = trends.tables(raw)
    printed = [r for t in tables for r in t.relations if r.printed]
    assert [r.where.split(",")[0] for r in printed] == ["fig. 9", "fig. 10a", "fig. 10b", "fig. 10c"]
    assert all(r.holds is not None and r.excludes_its_alternative() for r in printed)
    held, judged = count(tables)
    assert judged == 4 and f"**{held} of 4 of the paper's printed claims hold.**" in trends.render(raw)
    assert all(rec[p]["stop_reason"] == "drained" for rec in raw["runs"] for p in trends.POLICIES)
