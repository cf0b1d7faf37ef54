"""An allocation ledger: who holds how many tasks where, and what is left (thesis 3.1).

The same bookkeeping serves three owners, each with its own instance and its own
knowledge: the Collector (global truth), a centralized scheduler (what it learned from
registrations and its own decisions) and the offline oracles. Users and servers can be
added at any time (a scheduler learns of them from messages).

Per-task dominant share d_i = max_r D_ir / C_r, so G_i = n_i * d_i (eq. 3.3 with 3.7),
where n_i is i's number of running tasks. A fit matrix (users x servers) is kept up to
date incrementally: servers only lose capacity while tasks never finish, so one
allocation changes one column.

Growth is amortized so that tens of thousands of servers cost linear time: the arrays
live in over-allocated buffers that double when full (``capacity``, ``fit``, ... are
views of their filled part), server ids are kept in natural order by binary insertion
of cached keys, and the cluster totals and task shares are recomputed only when read
after a change. Per user the number of servers its next task fits on is kept, so
:meth:`AllocationLedger.fits_anywhere` does not scan the fit matrix.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from dgdrf.model.resources import FIT_TOLERANCE, SHARE_TIE_TOLERANCE, natural_key

#: Rows (or columns) a buffer starts with; it doubles whenever it is full.
_MIN_ROOM = 16


def _room(needed: int, have: int) -> int:
    """Buffer length for ``needed`` entries: ``have`` while it suffices, else doubled."""
    return have if needed <= have else max(needed, 2 * have, _MIN_ROOM)


def _regrow(buf: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A zeroed buffer of ``shape`` holding ``buf``'s contents in its leading corner."""
    if buf.shape == shape:
        return buf
    new = np.zeros(shape, dtype=buf.dtype)
    new[tuple(slice(0, k) for k in buf.shape)] = buf
    return new


class AllocationLedger:
    """Capacities, usage, per-user task counts and the user x server fit matrix."""

    def __init__(self, n_resources: int) -> None:
        self.m = n_resources
        self.server_ids: list[str] = []
        self.server_index: dict[str, int] = {}
        self.user_ids: list[str] = []
        self.user_index: dict[str, int] = {}
        # buffers (rows/columns beyond the known users and servers stay zero)
        self._capacity_buf = np.zeros((0, n_resources))
        self._used_buf = np.zeros((0, n_resources))
        self._slack_buf = np.zeros((0, n_resources))
        self._demand_buf = np.zeros((0, n_resources))
        self._tasks_buf = np.zeros(0, dtype=np.int64)
        self._fit_count_buf = np.zeros(0, dtype=np.int64)  # per user: servers it fits on
        self._placed_buf = np.zeros((0, 0), dtype=np.int64)
        self._fit_buf = np.zeros((0, 0), dtype=bool)
        self._set_views()
        #: servers whose fit slack :meth:`retire` zeroed; the next :meth:`add_server`
        #: gives it back, as re-deriving every server's slack from its capacity always did
        # natural order of the servers: keys sorted, the matching indices, the array
        self._server_keys: list[tuple] = []
        self._order_list: list[int] = []
        self._order: np.ndarray | None = np.zeros(0, dtype=np.int64)
        self._user_keys: list[tuple] = []  # natural_key of every user id (DRF ties)
        # cluster totals and task shares, recomputed when read after a change
        self._total = np.zeros(n_resources)
        self._task_share = np.zeros(0)
        self._total_stale = False
        self._shares_stale = False

    def _set_views(self) -> None:
        n, u = len(self.server_ids), len(self.user_ids)
        self.capacity = self._capacity_buf[:n]
        self.used = self._used_buf[:n]
        self._slack = self._slack_buf[:n]
        self.demand = self._demand_buf[:u]
        self.tasks = self._tasks_buf[:u]  # running tasks per user
        self._fit_count = self._fit_count_buf[:u]
        self.placed = self._placed_buf[:u, :n]  # users x servers task counts
        self.fit = self._fit_buf[:u, :n]  # users x servers: next task fits?

    def _reserve_servers(self, n: int) -> None:
        room = _room(n, self._capacity_buf.shape[0])
        if room != self._capacity_buf.shape[0]:
            self._capacity_buf = _regrow(self._capacity_buf, (room, self.m))
            self._used_buf = _regrow(self._used_buf, (room, self.m))
            self._slack_buf = _regrow(self._slack_buf, (room, self.m))
        cols = _room(n, self._placed_buf.shape[1])
        if cols != self._placed_buf.shape[1]:
            self._placed_buf = _regrow(self._placed_buf, (self._placed_buf.shape[0], cols))
            self._fit_buf = _regrow(self._fit_buf, (self._fit_buf.shape[0], cols))

    def _reserve_users(self, u: int) -> None:
        room = _room(u, self._demand_buf.shape[0])
        if room != self._demand_buf.shape[0]:
            self._demand_buf = _regrow(self._demand_buf, (room, self.m))
            self._tasks_buf = _regrow(self._tasks_buf, (room,))
            self._fit_count_buf = _regrow(self._fit_count_buf, (room,))
        rows = _room(u, self._placed_buf.shape[0])
        if rows != self._placed_buf.shape[0]:
            self._placed_buf = _regrow(self._placed_buf, (rows, self._placed_buf.shape[1]))
            self._fit_buf = _regrow(self._fit_buf, (rows, self._fit_buf.shape[1]))

    def reserve(self, servers: int, users: int) -> None:
        """Make room for this many servers and users at once (an owner that knows its
        scenario up front then holds no spare room)."""
        self._reserve_servers(servers)
        self._reserve_users(users)
        self._set_views()

    # -- membership ---------------------------------------------------------------------
    def add_server(self, server_id: str, capacity: Sequence[float]) -> int:
        """Register a server (idempotent); returns its index."""
        if server_id in self.server_index:
            return self.server_index[server_id]
        cap = np.asarray(capacity, dtype=np.float64).reshape(self.m)
        idx = len(self.server_ids)
        self._reserve_servers(idx + 1)
        self.server_ids.append(server_id)
        self.server_index[server_id] = idx
        self._set_views()
        self.capacity[idx] = cap
        self._slack[idx] = FIT_TOLERANCE * np.maximum(cap, 1.0)
        col = np.all(self.demand <= cap + self._slack[idx], axis=1)
        self.fit[:, idx] = col
        self._fit_count += col
        self._total_stale = True
        key = natural_key(server_id)
        pos = bisect_right(self._server_keys, key)  # after equal keys: the earlier server first
        self._server_keys.insert(pos, key)
        self._order_list.insert(pos, idx)
        self._order = None
        return idx

    def add_user(self, user_id: str, demand: Sequence[float]) -> int:
        """Register a user (idempotent); returns its index."""
        if user_id in self.user_index:
            return self.user_index[user_id]
        d = np.asarray(demand, dtype=np.float64).reshape(self.m)
        idx = len(self.user_ids)
        self._reserve_users(idx + 1)
        self.user_ids.append(user_id)
        self.user_index[user_id] = idx
        self._user_keys.append(natural_key(user_id))
        self._set_views()
        self.demand[idx] = d
        row = np.all(d <= self.capacity - self.used + self._slack, axis=1)
        self.fit[idx] = row
        self._fit_count[idx] = np.count_nonzero(row)
        self._shares_stale = True
        return idx

    def _sync_shares(self) -> None:
        """Bring the cluster totals and the task shares d_i up to date."""
        if self._total_stale:
            self._total = self.capacity.sum(axis=0)
            self._total_stale = False
            self._shares_stale = True
        if self._shares_stale:
            safe = np.where(self._total > 0, self._total, 1.0)
            self._task_share = np.where(self._total > 0, self.demand / safe, 0.0).max(axis=1) if len(self.user_ids) else np.zeros(0)
            self._shares_stale = False

    # -- queries ------------------------------------------------------------------------
    @property
    def total(self) -> np.ndarray:
        """Cluster capacity C per resource, as of the last server that joined."""
        self._sync_shares()
        return self._total

    @property
    def task_share(self) -> np.ndarray:
        """d_i per user."""
        self._sync_shares()
        return self._task_share

    @property
    def order(self) -> np.ndarray:
        """Server indices in natural id order: "first fit" means first in this order,
        whatever order the servers were learned in."""
        if self._order is None:
            self._order = np.array(self._order_list, dtype=np.int64)
        return self._order

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
        return self._fit_count > 0

    def fits_on(self, user: int, server: int) -> bool:
        return bool(self.fit[user, server])

    def first_fit(self, user: int) -> int | None:
        """The first server in id order the user's next task fits on (thesis 4.1)."""
        if not self._fit_count[user]:
            return None
        order = self.order
        return int(order[int(np.argmax(self.fit[user][order]))])

    def best_fit(self, user: int) -> int | None:
        """DRFH best-fit (thesis 2.1.4): among servers the task fits on, minimise
        H(i, l) = || D_i / D_i1 - cbar_l / cbar_l1 ||_1 with cbar_l the remaining
        capacity. Normalising by the first resource fails when it is zero; then the
        vectors are normalised by their largest component instead (same ordering
        intent: match the shape of the demand to the shape of what is left)."""
        if not self._fit_count[user]:
            return None
        order = self.order
        candidates = order[self.fit[user][order]]  # in id order: ties to the lower id
        d = self.demand[user]
        d_norm = d / d[0] if d[0] > 0 else d / d.max()
        rem = np.maximum(self.capacity[candidates] - self.used[candidates], 0.0)
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
        keys = self._user_keys
        return int(min(tied, key=lambda i: keys[i]))

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
        """A server that left: its capacity shrinks to what it holds, so nothing more fits.
        The cluster totals keep counting its capacity until the next server joins."""
        self._sync_shares()
        self.capacity[server] = np.maximum(self.used[server], 0.0)
        self._slack[server] = 0.0  # for good: not even the fit tolerance is left
        self._fit_count -= self.fit[:, server]
        self.fit[:, server] = False

    def over_capacity(self, server: int) -> bool:
        return bool(np.any(self.used[server] > self.capacity[server] + self._slack[server]))

    def _refresh_column(self, server: int) -> None:
        free = self.capacity[server] - self.used[server] + self._slack[server]
        col = np.all(self.demand <= free, axis=1)
        self._fit_count -= self.fit[:, server]
        self._fit_count += col
        self.fit[:, server] = col
