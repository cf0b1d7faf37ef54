"""Message types of the distributed policies (tags 40-59)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from dgdrf.model.workload import TaskTraits
from dgdrf.nodes.protocol import task_traits
from dgdrf.runtime.messages import Message, message
from dgdrf.runtime.roles import SERVER


@message(40, senders=(SERVER,), cost="allocation")
class ForwardTask(Message):
    """Probes (alg. 4): a copy of a user's task for a low-load neighbour's list (with
    the task's traits: weight, duration, constraint; nodes/protocol.py TaskRequest)."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float
    weight: float = 1.0
    duration: float = 0.0
    eligible: list[str] = field(default_factory=list)
    requires: dict[str, Any] = field(default_factory=dict)

    def traits(self) -> TaskTraits:
        """The copied task's traits (a thesis task's: CLASSIC)."""
        return task_traits(self.weight, self.duration, self.eligible, self.requires, 0.0, 0)


@message(41, senders=(SERVER,), cost="allocation")
class WalkTask(Message):
    """Random walk (thesis 4.3): place this task here if it fits (and its constraint
    admits this server), else pass it on."""

    user: str
    task_id: int
    demand: list[float]
    dominant_share: float
    home: str
    ttl: int
    walk: int  # the home's number for this walk: with ``ttl``, names one hop of it
    weight: float = 1.0
    duration: float = 0.0
    eligible: list[str] = field(default_factory=list)
    requires: dict[str, Any] = field(default_factory=dict)

    def traits(self) -> TaskTraits:
        """The walking task's traits (a thesis task's: CLASSIC)."""
        return task_traits(self.weight, self.duration, self.eligible, self.requires, 0.0, 0)


@message(42, senders=(SERVER,), cost="allocation")
class WalkFailed(Message):
    """Random walk: the task found no room within its hop budget."""

    user: str
    task_id: int


@message(43, senders=(SERVER,), cost="neighbour_state")
class ShareRequest(Message):
    """DDRF (alg. 5): what is your users' minimum global dominant share?"""


@message(44, senders=(SERVER,), infinite=("share",), cost="neighbour_state")
class ShareReply(Message):
    """DDRF: my users' minimum global dominant share (inf without users)."""

    share: float


@message(45, senders=(SERVER,), cost="neighbour_state")
class LoadRequest(Message):
    """Probes: how loaded are you (CPU used / capacity, eq. 4.1)?"""


@message(46, senders=(SERVER,), cost="neighbour_state")
class LoadReply(Message):
    """Probes: my CPU load (and my attributes, if I have any: which constrained tasks
    I may run)."""

    load: float
    attributes: dict[str, Any] = field(default_factory=dict)


@message(47, senders=(SERVER,))
class WalkAck(Message):
    """Random walk: the hop with ``ttl`` hops left of walk ``walk`` of ``home`` arrived
    (the sender sends it again, to another peer, until this comes)."""

    home: str
    walk: int
    ttl: int


@message(48, senders=(SERVER,), cost="allocation")
class RoomFreed(Message):
    """A server a task's walk passed for want of room, to the task's home, once a task
    ended there and the walked task fits now (policies/local.py, room notices)."""

    user: str
    task_id: int


@message(49, senders=(SERVER,), cost="neighbour_state")
class UserDigest(Message):
    """d-psdsf (policies/user_directory.py): the waiting tasks a server knows of, one
    column a field: per task its user, its home, [task id, the share its user reported
    (x_n / φ_n), weight, duration, age in seconds] (``numbers``), its demand and its
    constraint (``eligible``, ``requires``); ``reply``: the answer of a push-pull
    exchange (not answered again)."""

    users: list[str]
    homes: list[str]
    numbers: list[list[float]]
    demands: list[list[float]]
    eligible: list[list[str]]
    requires: list[dict[str, Any]]
    reply: bool = False


# -- instances of jobs of parts: found, reserved, then committed (policies/gang_desk.py) --
@message(50, senders=(SERVER,), cost="allocation")
class GangHop(Message):
    """A walk that looks for servers for the tasks of an instance its coordinator has no
    room for: note here those of ``tasks`` (indices in the instance, from ``task_id``)
    that fit beside what this try noted here already and whose constraint admits this
    server, and pass the rest on. Nothing is reserved yet."""

    coordinator: str
    user: str
    task_id: int  # the instance's first task
    attempt: int  # the coordinator's number for this try: with ``ttl``, names one hop
    ttl: int
    tasks: list[int]
    demands: list[list[float]]
    eligible: list[list[str]]
    requires: list[dict[str, Any]]
    #: hops in a row that reached a server already in ``rooms``
    stale: int = 0
    #: the rooms of the servers the walk reached (the latest 64): id, free and whole
    #: capacity, attributes; with a GangRefused, the coordinator packs the instance on them
    room_servers: list[str] = field(default_factory=list)
    room_free: list[list[float]] = field(default_factory=list)
    room_capacity: list[list[float]] = field(default_factory=list)
    room_attributes: list[dict[str, Any]] = field(default_factory=list)


@message(51, senders=(SERVER,))
class GangHopAck(Message):
    """The hop with ``ttl`` hops left of try ``attempt`` of ``coordinator`` arrived."""

    coordinator: str
    attempt: int
    ttl: int


@message(52, senders=(SERVER,), cost="allocation")
class GangFound(Message):
    """To the coordinator: these tasks of the instance fit here (sent again until
    answered)."""

    user: str
    task_id: int
    attempt: int
    tasks: list[int]


@message(53, senders=(SERVER,), cost="allocation")
class GangFoundAck(Message):
    """The coordinator's answer to a GangFound: it takes ``keep`` here; ``drop`` went
    elsewhere (a hop sent twice can find a task twice) or the try is over."""

    user: str
    task_id: int
    attempt: int
    keep: list[int]
    drop: list[int]
    over: bool = False  # the try no longer looks for servers: a later hop of it ends here


@message(54, senders=(SERVER,), cost="allocation")
class GangRefused(Message):
    """To the coordinator: the walk ended with tasks left (out of hops, or it kept
    reaching servers it had seen), with the rooms it saw (as :class:`GangHop`'s)."""

    user: str
    task_id: int
    attempt: int
    room_servers: list[str] = field(default_factory=list)
    room_free: list[list[float]] = field(default_factory=list)
    room_capacity: list[list[float]] = field(default_factory=list)
    room_attributes: list[dict[str, Any]] = field(default_factory=list)


@message(55, senders=(SERVER,), cost="allocation")
class GangCommit(Message):
    """The user accepted the instance: start these tasks (from their reservations),
    each with the share it adds (``gains``); sent again until GangDone."""

    user: str
    task_id: int
    attempt: int
    tasks: list[int]
    demands: list[list[float]]
    dominant_share: float
    duration: float
    gains: list[float]


@message(56, senders=(SERVER,), cost="allocation")
class GangRelease(Message):
    """The try is over without the instance (declined, unanswered, a task found no
    room): give back whatever this try holds here; sent again until GangDone."""

    user: str
    task_id: int
    attempt: int


@message(57, senders=(SERVER,), cost="allocation")
class GangDone(Message):
    """A GangCommit or GangRelease of try ``attempt`` was carried out."""

    user: str
    task_id: int
    attempt: int


@message(58, senders=(SERVER,), cost="allocation")
class GangReserve(Message):
    """Every task of the instance has a server: reserve these here (sent again until
    GangReserved)."""

    user: str
    task_id: int
    attempt: int
    tasks: list[int]
    demands: list[list[float]]


@message(59, senders=(SERVER,), cost="allocation")
class GangReserved(Message):
    """The answer to a GangReserve: ``held`` are reserved here, ``refused`` did not fit
    (any more) or came after the try was over."""

    user: str
    task_id: int
    attempt: int
    held: list[int]
    refused: list[int]
