"""The User actor: thesis algorithm 3.

A user submits an endless stream of identical tasks, one at a time: ask the gateway for
a server, send the task there, accept exactly one proposal per task id (any other is
declined), and when told the task runs, start over with the next task id. Its global
dominant share is what the allocating side last told it (it travels with each task).
"""

from __future__ import annotations

from collections.abc import Sequence

from dgdrf.nodes.protocol import Accept, Decline, HomeMoved, MemberDown, Proposal, ServerReply, ServerRequest, TaskAllocated, TaskRequest
from dgdrf.runtime.actor import Actor


class User(Actor):
    """One user i with demand vector D_i (thesis 3.1, alg. 3)."""

    def __init__(self, address: str, demand: Sequence[float], gateway: str, start_delay: float = 0.0) -> None:
        super().__init__(address)
        self.start_delay = start_delay
        self.demand = [float(x) for x in demand]
        self.gateway = gateway
        self.task_id = 0  # the task being placed now
        self.accepted_task = -1  # highest task id accepted (alg. 3: acceptedTaskId)
        self.dominant_share = 0.0
        self.running = 0  # tasks known to run
        self.sent_to = ""  # the server the current task was sent to
        self.accepted_from = ""  # who proposed the accepted placement of the current task

    def on_start(self) -> None:
        if self.start_delay > 0:
            self.after(self.start_delay, self._request_server)
        else:
            self._request_server()

    def _request_server(self) -> None:
        self.report("submitted", task_id=self.task_id)
        self.send(self.gateway, ServerRequest(self.task_id))

    def on_ServerReply(self, src: str, msg: ServerReply) -> None:
        if msg.task_id != self.task_id:
            return  # stale reply for a task already placed
        self.sent_to = msg.server
        self._submit()

    def _submit(self) -> None:
        """Send the current task to the server it goes to (``sent_to``)."""
        self.send(self.sent_to, TaskRequest(self.address, self.task_id, self.demand, self.dominant_share))

    def _give_up(self) -> None:
        """The current task's accepted placement was on a server that died, so it never
        started: count it lost and go on with the next task id."""
        self.report("task_lost", task_id=self.task_id, server=self.accepted_from)
        self.task_id += 1
        self.report("submitted", task_id=self.task_id)

    def _placed(self) -> bool:
        """Whether the current task has an accepted placement (its TaskAllocated pending)."""
        return self.accepted_task == self.task_id

    def on_HomeMoved(self, src: str, msg: HomeMoved) -> None:
        """My home server died (gateway, network mode): a task waiting there goes to the
        new home; one placed on the dead home is given up and the next goes there."""
        if self.sent_to != msg.old:
            return
        self.sent_to = msg.new
        if self._placed():
            if self.accepted_from != msg.old:
                return  # placed elsewhere (random walk): its TaskAllocated will come
            self._give_up()
        self._submit()

    def on_MemberDown(self, src: str, msg: MemberDown) -> None:
        """Servers went down (bootstrap, network mode): a task placed on one of them is
        given up, else the user would decline every new proposal of it for ever and under
        DGDRF's strict order its home would hold the whole cluster back. The next task goes
        to the home, unless the home died too: then HomeMoved sends it (in either order)."""
        gone = set(msg.addresses)
        if self._placed() and self.accepted_from in gone:
            self._give_up()
            if self.sent_to not in gone:
                self._submit()

    def on_Proposal(self, src: str, msg: Proposal) -> None:
        if msg.task_id == self.task_id and self.accepted_task < self.task_id:
            self.accepted_task = self.task_id
            self.accepted_from = src
            self.report("accepted", task_id=msg.task_id, server=msg.server)
            self.send(src, Accept(msg.task_id))
        else:
            self.send(src, Decline(msg.task_id))

    def on_TaskAllocated(self, src: str, msg: TaskAllocated) -> None:
        if msg.task_id != self.task_id:
            self.report("stray_allocation", task_id=msg.task_id, server=msg.server)
            return
        self.running += 1
        self.dominant_share = msg.dominant_share
        self.task_id += 1
        self._request_server()
