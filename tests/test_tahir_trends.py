"""bench/papers/tahir_trends.py's generator on one tiny scenario: every job over c classes is
c job streams of its tenant, each run under udrf and drf drains with no invariant
violation, and every job's completion time (its streams' latest finish - its arrival)
is computed and at least its longest task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench_scripts import load

from dgdrf.emulation import RunConfig, run_emulation

ROOT = Path(__file__).resolve().parents[1]


trends = load("bench/papers/tahir_trends.py")


def test_generator_streams_are_their_jobs():
    scenario, jobs = trends.generate(3, jobs=6, tenants=2, max_reps=4)
    users = {u.id: u for u in scenario.users}
    assert sum(len(j["classes"]) for j in jobs) == len(users)
    for j in jobs:
        assert 1 <= j["repetitions"] <= 4 and 1 <= len(j["classes"]) <= 4
        for cls, stream in zip(j["classes"], j["streams"]):
            (spec,) = users[stream].jobs
            assert users[stream].tenant == j["tenant"]
            assert spec.tasks == j["repetitions"] and spec.arrival == j["arrival"]
            assert spec.constraint.to_json() == {"requires": {"class": cls}}


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


def test_analysis_of_two_tiny_seeds():
    runs = []
    for seed in (1, 2):
        scenario, jobs = trends.generate(seed, jobs=5, tenants=2, max_reps=3)
        row: dict[str, Any] = {"seed": seed, "jobs": jobs, "runs": {}}
        for policy in trends.POLICIES:
            r = run_emulation(scenario, RunConfig(policy=policy, seed=seed))
            assert r.stop_reason == "drained" and not r.invariant_violations
            assert r.jobs is not None
            row["runs"][policy] = {"jct": trends.job_jct(r.jobs, jobs)}
        runs.append(row)
    a = trends.analyse(runs)
    assert a["jobs"] == 10
    assert sum(b["jobs"] for b in a["by_repetitions"]) == 10 and sum(b["jobs"] for b in a["by_classes"]) == 10
