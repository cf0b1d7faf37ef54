"""Strategy-proofness probed by misreports (``dgdrf audit --misreport``): the policy run
again on each user's lies, or the offline oracle solved again.

Each user in turn reports its demand scaled by a factor, or claims every server; the liar
declines a placement on a server it cannot really use (UserSpec.runs_on: as a Mesos
framework declines an offer), so that its true tasks are those it runs. That is the
reading under which Wang et al.'s fig. 2b shows CDRF rewarding the lie (ORACLES.md
example 11). A lie after which the liar runs more true tasks is reported.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dgdrf.auditing import static
from dgdrf.config import RunConfig
from dgdrf.emulation import run_emulation
from dgdrf.model.audit import Audit, audit
from dgdrf.model.problem import Problem
from dgdrf.model.scenario import Scenario, build_scenario


def scenario_of(problem: Problem, truth: Problem | None = None, name: str = "reported") -> Scenario:
    """A scenario that reports ``problem``; a user whose eligibility in ``truth`` is smaller
    claims servers it cannot use, and declines them (UserSpec.runs_on)."""
    users = []
    for i, uid in enumerate(problem.user_ids):
        doc: dict[str, Any] = {"id": uid, "demand": problem.demand[i].tolist()}
        if not problem.eligible[i].all():
            doc["eligible"] = [s for s, ok in zip(problem.server_ids, problem.eligible[i]) if ok]
        if problem.weight[i] != 1.0:
            doc["weight"] = float(problem.weight[i])
        users.append(doc)
    servers = [(sid, problem.capacity[j].tolist()) for j, sid in enumerate(problem.server_ids)]
    resources = [f"r{k}" for k in range(problem.capacity.shape[1])]
    scenario = build_scenario(resources, servers, users, name=name)
    if truth is None:
        return scenario
    liars = {i for i in range(len(problem.user_ids)) if (problem.eligible[i] & ~truth.eligible[i]).any()}
    specs = tuple(
        replace(u, runs_on=tuple(s for s, ok in zip(truth.server_ids, truth.eligible[i]) if ok)) if i in liars else u for i, u in enumerate(scenario.users)
    )
    return replace(scenario, users=specs)


def audit_policy(
    scenario: Scenario, config: RunConfig, factors: tuple[float, ...] = (2.0,), claim_servers: bool = True, time_limit: float = 10.0, probe: bool = True,
) -> tuple[Audit, dict[str, Any]]:
    """Run ``config.policy`` on ``scenario`` and audit its allocation; with ``probe``,
    strategy-proofness too, with each user's lies (each lie one more run). Returns the
    audit and the truthful run's result."""
    if not static(scenario):
        raise ValueError(f"scenario {scenario.name!r} has jobs of several demands or tasks that end: the audit's properties are of a static allocation")
    truth = Problem.from_scenario(scenario)
    config = replace(config, per_server=True)
    runs: dict[str, Any] = {}

    def allocate(reported: Problem) -> np.ndarray:
        lying = reported is not truth
        result = run_emulation(scenario if not lying else scenario_of(reported, truth, scenario.name), config)
        if not lying:
            runs["truth"] = result.to_dict()
        per = result.per_server or {}
        return np.array([[per.get(u, {}).get(s, 0) for s in truth.server_ids] for u in truth.user_ids], dtype=np.int64)

    placed = allocate(truth)
    result = audit(truth, placed, allocate=_Replay(allocate, truth, placed) if probe else None, factors=factors, claim_servers=claim_servers, time_limit=time_limit)
    return result, runs["truth"]


class _Replay:
    """``allocate`` that answers the truthful problem from the run already made."""

    def __init__(self, allocate, truth: Problem, placed: np.ndarray) -> None:
        self.allocate, self.truth, self.placed = allocate, truth, placed

    def __call__(self, reported: Problem) -> np.ndarray:
        return self.placed if reported is self.truth else self.allocate(reported)


#: a liar's true tasks must exceed its truthful ones by this much (relative) to count as a
#: gain in the offline audit (the LP's float noise)
GAIN_TOL = 1e-6


def offline_misreports(scenario: Scenario, notion: str, factors: tuple[float, ...] = (2.0,), claim_servers: bool = True) -> list[dict[str, Any]]:
    """Strategy-proofness of the offline oracle of ``notion`` (model/lp_filling.py,
    divisible tasks), probed by each user's lies in turn: its demand times each factor (it
    then holds f true tasks in each reported one), or a claim of every server. A claim
    changes only the unit the scheduler counts the liar's tasks in (h_i does not depend on
    constraints, M_i does: Wang et al. fig. 2b); the liar's tasks still run only where it
    can (it declines the rest), so the lie is the liar's unit scaled, which the LP takes as
    its weight scaled the same way (s_i = n_i / (u_i w_i)). Every lie tried is returned
    with the liar's true tasks, truthful and lying, and whether it gained."""
    from dgdrf.model.lp_filling import progressive_filling_lp, units

    truth = Problem.from_scenario(scenario)
    honest = progressive_filling_lp(truth, notion).tasks
    out: list[dict[str, Any]] = []
    for i, uid in enumerate(truth.user_ids):
        lies: list[tuple[str, Problem, float]] = []
        for f in factors:
            demand = truth.demand.copy()
            demand[i] = demand[i] * f
            lies.append((f"demand x{f:g}", replace(truth, demand=demand), f))
        if claim_servers and not truth.eligible[i].all():
            claimed = truth.eligible.copy()
            claimed[i] = True
            u_true, u_lie = units(truth, notion)[i], units(replace(truth, eligible=claimed), notion)[i]
            weight = truth.weight.copy()
            weight[i] = weight[i] * (u_lie / u_true if u_true > 0 else 1.0)
            lies.append(("claims every server", replace(truth, weight=weight), 1.0))
        for name, lying, per_task in lies:
            got = progressive_filling_lp(lying, notion).tasks[uid] * per_task
            out.append({"user": uid, "lie": name, "truthful_tasks": honest[uid], "lying_tasks": got, "gains": got > honest[uid] * (1 + GAIN_TOL) + GAIN_TOL})
    return out
