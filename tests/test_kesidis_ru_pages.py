"""What the report pages bench/results/papers/kesidis-psdsf.md and ru-3d-drf.md claim beyond
tests/test_paper_policies.py, on a few seeds of their scripts' own functions: the
distributions of endings over random offer orders, global DRF with worker offers and the
other ways of taking an offer (no one of them gives all three of Kesidis et al.'s
figures), Ru et al.'s 2-D DRF on Fig. 1 (skip and stop semantics), the script's
discrete-event simulation against dgdrf's drf, and the signs of the 2-D/3-D relations on
the finite workload."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from bench_scripts import load

ROOT = Path(__file__).resolve().parents[1]


kesidis = load("bench/papers/kesidis_psdsf.py")
ru = load("bench/papers/ru_3d_drf.py")


# ---- Kesidis et al. §4 ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def kdoc() -> dict[str, Any]:
    return kesidis.collect(range(1, 11))


def test_kesidis_endings_over_ten_seeds(kdoc):
    """rPS-DSF 19/2/2/19 in every order; PS-DSF ends 20/0/0/20 or 19/2/2/19 (so x_12 =
    x_21 in each run: the page's reason the paper's 0.6 / 0.35 cannot come from this
    greedy), always 20/0/0/20 in fixed order; user-driven DRF 5 each."""
    em = kdoc["emulated"]
    for order in ("fixed", "random"):
        assert em[f"rpsdsf {order}"]["per_run"] == [[19, 2, 2, 19]] * 10
    assert {tuple(e) for e in em["psdsf random"]["per_run"]} == {(20, 0, 0, 20), (19, 2, 2, 19)}
    assert em["psdsf fixed"]["per_run"] == [[20, 0, 0, 20]] * 10
    assert em["drf"]["per_run"] == [[5, 5, 5, 5]] * 10
    assert sum(e["runs"] for e in em["psdsf random"]["endings"]) == 10


def test_kesidis_offer_loop_no_one_way_gives_all_three(kdoc):
    """DRF with worker offers: 20/0/0/20 in fixed order with one task per offer, 5 each
    when the offered worker is drained; draining breaks PS-DSF (15/0/3/20) and rPS-DSF
    (15/2/3/19); no way of taking an offer reproduces all three of the paper's figures."""
    off = kdoc["offer_loop"]
    assert off["drf one fixed"]["per_run"] == [[20, 0, 0, 20]] * 10
    assert off["drf drain random"]["per_run"] == [[5, 5, 5, 5]] * 10
    assert off["psdsf drain fixed"]["per_run"][0] == [15, 0, 3, 20]
    assert off["rpsdsf drain fixed"]["per_run"][0] == [15, 2, 3, 19]
    for take in kesidis.TAKES:
        assert not all(kesidis.reproduces(n, off[f"{n} {take} {o}"]) for n in ("drf", "psdsf", "rpsdsf") for o in ("fixed", "random")), take
    assert kesidis.reproduces("psdsf", off["psdsf one random"]) and kesidis.reproduces("rpsdsf", off["rpsdsf one random"])
    assert kesidis.reproduces("drf", off["drf drain random"])


def test_kesidis_page(kdoc):
    text = kesidis.render(kdoc, ["python bench/papers/kesidis_psdsf.py --seeds 10"])
    rel = kesidis.relations(kdoc)
    assert len(rel) == 6 and f"**{sum(1 for r in rel if r.holds)} of 6 relations hold.**" in text
    assert [r.holds for r in rel][0] and rel[2].holds and rel[5].holds  # DRF user-driven, PS-DSF bounds, rPS-DSF exact


def test_kesidis_a_run_that_does_not_saturate_is_not_recorded(monkeypatch):
    fake = SimpleNamespace(per_server={"p1": {"w1": 3}}, stop_reason="stalled", invariant_violations=[], allocations=3, tasks={"p1": 3, "p2": 0})
    monkeypatch.setattr(kesidis, "run_emulation", lambda *a, **k: fake)
    with pytest.raises(RuntimeError, match="stop_reason stalled.*--policy psdsf --offer-order random --seed 7"):
        kesidis.emulate("psdsf", "random", 7)


# ---- Ru et al. ----------------------------------------------------------------------------------
def test_ru_2d_drf_on_fig1():
    """§III's 2-D DRF: 4/3/4 with skip semantics (the 3-D allocation); the paper's 3/3/4 only
    with line-14 stop and ties by the share after the next task, using 79.2 % / 83.3 % /
    94.4 %, not the printed 100 % disk. That tie rule replays Fig. 1's order in 3-D."""
    assert ru.fig1_greedy(ru.TWO_D)["tasks"] == {"a": 4, "b": 3, "c": 4}
    assert ru.fig1_greedy(ru.TWO_D, stop=True)["tasks"] == {"a": 4, "b": 3, "c": 4}
    lit = ru.fig1_greedy(ru.TWO_D, stop=True, tie="after")
    assert lit["tasks"] == {"a": 3, "b": 3, "c": 4} and lit["order"] == "cabcabcacb"
    assert lit["utilization"] == pytest.approx({"cpu": 19 / 24, "memory": 30 / 36, "disk": 51 / 54})
    assert ru.fig1_greedy(ru.THREE_D, tie="after")["order"] == ru.FIG1_ORDER


@pytest.mark.parametrize("level", [1, 2, 3])
def test_ru_simulation_is_dgdrfs_drf_on_fig1(level):
    """The script's simulation, on the pool with endless tasks, places what dgdrf's drf
    places at each share level, in the same order (level 2: 4/3/4)."""
    em = ru.fig1_emulated(level)
    sim = ru.fig1_greedy(ru.THREE_D, level)
    assert em["tasks"] == sim["tasks"] == {"a": 4, "b": 3, "c": 4}
    assert em["order"] == sim["order"]


def test_ru_simulation_conserves_work_and_capacity():
    """Every job ends; busy capacity integrated over time is the jobs' work, resource by
    resource; nothing is ever over capacity."""
    jobs = ru.continuous(3)
    for dims, stop in ru.VARIANTS.values():
        r = ru.simulate(ru.MACHINES, jobs, dims, stop=stop)
        assert all(np.isfinite(r["finish"])) and r["end"] == max(r["finish"])
        total = np.array(ru.MACHINES, dtype=float).sum(axis=0)
        work = sum(np.array(j.demand) * j.tasks * j.duration for j in jobs)
        assert ru.time_average(r["trace"], 0.0, r["end"]) * total * r["end"] == pytest.approx(work)
        assert max(u.max() for _, u in r["trace"]) <= 1 + 1e-9


def test_ru_simulation_against_dgdrf_on_a_batch():
    """The page's check: the simulated 3-D batch against dgdrf's drf on the same jobs."""
    jobs = ru.batch(50)
    sim, emu = ru.measure(jobs, ru.THREE_D, False), ru.emulate_jobs(jobs, "ru-batch-50")
    assert emu["makespan"] == pytest.approx(sim["makespan"], rel=0.02)
    assert emu["mean_jct"] == pytest.approx(sim["mean_jct"], rel=0.03)
    for r in ru.RESOURCES:
        assert emu["utilization"][r] == pytest.approx(sim["utilization"][r], abs=0.02)


def test_ru_2d_against_3d_on_finite_jobs():
    """Batches: 3-D DRF finishes sooner and so uses the disk more over its makespan.
    Continuous arrivals: 3-D uses more CPU and memory and finishes jobs sooner, and less of
    the disk (2-D gives the Read/Write tenant more tasks): the page's fig. 6 verdict."""
    for size in (50, 200):
        three, two = (ru.measure(ru.batch(size), dims, False) for dims in (ru.THREE_D, ru.TWO_D))
        assert three["makespan"] < two["makespan"] and three["mean_jct"] < two["mean_jct"]
        assert three["utilization"]["disk"] > two["utilization"]["disk"]
    for seed in (1, 2):
        three, two = (ru.measure(ru.continuous(seed), dims, False, (0.0, ru.HORIZON)) for dims in (ru.THREE_D, ru.TWO_D))
        assert three["utilization"]["cpu"] > two["utilization"]["cpu"] and three["utilization"]["memory"] > two["utilization"]["memory"]
        assert three["utilization"]["disk"] < two["utilization"]["disk"]
        assert three["mean_jct"] < two["mean_jct"]
