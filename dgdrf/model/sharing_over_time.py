"""Sharing incentive over time: the audit's SI (model/audit.py; Wang et al. Def. 1) for
workloads whose tasks arrive and end.

The audit of a final allocation (dgdrf/auditing.py) applies only to a static scenario: with
jobs that arrive and finish, a run ends with nothing allocated. What SI asks of a dynamic
allocation is that a user who wants resources is never worse off than with its slice of
the cluster to itself. Our reading, measured over the run:

- a user is *active* while it has a task waiting or running;
- its *guarantee* at a moment is what its slice s_i = w_i / Σ_j w_j of every live server
  its next task's constraint admits would run of that task: g_i = Σ_m ⌊s_i per_im⌋
  whole tasks (per_im: divisible tasks of its demand on server m), as
  :func:`~dgdrf.model.audit.sharing_incentive` counts it, expressed as the dominant share
  g_i max_r d_ir / C_r (its running tasks may be of earlier jobs, of other demands, so
  what it holds is compared in dominant shares, not in tasks), or, if less, all it asks
  for: the dominant shares of its running tasks and of every task of its arrived jobs
  that waits (a user with one task left is owed one task, not its slice; one with
  nothing waiting is owed what it holds);
- it *holds* its global dominant share G_i (thesis eq. 3.3: the sum of its running
  tasks' dominant shares; unweighted);
- per user: what it held and what it was guaranteed, averaged over the time it was
  active; ``below``, the fraction of that time it held less than its guarantee (by more
  than :data:`TOLERANCE`, relatively): it waited for a task while holding less than its
  slice; and ``shortfall``, the part of its guaranteed resource-time it did not get,
  ∫ max(0, guarantee - held) dt / ∫ guarantee dt. (Whether the average holding reaches
  the average guarantee says nothing: for a user whose tasks never add up to its slice
  the guarantee equals its holding whenever it waits for nothing.) A non-preemptive
  scheduler cannot give a newcomer its slice until tasks end, and every placement takes
  a few message latencies, so some time below is expected of every policy, the
  centralized ones included: the figure is for comparing policies on one workload.

(The time a user *competes*, with a task waiting, is the time-averaged shares' span,
model/timeline.py. It is the wrong span here: a user of small tasks that never nears its
slice waits only while each task is placed, and is below its guarantee all of that time.)

Envy-freeness over time, which compares bundles of resources per server, is
model/envy_over_time.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dgdrf.model.problem import tasks_per_server

#: relative shortfall under which a holding counts as meeting its guarantee
TOLERANCE = 1e-9
#: slack of a floor over a ratio of floats (as model/audit.py)
FLOOR_SLACK = 1e-9


def guarantee_shares(capacity: np.ndarray, live: np.ndarray, demand: np.ndarray, eligible: np.ndarray, slices: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Per row of users (``demand``: their next tasks', ``eligible``: the servers their
    constraints admit, ``slices``: w_i / Σ_j w_j), the guarantee as a dominant share: the
    whole tasks its slice of every live server it may use runs, times one task's dominant
    share over the cluster total ``total``."""
    per = tasks_per_server(capacity, demand, divisible=True)  # (users, servers)
    whole = np.floor(per * slices[:, None] + FLOOR_SLACK) * (eligible & live[None, :])
    safe = np.where(total > 0, total, 1.0)
    one = np.where(total > 0, demand / safe, 0.0).max(axis=1) if demand.size else np.zeros(len(demand))
    return whole.sum(axis=1) * one


class SharingOverTime:
    """Integrates, per user, its held and guaranteed dominant shares over the time it is
    active, and the time it was below its guarantee."""

    def __init__(self, users: list[str], start: float) -> None:
        self.users = users
        n = len(users)
        self._last_t = start
        self._held = np.zeros(n)
        self._guarantee = np.zeros(n)
        self._active = np.zeros(n, dtype=bool)
        self._time = np.zeros(n)
        self._held_area = np.zeros(n)
        self._guarantee_area = np.zeros(n)
        self._below_time = np.zeros(n)
        self._short_area = np.zeros(n)

    def _integrate(self, until: float) -> tuple[np.ndarray, ...]:
        dt = max(0.0, until - self._last_t)
        c = self._active
        below = c & (self._held < self._guarantee * (1 - TOLERANCE))
        return (
            self._time + np.where(c, dt, 0.0),
            self._held_area + np.where(c, self._held * dt, 0.0),
            self._guarantee_area + np.where(c, self._guarantee * dt, 0.0),
            self._below_time + np.where(below, dt, 0.0),
            self._short_area + np.where(below, (self._guarantee - self._held) * dt, 0.0),
        )

    def changed(self, time: float, held: np.ndarray, guarantee: np.ndarray, active: np.ndarray) -> None:
        """From ``time`` on, each user holds ``held`` and is guaranteed ``guarantee``
        (dominant shares), and ``active`` (a mask) have a task waiting or running."""
        if time > self._last_t:
            self._time, self._held_area, self._guarantee_area, self._below_time, self._short_area = self._integrate(time)
            self._last_t = time
        self._held = np.array(held, dtype=np.float64)
        self._guarantee = np.array(guarantee, dtype=np.float64)
        self._active = np.array(active, dtype=bool)

    def result(self, end: float) -> dict[str, Any]:
        """Per user (that was ever active): ``held`` and ``guarantee`` averaged over the
        time it was active, ``below`` the fraction of that time it held less, and
        ``shortfall`` the part of its guaranteed resource-time it did not get; over users,
        ``most_below`` and ``most_shortfall`` (the largest of each) and
        ``users_ever_below``."""
        time, held, guarantee, below, short = self._integrate(end)
        per: dict[str, dict[str, float]] = {}
        for i, u in enumerate(self.users):
            if time[i] > 0:
                per[u] = {
                    "held": float(held[i] / time[i]), "guarantee": float(guarantee[i] / time[i]), "below": float(below[i] / time[i]),
                    "shortfall": float(short[i] / guarantee[i]) if guarantee[i] > 0 else 0.0,
                }
        return {
            "users": per,
            "most_below": max((v["below"] for v in per.values()), default=0.0),
            "most_shortfall": max((v["shortfall"] for v in per.values()), default=0.0),
            "users_ever_below": sorted(u for u, v in per.items() if v["below"] > 0),
        }
