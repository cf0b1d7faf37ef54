"""bench/papers/wang_trace.py on a tiny scenario of the same generator: every policy drains
with no invariant violation, runs the same tasks within a seed, and the analysis measures
what the paper's figures define (a job's queueing delay is its first task's start - its
arrival, at most its completion time; a task's delay at least its job's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench_scripts import load

ROOT = Path(__file__).resolve().parents[1]


trace = load("bench/papers/wang_trace.py")

TINY = """
name = "wang-trace-tiny"
policy = "drf"
tick = 0.01  # the script's config has 1 ms; a coarser tick is 10x fewer idle ticks here
neighbors = 4
latency_ms = [0.1, 0.5]

[generate]
kind = "google-2011-jobs"
servers = 12
users = 24
seed = 7
horizon = 120
load = 2.0
constrained = 0.85
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[dict, str]:
    config = tmp_path_factory.mktemp("wang") / "tiny.toml"
    config.write_text(TINY)
    return {(p, 1): trace.emulate(p, 1, str(config)) for p in trace.POLICIES}, str(config)


def test_every_policy_drains_the_same_tasks(runs):
    by, _ = runs
    first = by[(trace.POLICIES[0], 1)]
    assert first["stop_reason"] == "drained" and first["allocations"] == sum(first["tasks"])
    for p in trace.POLICIES:
        r = by[(p, 1)]
        assert r["stop_reason"] == "drained"  # emulate raises on anything else, with the command
        assert r["users"] == first["users"] and r["tasks"] == first["tasks"] and r["task_keys"] == first["task_keys"]
        arrival, start, jct = (np.asarray(r[k]) for k in ("arrival", "first_start", "jct"))
        delay = start - arrival
        assert np.all(delay >= 0) and np.all(delay <= jct)
        assert len(r["task_delay"]) == sum(r["tasks"]) and min(r["task_delay"]) >= 0


def test_analysis_and_page(runs, tmp_path):
    by, config = runs
    a = trace.analyse(by, [1])
    w = trace.describe(config)
    assert w["jobs"] == len(by[("fifo", 1)]["users"])
    for p in trace.POLICIES:
        pp = a["per_policy"][p]
        assert pp["job_delay"]["p50"] <= pp["jct"]["p50"] + 1e-9
    # the job-size bins partition the jobs
    assert sum(b["jobs"] for b in a["tsf_bins"]["drf"].values()) == w["jobs"]
    for x in a["tsf_tasks"].values():
        assert 0.0 <= x["tsf_faster"] + x["tsf_slower"] <= 1.0
    text = trace.render(a, w, [1], ["(test)"])
    rels = trace.relations(a, w)
    assert f"**{sum(r.holds for r in rels)} of {len(rels)} relations hold.**" in text
    assert "| psdsf |" in text and "fig. 11b" in text
