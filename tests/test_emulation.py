"""End-to-end emulation: invariants on random scenarios (hypothesis), agreement of the
centralized DRF emulation with the offline oracle, determinism, and the thesis-100x20
acceptance relations (drf error ratio 0; drf's min share several times fifo's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.oracle import progressive_filling
from dgdrf.config import load_scenario
from dgdrf.model.scenario import build_scenario

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

vectors = st.lists(st.floats(0.05, 4.0, allow_nan=False).map(lambda x: round(x, 3)), min_size=2, max_size=2)


@st.composite
def scenarios(draw):
    servers = draw(st.lists(vectors, min_size=1, max_size=4))
    users = draw(st.lists(st.lists(st.floats(0.01, 2.0).map(lambda x: round(x, 3)), min_size=2, max_size=2), min_size=1, max_size=5))
    return build_scenario(["cpu", "mem"], [(f"s{i}", c) for i, c in enumerate(servers)], [(f"u{i}", d) for i, d in enumerate(users)])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from(["drf", "drf-bestfit", "fifo"]), st.integers(0, 3))
def test_invariants_hold_on_random_scenarios(scenario, policy, seed):
    r = run_emulation(scenario, RunConfig(policy=policy, seed=seed))
    assert r.invariant_violations == []  # no server over capacity, no task twice, one accept each
    assert r.saturated
    assert r.allocations == sum(r.tasks.values())
    assert all(0 <= u <= 1 + 1e-9 for u in r.utilization.values())
    if policy != "fifo":
        assert r.error_ratio == 0.0
        oracle = progressive_filling(scenario, server_choice="first-fit" if policy == "drf" else "best-fit")
        assert r.tasks == oracle.tasks


def test_json_is_identical_for_the_same_seed_apart_from_wall_time():
    s = load_scenario(CONFIGS / "thesis-100x20.toml")
    small = build_scenario(s.resources, list(s.servers[:20]), list(s.users[:6]))
    docs = []
    for _ in range(2):
        d = run_emulation(small, RunConfig(policy="drf", seed=5)).to_dict()
        d.pop("wall_s")
        docs.append(json.dumps(d))
    assert docs[0] == docs[1]
    other = run_emulation(small, RunConfig(policy="drf", seed=6)).to_dict()
    assert other["runtime_s"] != json.loads(docs[0])["runtime_s"]  # latencies differ


@pytest.mark.parametrize("policy,max_time", [("drf", 100_000.0), ("pdgdrf", 100_000.0), ("dgdrf", 35.0)])
def test_a_progress_bar_changes_nothing(policy, max_time):
    """With a progress callback the clock runs in one-second slices; the run must be
    the one without (to saturation, and to a max_time that ends mid-slice)."""
    from dgdrf.model.generators import google_2011_scenario

    scenario = google_2011_scenario(12, 4, 5)
    config = RunConfig(policy=policy, seed=2, neighbors=3, max_time=max_time)
    seen = []
    sliced = run_emulation(scenario, config, progress=lambda t, n: seen.append((t, n))).to_dict()
    whole = run_emulation(scenario, config).to_dict()
    for r in (sliced, whole):
        r.pop("wall_s")
    assert sliced == whole
    assert len(seen) >= 10 and [t for t, _ in seen] == sorted(t for t, _ in seen)
    assert seen[-1][1] == whole["allocations"]


def test_thesis_100x20_drf_is_exact_and_far_fairer_than_fifo():
    s = load_scenario(CONFIGS / "thesis-100x20.toml")
    assert (len(s.servers), len(s.users)) == (100, 20)
    drf = run_emulation(s, RunConfig(policy="drf"))
    fifo = run_emulation(s, RunConfig(policy="fifo"))
    assert drf.invariant_violations == [] and fifo.invariant_violations == []
    assert drf.error_ratio == 0.0
    assert drf.min_share >= 3 * fifo.min_share  # thesis table 5.1: 0.0561 vs 0.0059
    assert drf.gini < fifo.gini / 10
    assert drf.tasks == progressive_filling(s).tasks
    # one allocation per tick: run-time ~ allocations x tick (thesis 4.1)
    assert drf.runtime_s == pytest.approx(drf.allocations * 0.1, rel=0.01)


def test_stall_detection_ends_a_run_that_cannot_progress():
    # a tick longer than the stall limit: no allocation within stall_time -> "stalled"
    s = build_scenario(["cpu", "mem"], [("s1", [10, 10])], [("u1", [1, 1])])
    r = run_emulation(s, RunConfig(tick=50.0, stall_time=20.0))
    assert r.stop_reason == "stalled" and not r.saturated


def test_max_time_ends_a_run():
    s = build_scenario(["cpu", "mem"], [("s1", [1000, 1000])], [("u1", [1, 1])])
    r = run_emulation(s, RunConfig(max_time=5.0))
    assert r.stop_reason == "max_time" and r.allocations == 49  # ticks at 0.1 .. 4.9 s
