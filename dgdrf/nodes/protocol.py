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

Tasks that finish (jobs, dgdrf/model/workload.py): the resource node that runs a task
tells the task's user, and the central scheduler that ordered it, when it ends
(TaskFinished, sent again until each acknowledges with TaskFinishedAck); a user with
nothing pending tells the server its tasks go to (Idle, acknowledged by IdleNoted), so
that a scheduler stops waiting for its next task. A task's weight, duration, constraint
and job travel as optional trailing fields (dgdrf/runtime/messages.py), which a task of
the thesis's world leaves out: its frames are what they always were.

Membership (network mode's failure detector and joins; emulation's controls): the
bootstrap tells the members that must know that nodes went down (MemberDown) and that a
server joined, with its capacity and attributes (MemberUp).

Vectors travel as lists of floats; ids as strings. Tags 1-19 and 30 belong to this
protocol.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from dgdrf.model.constraints import Constraint
from dgdrf.model.scenario import MAX_INSTANCE_TASKS, ServerSpec
from dgdrf.model.workload import CLASSIC, Part, TaskTraits
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
    """User -> gateway: where should my next task go? A constrained task says what it
    needs (its demand and constraint), so that a gateway that picks a server per task
    (probes) picks one that can run it."""

    task_id: int
    demand: list[float] = field(default_factory=list)
    eligible: list[str] = field(default_factory=list)
    requires: dict[str, Any] = field(default_factory=dict)


@message(2, senders=(GATEWAY,), cost="allocation")
class ServerReply(Message):
    """Gateway -> user: submit task ``task_id`` to ``server``."""

    task_id: int
    server: str


@message(3, senders=(USER,), cost="allocation")
class TaskRequest(Message):
    """User -> server: one task (alg. 3: user, id, demand, dominant share; the share is
    weighted, G_i / w_i), and its traits (:meth:`traits`): the user's weight, the task's
    duration (0: until the run ends), its constraint, its job's arrival and sequence."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float
    weight: float = 1.0
    duration: float = 0.0
    eligible: list[str] = field(default_factory=list)
    requires: dict[str, Any] = field(default_factory=dict)
    arrival: float = 0.0
    job: int = 0
    #: the user whose job stream this is (UDRF: a user's jobs that compete apart); "": its own
    tenant: str = ""
    #: an instance of a job of parts (model/gangs.py), one entry a part: its demand, its
    #: number of tasks (whole numbers), its constraint; the instance's tasks take the ids
    #: task_id, task_id + 1, ... in part order. Empty: one plain task
    parts: list[list[float]] = field(default_factory=list)
    part_counts: list[float] = field(default_factory=list)
    part_eligible: list[list[str]] = field(default_factory=list)
    part_requires: list[dict[str, Any]] = field(default_factory=list)

    def traits(self) -> TaskTraits:
        return task_traits(self.weight, self.duration, self.eligible, self.requires, self.arrival, self.job)

    def gang(self) -> tuple[Part, ...] | None:
        """The parts of the instance this request is for (None: a plain task). Raises
        ValueError naming what is wrong with them (a sender's mistake, not ours)."""
        if not self.parts:
            return None
        n = len(self.parts)
        if not len(self.part_counts) == len(self.part_eligible) == len(self.part_requires) == n:
            raise ValueError(f"{n} parts but {len(self.part_counts)} counts, {len(self.part_eligible)} eligible, {len(self.part_requires)} requires")
        if any(c != int(c) or c < 1 for c in self.part_counts) or sum(self.part_counts) > MAX_INSTANCE_TASKS:
            raise ValueError(f"part counts must be whole numbers >= 1, at most {MAX_INSTANCE_TASKS} tasks in all, got {self.part_counts[:8]}")
        return tuple(Part(tuple(d), int(c), Constraint.from_wire(e, r)) for d, c, e, r in zip(self.parts, self.part_counts, self.part_eligible, self.part_requires, strict=True))

    @property
    def extended(self) -> bool:
        """Whether the task has traits (a job's, a weight, a constraint): the thesis's
        task has none, and is handled exactly as it always was."""
        return self.traits() is not CLASSIC


@message(4, senders=(SERVER,), cost="allocation")
class Proposal(Message):
    """Scheduler -> user: task ``task_id`` can run on ``server`` (the proposer's
    reference ``ref`` tells this proposal from its other ones of the same task)."""

    task_id: int
    server: str
    ref: int
    #: an instance of a job of parts: the server of each of its tasks (ids task_id, task_id
    #: + 1, ...; ``server`` is the first's). Empty: one plain task on ``server``
    servers: list[str] = field(default_factory=list)


@message(5, senders=(USER,), cost="allocation")
class Accept(Message):
    """User -> scheduler: yes, place task ``task_id`` as proposed in ``ref`` (one
    proposal accepted per task id; the Accept is repeated until the task runs)."""

    task_id: int
    ref: int


@message(6, senders=(USER,), cost="allocation")
class Decline(Message):
    """User -> scheduler: no (a proposal for a task already accepted elsewhere; or, with
    ``unusable``, a proposal of a server the user cannot use, known dead or claimed
    falsely: the task still wants a place, elsewhere)."""

    task_id: int
    ref: int
    unusable: bool = False


@message(7, senders=(SERVER,), cost="allocation")
class Allocate(Message):
    """Scheduler -> resource node: start this task of ``user`` on you (for ``duration``
    seconds, 0: until the run ends; ``gain``: the weighted share it gives its user;
    ``together``: a task of an instance of several, whose duration counts from its
    user's AllStarted)."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float
    duration: float = 0.0
    gain: float = 0.0
    together: bool = False


@message(8, senders=(SERVER,), cost="allocation")
class AllocateRejected(Message):
    """Resource node -> scheduler: the task did not fit (the scheduler's view was stale)."""

    user: str
    task_id: int


@message(9, senders=(SERVER,), cost="allocation")
class TaskAllocated(Message):
    """Resource node -> user: task ``task_id`` runs; your new global dominant share; and
    for a task with traits, the weighted share it adds (``gain``), which the user takes
    off again when it finishes or is lost."""

    task_id: int
    server: str
    dominant_share: float
    gain: float = 0.0


@message(10, senders=(SERVER,), cost="allocation")
class RegisterServer(Message):
    """Resource node -> scheduler: I exist, with this capacity vector (and these
    attributes, which placement constraints match)."""

    capacity: list[float]
    attributes: dict[str, Any] = field(default_factory=dict)


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


@message(16, senders=(SERVER,), cost="allocation")
class TaskFinished(Message):
    """Resource node -> user, and -> the central scheduler that ordered it: task
    ``task_id`` of ``user`` ended and its resources are free (sent again every RETRY_S
    until acknowledged)."""

    user: str
    task_id: int


@message(17, senders=(USER, SERVER), cost="allocation")
class TaskFinishedAck(Message):
    """User or scheduler -> resource node: your TaskFinished arrived."""

    user: str
    task_id: int


@message(18, senders=(USER,), cost="allocation")
class Idle(Message):
    """User -> the server its tasks go to: nothing of mine is pending now (my tasks
    before ``task_id`` are placed); do not wait for my next task (sent again until
    IdleNoted). A TaskRequest ends it."""

    task_id: int


@message(19, senders=(SERVER,), cost="allocation")
class IdleNoted(Message):
    """Server -> user: your Idle arrived."""

    task_id: int


@message(31, senders=(USER,), cost="allocation")
class AbortTask(Message):
    """User -> resource node: an instance of a job of parts these tasks belong to lost a
    task with a server that went down; stop them if they run, give back their
    reservations, and start none of them later (sent again until TaskAborted). The rest
    of the instance runs again, whole (model/gangs.py)."""

    task_ids: list[int]


@message(32, senders=(SERVER,), cost="allocation")
class TaskAborted(Message):
    """Resource node -> user: your AbortTask was carried out."""

    task_ids: list[int]


@message(33, senders=(USER,), cost="allocation")
class AllStarted(Message):
    """User -> resource node: every task of the instance these tasks belong to runs, so
    their durations count from now (an instance's tasks start together: none ends
    before all of them started, as a gang's workers wait at their first barrier). The
    node sends TaskAllocated again until this comes (model/gangs.py)."""

    task_ids: list[int]


@message(30, senders=(BOOTSTRAP,))
class MemberUp(Message):
    """Bootstrap -> gateway, users, servers, collector: server ``server`` joined the
    cluster, with this capacity vector and these attributes (what a user needs to know
    whether a job it gave up can run again, a gateway to route to it, and a server that
    knows the cluster's capacity C or census exactly to count it)."""

    server: str
    capacity: list[float]
    attributes: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, spec: ServerSpec) -> MemberUp:
        """The news that server ``spec`` joined."""
        return cls(spec.id, [float(c) for c in spec.capacity], dict(spec.attribute_map))

    def spec(self) -> ServerSpec:
        """The server that joined, as a scenario describes one."""
        return ServerSpec(self.server, tuple(float(c) for c in self.capacity), tuple(sorted(self.attributes.items())))


def task_traits(weight: float, duration: float, eligible: list[str], requires: dict[str, Any], arrival: float, job: int) -> TaskTraits:
    """A task's traits from its message fields (the thesis's task: :data:`CLASSIC`)."""
    if job == 0 and weight == 1.0 and duration == 0.0 and not eligible and not requires:
        return CLASSIC
    return TaskTraits(weight, duration, Constraint.from_wire(eligible, requires), arrival, job)


def trait_fields(traits: TaskTraits) -> tuple[float, float, list[str], dict[str, Any], float, int]:
    """The message fields of ``traits`` (weight, duration, eligible, requires, arrival, job)."""
    c = traits.constraint
    return traits.weight, traits.duration, c.wire_eligible(), c.wire_requires(), traits.arrival, traits.job
