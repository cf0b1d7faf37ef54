"""What the measuring instrument knows of jobs: each user's workload mirrored from the
reports, each task's runs, each job's times.

The Collector (dgdrf/nodes/collector.py) feeds it the reports of users and servers: a
task taken (``submitted``, with its job and index), started (``allocated``), ended
(``finished``) or lost (``task_lost``, or its server retired). From them, and from the
scenario's arrival times, it knows every user's next task (the same rule as the user's:
:class:`~dgdrf.model.workload.UserWorkload`), which tasks run where, and at the end each
job's record (arrival, first start, finish, JCT = finish of its last task - arrival) and
each task's queueing delay (its start - its job's arrival). It also checks what the
papers' workloads must keep: a task starts only where its constraint allows, ends once
(resources freed exactly once), and every task of a finite job runs to completion
exactly once (a task that ended on a server which went down before its user heard so
is run again, and its first end is no completion: :meth:`JobTracker.completion_lost`).

Only users with jobs, weights or constraints are tracked (the thesis's users need none of
this; their next task is always the same). Times are the run's; records count them from
the start of allocation.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dgdrf.model.scenario import Scenario, UserSpec
from dgdrf.model.workload import JobSpec, Part, TaskRef, UserWorkload, arrival_time


@dataclass
class RunningTask:
    ref: TaskRef
    server: str
    started: float


@dataclass
class _Instance:
    """An instance of a job of parts (model/gangs.py), taken under task ids base ..
    base + size - 1: which of its tasks started (where, when) and ended."""

    ref: TaskRef
    parts: tuple[Part, ...]  # the part of each of its tasks, in task order
    started: dict[int, tuple[str, float]]
    ended: set[int]
    #: a task of it was lost with its server: all of it is pending again (its user aborts
    #: the rest), and it is no instance that ran whole
    lost: bool = False

    @property
    def size(self) -> int:
        return len(self.parts)


@dataclass
class _JobTimes:
    first_start: float | None = None
    finish: float | None = None
    finished: int = 0


class JobTracker:
    """Jobs, tasks and their times, from reports (see the module)."""

    def __init__(self, scenario: Scenario, start: float = 0.0, time_scale: float = 1.0, user_start: float = 0.0) -> None:
        self.start = start
        self.specs: dict[str, UserSpec] = {u.id: u for u in scenario.users if not u.classic}
        self.work: dict[str, UserWorkload] = {uid: UserWorkload(u.job_list) for uid, u in self.specs.items()}
        #: (user, job) -> when it arrives, in run time
        self.arrival_at: dict[tuple[str, int], float] = {(uid, j): arrival_time(spec.arrival, start, time_scale, user_start) for uid, u in self.specs.items() for j, spec in enumerate(u.job_list)}
        # the arrivals to come: (time, order, user, job), in each user's serving order
        self._arrivals = [(self.arrival_at[(uid, j)], k, uid, j) for k, (uid, j) in enumerate((uid, j) for uid in self.specs for _, j in self.work[uid].arrivals())]
        heapq.heapify(self._arrivals)
        self._finishing = 0  # running tasks whose job's tasks end
        self.taken: dict[tuple[str, int], TaskRef] = {}  # (user, task id) -> the task taken under it, not yet started
        self.last_submitted: dict[str, int] = {}  # user -> the highest task id reported submitted
        self.current: dict[str, int] = {}  # user -> the task id taken last and not started
        self.running: dict[tuple[str, int], RunningTask] = {}  # (user, task id) -> where it runs
        self.times: dict[tuple[str, int], _JobTimes] = {}
        self.task_start: dict[tuple[str, int, int], float] = {}  # (user, job, index) -> start of its run that finished / last run
        #: (user, job, index) -> (task id, server) of the run that completed it
        self.done_tasks: dict[tuple[str, int, int], tuple[int, str]] = {}
        self._finite_left = sum(1 for u in self.specs.values() for j in u.jobs if j.finite)
        self._endless = any(not j.finite for u in self.specs.values() for j in u.job_list)
        #: (user, job) -> (why, since when) of the jobs its user gave up: no server up could
        #: run them (model/fleet.py); they are no work left until taken up again
        self.given_up: dict[tuple[str, int], tuple[str, float]] = {}
        #: (user, job) -> (why, since when) of the jobs withdrawn with their users, which
        #: went down (:meth:`withdraw`), and those users
        self.withdrawn: dict[tuple[str, int], tuple[str, float]] = {}
        self.users_down: set[str] = set()
        #: instances of jobs of parts, by (user, first task id), and each task of one: its
        #: (user, task id) -> (user, first task id), the task's place in the instance
        self.instances: dict[tuple[str, int], _Instance] = {}
        self._member: dict[tuple[str, int], tuple[tuple[str, int], int]] = {}
        self._in_flight: set[tuple[str, int]] = set()  # instances with some tasks started, not all
        #: tasks of instances that ended before all of the instance started: (instance,
        #: what is wrong), judged at the end (:meth:`parts_missing`): an instance lost
        #: with a server that went down did run in part, and is no violation
        self._ended_early: list[tuple[tuple[str, int], float, str]] = []  # (instance, the end, what)
        #: whether no server up can run a job (the owner's knowledge of the servers; None:
        #: every job can run, as the scenario's servers all can)
        self.unrunnable: Callable[[JobSpec], bool] | None = None

    # -- arrivals -------------------------------------------------------------------------
    def advance(self, now: float) -> list[str]:
        """Let the jobs due by ``now`` arrive; the users whose next task may have changed."""
        changed = []
        while self._arrivals and self._arrivals[0][0] <= now:
            _, _, user, job = heapq.heappop(self._arrivals)
            self.work[user].arrive(job)
            changed.append(user)
        return changed

    def arrivals_left(self) -> bool:
        return bool(self._arrivals)

    # -- a user's next task ---------------------------------------------------------------
    def next_job(self, user: str) -> JobSpec | None:
        """The job of ``user``'s next task: the one taken and not started, else the next
        pending; None when nothing is pending. A job that no server up can run
        (:attr:`unrunnable`) is none: its user gives it up as soon as it hears that the
        last server that could run it left (model/fleet.py), and in between it competes
        for nothing."""
        if user in self.users_down:
            return None
        work = self.work[user]
        task_id = self.current.get(user)
        ref = self.taken.get((user, task_id)) if task_id is not None else None
        skip = self.unrunnable
        if ref is None or (skip is not None and skip(work.specs[ref.job])):
            ref = work.next_task(skip)
        return None if ref is None else work.specs[ref.job]

    def pending_demands(self, user: str) -> dict[tuple[float, ...], int]:
        """``user``'s tasks that wait, by demand: every task of its arrived jobs not yet
        started (taken or not; an endless job counts one). Empty for a user not tracked."""
        out: dict[tuple[float, ...], int] = {}
        work = self.work.get(user)
        if work is None:
            return out
        for state in work.jobs:
            n = state.pending()
            for part in state.spec.part_list if n else ():  # an instance waits with all its tasks
                key = tuple(part.demand)
                out[key] = out.get(key, 0) + n * part.count
        for (u, _), ref in self.taken.items():
            if u == user:
                for part in work.specs[ref.job].part_list:
                    key = tuple(part.demand)
                    out[key] = out.get(key, 0) + part.count
        return out

    # -- reports --------------------------------------------------------------------------
    def submitted(self, user: str, task_id: int, job: int, index: int) -> None:
        """``user`` took task ``index`` of its job ``job`` under ``task_id``."""
        if user not in self.work:
            return
        self.last_submitted[user] = max(task_id, self.last_submitted.get(user, -1))
        if (user, task_id) in self.taken or (user, task_id) in self.running:
            return
        work = self.work[user]
        if not 0 <= job < len(work.specs):
            return
        ref = TaskRef(job, index)
        # an earlier task taken and not started stays taken: its start may be on its way
        # (a network's reports from different processes arrive out of order), and one given
        # up is put back by its task_lost
        work.take_ref(ref)
        self.taken[(user, task_id)] = ref
        self.current[user] = task_id
        spec = work.specs[job]
        if spec.gang:
            parts = tuple(p for p in spec.parts for _ in range(p.count))
            self.instances[(user, task_id)] = _Instance(ref, parts, {}, set())
            for k in range(len(parts)):
                self._member[(user, task_id + k)] = ((user, task_id), k)

    def reported(self, user: str, task_id: int) -> bool:
        """Whether the user's "submitted" of task ``task_id`` has come (a user's task ids
        grow, and it reports each before the task can start; an instance's later tasks
        come with its first). Until it has, a start of the task cannot be told apart from
        a start of the user's other tasks."""
        return task_id <= self.last_submitted.get(user, -1) or (user, task_id) in self._member

    def instance_started(self, user: str, task_id: int) -> bool:
        """Whether some task of the instance ``task_id`` belongs to has started."""
        m = self._member.get((user, task_id))
        return m is not None and bool(self.instances[m[0]].started)

    def part_of(self, user: str, task_id: int) -> Part | None:
        """The part a task of an instance belongs to (None: not a task of an instance)."""
        m = self._member.get((user, task_id))
        return None if m is None else self.instances[m[0]].parts[m[1]]

    def started(self, user: str, task_id: int, server: str, time: float) -> TaskRef | None:
        """Task ``task_id`` of ``user`` started on ``server``; its reference (None: not a
        tracked task, or one started already)."""
        if (user, task_id) in self.running or user not in self.work:
            return None
        if (user, task_id) in self._member:
            return self._part_started(user, task_id, server, time)
        ref = self.taken.pop((user, task_id), None)
        if ref is None:
            # its "submitted" report has not come and will not (the collector holds a start
            # until it comes, nodes/collector.py, but its user went down): the user's next
            # task is taken for it, a guess
            ref = self.work[user].take()
            if ref is None:
                return None
        if self.current.get(user) == task_id:
            del self.current[user]
        self.running[(user, task_id)] = RunningTask(ref, server, time)
        self._finishing += self.work[user].specs[ref.job].finishing
        t = self.times.setdefault((user, ref.job), _JobTimes())
        if t.first_start is None:
            t.first_start = time
        self.task_start[(user, ref.job, ref.index)] = time
        return ref

    def _part_started(self, user: str, task_id: int, server: str, time: float) -> TaskRef | None:
        """A task of an instance started; the instance starts with its last task."""
        base, k = self._member[(user, task_id)]
        inst = self.instances[base]
        if k in inst.started:
            return None
        if not inst.started and not inst.lost:  # its first task: the instance is no longer only taken
            self.taken.pop(base, None)
            if self.current.get(user) == base[1]:
                del self.current[user]
            self._in_flight.add(base)
        inst.started[k] = (server, time)
        ref = inst.ref
        self.running[(user, task_id)] = RunningTask(ref, server, time)
        self._finishing += self.work[user].specs[ref.job].finishing
        if len(inst.started) == inst.size and not inst.lost:
            self._in_flight.discard(base)
            t = self.times.setdefault((user, ref.job), _JobTimes())
            if t.first_start is None:
                t.first_start = time
            self.task_start[(user, ref.job, ref.index)] = time
        return ref

    def instances_in_flight(self) -> bool:
        """Whether some instance has started some of its tasks and not yet all: the rest
        are on their way (ordered in the same decision), so the run is not over."""
        return bool(self._in_flight)

    def instance_counts(self) -> dict[str, dict[str, int]]:
        """Per user, per job of parts: its instances that ran whole (every task started)."""
        out: dict[str, dict[str, int]] = {}
        for (user, _), inst in self.instances.items():
            spec = self.work[user].specs[inst.ref.job]
            jobs = out.setdefault(user, {})
            jobs[spec.id] = jobs.get(spec.id, 0) + (len(inst.started) == inst.size and not inst.lost)
        return out

    def partial_instances(self) -> list[str]:
        """The instances that run now with some of their tasks and not all (at the end of
        a run: a gang held in part)."""
        out = []
        for (user, base), inst in self.instances.items():
            running = len(inst.started) - len(inst.ended)
            if 0 < len(inst.started) < inst.size and running > 0 and not inst.lost:
                spec = self.work[user].specs[inst.ref.job]
                out.append(f"instance {inst.ref.index} of job {spec.id!r} of {user} (tasks {base}-{base + inst.size - 1}) runs {running} of its {inst.size} tasks")
        return out

    def finished(self, user: str, task_id: int, time: float) -> tuple[RunningTask | None, str | None]:
        """Task ``task_id`` of ``user`` ended: what ran, and what is wrong if anything."""
        r = self.running.pop((user, task_id), None)
        if r is None:
            member = self._member.get((user, task_id))
            if member is not None and self.instances[member[0]].lost:
                return None, None  # its instance was lost (and it, freed) before it ended: its abort came late
            return None, f"task {task_id} of {user} ended but was not running (freed twice, or never started)"
        self._finishing -= self.work[user].specs[r.ref.job].finishing
        member = self._member.get((user, task_id))
        if member is not None:
            inst = self.instances[member[0]]
            inst.ended.add(member[1])
            if inst.lost:
                return r, None  # a task of an instance lost with a server: no completion
            if len(inst.started) < inst.size:
                spec = self.work[user].specs[r.ref.job]
                self._ended_early.append((member[0], time, f"t={time:.6f}: instance {r.ref.index} of job {spec.id!r} of {user} ran with a part missing: task {task_id} ended before all {inst.size} of its tasks started"))
                return r, None
            if len(inst.ended) < inst.size:
                return r, None  # the instance ends with its last task
        key = (user, r.ref.job, r.ref.index)
        t = self.times.setdefault((user, r.ref.job), _JobTimes())
        t.finished += 1
        spec = self.work[user].specs[r.ref.job]
        problem = None
        if spec.finite:
            if key in self.done_tasks:
                problem = f"task {r.ref.index} of job {spec.id!r} of {user} ran to completion twice"
            self.done_tasks[key] = (task_id, r.server)
            if spec.tasks is not None and t.finished == spec.tasks:
                owed = self._owed(user, r.ref.job)
                t.finish = time
                if owed:
                    self._finite_left -= 1
                self.withdrawn.pop((user, r.ref.job), None)  # its last tasks ran on after its user went down: done
        return r, problem

    def parts_missing(self) -> list[str]:
        """Instances a task of which ended before all of them started, and that were not
        lost with a server (a gang that ran in part by the scheduler's doing)."""
        return [what for base, end, what in self._ended_early if not self.instances[base].lost and not self._started_whole_by(base, end)]

    def _started_whole_by(self, base: tuple[str, int], time: float) -> bool:
        """Whether every task of instance ``base`` had started by ``time`` (their reports'
        times: over a network a start's report can come after an end's from another
        server, so the order the reports came in does not tell)."""
        inst = self.instances[base]
        return len(inst.started) == inst.size and max(t for _, t in inst.started.values()) <= time

    def lost(self, user: str, task_id: int) -> RunningTask | None:
        """Task ``task_id`` of ``user`` will not finish (its server died): pending again.
        The running task it was, if it ran (its resources are the caller's to free). A
        task of an instance loses the instance: pending again once, whichever of its
        tasks is reported first (its user reports them all)."""
        member = self._member.get((user, task_id))
        if member is not None:
            return self._instance_task_lost(user, task_id, member[0])
        r = self.running.pop((user, task_id), None)
        if r is not None:
            self._finishing -= self.work[user].specs[r.ref.job].finishing
            self.work[user].put_back(r.ref)
            return r
        ref = self.taken.pop((user, task_id), None)
        if ref is not None:
            if self.current.get(user) == task_id:
                del self.current[user]
            self.work[user].put_back(ref)
        return None

    def _instance_task_lost(self, user: str, task_id: int, base: tuple[str, int]) -> RunningTask | None:
        inst = self.instances[base]
        r = self.running.pop((user, task_id), None)
        if r is not None:
            self._finishing -= self.work[user].specs[r.ref.job].finishing
        if not inst.lost:
            inst.lost = True
            self._in_flight.discard(base)
            if self.taken.pop(base, None) is not None and self.current.get(user) == base[1]:
                del self.current[user]
            self.work[user].put_back(inst.ref)
        return r

    def completion_lost(self, user: str, task_id: int, ref: TaskRef, server: str) -> bool:
        """Task ``task_id`` of ``user`` (task ``ref``) ended on ``server``, which went down
        before its user heard so: the TaskFinished was lost and the server died before
        sending it again. Nothing tells its user such a task from one that died with its
        server, so it counts it lost and runs it again (``task_lost``), as it must for the
        other. Its end reached no one who could use it: it is no completion. The task is
        pending again and its job, if that made it done, is not (its finish will be the
        run again's). False if ``ref`` did not complete as ``task_id`` on ``server``."""
        key = (user, ref.job, ref.index)
        if self.done_tasks.get(key) != (task_id, server):
            return False
        del self.done_tasks[key]
        t = self.times[(user, ref.job)]
        t.finished -= 1
        if t.finish is not None:
            t.finish = None
            if self._owed(user, ref.job):
                self._finite_left += 1
        self.work[user].put_back(ref)
        return True

    def give_up(self, user: str, job: int, task_id: int, why: str, time: float) -> bool:
        """``user`` gave its job ``job`` up (no server up can run it), with ``task_id``
        the task of it taken and not started, if any (pending again, aside with the rest);
        False for a repeated or malformed report."""
        work = self.work.get(user)
        if work is None or not 0 <= job < len(work.specs) or (user, job) in self.given_up or user in self.users_down:
            return False
        ref = self.taken.get((user, task_id))
        if ref is not None and ref.job == job:
            del self.taken[(user, task_id)]
            if self.current.get(user) == task_id:
                del self.current[user]
            work.put_back(ref)
        owed = self._owed(user, job)
        work.give_up(job)
        self.given_up[(user, job)] = (why, time)
        if owed:
            self._finite_left -= 1
        return True

    def resume(self, user: str, job: int) -> bool:
        """``user`` took its given-up job ``job`` up again (a server that can run it
        joined); False if it was not given up."""
        if self.given_up.pop((user, job), None) is None:
            return False
        self.work[user].resume(job)
        if self._owed(user, job):
            self._finite_left += 1
        return True

    def withdraw(self, user: str, why: str, time: float) -> bool:
        """``user`` went down (its process killed): what it had not yet started of its
        jobs, and its jobs to come, are withdrawn (nobody is left to place them), and its
        tasks that run, run on to their end. Its jobs given up are withdrawn with it.
        False for a user not tracked, or down already."""
        work = self.work.get(user)
        if work is None or user in self.users_down:
            return False
        for j, spec in enumerate(work.specs):
            if spec.finite and self.times.get((user, j), _JobTimes()).finish is not None:
                continue  # done
            if self._owed(user, j):
                self._finite_left -= 1
            self.given_up.pop((user, j), None)
            self.withdrawn[(user, j)] = (why, time)
        self.users_down.add(user)
        return True

    def _owed(self, user: str, job: int) -> bool:
        """Whether ``user``'s job ``job`` is work the run still owes: finite, not done,
        neither given up nor withdrawn (what :meth:`finite_work_left` counts)."""
        spec = self.work[user].specs[job]
        return spec.finite and self.times.get((user, job), _JobTimes()).finish is None and (user, job) not in self.given_up and (user, job) not in self.withdrawn

    def running_on(self, servers: set[str]) -> list[tuple[str, int]]:
        return [key for key, r in self.running.items() if r.server in servers]

    # -- what is left -----------------------------------------------------------------------
    def finite_work_left(self) -> bool:
        return self._finite_left > 0

    def endless(self) -> bool:
        return self._endless

    def finishing_running(self) -> bool:
        """A running task will end (its job's tasks have a duration)."""
        return self._finishing > 0

    # -- what it measured -----------------------------------------------------------------
    def job_records(self) -> list[dict[str, Any]]:
        """Per finite job: user, job, arrival, first start, finish (seconds from the start
        of allocation; None if it did not happen), tasks and JCT (finish - arrival)."""
        out = []
        for uid, u in self.specs.items():
            for j, spec in enumerate(u.job_list):
                if not spec.finite:
                    continue
                t = self.times.get((uid, j), _JobTimes())
                arrival = self.arrival_at[(uid, j)]
                out.append({
                    "user": uid, "job": spec.id, "arrival": arrival - self.start,
                    "first_start": None if t.first_start is None else t.first_start - self.start,
                    "finish": None if t.finish is None else t.finish - self.start,
                    "tasks": spec.tasks, "jct": None if t.finish is None else t.finish - arrival,
                })  # fmt: skip
        return out

    def queueing_delays(self) -> np.ndarray:
        """Per task of a finite job that ran: its (last) start - its job's arrival."""
        return np.array([start - self.arrival_at[(u, j)] for (u, j, _), start in self.task_start.items() if self.work[u].specs[j].finite], dtype=np.float64)

    def unfinished(self, owed_only: bool = False) -> Mapping[str, int]:
        """Per user, the tasks of its finite jobs that have not finished (``owed_only``:
        of the jobs the run still owes, leaving out those given up or withdrawn)."""
        out = {}
        for uid, u in self.specs.items():
            left = sum(self.tasks_left(uid, j) for j, spec in enumerate(u.job_list) if spec.finite and (not owed_only or self._owed(uid, j)))
            if left > 0:
                out[uid] = left
        return out

    def finite_aside(self) -> int:
        """How many finite jobs are given up or withdrawn: no one could run, or place, them."""
        return sum(self.work[u].specs[j].finite for u, j in {*self.given_up, *self.withdrawn})

    def tasks_left(self, user: str, job: int) -> int:
        """The tasks of ``user``'s finite job ``job`` that have not finished."""
        spec = self.work[user].specs[job]
        return (spec.tasks or 0) - self.times.get((user, job), _JobTimes()).finished

    def unrunnable_records(self) -> list[dict[str, Any]]:
        """Per job given up at the end: user, job, tasks left (None: endless), why and
        since when (seconds from the start of allocation), in scenario order."""
        return self._records(self.given_up)

    def withdrawn_records(self) -> list[dict[str, Any]]:
        """Per job withdrawn with its user (and not finished after all), as
        :meth:`unrunnable_records`."""
        return self._records(self.withdrawn)

    def _records(self, which: Mapping[tuple[str, int], tuple[str, float]]) -> list[dict[str, Any]]:
        out = []
        for uid, u in self.specs.items():
            for j, spec in enumerate(u.job_list):
                if (uid, j) in which:
                    why, since = which[(uid, j)]
                    out.append({"user": uid, "job": spec.id, "tasks_left": self.tasks_left(uid, j) if spec.finite else None, "why": why, "since": since - self.start})
        return out
