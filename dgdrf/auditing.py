"""The fairness audit (model/audit.py) of every run's final allocation (its result's
``audit``); the audit of a policy probed with misreports (``dgdrf audit``) is in
dgdrf/misreports.py.

Every run of a static scenario (users with one demand each, tasks that never end: the
world the papers' properties are stated for) gets sharing incentive, envy-freeness and
Pareto efficiency of its final allocation in its result (``audit``). A run's result must
be the same for the same inputs, so the Pareto programme runs there only up to
:data:`RUN_PARETO_VARIABLES` variables and without a time limit (a time limit would make
the verdict depend on the machine); beyond that it says "unknown" unless the cheap test
(a task fits where it stands) decides it, and each programme stops after
:data:`RUN_PARETO_NODES` branch-and-bound nodes (a bound on work, not time). ``dgdrf audit`` decides larger ones with a time
limit, and probes strategy-proofness (dgdrf/misreports.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dgdrf.model.audit import audit
from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.problem import Problem
from dgdrf.model.scenario import Scenario

#: the largest Pareto programme a run's result decides (variables: eligible user-server
#: pairs), and the branch-and-bound nodes it may take: a bound on the work, not on the
#: time, so that the verdict does not depend on the machine
RUN_PARETO_VARIABLES = 500
RUN_PARETO_NODES = 200
NO_LIMIT_S = 1e9


def static(scenario: Scenario) -> bool:
    """Whether the papers' properties apply to the final allocation: every user one demand
    (one job, not a job of parts: an instance's bundle is no one task type), and no task
    ends (the allocation is the run's outcome, not a moment of it)."""
    return not scenario.finishing and not scenario.gangs and all(len(u.job_list) == 1 for u in scenario.users)


def run_audit(scenario: Scenario, ledger: AllocationLedger) -> dict[str, Any] | None:
    """The audit of a run's final allocation (None for a scenario that is not static)."""
    if not static(scenario):
        return None
    problem = Problem.from_scenario(scenario)
    placed = placed_in_order(problem, ledger)
    doc = audit(problem, placed, time_limit=NO_LIMIT_S, max_variables=RUN_PARETO_VARIABLES, node_limit=RUN_PARETO_NODES).to_dict()
    doc["pareto"].pop("seconds", None)  # wall time: the only figure identical runs would not share
    for key in ("strategy_proof", "misreports_tried", "misreport_gains"):
        doc.pop(key, None)  # probed by dgdrf audit only
    return doc


def placed_in_order(problem: Problem, ledger: AllocationLedger) -> np.ndarray:
    """The ledger's tasks per (user, server) in the problem's (the scenario's) order."""
    rows = [ledger.user_index[u] for u in problem.user_ids]
    cols = [ledger.server_index[s] for s in problem.server_ids]
    return ledger.placed[np.ix_(rows, cols)].copy()
