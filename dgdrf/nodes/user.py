"""The User actor: thesis algorithm 3, made to survive lost and repeated messages.

A user submits an endless stream of identical tasks, one at a time: ask the gateway for
a server, send the task there, accept exactly one proposal per task id (any other is
declined), and when told the task runs, start over with the next task id. Its global
dominant share is what the allocating side last told it (it travels with each task).

Alg. 3 assumes every message arrives. Here each step that waits for an answer sends
again every ``retry`` seconds until the answer comes (:meth:`User._retransmit`): the
ServerRequest until the gateway's ServerReply, the TaskRequest until the server says it
holds the task (TaskQueued) or proposes it, the Accept until the task runs
(TaskAllocated) or the proposer says its proposal no longer stands (Withdrawn). Proposals
carry the proposer's reference, so a repeated proposal is answered as the first was and a
late message about an older one changes nothing. Without loss every answer comes within
a few latencies, so no step is ever sent twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from dgdrf.nodes.protocol import (
    RETRY_S,
    Accept,
    Decline,
    HomeMoved,
    MemberDown,
    Proposal,
    ServerReply,
    ServerRequest,
    TaskAllocated,
    TaskQueued,
    TaskRequest,
    Withdrawn,
)
from dgdrf.runtime.actor import Actor

#: what the current task waits for (the step :meth:`User._retransmit` repeats)
ASKING, SUBMITTED, QUEUED, ACCEPTED = "asking", "submitted", "queued", "accepted"


class User(Actor):
    """One user i with demand vector D_i (thesis 3.1, alg. 3)."""

    def __init__(self, address: str, demand: Sequence[float], gateway: str, start_delay: float = 0.0, retry: float = RETRY_S) -> None:
        super().__init__(address)
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

    def on_start(self) -> None:
        if self.start_delay > 0:
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
        if epoch != self._epoch:
            return  # answered in time
        self.report("retransmitted", step=self.state)
        self._send_step()
        self.after(self.retry, self._retransmit, epoch)

    def _send_step(self) -> None:
        if self.state == ASKING:
            self.send(self.gateway, ServerRequest(self.task_id))
        elif self.state == SUBMITTED:
            self.send(self.sent_to, TaskRequest(self.address, self.task_id, self.demand, self.dominant_share))
        elif self.state == ACCEPTED:
            self.send(self.accepted_from, Accept(self.task_id, self.accepted_ref))

    def _request_server(self) -> None:
        self.report("submitted", task_id=self.task_id)
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

    def _give_up(self) -> None:
        """The current task's accepted placement was on a server that died, so it never
        started: count it lost and go on with the next task id."""
        self.report("task_lost", task_id=self.task_id, server=self.accepted_server or self.accepted_from)
        self.task_id += 1
        self.report("submitted", task_id=self.task_id)

    def _placed(self) -> bool:
        """Whether the current task has an accepted placement (its TaskAllocated pending)."""
        return self.state == ACCEPTED

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
        to the home, unless the home died too: then the gateway names the new one (HomeMoved
        or ServerReply, in either order). A task held, not yet placed, by a server that
        died is asked for again."""
        gone = set(msg.addresses)
        self.down |= gone
        # the proposer (a walk's server, a home) or, under a central scheduler, the
        # server it ordered the task on
        if self._placed() and (self.accepted_from in gone or self.accepted_server in gone):
            self._give_up()
            if self.sent_to in gone:
                self._ask_again()
            else:
                self._submit()
        elif self.state != ASKING and self.sent_to in gone:
            self._ask_again()

    def _ask_again(self) -> None:
        """The current task's server died before placing it: ask the gateway where it goes
        now. With homes (DDRF, DGDRF) the gateway's HomeMoved may come first; either way
        the task goes to the new home once. With a random server per task (probes) this is
        the only way on. A reply naming a server known dead is ignored and asked again."""
        self._step(ASKING)
        self._send_step()

    def on_Proposal(self, src: str, msg: Proposal) -> None:
        if self.down and (msg.server in self.down or src in self.down):
            self.send(src, Decline(msg.task_id, msg.ref))  # a placement on a server known dead
            return
        if msg.task_id == self.task_id and self.state != ACCEPTED:
            self.accepted_from, self.accepted_ref, self.accepted_server = src, msg.ref, msg.server
            self.report("accepted", task_id=msg.task_id, server=msg.server)
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
            self._step(QUEUED)

    def on_TaskAllocated(self, src: str, msg: TaskAllocated) -> None:
        if msg.task_id != self.task_id or self.state != ACCEPTED:
            if msg.task_id > self.task_id or (msg.task_id == self.task_id and self.state != ACCEPTED):
                self.report("stray_allocation", task_id=msg.task_id, server=msg.server)
            return  # else a repeat of an earlier task's (our Accept was sent again)
        self.running += 1
        self.dominant_share = msg.dominant_share
        self.task_id += 1
        self._request_server()
