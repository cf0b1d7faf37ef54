"""Instances of jobs of parts placed whole by a distributed policy: find a server for
every task, reserve them all, propose, commit (model/gangs.py: an instance is all of its
tasks or none; Tahir et al. §II-A's complex jobs; the gangs of Kueue, Volcano, Slurm).

The home server that places an instance, its *coordinator*, does what the thesis's home
does with one task (4.3), in three steps:

1. *Find*: it notes here every task that fits beside those noted before it and whose
   part's constraint admits this server, in first-fit-decreasing order (tasks of parts
   with a constraint first, those have fewer servers to go to; then the larger demands
   first, by the sum of their components); the tasks left go on a random walk
   (:class:`~dgdrf.policies.messages.GangHop`) that notes at each server it reaches those
   that fit there (beside what the same try noted there before) and passes the rest on,
   until it has reached :data:`ROOMS` servers (or keeps reaching those it has seen); then
   the coordinator packs the instance on the rooms the walk saw (model/gangs.py).
   A server that notes tasks tells the coordinator (GangFound, sent until answered); the
   coordinator takes the first server to find each task (a hop sent twice, after a lost
   acknowledgement, can find a task twice). Nothing is reserved while the walk goes on.
2. *Reserve*: once every task has a server, the coordinator reserves its own and asks
   each other server to reserve its tasks (GangReserve, sent until GangReserved).
3. *Propose and commit*: once every task is held, it proposes the whole instance to the
   user, naming each task's server (one Proposal, as a central scheduler's). The user's
   Accept commits it: each server starts its tasks from their reservations (GangCommit,
   sent until GangDone) and tells the user itself (TaskAllocated).

A task that no longer fits when it is reserved, a Decline, a proposal left unanswered, a
walk that runs out of hops (GangRefused) or a try longer than a walk's budget ends the
try: every reservation is given back (GangRelease, sent until GangDone; a server
remembers the tries it gave back, so a late GangReserve of one reserves nothing) and the
home takes the task for failed (its user stuck, tried again after a backoff that differs
per user and try: policies/ddrf.py).

Like the centralized first fit (model/gangs.py), this can miss a packing that exists;
noting in part order did so on two servers where the scenario's check had found one (a
part for either server taken first on the one the other part needed), which stalled runs.

Why find before reserving: a walk that reserved as it went would hold part of an
instance for as long as it walks, and two instances that each hold what the other needs
wait for each other until both walks give up, then try again at the same moment: the
first version of this protocol did so and stalled runs of two to four servers. Reserved
only once found, an instance holds its servers for a round trip and its proposal.

Nothing is held for ever: a reservation is given back by its coordinator (reliably), by
its server when the coordinator is reported down, or after :data:`HOLD_LEASE_S` without
news (a backstop: a live coordinator ends every try within a walk's budget and a
proposal's timeout, far shorter).

What a reservation costs is counted as the central scheduler's is (the run's
``reservations``: whole instances reserved and given back, tries given back with part of
the instance held, and the resource-seconds all those held). The messages are the walk
and its acknowledgements, and per server other than the coordinator that runs tasks of
the instance one GangFound and its answer, one GangReserve and its answer, and one
GangCommit (or GangRelease) and GangDone; the run's ``messages.by_type`` counts them.

Reading: a task of the instance adds to its user's share what a task of its part's
demand adds (its dominant share over the weight, or the meter's gain for that part), so
a user's share counts its whole bundle, as the central ledger does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from dgdrf.model.constraints import Constraint
from dgdrf.model.gangs import PartSlots, pack
from dgdrf.model.resources import natural_key
from dgdrf.model.workload import TaskTraits
from dgdrf.nodes.protocol import TaskRequest
from dgdrf.overlay.sampling import PeerSampling
from dgdrf.policies.local import HopRelay, Proposed, TaskDesk
from dgdrf.policies.messages import (
    GangCommit,
    GangDone,
    GangFound,
    GangFoundAck,
    GangHop,
    GangHopAck,
    GangRefused,
    GangRelease,
    GangReserve,
    GangReserved,
)
from dgdrf.runtime.actor import Actor, Role
from dgdrf.runtime.messages import Message

if TYPE_CHECKING:
    from dgdrf.nodes.server import Server

#: a server gives back what it holds for an instance after this long without a commit
#: or a release (only a coordinator that went silent without being reported down leaves
#: one that long)
HOLD_LEASE_S = 120.0
#: how many recently handled hops, and tries given back or committed, a server remembers
_REMEMBERED = 4096
#: a walk with tasks left ends once it has reached this many servers (the coordinator
#: then packs the instance on their rooms, or tries again later): a walk of the thesis's
#: 1,024 hops cost a waiting instance a thousand messages a try
ROOMS = 64
#: ... or once it has reached this many servers in a row that it had seen, and at least
#: as many as it has seen (on a small cluster: it has likely seen them all)
STALE_HOPS = 8

FINDING, RESERVING, PROPOSED, COMMITTED = "finding", "reserving", "proposed", "committed"

#: a try as a server knows it: (coordinator, user, first task id, try number)
TryKey = tuple[str, str, int, int]


def _hop_key(hop: GangHop) -> tuple[str, int, int]:
    return (hop.coordinator, hop.attempt, hop.ttl)


def _next_hop(msg: GangHop) -> GangHop:
    return dataclasses.replace(msg, ttl=msg.ttl - 1)


@dataclass
class GangPlan:
    """One try of a coordinator at an instance: its tasks (task ids ``task_id`` ..
    ``task_id + len(demands) - 1``, parts in order), the server found for each, which
    of them hold their task and since when."""

    user: str
    task_id: int
    attempt: int
    demands: list[list[float]]
    constraints: list[Constraint]
    traits: TaskTraits
    share: float
    found: list[str | None]
    held: list[bool]
    since: list[float]
    phase: str = FINDING
    #: servers that noted room for this try (told to forget it if it goes elsewhere)
    noters: set[str] = field(default_factory=set)

    def tasks_of(self, server: str) -> list[int]:
        return [k for k, f in enumerate(self.found) if f == server]

    def servers(self) -> list[str]:
        """The servers found, each once, in task order."""
        return list(dict.fromkeys(f for f in self.found if f is not None))


@dataclass
class Noted:
    """Tasks of one try this server found room for (index -> demand), and whether the
    coordinator answered."""

    tasks: dict[int, list[float]] = field(default_factory=dict)
    answered: bool = False
    told: int = 0  # GangFounds sent for it (a later one's resending replaces an earlier one's)


def instance_request_ok(actor: Actor, gangs: GangDesk | None, src: str, msg: TaskRequest) -> bool:
    """Whether a request for an instance of a job of parts can be placed by a server of
    ``actor``: a policy that places instances (``gangs``) and parts that make sense; if
    not, it is reported as a bad message and dropped."""
    if gangs is None:
        actor.report("bad_message", type="TaskRequest", src=src, reason="parts: this policy does not place jobs of parts")
        return False
    try:
        parts = msg.gang()
    except ValueError as exc:
        actor.report("bad_message", type="TaskRequest", src=src, reason=f"parts: {exc}"[:300])
        return False
    if parts is not None and any(len(p.demand) != len(msg.demand) for p in parts):
        actor.report("bad_message", type="TaskRequest", src=src, reason="a part's demand does not match the resources")
        return False
    return True


class GangDesk(Role):
    """Places instances of jobs of parts whole for a distributed policy's home scheduler
    (as coordinator), and finds room for and holds tasks of others' instances."""

    actor: Server  # hosted by a resource node

    def __init__(self, desk: TaskDesk, sampler: PeerSampling | None = None) -> None:
        self.desk = desk
        desk.gangs = self
        self.sampler = sampler
        self.retry = desk.retry
        #: how long a try may take to find and reserve every task: a walk's budget (the
        #: rest of the desk's patience is the proposal's)
        self.reserve_patience = desk.walk_patience - desk.proposals.proposal_timeout
        self._attempts = 0
        #: coordinator: tries under way, by (user, first task id)
        self.plans: dict[tuple[str, int], GangPlan] = {}
        #: coordinator: the last instruction of a try to a server (reserve, commit or
        #: release), sent until answered, by (server, user, task id, try)
        self._outbox: dict[tuple[str, str, int, int], Message] = {}
        #: walk hops sent, until acknowledged; hops handled here
        self._relay = HopRelay(self, sampler, self.retry, _hop_key, "gang_walk")
        self._seen: dict[tuple[str, int, int], None] = {}
        #: as a server of others' tries: tasks noted (found room for), tasks reserved, and
        #: tries over (given back or committed: a late GangReserve reserves nothing)
        self.noted: dict[TryKey, Noted] = {}
        self.holds: dict[TryKey, list[int]] = {}
        self._over: dict[TryKey, None] = {}
        #: members reported down: nothing more is sent to them
        self._down: set[str] = set()
        #: whether this server gives room to tasks of a user's instance of these demands
        #: (a policy whose servers offer themselves in an order, policies/dpsdsf.py; None:
        #: room goes to whoever comes first)
        self.room_for: Callable[[str, list[list[float]]], bool] | None = None

    # -- the coordinator ------------------------------------------------------------------
    def place(self, user: str, request: TaskRequest, share: float, first: str | None = None) -> bool:
        """Start a try at the instance ``request`` asks for; False if it cannot start (no
        room here and nowhere to walk). A try already under way for it is left to run."""
        key = (user, request.task_id)
        if key in self.plans:
            return True
        parts = request.gang()
        assert parts  # the home checked the request (policies/ddrf.py)
        actor = self.actor
        self._attempts += 1
        demands = [[float(x) for x in p.demand] for p in parts for _ in range(p.count)]
        constraints = [p.constraint for p in parts for _ in range(p.count)]
        n = len(demands)
        plan = GangPlan(user, request.task_id, self._attempts, demands, constraints, request.traits(), share, [None] * n, [False] * n, [0.0] * n)
        order = sorted(range(n), key=lambda k: (constraints[k].unconstrained, -sum(demands[k])))
        here = [0.0] * len(demands[0])
        giving = self.room_for is None or self.room_for(user, demands)
        for k in order if giving else ():  # first fit here, each task beside those before it
            with_it = [a + b for a, b in zip(here, demands[k], strict=True)]
            if actor.admits(constraints[k]) and actor.fits(with_it):
                plan.found[k], here = actor.address, with_it
        self.plans[key] = plan
        mine = {k: demands[k] for k in range(n) if plan.found[k] is not None}
        if mine:  # what the walk finds here, should it come back, goes beside these
            self.noted[self._own(plan)] = Noted(mine, answered=True)
        actor.after(self.reserve_patience, self._overdue, key, plan.attempt)
        missing = [k for k in order if plan.found[k] is None]
        if not missing:
            self._reserve(plan)
            return True
        hop = GangHop(
            actor.address, user, plan.task_id, plan.attempt, self.desk.walk_ttl, missing, [demands[k] for k in missing],
            [constraints[k].wire_eligible() for k in missing], [constraints[k].wire_requires() for k in missing],
        )
        if not self._walk(hop, first):
            self._end(plan)
            return False
        return True

    def _own(self, plan: GangPlan) -> TryKey:
        return (self.actor.address, plan.user, plan.task_id, plan.attempt)

    def on_GangFound(self, src: str, msg: GangFound) -> None:
        """A server found room for tasks of a try: the first server to find a task keeps
        it; once every task has one, the try reserves them."""
        plan = self.plans.get((msg.user, msg.task_id))
        if plan is None or plan.attempt != msg.attempt:
            self.actor.send(src, GangFoundAck(msg.user, msg.task_id, msg.attempt, [], list(msg.tasks), over=True))
            return
        plan.noters.add(src)
        keep: list[int] = []
        drop: list[int] = []
        for k in msg.tasks:
            if 0 <= k < len(plan.found) and plan.found[k] == src:
                keep.append(k)  # told again: our answer was lost
            elif 0 <= k < len(plan.found) and plan.found[k] is None and plan.phase == FINDING:
                plan.found[k] = src
                keep.append(k)
            else:
                drop.append(k)  # found elsewhere first, the try is past finding, or no such task
        self.actor.send(src, GangFoundAck(msg.user, msg.task_id, msg.attempt, keep, drop, over=plan.phase != FINDING))
        if plan.phase == FINDING and all(f is not None for f in plan.found):
            self._reserve(plan)

    def _reserve(self, plan: GangPlan) -> None:
        """Every task has a server: reserve them, here at once, elsewhere by GangReserve."""
        plan.phase = RESERVING
        self.noted.pop(self._own(plan), None)
        actor = self.actor
        now = actor.now()
        for k in plan.tasks_of(actor.address):
            if not actor.reserve(plan.user, plan.task_id + k, plan.demands[k]):
                self._raced(plan)
                return
            plan.held[k], plan.since[k] = True, now
        servers = plan.servers()
        for server in servers:
            if server != actor.address:
                tasks = plan.tasks_of(server)
                self._send_until_answered(server, GangReserve(plan.user, plan.task_id, plan.attempt, tasks, [plan.demands[k] for k in tasks]))
        for server in plan.noters.difference(servers):  # noted room the packing did not take
            self._send_until_answered(server, GangRelease(plan.user, plan.task_id, plan.attempt))
        self._propose_if_held(plan)

    def on_GangReserved(self, src: str, msg: GangReserved) -> None:
        key = (src, msg.user, msg.task_id, msg.attempt)
        if not isinstance(self._outbox.get(key), GangReserve):
            return  # answered before, or the try is over (its release went out instead)
        del self._outbox[key]
        plan = self.plans.get((msg.user, msg.task_id))
        if plan is None or plan.attempt != msg.attempt or plan.phase != RESERVING:
            return
        now = self.actor.now()
        for k in msg.held:
            if 0 <= k < len(plan.found) and plan.found[k] == src:
                plan.held[k], plan.since[k] = True, now
        if msg.refused:
            self._raced(plan)
        else:
            self._propose_if_held(plan)

    def _propose_if_held(self, plan: GangPlan) -> None:
        """Every task is held: propose the whole instance to its user."""
        if not all(plan.held):
            return
        plan.phase = PROPOSED
        servers = [f for f in plan.found if f is not None]
        self.actor.report("gang_reserved", user=plan.user, task_id=plan.task_id, tasks=len(servers))
        proposed = Proposed(plan.demands[0], plan.share, plan.traits, gang=plan)
        self.desk.proposals.propose(plan.user, plan.task_id, servers[0], proposed, servers)

    def _overdue(self, key: tuple[str, int], attempt: int) -> None:
        plan = self.plans.get(key)
        if plan is not None and plan.attempt == attempt and plan.phase in (FINDING, RESERVING):
            self.actor.report("gang_overdue", user=plan.user, task_id=plan.task_id)
            self._failed(plan)

    def on_GangRefused(self, src: str, msg: GangRefused) -> None:
        """The walk ended with tasks left: pack the whole instance on the rooms it saw and
        this server's, by the centralized policies' first fit (model/gangs.py: parts in
        order, servers in natural id order), and reserve there; if it does not pack,
        the try fails."""
        plan = self.plans.get((msg.user, msg.task_id))
        if plan is None or plan.attempt != msg.attempt or plan.phase != FINDING:
            return
        slots = self._pack(plan, msg)
        if slots is None:
            self._failed(plan)
            return
        plan.found = slots
        self.actor.report("gang_packed", user=plan.user, task_id=plan.task_id, servers=len(set(slots)))
        self._reserve(plan)

    def _pack(self, plan: GangPlan, msg: GangRefused) -> list[str | None] | None:
        """One server per task of ``plan`` by first fit over the rooms of ``msg`` and this
        server's (None: no fit, or rooms that do not add up)."""
        actor = self.actor
        m = len(actor.capacity)
        rooms: dict[str, tuple[list[float], list[float], dict]] = {}
        n = len(msg.room_servers)
        if not n == len(msg.room_free) == len(msg.room_capacity) == len(msg.room_attributes):
            actor.report("bad_message", type="GangRefused", src=msg.room_servers[0] if msg.room_servers else "", reason="rooms of unequal lengths")
            return None
        for server, room, cap, attrs in zip(msg.room_servers, msg.room_free, msg.room_capacity, msg.room_attributes, strict=True):
            if len(room) == m and len(cap) == m:
                rooms[server] = (room, cap, attrs)
        giving = self.room_for is None or self.room_for(plan.user, plan.demands)
        rooms[actor.address] = (actor.free.tolist() if giving else [0.0] * m, actor.capacity.tolist(), actor.attributes)
        ids = sorted(rooms, key=natural_key)
        parts = [PartSlots(np.asarray(d, dtype=np.float64), 1, np.array([c.admits(i, rooms[i][2]) for i in ids], dtype=bool)) for d, c in zip(plan.demands, plan.constraints, strict=True)]
        slots = pack(np.array([rooms[i][0] for i in ids], dtype=np.float64), np.array([rooms[i][1] for i in ids], dtype=np.float64), np.arange(len(ids)), parts)
        return None if slots is None else [ids[j] for j in slots]

    def _raced(self, plan: GangPlan) -> None:
        """Room found for the try was taken before it was reserved: the try ends, and the
        home may try again at once (as after a declined proposal), not after a stuck
        task's backoff: the room was there a round trip ago, and a user that sat a
        backoff out would leave its classes to the others."""
        self._end(plan)
        self.desk._resolve(plan.user, plan.task_id, "declined")

    def _failed(self, plan: GangPlan) -> None:
        """The try could not hold every task: it ends, and the home takes the task for
        failed, as a walk that found no room."""
        self._end(plan)
        if self.desk.on_walk_failed is not None:
            self.desk.on_walk_failed(plan.user, plan.task_id)

    def accepted(self, plan: GangPlan, first: bool) -> None:
        """The user accepted the instance (TaskDesk.on_Accept): every server starts its
        tasks. Accepted again (a TaskAllocated was lost): every server is told again,
        and one whose task runs tells the user again."""
        if first:
            plan.phase = COMMITTED
        desk, actor, traits = self.desk, self.actor, plan.traits
        gains = []
        for d, c in zip(plan.demands, plan.constraints, strict=True):
            if desk.meter is not None:
                gains.append(desk.meter.gain(d, dataclasses.replace(traits, constraint=c)))
            else:
                gains.append((desk.capacity.task_share(d) or 0.0) / traits.weight)
        started = plan.share + sum(gains)
        for server in plan.servers():
            tasks = plan.tasks_of(server)
            if server == actor.address:
                for k in tasks:
                    actor.start_task(plan.user, plan.task_id + k, plan.demands[k], started, traits.duration, gains[k], together=True)
            else:
                msg = GangCommit(plan.user, plan.task_id, plan.attempt, tasks, [plan.demands[k] for k in tasks], started, traits.duration, [gains[k] for k in tasks])
                self._send_until_answered(server, msg)
        self._forget_if_settled(plan)

    def give_back(self, plan: GangPlan) -> None:
        """The proposal of the instance was declined, went unanswered or its user went
        down (TaskDesk): every reservation is given back."""
        self._end(plan)

    def _end(self, plan: GangPlan) -> None:
        """End a try without its instance: give back what it holds (here at once; every
        other server it involved is told, whatever it was asked, so that a reservation on
        its way is given back too) and count what the reservations held, for nothing."""
        actor = self.actor
        self.noted.pop(self._own(plan), None)
        now = actor.now()
        held = [0.0] * len(plan.demands[0])
        for k, server in enumerate(plan.found):
            if not plan.held[k]:
                continue
            for r, x in enumerate(plan.demands[k]):
                held[r] += (now - plan.since[k]) * x
            if server == actor.address:
                actor.release(plan.user, plan.task_id + k)
        for server in dict.fromkeys([*plan.servers(), *sorted(plan.noters)]):  # those asked to reserve, and those that only noted room (they forget it)
            if server != actor.address:
                self._send_until_answered(server, GangRelease(plan.user, plan.task_id, plan.attempt))
        whole = plan.phase == PROPOSED
        if any(plan.held):
            actor.report("gang_released", user=plan.user, task_id=plan.task_id, held=held, whole=whole)
        self.plans.pop((plan.user, plan.task_id), None)

    def _forget_if_settled(self, plan: GangPlan) -> None:
        """A committed try is forgotten once every server has started its tasks."""
        if plan.phase == COMMITTED and not any(k[1] == plan.user and k[2] == plan.task_id and k[3] == plan.attempt for k in self._outbox):
            self.plans.pop((plan.user, plan.task_id), None)

    def _send_until_answered(self, server: str, msg: Message) -> None:
        """Send a try's instruction to ``server`` every ``retry`` seconds until it
        answers; a later instruction of the same try replaces it."""
        if server in self._down:
            return  # it holds nothing any more
        key = (server, msg.user, msg.task_id, msg.attempt)  # type: ignore[attr-defined]
        fresh = key not in self._outbox
        self._outbox[key] = msg
        self.actor.send(server, msg)
        if fresh:
            self.actor.after(self.retry, self._again, key)

    def _again(self, key: tuple[str, str, int, int]) -> None:
        msg = self._outbox.get(key)
        if msg is None:
            return  # answered
        self.actor.report("retransmitted", step="gang")
        self.actor.send(key[0], msg)
        self.actor.after(self.retry, self._again, key)

    def on_GangDone(self, src: str, msg: GangDone) -> None:
        key = (src, msg.user, msg.task_id, msg.attempt)
        if isinstance(self._outbox.get(key), (GangCommit, GangRelease)):
            del self._outbox[key]
            plan = self.plans.get((msg.user, msg.task_id))
            if plan is not None and plan.attempt == msg.attempt:
                self._forget_if_settled(plan)

    # -- the walk ----------------------------------------------------------------------
    def _walk(self, msg: GangHop, peer: str | None = None) -> bool:
        """Pass the tasks still without a server on to a random peer (or ``peer``)."""
        return self._relay.forward(msg, _next_hop, peer)

    def on_GangHopAck(self, src: str, msg: GangHopAck) -> None:
        self._relay.acked((msg.coordinator, msg.attempt, msg.ttl))

    # -- a server of others' instances -------------------------------------------------
    def on_GangHop(self, src: str, msg: GangHop) -> None:
        """Note what fits here of the walk's tasks, tell the coordinator, pass the rest on."""
        actor = self.actor
        actor.send(src, GangHopAck(msg.coordinator, msg.attempt, msg.ttl))
        seen = self._seen
        if (msg.coordinator, msg.attempt, msg.ttl) in seen:
            return  # a hop sent again: our acknowledgement was lost
        _remember(seen, (msg.coordinator, msg.attempt, msg.ttl))
        n = len(msg.tasks)
        if not n == len(msg.demands) == len(msg.eligible) == len(msg.requires) or any(len(d) != len(actor.capacity) for d in msg.demands):
            actor.report("bad_message", type="GangHop", src=src, reason=f"{n} tasks, {len(msg.demands)} demands, {len(msg.eligible)} eligible, {len(msg.requires)} requires, or a demand of the wrong length")
            return
        key = (msg.coordinator, msg.user, msg.task_id, msg.attempt)
        if key in self._over or key in self.holds or msg.coordinator in self._down or (msg.coordinator == actor.address and not self._finding(msg.user, msg.task_id, msg.attempt)):
            return  # the try is past finding (a branch of its walk after a lost acknowledgement), or its coordinator is down: the walk ends here
        noted = self.noted.get(key)
        here = [0.0] * len(actor.capacity)
        if noted is not None:  # this try found room here before: beside it
            for d in noted.tasks.values():
                here = [a + b for a, b in zip(here, d, strict=True)]
        took: list[int] = []
        rest: list[int] = []
        giving = self.room_for is None or self.room_for(msg.user, msg.demands)
        for i, k in enumerate(msg.tasks):
            with_it = [a + b for a, b in zip(here, msg.demands[i], strict=True)]
            if giving and actor.fits(with_it) and actor.admits(Constraint.from_wire(msg.eligible[i], msg.requires[i])):
                took.append(k)
                here = with_it
            else:
                rest.append(i)
        if took:
            fresh = noted is None
            if noted is None:
                noted = self.noted[key] = Noted()
            noted.tasks.update((k, msg.demands[msg.tasks.index(k)]) for k in took)
            noted.answered = False
            noted.told += 1
            actor.send(msg.coordinator, GangFound(msg.user, msg.task_id, msg.attempt, list(noted.tasks)))
            actor.after(self.retry, self._tell_again, key, noted.told)
            if fresh:
                actor.after(HOLD_LEASE_S, self._lapse, key)
        if not rest:
            return
        servers, free, capacity, attributes = list(msg.room_servers), list(msg.room_free), list(msg.room_capacity), list(msg.room_attributes)
        seen_before = actor.address in servers
        if seen_before:  # the latest room of each server, once
            j = servers.index(actor.address)
            for column in (servers, free, capacity, attributes):
                del column[j]
        servers.append(actor.address)
        free.append([max(0.0, x) for x in actor.free.tolist()] if giving else [0.0] * len(actor.capacity))  # a float remnant below 0 would be refused on the wire; room kept for others, none
        capacity.append(actor.capacity.tolist())
        attributes.append(dict(actor.attributes))
        if len(servers) > ROOMS:
            servers, free, capacity, attributes = servers[-ROOMS:], free[-ROOMS:], capacity[-ROOMS:], attributes[-ROOMS:]
        stale = msg.stale + 1 if seen_before else 0
        onward = GangHop(
            msg.coordinator, msg.user, msg.task_id, msg.attempt, msg.ttl, [msg.tasks[i] for i in rest], [msg.demands[i] for i in rest],
            [msg.eligible[i] for i in rest], [msg.requires[i] for i in rest], stale, servers, free, capacity, attributes,
        )
        if stale >= max(STALE_HOPS, len(servers)) or len(servers) >= ROOMS or not self._walk(onward):
            actor.send(msg.coordinator, GangRefused(msg.user, msg.task_id, msg.attempt, servers, free, capacity, attributes))

    def _finding(self, user: str, task_id: int, attempt: int) -> bool:
        """Whether this coordinator's try ``attempt`` still looks for servers."""
        plan = self.plans.get((user, task_id))
        return plan is not None and plan.attempt == attempt and plan.phase == FINDING

    def _tell_again(self, key: TryKey, told: int) -> None:
        noted = self.noted.get(key)
        if noted is None or noted.answered or noted.told != told:
            return
        if key[0] in self._down:
            del self.noted[key]  # nobody is there to answer
            return
        self.actor.report("retransmitted", step="gang_found")
        self.actor.send(key[0], GangFound(key[1], key[2], key[3], list(noted.tasks)))
        self.actor.after(self.retry, self._tell_again, key, told)

    def on_GangFoundAck(self, src: str, msg: GangFoundAck) -> None:
        key = (src, msg.user, msg.task_id, msg.attempt)
        noted = self.noted.get(key)
        if noted is None:
            if msg.over:
                _remember(self._over, key)
            return
        for k in msg.drop:
            noted.tasks.pop(k, None)
        if set(noted.tasks) <= set(msg.keep):
            noted.answered = True
        if not noted.tasks:
            del self.noted[key]
            if msg.over:
                _remember(self._over, key)  # a stray branch of its walk that comes here ends

    def on_GangReserve(self, src: str, msg: GangReserve) -> None:
        """Reserve the try's tasks (those held already stay held); none once the try is
        over here (given back or committed: this is a late copy)."""
        actor = self.actor
        key = (src, msg.user, msg.task_id, msg.attempt)
        self.noted.pop(key, None)
        if key in self._over or len(msg.demands) != len(msg.tasks):
            actor.send(src, GangReserved(msg.user, msg.task_id, msg.attempt, [], list(msg.tasks)))
            return
        fresh = key not in self.holds
        holds = self.holds.setdefault(key, [])
        refused: list[int] = []
        for k, d in zip(msg.tasks, msg.demands, strict=True):
            if k in holds:
                continue
            if actor.reserve(msg.user, msg.task_id + k, d):
                holds.append(k)
            else:
                refused.append(k)
        if fresh:
            actor.after(HOLD_LEASE_S, self._lapse, key)
        actor.send(src, GangReserved(msg.user, msg.task_id, msg.attempt, [k for k in msg.tasks if k in holds], refused))

    def on_GangCommit(self, src: str, msg: GangCommit) -> None:
        """Start the committed tasks from their reservations (a repeated commit: the user
        is told again of those that run). A reservation lapsed is taken again if it fits;
        if not, the server says so (``gang_commit_failed``: the collector will find the
        instance run in part)."""
        actor = self.actor
        key = (src, msg.user, msg.task_id, msg.attempt)
        for i, k in enumerate(msg.tasks):
            if i >= len(msg.demands):
                break
            if not actor.start_task(msg.user, msg.task_id + k, msg.demands[i], msg.dominant_share, msg.duration, msg.gains[i] if i < len(msg.gains) else 0.0, together=True):
                actor.report("gang_commit_failed", user=msg.user, task_id=msg.task_id + k)
        self.holds.pop(key, None)
        self.noted.pop(key, None)
        _remember(self._over, key)
        actor.send(src, GangDone(msg.user, msg.task_id, msg.attempt))

    def on_GangRelease(self, src: str, msg: GangRelease) -> None:
        key = (src, msg.user, msg.task_id, msg.attempt)
        self._give_back(key)
        _remember(self._over, key)
        self.actor.send(src, GangDone(msg.user, msg.task_id, msg.attempt))

    def _give_back(self, key: TryKey) -> None:
        """Give back every reservation of the try ``key`` here, and forget its notes."""
        self.noted.pop(key, None)
        for k in self.holds.pop(key, ()):
            self.actor.release(key[1], key[2] + k)

    def _lapse(self, key: TryKey) -> None:
        if key in self.holds or key in self.noted:
            if key in self.holds:
                self.actor.report("gang_hold_lapsed", user=key[1], task_id=key[2], coordinator=key[0])
            self._give_back(key)
            _remember(self._over, key)

    # -- membership (through the server: nodes/server.py) ------------------------------
    def members_down(self, addresses: list[str]) -> None:
        """Members went down: a try of a user gone ends (its open proposal is the desk's:
        TaskDesk.members_down gives it back through :meth:`give_back`); a try not yet
        proposed with a task on a server gone ends (its home tries again); what this
        server holds for a coordinator or user gone is given back; nothing more is sent
        to them."""
        gone = set(addresses)
        self._down |= gone
        for key in [k for k in self._outbox if k[0] in gone]:
            del self._outbox[key]
        for plan in list(self.plans.values()):
            if plan.phase in (FINDING, RESERVING) and (plan.user in gone or gone.intersection(plan.servers())):
                self._failed(plan)
        for key in [k for k in (*self.holds, *self.noted) if k[0] in gone or k[1] in gone]:
            self._give_back(key)
            _remember(self._over, key)


def _remember(memory: dict, key: object) -> None:
    """Add ``key`` to a bounded memory (the oldest forgotten first)."""
    memory[key] = None
    if len(memory) > _REMEMBERED:
        del memory[next(iter(memory))]
