"""An allocation ledger: who holds how many tasks where, and what is left (thesis 3.1).

The same bookkeeping serves three owners, each with its own instance and its own
knowledge: the Collector (global truth), a centralized scheduler (what it learned from
registrations and its own decisions) and the offline oracles. Users and servers can be
added at any time (a scheduler learns of them from messages).

Per-task dominant share d_i = max_r D_ir / C_r, so G_i = n_i * d_i (eq. 3.3 with 3.7),
where n_i is i's number of running tasks. A fit matrix (users x servers) is kept up to
date incrementally: servers only lose capacity while tasks never finish, so one
allocation changes one column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dgdrf.model.resources import FIT_TOLERANCE, SHARE_TIE_TOLERANCE, natural_key


class AllocationLedger:
    """Capacities, usage, per-user task counts and the user x server fit matrix."""

    def __init__(self, n_resources: int) -> None:
        self.m = n_resources
        self.server_ids: list[str] = []
        self.server_index: dict[str, int] = {}
        self.user_ids: list[str] = []
        self.user_index: dict[str, int] = {}
        self.capacity = np.zeros((0, n_resources))
        self.used = np.zeros((0, n_resources))
        self.demand = np.zeros((0, n_resources))
        self.tasks = np.zeros(0, dtype=np.int64)  # running tasks per user
        self.placed = np.zeros((0, 0), dtype=np.int64)  # users x servers task counts
        self.fit = np.zeros((0, 0), dtype=bool)  # users x servers: next task fits?
        self._slack = np.zeros((0, n_resources))
        self.total = np.zeros(n_resources)
        self.task_share = np.zeros(0)  # d_i
        #: server indices in natural id order: "first fit" means first in this order,
        #: whatever order the servers were learned in
        self.order = np.zeros(0, dtype=np.int64)
        self._rank = np.zeros(0, dtype=np.int64)

    # -- membership ---------------------------------------------------------------------
    def add_server(self, server_id: str, capacity: Sequence[float]) -> int:
        """Register a server (idempotent); returns its index."""
        if server_id in self.server_index:
            return self.server_index[server_id]
        cap = np.asarray(capacity, dtype=np.float64).reshape(1, self.m)
        idx = len(self.server_ids)
        self.server_ids.append(server_id)
        self.server_index[server_id] = idx
        self.capacity = np.vstack([self.capacity, cap])
        self.used = np.vstack([self.used, np.zeros((1, self.m))])
        self._slack = FIT_TOLERANCE * np.maximum(self.capacity, 1.0)
        self.total = self.capacity.sum(axis=0)
        self.placed = np.hstack([self.placed, np.zeros((len(self.user_ids), 1), dtype=np.int64)])
        col = np.all(self.demand <= cap + self._slack[idx], axis=1)
        self.fit = np.hstack([self.fit, col.reshape(-1, 1)])
        self._refresh_task_shares()
        self.order = np.array(sorted(range(len(self.server_ids)), key=lambda i: natural_key(self.server_ids[i])), dtype=np.int64)
        self._rank = np.empty_like(self.order)
        self._rank[self.order] = np.arange(len(self.order))
        return idx

    def add_user(self, user_id: str, demand: Sequence[float]) -> int:
        """Register a user (idempotent); returns its index."""
        if user_id in self.user_index:
            return self.user_index[user_id]
        d = np.asarray(demand, dtype=np.float64).reshape(1, self.m)
        idx = len(self.user_ids)
        self.user_ids.append(user_id)
        self.user_index[user_id] = idx
        self.demand = np.vstack([self.demand, d])
        self.tasks = np.append(self.tasks, 0)
        self.placed = np.vstack([self.placed, np.zeros((1, len(self.server_ids)), dtype=np.int64)])
        row = np.all(d <= self.capacity - self.used + self._slack, axis=1)
        self.fit = np.vstack([self.fit, row.reshape(1, -1)])
        self._refresh_task_shares()
        return idx

    def _refresh_task_shares(self) -> None:
        safe = np.where(self.total > 0, self.total, 1.0)
        self.task_share = np.where(self.total > 0, self.demand / safe, 0.0).max(axis=1) if len(self.user_ids) else np.zeros(0)

    # -- queries ------------------------------------------------------------------------
    @property
    def free(self) -> np.ndarray:
        return self.capacity - self.used

    def shares(self) -> np.ndarray:
        """Global dominant share G_i of every user (eq. 3.3)."""
        return self.tasks * self.task_share

    def share(self, user: int) -> float:
        return float(self.tasks[user] * self.task_share[user])

    def fits_anywhere(self) -> np.ndarray:
        """Per user: does its next task fit on at least one server?"""
        return self.fit.any(axis=1) if self.fit.size else np.zeros(len(self.user_ids), dtype=bool)

    def fits_on(self, user: int, server: int) -> bool:
        return bool(self.fit[user, server])

    def first_fit(self, user: int) -> int | None:
        """The first server in id order the user's next task fits on (thesis 4.1)."""
        row = self.fit[user][self.order]
        if not row.size:
            return None
        idx = int(np.argmax(row))
        return int(self.order[idx]) if row[idx] else None

    def best_fit(self, user: int) -> int | None:
        """DRFH best-fit (thesis 2.1.4): among servers the task fits on, minimise
        H(i, l) = || D_i / D_i1 - cbar_l / cbar_l1 ||_1 with cbar_l the remaining
        capacity. Normalising by the first resource fails when it is zero; then the
        vectors are normalised by their largest component instead (same ordering
        intent: match the shape of the demand to the shape of what is left)."""
        candidates = self.order[self.fit[user][self.order]]  # in id order: ties to the lower id
        if candidates.size == 0:
            return None
        d = self.demand[user]
        d_norm = d / d[0] if d[0] > 0 else d / d.max()
        rem = np.maximum(self.free[candidates], 0.0)
        first = rem[:, 0]
        scale = np.where(first > 0, first, rem.max(axis=1))
        scale = np.where(scale > 0, scale, 1.0)
        h = np.abs(d_norm - rem / scale[:, None]).sum(axis=1)
        return int(candidates[int(np.argmin(h))])  # argmin takes the first: the lower id

    def lowest_share_user(self, eligible: np.ndarray) -> int | None:
        """DRF choice among ``eligible`` users (bool mask): the lowest G_i, ties (within
        :data:`SHARE_TIE_TOLERANCE`) to the lower user id in natural order."""
        idx = np.flatnonzero(eligible)
        if idx.size == 0:
            return None
        s = self.shares()[idx]
        low = s.min()
        tied = idx[s <= low + SHARE_TIE_TOLERANCE * max(low, 1e-300)]
        if tied.size == 1:
            return int(tied[0])
        return int(min(tied, key=lambda i: natural_key(self.user_ids[i])))

    # -- updates ------------------------------------------------------------------------
    def allocate(self, user: int, server: int, check: bool = True) -> bool:
        """Place one task of ``user`` on ``server`` (eq. 3.2). With ``check`` a task that
        does not fit is refused (returns False) and nothing changes."""
        if check and not self.fit[user, server]:
            return False
        self.used[server] += self.demand[user]
        self.tasks[user] += 1
        self.placed[user, server] += 1
        self._refresh_column(server)
        return True

    def release(self, user: int, server: int) -> None:
        """Undo one task of ``user`` on ``server`` (a reservation that was not taken up)."""
        if self.placed[user, server] <= 0:
            raise ValueError(f"user {self.user_ids[user]} holds no task on {self.server_ids[server]}")
        self.used[server] -= self.demand[user]
        self.tasks[user] -= 1
        self.placed[user, server] -= 1
        self._refresh_column(server)

    def retire(self, server: int) -> None:
        """A server that left: its capacity shrinks to what it holds, so nothing more fits."""
        self.capacity[server] = np.maximum(self.used[server], 0.0)
        self._slack[server] = 0.0
        self.fit[:, server] = False

    def over_capacity(self, server: int) -> bool:
        return bool(np.any(self.used[server] > self.capacity[server] + self._slack[server]))

    def _refresh_column(self, server: int) -> None:
        free = self.capacity[server] - self.used[server] + self._slack[server]
        self.fit[:, server] = np.all(self.demand <= free, axis=1)
