"""Exact offline oracles: progressive filling as ORACLES.md defines DRF.

"Repeatedly give one task to the user with the lowest share whose next task still fits
somewhere (first-fit over servers in id order), skipping users whose task fits nowhere,
until nobody fits. Ties go to the lower user id." The share is the global dominant share
(eq. 3.3) for DRF, or the weighted sum of resource shares for asset fairness (thesis
2.1.2). These are pure functions: the emulation's results are checked against them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.scenario import Scenario


@dataclass(frozen=True)
class OracleResult:
    """Tasks per user, per (user, server), the final shares and the allocation order."""

    tasks: dict[str, int]
    placement: dict[str, dict[str, int]]
    shares: dict[str, float]
    order: list[tuple[str, str]]


def _ledger_for(scenario: Scenario) -> AllocationLedger:
    ledger = AllocationLedger(len(scenario.resources))
    ledger.reserve(len(scenario.servers), len(scenario.users))
    for s in scenario.servers:
        ledger.add_server(s.id, s.capacity)
    for u in scenario.users:
        ledger.add_user(u.id, u.demand)
    return ledger


def progressive_filling(
    scenario: Scenario,
    fairness: str = "drf",
    server_choice: str = "first-fit",
    initial_tasks: Mapping[str, Sequence[tuple[str, int]]] | None = None,
    asset_weights: Sequence[float] | None = None,
    max_steps: int = 10_000_000,
) -> OracleResult:
    """Run DRF (or asset fairness) to saturation on ``scenario``.

    ``fairness``: "drf" uses G_i (eq. 3.3); "asset" uses sum_r w_r A_ir / C_r with
    ``asset_weights`` (default all 1). ``server_choice``: "first-fit" or "best-fit"
    (DRFH heuristic). ``initial_tasks`` pre-places tasks: user -> [(server, count)].
    """
    ledger = _ledger_for(scenario)
    if initial_tasks:
        for uid, placements in initial_tasks.items():
            for sid, count in placements:
                for _ in range(count):
                    ledger.allocate(ledger.user_index[uid], ledger.server_index[sid], check=False)
    if fairness == "drf":
        per_task = ledger.task_share
    elif fairness == "asset":
        w = np.ones(ledger.m) if asset_weights is None else np.asarray(asset_weights, dtype=np.float64)
        per_task = (ledger.demand / ledger.total * w).sum(axis=1)
    else:
        raise ValueError(f"unknown fairness {fairness!r}")
    choose = ledger.first_fit if server_choice == "first-fit" else ledger.best_fit
    order: list[tuple[str, str]] = []
    for _ in range(max_steps):
        eligible = ledger.fits_anywhere()
        if not eligible.any():
            break
        if fairness == "drf":
            user = ledger.lowest_share_user(eligible)
        else:
            idx = np.flatnonzero(eligible)
            s = ledger.tasks[idx] * per_task[idx]
            user = int(idx[np.argmin(s)])
        assert user is not None  # eligible.any()
        server = choose(user)
        assert server is not None  # the user fits somewhere
        ledger.allocate(user, server)
        order.append((ledger.user_ids[user], ledger.server_ids[server]))
    shares = ledger.shares()
    return OracleResult(
        tasks={u: int(ledger.tasks[i]) for i, u in enumerate(ledger.user_ids)},
        placement={u: {s: int(ledger.placed[i, j]) for j, s in enumerate(ledger.server_ids) if ledger.placed[i, j]} for i, u in enumerate(ledger.user_ids)},
        shares={u: float(shares[i]) for i, u in enumerate(ledger.user_ids)},
        order=order,
    )


def ddrf_rounds(
    shares: Mapping[str, float],
    demand: Mapping[str, float],
    neighbours: Mapping[str, Sequence[str]],
    capacity: float,
    strict: bool = True,
    max_rounds: int = 100_000,
) -> dict[str, float]:
    """DDRF's allocation rule (thesis eq. 3.8) on one pooled resource, in synchronous
    rounds: every node whose user's allocation is below each of its neighbours' (as they
    stood at the start of the round; ``strict=False``: no higher, as alg. 5 writes it)
    gives its user one more task of size ``demand``, while the pool has room (nodes in id
    order within a round).
    Returns each user's final allocation. The thesis's example (3.2, figs. 3.1-3.2) uses
    it to show that the result depends on the graph (ORACLES.md example 4)."""
    alloc = dict(shares)
    used = sum(alloc.values())
    for _ in range(max_rounds):
        seen = dict(alloc)
        moved = False
        for node in sorted(alloc):
            below = (seen[node] < seen[n] if strict else seen[node] <= seen[n] for n in neighbours[node])
            if all(below) and used + demand[node] <= capacity + 1e-9:
                alloc[node] += demand[node]
                used += demand[node]
                moved = True
        if not moved:
            break
    return alloc
