"""Tests of the fewest-tasks policy of examples/tutorials/fewest_tasks.py
(docs/tutorials/own-policy.md): python -m pytest -q examples/tutorials/test_fewest_tasks.py"""

from pathlib import Path

import dgdrf
from dgdrf.policies import POLICIES
import fewest_tasks

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_it_is_registered():
    assert POLICIES["fewest-tasks"] is fewest_tasks.FewestTasks


def test_equal_task_counts_on_one_server():
    """docs/ORACLES.md example 2: one server <28 CPU, 56 GB>, A <1, 2>, B <1, 4>. DRF gives
    A 14 tasks and B 7. Fewest tasks first alternates A and B until memory is full
    (9 pairs use <18, 54>, one more task of A <19, 56>): A 10, B 9."""
    scenario = dgdrf.scenario(servers=[("S", [28, 56])], users=[("A", [1, 2]), ("B", [1, 4])])
    assert dgdrf.run(scenario, policy="drf").tasks == {"A": 14, "B": 7}
    assert dgdrf.run(scenario, policy="fewest-tasks").tasks == {"A": 10, "B": 9}


def test_it_saturates_and_keeps_the_invariants():
    result = dgdrf.run(policy="fewest-tasks")  # the embedded default scenario
    assert result.stop_reason == "saturated"
    assert result.invariant_violations == []


def test_finite_constrained_jobs_drain():
    result = dgdrf.run(CONFIGS / "google-finite-8x4.toml", policy="fewest-tasks")
    assert result.stop_reason == "drained"
    assert result.invariant_violations == []
