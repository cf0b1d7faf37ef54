"""Message types of the task-allocation protocol (thesis alg. 3 and ch. 4).

A user asks the gateway for a server (ServerRequest/ServerReply), submits its next task
there (TaskRequest), accepts exactly one proposal per task id (Proposal/Accept, or
Decline for any other), and learns that the task runs (TaskAllocated). Servers register
their capacity with a scheduler (RegisterServer) and are told to place a task
(Allocate; AllocateRejected if it does not fit after all).

Vectors travel as lists of floats; ids as strings. Tags 1-19 belong to this protocol.
"""

from __future__ import annotations

from dgdrf.runtime.messages import Message, message


@message(1)
class ServerRequest(Message):
    """User -> gateway: where should my next task go?"""

    task_id: int


@message(2)
class ServerReply(Message):
    """Gateway -> user: submit task ``task_id`` to ``server``."""

    task_id: int
    server: str


@message(3)
class TaskRequest(Message):
    """User -> server: one task (alg. 3: user, id, demand, dominant share)."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float


@message(4)
class Proposal(Message):
    """Scheduler -> user: task ``task_id`` can run on ``server``."""

    task_id: int
    server: str


@message(5)
class Accept(Message):
    """User -> scheduler: yes, place task ``task_id`` (sent once per task id)."""

    task_id: int


@message(6)
class Decline(Message):
    """User -> scheduler: no (a proposal for a task already accepted elsewhere)."""

    task_id: int


@message(7)
class Allocate(Message):
    """Scheduler -> resource node: start this task of ``user`` on you."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float


@message(8)
class AllocateRejected(Message):
    """Resource node -> scheduler: the task did not fit (the scheduler's view was stale)."""

    user: str
    task_id: int


@message(9)
class TaskAllocated(Message):
    """Resource node -> user: task ``task_id`` runs; your new global dominant share."""

    task_id: int
    server: str
    dominant_share: float


@message(10)
class RegisterServer(Message):
    """Resource node -> scheduler: I exist, with this capacity vector."""

    capacity: list[float]


@message(11)
class MemberDown(Message):
    """Bootstrap -> gateway, servers, collector: these nodes stopped answering (network
    mode's failure detector); their resources and their users' home are gone."""

    addresses: list[str]


@message(12)
class HomeMoved(Message):
    """Gateway -> user: your home server ``old`` is down; send your tasks to ``new``."""

    old: str
    new: str
