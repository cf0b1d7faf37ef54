"""Wang et al.'s micro-benchmark (TSF §VI-A2, Table II, fig. 5) through the full emulation:
configs/wang-table2.toml under online TSF (server offers, one task per offer), run seed 1.
While jobs 1 and 2 both have tasks pending, job 2 holds 2 tasks on each of nodes 1-25
(task share 50/100 = 1/2) and job 1 2 on each of nodes 26-50 (50/75 = 2/3); every task
runs only on the nodes its job's whitelist admits, and the run drains. The whole run
(1350 tasks, about 440 simulated seconds) takes a second or two. The page with every
relation: bench/papers/wang_microbenchmark.py."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dgdrf.config import load_scenario
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.world import Observer

ROOT = Path(__file__).resolve().parents[1]
TABLE2 = ROOT / "configs" / "wang-table2.toml"
#: Table II's whitelists, as node numbers
WHITELIST = {"job1": set(range(1, 51)), "job2": set(range(1, 26)), "job3": set(range(1, 11)) | set(range(26, 36)), "job4": set(range(1, 11)) | set(range(26, 36))}
#: job 1's longest task (23.2 s + 20 %): every job-1 task running when job 2 arrives has ended this long after
JOB1_LONGEST = 1.2 * 23.2


class Placements(Observer):
    """Where and when each job's tasks were placed (seconds from the start of allocation)."""

    def __init__(self) -> None:
        self.nodes: dict[str, set[str]] = defaultdict(set)
        self.last_start: dict[str, float] = {}

    def allocated(self, world: Any, allocation: Any) -> None:
        self.nodes[allocation.user].add(allocation.server)
        self.last_start[allocation.user] = allocation.time - world.start


@pytest.fixture(scope="module")
def run():
    scenario = load_scenario(TABLE2)
    placements = Placements()
    result = run_emulation(scenario, RunConfig(policy="tsf", seed=1, sample_every=1.0), observers=[placements])
    return scenario, result, placements


def test_table2_is_the_papers(run):
    """50 nodes (1-25 <1, 1>, 26-50 <2, 1>), four jobs with Table II's tasks and starts."""
    scenario, _, _ = run
    assert [s.id for s in scenario.servers] == [f"n{k:02d}" for k in range(1, 51)]
    assert [list(s.capacity) for s in scenario.servers] == [[1.0, 1.0]] * 25 + [[2.0, 1.0]] * 25
    jobs = {u.id: u.job_list[0] for u in scenario.users}
    assert {j: (job.tasks, job.arrival) for j, job in jobs.items()} == {"job1": (1000, 0), "job2": (150, 10), "job3": (100, 150), "job4": (100, 150)}


def test_the_run_drains_and_every_task_ran_where_its_job_admits(run):
    _, r, placements = run
    assert r.stop_reason == "drained"
    assert r.invariant_violations == []  # the collector's check: no task on a node its constraint excludes, none over capacity
    assert r.unfinished_tasks is None and r.allocations == 1350
    for job, nodes in placements.nodes.items():
        assert {int(n[1:]) for n in nodes} <= WHITELIST[job], job


def test_while_jobs_1_and_2_both_wait_job_2_holds_half_and_job_1_two_thirds(run):
    """Fig. 5: task shares 1/2 (job 2) and 2/3 (job 1), from the moment every job-1 task
    that held nodes 1-25 when job 2 arrived has ended until job 2's queue empties."""
    _, r, placements = run
    assert r.fairness == "tsf"  # the samples hold task shares n_i / h_i
    t = np.asarray(r.samples["time"])
    start, end = 10.0 + JOB1_LONGEST, placements.last_start["job2"]
    window = (t >= start) & (t <= end)
    assert window.sum() >= 20, (start, end)
    job1 = np.asarray(r.samples["shares"]["job1"])[window]
    job2 = np.asarray(r.samples["shares"]["job2"])[window]
    assert job2.max() == pytest.approx(0.5)  # reaches 50 tasks, 2 on each of nodes 1-25
    assert job2.mean() == pytest.approx(0.5, abs=0.02) and job2.min() >= 0.45  # one or two tasks short between an end and its replacement
    assert job1.max() == pytest.approx(2 / 3)  # 50 of h = 75: 2 on each of nodes 26-50, none on 1-25
    assert job1.max() <= 2 / 3 + 1e-9 and job1.mean() == pytest.approx(2 / 3, abs=0.02) and job1.min() >= 0.6
    # job 1 alone before job 2's tasks can start: the whole cluster (75 tasks)
    alone = (t >= 8.0) & (t <= 18.0)
    assert np.asarray(r.samples["shares"]["job1"])[alone] == pytest.approx(1.0)
