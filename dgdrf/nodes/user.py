"""The User actor: thesis algorithm 3, made to survive lost and repeated messages, and
to serve jobs that arrive and finish.

A user submits its tasks one at a time: ask the gateway for a server, send the task
there, accept exactly one proposal per task id (any other is declined), and when told
the task runs, start over with the next task id. Its global dominant share is what the
allocating side last told it (it travels with each task).

The thesis's user (:attr:`~dgdrf.model.scenario.UserSpec.classic`) has one endless job
whose tasks never end: its next task is always there, and its messages are what they
always were. A user with jobs (dgdrf/model/workload.py) takes its next task from its
:class:`~dgdrf.model.workload.UserWorkload`: the pending task of its earliest job. A job's
tasks become pending when it arrives (its arrival, counted from the start of allocation
and divided by the run's time scale); with nothing pending the user goes *idle* and tells
the server its tasks go to (Idle), so a scheduler does not wait for a task that is not
coming; a new job ends it. Its share is then the sum of what each running task adds
(TaskAllocated's ``gain``: max_r D_r / C_r divided by its weight, as the placing server
computed it), taken off when the task ends (TaskFinished from the server that ran it) or
is lost with a server that went down (the task is pending again, and counted as
``task_lost``). A task whose end it never heard of, because the server that ran it went
down before telling it again, is lost all the same: nothing tells it from one that died
with its server, so it runs again (the collector counts the first end as no completion,
which is why the report names the task). A share that drops while the user's task waits
at a server is sent there again (the TaskRequest repeated, which updates the waiting
task's share). An instance of a job of parts (model/gangs.py) is all its tasks or none:
one of them lost with its server loses all of them; the user aborts the others where
they run or are held (AbortTask, until TaskAborted) and the instance is pending again,
once.

Alg. 3 assumes every message arrives. Here each step that waits for an answer sends
again every ``retry`` seconds until the answer comes (:meth:`User._retransmit`): the
ServerRequest until the gateway's ServerReply, the TaskRequest until the server says it
holds the task (TaskQueued) or proposes it, the Accept until the task runs
(TaskAllocated) or the proposer says its proposal no longer stands (Withdrawn), the Idle
until IdleNoted. Proposals carry the proposer's reference, so a repeated proposal is
answered as the first was and a late message about an older one changes nothing.
Without loss every answer comes within a few latencies, so no step is ever sent twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dgdrf.model.fleet import Fleet
from dgdrf.model.workload import CLASSIC, Durations, JobSpec, Part, TaskRef, TaskTraits, UserWorkload, arrival_time, instance_size
from dgdrf.nodes.protocol import (
    RETRY_S,
    AbortTask,
    AllStarted,
    Accept,
    Decline,
    HomeMoved,
    Idle,
    IdleNoted,
    MemberDown,
    MemberUp,
    Proposal,
    ServerReply,
    ServerRequest,
    TaskAborted,
    TaskAllocated,
    TaskFinished,
    TaskFinishedAck,
    TaskQueued,
    TaskRequest,
    Withdrawn,
    trait_fields,
)
from dgdrf.runtime.actor import Actor

#: what the current task waits for (the step :meth:`User._retransmit` repeats); IDLE:
#: there is no current task (nothing pending)
ASKING, SUBMITTED, QUEUED, ACCEPTED, IDLE = "asking", "submitted", "queued", "accepted", "idle"


@dataclass(frozen=True)
class UserJobs:
    """What a user with jobs is given: its jobs, weight and durations, each job's
    sequence number in the scenario (FIFO's order), when allocation starts (arrivals
    count from then) and the run's time scale (arrivals are divided by it; durations
    come divided already)."""

    jobs: tuple[JobSpec, ...]
    weight: float
    durations: Durations
    sequence: tuple[int, ...]
    start: float = 0.0
    time_scale: float = 1.0
    tenant: str = ""  # the user whose job stream this is (UDRF); "": its own


@dataclass
class _Running:
    ref: TaskRef
    server: str
    gain: float


class User(Actor):
    """One user i with demand vector D_i (thesis 3.1, alg. 3), or with jobs."""

    def __init__(
        self, address: str, demand: Sequence[float], gateway: str, start_delay: float = 0.0, retry: float = RETRY_S, jobs: UserJobs | None = None,
        runs_on: frozenset[str] | None = None, fleet: Fleet | None = None,
    ) -> None:
        super().__init__(address)
        #: a liar's true servers (the audit's claims, model/audit.py): it declines others
        self.runs_on = runs_on
        self.start_delay = start_delay
        self.retry = retry
        self.demand = [float(x) for x in demand]
        self.gateway = gateway
        self.task_id = 0  # the task being placed now
        self.state = ASKING
        self.dominant_share = 0.0
        self.running = 0  # tasks known to run
        self.sent_to = ""  # the server the current task was sent to
        self.accepted_from = ""  # who proposed the accepted placement of the current task
        self.accepted_ref = -1  # ... and its reference for that proposal
        self.accepted_server = ""  # the server that accepted placement runs on (a central scheduler proposes for another)
        self.down: set[str] = set()  # servers reported down (MemberDown, network mode)
        self._epoch = 0  # bumped at every step, so that a step's pending retransmission lapses
        # jobs (None: the thesis's user)
        self.jobs = jobs
        self.workload = UserWorkload(jobs.jobs) if jobs is not None else None
        self.current: TaskRef | None = None  # the task being placed now (jobs)
        self.traits: TaskTraits = CLASSIC
        self.tasks_running: dict[int, _Running] = {}  # task id -> where it runs (jobs)
        #: the current task's instance, for a job of parts (model/gangs.py): its parts, and
        #: the tasks of it (ids task_id .. task_id + size - 1) known to run
        self.gang: tuple[Part, ...] = ()
        self.gang_started: set[int] = set()
        #: the servers of the accepted placement, one a task (an instance's every task)
        self.accepted_servers: list[str] = []
        #: instances accepted and not yet ended: first task id -> (the task, its servers
        #: one a task), and each of their tasks' first task id; a task of one lost with
        #: its server loses all of it (:meth:`_lose_instance`)
        self.instances: dict[int, tuple[TaskRef, list[str]]] = {}
        self.instance_of: dict[int, int] = {}
        #: AbortTask sent and not yet answered: server -> task ids
        self._aborting: dict[str, list[int]] = {}
        #: the servers up as far as this user knows (jobs): a job none of them can run is
        #: given up (model/fleet.py), and taken up again when one that can joins
        self.fleet = fleet if jobs is not None else None
        if jobs is not None:
            self.state = IDLE

    def on_start(self) -> None:
        if self.jobs is not None:
            for arrival, job in self.workload.arrivals():  # type: ignore[union-attr]
                self.after(arrival_time(arrival, self.jobs.start, self.jobs.time_scale, self.start_delay), self._arrive, job)
        elif self.start_delay > 0:
            self.after(self.start_delay, self._request_server)
        else:
            self._request_server()

    # -- the steps of alg. 3 ------------------------------------------------------------
    def _step(self, state: str) -> None:
        """Enter ``state`` and send its message again in ``retry`` seconds unless the
        answer has come by then (queued: nothing to repeat; the server proposes when it
        is the task's turn)."""
        self.state = state
        self._epoch += 1
        if state != QUEUED:
            self.after(self.retry, self._retransmit, self._epoch)

    def _retransmit(self, epoch: int) -> None:
        if epoch != self._epoch or (self.state == IDLE and self.sent_to in self.down):
            return  # answered in time (or an Idle for a server gone since)
        self.report("retransmitted", step=self.state)
        self._send_step()
        self.after(self.retry, self._retransmit, epoch)

    def _send_step(self) -> None:
        if self.state == ASKING:
            if self.traits is CLASSIC:
                self.send(self.gateway, ServerRequest(self.task_id))
            else:
                c = self.traits.constraint
                self.send(self.gateway, ServerRequest(self.task_id, self.demand, c.wire_eligible(), c.wire_requires()))
        elif self.state == SUBMITTED:
            self.send(self.sent_to, self._task_request())
        elif self.state == ACCEPTED:
            self.send(self.accepted_from, Accept(self.task_id, self.accepted_ref))
        elif self.state == IDLE:
            self.send(self.sent_to, Idle(self.task_id))

    def _task_request(self) -> TaskRequest:
        if self.traits is CLASSIC:
            return TaskRequest(self.address, self.task_id, self.demand, self.dominant_share)
        tenant = self.jobs.tenant if self.jobs is not None else ""
        if not self.gang:
            return TaskRequest(self.address, self.task_id, self.demand, self.dominant_share, *trait_fields(self.traits), tenant=tenant)
        parts = self.gang
        return TaskRequest(
            self.address, self.task_id, self.demand, self.dominant_share, *trait_fields(self.traits), tenant=tenant,
            parts=[[float(x) for x in p.demand] for p in parts], part_counts=[float(p.count) for p in parts],
            part_eligible=[p.constraint.wire_eligible() for p in parts], part_requires=[p.constraint.wire_requires() for p in parts],
        )

    @property
    def size(self) -> int:
        """Tasks in the current placement: an instance's, or 1."""
        return instance_size(self.gang)

    def _request_server(self) -> None:
        if self.current is None:
            self.report("submitted", task_id=self.task_id)
        else:
            self.report("submitted", task_id=self.task_id, job=self.current.job, index=self.current.index)
        self._step(ASKING)
        self._send_step()

    def on_ServerReply(self, src: str, msg: ServerReply) -> None:
        if msg.task_id != self.task_id or self.state != ASKING:
            return  # stale or repeated reply
        if msg.server in self.down:
            return  # the gateway had not heard yet: ask again at the next retransmission
        self.sent_to = msg.server
        self._submit()

    def _submit(self) -> None:
        """Send the current task to the server it goes to (``sent_to``)."""
        self._step(SUBMITTED)
        self._send_step()

    def on_TaskQueued(self, src: str, msg: TaskQueued) -> None:
        if msg.task_id == self.task_id and self.state == SUBMITTED and src == self.sent_to:
            self._step(QUEUED)

    def _give_up(self) -> bool:
        """The current task's accepted placement was on a server that died, so it never
        started: count it lost and go on with the next task id (with jobs: the lost task
        is pending again, and the next task is taken anew). False if no task is left to
        place (with jobs: what is pending no server up can run, so the user went idle)."""
        server = self.accepted_server or self.accepted_from
        if self.gang and self.task_id in self.instances:  # an instance: all of it is lost, and put back once
            self._lose_instance(self.task_id)
            self.task_id += self.size
            self.gang_started = set()
            self._take()
            if self.current is None:
                self._go_idle()
                return False
            self.report("submitted", task_id=self.task_id, job=self.current.job, index=self.current.index)
            return True
        if self.current is None:
            self.report("task_lost", task_id=self.task_id, server=server)
        else:  # it may have run and ended there, unheard: the collector is told which task it was
            self.report("task_lost", task_id=self.task_id, server=server, job=self.current.job, index=self.current.index)
        self.task_id += 1
        if self.workload is not None and self.current is not None:
            self.workload.put_back(self.current)
            self._take()
            if self.current is None:  # its job, and every later one, can run nowhere now
                self._go_idle()
                return False
            self.report("submitted", task_id=self.task_id, job=self.current.job, index=self.current.index)
        else:
            self.report("submitted", task_id=self.task_id)
        return True

    def _abandon(self, job: int, why: str, task_id: int = -1) -> None:
        """No server up can run ``job`` (its constraint or demand matched only servers
        that left): its tasks wait aside (given up, with ``task_id`` the one taken of it
        and not placed, if any), and the user goes on with its later jobs. The collector
        lists it among the run's unrunnable jobs unless a server that can run it joins."""
        assert self.workload is not None
        self.workload.give_up(job)
        self.report("given_up", job=job, task_id=task_id, why=why)

    def _abandon_current(self, why: str) -> None:
        """The task being placed (not yet accepted anywhere) belongs to a job that no
        server up can run: give the job up and go on with the next task id, which
        supersedes the old one where it waits (a TaskRequest, or Idle)."""
        assert self.workload is not None and self.current is not None
        self.workload.put_back(self.current)
        self._abandon(self.current.job, why, self.task_id)
        self.task_id += self.size  # an instance's task ids are all spent
        self._next()

    def _current_unrunnable(self) -> str | None:
        """Why the current task's job can run on no server up (None: it can)."""
        if self.fleet is None or self.current is None or self.jobs is None:
            return None
        return self.fleet.why_not_job(self.jobs.jobs[self.current.job])

    def _placed(self) -> bool:
        """Whether the current task has an accepted placement (its TaskAllocated pending)."""
        return self.state == ACCEPTED

    def on_HomeMoved(self, src: str, msg: HomeMoved) -> None:
        """My home server died (gateway, network mode): a task waiting there goes to the
        new home; one placed on the dead home is given up and the next goes there."""
        if self.sent_to != msg.old:
            return
        self.sent_to = msg.new
        if self.state == IDLE:
            return  # the next task goes to the new home
        if self._placed():
            if self.accepted_from != msg.old:
                return  # placed elsewhere (random walk): its TaskAllocated will come
            if not self._give_up():
                return
        self._submit()

    def on_MemberDown(self, src: str, msg: MemberDown) -> None:
        """Servers went down (bootstrap, network mode): a task placed on one of them is
        given up, else the user would decline every new proposal of it for ever and under
        DGDRF's strict order its home would hold the whole cluster back. The next task goes
        to the home, unless the home died too: then the gateway names the new one (HomeMoved
        or ServerRequest, in either order). A task held, not yet placed, by a server that
        died is asked for again. With jobs, tasks running on them are lost too: pending
        again, their share given back."""
        gone = set(msg.addresses)
        self.down |= gone
        for server in gone.intersection(self._aborting):
            del self._aborting[server]  # nothing runs there any more
        if self.fleet is not None:
            self.fleet.leave(gone)
        if self.workload is not None:
            self._lose_running(gone)
        if self.state == IDLE:
            if self.workload is not None and self.workload.pending():
                self._next()
            return
        # the proposer (a walk's server, a home) or, under a central scheduler, the
        # server it ordered the task on
        if self._placed() and (self.accepted_from in gone or self.accepted_server in gone or not gone.isdisjoint(self.accepted_servers)):
            if not self._give_up():
                return
            if self.sent_to in gone:
                self._ask_again()
            else:
                self._submit()
            return
        why = None if self._placed() else self._current_unrunnable()
        if why is not None:
            self._abandon_current(why)
        elif self.state != ASKING and self.sent_to in gone:
            self._ask_again()

    def on_MemberUp(self, src: str, msg: MemberUp) -> None:
        """A server joined: a job given up because no server up could run it is taken up
        again if this one can (its tasks pending again in their place, ahead of later
        jobs'); an idle user goes on with it at once."""
        if self.fleet is None or self.workload is None or self.jobs is None:
            return
        self.down.discard(msg.server)
        self.fleet.join(msg.spec())
        for job in self.workload.given_up():
            if self.fleet.why_not_job(self.jobs.jobs[job]) is None:
                self.workload.resume(job)
                self.report("resumed", job=job)
        if self.state == IDLE and self.workload.pending():
            self._next()

    def _lose_running(self, gone: set[str]) -> None:
        """Tasks running on servers gone are lost: pending again, their share given back.
        A task of an instance loses the whole instance (the current one being placed is
        :meth:`_give_up`'s)."""
        assert self.workload is not None
        for task_id in [t for t, r in self.tasks_running.items() if r.server in gone]:
            if task_id not in self.tasks_running:
                continue  # lost with its instance, a task of which came before it
            base = self.instance_of.get(task_id)
            if base is not None:
                if base in self.instances and not (base == self.task_id and self._placed()):
                    self._lose_instance(base)
                continue
            r = self.tasks_running.pop(task_id)
            self.report("task_lost", task_id=task_id, server=r.server, job=r.ref.job, index=r.ref.index)
            self.workload.put_back(r.ref)
            self._drop_share(r.gain)

    def _lose_instance(self, base: int) -> None:
        """An instance lost a task with its server: every task of it is lost (reported,
        its share given back), those on servers up are aborted there (AbortTask: stopped,
        or never started), and the instance is pending again, once (model/gangs.py)."""
        assert self.workload is not None
        ref, servers = self.instances.pop(base)
        abort: dict[str, list[int]] = {}
        for k, server in enumerate(servers):
            task_id = base + k
            self.instance_of.pop(task_id, None)
            r = self.tasks_running.pop(task_id, None)
            if r is not None:
                self._drop_share(r.gain)
            self.report("task_lost", task_id=task_id, server=server, job=ref.job, index=ref.index)
            if server not in self.down:
                abort.setdefault(server, []).append(task_id)
        for server, task_ids in abort.items():
            self._abort(server, task_ids)
        self.workload.put_back(ref)

    def _abort(self, server: str, task_ids: list[int]) -> None:
        """Tell ``server`` to stop these tasks and never start them (until it answers)."""
        fresh = server not in self._aborting
        self._aborting.setdefault(server, []).extend(task_ids)
        self.send(server, AbortTask(list(self._aborting[server])))
        if fresh:
            self.after(self.retry, self._abort_again, server)

    def _abort_again(self, server: str) -> None:
        task_ids = self._aborting.get(server)
        if not task_ids:
            return
        self.report("retransmitted", step="abort")
        self.send(server, AbortTask(list(task_ids)))
        self.after(self.retry, self._abort_again, server)

    def on_TaskAborted(self, src: str, msg: TaskAborted) -> None:
        left = [t for t in self._aborting.get(src, ()) if t not in msg.task_ids]
        if left:
            self._aborting[src] = left
        else:
            self._aborting.pop(src, None)

    def _ask_again(self) -> None:
        """The current task's server died before placing it: ask the gateway where it goes
        now. With homes (DDRF, DGDRF) the gateway's HomeMoved may come first; either way
        the task goes to the new home once. With a random server per task (probes) this is
        the only way on. A reply naming a server known dead is ignored and asked again."""
        self._step(ASKING)
        self._send_step()

    def on_Proposal(self, src: str, msg: Proposal) -> None:
        servers = msg.servers or [msg.server]
        if self.gang and msg.task_id == self.task_id and len(servers) != self.size:
            self.send(src, Decline(msg.task_id, msg.ref))  # not a placement of the whole instance
            return
        unusable = self.runs_on is not None and any(s not in self.runs_on for s in servers)  # a liar's claim
        if unusable or (self.down and (src in self.down or any(s in self.down for s in servers))):
            self.send(src, Decline(msg.task_id, msg.ref, unusable=True))  # a placement on a server known dead, or one it cannot use
            if msg.task_id == self.task_id and self.state in (SUBMITTED, QUEUED) and src == self.sent_to and src not in self.down:
                # a scheduler that has not heard of the death yet takes a Decline for "placed
                # elsewhere" and forgets the task: send it again (a cluster's drf-bestfit
                # waited for it for good, its user queued and silent)
                self._submit()
            return
        if msg.task_id == self.task_id and self.state not in (ACCEPTED, IDLE):
            self.accepted_from, self.accepted_ref, self.accepted_server = src, msg.ref, msg.server
            self.accepted_servers = list(servers)
            for k, server in enumerate(servers):  # an instance: each of its tasks where it goes
                self.report("accepted", task_id=msg.task_id + k, server=server)
            if self.gang and self.current is not None:  # known from now on: a loss of any of its servers loses it all
                self.instances[msg.task_id] = (self.current, list(servers))
                for k in range(len(servers)):
                    self.instance_of[msg.task_id + k] = msg.task_id
            self._step(ACCEPTED)
            self._send_step()
        elif msg.task_id == self.task_id and self.state == ACCEPTED and (src, msg.ref) == (self.accepted_from, self.accepted_ref):
            self._send_step()  # the proposal again: our Accept was lost
        else:
            self.send(src, Decline(msg.task_id, msg.ref))

    def on_Withdrawn(self, src: str, msg: Withdrawn) -> None:
        """The proposal we accepted no longer stands (it expired before our Accept came,
        or the node could not start the task): wait for another proposal of the task."""
        if msg.task_id == self.task_id and self.state == ACCEPTED and (src, msg.ref) == (self.accepted_from, self.accepted_ref):
            self.report("withdrawn", task_id=msg.task_id, server=src)
            self._forget_instance(msg.task_id)
            self._step(QUEUED)

    def on_TaskAllocated(self, src: str, msg: TaskAllocated) -> None:
        if self.gang and self.state == ACCEPTED and self.task_id <= msg.task_id < self.task_id + self.size:
            self._part_allocated(msg)
            return
        if msg.task_id < self.task_id and msg.task_id in self.instance_of:
            self.send(src, AllStarted([msg.task_id]))  # told again: our AllStarted was lost
            return
        if msg.task_id != self.task_id or self.state != ACCEPTED:
            if msg.task_id > self.task_id or (msg.task_id == self.task_id and self.state != ACCEPTED):
                self.report("stray_allocation", task_id=msg.task_id, server=msg.server)
            return  # else a repeat of an earlier task's (our Accept was sent again)
        self.running += 1
        if self.workload is None:
            self.dominant_share = msg.dominant_share
            self.task_id += 1
            self._request_server()
            return
        assert self.current is not None  # ACCEPTED: a task is being placed
        self.tasks_running[self.task_id] = _Running(self.current, msg.server, msg.gain)
        self.dominant_share += msg.gain
        self.task_id += 1
        self._next()

    def _part_allocated(self, msg: TaskAllocated) -> None:
        """A task of the instance being placed runs; once all of them do, the next task."""
        if msg.task_id in self.gang_started:
            return  # a repeat
        assert self.current is not None  # ACCEPTED: an instance is being placed
        self.gang_started.add(msg.task_id)
        self.running += 1
        self.tasks_running[msg.task_id] = _Running(self.current, msg.server, msg.gain)
        self.dominant_share += msg.gain
        self._instance_done()

    def _instance_done(self) -> None:
        """Every task of the current instance runs (or ran): their servers hear so (their
        durations count from now, nodes/server.py), and the next task."""
        if len(self.gang_started) < self.size:
            return
        entry = self.instances.get(self.task_id)
        if entry is not None and self.traits.duration > 0:
            tasks: dict[str, list[int]] = {}
            for k, server in enumerate(entry[1]):
                tasks.setdefault(server, []).append(self.task_id + k)
            for server, task_ids in tasks.items():
                self.send(server, AllStarted(task_ids))
        self.task_id += self.size
        self.gang_started = set()
        self._next()

    # -- jobs ---------------------------------------------------------------------------
    def _arrive(self, job: int) -> None:
        assert self.workload is not None
        self.workload.arrive(job)
        if self.state == IDLE:
            self._next()

    def _take(self) -> None:
        """Take the next pending task as the current one (None: nothing pending); a job
        that no server up can run is given up on the way (:meth:`_abandon`)."""
        assert self.workload is not None and self.jobs is not None
        workload, fleet = self.workload, self.fleet
        while True:
            ref = workload.next_task()
            if ref is None:
                self.current = None
                return
            spec = self.jobs.jobs[ref.job]
            why = fleet.why_not_job(spec) if fleet is not None else None
            if why is None:
                break
            self._abandon(ref.job, why)
        workload.take_ref(ref)
        self.current = ref
        self.gang, self.gang_started = spec.parts, set()
        self.demand = [float(x) for x in spec.demand]
        arrival = spec.arrival
        self.traits = TaskTraits(self.jobs.weight, self.jobs.durations.of(ref), spec.constraint, arrival, self.jobs.sequence[ref.job])

    def _next(self) -> None:
        """Go on with the next pending task, or go idle (telling the server my tasks went
        to, so that it does not wait for one)."""
        self._take()
        if self.current is not None:
            self._request_server()
            return
        self._go_idle()

    def _go_idle(self) -> None:
        """Nothing to place: tell the server my tasks went to (Idle, until noted)."""
        self.state = IDLE
        self._epoch += 1
        if self.sent_to and self.sent_to not in self.down:  # (a server gone has nothing to be told)
            self.after(self.retry, self._retransmit, self._epoch)
            self._send_step()

    def on_IdleNoted(self, src: str, msg: IdleNoted) -> None:
        if self.state == IDLE and msg.task_id == self.task_id:
            self._epoch += 1  # noted: stop sending it

    def on_TaskFinished(self, src: str, msg: TaskFinished) -> None:
        """A task of mine ended (its server's notice, sent until acknowledged): its share
        is given back, and a task of mine waiting at a server is sent there again with
        the lower share. One that ended before its TaskAllocated came (lost) ran all
        the same: it is taken as placed, then ended."""
        self.send(src, TaskFinishedAck(msg.user, msg.task_id))
        if self.workload is None:
            return
        base = self.instance_of.pop(msg.task_id, None)
        if base is not None and base in self.instances and not any(self.instance_of.get(base + k) == base for k in range(len(self.instances[base][1]))):
            del self.instances[base]  # every task of it ended
        r = self.tasks_running.pop(msg.task_id, None)
        if r is None:
            if self.gang and self.state == ACCEPTED and self.current is not None and self.task_id <= msg.task_id < self.task_id + self.size:
                if msg.task_id not in self.gang_started:  # a part that ended before its TaskAllocated came
                    self.gang_started.add(msg.task_id)
                    self.running += 1
                    self._instance_done()
                return
            if msg.task_id == self.task_id and self.state == ACCEPTED and self.current is not None:
                self.running += 1
                self.task_id += 1
                self._next()
            return  # else a repeat
        self._drop_share(r.gain)
        if self.state in (SUBMITTED, QUEUED):
            self._submit()

    def _forget_instance(self, base: int) -> None:
        """The placement of an instance no longer stands before any task of it ran."""
        entry = self.instances.pop(base, None)
        if entry is not None:
            for k in range(len(entry[1])):
                self.instance_of.pop(base + k, None)

    def _drop_share(self, gain: float) -> None:
        self.dominant_share = max(0.0, self.dominant_share - gain) if self.tasks_running else 0.0
