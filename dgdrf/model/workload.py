"""Jobs and the order a user's tasks are run in.

The thesis's user is one endless stream of identical tasks (alg. 3). Here a user has
*jobs*: a job has a demand vector, a number of tasks (or none: endless), a duration per
task (or none: its tasks run until the run ends, as the thesis's do), an arrival time
and a placement constraint (dgdrf/model/constraints.py). A job's tasks are all pending
from its arrival; the user competes while it has a pending task and leaves when all its
jobs are done. The thesis's user is the special case of one endless job arriving at 0
(:attr:`dgdrf.model.scenario.UserSpec.classic`).

A user submits one task at a time (alg. 3), and :class:`UserWorkload` says which: the
pending task of the earliest job in :func:`job_order` (arrival, then the scenario's
order), the lowest pending task index of that job first (a task lost with a crashed
server is pending again under its index, and so runs before the job's later ones). The
User actor and the Collector (which mirrors each user's workload from the reports, to
know each user's next task) use this one class, so they agree on it.

Times are *workload* seconds: the run divides a job's arrival and its tasks' durations
by the run's ``time_scale`` (a cluster runs an hour of trace in minutes), and a job's
arrival counts from the moment allocation starts (after the distributed policies'
warm-up), so every policy sees the same jobs at the same times relative to its first
allocation tick.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dgdrf.model.constraints import UNCONSTRAINED, Constraint
from dgdrf.model.distributions import Duration

#: the stream of the run's seed that job ``j`` of user ``i`` draws its durations from:
#: ``[seed, DURATION_STREAM, i, j]`` (independent of every other draw of the run, so a
#: job's tasks last as long under every policy)
DURATION_STREAM = 0xD0_2A71
#: durations of an endless job are drawn in chunks of this many tasks
_CHUNK = 256
#: the name of a short-form user's one job
MAIN_JOB = "main"


@dataclass(frozen=True)
class Part:
    """One part of a job of parts (model/gangs.py): ``count`` tasks of ``demand`` on the
    servers ``constraint`` admits, in every instance of the job."""

    demand: tuple[float, ...]
    count: int = 1
    constraint: Constraint = UNCONSTRAINED


def instance_size(parts: Sequence[Part] | None) -> int:
    """Tasks in one instance of ``parts`` (none: a plain task, 1)."""
    return sum(p.count for p in parts) if parts else 1


@dataclass(frozen=True)
class JobSpec:
    """One job: ``tasks`` tasks (None: endless) of ``demand``, each running for a draw of
    ``duration`` seconds (None: until the run ends), all pending from ``arrival``, on the
    servers ``constraint`` admits.

    A job of ``parts`` (a gang) runs *instances*: one instance is ``count`` tasks of every
    part, placed all at once or not at all, started together and ended together; its
    ``tasks`` count instances and its ``duration`` is an instance's. Its ``demand`` and
    ``constraint`` are then its first part's (what a reader of one demand a job sees)."""

    id: str
    demand: tuple[float, ...]
    tasks: int | None = None
    duration: Duration | None = None
    arrival: float = 0.0
    constraint: Constraint = UNCONSTRAINED
    parts: tuple[Part, ...] = ()

    @property
    def finite(self) -> bool:
        """Whether the job ends: a number of tasks that each finish."""
        return self.tasks is not None

    @property
    def finishing(self) -> bool:
        """Whether its tasks finish (and so give their resources back)."""
        return self.duration is not None

    @property
    def gang(self) -> bool:
        """Whether its tasks run as instances of parts, all or nothing."""
        return bool(self.parts)

    @property
    def part_list(self) -> tuple[Part, ...]:
        """Its parts; a plain job's one task is one part of one task."""
        return self.parts or (Part(self.demand, 1, self.constraint),)

    @property
    def instance_size(self) -> int:
        """Tasks in one instance (1 for a plain job)."""
        return instance_size(self.parts)


def arrival_time(arrival: float, start: float, time_scale: float, user_start: float) -> float:
    """When a job that arrives ``arrival`` workload seconds into the run becomes pending,
    in run time: from the start of allocation, divided by the time scale, not before the
    users start (the User actor and the collector's mirror both count it so)."""
    return max(user_start, start + arrival / time_scale)


def job_order(jobs: Sequence[JobSpec]) -> list[int]:
    """The indices of ``jobs`` in the order a user serves them: by arrival, ties in the
    scenario's order."""
    return sorted(range(len(jobs)), key=lambda j: (jobs[j].arrival, j))


@dataclass(frozen=True)
class TaskRef:
    """One task of a user's workload: its job's position in the user's jobs and its
    index in the job."""

    job: int
    index: int


@dataclass
class _JobState:
    spec: JobSpec
    arrived: bool = False
    next_new: int = 0  # the next index never taken yet
    again: list[int] = field(default_factory=list)  # indices lost, pending again (sorted)
    given_up: bool = False  # no server up can run it (model/fleet.py): its tasks wait aside

    def pending(self) -> int:
        """Tasks arrived and not taken (an endless job has always one more); none while
        the job is given up."""
        if not self.arrived or self.given_up:
            return 0
        if self.spec.tasks is None:
            return 1
        return self.spec.tasks - self.next_new + len(self.again)


class UserWorkload:
    """A user's jobs and which of their tasks are pending: arrived and not taken
    (submitted). What happens to a task after it is taken (it runs, ends) is not kept
    here: only whether it is pending again (:meth:`put_back`). Arrivals are told
    (:meth:`arrive`), not timed: the owner (the User actor, the Collector) knows its
    clock."""

    def __init__(self, jobs: Sequence[JobSpec]) -> None:
        self.specs = tuple(jobs)
        self.order = job_order(self.specs)
        self.jobs = [_JobState(spec) for spec in self.specs]

    # -- what is next ---------------------------------------------------------------------
    def next_task(self, skip: Callable[[JobSpec], bool] | None = None) -> TaskRef | None:
        """The task the user submits next, if one is pending (nothing is taken); passing
        over the jobs ``skip`` says no server can run (those its user is about to give up)."""
        for j in self.order:
            state = self.jobs[j]
            if state.pending() > 0 and (skip is None or not skip(state.spec)):
                return TaskRef(j, state.again[0] if state.again else state.next_new)
        return None

    def pending(self) -> bool:
        return self.next_task() is not None

    def arrivals(self) -> list[tuple[float, int]]:
        """(arrival, job) of every job, in serving order."""
        return [(self.specs[j].arrival, j) for j in self.order]

    # -- what happens to tasks -------------------------------------------------------------
    def arrive(self, job: int) -> None:
        self.jobs[job].arrived = True

    def take(self) -> TaskRef | None:
        """Take the next task (it is being submitted); None if nothing is pending."""
        ref = self.next_task()
        if ref is not None:
            self.take_ref(ref)
        return ref

    def take_ref(self, ref: TaskRef) -> None:
        """Take this particular task (a mirror told which task its user took)."""
        state = self.jobs[ref.job]
        if ref.index in state.again:
            state.again.remove(ref.index)
        elif ref.index >= state.next_new:
            state.next_new = ref.index + 1

    def give_up(self, job: int) -> None:
        """No server up can run ``job``: its tasks are pending no more (the user goes on
        with its later jobs), until :meth:`resume` (a server that can run it joined)."""
        self.jobs[job].given_up = True

    def resume(self, job: int) -> None:
        """``job``, given up, can run again: its tasks are pending again, in their place."""
        self.jobs[job].given_up = False

    def given_up(self) -> list[int]:
        """The jobs given up, in serving order."""
        return [j for j in self.order if self.jobs[j].given_up]

    def put_back(self, ref: TaskRef) -> None:
        """A task taken that will not finish where it went (its server died, before or
        after it started): pending again under its index."""
        state = self.jobs[ref.job]
        if state.spec.tasks is not None and ref.index not in state.again:
            state.again.append(ref.index)
            state.again.sort()


class Durations:
    """The durations of one user's tasks, drawn per job from the job's own stream of the
    run's seed (:data:`DURATION_STREAM`), in task-index order, and divided by the run's
    time scale: the same task lasts as long under every policy, and a task run again
    after a crash lasts as long as its first run would have."""

    def __init__(self, jobs: Sequence[JobSpec], seed: int, user_index: int, time_scale: float = 1.0) -> None:
        self.jobs = tuple(jobs)
        self.scale = time_scale
        self._rngs = [np.random.default_rng([seed, DURATION_STREAM, user_index, j]) for j in range(len(jobs))]
        self._drawn: list[np.ndarray] = [np.zeros(0) for _ in jobs]

    def of(self, ref: TaskRef) -> float:
        """Seconds task ``ref`` runs (0: until the run ends)."""
        spec = self.jobs[ref.job]
        if spec.duration is None:
            return 0.0
        drawn = self._drawn[ref.job]
        if ref.index >= len(drawn):
            want = spec.tasks if spec.tasks is not None else (ref.index // _CHUNK + 1) * _CHUNK
            more = spec.duration.draw(self._rngs[ref.job], want - len(drawn))
            drawn = self._drawn[ref.job] = np.concatenate([drawn, more])
        return float(drawn[ref.index]) / self.scale


@dataclass(frozen=True)
class TaskTraits:
    """What a task carries besides its demand: its user's weight, how long it runs (0:
    until the run ends), where it may run, and its job's arrival and sequence number in
    the scenario (``job``: 1, 2, ... over every user's jobs in scenario order; 0 for the
    thesis's tasks), by which FIFO serves jobs. The thesis's task has :data:`CLASSIC`
    traits, and its messages carry none of them (dgdrf/runtime/messages.py: optional
    fields)."""

    weight: float = 1.0
    duration: float = 0.0
    constraint: Constraint = UNCONSTRAINED
    arrival: float = 0.0
    job: int = 0

    @property
    def classic(self) -> bool:
        return self.job == 0 and self.weight == 1.0 and self.duration == 0.0 and self.constraint.unconstrained


CLASSIC = TaskTraits()
