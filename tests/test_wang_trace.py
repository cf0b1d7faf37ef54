"""bench/papers/wang_trace.py on a tiny scenario of the same generator: every policy drains
with no invariant violation, runs the same tasks within a seed, and the analysis measures
what the paper's figures define (a job's queueing delay is its first task's start - its
arrival, at most its completion time; a task's delay at least its job's)."""

from __future__ import annotations

import copy
import json
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


def _as_committed(raw: dict) -> dict:
    """Raw figures as the page's json gives them back (rounded, tuples as lists, keys as strings)."""
    return json.loads(json.dumps(trace._round(raw)))


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
    raw = _as_committed(trace.raw(by, a, w, [1]))
    text = trace.render(raw)
    tabs = trace.tables(raw)
    printed = [r for t in tabs for r in t.relations if r.printed and r.holds is not None]
    assert f"**{sum(r.holds for r in printed)} of {len(printed)} of the paper's printed claims hold.**" in text
    assert "| psdsf |" in text and "fig. 11b" in text
    # with the CMMF baselines run, the paper's claims about them are rows, and fig. 10 has four alternatives
    claims = [r.claim for t in tabs for r in t.relations]
    assert "Mem does not suffer from CDRF's drawback and is better than CDRF" in claims
    assert "the performance of DRF and CPU are very close to each other" in claims
    assert "failing to address constraints, CPU leaves 60 % of tasks with longer queueing delays than TSF" in claims
    assert sum(r.where.startswith("§VI-B2 (fig. 10") for t in tabs for r in t.relations) == 16
    assert "are not run here" not in text


COMMITTED = ROOT / "bench/results/papers/wang-trace.json"


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(COMMITTED.read_text())


def test_committed_page_is_its_raw_figures(committed):
    assert trace.render(committed) == (ROOT / "bench/results/papers/wang-trace.md").read_text()


def test_no_contention_leaves_the_comparisons_unjudged(committed):
    """The committed runs (configs/wang-trace-1000.toml) never contend: figs. 9-11's rows
    are n/a, with the figures that say so, and only fig. 8a's two workload rows count."""
    c = trace.contention(committed)
    assert not c["contends"] and c["cpu_peak"] < trace.CONTENDED_CPU and c["looks_with_2_or_more"] < trace.CONTENDED_LOOKS
    workload, *compared = trace.tables(committed)
    assert all(r.holds is not None for r in workload.relations)
    rows = [r for t in compared for r in t.relations]
    assert len(rows) == 18 and all(r.holds is None for r in rows)
    assert all(f"at most {c['max_waiting']} jobs waiting at once, CPU in use at most {c['cpu_peak']:.2f}" in r.why for r in rows)
    text = trace.render(committed)
    assert "**1 of 2 of the paper's printed claims hold.**" in text


def _contended(raw: dict) -> dict:
    """The same figures with the look at the cluster saying it was full (the judges live)."""
    raw = copy.deepcopy(raw)
    for p in trace.policies_of(raw):
        for v in raw["analysis"]["per_policy"][p]["waiting"]:
            v["cpu_max"] = 1.0
    return raw


def test_every_judge_fails_its_alternative(committed):
    raw = _contended(committed)
    assert trace.contention(raw)["contends"]
    rows = [r for t in trace.tables(raw) for r in t.relations]
    assert len(rows) == 20 and all(r.printed and r.judge is not None and r.alternative is not None for r in rows)
    assert all(r.excludes_its_alternative() for r in rows), [r.claim for r in rows if not r.excludes_its_alternative()]


def test_near_zero_differences_do_not_hold(committed):
    """Judged on the committed (non-contending) figures, the claims that FIFO or CDRF is the
    longest or TSF the least fail: 1 s of job delay, a few seconds of task delay in 580."""
    rows = {(r.where, r.claim): r for t in trace.tables(_contended(committed)) for r in t.relations}
    for where, claim in (("§VI-B2 (fig. 9a)", "FIFO suffers from job starvation with intolerably long queueing delay (the longest of all)"),
                         ("§VI-B3 (fig. 11a)", "FIFO suffers the longest task queueing delay"),
                         ("§VI-B3 (fig. 11a)", "among the fair sharing algorithms TSF has the least task queueing delay"),
                         ("§VI-B3 (fig. 11b)", "CDRF is the worst of the fair sharing algorithms")):
        assert rows[(where, claim)].holds is False


def test_contended_page_judges_every_comparison():
    """configs/wang-trace-contended.toml contends (the cluster's CPU full, many jobs waiting):
    the paper's six policies ran, ten seeds or more, and every row of figs. 9-11 is judged:
    5 of jobs, 4 job sizes x TSF's 4 alternatives, 9 of tasks."""
    raw = json.loads((ROOT / "bench/results/papers/wang-trace-contended.json").read_text())
    c = trace.contention(raw)
    assert c["contends"] and c["cpu_peak"] >= trace.CONTENDED_CPU and c["looked"] == list(trace.PAPER)
    assert trace.policies_of(raw) == list(trace.PAPER) and len(raw["seeds"]) >= 10
    assert all(r["stop_reason"] == "drained" for r in raw["runs"])
    _, *compared = trace.tables(raw)
    rows = [r for t in compared for r in t.relations]
    assert len(rows) == 5 + 16 + 9 and all(r.printed and r.holds is not None and r.excludes_its_alternative() for r in rows)
    assert "are not run here" not in trace.render(raw)
