"""Probes (thesis 4.2, algorithm 4): Sparrow-like, with users' global dominant shares.

The gateway sends every task to a server picked uniformly at random. That server keeps
the task in its list and sends a copy to the two of its P fixed random neighbours with
the lowest CPU load (eq. 4.1; power of two choices). Each allocation tick a server
proposes, of the tasks in its list, the one with the lowest dominant share that fits on
it. The first proposal the user accepts wins; the others are declined and release their
reservation.

Choices where the thesis is silent: the P neighbours are drawn from the server's Cyclon
view when allocation starts and then kept ("a random graph", static out-degree); loads
are asked for each tick while the server has tasks waiting; a list keeps only a user's
newest task.
"""

from __future__ import annotations

from dgdrf.nodes.protocol import TaskRequest
from dgdrf.nodes.gateway import RandomRouting, Routing
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.policies.distributed import DistributedPolicy
from dgdrf.policies.local import TaskDesk
from dgdrf.policies.messages import ForwardTask, LoadReply, LoadRequest
from dgdrf.runtime.actor import Role


class ProbeScheduler(Role):
    """Algorithm 4 on one server."""

    def __init__(self, desk: TaskDesk, sampler: Cyclon, neighbors: int, copies: int = 2) -> None:
        self.desk = desk
        self.sampler = sampler
        self.P = neighbors
        self.copies = copies
        self.tasks: dict[str, tuple[int, list[float], float]] = {}  # user -> newest task
        self.neighbours: list[str] | None = None
        self.loads: dict[str, float] = {}

    def _add(self, user: str, task_id: int, demand: list[float], share: float) -> bool:
        held = self.tasks.get(user)
        if held is not None and held[0] >= task_id:
            return False
        self.tasks[user] = (task_id, demand, share)
        return True

    def on_TaskRequest(self, src: str, msg: TaskRequest) -> None:
        if self._add(msg.user, msg.task_id, msg.demand, msg.dominant_share) and self.neighbours:
            lowest = sorted(self.neighbours, key=lambda n: (self.loads.get(n, 0.0), self.neighbours.index(n)))[: self.copies]
            for n in lowest:
                self.actor.send(n, ForwardTask(msg.user, msg.task_id, msg.demand, msg.dominant_share))

    def on_ForwardTask(self, src: str, msg: ForwardTask) -> None:
        self._add(msg.user, msg.task_id, msg.demand, msg.dominant_share)

    def on_tick(self) -> None:
        if self.neighbours is None:
            self.neighbours = self.sampler.sample(self.P)
        if not self.tasks:
            return
        for n in self.neighbours:
            self.actor.send(n, LoadRequest())
        for user, (task_id, demand, share) in sorted(self.tasks.items(), key=lambda kv: kv[1][2]):
            if self.desk.propose(user, task_id, demand, share):
                del self.tasks[user]
                return

    def on_LoadRequest(self, src: str, msg: LoadRequest) -> None:
        self.actor.send(src, LoadReply(self.actor.load()))

    def on_LoadReply(self, src: str, msg: LoadReply) -> None:
        self.loads[src] = msg.load


class Probes(DistributedPolicy):
    name = "probes"
    description = "random server per task, copies to the two least-loaded neighbours (thesis 4.2, alg. 4)"

    def gateway_routing(self) -> Routing:
        return RandomRouting()

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        roles.append(ProbeScheduler(desk, cyclon, self.options.neighbors))
        return roles
