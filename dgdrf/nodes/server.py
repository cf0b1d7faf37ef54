"""The Server actor (a resource node, thesis 3.1).

It owns a capacity vector c_l and the tasks running on it, starts a task only if it fits
(eq. 3.2), and hosts the policy's roles (a scheduler, peer sampling, gradient, push-sum),
calling their ``on_tick`` every allocation tick (thesis 1.5.8, default 100 ms) from
``first_tick`` on. Capacity can be held back for a proposal the user has not answered
yet (:meth:`reserve`), so two proposals never promise the same resources.

A task with a duration ends after it (dgdrf/model/workload.py): the server frees its
resources, reports it, tells the roles it hosts (a scheduler placing tasks here sees the
room come back) and tells the task's user and the central scheduler that ordered it
(TaskFinished, sent again every ``retry`` seconds until each acknowledges). A server has
attributes, which the placement constraints of tasks match (:meth:`admits`).

Membership news (the bootstrap's MemberDown and MemberUp) reaches the server, which
tells no member gone that a task of its ended (a user gone would be told for ever) and
passes the news to every role it hosts that keeps state of members: a role defines
``members_down(addresses)`` and ``member_up(server, capacity, attributes)``
(:class:`MembershipListener`), so that several roles of one server can hear the same news.

A user whose instance of a job of parts lost a task with a server that went down aborts
the rest of it (AbortTask): a task of it running here stops (its resources freed, the
scheduler that ordered it told it ended), its reservation is given back, and an order
for it that comes later starts nothing. The tasks of an instance start together: one
started here holds its resources, but its duration counts only from its user's
AllStarted, which the user sends once every task of the instance runs (until it comes,
the server tells the user again that the task runs); a user that went down sends none,
so its tasks' durations count from when the server hears it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from dgdrf.model.constraints import Constraint
from dgdrf.model.resources import FIT_TOLERANCE
from dgdrf.model.scenario import MAX_INSTANCE_TASKS
from dgdrf.nodes.protocol import RETRY_S, AbortTask, Allocate, AllStarted, AllocateRejected, MemberDown, MemberUp, TaskAborted, TaskAllocated, TaskFinished, TaskFinishedAck
from dgdrf.nodes.ticking import TickingRole
from dgdrf.runtime.actor import Actor


class MembershipListener(Protocol):
    """A role that keeps state of other members and hears of their comings and goings
    through its server (either method may be left out)."""

    def members_down(self, addresses: Sequence[str]) -> None:
        """Members (servers or users) went down."""
        ...

    def member_up(self, server: str, capacity: Sequence[float], attributes: Mapping[str, Any]) -> None:
        """A server joined, with this capacity and these attributes."""
        ...


class Server(Actor):
    """A resource node with capacity, running and reserved tasks, and policy roles.

    The capacity in use is kept in Python floats, one per resource: a fit check or a
    reservation is a handful of float operations, the same ones the numpy expressions of
    :func:`~dgdrf.model.resources.fits` make (a random walk checks at every hop, where
    numpy's call overhead was most of the cost). ``capacity``, ``used`` and ``free``
    read as numpy vectors."""

    def __init__(self, address: str, capacity: Sequence[float], tick: float = 0.1, first_tick: float | None = None, attributes: Mapping[str, Any] | None = None, retry: float = RETRY_S) -> None:
        super().__init__(address)
        self.attributes: dict[str, Any] = dict(attributes or {})
        self.retry = retry
        self.capacity = np.asarray(capacity, dtype=np.float64)
        self._cap = [float(c) for c in self.capacity]
        self._used = [0.0] * len(self._cap)  # running + reserved
        self._slack = [FIT_TOLERANCE * max(c, 1.0) for c in self._cap]  # fits()' tolerance per resource
        self.tick = tick
        self.first_tick = tick if first_tick is None else first_tick
        self.running: dict[tuple[str, int], list[float]] = {}
        self.reserved: dict[tuple[str, int], list[float]] = {}
        #: the weighted share each running task with traits gave its user (TaskAllocated's gain)
        self.gains: dict[tuple[str, int], float] = {}
        #: tasks that ran here and ended (a repeated order of one is not run again)
        self.finished: set[tuple[str, int]] = set()
        #: (user, task) -> the members whose TaskFinishedAck is awaited
        self._unacked: dict[tuple[str, int], list[str]] = {}
        #: what hosted roles want to hear when a task ends here (user, task id)
        self.on_finished: list[Callable[[str, int], None]] = []
        #: members reported down (MemberDown): none of them is told of a task's end
        self._gone: set[str] = set()
        #: tasks of instances their users aborted (AbortTask): none of them starts later
        self.aborted: set[tuple[str, int]] = set()
        #: the central scheduler that ordered each running task, if one did (an aborted
        #: task's end is told to it, for its ledger)
        self._ordered_by: dict[tuple[str, int], str] = {}
        #: tasks of instances that run here, their durations not yet counting (their users'
        #: AllStarted awaited): (user, task) -> (duration, the scheduler that ordered it,
        #: the dominant share and gain told to the user)
        self._before_all: dict[tuple[str, int], tuple[float, str | None, float, float]] = {}

    def admits(self, constraint: Constraint) -> bool:
        """Whether a task with ``constraint`` may run here (its ids and my attributes)."""
        return constraint.unconstrained or constraint.admits(self.address, self.attributes)
    @property
    def used(self) -> np.ndarray:
        return np.asarray(self._used, dtype=np.float64)

    @property
    def free(self) -> np.ndarray:
        return self.capacity - self.used

    def load(self) -> float:
        """CPU load used/capacity (thesis eq. 4.1: the Google data is CPU-bound)."""
        return float(self._used[0] / self._cap[0]) if self._cap[0] > 0 else 1.0

    def fits(self, demand: Sequence[float]) -> bool:
        """Eq. 3.2 with :data:`~dgdrf.model.resources.FIT_TOLERANCE`, as
        :func:`~dgdrf.model.resources.fits` computes it on (demand, free, capacity)."""
        cap, used, slack = self._cap, self._used, self._slack
        if len(demand) != len(cap):
            return False
        for i in range(len(cap)):
            if not float(demand[i]) <= (cap[i] - used[i]) + slack[i]:
                return False
        return True

    def _add(self, d: list[float], sign: float) -> None:
        used = self._used
        for i in range(len(used)):
            used[i] = used[i] + d[i] if sign > 0 else used[i] - d[i]

    def on_start(self) -> None:
        # the ticking roles' handlers, found once (roles are all added before the start);
        # an on_tick on a role that does not declare itself ticking is a wiring error
        self._tickers = []
        for role in self.roles:
            if isinstance(role, TickingRole):
                self._tickers.append(role.on_tick)
            elif hasattr(role, "on_tick"):
                raise TypeError(f"{type(role).__name__} has on_tick but is not a TickingRole (nodes/ticking.py): the server would not tick it")
        if len(self._tickers) == 1:  # the usual one: the timer calls it without a hop through _on_tick
            self.every(self.tick, self._tickers[0], first=self.first_tick)
        elif self._tickers:
            self.every(self.tick, self._on_tick, first=self.first_tick)

    def _on_tick(self) -> None:
        for tick in self._tickers:
            tick()

    # -- capacity ---------------------------------------------------------------------
    def reserve(self, user: str, task_id: int, demand: Sequence[float]) -> bool:
        """Hold capacity for a proposal; False if it does not fit or is already held."""
        key = (user, task_id)
        if key in self.reserved or key in self.running or not self.fits(demand):
            return False
        d = [float(x) for x in demand]
        self._add(d, 1.0)
        self.reserved[key] = d
        return True

    def release(self, user: str, task_id: int) -> bool:
        """Give back a reservation the user declined or never answered."""
        d = self.reserved.pop((user, task_id), None)
        if d is None:
            return False
        self._add(d, -1.0)
        return True

    def start_task(self, user: str, task_id: int, demand: Sequence[float], dominant_share: float, duration: float = 0.0, gain: float = 0.0, scheduler: str | None = None, together: bool = False) -> bool:
        """Run a task (from its reservation, or checking the fit now) and tell its user;
        with a ``duration`` it ends after that many seconds (and ``scheduler``, the member
        that ordered it, if one did, hears so too); a task of an instance of several
        (``together``) counts them from its user's AllStarted. A task already running here, or run here and
        ended, is not started again: the order was repeated (its TaskAllocated was lost and
        the user's Accept sent again), so the user is told again (an ended one: its
        TaskFinished, sent until acknowledged, tells the user)."""
        key = (user, task_id)
        if key in self.running:
            self.report("repeated_start", user=user, task_id=task_id)
            self.send(user, TaskAllocated(task_id, self.address, dominant_share, self.gains.get(key, 0.0)))
            return True
        if key in self.finished:
            self.report("repeated_start", user=user, task_id=task_id)
            return True
        if key in self.aborted:  # its instance was lost before this order came: it ran for no time
            self.release(user, task_id)
            if scheduler is not None:
                self._tell_ended(key, [scheduler])
            return True
        d = self.reserved.pop(key, None)
        if d is None:
            if not self.fits(demand):
                self.report("rejected", user=user, task_id=task_id, duplicate=False)
                return False
            d = [float(x) for x in demand]
            self._add(d, 1.0)
        self.running[key] = d
        if gain:
            self.gains[key] = gain
        if scheduler is not None:
            self._ordered_by[key] = scheduler
        self.report("allocated", user=user, task_id=task_id, demand=list(demand))
        self.send(user, TaskAllocated(task_id, self.address, dominant_share, gain))
        if duration > 0 and together and user not in self._gone:
            self._before_all[key] = (duration, scheduler, dominant_share, gain)
            self.after(self.retry, self._remind_started, key)
        elif duration > 0:
            self.after(duration, self._finish, user, task_id, scheduler)
        return True

    def _remind_started(self, key: tuple[str, int]) -> None:
        """No AllStarted yet for a task of an instance: tell its user again that it runs
        (the TaskAllocated, or the AllStarted, was lost)."""
        entry = self._before_all.get(key)
        if entry is None:
            return
        self.report("retransmitted", step="allocated")
        self.send(key[0], TaskAllocated(key[1], self.address, entry[2], entry[3]))
        self.after(self.retry, self._remind_started, key)

    def on_AllStarted(self, src: str, msg: AllStarted) -> None:
        """Every task of ``src``'s instance runs: these tasks' durations count from now."""
        for task_id in msg.task_ids[:MAX_INSTANCE_TASKS]:
            self._start_clock((src, task_id))

    def _start_clock(self, key: tuple[str, int]) -> None:
        entry = self._before_all.pop(key, None)
        if entry is not None and key in self.running:
            self.after(entry[0], self._finish, key[0], key[1], entry[1])

    def _finish(self, user: str, task_id: int, scheduler: str | None) -> None:
        """The task's duration is over: free its resources and tell who must know."""
        key = (user, task_id)
        d = self.running.pop(key, None)
        if d is None:
            return
        self._add(d, -1.0)
        self.gains.pop(key, None)
        self._ordered_by.pop(key, None)
        self.finished.add(key)
        self.report("finished", user=user, task_id=task_id)
        for hook in self.on_finished:
            hook(user, task_id)
        self._tell_ended(key, [user] if scheduler is None else [user, scheduler])  # the scheduler may be this node: a message as its Allocate was

    def _tell_ended(self, key: tuple[str, int], recipients: list[str]) -> None:
        """Tell ``recipients`` that task ``key`` ended (TaskFinished, sent again until
        each acknowledges; a member gone is not told)."""
        if self._gone:
            recipients = [m for m in recipients if m not in self._gone]  # nobody is there to hear it
            if not recipients:
                return
        self._unacked[key] = recipients
        for member in recipients:
            self.send(member, TaskFinished(*key))
        self.after(self.retry, self._notify_again, key)

    def on_AbortTask(self, src: str, msg: AbortTask) -> None:
        """``src``'s instance lost a task with a server gone: its tasks here stop (a
        running one frees its resources and is told to the scheduler that ordered it, not
        to the user, who asked), their reservations are given back, and none of them
        starts later."""
        for task_id in msg.task_ids[:MAX_INSTANCE_TASKS]:
            key = (src, task_id)
            self.aborted.add(key)
            self._before_all.pop(key, None)
            d = self.running.pop(key, None)
            if d is not None:
                self._add(d, -1.0)
                self.gains.pop(key, None)
                self.finished.add(key)  # ended: a repeated order does not run it again
                self.report("aborted", user=src, task_id=task_id)
                for hook in self.on_finished:
                    hook(src, task_id)
                scheduler = self._ordered_by.pop(key, None)
                if scheduler is not None:
                    self._tell_ended(key, [scheduler])
            else:
                self.release(src, task_id)
        self.send(src, TaskAborted(msg.task_ids[:MAX_INSTANCE_TASKS]))

    def _notify_again(self, key: tuple[str, int]) -> None:
        waiting = self._unacked.get(key)
        if not waiting:
            return
        self.report("retransmitted", step="finished")
        for member in waiting:
            self.send(member, TaskFinished(*key))
        self.after(self.retry, self._notify_again, key)

    def on_TaskFinishedAck(self, src: str, msg: TaskFinishedAck) -> None:
        key = (msg.user, msg.task_id)
        waiting = self._unacked.get(key)
        if waiting is not None and src in waiting:
            waiting.remove(src)
            if not waiting:
                del self._unacked[key]

    # -- membership -------------------------------------------------------------------
    def on_MemberDown(self, src: str, msg: MemberDown) -> None:
        """Members went down: none of them is told again that a task ended, and every
        role that keeps state of members hears of it."""
        gone = set(msg.addresses)
        self._gone |= gone
        for key in [k for k in self._before_all if k[0] in gone]:
            self._start_clock(key)  # its user went down: no AllStarted will come
        for key in [k for k, waiting in self._unacked.items() if gone.intersection(waiting)]:
            left = [m for m in self._unacked[key] if m not in gone]
            if left:
                self._unacked[key] = left
            else:
                del self._unacked[key]
        for role in self.roles:
            hook = getattr(role, "members_down", None)
            if hook is not None:
                hook(msg.addresses)

    def on_MemberUp(self, src: str, msg: MemberUp) -> None:
        """A server joined (this one, too: a newcomer counts itself): every role that
        counts the cluster's servers hears of it, and counts each server once."""
        for role in self.roles:
            hook = getattr(role, "member_up", None)
            if hook is not None:
                hook(msg.server, msg.capacity, msg.attributes)

    def on_Allocate(self, src: str, msg: Allocate) -> None:
        """A central scheduler's order (thesis 4.1)."""
        if not self.start_task(msg.user, msg.task_id, msg.demand, msg.dominant_share, msg.duration, msg.gain, scheduler=src, together=msg.together):
            self.send(src, AllocateRejected(msg.user, msg.task_id))

