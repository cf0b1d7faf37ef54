"""Fairness notions: the share a policy ranks users by, one class a notion.

The thesis knows one share, the global dominant share G_i (eq. 3.3). The other papers rank
users by others, and a run is judged on the share its policy ranks by (its minimum, Gini,
Jain and error ratio), so each notion is a small object over an
:class:`~dgdrf.model.ledger.AllocationLedger` (whoever owns it: a scheduler with what it
learned, the Collector with the truth):

- ``shares(ledger)``: every user's share now, the run-level figure;
- ``scores(ledger, server)``: what an offer of ``server`` ranks users by (server offers,
  policies/offers.py); the shares themselves, except for the per-server notions of
  Kesidis et al., whose score depends on the server offered.

A notion is registered in :data:`NOTIONS` by name (docs/EXTENDING.md: a new notion is a
class here plus one line there).

Readings we chose where the papers leave room (docs/explanation/papers.md, docs/explanation/fairness.md):

- h_i and M_i count whole tasks per server (floor), as Wang et al.'s fig. 4 does
  (6 + 2 + 6 = 14); the offline oracle (model/lp_filling.py) uses the divisible count.
- A user's units (h_i, M_i) are those of its next task's demand and constraint; with jobs
  of several demands, n_i counts all of its running tasks. A user whose next task is an
  instance of a job of parts counts in whole instances: its unit is the tasks of the
  instances it runs alone, packed first fit (model/gangs.py), so its share is instances
  over instances alone.
- Offered a server (policies/offers.py), a user whose next task is an instance is one
  whose whole instance fits with its first task there (first fit puts the rest); the
  per-server notions (PS-DSF, rPS-DSF) score it on that server (another reading would
  take the server its largest part lands on; an offer is of one server, and the one the
  instance's first fit starts on is where the ledger says the instance fits).
- PS-DSF's run-level figure is K_n = sum over the servers n may use of K_nj (Kesidis et
  al. eq. 13); rPS-DSF ranks offers by the residual score but is judged on the same K_n
  (a residual at the end of a run means nothing).
- Share levels (Ru et al. alg. 1, line 12) lift to several servers against the cluster's
  totals: the Lev-th largest of A_ir / C_r (DIGEST 3e.3); level 1 is the dominant share.
- Wang et al.'s CMMF baselines ("CPU", "Mem": §VI-B, after Choosy) rank by the share of
  one resource alone, A_ir / C_r, whatever a task takes of the others.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np

from dgdrf.model.gangs import PartSlots, instances_alone
from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.problem import tasks_per_server
from dgdrf.model.workload import instance_size


class FairnessNotion(ABC):
    """The share a policy ranks users by."""

    #: registry name (``dgdrf oracle --notion``, the run table's "notion" column)
    name: ClassVar[str]
    #: what the share is called, in a sentence or a table header
    share_name: ClassVar[str]
    #: the result key the per-user shares go under (``shares`` is always the dominant share)
    result_key: ClassVar[str]
    #: the centralized policy whose allocations are this notion's reference (error ratio)
    reference: ClassVar[str]
    #: whether an offer's score depends on the server offered
    per_server: ClassVar[bool] = False

    @property
    def label(self) -> str:
        """How a run table names it."""
        return self.name

    @abstractmethod
    def shares(self, ledger: AllocationLedger) -> np.ndarray:
        """Every user's share now."""

    def scores(self, ledger: AllocationLedger, server: int) -> np.ndarray:
        """What an offer of ``server`` ranks users by (lowest first)."""
        return self.shares(ledger)

    def problem(self, resources: Sequence[str]) -> str | None:
        """Why this notion cannot rank the users of a scenario with ``resources`` (None: it can)."""
        return None


class DominantShare(FairnessNotion):
    """DRF's global dominant share G_i / w_i (thesis eq. 3.3; Wang et al. eq. 25 for DRFH)."""

    name = "drf"
    share_name = "global dominant share"
    result_key = "shares"
    reference = "drf"

    def shares(self, ledger: AllocationLedger) -> np.ndarray:
        return ledger.shares()


class RowSums:
    """Per user: the sum over the servers it may use of ``per_server(capacity, demand)``
    (users x servers), for its next task. A run asks at every placement and task end, and
    the whole matrix is users x servers (4,500 x 1,000 on Wang et al.'s trace), so the sums
    are kept: a row is recomputed only when its user's next task (demand or constraint)
    changed since (the ledger's ``row_changed_at``), all of them when the servers did
    (one joined or left: ``servers_version``; or a capacity changed).
    ``constrained=False`` sums over every server. A server that left (churn, a crash) is
    in no sum: its capacity shrinks to what it held when it left (model/ledger.py
    ``retire``), and a per-server ratio over that remnant made PS-DSF's K_n of a user
    1e14 after a departure in the acceptance sweep."""

    def __init__(self, per_server: Callable[[np.ndarray, np.ndarray], np.ndarray], constrained: bool) -> None:
        self.per_server = per_server
        self.constrained = constrained
        self._ledger: AllocationLedger | None = None
        self._version = -1  # the ledger's rows_version the sums are of
        self._servers_version = -1  # ... and its servers_version
        self._capacity = np.zeros((0, 0))
        self.sums = np.zeros(0)

    def _rows(self, ledger: AllocationLedger, users: np.ndarray) -> np.ndarray:
        per = self.per_server(ledger.capacity, ledger.demand[users])
        if self.constrained:
            per = per * ledger.eligibility_rows(users)
        return (per * ledger.live()[None, :]).sum(axis=1)  # a server that left counts for nobody

    def __call__(self, ledger: AllocationLedger) -> np.ndarray:
        if ledger is not self._ledger or ledger.servers_version != self._servers_version or not np.array_equal(ledger.capacity, self._capacity):
            self.sums = self._rows(ledger, np.arange(len(ledger.user_ids)))
            self._ledger, self._capacity, self._servers_version = ledger, ledger.capacity.copy(), ledger.servers_version
        elif ledger.rows_version != self._version:
            users = np.flatnonzero(ledger.row_changed_at > self._version)  # users added since among them
            sums = np.resize(self.sums, len(ledger.user_ids))
            sums[users] = self._rows(ledger, users)
            self.sums = sums
        self._version = ledger.rows_version
        return self.sums


class _UnitShare(FairnessNotion):
    """n_i / (u_i w_i): tasks over a per-user unit of tasks the user runs alone."""

    constrained: ClassVar[bool]

    def __init__(self) -> None:
        self._units = RowSums(tasks_per_server, self.constrained)
        self._instances: dict[tuple[object, int], int] = {}  # (parts, servers version) -> tasks of the instances alone

    def units(self, ledger: AllocationLedger) -> np.ndarray:
        """u_i per user, from the servers and next tasks the ledger knows (kept until
        they change: :class:`RowSums`). A user whose next task is an instance of a job of
        parts counts in whole instances: u_i is the tasks of the instances it runs alone
        (:func:`~dgdrf.model.gangs.instances_alone` times the instance's size), so its
        n_i / u_i is its instances over the instances it runs alone."""
        units = self._units(ledger)
        gangs = ledger.gangs()
        if not gangs:
            return units
        units = units.copy()
        live = ledger.live()
        for user, parts in gangs.items():
            key = (parts, ledger.servers_version)
            count = self._instances.get(key)
            if count is None:
                slots = [PartSlots(np.asarray(p.demand, dtype=np.float64), p.count, (ledger.admits(p.constraint) if self.constrained else np.ones(len(live), dtype=bool)) & live) for p in parts]
                count = self._instances[key] = instances_alone(slots, ledger.capacity, ledger.order) * instance_size(parts)
            units[user] = count
        return units

    def shares(self, ledger: AllocationLedger) -> np.ndarray:
        units = self.units(ledger) * ledger.weight
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(units > 0, ledger.tasks / np.where(units > 0, units, 1.0), np.where(ledger.tasks > 0, np.inf, 0.0))


class TaskShare(_UnitShare):
    """Task share n_i / (h_i w_i), h_i the tasks i runs on the whole cluster with its
    constraints removed, counted per server (Wang et al. §V-B, Def. 7)."""

    name = "tsf"
    share_name = "task share"
    result_key = "task_shares"
    reference = "tsf"
    constrained = False


class JobSlowdown(_UnitShare):
    """Constrained DRF's job slowdown n_i / (M_i w_i), M_i the tasks i runs alone with its
    constraints kept (Wang et al. App. B-C)."""

    name = "cdrf"
    share_name = "job slowdown"
    result_key = "slowdowns"
    reference = "cdrf"
    constrained = True


class ResourceShare(FairnessNotion):
    """Constrained max-min fairness on one resource (CMMF: Ghodsi et al.'s Choosy, the
    baselines "CPU" and "Mem" of Wang et al. §VI-B): a user's share of resource r,
    A_ir / (C_r w_i), the other resources not looked at. Offered a server, the lowest
    share it admits wins (policies/offers.py): Choosy's rule, a freed machine to the user
    with the least allocation among those it can run. Wang et al. say only that their
    "CPU" and "Mem" follow Choosy; our reading ranks by the share of the resource alone,
    whatever the user's tasks take of the others, as a slot scheduler does with its one
    resource. ``resource`` is an index: the scenario's first resource for "CPU" and its
    second for "Mem" (cpu and memory in every generated scenario)."""

    result_key = "resource_shares"
    #: which of the scenario's resources (its index), and what a scenario's name for it is
    resource: ClassVar[int]
    resource_name: ClassVar[str]

    def shares(self, ledger: AllocationLedger) -> np.ndarray:
        total = float(ledger.total[self.resource])
        if not len(ledger.user_ids):
            return np.zeros(0)
        used = ledger.usage()[:, self.resource]
        return (used / total if total > 0 else np.zeros_like(used)) / ledger.weight

    def problem(self, resources: Sequence[str]) -> str | None:
        if len(resources) <= self.resource:
            return f"{self.name} ranks users by their share of resource {self.resource + 1} ({self.resource_name}); the scenario has {len(resources)}"
        return None


class CpuShare(ResourceShare):
    """CMMF with respect to the CPU share: Wang et al.'s "CPU" (§VI-B)."""

    name = "cmmf-cpu"
    share_name = "CPU share"
    reference = "cmmf-cpu"
    resource = 0
    resource_name = "cpu"


class MemoryShare(ResourceShare):
    """CMMF with respect to the memory share: Wang et al.'s "Mem" (§VI-B)."""

    name = "cmmf-mem"
    share_name = "memory share"
    reference = "cmmf-mem"
    resource = 1
    resource_name = "memory"


class PerServerDominantShare(FairnessNotion):
    """PS-DSF (Kesidis et al. eq. 12): on server j, K_nj = x_n max_r (d_nr / c_jr) / φ_n
    with x_n n's tasks on all servers; the run-level figure K_n = sum_j K_nj δ_nj (eq. 13)."""

    name = "psdsf"
    share_name = "per-server dominant share"
    result_key = "psdsf_scores"
    reference = "psdsf"
    per_server = True

    def __init__(self) -> None:
        self._per_task_sums = RowSums(self._finite_per_task, constrained=True)

    @staticmethod
    def _per_task(demand: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        """users x servers (or users, for one server's row): max_r d_nr / c_r."""
        d = demand[:, None, :] if capacity.ndim == 2 else demand
        c = capacity[None, :, :] if capacity.ndim == 2 else capacity[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(d > 0, d / np.where(c > 0, c, 1.0), 0.0)
            ratio = np.where((d > 0) & (c <= 0), np.inf, ratio)
        return ratio.max(axis=-1)

    @classmethod
    def _finite_per_task(cls, capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
        """users x servers: max_r d_nr / c_jr, 0 where a server lacks a resource the task needs
        (K_n counts only the servers n could use)."""
        per = cls._per_task(demand, capacity)
        return np.where(np.isfinite(per), per, 0.0)

    def shares(self, ledger: AllocationLedger) -> np.ndarray:
        return ledger.tasks * self._per_task_sums(ledger) / ledger.weight

    def scores(self, ledger: AllocationLedger, server: int) -> np.ndarray:
        return self._score(ledger, ledger.capacity[server])

    @classmethod
    def _score(cls, ledger: AllocationLedger, capacity: np.ndarray) -> np.ndarray:
        """x_n max_r d_nr / (φ_n c_r) on one server's ``capacity`` (infinite where it
        lacks a resource the task needs; 0 for a user with no task, x_n = 0)."""
        per = cls._per_task(ledger.demand, capacity)
        with np.errstate(invalid="ignore"):
            return np.where(ledger.tasks > 0, ledger.tasks * per, 0.0) / ledger.weight


class ResidualPerServerDominantShare(PerServerDominantShare):
    """rPS-DSF (Kesidis et al. §4): the score on the server's residual capacity now,
    x_n max_{r: d_nr > 0} d_nr / (φ_n (c_jr - used_jr)); judged on PS-DSF's K_n."""

    name = "rpsdsf"
    share_name = "per-server dominant share (residual offers)"
    reference = "rpsdsf"

    def scores(self, ledger: AllocationLedger, server: int) -> np.ndarray:
        return self._score(ledger, np.maximum(ledger.capacity[server] - ledger.used[server], 0.0))


class ShareLevel(FairnessNotion):
    """Ru et al.'s share level (alg. 1, line 12): the Lev-th largest of a user's per-resource
    shares A_ir / C_r (over the cluster's totals), over its weight. Level 1 is the dominant
    share: :func:`notion` gives :class:`DominantShare` for it, float for float."""

    name = "drf-level"
    share_name = "share level"
    result_key = "level_shares"
    reference = "drf"

    def __init__(self, level: int) -> None:
        self.level = level

    @property
    def label(self) -> str:
        return f"drf level {self.level}"

    def shares(self, ledger: AllocationLedger) -> np.ndarray:
        total = ledger.total
        per = np.where(total > 0, ledger.usage() / np.where(total > 0, total, 1.0), 0.0)
        if not len(per):
            return np.zeros(0)
        return np.sort(per, axis=1)[:, -self.level] / ledger.weight


class ClassShare(FairnessNotion):
    """UDRF's share (Tahir et al. eq. 12): a user's largest share of any (machine class,
    resource) pair, s_u = max_{m,k} A^u_mk / c_mk, each class one pool (its servers'
    capacities summed; a server's class is its attribute ``class``, or its own id). A
    user's jobs on several classes compete apart as job streams of one tenant (the
    scenario's ``tenant``): each stream's share is its tenant's. ``own(ledger)`` is each
    stream's own share, by which UDRF picks among a tenant's jobs (DIGEST 4a: the job
    with the lowest own dominant share)."""

    name = "udrf"
    share_name = "share over machine classes"
    result_key = "class_shares"
    reference = "udrf"

    def __init__(self) -> None:
        self._key = -1
        self._class_of = np.zeros(0, dtype=np.int64)
        self._capacity = np.zeros((0, 0))

    def _classes(self, ledger: AllocationLedger) -> tuple[np.ndarray, np.ndarray]:
        """Each server's class index, and each class's capacity (cached per server count)."""
        n = len(ledger.server_ids)
        if n != self._key:
            labels = [str(ledger.server_attributes(s).get("class", ledger.server_ids[s])) for s in range(n)]
            names = list(dict.fromkeys(labels))
            self._class_of = np.array([names.index(c) for c in labels], dtype=np.int64)
            cap = np.zeros((len(names), ledger.m))
            np.add.at(cap, self._class_of, ledger.capacity)
            self._capacity, self._key = cap, n
        return self._class_of, self._capacity

    def _class_use(self, ledger: AllocationLedger, class_of: np.ndarray, classes: int) -> np.ndarray:
        """users x classes x resources: what each user holds in each class (exact for a
        user whose running tasks differ in demand: an instance's parts, jobs of several)."""
        per_class = np.zeros((len(ledger.user_ids), classes))
        np.add.at(per_class.T, class_of, ledger.placed.T)  # tasks per (user, class)
        use = per_class[:, :, None] * ledger.demand[:, None, :]
        for u, held in ledger.mixed_use().items():
            exact = np.zeros((classes, ledger.m))
            np.add.at(exact, class_of, held)
            use[u] = exact
        return use

    def own(self, ledger: AllocationLedger) -> np.ndarray:
        """Per user (job stream): max over (class, resource) of its own use / capacity."""
        class_of, cap = self._classes(ledger)
        use = self._class_use(ledger, class_of, len(cap))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(cap[None] > 0, use / np.where(cap[None] > 0, cap[None], 1.0), 0.0)
        return ratio.reshape(len(ledger.user_ids), -1).max(axis=1) if len(ledger.user_ids) else np.zeros(0)

    def shares(self, ledger: AllocationLedger) -> np.ndarray:
        class_of, cap = self._classes(ledger)
        n = len(ledger.user_ids)
        if not n:
            return np.zeros(0)
        tenants = [ledger.tenant_of(u) for u in range(n)]
        names = list(dict.fromkeys(tenants))
        index = np.array([names.index(t) for t in tenants], dtype=np.int64)
        use = np.zeros((len(names), len(cap), ledger.m))
        np.add.at(use, index, self._class_use(ledger, class_of, len(cap)))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(cap[None] > 0, use / np.where(cap[None] > 0, cap[None], 1.0), 0.0)
        return ratio.reshape(len(names), -1).max(axis=1)[index] / ledger.weight


#: the notions by name (``shares`` of ``drf`` is the thesis's own figure)
NOTIONS: dict[str, type[FairnessNotion]] = {
    cls.name: cls for cls in (DominantShare, TaskShare, JobSlowdown, PerServerDominantShare, ResidualPerServerDominantShare, ClassShare, CpuShare, MemoryShare)
}


def notion(name: str, level: int | None = None) -> FairnessNotion:
    """The notion called ``name`` (``drf`` with ``level`` 2 or 3: a share level)."""
    if name == "drf" and level not in (None, 1):
        return ShareLevel(int(level))
    return NOTIONS[name]()
