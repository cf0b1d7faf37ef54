"""A static allocation problem: the plain arrays the papers' rules are written over.

Wang et al. (TSF), Kesidis et al. (PS-DSF) and the fairness audit all speak of machines m
with capacities C_mr, users i with one task demand d_ir, an eligibility p_im ∈ {0, 1} and a
weight w_i; an allocation is n_im, tasks of i on m. :class:`Problem` holds exactly that, built
once from a scenario (each user's first job stands for the user: the papers' users have one
demand), so that oracles, notions and the audit need not know scenarios, ledgers or actors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dgdrf.model.scenario import Scenario


@dataclass(frozen=True, eq=False)
class Problem:
    """Servers x resources capacities, users x resources demands, users x servers
    eligibility, per-user weights; ids in the scenario's order."""

    server_ids: tuple[str, ...]
    user_ids: tuple[str, ...]
    capacity: np.ndarray  # (S, R)
    demand: np.ndarray  # (U, R)
    eligible: np.ndarray  # (U, S) bool
    weight: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (U,); empty: all 1

    def __post_init__(self) -> None:
        if self.weight.size == 0:
            object.__setattr__(self, "weight", np.ones(len(self.user_ids)))

    @property
    def total(self) -> np.ndarray:
        """Cluster capacity per resource."""
        return self.capacity.sum(axis=0)

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> Problem:
        """The scenario's servers and users; a user's demand and constraint are its first
        job's (a thesis user's own)."""
        servers = scenario.servers
        demand, rows = [], []
        for u in scenario.users:
            job = u.job_list[0]
            demand.append(job.demand)
            rows.append([job.constraint.admits(s.id, s.attribute_map) for s in servers])
        return cls(
            server_ids=tuple(s.id for s in servers),
            user_ids=tuple(u.id for u in scenario.users),
            capacity=scenario.capacity_matrix(),
            demand=np.asarray(demand, dtype=np.float64).reshape(len(scenario.users), len(scenario.resources)),
            eligible=np.asarray(rows, dtype=bool).reshape(len(scenario.users), len(servers)),
            weight=np.asarray([u.weight for u in scenario.users], dtype=np.float64),
        )


def tasks_per_server(capacity: np.ndarray, demand: np.ndarray, divisible: bool = False) -> np.ndarray:
    """users x servers: how many tasks of each user fit on each empty server,
    min over demanded resources of C_mr / d_ir (floored unless ``divisible``; Wang et al.
    §V-B1 counts h_i per machine, so 6 + 2 + 6 = 14 on their fig. 4)."""
    d = demand[:, None, :]
    c = capacity[None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(d > 0, c / np.where(d > 0, d, 1.0), np.inf).min(axis=2)
    per = np.where(np.isfinite(per), per, 0.0)  # a demand of all zeros counts nothing
    return per if divisible else np.floor(per + 1e-9)


def tasks_alone(problem: Problem, constrained: bool, divisible: bool = False) -> np.ndarray:
    """Per user: tasks it runs with the whole cluster to itself. Constraints removed:
    h_i of TSF (Wang et al. §V-B); kept: M_i of CDRF (App. B-C)."""
    per = tasks_per_server(problem.capacity, problem.demand, divisible)
    if constrained:
        per = per * problem.eligible
    return per.sum(axis=1)
