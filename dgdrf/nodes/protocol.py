"""Message types of the task-allocation protocol (thesis alg. 3 and ch. 4).

A user asks the gateway for a server (ServerRequest/ServerReply), submits its next task
there (TaskRequest, acknowledged by TaskQueued), accepts exactly one proposal per task id
(Proposal/Accept, or Decline for any other), and learns that the task runs
(TaskAllocated). Servers register their capacity with a scheduler (RegisterServer,
acknowledged by Registered) and are told to place a task (Allocate; AllocateRejected if
it does not fit after all).

Messages can be lost or repeated (``--loss``, ``--duplicate``; a network's connections
drop): every step that waits for an answer sends again after :data:`RETRY_S` seconds
until it comes, and every handler recognises a repeat. A proposal carries its proposer's
reference number (``ref``), echoed by Accept, Decline and Withdrawn, so that an answer to
an older proposal of the same task is never taken for an answer to the current one.

Vectors travel as lists of floats; ids as strings. Tags 1-19 belong to this protocol.
"""

from __future__ import annotations

from dgdrf.runtime.messages import Message, message
from dgdrf.runtime.roles import BOOTSTRAP, GATEWAY, SERVER, USER

#: Raised whenever a change alters what the protocol does (and so every policy's results),
#: so that runs recorded before are told apart (bench/staleness.py: revision_params). 2: steps
#: sent again until answered, TaskQueued / Registered / WalkAck / Withdrawn, proposal refs
#: (1: records without the key, alg. 3 as written: nothing repeated). 3: stuck users are
#: tried again by background walks (policies/ddrf.py), not by re-entering the gradient.
PROTOCOL_REVISION = 3

#: Seconds a protocol step waits for its answer before sending again: 50 times the
#: default emulated latency's maximum (5 ms), several loopback round trips; without loss
#: no step is ever repeated.
RETRY_S = 0.25
#: Seconds a proposal holds its reservation without an answer (sent again every
#: RETRY_S meanwhile): the user is taken for gone, the capacity given back.
PROPOSAL_TIMEOUT_S = 2.0


@message(1, senders=(USER,), cost="allocation")
class ServerRequest(Message):
    """User -> gateway: where should my next task go?"""

    task_id: int


@message(2, senders=(GATEWAY,), cost="allocation")
class ServerReply(Message):
    """Gateway -> user: submit task ``task_id`` to ``server``."""

    task_id: int
    server: str


@message(3, senders=(USER,), cost="allocation")
class TaskRequest(Message):
    """User -> server: one task (alg. 3: user, id, demand, dominant share)."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float


@message(4, senders=(SERVER,), cost="allocation")
class Proposal(Message):
    """Scheduler -> user: task ``task_id`` can run on ``server`` (the proposer's
    reference ``ref`` tells this proposal from its other ones of the same task)."""

    task_id: int
    server: str
    ref: int


@message(5, senders=(USER,), cost="allocation")
class Accept(Message):
    """User -> scheduler: yes, place task ``task_id`` as proposed in ``ref`` (one
    proposal accepted per task id; the Accept is repeated until the task runs)."""

    task_id: int
    ref: int


@message(6, senders=(USER,), cost="allocation")
class Decline(Message):
    """User -> scheduler: no (a proposal for a task already accepted elsewhere)."""

    task_id: int
    ref: int


@message(7, senders=(SERVER,), cost="allocation")
class Allocate(Message):
    """Scheduler -> resource node: start this task of ``user`` on you."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float


@message(8, senders=(SERVER,), cost="allocation")
class AllocateRejected(Message):
    """Resource node -> scheduler: the task did not fit (the scheduler's view was stale)."""

    user: str
    task_id: int


@message(9, senders=(SERVER,), cost="allocation")
class TaskAllocated(Message):
    """Resource node -> user: task ``task_id`` runs; your new global dominant share."""

    task_id: int
    server: str
    dominant_share: float


@message(10, senders=(SERVER,), cost="allocation")
class RegisterServer(Message):
    """Resource node -> scheduler: I exist, with this capacity vector."""

    capacity: list[float]


@message(11, senders=(BOOTSTRAP,), max_frame=1 << 20)
class MemberDown(Message):
    """Bootstrap -> gateway, servers, collector: these nodes stopped answering (network
    mode's failure detector); their resources and their users' home are gone."""

    addresses: list[str]


@message(12, senders=(GATEWAY,))
class HomeMoved(Message):
    """Gateway -> user: your home server ``old`` is down; send your tasks to ``new``."""

    old: str
    new: str


@message(13, senders=(SERVER,))
class Withdrawn(Message):
    """Scheduler -> user: the proposal ``ref`` you accepted no longer stands (it expired
    before your Accept came, or the node refused the task): wait for another."""

    task_id: int
    ref: int


@message(14, senders=(SERVER,))
class TaskQueued(Message):
    """Server -> user: I hold task ``task_id``; I will propose it when it is its turn."""

    task_id: int


@message(15, senders=(SERVER, GATEWAY))
class Registered(Message):
    """Scheduler or gateway -> resource node: your RegisterServer arrived."""
