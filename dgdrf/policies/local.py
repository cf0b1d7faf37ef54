"""Machinery every distributed policy shares: what a server knows of the cluster's
capacity, its home users, its proposals, and the random walk (thesis 4.2-4.5).

- :class:`CapacityKnowledge`: the cluster capacity C that dominant shares need (eq. 3.3),
  either given (``exact``, as in the thesis) or the server's push-sum estimate.
- :class:`HomeUsers`: the users whose tasks come to this server (DDRF family), with the
  global dominant share each last reported (alg. 3 sends it with every task).
- :class:`TaskDesk`: proposals with reserved capacity; the user's Accept starts the task,
  a Decline or silence gives the capacity back, so a proposal that loses a race with
  another server's proposal for the same task never keeps resources; and the random
  walk of a task that does not fit here (4.3).

Jobs (dgdrf/model/workload.py): a task carries its traits (weight, duration, constraint).
A server proposes only a task its constraint admits here, so a walk passes on over
servers it may not use, and gives up (WalkFailed, the bounded walk of 4.3) when it finds
none with room; the share a task adds is its dominant share over its user's weight
(weighted DRF), and a home ranks its users by their weighted shares. A user with nothing
pending (Idle) is no one's minimum until its next task comes.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dgdrf.model.resources import task_dominant_share
from dgdrf.model.workload import CLASSIC, TaskTraits
from dgdrf.nodes.protocol import PROPOSAL_TIMEOUT_S, RETRY_S, Accept, Decline, TaskRequest, trait_fields
from dgdrf.overlay.sampling import PeerSampling
from dgdrf.policies.meters import ShareMeter
from dgdrf.overlay.gradient import UtilitySource
from dgdrf.overlay.pushsum import PushSum
from dgdrf.policies.messages import RoomFreed, WalkAck, WalkFailed, WalkTask
from dgdrf.policies.proposals import ProposalHandshake
from dgdrf.runtime.actor import Role

if TYPE_CHECKING:
    from dgdrf.nodes.server import Server

INF = math.inf


class CapacityKnowledge:
    """C, the cluster's total capacity vector, as this server knows it."""

    def __init__(self, exact: Sequence[float] | None = None, pushsum: PushSum | None = None, counted: frozenset[str] = frozenset()) -> None:
        self._exact = None if exact is None else np.asarray(exact, dtype=np.float64)
        self._exact_floats = None if exact is None else [float(c) for c in exact]
        self._pushsum = pushsum
        self._counted = counted  # the servers the exact C counts (shared, never changed)
        self._joined: set[str] = set()  # and those it counts since

    def joined(self, server: str, capacity: Sequence[float]) -> None:
        """Server ``server`` joined: C counts its capacity too, once (given exactly: a
        push-sum estimate takes it in by the newcomer's own mass). Servers that left stay
        counted, as the collector's and the central scheduler's ledgers count them
        (model/ledger.py)."""
        if self._exact is None or server in self._counted or server in self._joined:
            return
        self._joined.add(server)
        self._exact = self._exact + np.asarray(capacity, dtype=np.float64)
        self._exact_floats = [float(c) for c in self._exact]

    def total(self) -> np.ndarray | None:
        if self._exact is not None:
            return self._exact
        est = self._pushsum.estimate() if self._pushsum is not None else None
        return None if est is None else np.asarray(est, dtype=np.float64)

    def task_share(self, demand: Sequence[float]) -> float | None:
        """max_r D_r / C_r: the global dominant share one task adds (eq. 3.3, 3.7)."""
        if self._exact_floats is not None:
            return task_dominant_share(demand, self._exact_floats)
        est = self._pushsum.estimate() if self._pushsum is not None else None
        return None if est is None else task_dominant_share(demand, est)


@functools.lru_cache(maxsize=65536)
def tie_break(user: str) -> float:
    """A fixed number in [0, 1) per user id: equal shares still order strictly, so exactly
    one gradient node holds the maximum utility (eq. 3.11 is a strict inequality)."""
    return zlib.crc32(user.encode()) / 2**32


#: Scale of the tie-break in a utility: far below any difference between real shares.
TIE_SCALE = 1e-12


@dataclass(slots=True)
class HomeUser:
    share: float  # the global dominant share the user last reported
    request: TaskRequest | None = None  # the task waiting here, if any
    out: bool = False  # a proposal or walk for its task is under way
    stuck: bool = False  # its task found no room anywhere (walk failed)
    started: int = -1  # the last of its tasks known to run (accepted here)
    stuck_for: float = 0.0  # how long it stays stuck before its task is tried again
    idle: bool = False  # it said it has nothing pending (Idle): not in the competition


class HomeUsers(UtilitySource):
    """The users a server is home to (thesis 4.3: U_l).

    The lowest placeable user and the utility it gives are cached: the gradient asks for
    the utility many times per tick, and it changes only when a user reports a share or
    gets stuck (or, with a ``meter``, when what its shares are computed from changes).

    ``meter`` (policies/meters.py): the notion users are ranked by, from the sum each
    reported; None for the thesis's global dominant share, the sum itself."""

    def __init__(self, meter: ShareMeter | None = None) -> None:
        self.users: dict[str, HomeUser] = {}
        self._lowest: tuple[str, HomeUser] | None = None
        self._utility = -INF
        self._min = INF
        self._stale = False
        self.meter = meter
        self._meter_version = -1

    def submit(self, msg: TaskRequest) -> bool:
        """Take the user's next task; False for a task held already or an older one (a
        repeated TaskRequest: its first copy may be out, and must not go out twice)."""
        u = self.users.get(msg.user)
        if u is None:
            self.users[msg.user] = HomeUser(msg.dominant_share, msg)
        elif u.request is not None and msg.task_id <= u.request.task_id:
            if msg.task_id == u.request.task_id and not u.out and msg.dominant_share != u.share:
                u.share = msg.dominant_share  # sent again with the share a task that ended lowered
                self._stale = True
            return False
        else:
            u.share, u.request, u.out = msg.dominant_share, msg, False
            u.stuck, u.stuck_for, u.idle = False, 0.0, False
        self._stale = True
        return True

    def idle(self, user: str, task_id: int) -> None:
        """``user`` has nothing pending (its tasks before ``task_id`` placed): it leaves
        the competition until its next task; a late notice changes nothing."""
        u = self.users.get(user)
        if u is not None and not u.idle and (u.request is None or u.request.task_id < task_id):
            u.idle = True
            if u.request is not None:  # its last task is placed (perhaps by a walk, elsewhere): nothing is out
                u.out, u.started = False, u.request.task_id
            self._stale = True

    def forget(self, user: str) -> bool:
        """``user`` went down: it is this server's home user no more (False if it was not)."""
        if self.users.pop(user, None) is None:
            return False
        self._stale = True
        return True

    def mark_stuck(self, user: HomeUser) -> None:
        """Its task found no room anywhere: it no longer competes for the minimum."""
        user.stuck = True
        self._stale = True

    def unstick(self, user: HomeUser) -> None:
        """Room came back for its task: it competes again (its backoff starts over)."""
        user.stuck, user.stuck_for = False, 0.0
        self._stale = True

    def lowest(self) -> tuple[str, HomeUser] | None:
        """The user with the lowest share that can still be placed (ties by id hash)."""
        self._refresh()
        return self._lowest

    def _refresh(self) -> None:
        """Recompute the lowest user, its share and eq. 4.2's utility if a share, a
        user's state or the meter may have changed since (what :meth:`lowest`,
        :meth:`min_share` and :meth:`utility` read; compiled, this test is inlined where
        they are, as a gradient asks the utility at every exchange)."""
        if self._stale or self.meter is not None:
            self._recompute()

    def _recompute(self) -> None:
        """:meth:`_refresh`'s work: the meter's version, then the lowest user if stale."""
        meter = self.meter
        if meter is not None:
            version = meter.version()
            if version != self._meter_version:
                self._meter_version, self._stale = version, True
        if self._stale:
            best = None
            for uid, u in self.users.items():
                if u.stuck or u.idle:
                    continue
                key = (u.share if meter is None else (INF if u.request is None else meter.share(u.share, u.request)), tie_break(uid))
                if best is None or key < best[0]:
                    best = (key, uid, u)
            self._lowest = None if best is None else (best[1], best[2])
            self._min = INF if best is None else best[0][0]
            self._utility = -INF if best is None else -(best[0][0] + TIE_SCALE * tie_break(best[1]))
            self._stale = False

    def min_share(self) -> float:
        """min over placeable users of their share, G_i or the meter's (inf without users:
        utility -inf, eq. 4.2)."""
        self._refresh()
        return self._min

    def utility(self) -> float:
        """Eq. 4.2 with a tie-break below any real difference in shares: minus the lowest
        user's share and its tie-break, -inf without one (computed with the lowest user)."""
        self._refresh()
        return self._utility


@dataclass
class Proposed:
    """A proposal out: its task's demand, the user's share before it and the task's
    traits; once accepted, the share the task gave the user (``started``: what a
    repeated start reports). A proposal of a whole instance names its plan (``gang``)."""

    demand: list[float]
    share: float
    traits: TaskTraits = CLASSIC
    started: float = 0.0
    #: an instance of a job of parts: its plan, which its tasks' servers hold
    #: (policies/gang_desk.py); None for a task held here
    gang: Any = None


#: how many times a walk's hop is sent (to a new random peer each time) before the walk
#: is taken for lost; its home then takes the task for failed when it is overdue (its
#: user stuck, the task tried again in the background: policies/ddrf.py)
HOP_TRIES = 8
#: how many recently handled walk hops a node remembers, to recognise a repeated one
_SEEN_HOPS = 4096
#: room notices: how many walked tasks a server watches for room at once (the oldest
#: dropped first), and for how many seconds after the walk passed
_WATCHES = 256
WATCH_S = 60.0


class HopRelay:
    """The hops of random walks one node sends, each sent until the node it reached
    acknowledges it: again every ``retry`` seconds, each time to another random peer, up
    to :data:`HOP_TRIES` times, after which the walk is reported lost (its home takes the
    task for failed when it is overdue). ``key(hop)`` names a hop, as its acknowledgement
    does; ``step`` names the retransmissions in the run's events. Task walks
    (:class:`TaskDesk`) and an instance's walks (policies/gang_desk.py) share it."""

    def __init__(self, owner: Role, sampler: PeerSampling | None, retry: float, key: Callable[[Any], tuple[str, int, int]], step: str) -> None:
        self.owner = owner
        self.sampler = sampler
        self.retry = retry
        self.key = key
        self.step = step
        self._tries: dict[tuple[str, int, int], int] = {}  # hops sent, not yet acknowledged -> tries

    def forward(self, msg: Any, onward: Callable[[Any], Any], peer: str | None = None) -> bool:
        """Pass ``msg`` on as ``onward(msg)`` (its next hop, one less to go) to ``peer``
        (None: a random one); False if there is none, or ``msg`` has no hop left. The
        random peer is drawn first, as the walks always drew it: a run's random stream
        stays what it was."""
        if peer is None:
            peer = self.sampler.random_peer() if self.sampler is not None else None
        if peer is None or msg.ttl <= 0:
            return False
        hop = onward(msg)
        self._tries[self.key(hop)] = 1
        actor = self.owner.actor
        actor.send(peer, hop)
        actor.after(self.retry, self._again, hop)
        return True

    def _again(self, hop: Any) -> None:
        key = self.key(hop)
        tries = self._tries.get(key)
        if tries is None:
            return  # acknowledged
        actor = self.owner.actor
        peer = self.sampler.random_peer() if self.sampler is not None else None
        if tries >= HOP_TRIES or peer is None:
            del self._tries[key]
            actor.report("walk_lost", user=hop.user, task_id=hop.task_id)
            return
        self._tries[key] = tries + 1
        actor.report("retransmitted", step=self.step)
        actor.send(peer, hop)
        actor.after(self.retry, self._again, hop)

    def acked(self, key: tuple[str, int, int]) -> None:
        """The hop named ``key`` arrived."""
        self._tries.pop(key, None)


def _walk_key(hop: WalkTask) -> tuple[str, int, int]:
    return (hop.home, hop.walk, hop.ttl)


def _next_walk_hop(msg: WalkTask) -> WalkTask:
    return WalkTask(msg.user, msg.task_id, msg.demand, msg.dominant_share, msg.home, msg.ttl - 1, msg.walk, msg.weight, msg.duration, msg.eligible, msg.requires)


class TaskDesk(Role):
    """Proposals with reserved capacity, and the random walk of tasks that do not fit.

    Loss and repeats (see nodes/protocol.py): proposals follow the shared handshake
    (policies/proposals.py): an expired one releases its reservation; an Accept repeated
    for a task that runs here gets its TaskAllocated again. Each hop of a walk is acknowledged by the node
    it reached (WalkAck) and sent again, to another random peer, until it is; a node
    handles a hop it has handled before only by acknowledging it again."""

    actor: Server  # hosted by a resource node

    def __init__(self, capacity: CapacityKnowledge, sampler: PeerSampling | None = None, walk_ttl: int = 1024, proposal_timeout: float = PROPOSAL_TIMEOUT_S, retry: float = RETRY_S, meter: ShareMeter | None = None, room_notices: bool = False) -> None:
        self.capacity = capacity
        #: what a task adds to its user's reported share (None: its dominant share, eq. 3.3)
        self.meter = meter
        #: watch walked tasks that found no room here, and tell their homes when room comes
        self.room_notices = room_notices
        #: user -> (task id, home, demand, when the walk passed), oldest first
        self._watches: dict[str, tuple[int, str, list[float], float]] = {}
        self.sampler = sampler
        self.walk_ttl = walk_ttl
        self.retry = retry
        #: a task out longer than this (a walk of walk_ttl hops at 10 ms a hop, and its
        #: proposal) was lost with a server that went down, or is walking slowly under
        #: loss (a lost hop waits ``retry``) and fits nowhere: its home takes it for failed
        self.walk_patience = max(10.0, walk_ttl * 0.01) + proposal_timeout
        #: proposals out (``open``) and each user's last started here (``taken``)
        self.proposals: ProposalHandshake[Proposed] = ProposalHandshake(self, self._expired, retry, proposal_timeout)
        self._walks = 0  # walks started here (they are numbered per home)
        self._relay = HopRelay(self, sampler, retry, _walk_key, "walk")  # hops sent, until acknowledged
        self._seen: dict[tuple[str, int, int], None] = {}  # (home, walk, ttl) handled here (bounded, oldest first)
        #: (user, task, outcome): "accepted", "declined", "expired" or "gone" (its user went down)
        self.on_resolved: Callable[[str, int, str], None] | None = None
        self.on_walk_failed: Callable[[str, int], None] | None = None
        #: what places and commits instances of jobs of parts (policies/gang_desk.py),
        #: set by the wiring of a policy that places them; None otherwise
        self.gangs: Any = None

    def setup(self) -> None:
        hooks = getattr(self.actor, "on_finished", None)  # a resource node's (tests host roles on bare actors)
        if self.room_notices and hooks is not None:
            hooks.append(self._room_freed)

    def ready(self) -> bool:
        """Whether this server knows what shares need: C (eq. 3.3), or the meter's census."""
        return self.capacity.total() is not None if self.meter is None else self.meter.ready()

    def admits(self, request: TaskRequest) -> bool:
        """Whether the task of ``request`` may run on this server (its constraint)."""
        return self.actor.admits(request.traits().constraint)

    def propose(self, user: str, task_id: int, demand: list[float], share: float, traits: TaskTraits = CLASSIC) -> bool:
        """Reserve capacity and propose; False if it does not fit here, or its constraint
        does not admit this server."""
        if traits is not CLASSIC and not self.actor.admits(traits.constraint):
            return False
        if not self.actor.reserve(user, task_id, demand):
            return False
        self.proposals.propose(user, task_id, self.actor.address, Proposed(demand, share, traits))
        return True

    def _resolve(self, user: str, task_id: int, outcome: str) -> None:
        if self.on_resolved is not None:
            self.on_resolved(user, task_id, outcome)

    def place(self, user: str, task_id: int, demand: list[float], share: float, home: str, traits: TaskTraits = CLASSIC, first: str | None = None) -> bool:
        """Here if it fits, else start a random walk (its first hop to ``first``, if
        given: a server that said it has room). False if no walk is possible."""
        if self.propose(user, task_id, demand, share, traits):
            return True
        self._walks += 1
        if traits is CLASSIC:
            return self._walk(WalkTask(user, task_id, demand, share, home, self.walk_ttl, self._walks), first)
        w, dur, elig, req = trait_fields(traits)[:4]
        return self._walk(WalkTask(user, task_id, demand, share, home, self.walk_ttl, self._walks, w, dur, elig, req), first)

    def _walk(self, msg: WalkTask, peer: str | None = None) -> bool:
        """Pass the task on to a random peer (thesis 4.3), or to ``peer``, one hop less to go."""
        return self._relay.forward(msg, _next_walk_hop, peer)

    def on_WalkAck(self, src: str, msg: WalkAck) -> None:
        self._relay.acked((msg.home, msg.walk, msg.ttl))

    def on_WalkTask(self, src: str, msg: WalkTask) -> None:
        key = (msg.home, msg.walk, msg.ttl)
        self.actor.send(src, WalkAck(msg.home, msg.walk, msg.ttl))
        seen = self._seen
        if key in seen:
            return  # a hop sent again: our WalkAck was lost
        seen[key] = None
        if len(seen) > _SEEN_HOPS:
            del seen[next(iter(seen))]
        traits = msg.traits()
        if self.propose(msg.user, msg.task_id, msg.demand, msg.dominant_share, traits):
            return
        if self.room_notices and msg.duration > 0 and msg.home != self.actor.address and self.actor.admits(traits.constraint):
            self._watch(msg)
        if not self._walk(msg):
            self.actor.send(msg.home, WalkFailed(msg.user, msg.task_id))

    def _watch(self, msg: WalkTask) -> None:
        """Room notices: the walked task of ``msg`` may run here but found no room; when
        a task ends here and it fits, its home hears of it (:meth:`_room_freed`). Only
        with tasks that end (room comes back only then), for the user's latest task."""
        watches = self._watches
        watches.pop(msg.user, None)
        watches[msg.user] = (msg.task_id, msg.home, msg.demand, self.actor.now())
        if len(watches) > _WATCHES:
            del watches[next(iter(watches))]

    def _room_freed(self, user: str, task_id: int) -> None:
        """A task ended here: tell the homes of the watched tasks that fit now (each once;
        a watch older than WATCH_S is dropped). The home decides whether it still matters:
        the task may have been placed elsewhere since its walk passed."""
        if not self._watches:
            return
        now = self.actor.now()
        for u, (tid, home, demand, since) in list(self._watches.items()):
            if now - since > WATCH_S:
                del self._watches[u]
            elif self.actor.fits(demand):
                del self._watches[u]
                self.actor.send(home, RoomFreed(u, tid))

    # -- membership (through the server: nodes/server.py) --------------------------------
    def members_down(self, addresses: Sequence[str]) -> None:
        """Users that went down are proposed nothing more: their open proposals are taken
        back and their reservations given back (``gone`` to whoever placed them), and a
        room notice for one is dropped."""
        for user in addresses:
            for task_id, p in self.proposals.drop_user(user):
                self._give_back(user, task_id, p)
                self._resolve(user, task_id, "gone")
            self._watches.pop(user, None)

    def member_up(self, server: str, capacity: Sequence[float], attributes: Mapping[str, object]) -> None:
        """A server joined: the cluster's capacity C counts it."""
        self.capacity.joined(server, capacity)

    def on_WalkFailed(self, src: str, msg: WalkFailed) -> None:
        if self.on_walk_failed is not None:
            self.on_walk_failed(msg.user, msg.task_id)

    def on_Accept(self, src: str, msg: Accept) -> None:
        accepted = self.proposals.accept(src, msg)
        if accepted is None:
            return
        p, first = accepted
        if p.gang is not None:  # an instance: its servers start their tasks
            self.gangs.accepted(p.gang, first)
            if first:
                self._resolve(src, msg.task_id, "accepted")
            return
        if not first:
            self.actor.start_task(src, msg.task_id, [], p.started)  # runs: tell the user again
            return
        if self.meter is None and p.traits is CLASSIC:  # the thesis's task: no traits on the wire
            p.started = p.share + (self.capacity.task_share(p.demand) or 0.0)
            self.actor.start_task(src, msg.task_id, p.demand, p.started)
        else:  # what the task adds: the meter's (policies/meters.py), or weighted DRF's dominant share over the weight
            gain = self.meter.gain(p.demand, p.traits) if self.meter is not None else (self.capacity.task_share(p.demand) or 0.0) / p.traits.weight
            p.started = p.share + gain
            self.actor.start_task(src, msg.task_id, p.demand, p.started, p.traits.duration, gain)
        self._resolve(src, msg.task_id, "accepted")

    def on_Decline(self, src: str, msg: Decline) -> None:
        p = self.proposals.decline(src, msg)
        if p is not None:
            self._give_back(src, msg.task_id, p)
            self.actor.report("declined", user=src, task_id=msg.task_id)
            self._resolve(src, msg.task_id, "declined")

    def _expired(self, user: str, task_id: int, p: Proposed) -> None:
        self._give_back(user, task_id, p)
        self._resolve(user, task_id, "expired")

    def _give_back(self, user: str, task_id: int, p: Proposed) -> None:
        """What a proposal not taken held: its reservation here, or an instance's on
        every server that holds a task of it."""
        if p.gang is not None:
            self.gangs.give_back(p.gang)
        else:
            self.actor.release(user, task_id)
