"""The Collector: the measuring instrument (not part of any protocol).

Nodes report events to it (write-only: no node ever reads it). In emulation it keeps the
global truth in an :class:`~dgdrf.model.ledger.AllocationLedger` built from the
scenario, and for every allocation it checks the invariants (no server over capacity, no
task allocated twice, every allocation accepted by its user exactly once) and whether it
was an error: the user did not hold the lowest global dominant share (eq. 3.3) among
users whose next task still fits somewhere (thesis 5.3), also with relative tolerances.
It detects saturation: the first moment no user's next task fits on any server, which
ends a run (thesis 1.5.5, run-time).

It also tells when a policy can no longer reach saturation by construction: under probes
(thesis 4.2, alg. 4) a task runs only on a server that holds a copy of it, and servers
report which copies they hold (``held``/``unheld``). A user whose current task is held
only by servers where it no longer fits will never be allocated again (capacity never
comes back: tasks never end), although its task may fit elsewhere; when every user whose
next task fits somewhere is in that state, the run is :meth:`stranded`.

With jobs (dgdrf/model/workload.py) tasks also end (``finished``), jobs arrive, and a
user's next task changes: a :class:`~dgdrf.model.job_tracker.JobTracker` mirrors each
such user's workload from the reports, and the ledger's row of the user follows its next
task (its demand, its constraint; none when it has nothing pending), so errors, fits and
shares are judged on what the user competes with now. Shares are weighted (G_i / w_i),
which for weight 1 is the thesis's share. A run ends when the stop rules
(nodes/stop_rules.py) say so: drained or saturated at the event that makes it so. With
finite jobs, or ``sample_every``, a :class:`~dgdrf.model.timeline.Timeline` integrates the
shares and samples them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dgdrf.errors import ProtocolError
from dgdrf.log import get_logger
from dgdrf.model.job_tracker import JobTracker
from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.notions import DominantShare, FairnessNotion
from dgdrf.model.resources import SHARE_TIE_TOLERANCE
from dgdrf.model.scenario import Scenario, ServerSpec
from dgdrf.model.envy_over_time import EnvyOverTime
from dgdrf.model.fleet import runs_on
from dgdrf.model.gangs import packs_on
from dgdrf.model.workload import JobSpec, TaskRef
from dgdrf.model.sharing_over_time import SharingOverTime, guarantee_shares
from dgdrf.model.timeline import Timeline
from dgdrf.nodes.stop_rules import final_reason

#: Seconds between samples of shares and utilisation when a run's tasks end (jobs) and
#: ``sample_every`` is not given.
DEFAULT_SAMPLE_EVERY_S = 10.0
#: Relative distances from the minimum share under which an allocation is not an error.
ERROR_TOLERANCES = (0.01, 0.05, 0.10, 0.15)
#: The exact error count still tolerates float noise between equal shares.
ERROR_LEVELS = (("exact", SHARE_TIE_TOLERANCE), *((f"{t:.2f}", t) for t in ERROR_TOLERANCES))

#: Every kind of event a node reports (``Actor.report``). Network mode's collector takes
#: no other (a forged report of a new kind would add a key to the result's ``events``);
#: tests/test_authorisation.py checks that every policy reports only these.
REPORT_KINDS = frozenset({
    "submitted", "accepted", "allocated", "held", "unheld",  # handled: the global truth
    "bad_message", "unhandled", "task_overdue", "lowest_user_skipped", "proposal_expired",
    "retransmitted", "unexpected_accept", "allocate_rejected", "walk_lost", "declined",
    "repeated_start", "rejected", "task_lost", "withdrawn", "stray_allocation",
    "finished",  # handled: a task ended
    "given_up", "resumed",  # handled: a job no server up can run, aside and back again (model/fleet.py)
    "gang_reserved", "gang_released",  # handled: an instance of a job of parts reserved whole, and a reservation given back
    "aborted",  # handled: a task of an instance lost with a server, stopped on its own server
    "gang_overdue", "gang_packed", "gang_hold_lapsed", "gang_commit_failed",  # a distributed try at an instance: too slow, packed on the rooms its walk saw, a hold given back unasked, a commit without room
})  # fmt: skip
#: Most tasks of one user the collector keeps track of before they are allocated (reported
#: submitted or accepted). A user has one task on its way at a time, a few with losses;
#: more can only be forged reports (network mode), which are counted and ignored so they
#: cannot grow the instrument's memory.
MAX_OPEN_TASKS_PER_USER = 256
log = get_logger("dgdrf.collector")


def exceeds_minimum(share: float, low: float, tolerance: float = SHARE_TIE_TOLERANCE) -> bool:
    """Whether an allocation to a user of share ``share`` errs against the lowest share
    ``low`` it is judged against (thesis 5.3): relatively above it by more than
    ``tolerance`` (:meth:`Collector.excess_over_minimum`; above a minimum of 0, any share)."""
    return share > low * (1 + tolerance) if low > 0 else share > 0


@dataclass
class AllocationRecord:
    time: float
    user: str
    task_id: int
    server: str
    share_before: float
    min_share: float  # lowest G among users whose next task fit somewhere, before

    @property
    def erred(self) -> bool:
        """Whether it is an error (the run's exact error ratio counts it)."""
        return exceeds_minimum(self.share_before, self.min_share)


@dataclass
class Collector:
    """Global truth, errors, invariants and saturation of one emulated run."""

    scenario: Scenario
    #: called once when the run ends by itself (drained or saturated: ``end_reason``)
    on_saturated: Callable[[], None] | None = None
    #: when allocation starts (job arrivals count from it), the run's time scale, and
    #: when users start (dgdrf/model/workload.py arrival_time)
    start: float = 0.0
    time_scale: float = 1.0
    user_start: float = 0.0
    #: seconds between samples of shares and utilisation (None: none; model/timeline.py)
    sample_every: float | None = None
    ledger: AllocationLedger = field(init=False)
    allocations: list[AllocationRecord] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    submitted_at: dict[tuple[str, int], float] = field(default_factory=dict)
    accepted: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    saturated_at: float | None = None
    #: when and why the run ended by itself (saturated or drained)
    ended_at: float | None = None
    end_reason: str | None = None
    last_allocation_at: float = 0.0
    current: dict[str, int] = field(default_factory=dict)  # user -> its task being placed
    holders: dict[tuple[str, int], set[str]] = field(default_factory=dict)  # (user, task) -> servers holding a copy
    #: called with each allocation as it is recorded, before the ledger counts it (a run's
    #: observers, dgdrf/world.py)
    on_allocation: Callable[[AllocationRecord], Any] | None = None
    #: a report of an unknown kind, or of a message no role handles ("unhandled"), is a
    #: bug in emulation and raises :class:`ProtocolError`; in network mode (not strict)
    #: it is counted, and the transport rejects unknown kinds before they get here
    strict: bool = False
    #: the share the run's policy ranks users by (model/notions.py; None: the dominant
    #: share, the thesis's), and whether it decides by server offers: then an allocation
    #: is an error when a user whose task fit on the same server had a lower score
    notion: FairnessNotion | None = None
    offers: bool = False
    #: which users the policy may place a task of now (Policy.placeable; None: every user
    #: whose next task fits somewhere)
    placeable: Callable[[AllocationLedger], np.ndarray] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.notion, DominantShare) and not self.offers:
            self.notion = None  # the thesis's own path, float for float
        bundles = self.scenario.finishing and EnvyOverTime.measurable(len(self.scenario.users), len(self.scenario.servers))  # envy over time
        self.ledger = AllocationLedger(len(self.scenario.resources), bundles=bundles)
        self.ledger.reserve(len(self.scenario.servers), len(self.scenario.users))  # no spare room
        for s in self.scenario.servers:
            self.ledger.add_server(s.id, s.capacity, s.attribute_map)
        self.jobs = JobTracker(self.scenario, self.start, self.time_scale, self.user_start)
        self._pending_stale: set[int] = set()  # users whose waiting tasks changed (sharing over time)
        for u in self.scenario.users:
            if u.classic:
                self.ledger.add_user(u.id, u.demand)
            else:
                i = self.ledger.add_user(u.id, u.demand, u.weight, u.job_list[0].constraint)
                self._follow(u.id, i)
        for u in self.scenario.users:
            if u.tenant:
                self.ledger.set_tenant(self.ledger.user_index[u.id], u.tenant)
        self._unrunnable_known: dict[object, bool] = {}
        self._allocated: set[tuple[str, int]] = set()
        self._part_starts: list[tuple[float, str, int, str]] = []  # the later tasks of instances: (time, user, task id, server)
        #: reservations of whole instances (jobs of parts): made, given back, and what those
        #: given back held, resource-seconds per resource
        self.reservations: dict[str, Any] = {"made": 0, "given_back": 0, "partial": 0, "held_resource_seconds": dict.fromkeys(self.scenario.resources, 0.0)}
        self._open: dict[str, set[int]] = {}  # user -> its tasks reported but not allocated
        #: the starts and ends (allocated, finished, aborted) of tasks whose user's
        #: "submitted" has not come yet: held until it does (:meth:`_held_back`)
        self._early: dict[tuple[str, int], list[tuple[str, str, float, dict[str, Any], AllocationRecord | None]]] = {}
        every = self.sample_every
        if every is None and self.scenario.finishing:
            every = DEFAULT_SAMPLE_EVERY_S
        self.timeline = Timeline(list(self.ledger.user_ids), list(self.scenario.resources), self.start, every) if every or not self.scenario.classic else None
        #: sharing incentive over time (model/sharing_over_time.py), where tasks end
        self.sharing = SharingOverTime(list(self.ledger.user_ids), self.start) if self.scenario.finishing else None
        #: envy-freeness over time (model/envy_over_time.py), where tasks end, at the samples
        self.envy = EnvyOverTime(list(self.ledger.user_ids), len(self.ledger.server_ids)) if self.scenario.finishing and self.timeline is not None and self.timeline.every else None
        self._guarantees = np.zeros(len(self.ledger.user_ids))
        self._guaranteed_at = np.full(len(self.ledger.user_ids), -1, dtype=np.int64)  # the rows_version each was computed at
        self._pending_share = np.zeros(len(self.ledger.user_ids))  # the dominant shares of each user's waiting tasks
        self._pending_tasks = np.zeros(len(self.ledger.user_ids), dtype=np.int64)  # how many wait (envy over time)
        self._pending_stale.update(range(len(self.ledger.user_ids)))

    def _follow(self, user: str, index: int | None = None) -> None:
        """The ledger's row of a user with jobs follows its next task."""
        i = self.ledger.user_index[user] if index is None else index
        self._pending_stale.add(i)
        job = self.jobs.next_job(user)
        if job is None:
            self.ledger.set_task(i, None)
        else:
            self.ledger.set_task(i, job.demand, job.constraint)
            self.ledger.set_gang(i, job.parts or None)  # an instance fits only whole

    def _advance(self, time: float) -> None:
        """Jobs due by ``time`` arrive."""
        arrived = self.jobs.advance(time)
        for user in arrived:
            self._follow(user)
        if arrived:
            self._shares_changed(time)  # who competes changed

    def shares(self) -> np.ndarray:
        """Every user's share under the run's notion (the dominant share by default)."""
        return self.ledger.shares() if self.notion is None else self.notion.shares(self.ledger)

    def _shares_changed(self, time: float) -> None:
        ledger = self.ledger
        if self.timeline is None:
            return  # (sharing over time is kept only where tasks end, which a timeline always is)
        shares = self.shares()
        self.timeline.changed(time, shares, ledger.tasked())
        if self.sharing is not None:
            dominant = shares if self.notion is None else ledger.shares()
            stale = np.flatnonzero(ledger.row_changed_at != self._guaranteed_at)
            if len(stale):  # the users whose next task changed since (or every user, after a server left)
                self._guarantees[stale] = guarantee_shares(ledger.capacity, ledger.live(), ledger.demand[stale], ledger.eligibility_rows(stale), ledger.weight[stale] / ledger.weight.sum(), ledger.total)
                self._guaranteed_at[stale] = ledger.row_changed_at[stale]
            self._refresh_pending()
            held = dominant * ledger.weight  # G_i: the sum of its running tasks' dominant shares (eq. 3.3)
            # all it asks for (its running and waiting tasks) caps what its slice guarantees
            self.sharing.changed(time, held, np.minimum(self._guarantees, held + self._pending_share), ledger.tasked() | (ledger.tasks > 0))

    def _refresh_pending(self) -> None:
        """Bring up to date what waits of the users whose waiting tasks changed: the
        dominant shares (sharing over time) and the number (envy over time) of their
        tasks of arrived jobs not yet started."""
        ledger = self.ledger
        for i in self._pending_stale:
            waiting = self.jobs.pending_demands(ledger.user_ids[i])
            self._pending_share[i] = sum(n * ledger.dominant_share(d) for d, n in waiting.items())
            self._pending_tasks[i] = sum(waiting.values())
        self._pending_stale.clear()

    def _track(self, user: str, task_id: int) -> bool:
        """Keep track of a task reported before its allocation, unless the user has
        :data:`MAX_OPEN_TASKS_PER_USER` already (then counted as ``bookkeeping_overflow``)."""
        if (user, task_id) in self._allocated:
            return True
        open_ = self._open.setdefault(user, set())
        if task_id not in open_ and len(open_) >= MAX_OPEN_TASKS_PER_USER:
            self.counters["bookkeeping_overflow"] = self.counters.get("bookkeeping_overflow", 0) + 1
            return False
        open_.add(task_id)
        return True

    # -- the reporter interface (runtime.actor.Reporter) -------------------------------
    def __call__(self, kind: str, source: str, time: float, fields: dict[str, Any]) -> None:
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            count = self.counters.get(kind)
            if count is None and (kind not in REPORT_KINDS or kind == "unhandled"):  # judged on its first report only
                what = f"a {fields.get('type')} message from {fields.get('src')} that none of its roles handles" if kind == "unhandled" else f"an unknown report kind {kind!r} (nodes/collector.py REPORT_KINDS)"
                if self.strict:
                    raise ProtocolError(f"t={time:.6f}: {source} reported {what}")
                log.warning("unexpected report", source=source, what=what, time=round(time, 6))  # the count is in the result's events
            self.counters[kind] = (count or 0) + 1
            return
        handler(source, time, fields)

    def check_initial_saturation(self, time: float = 0.0) -> None:
        """A scenario where nobody fits anywhere, and nothing is to come, is saturated
        before it starts."""
        self._judge(time)

    def _judge(self, time: float) -> None:
        """End the run if it is over by itself (nodes/stop_rules.py)."""
        if self.ended_at is None:
            reason = final_reason(self, time)
            if reason is not None:
                self.end(reason, time)

    def end(self, reason: str, time: float) -> None:
        """The run is over by itself (``drained`` or ``saturated``, the stop rules say)."""
        if self.ended_at is None:
            self.ended_at, self.end_reason = time, reason
            if reason == "saturated":
                self.saturated_at = time
            if self.on_saturated is not None:
                self.on_saturated()

    # -- the run's state, as the stop rules read it (nodes/stop_rules.py RunState) --------
    def finite_work_left(self, now: float) -> bool:
        self._advance(now)
        return self.jobs.finite_work_left()

    def endless(self) -> bool:
        return self.jobs.endless() or len(self.jobs.specs) < len(self.scenario.users)

    def room_may_return(self, now: float) -> bool:
        self._advance(now)
        return self.jobs.arrivals_left() or self.jobs.finishing_running()

    def fits_now(self) -> bool:
        """Some user's next task fits on some server now (one the policy may place), or an
        instance of a job of parts has tasks on their way (ordered with those of it that
        started)."""
        fits = self.ledger.fits_anywhere() if self.placeable is None else self.placeable(self.ledger)
        return bool(fits.any()) or self.jobs.instances_in_flight()

    def sample(self, now: float) -> None:
        """Take the samples due by ``now`` (model/timeline.py)."""
        if self.timeline is not None and self.timeline.due(now):
            self._advance(now)
            ledger = self.ledger
            used, cap = ledger.used.sum(axis=0), ledger.capacity.sum(axis=0)
            util = np.where(cap > 0, used / np.where(cap > 0, cap, 1.0), 0.0)
            self.timeline.sample(now, util, int(ledger.tasks.sum()))
            if self.envy is not None and self.envy.measured:
                self._refresh_pending()
                self.envy.sample(now, ledger.held, ledger.demand, ledger.eligibility() & ledger.live()[None, :], ledger.weight, ledger.tasked(), ledger.tasks + self._pending_tasks)

    def _on_submitted(self, user: str, time: float, f: dict[str, Any]) -> None:
        if not self._track(user, f["task_id"]):
            return
        self.submitted_at[(user, f["task_id"])] = time
        old = self.current.get(user)
        if old is not None:
            self.holders.pop((user, old), None)
        self.current[user] = f["task_id"]
        if "job" in f and user in self.jobs.work:
            self._advance(time)
            self.jobs.submitted(user, f["task_id"], int(f["job"]), int(f["index"]))
            self._follow(user)
            if self._early:
                self._release_early(user)

    def _held_back(self, kind: str, source: str, time: float, f: dict[str, Any]) -> bool:
        """Hold a report of a task's start or end that came before its user's "submitted"
        (a network's reports from different processes arrive in any order; each process's
        in its order): until that comes, which of the user's tasks it is cannot be known,
        and taking the user's next task for it would book one task twice and another
        never. Not for a user gone (its report may never come), nor beyond
        :data:`MAX_OPEN_TASKS_PER_USER` held for one user (forged reports)."""
        user, task_id = f.get("user"), f.get("task_id")
        if user not in self.jobs.work or user in self.jobs.users_down or not isinstance(task_id, int) or self.jobs.reported(user, task_id):
            return False
        if (user, task_id) not in self._early and sum(1 for u, _ in self._early if u == user) >= MAX_OPEN_TASKS_PER_USER:
            return False
        judged = None  # a start is judged against the shares as they stand when it comes, as any other
        u, s = self.ledger.user_index.get(user), self.ledger.server_index.get(source)
        if kind == "allocated" and u is not None and s is not None:
            self._advance(time)
            judged = self._judged(user, task_id, source, time, u, s)
        self._early.setdefault((user, task_id), []).append((kind, source, time, f, judged))
        return True

    def _release_early(self, user: str, every: bool = False) -> None:
        """Handle, in the order they came, ``user``'s reports held back whose task is now
        known (``every``: all of them, as when the user went down)."""
        ready = [key for key in self._early if key[0] == user and (every or self.jobs.reported(*key))]
        for key in ready:
            for kind, source, time, f, judged in self._early.pop(key):
                if kind == "allocated":
                    self._on_allocated(source, time, f, judged)
                else:
                    getattr(self, f"_on_{kind}")(source, time, f)

    def _on_held(self, server: str, time: float, f: dict[str, Any]) -> None:
        key = (f["user"], f["task_id"])
        if self.current.get(key[0]) == key[1]:
            self.holders.setdefault(key, set()).add(server)

    def _on_unheld(self, server: str, time: float, f: dict[str, Any]) -> None:
        held = self.holders.get((f["user"], f["task_id"]))
        if held is not None:
            held.discard(server)

    def stranded(self) -> list[str]:
        """The users whose next task fits somewhere but is held only by servers where it
        no longer fits (probes, thesis 4.2), when every such user is in that state and at
        least one is; else []. A task not yet held anywhere (on its way) is not stranded,
        nor one held by a server with room, whose proposal may be out."""
        ledger = self.ledger
        eligible = ledger.fits_anywhere()
        found: list[str] = []
        for i in np.flatnonzero(eligible):
            user = ledger.user_ids[i]
            held = self.holders.get((user, self.current.get(user, -1)))
            if not held:
                return []
            if any(ledger.fits_on(int(i), ledger.server_index[s]) for s in held if s in ledger.server_index):
                return []
            found.append(user)
        return found

    def _on_accepted(self, user: str, time: float, f: dict[str, Any]) -> None:
        if not self._track(user, f["task_id"]):
            return
        self.accepted.setdefault((user, f["task_id"]), []).append(f["server"])

    def _judged(self, user: str, task_id: int, server: str, time: float, u: int, s: int) -> AllocationRecord:
        """An allocation to ``user`` (its index ``u``) on ``server`` (index ``s``) as it is
        judged now: the user's share and the lowest share it competed with (thesis 5.3)."""
        shares, eligible = self.judged_against(s)
        g_min = float(shares[eligible].min()) if eligible.any() else float(shares[u])
        return AllocationRecord(time, user, task_id, server, float(shares[u]), g_min)

    def _on_allocated(self, server: str, time: float, f: dict[str, Any], judged: AllocationRecord | None = None) -> None:
        """A task started on ``server``: booked, checked (capacity, its constraint, not
        twice) and judged; ``judged``: as it was judged when its report came, for a start
        held back until its task was known (:meth:`_held_back`)."""
        if self._held_back("allocated", server, time, f):
            return
        user, task_id = f["user"], f["task_id"]
        key = (user, task_id)
        ledger = self.ledger
        if key in self._allocated:
            self.violations.append(f"t={time:.6f}: task {task_id} of {user} allocated twice (again on {server})")
            return
        self._allocated.add(key)
        open_ = self._open.get(user)
        if open_ is not None:
            open_.discard(task_id)
        self.holders.pop(key, None)
        if self.current.get(user) == task_id:
            self.current[user] = -1  # its next task is on its way
        u = ledger.user_index.get(user)
        s = ledger.server_index.get(server)
        if u is None or s is None:
            self.violations.append(f"t={time:.6f}: allocation of unknown user {user!r} or server {server!r}")
            return
        tracked = user in self.jobs.work
        if tracked:
            self._advance(time)
            if self.jobs.part_of(user, task_id) is not None and self.jobs.instance_started(user, task_id):
                self._part_allocated(user, task_id, server, time, u, s)  # the instance was judged with its first task
                return
        record = self._judged(user, task_id, server, time, u, s) if judged is None else judged
        if self.on_allocation is not None:
            self.on_allocation(record)  # before the ledger counts it: the shares the record compares
        if tracked:
            ref = self.jobs.started(user, task_id, server, time)
            if ref is None:
                self.violations.append(f"t={time:.6f}: task {task_id} of {user} started on {server} with nothing of its pending")
                ledger.allocate(u, s, check=False)
            else:
                spec = self.jobs.work[user].specs[ref.job]
                part = self.jobs.part_of(user, task_id)
                constraint, demand = (spec.constraint, spec.demand) if part is None else (part.constraint, part.demand)
                if not constraint.unconstrained and not constraint.admits(server, ledger.server_attributes(s)):
                    self.violations.append(f"t={time:.6f}: task {task_id} of {user} (job {spec.id!r}) on {server}, which its constraint does not admit")
                ledger.allocate(u, s, check=False, demand=demand)
                if part is not None:
                    self._part_starts.append((time, user, task_id, server))
                self._follow(user, u)
        else:
            ledger.allocate(u, s, check=False)
        if ledger.over_capacity(s):
            self.violations.append(f"t={time:.6f}: server {server} over capacity after task {task_id} of {user}: used {ledger.used[s].tolist()} > capacity {ledger.capacity[s].tolist()}")
        self.allocations.append(record)
        self.last_allocation_at = time
        t0 = self.submitted_at.pop(key, None)
        if t0 is not None:
            self.latencies.append(time - t0)
        self._shares_changed(time)
        self._judge(time)

    def _on_gang_reserved(self, source: str, time: float, f: dict[str, Any]) -> None:
        self.reservations["made"] += 1

    def _on_gang_released(self, source: str, time: float, f: dict[str, Any]) -> None:
        """A reservation of a whole instance given back (declined, expired, its server or
        user gone): what it held, resource-seconds, for nothing."""
        if f.get("whole", True):
            self.reservations["given_back"] += 1
        else:  # a distributed try abandoned with part of the instance held (policies/gang_desk.py)
            self.reservations["partial"] += 1
        held = f.get("held")
        if isinstance(held, list) and len(held) == len(self.scenario.resources):
            for name, x in zip(self.scenario.resources, held, strict=True):
                if isinstance(x, (int, float)) and math.isfinite(x) and x >= 0:
                    self.reservations["held_resource_seconds"][name] += float(x)

    def _part_allocated(self, user: str, task_id: int, server: str, time: float, u: int, s: int) -> None:
        """A later task of an instance started (the instance is one placement: judged and
        recorded with its first task): counted in the ledger, checked against its part."""
        ledger = self.ledger
        ref = self.jobs.started(user, task_id, server, time)
        part = self.jobs.part_of(user, task_id)
        assert part is not None  # the caller asked
        if ref is None:
            self.violations.append(f"t={time:.6f}: task {task_id} of {user} started on {server} with nothing of its pending")
        elif not part.constraint.unconstrained and not part.constraint.admits(server, ledger.server_attributes(s)):
            spec = self.jobs.work[user].specs[ref.job]
            self.violations.append(f"t={time:.6f}: task {task_id} of {user} (job {spec.id!r}) on {server}, which its part's constraint does not admit")
        ledger.allocate(u, s, check=False, demand=part.demand)
        self._part_starts.append((time, user, task_id, server))
        self._follow(user, u)
        if ledger.over_capacity(s):
            self.violations.append(f"t={time:.6f}: server {server} over capacity after task {task_id} of {user}: used {ledger.used[s].tolist()} > capacity {ledger.capacity[s].tolist()}")
        self._shares_changed(time)

    def _on_finished(self, server: str, time: float, f: dict[str, Any]) -> None:
        """A task ended on ``server``: its resources are free again."""
        if self._held_back("finished", server, time, f):
            return
        user, task_id = f["user"], f["task_id"]
        if user not in self.jobs.work:
            self.violations.append(f"t={time:.6f}: task {task_id} of {user} ended on {server}, but {user}'s tasks never end")
            return
        self._advance(time)
        r, problem = self.jobs.finished(user, task_id, time)
        if problem is not None:
            self.violations.append(f"t={time:.6f}: {problem}")
        if r is None:
            return
        if r.server != server:
            self.violations.append(f"t={time:.6f}: task {task_id} of {user} ended on {server} but ran on {r.server}")
        ledger = self.ledger
        u, s = ledger.user_index[user], ledger.server_index[r.server]
        ledger.release(u, s, self._demand_of(user, task_id, r.ref))
        self._follow(user, u)
        self._shares_changed(time)
        self._judge(time)

    def _on_given_up(self, user: str, time: float, f: dict[str, Any]) -> None:
        """``user`` gave a job up: no server up can run it (its reason ``why``); it is no
        work left, and blocks none of the user's later jobs, until ``resumed``."""
        if user not in self.jobs.work:
            return
        self._advance(time)
        if self.jobs.give_up(user, int(f["job"]), int(f.get("task_id", -1)), str(f.get("why", ""))[:500], time):
            self.counters["given_up"] = self.counters.get("given_up", 0) + 1
            self._follow(user)
            self._shares_changed(time)
            self._judge(time)

    def _on_resumed(self, user: str, time: float, f: dict[str, Any]) -> None:
        """``user`` took a job it had given up again (a server that can run it joined)."""
        if user not in self.jobs.work:
            return
        self._advance(time)
        if self.jobs.resume(user, int(f["job"])):
            self.counters["resumed"] = self.counters.get("resumed", 0) + 1
            self._follow(user)
            self._shares_changed(time)

    def able(self, spec: JobSpec) -> list[str]:
        """The servers up (in the collector's ledger) that can run job ``spec``: none, for
        a job rightly given up (model/fleet.py's rule)."""
        ledger = self.ledger
        live = ledger.live()
        up = [(sid, ledger.capacity[s], ledger.server_attributes(s)) for s, sid in enumerate(ledger.server_ids) if live[s]]
        able = [sid for sid, cap, attrs in up if any(runs_on(p.demand, p.constraint, sid, cap, attrs) for p in spec.part_list)]
        if spec.gang and able and not packs_on(spec.parts, up):
            return []  # each part can run somewhere, but no instance fits the servers up at once
        return able

    def _unrunnable(self, spec: JobSpec) -> bool:
        """Whether no server up can run ``spec`` (cached until servers leave or join)."""
        key = spec.parts if spec.gang else (spec.demand, spec.constraint)
        known = self._unrunnable_known.get(key)
        if known is None:
            known = self._unrunnable_known[key] = not self.able(spec)
        return known

    def _on_aborted(self, server: str, time: float, f: dict[str, Any]) -> None:
        """A task of an instance its user lost was stopped on ``server`` (AbortTask): its
        resources are free. Usually its user's task_lost freed it first; one that
        started after that (its order on its way) is freed now."""
        if self._held_back("aborted", server, time, f):
            return
        self.counters["aborted"] = self.counters.get("aborted", 0) + 1
        user = f["user"]
        if user in self.jobs.work and (user, f["task_id"]) in self.jobs.running:
            self._advance(time)
            self._lose(user, f["task_id"], time)
            self._judge(time)

    def _on_task_lost(self, user: str, time: float, f: dict[str, Any]) -> None:
        """A task of ``user`` will not finish where it went (its server died): pending
        again, its resources (if it ran) freed with the server."""
        self.counters["task_lost"] = self.counters.get("task_lost", 0) + 1
        if user in self.jobs.work:
            self._advance(time)
            self._completion_lost(user, f)
            self._lose(user, f["task_id"], time)

    def _completion_lost(self, user: str, f: dict[str, Any]) -> None:
        """The task lost may have ended already, on a server that went down before its
        user heard so (its TaskFinished lost, and no one left to send it again): its user
        runs it again, and its first end is no completion (model/job_tracker.py
        :meth:`~dgdrf.model.job_tracker.JobTracker.completion_lost`). Only for a server
        retired: one up would have told the user again."""
        server, job, index = f.get("server"), f.get("job"), f.get("index")
        if job is None or index is None or not isinstance(server, str):
            return
        s = self.ledger.server_index.get(server)
        if s is None or self.ledger.live()[s]:
            return
        self.jobs.completion_lost(user, int(f["task_id"]), TaskRef(int(job), int(index)), server)

    def _lose(self, user: str, task_id: int, time: float) -> None:
        r = self.jobs.lost(user, task_id)
        ledger = self.ledger
        u = ledger.user_index[user]
        if r is not None:
            ledger.release(u, ledger.server_index[r.server], self._demand_of(user, task_id, r.ref))
            self._shares_changed(time)
        self._follow(user, u)

    def _demand_of(self, user: str, task_id: int, ref: TaskRef) -> tuple[float, ...]:
        """What a task of ``user`` holds: its part's demand, or its job's."""
        part = self.jobs.part_of(user, task_id)
        return self.jobs.work[user].specs[ref.job].demand if part is None else part.demand

    def judged_against(self, server: int) -> tuple[np.ndarray, np.ndarray]:
        """What an allocation on ``server`` (its index) is judged against now: every user's
        share under the run's notion, and which users compete (their next task fits
        somewhere; with server offers, fits on that server, scored for it)."""
        ledger = self.ledger
        if self.notion is None:
            return ledger.shares(), ledger.fits_anywhere()
        if self.offers:
            return self.notion.scores(ledger, server), ledger.fit[:, server].copy()
        return self.notion.shares(ledger), ledger.fits_anywhere() if self.placeable is None else self.placeable(ledger)

    def lowest_competitor(self, server: int) -> int | None:
        """The user (index) an allocation on ``server`` should have gone to now: the lowest
        share among those it is judged against (the first, on a tie); None if none compete.
        For observers that ask why an allocation erred (bench/error_causes.py and others)."""
        shares, eligible = self.judged_against(server)
        if not eligible.any():
            return None
        idx = np.flatnonzero(eligible)
        return int(idx[np.argmin(shares[idx])])

    def excess_over_minimum(self) -> np.ndarray:
        """Per allocation: how far above the lowest eligible share its user's share was,
        relative to that minimum (inf when the minimum was 0 and the user's was not).
        An allocation is an error when this exceeds the tolerance (thesis 5.3)."""
        share = np.array([r.share_before for r in self.allocations])
        low = np.array([r.min_share for r in self.allocations])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(low > 0, (share - low) / np.where(low > 0, low, 1.0), np.where(share > 0, np.inf, 0.0))

    def retire_servers(self, servers: list[str], time: float) -> None:
        """Servers that went down (network mode): nothing fits on them any more, so
        saturation is judged on the remaining ones; the thesis's tasks on them stay
        counted, a job's are lost (pending again: their users run them elsewhere), and
        the copies of tasks they held are held no more (not stranded: their users ask
        for another server, :meth:`stranded`)."""
        gone = set(servers)
        for key in self.jobs.running_on(gone):
            self._lose(*key, time)
        for held in self.holders.values():  # a copy on a server gone is held by no one: its user asks again
            held -= gone
        for server in servers:
            s = self.ledger.server_index.get(server)
            if s is not None:
                self.ledger.retire(s)
        self.jobs.unrunnable = self._unrunnable  # every job could run while the scenario's servers were all up
        self.counters["servers_down"] = self.counters.get("servers_down", 0) + len(servers)
        self._servers_changed(time)

    def admit_servers(self, servers: Sequence[ServerSpec], time: float) -> None:
        """Servers that joined: tasks fit on them from now on, the cluster's capacity C
        counts them (model/ledger.py), and a job given up may run again (its user takes
        it up when it hears of them: ``resumed``)."""
        added = [s for s in servers if s.id not in self.ledger.server_index]
        for spec in added:
            self.ledger.add_server(spec.id, spec.capacity, spec.attribute_map)
        if not added:
            return
        self.counters["servers_up"] = self.counters.get("servers_up", 0) + len(added)
        self._servers_changed(time)

    def _servers_changed(self, time: float) -> None:
        """Servers left or joined: which jobs can run, every user's next runnable job and
        every guarantee (over the live servers) are judged anew."""
        self._unrunnable_known.clear()
        for user in self.jobs.work:
            self._follow(user)
        self._guaranteed_at[:] = -1
        self._shares_changed(time)
        self._judge(time)

    def retire_users(self, users: Sequence[str], time: float) -> None:
        """Users that went down (their processes killed): they compete no more, what they
        had not started of their jobs is withdrawn (model/job_tracker.py), and their tasks
        that run, run on and end as any other's."""
        ledger = self.ledger
        for user in users:
            u = ledger.user_index.get(user)
            if u is None:
                continue
            if user in self.jobs.work:
                self.jobs.withdraw(user, "its user went down", time)
                self._follow(user, u)
                self._release_early(user, every=True)  # their "submitted" may never come
            else:  # the thesis's user: it competes no more, its tasks stay
                ledger.set_task(u, None)
            self.current.pop(user, None)
            self.counters["users_down"] = self.counters.get("users_down", 0) + 1
        self._shares_changed(time)
        self._judge(time)

    def accepted_not_allocated_on(self, servers: set[str]) -> int:
        """Tasks whose users accepted a placement on one of ``servers`` and that never
        started: in network mode, the tasks lost with servers that died (each should be
        counted by its user as ``task_lost``)."""
        return sum(1 for key, where in self.accepted.items() if key not in self._allocated and any(s in servers for s in where))

    def finish(self) -> None:
        """End-of-run invariants: every allocated task was accepted exactly once by its
        user, for the server it runs on. Checked at the end because in network mode the
        user's and the server's reports may arrive in either order. Reports still held
        for a task whose user never said which it was are counted (``never_submitted``)."""
        if self._early:
            self.counters["never_submitted"] = self.counters.get("never_submitted", 0) + sum(len(v) for v in self._early.values())
        for time, user, task_id, server in [(r.time, r.user, r.task_id, r.server) for r in self.allocations] + self._part_starts:
            accepted = self.accepted.get((user, task_id), [])
            if accepted != [server]:
                self.violations.append(f"t={time:.6f}: task {task_id} of {user} allocated on {server} but accepted for {accepted}")
        for partial in self.jobs.partial_instances():
            self.violations.append(f"at the end: {partial} (a gang held in part)")
        self.violations.extend(self.jobs.parts_missing())
        for key, servers in self.accepted.items():
            if len(servers) > 1:
                self.violations.append(f"task {key[1]} of {key[0]} accepted {len(servers)} times: {servers}")
        if self.end_reason == "drained":
            for user, left in self.jobs.unfinished(owed_only=True).items():
                self.violations.append(f"drained, but {left} task(s) of {user}'s finite jobs did not run to completion")
        for user, job in self.jobs.given_up:
            spec = self.jobs.work[user].specs[job]
            able = self.able(spec)
            if able:
                self.violations.append(f"job {spec.id!r} of {user} given up as one no server can run, but {', '.join(able[:4])} (up) can run it")

    # -- what it measured (jobs) -------------------------------------------------------
    def sharing_over_time(self, end: float) -> dict[str, Any] | None:
        """Sharing incentive over the run (model/sharing_over_time.py; None where tasks
        never end)."""
        return None if self.sharing is None else self.sharing.result(end)

    def envy_over_time(self, end: float) -> dict[str, Any] | None:
        """Envy-freeness over the run (model/envy_over_time.py; None where tasks never end
        or nothing is sampled)."""
        return None if self.envy is None else self.envy.result(end)

    def time_averaged_shares(self, end: float) -> np.ndarray | None:
        """Each user's (weighted) share averaged over the run (None without a timeline)."""
        return None if self.timeline is None else self.timeline.averages(end)
