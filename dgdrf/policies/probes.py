"""Probes (thesis 4.2, algorithm 4): Sparrow-like, with users' global dominant shares.

The gateway sends every task to a server picked uniformly at random. That server keeps
the task in its list and sends a copy to the two of its P fixed random neighbours with
the lowest CPU load (eq. 4.1; power of two choices). Each allocation tick a server
proposes, of the tasks in its list, the one with the lowest dominant share that fits on
it. The first proposal the user accepts wins; the others are declined and release their
reservation.

A task can only run on a server that holds a copy of it, so a task whose copies all sit
on servers where it no longer fits never runs, although it may fit elsewhere: "If a user
is selected to allocate on an already full server, and all its neighbors are full as
well, that task and user cannot allocate a task anymore" (thesis 4.2). The algorithm
therefore does not reach saturation by construction; the run ends ``stranded`` (the
Collector, told which servers hold which copies, sees that every user whose next task
still fits somewhere is in that state; nodes/collector.py).

Choices where the thesis is silent: the P neighbours are drawn from the server's Cyclon
view when allocation starts and then kept ("a random graph", static out-degree), topped
up while the view offers fewer than P (a tiny cluster); a task that arrives before the
neighbours are drawn (users submit during the warm-up) is copied to them as soon as they
are; loads are asked for each tick while the server has tasks waiting; a list keeps only
a user's newest task; a copy whose proposal was not accepted goes back into the list.

Jobs (dgdrf/model/workload.py): the gateway sends a constrained task only to a server
its constraint admits and whose capacity can hold it (nodes/gateway.py), and copies go
only to neighbours its constraint admits (their attributes come with their loads), the
two least loaded of those; tasks are ordered by their users' weighted shares. When tasks
end, room comes back on the servers holding a copy, so a task waits there rather than
being stranded.

Jobs of parts (model/gangs.py): a copy is a probe of one server, and an instance needs
several, so the server the gateway sends an instance's request to holds it alone (no
copies) and places it whole when it is the lowest-share task of its list, as a home of
ddrf does (policies/gang_desk.py: what fits here, the rest found by a walk, every task
reserved, the whole instance proposed, then committed). A try that fails (no room found)
puts the instance back in the list after a backoff (:data:`~dgdrf.policies.ddrf.STUCK_FIRST_S`,
doubling up to :data:`~dgdrf.policies.ddrf.STUCK_ENDING_MAX_S`, spread per user and try);
one declined or raced is back at once. An instance is never stranded: its holder walks
for room (the collector is not told it is held, so a run with one waiting that fits
somewhere does not end ``stranded``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dgdrf.model.workload import CLASSIC, TaskTraits
from dgdrf.policies.gang_desk import instance_request_ok
from dgdrf.nodes.protocol import Idle, IdleNoted, TaskQueued, TaskRequest, trait_fields
from dgdrf.nodes.gateway import RandomRouting, Routing
from dgdrf.overlay.sampling import PeerSampling
from dgdrf.policies.distributed import DistributedPolicy
from dgdrf.policies.ddrf import STUCK_ENDING_MAX_S, STUCK_FIRST_S
from dgdrf.policies.local import TaskDesk, tie_break
from dgdrf.policies.messages import ForwardTask, LoadReply, LoadRequest
from dgdrf.policies.neighbours import FixedNeighbours
from dgdrf.nodes.ticking import TickingRole
from dgdrf.runtime.actor import Role

if TYPE_CHECKING:
    from dgdrf.nodes.server import Server

Task = tuple[int, list[float], float, TaskTraits]  # (task id, demand, the user's dominant share, its traits)


class ProbeScheduler(TickingRole):
    """Algorithm 4 on one server."""

    actor: Server  # hosted by a resource node

    def __init__(self, desk: TaskDesk, sampler: PeerSampling, neighbors: int, copies: int = 2) -> None:
        self.desk = desk
        self.copies = copies
        self.tasks: dict[str, Task] = {}  # user -> newest task
        self.fixed = FixedNeighbours(lambda: sampler.sample(neighbors), neighbors)
        self.loads: dict[str, float] = {}
        self.attributes: dict[str, dict] = {}  # neighbour -> its attributes (from its LoadReply)
        self._unforwarded: list[str] = []  # users whose task came before the neighbours were drawn
        self._proposed: dict[str, Task] = {}  # user -> the task of an unanswered proposal
        #: instances of jobs of parts held here (user -> its request; in ``tasks`` too,
        #: or out in a try), and those waiting out a failed try's backoff
        self.instances: dict[str, TaskRequest] = {}
        self._backoff: dict[str, float] = {}  # user -> its last backoff (seconds)
        self._tries = 0
        desk.on_resolved = self._resolved
        desk.on_walk_failed = self._instance_failed

    def _add(self, user: str, task_id: int, demand: list[float], share: float, traits: TaskTraits = CLASSIC) -> bool:
        held = self.tasks.get(user)
        out = self._proposed.get(user)
        if (held is not None and held[0] >= task_id) or (out is not None and out[0] >= task_id):
            return False  # a copy we hold already, or an older one (duplicates, late copies)
        if held is not None:
            self.actor.report("unheld", user=user, task_id=held[0])
        self.tasks[user] = (task_id, demand, share, traits)
        self.actor.report("held", user=user, task_id=task_id)
        return True

    def on_TaskRequest(self, src: str, msg: TaskRequest) -> None:
        if msg.parts:
            self._hold_instance(src, msg)
            return
        self.actor.send(src, TaskQueued(msg.task_id))
        if not self._add(msg.user, msg.task_id, msg.demand, msg.dominant_share, msg.traits()):
            return
        if self.neighbours is None:
            self._unforwarded.append(msg.user)
        else:
            self._forward(msg.user)

    def _forward(self, user: str) -> None:
        """Alg. 4, ONREQUEST: a copy to the two neighbours with the lowest load."""
        task = self.tasks.get(user)
        if task is None or not self.neighbours:
            return
        traits = task[3]
        candidates = self.neighbours
        if traits is not CLASSIC and not traits.constraint.unconstrained:  # only where it may run
            candidates = [n for n in candidates if traits.constraint.admits(n, self.attributes.get(n, {}))]
        order = {n: i for i, n in enumerate(candidates)}
        lowest = sorted(candidates, key=lambda n: (self.loads.get(n, 0.0), order[n]))[: self.copies]
        for n in lowest:
            if traits is CLASSIC:
                self.actor.send(n, ForwardTask(user, task[0], task[1], task[2]))
            else:
                self.actor.send(n, ForwardTask(user, task[0], task[1], task[2], *trait_fields(traits)[:4]))

    def _hold_instance(self, src: str, msg: TaskRequest) -> None:
        """An instance's request: held here alone (no copies), newest per user."""
        if not instance_request_ok(self.actor, self.desk.gangs, src, msg):
            return
        self.actor.send(src, TaskQueued(msg.task_id))
        held = self.instances.get(msg.user)
        if held is not None and held.task_id >= msg.task_id:
            return  # a repeat
        self.instances[msg.user] = msg
        self._backoff.pop(msg.user, None)
        self.tasks[msg.user] = (msg.task_id, list(msg.demand), msg.dominant_share, msg.traits())

    def _try_instance(self, user: str, task: Task) -> bool:
        """The lowest-share task of the list is an instance: a try at it (False: it cannot
        start, no room here and nowhere to walk; it waits out a backoff)."""
        req = self.instances[user]
        if self.desk.gangs is None or not self.desk.ready():
            return False
        if not self.desk.gangs.place(user, req, task[2]):
            self._wait(user, task)
            return False
        self._proposed[user] = self.tasks.pop(user)
        return True

    def _instance_failed(self, user: str, task_id: int) -> None:
        """A try at an instance found no room: back in the list after a backoff."""
        task = self._proposed.get(user)
        if task is not None and task[0] == task_id:
            del self._proposed[user]
            self._wait(user, task)

    def _wait(self, user: str, task: Task) -> None:
        self.tasks.pop(user, None)
        self._tries += 1
        wait = min(STUCK_ENDING_MAX_S, 2 * self._backoff[user]) if user in self._backoff else STUCK_FIRST_S
        self._backoff[user] = wait
        self.actor.after(wait * (1.0 + tie_break(f"{user}/{task[0]}/{self._tries}")), self._back, user, task)

    def _back(self, user: str, task: Task) -> None:
        req = self.instances.get(user)
        if req is not None and req.task_id == task[0] and user not in self.tasks and user not in self._proposed:
            self.tasks[user] = task

    def on_ForwardTask(self, src: str, msg: ForwardTask) -> None:
        self._add(msg.user, msg.task_id, msg.demand, msg.dominant_share, msg.traits())

    @property
    def neighbours(self) -> list[str] | None:
        return self.fixed.members

    def _draw_neighbours(self) -> None:
        """The fixed random neighbours (policies/neighbours.py); tasks that came before
        they were drawn are copied to them now."""
        self.fixed.draw()
        if self._unforwarded and self.neighbours:
            users, self._unforwarded = self._unforwarded, []
            for user in dict.fromkeys(users):
                self._forward(user)

    def on_tick(self) -> None:
        if not self.fixed.complete():
            self._draw_neighbours()
        if not self.tasks:
            return
        for n in self.neighbours or ():
            self.actor.send(n, LoadRequest())
        for user, (task_id, demand, share, traits) in sorted(self.tasks.items(), key=lambda kv: kv[1][2]):
            held = self.instances.get(user)
            if held is not None and held.task_id == task_id:
                if self._try_instance(user, (task_id, demand, share, traits)):
                    return
                continue
            if self.desk.propose(user, task_id, demand, share, traits):
                self._proposed[user] = self.tasks.pop(user)
                return

    def _resolved(self, user: str, task_id: int, outcome: str) -> None:
        """A proposal was answered or expired: its copy is gone if accepted or declined
        (the task runs elsewhere), back in the list if the user never answered."""
        task = self._proposed.get(user)
        if task is None or task[0] != task_id:
            return
        del self._proposed[user]
        held = self.instances.get(user)
        if held is not None and held.task_id == task_id:  # an instance, held here alone
            if outcome == "accepted":
                del self.instances[user]
                self._backoff.pop(user, None)
            elif user not in self.tasks:
                self.tasks[user] = task  # declined (a race, a server gone) or unanswered: tried again
            return
        if outcome == "expired" and user not in self.tasks:
            self.tasks[user] = task  # still held (its "held" report stands)
        else:
            self.actor.report("unheld", user=user, task_id=task_id)

    def members_down(self, addresses: Sequence[str]) -> None:
        """Neighbours that went down (network mode) are replaced at the next tick: the
        last load a dead one reported would keep it first for every copy. The copies of
        a user gone are dropped (nobody would answer their proposals)."""
        self.fixed.forget(addresses)
        for n in addresses:
            self.loads.pop(n, None)
            held = self.tasks.pop(n, None)
            if self.instances.pop(n, None) is not None:
                continue  # an instance: never reported held
            if held is not None:
                self.actor.report("unheld", user=n, task_id=held[0])

    def on_LoadRequest(self, src: str, msg: LoadRequest) -> None:
        self.actor.send(src, LoadReply(self.actor.load(), self.actor.attributes))

    def on_LoadReply(self, src: str, msg: LoadReply) -> None:
        self.loads[src] = msg.load
        if msg.attributes:
            self.attributes[src] = msg.attributes

    def on_Idle(self, src: str, msg: Idle) -> None:
        """Nothing to do: a server holds copies of tasks, not users waiting (alg. 4)."""
        self.actor.send(src, IdleNoted(msg.task_id))


class Probes(DistributedPolicy):
    name = "probes"
    sweep_cost = 4.0
    servers_track_members = True
    description = "random server per task, copies to the two least-loaded neighbours (thesis 4.2, alg. 4)"
    gangs = True  # the server an instance's request goes to places it whole (module docstring)

    def gateway_routing(self) -> Routing:
        return RandomRouting()

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        roles.append(ProbeScheduler(desk, cyclon, self.options.neighbors))
        return roles
