"""An allocation ledger: who holds how many tasks where, and what is left (thesis 3.1).

The same bookkeeping serves three owners, each with its own instance and its own
knowledge: the Collector (global truth), a centralized scheduler (what it learned from
registrations and its own decisions) and the offline oracles. Users and servers can be
added at any time (a scheduler learns of them from messages).

Per-task dominant share d_i = max_r D_ir / C_r, so G_i = n_i * d_i (eq. 3.3 with 3.7),
where n_i is i's number of running tasks. A fit matrix (users x servers) is kept up to
date incrementally: one allocation (or one task ending, :meth:`release`) changes one
column.

Beyond the thesis (dgdrf/model/workload.py): a user's next task may change (a new job:
another demand, another placement constraint; none when it has nothing pending,
:meth:`set_task`), so its running tasks may have several demands, and G_i is then the sum
of their dominant shares (eq. 3.3 itself: sum over servers of max_r A_ilr / C_r, each of
i's tasks being a vector of one demand); a user's fit row holds only the servers its
next task's constraint admits; and a user may have a weight w_i, its share then counting
as G_i / w_i (weighted DRF, Ghodsi et al. §6, as Mesos's roles' weights). A user whose
tasks all have one demand and weight 1 is computed exactly as before, float for float.

Growth is amortized so that tens of thousands of servers cost linear time: the arrays
live in over-allocated buffers that double when full (``capacity``, ``fit``, ... are
views of their filled part), server ids are kept in natural order by binary insertion
of cached keys, and the cluster totals and task shares are recomputed only when read
after a change. Per user the number of servers its next task fits on is kept, so
:meth:`AllocationLedger.fits_anywhere` does not scan the fit matrix.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dgdrf.model.constraints import UNCONSTRAINED, Constraint
from dgdrf.model.gangs import PartSlots, pack
from dgdrf.model.resources import FIT_TOLERANCE, SHARE_TIE_TOLERANCE, natural_key
from dgdrf.model.workload import Part

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

    def __init__(self, n_resources: int, bundles: bool = False) -> None:
        self.m = n_resources
        #: whether :attr:`held` keeps every user's resources per server (users x servers x
        #: resources): what envy compares when demands differ from job to job
        #: (model/envy_over_time.py); off, it stays empty and costs nothing
        self.bundles = bundles
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
        self._row_changed_buf = np.zeros(0, dtype=np.int64)
        self._placed_buf = np.zeros((0, 0), dtype=np.int64)
        self._held_buf = np.zeros((0, 0, n_resources))
        self._fit_buf = np.zeros((0, 0), dtype=bool)
        self._weight_buf = np.ones(0)
        #: users x servers: may the user's next task run there (its constraint; False
        #: everywhere for a user with nothing pending); None while every user may go anywhere
        self._elig_buf: np.ndarray | None = None
        self._set_views()
        self._attributes: list[Mapping[str, Any]] = []  # per server
        self._constraints: list[Constraint] = []  # per user: its next task's
        self._idle: set[int] = set()  # users with nothing pending
        self._excluded: set[tuple[int, int]] = set()  # (user, server) declined (:meth:`exclude`)
        self._admit_rows: dict[Constraint, np.ndarray] = {}  # constraint -> servers it admits
        self.tenants: dict[int, str] = {}  # user -> tenant, for users that are a tenant's job stream
        #: users whose running tasks have more than one demand: demand -> how many run
        self._by_demand: dict[int, dict[tuple[float, ...], int]] = {}
        #: ... and what each of those users holds on each server (servers x resources)
        self._mixed_use: dict[int, np.ndarray] = {}
        #: users whose next task is an instance of a job of parts (model/gangs.py): its
        #: parts, and where first fit puts the whole instance now (None: it fits nowhere)
        self._gangs: dict[int, tuple[Part, ...]] = {}
        self._gang_slots: dict[int, list[int] | None] = {}
        self._weighted = False  # some user's weight is not 1
        self._retired: set[int] = set()  # servers that left (retire)
        #: each retired server's capacity when it left: the cluster totals keep counting it
        self._capacity_at_retire: dict[int, np.ndarray] = {}
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
        #: dominant shares of the demands counted, for the totals they were computed with
        self._dominant: dict[tuple[float, ...], float] = {}
        self._dominant_for: np.ndarray | None = None
        self._shares_stale = False
        #: counts changes of a user's next task (demand or constraint) and users added;
        #: with :attr:`row_changed_at`, a reader keeping per-user figures of them
        #: (model/notions.py RowSums) finds the rows to recompute
        self.rows_version = 0
        #: counts servers joining and leaving (a reader keeping per-server figures, such as
        #: model/notions.py RowSums, recomputes them when it changes: a server that leaves
        #: full keeps its capacity, and only its liveness tells)
        self.servers_version = 0

    def _set_views(self) -> None:
        n, u = len(self.server_ids), len(self.user_ids)
        self.capacity = self._capacity_buf[:n]
        self.used = self._used_buf[:n]
        self._slack = self._slack_buf[:n]
        self.demand = self._demand_buf[:u]
        self.tasks = self._tasks_buf[:u]  # running tasks per user
        self._fit_count = self._fit_count_buf[:u]
        #: per user: the :attr:`rows_version` at which its next task last changed
        self.row_changed_at = self._row_changed_buf[:u]
        self.placed = self._placed_buf[:u, :n]  # users x servers task counts
        #: users x servers x resources: what each user's running tasks hold on each server
        #: (kept only with ``bundles``)
        self.held = self._held_buf[:u, :n] if self.bundles else self._held_buf
        self.fit = self._fit_buf[:u, :n]  # users x servers: next task fits?
        self.weight = self._weight_buf[:u]
        self._elig = self._elig_buf[:u, :n] if self._elig_buf is not None else None

    def _reserve_servers(self, n: int) -> None:
        room = _room(n, self._capacity_buf.shape[0])
        if room != self._capacity_buf.shape[0]:
            self._capacity_buf = _regrow(self._capacity_buf, (room, self.m))
            self._used_buf = _regrow(self._used_buf, (room, self.m))
            self._slack_buf = _regrow(self._slack_buf, (room, self.m))
        cols = _room(n, self._placed_buf.shape[1])
        if cols != self._placed_buf.shape[1]:
            self._placed_buf = _regrow(self._placed_buf, (self._placed_buf.shape[0], cols))
            if self.bundles:
                self._held_buf = _regrow(self._held_buf, (self._held_buf.shape[0], cols, self.m))
            self._fit_buf = _regrow(self._fit_buf, (self._fit_buf.shape[0], cols))
            if self._elig_buf is not None:
                self._elig_buf = _regrow(self._elig_buf, (self._elig_buf.shape[0], cols))

    def _reserve_users(self, u: int) -> None:
        room = _room(u, self._demand_buf.shape[0])
        if room != self._demand_buf.shape[0]:
            self._demand_buf = _regrow(self._demand_buf, (room, self.m))
            self._tasks_buf = _regrow(self._tasks_buf, (room,))
            self._fit_count_buf = _regrow(self._fit_count_buf, (room,))
            self._row_changed_buf = _regrow(self._row_changed_buf, (room,))
            weights = np.ones(room)
            weights[: len(self._weight_buf)] = self._weight_buf
            self._weight_buf = weights
        rows = _room(u, self._placed_buf.shape[0])
        if rows != self._placed_buf.shape[0]:
            self._placed_buf = _regrow(self._placed_buf, (rows, self._placed_buf.shape[1]))
            if self.bundles:
                self._held_buf = _regrow(self._held_buf, (rows, self._held_buf.shape[1], self.m))
            self._fit_buf = _regrow(self._fit_buf, (rows, self._fit_buf.shape[1]))
            if self._elig_buf is not None:
                self._elig_buf = _regrow(self._elig_buf, (rows, self._elig_buf.shape[1]))

    def reserve(self, servers: int, users: int) -> None:
        """Make room for this many servers and users at once (an owner that knows its
        scenario up front then holds no spare room)."""
        self._reserve_servers(servers)
        self._reserve_users(users)
        self._set_views()

    # -- membership ---------------------------------------------------------------------
    def add_server(self, server_id: str, capacity: Sequence[float], attributes: Mapping[str, Any] | None = None) -> int:
        """Register a server (idempotent) with the attributes constraints match; returns
        its index."""
        if server_id in self.server_index:
            return self.server_index[server_id]
        cap = np.asarray(capacity, dtype=np.float64).reshape(self.m)
        idx = len(self.server_ids)
        self._reserve_servers(idx + 1)
        self.server_ids.append(server_id)
        self.server_index[server_id] = idx
        self.servers_version += 1
        self._attributes.append(dict(attributes or {}))
        self._set_views()
        self.capacity[idx] = cap
        self._slack[idx] = FIT_TOLERANCE * np.maximum(cap, 1.0)
        col = np.all(self.demand <= cap + self._slack[idx], axis=1)
        if self._elig is not None:
            self._elig[:, idx] = [self._admits(u, idx) for u in range(len(self.user_ids))]
            col &= self._elig[:, idx]
        self.fit[:, idx] = col
        self._fit_count += col
        self._total_stale = True
        key = natural_key(server_id)
        pos = bisect_right(self._server_keys, key)  # after equal keys: the earlier server first
        self._server_keys.insert(pos, key)
        self._order_list.insert(pos, idx)
        self._order = None
        if self._gangs:
            self._refresh_gangs()
        return idx

    def add_user(self, user_id: str, demand: Sequence[float], weight: float = 1.0, constraint: Constraint = UNCONSTRAINED) -> int:
        """Register a user (idempotent) whose next task has ``demand`` and ``constraint``,
        with weight ``weight``; returns its index."""
        if user_id in self.user_index:
            return self.user_index[user_id]
        d = np.asarray(demand, dtype=np.float64).reshape(self.m)
        idx = len(self.user_ids)
        self._reserve_users(idx + 1)
        self.user_ids.append(user_id)
        self.user_index[user_id] = idx
        self._user_keys.append(natural_key(user_id))
        self._constraints.append(constraint)
        self._set_views()
        self.demand[idx] = d
        if weight != 1.0:
            self.weight[idx] = weight
            self._weighted = True
        if not constraint.unconstrained:
            self._constrain()
        if self._elig is not None:
            self._elig[idx] = False if idx in self._idle else self._admit_row(constraint)
        self._refresh_row(idx)
        self._shares_stale = True
        self._row_changed(idx)
        return idx

    # -- what a user runs next (jobs) ------------------------------------------------------
    def _constrain(self) -> None:
        """Start keeping the eligibility matrix (the first constrained user)."""
        if self._elig_buf is None:
            self._elig_buf = np.ones(self._fit_buf.shape, dtype=bool)
            self._set_views()

    def _admit_row(self, constraint: Constraint) -> np.ndarray:
        """Per server: whether ``constraint`` admits it (cached per constraint until a
        server joins: a user's row is asked for at every task and every judgement)."""
        n = len(self.server_ids)
        row = self._admit_rows.get(constraint)
        if row is None or len(row) != n:
            row = self._admit_rows[constraint] = np.fromiter(
                (constraint.admits(self.server_ids[s], self._attributes[s]) for s in range(n)), dtype=bool, count=n
            )
        return row

    def _admits(self, user: int, server: int) -> bool:
        if user in self._idle:
            return False
        return self._constraints[user].admits(self.server_ids[server], self._attributes[server])

    def _refresh_row(self, user: int) -> None:
        if user in self._gangs:
            self._refresh_gang(user)
            return
        row = np.all(self.demand[user] <= self.capacity - self.used + self._slack, axis=1)
        if self._elig is not None:
            row &= self._elig[user]
        self.fit[user] = row
        self._fit_count[user] = np.count_nonzero(row)

    # -- instances of jobs of parts (model/gangs.py) ----------------------------------------
    def set_gang(self, user: int, parts: Sequence[Part] | None) -> None:
        """User ``user``'s next task is an instance of ``parts`` (None: a plain task, as
        :meth:`set_task` says). Its fit row then holds one server, the first task's, where
        the whole instance fits (first fit: :func:`~dgdrf.model.gangs.pack`), and none
        when it fits nowhere: every selector's "fits" and "first fit" mean the whole
        instance. Set its row's demand and constraint to the first part's first."""
        parts = tuple(parts) if parts else None
        if parts == self._gangs.get(user):
            return
        if parts is None:
            self._gangs.pop(user, None)
            self._gang_slots.pop(user, None)
        else:
            self._gangs[user] = parts
        self._row_changed(user)
        self._refresh_row(user)

    def gangs(self) -> dict[int, tuple[Part, ...]]:
        """Every user whose next task is an instance, with its parts (read-only)."""
        return self._gangs

    def admits(self, constraint: Constraint) -> np.ndarray:
        """Per server: whether ``constraint`` admits it (read-only)."""
        return self._admit_row(constraint)

    def gang_of(self, user: int) -> tuple[Part, ...] | None:
        """The parts of ``user``'s next instance (None: a plain task)."""
        return self._gangs.get(user)

    def gang_slots(self, user: int) -> list[int] | None:
        """Where the whole of ``user``'s next instance goes now, one server a task (parts
        in order, each part's tasks in a row); None when it fits nowhere."""
        return self._gang_slots.get(user)

    def _refresh_gang(self, user: int) -> None:
        slots = None
        if user not in self._idle and len(self.server_ids):
            banned = np.zeros(len(self.server_ids), dtype=bool)
            for u, s in self._excluded:
                if u == user:
                    banned[s] = True
            parts = [PartSlots(np.asarray(p.demand, dtype=np.float64), p.count, self._admit_row(p.constraint) & ~banned) for p in self._gangs[user]]
            slots = pack(self.capacity - self.used, self.capacity, self.order, parts)
        self._gang_slots[user] = slots
        self.fit[user] = False
        if slots is not None:
            self.fit[user, slots[0]] = True
        self._fit_count[user] = int(slots is not None)

    def _refresh_gangs(self) -> None:
        for user in self._gangs:
            self._refresh_gang(user)

    def set_weight(self, user: int, weight: float) -> None:
        """User ``user``'s weight w_i: its share counts as G_i / w_i."""
        if weight != self.weight[user]:
            self.weight[user] = weight
            self._weighted = self._weighted or weight != 1.0

    def set_task(self, user: int, demand: Sequence[float] | None, constraint: Constraint = UNCONSTRAINED) -> None:
        """User ``user``'s next task has ``demand`` and ``constraint``; None: it has
        nothing pending (it is in no fit row, so it is in no one's minimum). Its running
        tasks keep the demands they started with."""
        if demand is None:
            if user not in self._idle:
                self._idle.add(user)
                self._constrain()
                assert self._elig is not None
                self._elig[user] = False
                self.fit[user] = False
                self._fit_count[user] = 0
            return
        d = np.asarray(demand, dtype=np.float64).reshape(self.m)
        was_idle = user in self._idle
        self._idle.discard(user)
        changed = not np.array_equal(d, self.demand[user])
        if changed:
            if self.tasks[user]:
                self._keep_demands_apart(user)
            self.demand[user] = d
            self._shares_stale = True
            self._row_changed(user)
        if constraint != self._constraints[user] or was_idle:
            if constraint is not self._constraints[user]:
                self._row_changed(user)
            self._constraints[user] = constraint
            if not constraint.unconstrained or self._elig is not None:
                self._constrain()
                assert self._elig is not None
                self._elig[user] = self._admit_row(constraint)
        elif not changed:
            return
        self._refresh_row(user)

    def _row_changed(self, user: int) -> None:
        self.rows_version += 1
        self.row_changed_at[user] = self.rows_version

    def set_tenant(self, user: int, tenant: str) -> None:
        """``user`` is one job stream of ``tenant`` (UDRF: a user's jobs that compete
        apart, ranked by their tenant's share; model/notions.py ClassShare)."""
        self.tenants[user] = tenant

    def tenant_of(self, user: int) -> str:
        """The tenant ``user`` belongs to: its own id unless set."""
        return self.tenants.get(user) or self.user_ids[user]

    def server_attributes(self, server: int) -> Mapping[str, Any]:
        """The attributes ``server`` registered with (constraints match them)."""
        return self._attributes[server]

    def exclude(self, user: int, server: int) -> None:
        """The user's tasks do not go to ``server`` (it declined it), until its next task's
        constraint is set anew (:meth:`set_task` with another constraint)."""
        self._constrain()
        assert self._elig is not None
        self._elig[user, server] = False
        self._excluded.add((user, server))
        self._refresh_row(user)

    def has_task(self, user: int) -> bool:
        """Whether the user has a next task (it was not :meth:`set_task` to None)."""
        return user not in self._idle

    def live(self) -> np.ndarray:
        """Per server: whether it is still there (not retired: :meth:`retire`)."""
        mask = np.ones(len(self.server_ids), dtype=bool)
        if self._retired:
            mask[list(self._retired)] = False
        return mask

    def tasked(self) -> np.ndarray:
        """Per user: whether it has a next task (:meth:`has_task`)."""
        mask = np.ones(len(self.user_ids), dtype=bool)
        if self._idle:
            mask[list(self._idle)] = False
        return mask

    def _sync_shares(self) -> None:
        """Bring the cluster totals and the task shares d_i up to date."""
        if self._total_stale:
            capacity = self.capacity
            if self._capacity_at_retire:  # a server joined after some left: they still count
                capacity = capacity.copy()
                for server, cap in self._capacity_at_retire.items():
                    capacity[server] = cap
            self._total = capacity.sum(axis=0)
            self._total_stale = False
            self._shares_stale = True
        if self._shares_stale:
            safe = np.where(self._total > 0, self._total, 1.0)
            self._task_share = np.where(self._total > 0, self.demand / safe, 0.0).max(axis=1) if len(self.user_ids) else np.zeros(0)
            self._shares_stale = False

    # -- queries ------------------------------------------------------------------------
    @property
    def total(self) -> np.ndarray:
        """Cluster capacity C per resource: of every server that joined, those that left
        included (a departure changes no user's share; a server joining does)."""
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
        """Global dominant share of every user (eq. 3.3), divided by its weight."""
        s = self.tasks * self.task_share
        if self._by_demand:
            for u in self._by_demand:
                s[u] = self._varied_share(u)
        if self._weighted:
            s = s / self.weight
        return s

    def share(self, user: int) -> float:
        g = self._varied_share(user) if user in self._by_demand else float(self.tasks[user] * self.task_share[user])
        return g / float(self.weight[user]) if self._weighted else g

    def dominant_share(self, demand: Sequence[float] | np.ndarray) -> float:
        """max_r D_r / C_r of one task of ``demand`` (eq. 3.3 with 3.7), unweighted."""
        total = self.total
        safe = np.where(total > 0, total, 1.0)
        return float(np.where(total > 0, np.asarray(demand, dtype=np.float64) / safe, 0.0).max())

    def _varied_share(self, user: int) -> float:
        """G_i of a user whose running tasks have several demands: the sum of theirs."""
        return float(sum(n * self._dominant_of(d) for d, n in self._by_demand[user].items() if n))

    def _dominant_of(self, demand: tuple[float, ...]) -> float:
        """:meth:`dominant_share` of a demand the ledger counts, remembered until the
        cluster's totals change: the collector asks for every user's share at every
        allocation and end, and with jobs of many demands each ask repeated numpy's work
        for every running demand."""
        total = self.total
        if self._dominant_for is not total:
            self._dominant_for, self._dominant = total, {}
        share = self._dominant.get(demand)
        if share is None:
            share = self._dominant[demand] = self.dominant_share(demand)
        return share

    def mixed_use(self) -> dict[int, np.ndarray]:
        """The users whose running tasks differ in demand (jobs of several demands, the
        parts of an instance), each with what it holds on each server (servers x
        resources); every other user holds ``placed`` x its ``demand``."""
        return {u: self._held_by(u) for u in self._mixed_use}

    def _held_by(self, user: int) -> np.ndarray:
        """What a user of :meth:`mixed_use` holds per server (grown as servers join)."""
        held = self._mixed_use[user]
        n = len(self.server_ids)
        if len(held) < n:
            held = self._mixed_use[user] = np.vstack([held, np.zeros((n - len(held), self.m))])
        return held

    def usage(self) -> np.ndarray:
        """users x resources: what each user's running tasks hold, A_ir summed over servers."""
        use = self.tasks[:, None] * self.demand
        for u, counts in self._by_demand.items():
            use[u] = sum((n * np.asarray(d) for d, n in counts.items()), np.zeros(self.m))
        return use

    def eligibility(self) -> np.ndarray:
        """users x servers: whether the user's next task's constraint admits the server,
        whether or not it has one pending (the unit M_i of CDRF counts on it)."""
        if self._elig is None:
            return np.ones((len(self.user_ids), len(self.server_ids)), dtype=bool)
        elig = self._elig.copy()
        for u in self._idle:
            elig[u] = self._admit_row(self._constraints[u])
        for u, s in self._excluded:  # declined, but what the user claims (the units count on it)
            elig[u, s] = self._admit_row(self._constraints[u])[s]
        return elig

    def eligibility_rows(self, users: Sequence[int] | np.ndarray) -> np.ndarray:
        """len(users) x servers: the rows of :meth:`eligibility` for ``users`` alone."""
        if self._elig is None:
            return np.ones((len(users), len(self.server_ids)), dtype=bool)
        n = len(self.server_ids)
        out = np.empty((len(users), n), dtype=bool)
        for k, u in enumerate(users):
            out[k] = self._admit_row(self._constraints[u])
        return out

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
        return self.lowest_user(eligible, None)

    def lowest_user(self, eligible: np.ndarray, scores: np.ndarray | None) -> int | None:
        """The user among ``eligible`` with the lowest of ``scores`` (a fairness notion's,
        model/notions.py; None: G_i), ties as :meth:`lowest_share_user`'s."""
        idx = np.flatnonzero(eligible)
        if idx.size == 0:
            return None
        s = (self.shares() if scores is None else scores)[idx]
        low = s.min()
        tied = idx[s <= low + SHARE_TIE_TOLERANCE * max(low, 1e-300)]
        if tied.size == 1:
            return int(tied[0])
        keys = self._user_keys
        return int(min(tied, key=lambda i: keys[i]))

    # -- updates ------------------------------------------------------------------------
    def allocate(self, user: int, server: int, check: bool = True, demand: Sequence[float] | None = None) -> bool:
        """Place one task of ``user`` on ``server`` (eq. 3.2): its next task, or one of
        ``demand``. With ``check`` a task that does not fit is refused (returns False)
        and nothing changes."""
        if check and not self.fit[user, server]:
            return False
        d = self._task_demand(user, demand)
        self.used[server] += d
        self.tasks[user] += 1
        self.placed[user, server] += 1
        if self.bundles:
            self.held[user, server] += d
        if user in self._by_demand:
            key = tuple(d.tolist())
            self._by_demand[user][key] = self._by_demand[user].get(key, 0) + 1
            self._held_by(user)[server] += d
        self._refresh_column(server)
        return True

    def release(self, user: int, server: int, demand: Sequence[float] | None = None) -> None:
        """Undo one task of ``user`` on ``server``: a reservation that was not taken up,
        or a task that ended (of ``demand``, when not its next task's)."""
        if self.placed[user, server] <= 0:
            raise ValueError(f"user {self.user_ids[user]} holds no task on {self.server_ids[server]}")
        d = self._task_demand(user, demand)
        self.used[server] -= d
        if server in self._retired:
            self.capacity[server] = np.maximum(self.used[server], 0.0)  # a server gone stays full
        self.tasks[user] -= 1
        self.placed[user, server] -= 1
        if self.bundles:
            self.held[user, server] -= d
        if user in self._by_demand:
            key = tuple(d.tolist())
            left = self._by_demand[user].get(key, 0) - 1
            if left > 0:
                self._by_demand[user][key] = left
            else:
                self._by_demand[user].pop(key, None)
            self._held_by(user)[server] -= d
        self._refresh_column(server)

    def _task_demand(self, user: int, demand: Sequence[float] | None) -> np.ndarray:
        """The demand of a task of ``user`` being placed or released: its next task's
        unless given otherwise (then its running tasks' demands are kept apart)."""
        if demand is None:
            return self.demand[user]
        d = np.asarray(demand, dtype=np.float64).reshape(self.m)
        if not np.array_equal(d, self.demand[user]):
            self._keep_demands_apart(user)
        return d

    def _keep_demands_apart(self, user: int) -> None:
        """From now on count ``user``'s running tasks per demand (they have, or are about
        to have, more than one), starting with those of its next task's demand."""
        if user not in self._by_demand:
            self._by_demand[user] = {tuple(self.demand[user].tolist()): int(self.tasks[user])} if self.tasks[user] else {}
            self._mixed_use[user] = self.placed[user][:, None] * self.demand[user][None, :]
            self._shares_stale = True

    def retire(self, server: int) -> None:
        """A server that left: its capacity shrinks to what it holds, so nothing more fits.
        The cluster totals keep counting its capacity (:attr:`total`)."""
        self._sync_shares()
        if server in self._retired:
            return
        self._retired.add(server)
        self.servers_version += 1
        self._capacity_at_retire[server] = self.capacity[server].copy()
        self.capacity[server] = np.maximum(self.used[server], 0.0)
        self._slack[server] = 0.0  # for good: not even the fit tolerance is left
        self._fit_count -= self.fit[:, server]
        self.fit[:, server] = False
        if self._gangs:
            self._refresh_gangs()

    def over_capacity(self, server: int) -> bool:
        return bool(np.any(self.used[server] > self.capacity[server] + self._slack[server]))

    def _refresh_column(self, server: int) -> None:
        free = self.capacity[server] - self.used[server] + self._slack[server]
        col = np.all(self.demand <= free, axis=1)
        if self._elig is not None:
            col &= self._elig[:, server]
        self._fit_count -= self.fit[:, server]
        self._fit_count += col
        self.fit[:, server] = col
        if self._gangs:
            self._refresh_gangs()
