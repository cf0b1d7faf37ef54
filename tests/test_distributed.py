"""Distributed policies (thesis 4.2-4.5): the relations of ch. 5 on the smallest instances
that show them, ORACLES.md example 4, and the invariants under proposal races and walks.

The thesis's exact numbers came from a data set we do not have; these tests assert the
relations it reports: DGDRF makes no errors and stays within a few percent of DRF's
minimum share; PDGDRF errs yet stays close to DRF; DDRF with random neighbours and probes
err most and are clearly less fair; DDRF with gradient neighbours sits between.
"""

from __future__ import annotations

import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.generators import google_2011_scenario
from dgdrf.model.oracle import ddrf_rounds, progressive_filling
from dgdrf.model.scenario import build_scenario

DISTRIBUTED = ("probes", "ddrf-random", "ddrf-gradient", "dgdrf", "pdgdrf")


def small(servers: int = 20, users: int = 10, seed: int = 1, scale: float = 2.0):
    """A Google-2011-like instance with tasks ``scale`` times larger: few hundred
    allocations, the same heterogeneity."""
    base = google_2011_scenario(servers, users, seed)
    return build_scenario(base.resources, list(base.servers), [(u.id, [x * scale for x in u.demand]) for u in base.users], name=f"small-{servers}x{users}-{seed}")


def run(scenario, policy, neighbors=3, seed=1, **kw):
    r = run_emulation(scenario, RunConfig(policy=policy, neighbors=neighbors, seed=seed, warmup=5.0, **kw))
    assert r.invariant_violations == [], r.invariant_violations[:3]
    return r


@pytest.fixture(scope="module")
def results():
    sc = small()
    return {p: run(sc, p) for p in ("drf", *DISTRIBUTED)}


def test_dgdrf_makes_no_errors_and_matches_drf(results):
    """DGDRF allocates in DRF's order (no errors), so it ends within a few per cent of
    DRF's minimum share; not exactly at it, because a task goes to its user's home server
    or wherever its walk finds room, not to the first server that fits, and the capacity
    left in pieces differs (on seed 1 here 91 % of the CPU against DRF's 97 %)."""
    import statistics

    ratios = []
    for seed in (1, 2, 3):
        sc = small(seed=seed)
        drf, dg = (results["drf"], results["dgdrf"]) if seed == 1 else (run(sc, "drf", seed=seed), run(sc, "dgdrf", seed=seed))
        assert dg.error_ratio == 0.0 and dg.saturated
        ratios.append(dg.min_share / drf.min_share)
    assert min(ratios) >= 0.9 and statistics.median(ratios) >= 0.95


@pytest.mark.parametrize("neighbors", [2, 4, 6])
@pytest.mark.parametrize("seed", [2, 3])
def test_dgdrf_is_error_free_for_each_neighbour_count(neighbors, seed):
    r = run(small(seed=seed), "dgdrf", neighbors=neighbors, seed=seed)
    assert r.error_ratio == 0.0 and r.saturated


def test_pdgdrf_errs_but_stays_fair(results):
    drf, pd = results["drf"], results["pdgdrf"]
    assert pd.error_ratio > 0.0
    assert pd.min_share >= 0.9 * drf.min_share
    assert pd.gini <= drf.gini + 0.02


def test_pdgdrf_errors_are_near_misses():
    """Fig. 5.7: with a 5 % tolerance most of PDGDRF's errors are not errors (over three
    seeds together: one seed's few hundred allocations swing the fraction by half)."""
    rs = [run(small(seed=seed), "pdgdrf", seed=seed) for seed in (1, 2, 3)]
    errors = sum(r.error_ratio * r.allocations for r in rs)
    near_misses_excluded = sum(r.error_ratio_tol["0.05"] * r.allocations for r in rs)
    assert errors > 0 and near_misses_excluded < errors / 5


def test_random_neighbours_and_probes_err_most_and_are_least_fair(results):
    dg = results["dgdrf"]
    for p in ("ddrf-random", "probes"):
        r = results[p]
        assert r.error_ratio > 0.5, p  # thesis: 74-96 %
        assert r.min_share < 0.8 * dg.min_share, p
        assert r.gini > 5 * dg.gini, p


def test_ddrf_gradient_sits_between(results):
    rnd, grad, dg = results["ddrf-random"], results["ddrf-gradient"], results["dgdrf"]
    assert dg.error_ratio < grad.error_ratio < rnd.error_ratio
    assert grad.min_share > rnd.min_share


def test_error_curve_and_cost_per_tick_are_reported(results):
    for p, r in results.items():
        curve = r.error_curve
        assert curve["allocations"][-1] == r.allocations
        assert curve["exact"][-1] == pytest.approx(r.error_ratio)
        assert curve["0.05"][-1] == pytest.approx(r.error_ratio_tol["0.05"])
        assert r.cost_per_tick["ticks"] > 0
    ddrf = results["ddrf-random"].cost_per_tick
    model = ddrf["thesis_model_worst_case"]["ddrf_share_messages_eq_4_3"]
    assert 0 < ddrf["by_group"]["neighbour_state"]["messages"] <= model  # eq. 4.3 is the worst case
    grad = results["dgdrf"].cost_per_tick
    assert grad["by_group"]["gradient"]["messages"] == pytest.approx(grad["thesis_model_worst_case"]["gradient_messages_eq_4_6"], rel=0.1)


def test_pdgdrf_gini_test_passes_only_below_a_higher_share_neighbour():
    """Alg. 6 with eq. 4.7: raising the largest share of a set never lowers its Gini
    coefficient. So a server whose gradient neighbours all hold lower shares (every server
    below the top of a converged gradient, eq. 3.9) cannot allocate; with the peer-sampling
    view's utilities too (``gini_neighbours="overlay"``) a random higher-share server lets it."""
    from array import array
    from types import SimpleNamespace

    from dgdrf.policies.dgdrf import GradientScheduler
    from dgdrf.policies.local import CapacityKnowledge, TaskDesk

    desk = TaskDesk(CapacityKnowledge(exact=[10.0, 10.0]))
    user = SimpleNamespace(share=0.30, request=SimpleNamespace(demand=[0.1, 0.05], weight=1.0))  # one task adds 0.01
    cyclon = SimpleNamespace(view_profiles=lambda: [("far", -0.9)])  # a random server, share 0.9
    sample = {"a": (-0.28, 0), "b": (-0.29, 0), "idle": (float("-inf"), 0)}
    gradient = SimpleNamespace(sample=sample, sample_utilities=lambda: array("d", [u for u, _ in sample.values()]), sampler=cyclon)
    for overlay, falls in ((False, False), (True, True)):
        sched = GradientScheduler(desk, parallel=True, gini_overlay=overlay)
        sched.gradient = gradient
        assert sched._gini_falls(user) is falls


def test_pdgdrf_on_the_overlay_allocates_in_parallel_with_many_users():
    """Thesis fig. 5.11's mechanism: with many servers holding users, PDGDRF outpaces
    DRF's one allocation per tick. Only with the peer-sampling view in the Gini test; on
    the gradient view alone (the default, alg. 6's S_l) it stays below one per tick.
    Medians of three seeds: over 300 ticks one seed's rate varies by a third."""
    import statistics

    sc = google_2011_scenario(60, 60, 3)
    counts: dict[str, list[float]] = {"gradient": [], "overlay": []}
    for seed in (3, 4, 5):
        for g in counts:
            r = run_emulation(sc, RunConfig(policy="pdgdrf", neighbors=2, seed=seed, max_time=40.0, gini_neighbours=g))
            assert r.invariant_violations == []
            counts[g].append(r.allocations / (r.runtime_s / 0.1))  # allocations per tick over 300 ticks
    assert statistics.median(counts["gradient"]) < 0.6 < 1.0 < statistics.median(counts["overlay"])


def test_pushsum_capacity_knowledge_runs_and_costs_accuracy():
    sc = small(servers=12, users=6, seed=4)
    exact = run(sc, "dgdrf", seed=4)
    est = run(sc, "dgdrf", seed=4, capacity_knowledge="pushsum")
    assert est.saturated and est.capacity_knowledge == "pushsum"
    assert est.cost_per_tick["by_group"]["aggregation"]["messages"] > 0
    assert est.min_share >= 0.9 * exact.min_share  # estimates converge, fairness holds up
    # servers order users by shares computed with slightly different estimates of C
    assert est.error_ratio > exact.error_ratio == 0.0


def test_oracle4_ddrf_depends_on_the_graph():
    """ORACLES.md example 4 (thesis 3.2): one resource, capacity 18.3, users A..D already
    hold one task each, demand equal to it. Centralized DRF ends at A 4.3, B 4, C 6, D 4."""
    start = {"A": 0.1, "B": 4.0, "C": 3.0, "D": 4.0}
    drf = progressive_filling(
        build_scenario(["r"], [("pool", [18.3])], [(u, [d]) for u, d in start.items()]),
        initial_tasks={u: [("pool", 1)] for u in start},
    )
    assert {u: round(n * start[u], 6) for u, n in drf.tasks.items()} == {"A": 4.3, "B": 4.0, "C": 6.0, "D": 4.0}
    assert round(4 / 18.3, 3) == 0.219  # the lowest user's 21.8 % of the cluster
    # sorted by increasing share (fig. 3.2): a line A - C - B - D reaches DRF's result
    line = {"A": ["C"], "C": ["A", "B"], "B": ["C", "D"], "D": ["B"]}
    assert {u: round(v, 6) for u, v in ddrf_rounds(start, start, line, 18.3).items()} == {"A": 4.3, "B": 4.0, "C": 6.0, "D": 4.0}
    # the unsorted graph of fig. 3.1 (A only sees B; C and D do not see A): A ends near 1.6 %
    unsorted = {"A": ["B"], "B": ["C"], "C": ["B", "D"], "D": ["B"]}
    final = ddrf_rounds(start, start, unsorted, 18.3)
    assert final["A"] / 18.3 == pytest.approx(0.016, abs=0.001)


def test_faster_gradient_exchanges_shorten_dgdrf_runs():
    """Thesis fig. 5.12: more gradient updates per allocation tick, shorter run-time
    (summed over three data sets: one run's time varies by a third with the seed)."""
    slow_s = fast_s = 0.0
    for seed in (7, 8, 9):
        sc = small(servers=12, users=6, seed=seed)
        slow = run(sc, "dgdrf", seed=seed)
        fast = run(sc, "dgdrf", seed=seed, gradient_period=0.1 / 3)
        assert fast.error_ratio == 0.0 and fast.saturated and slow.saturated
        assert fast.cost_per_tick["by_group"]["gradient"]["messages"] > 2 * slow.cost_per_tick["by_group"]["gradient"]["messages"]
        slow_s, fast_s = slow_s + slow.runtime_s, fast_s + fast.runtime_s
    assert fast_s < 0.8 * slow_s


def test_quiet_idle_servers_halve_gradient_messages_without_errors():
    """--no-idle-gossip: servers without users only answer gradient exchanges; DGDRF
    still allocates exactly as DRF would, for far fewer gradient messages."""
    sc = small(servers=30, users=6, seed=4)
    loud = run(sc, "dgdrf", seed=4)
    quiet = run(sc, "dgdrf", seed=4, idle_gossip=False)
    assert quiet.error_ratio == 0.0 and quiet.saturated
    g = lambda r: r.cost_per_tick["by_group"]["gradient"]["messages"]  # noqa: E731
    assert g(quiet) < 0.5 * g(loud)
