"""Centralized policies (thesis 4.1): DRF(H) first-fit, DRFH best-fit, and FIFO.

One server (the central scheduler) learns every server's capacity from RegisterServer
messages and every user's demand from its TaskRequests, keeps its own allocation ledger,
and on each allocation tick places at most one task: the next task of the user with the
lowest global dominant share (eq. 3.3) whose task fits somewhere, on the first server
that fits (``drf``) or the DRFH best-fit server (``drf-bestfit``, thesis 2.1.4), or the
oldest waiting task that fits anywhere (``fifo``). The placement is reserved in the
ledger, proposed to the user, and after the user's Accept the resource node is told to
start it. One task per tick models the cost of the decision (thesis 4.1).

Jobs (dgdrf/model/workload.py): a task's constraint limits it to the servers it admits
(known from their registrations' attributes: first fit and best fit look only there);
shares are weighted (G_i / w_i, weighted DRF); a task that ends is released from the
ledger when its node says so (TaskFinished); a user with nothing pending (Idle) is
waited for no longer; and ``fifo`` serves jobs in their arrival order (every waiting
task of an earlier job before any of a later one, where it fits; ties in the scenario's
order), the thesis's tasks first, in the order their requests came.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.notions import ClassShare, DominantShare, FairnessNotion
from dgdrf.model.resources import SHARE_TIE_TOLERANCE, natural_key
from dgdrf.model.workload import instance_size
from dgdrf.nodes.gateway import FixedRouting, Routing
from dgdrf.nodes.protocol import (
    PROPOSAL_TIMEOUT_S, RETRY_S, Accept, Allocate, AllocateRejected, Decline, Idle, IdleNoted, Registered, RegisterServer, TaskFinished,
    TaskFinishedAck, TaskQueued, TaskRequest,
)  # fmt: skip
from dgdrf.policies.base import AnnounceCapacity, Policy
from dgdrf.policies.proposals import ProposalHandshake
from dgdrf.nodes.ticking import TickingRole
from dgdrf.runtime.actor import Role

#: A selector picks (user index, server index) from the ledger and the waiting tasks
#: (user id -> request, in arrival order), or None when nothing waiting fits.
Selector = Callable[[AllocationLedger, dict[str, TaskRequest]], "tuple[int, int] | None"]


def waiting_mask(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> np.ndarray:
    """Per user: whether its request is here and its task fits somewhere."""
    mask = np.zeros(len(ledger.user_ids), dtype=bool)
    mask[[ledger.user_index[u] for u in pending]] = True
    return mask & ledger.fits_anywhere()


def select_drf_first_fit(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
    """DRFH with first-fit (thesis 4.1): lowest G_i, first server in order that fits."""
    user = ledger.lowest_share_user(waiting_mask(ledger, pending))
    if user is None:
        return None
    server = ledger.first_fit(user)
    assert server is not None  # the mask holds only users whose task fits somewhere
    return user, server


def select_drf_best_fit(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
    """DRFH with the best-fit heuristic H(i, l) (thesis 2.1.4)."""
    user = ledger.lowest_share_user(waiting_mask(ledger, pending))
    if user is None:
        return None
    server = ledger.best_fit(user)
    assert server is not None  # the mask holds only users whose task fits somewhere
    return user, server


def lowest_first_fit(ledger: AllocationLedger, mask: np.ndarray, scores: np.ndarray) -> tuple[int, int] | None:
    """The lowest-scored user of ``mask`` (ties to the lower id) and the first server its
    next task fits on; None when ``mask`` holds nobody. ``mask`` must hold only users
    whose next task fits somewhere."""
    user = ledger.lowest_user(mask, scores)
    if user is None:
        return None
    server = ledger.first_fit(user)
    assert server is not None  # the mask holds only users whose task fits somewhere
    return user, server


def select_lowest_first_fit(notion: FairnessNotion) -> Selector:
    """As :func:`select_drf_first_fit`, ranking users by ``notion`` (DRF's share levels,
    Ru et al. alg. 1: the user-driven rule with another share)."""

    def select(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
        return lowest_first_fit(ledger, waiting_mask(ledger, pending), notion.shares(ledger))

    return select


def select_udrf(notion: ClassShare) -> Selector:
    """UDRF online (Tahir et al. fig. 5): the lowest tenant's share over machine classes
    first; among that tenant's waiting job streams, the one with the lowest own share (the
    DIGEST's reading of which job); then the lower id; first fit among eligible servers."""

    def select(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
        mask = waiting_mask(ledger, pending)
        if not mask.any():
            return None
        shares = notion.shares(ledger)
        low = shares[mask].min()
        tied = mask & (shares <= low + SHARE_TIE_TOLERANCE * max(low, 1e-300))
        return lowest_first_fit(ledger, tied, notion.own(ledger))

    return select


def lagging_streams(ledger: AllocationLedger, waiting: Iterable[int]) -> np.ndarray:
    """Per user: whether it is, among the ``waiting`` job streams of its tenant, the one with
    the fewest instances running (ties to the lower id): the one a bundle of equal counts
    grows next (:func:`select_bundle_drf`)."""
    lagging: dict[str, tuple[float, tuple, int]] = {}
    for u in waiting:
        key = (float(ledger.tasks[u]) / instance_size(ledger.gang_of(u)), natural_key(ledger.user_ids[u]), u)
        tenant = ledger.tenant_of(u)
        if tenant not in lagging or key < lagging[tenant]:
            lagging[tenant] = key
    mask = np.zeros(len(ledger.user_ids), dtype=bool)
    mask[[u for _, _, u in lagging.values()]] = True
    return mask


def bundle_placeable(ledger: AllocationLedger) -> np.ndarray:
    """Per user: whether :func:`select_bundle_drf` may place its next task now (it is its
    tenant's lagging stream and fits): what a run is saturated without, and judged among."""
    waiting = [u for u in range(len(ledger.user_ids)) if ledger.has_task(u)]
    return lagging_streams(ledger, waiting) & ledger.fits_anywhere()


def select_bundle_drf(notion: ClassShare) -> Selector:
    """Tahir et al.'s DRF baseline online (§II-A, fig. 2; §V: "DRF with the machine classes
    as resources"): the (class, resource) pairs are the resources, so a tenant's dominant
    share is its largest share of a pair (``notion``, as UDRF's), and each tenant is one
    bundle of its jobs in equal counts. Our reading online: a tenant's next placement is an
    instance of its waiting job stream with the fewest instances running (ties to the lower
    id), and when that one does not fit whole the tenant waits, its other jobs not growing
    past it (the paper's fig. 9 calls what this leaves idle DRF's waste); among the tenants
    whose next instance fits, the lowest share goes first, ties to the lower id."""

    def select(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
        mask = lagging_streams(ledger, [ledger.user_index[u] for u in pending]) & ledger.fits_anywhere()
        return lowest_first_fit(ledger, mask, notion.shares(ledger))

    return select


def select_fifo(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
    """FIFO (thesis 4.1): the oldest waiting task that fits somewhere, first-fit. Tasks
    of jobs go by their job's arrival, then its place in the scenario; the thesis's
    tasks (job 0, arriving at 0) come first, in the order their requests came."""
    order: Iterable[str] = pending.keys()
    if any(r.job for r in pending.values()):
        order = sorted(pending, key=lambda u: (pending[u].arrival, pending[u].job))  # stable: ties in arrival order of the requests
    for user_id in order:
        user = ledger.user_index[user_id]
        server = ledger.first_fit(user)
        if server is not None:
            return user, server
    return None


@dataclass
class Placement:
    """A task the scheduler placed and reserved in its ledger: where, and the request.
    An instance of a job of parts (model/gangs.py) is one placement: ``slots`` holds its
    every task's server and ``demands`` its demand (``server`` is the first's)."""

    server: int
    request: TaskRequest
    slots: tuple[int, ...] = ()
    demands: tuple[tuple[float, ...], ...] = ()
    #: when an instance's tasks were reserved (what a reservation given back held is
    #: counted from it)
    reserved_at: float = 0.0

    def tasks(self) -> list[tuple[int, int, list[float]]]:
        """(task id, server, demand) of each task it places."""
        if not self.slots:
            return [(self.request.task_id, self.server, self.request.demand)]
        return [(self.request.task_id + k, s, list(d)) for k, (s, d) in enumerate(zip(self.slots, self.demands, strict=True))]


class CentralScheduler(TickingRole):
    """The central server's allocation logic: one placement per allocation tick.

    Loss and repeats (nodes/protocol.py): a TaskRequest is acknowledged (TaskQueued) and a
    repeated one changes nothing. Proposals follow the shared handshake
    (policies/proposals.py): an expired one releases its reservation and queues the task
    again; an Accept that comes again for a task already ordered makes the scheduler order
    it again (the Allocate or the TaskAllocated was lost; the node starts a task once).

    ``strict`` (DRF): the next placement goes to the lowest-share user whose next task
    fits, known from its earlier requests, and the scheduler waits for that user's
    request rather than place someone else's (up to ``patience`` seconds, for a user that
    is gone). Without loss every request is in before the next tick, so this changes
    nothing; with loss the placements are DRF's, only later.

    A tick that found nothing to place is not repeated until something it decides on
    changes (``_settled``: a request, a task's end, a reservation given back, a server
    joining or going): a selector is a function of the ledger and the waiting requests,
    so the same state places nothing again. With long tasks and a fine tick most ticks
    were such repeats."""

    def __init__(self, select: Selector, strict: bool = False, retry: float = RETRY_S, proposal_timeout: float = PROPOSAL_TIMEOUT_S, notion: FairnessNotion | None = None) -> None:
        self.select = select
        self.strict = strict
        self.notion = notion  # whose lowest user the strict order waits for (None: G_i)
        self.patience = 20 * retry
        self.ledger: AllocationLedger | None = None
        self.pending: dict[str, TaskRequest] = {}  # insertion order = arrival order
        #: placements proposed and unanswered (``open``), and each user's last ordered (``taken``)
        self.proposals: ProposalHandshake[Placement] = ProposalHandshake(self, self._expired, retry, proposal_timeout)
        self._waiting: tuple[int, float] | None = None  # (user the strict order waits for, since)
        #: tasks of jobs ordered and running, until they end: (user, task) -> (server, demand)
        self.running: dict[tuple[str, int], tuple[int, list[float]]] = {}
        #: the tasks of instances ordered and running, by (user, task id): their instance's
        #: first task id and their order
        self._orders: dict[tuple[str, int], tuple[int, Allocate]] = {}
        #: tasks of instances that lost a task with a server: ordered again until their
        #: servers say they ended (:meth:`members_down`)
        self._lost: set[tuple[str, int]] = set()
        self.retry = retry
        self._settled = False  # the last tick placed nothing, and nothing changed since
        self._gone: set[str] = set()  # users declared down

    def on_RegisterServer(self, src: str, msg: RegisterServer) -> None:
        if self.ledger is None:
            self.ledger = AllocationLedger(len(msg.capacity))
        if len(msg.capacity) != self.ledger.m:
            self.actor.report("bad_message", type="RegisterServer", src=src, reason=f"{len(msg.capacity)} resources, expected {self.ledger.m}")
            return
        if src not in self.ledger.server_index:
            self.ledger.add_server(src, msg.capacity, msg.attributes)
            self._settled = False
        self.actor.send(src, Registered())

    def members_down(self, addresses: Sequence[str]) -> None:
        """Members that went down (MemberDown, through this server: nodes/server.py).
        Servers take no more tasks. A proposal still unanswered for one of them is
        withdrawn and its task queued again: accepted, it would be ordered on a dead
        server, and its user wait for ever. (A user whose accepted placement was ordered
        there gives it up on its own MemberDown.) A user gone is waited for no more and
        proposed nothing more: its request is dropped, its unanswered proposals given
        back, and it is in no one's way (DRF's strict order waited for it, and each
        expired proposal made it wait again); its tasks that run, run on."""
        if self.ledger is None:
            return
        for user in [a for a in addresses if a in self.ledger.user_index]:
            self._user_gone(user)
        gone = {self.ledger.server_index[a] for a in addresses if a in self.ledger.server_index}
        if not gone:
            return
        self._settled = False
        for (user, task_id), proposal in list(self.proposals.open.items()):
            if gone.intersection(proposal.item.slots or (proposal.item.server,)):  # released before the server retires: nothing fits there after
                self.proposals.withdraw(user, task_id)
                self._requeue(user, proposal.item)
        lost = {(key[0], self._orders[key][0]) for key, (server, _) in self.running.items() if server in gone and key in self._orders}
        for key, (server, demand) in list(self.running.items()):
            if server in gone:  # lost with it: its user runs it again
                del self.running[key]
                self._orders.pop(key, None)
                self._lost.discard(key)
                self.ledger.release(self.ledger.user_index[key[0]], server, demand)
        fresh = not self._lost
        self._lost.update(key for key, (base, _) in self._orders.items() if (key[0], base) in lost)
        if self._lost and fresh:
            self._order_lost_again()
        for s in gone:
            self.ledger.retire(s)

    def _user_gone(self, user: str) -> None:
        assert self.ledger is not None  # the user is in it
        self._gone.add(user)
        self.pending.pop(user, None)
        for _, placement in self.proposals.drop_user(user):
            self._release(user, placement)
        index = self.ledger.user_index[user]
        self.ledger.set_task(index, None)
        if self._waiting is not None and self._waiting[0] == index:
            self._waiting = None
        self._settled = False

    def on_TaskRequest(self, src: str, msg: TaskRequest) -> None:
        if msg.user in self._gone:
            return  # a request from a user declared down (sent before it died, and late)
        if self.ledger is None or len(msg.demand) != self.ledger.m:
            self.actor.report("bad_message", type="TaskRequest", src=src, reason="demand does not match the resources")
            return
        self.actor.send(msg.user, TaskQueued(msg.task_id))
        if self._known(msg.user, msg.task_id):
            return  # a repeated request
        try:
            gang = msg.gang()
        except ValueError as exc:
            self.actor.report("bad_message", type="TaskRequest", src=src, reason=f"parts: {exc}"[:300])
            return
        if gang is not None and any(len(p.demand) != self.ledger.m for p in gang):
            self.actor.report("bad_message", type="TaskRequest", src=src, reason="a part's demand does not match the resources")
            return
        if msg.extended:  # a task with traits: the user's next task is this one now
            traits = msg.traits()
            user = self.ledger.user_index.get(msg.user)
            if user is None:
                self.ledger.add_user(msg.user, msg.demand, traits.weight, traits.constraint)
            else:
                self.ledger.set_weight(user, traits.weight)
                self.ledger.set_task(user, msg.demand, traits.constraint)
        else:
            self.ledger.add_user(msg.user, msg.demand)
        self.ledger.set_gang(self.ledger.user_index[msg.user], gang)
        if msg.tenant:
            self.ledger.set_tenant(self.ledger.user_index[msg.user], msg.tenant)
        self.pending.pop(msg.user, None)
        self.pending[msg.user] = msg
        self._settled = False

    def on_Idle(self, src: str, msg: Idle) -> None:
        """The user has nothing pending: it is no one's minimum until its next task."""
        self.actor.send(src, IdleNoted(msg.task_id))
        if self.ledger is None or src not in self.ledger.user_index or self._known(src, msg.task_id):
            return  # unknown, or its next task is here already (the Idle came late)
        self.ledger.set_task(self.ledger.user_index[src], None)
        self._settled = False

    def _order_lost_again(self) -> None:
        """The tasks of instances that lost a task with a server are ordered again, every
        ``retry`` seconds, until their servers say they ended: their users abort them
        (nodes/user.py), and a server tells the scheduler that ordered a task it stopped,
        or whose order came after the abort; but an order that was lost, its user no
        longer asking for it again, would hold its room in the ledger for good."""
        assert self.ledger is not None  # orders were made with it
        self._lost = {key for key in self._lost if key in self.running and key in self._orders}
        for key in sorted(self._lost):
            server, order = self.running[key][0], self._orders[key][1]
            self.actor.send(self.ledger.server_ids[server], order)
        if self._lost:
            self.actor.report("retransmitted", step="lost_instance")
            self.actor.after(self.retry, self._order_lost_again)

    def on_TaskFinished(self, src: str, msg: TaskFinished) -> None:
        """A task this scheduler ordered ended: its resources are free in the ledger."""
        self.actor.send(src, TaskFinishedAck(msg.user, msg.task_id))
        done = self.running.pop((msg.user, msg.task_id), None)
        self._orders.pop((msg.user, msg.task_id), None)
        if done is not None and self.ledger is not None:
            self.ledger.release(self.ledger.user_index[msg.user], done[0], done[1])
            self._settled = False
            freed = getattr(self.select, "freed", None)  # server offers offer it next (policies/offers.py)
            if freed is not None:
                freed(done[0])

    def _known(self, user: str, task_id: int) -> bool:
        """Whether this task (or a later one) of ``user`` is queued, proposed or ordered."""
        held = self.pending.get(user)
        if held is not None and held.task_id >= task_id:
            return True
        ordered = self.proposals.taken.get(user)
        if ordered is not None and ordered.task_id >= task_id:
            return True
        return any(u == user and t >= task_id for u, t in self.proposals.open)

    def on_tick(self) -> None:
        if not self.pending or self.ledger is None or self._settled:
            return
        if self.strict and not self._lowest_waits():
            return
        pick = self.select(self.ledger, self.pending)
        if pick is None:
            self._settled = True
            return
        user, server = pick
        user_id = self.ledger.user_ids[user]
        request = self.pending.pop(user_id)
        gang = self.ledger.gang_of(user)
        if gang is None:
            self.ledger.allocate(user, server)  # reserve until the user answers
            self.proposals.propose(user_id, request.task_id, self.ledger.server_ids[server], Placement(server, request))
            return
        slots = self.ledger.gang_slots(user)
        assert slots is not None and slots[0] == server  # its fit row holds the first task's server only
        demands = tuple(p.demand for p in gang for _ in range(p.count))
        for s, d in zip(slots, demands, strict=True):
            self.ledger.allocate(user, s, check=False, demand=d)  # every task reserved, in one decision
        self.actor.report("gang_reserved", user=user_id, task_id=request.task_id, tasks=len(slots))
        placement = Placement(server, request, tuple(slots), demands, self.actor.now())
        self.proposals.propose(user_id, request.task_id, self.ledger.server_ids[server], placement, [self.ledger.server_ids[s] for s in slots])

    def _lowest_waits(self) -> bool:
        """DRF's strict order: whether the lowest-share user whose task fits has its
        request here (or has kept us waiting longer than ``patience``)."""
        ledger = self.ledger
        assert ledger is not None  # on_tick returns before without one
        fits = ledger.fits_anywhere()
        lowest = ledger.lowest_share_user(fits) if self.notion is None else ledger.lowest_user(fits, self.notion.shares(ledger))
        if lowest is None or ledger.user_ids[lowest] in self.pending:
            self._waiting = None
            return True
        now = self.actor.now()
        if self._waiting is None or self._waiting[0] != lowest:
            self._waiting = (lowest, now)
        if now - self._waiting[1] < self.patience:
            return False
        self.actor.report("lowest_user_skipped", user=ledger.user_ids[lowest])
        return True

    def _requeue(self, user: str, placement: Placement) -> None:
        """Give a placement's reservation back and queue its task again."""
        assert self.ledger is not None  # a placement was made with it
        self._release(user, placement)
        if user not in self.pending:
            self.pending[user] = placement.request

    def _release(self, user: str, placement: Placement) -> None:
        """Give a placement's reservation back (of its own demand, for a task with traits)."""
        assert self.ledger is not None  # a placement was made with it
        request = placement.request
        u = self.ledger.user_index[user]
        if placement.slots:
            for s, d in zip(placement.slots, placement.demands, strict=True):
                self.ledger.release(u, s, d)
            held = (self.actor.now() - placement.reserved_at) * np.sum(placement.demands, axis=0)
            self.actor.report("gang_released", user=user, task_id=request.task_id, held=[float(x) for x in held])
        else:
            self.ledger.release(u, placement.server, request.demand if request.extended else None)
        self._settled = False

    def _expired(self, user: str, task_id: int, placement: Placement) -> None:
        self._requeue(user, placement)

    def on_Accept(self, src: str, msg: Accept) -> None:
        accepted = self.proposals.accept(src, msg)
        if accepted is not None:  # first or repeated (the order or its TaskAllocated was lost)
            self._order(src, msg.task_id, accepted[0], first=accepted[1])

    def _order(self, user: str, task_id: int, placement: Placement, first: bool = True) -> None:
        """Order the task on its server; ordered again for a repeated Accept (the node
        starts it once, and tells its user again). Only the first order counts it as
        running here: by a repeat it may have ended already (its TaskFinished came, its
        resources freed), and counted again it would be freed twice when the node's
        TaskFinished came again (our TaskFinishedAck lost) or its server went down."""
        assert self.ledger is not None  # a placement was made with it
        u = self.ledger.user_index[user]
        request = placement.request
        if not request.extended:
            self.actor.send(self.ledger.server_ids[placement.server], Allocate(user, task_id, request.demand, self.ledger.share(u)))
            return
        together = bool(placement.slots)  # an instance's tasks start together (nodes/server.py)
        for tid, server, demand in placement.tasks():  # an instance's every task, in this one handler
            gain = self.ledger.dominant_share(demand) / request.weight
            order = Allocate(user, tid, demand, self.ledger.share(u), request.duration, gain, together)
            if (request.duration > 0 or together) and first:  # (an endless instance's tasks end when it is lost)
                self.running[(user, tid)] = (server, demand)
                if together:
                    self._orders[(user, tid)] = (task_id, order)
            self.actor.send(self.ledger.server_ids[server], order)

    def on_Decline(self, src: str, msg: Decline) -> None:
        """A declined proposal's reservation is given back. Declined as ``unusable`` (a
        server the user knows dead, or one it cannot run on although its constraint said
        so: the audit's liars, dgdrf/auditing.py), the task is queued again, and the user
        is proposed that server no more (as a Mesos framework's declined offer is filtered)."""
        placement = self.proposals.decline(src, msg)
        if placement is not None:
            assert self.ledger is not None  # a placement was made with it
            if msg.unusable:
                self._requeue(src, placement)
                self.ledger.exclude(self.ledger.user_index[src], placement.server)
                self._settled = False
            else:
                self._release(src, placement)

    def on_AllocateRejected(self, src: str, msg: AllocateRejected) -> None:
        """The node refused (our view was wrong): undo the reservation, tell the user the
        proposal it accepted is void, and queue the task again."""
        self.actor.report("allocate_rejected", user=msg.user, task_id=msg.task_id, server=src)
        if self.ledger is None or msg.user not in self.ledger.user_index or src not in self.ledger.server_index:
            return
        ordered = self.proposals.taken.get(msg.user)
        if ordered is None or ordered.task_id != msg.task_id or self.ledger.server_ids[ordered.item.server] != src:
            return  # about an order we no longer hold (a repeat)
        self.proposals.void(msg.user, msg.task_id)
        self.running.pop((msg.user, msg.task_id), None)
        user, server = self.ledger.user_index[msg.user], self.ledger.server_index[src]
        if self.ledger.placed[user, server] > 0:
            self._release(msg.user, ordered.item)
        if msg.user not in self.pending:
            self.pending[msg.user] = ordered.item.request
        self._settled = False


class _Centralized(Policy):
    select: Selector
    strict: bool = True  # DRF's order: wait for the lowest user's request (CentralScheduler)
    gangs = True  # an instance is placed where first fit puts all of it (model/gangs.py)

    def gateway_routing(self) -> Routing:
        return FixedRouting(self.options.central)

    def selector(self, server) -> Selector:
        """How the central scheduler hosted by ``server`` picks its placements."""
        return type(self).select

    def server_roles(self, server) -> list[Role]:
        roles: list[Role] = [AnnounceCapacity(self.options.central, self.options.retry)]
        if server.address == self.options.central:
            notion = self.fairness()
            ranked_by = None if isinstance(notion, DominantShare) else notion
            roles.append(CentralScheduler(self.selector(server), strict=self.strict, retry=self.options.retry, notion=ranked_by))
        return roles


class CentralizedDRF(_Centralized):
    name = "drf"
    description = "central server, lowest global dominant share first, first-fit server (thesis 4.1); --share-level 2|3: Ru et al.'s share levels"
    select = staticmethod(select_drf_first_fit)
    share_levels = True

    def selector(self, server) -> Selector:
        notion = self.fairness()
        return select_drf_first_fit if isinstance(notion, DominantShare) else select_lowest_first_fit(notion)


class CentralizedDRFBestFit(_Centralized):
    name = "drf-bestfit"
    description = "as drf, best-fit server by the DRFH heuristic (thesis 2.1.4)"
    select = staticmethod(select_drf_best_fit)
    gangs = True  # a task goes to its best-fit server; an instance of a job of parts goes where first fit puts it (model/gangs.py), whole


class CentralizedUDRF(_Centralized):
    name = "udrf"
    description = "central server, lowest share over machine classes first (a tenant's job streams compete apart), first fit (Tahir et al. fig. 5)"
    notion_name = "udrf"
    strict = False  # the lowest is a tenant; which of its streams goes is decided among those waiting

    def selector(self, server) -> Selector:
        notion = self.fairness()
        assert isinstance(notion, ClassShare)
        return select_udrf(notion)


class CentralizedBundleDRF(_Centralized):
    name = "drf-bundle"
    description = "Tahir et al.'s DRF baseline: the (class, resource) pairs as resources, a tenant's jobs in equal counts (its job with the fewest instances running next; the tenant waits when that one does not fit)"
    notion_name = "udrf"
    strict = False  # a tenant whose next job does not fit waits; the others go on

    def selector(self, server) -> Selector:
        notion = self.fairness()
        assert isinstance(notion, ClassShare)
        return select_bundle_drf(notion)

    def placeable(self) -> Callable[[AllocationLedger], np.ndarray] | None:
        return bundle_placeable


class CentralizedFIFO(_Centralized):
    name = "fifo"
    description = "central server, tasks in arrival order, first-fit server (thesis 4.1)"
    select = staticmethod(select_fifo)
    strict = False
