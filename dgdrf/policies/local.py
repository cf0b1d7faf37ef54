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
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dgdrf.model.resources import task_dominant_share
from dgdrf.nodes.protocol import Accept, Decline, Proposal, TaskRequest
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.pushsum import PushSum
from dgdrf.policies.messages import WalkFailed, WalkTask
from dgdrf.runtime.actor import Role

INF = math.inf


class CapacityKnowledge:
    """C, the cluster's total capacity vector, as this server knows it."""

    def __init__(self, exact: Sequence[float] | None = None, pushsum: PushSum | None = None) -> None:
        self._exact = None if exact is None else np.asarray(exact, dtype=np.float64)
        self._pushsum = pushsum

    def total(self) -> np.ndarray | None:
        if self._exact is not None:
            return self._exact
        est = self._pushsum.estimate() if self._pushsum is not None else None
        return None if est is None else np.asarray(est, dtype=np.float64)

    def task_share(self, demand: Sequence[float]) -> float | None:
        """max_r D_r / C_r: the global dominant share one task adds (eq. 3.3, 3.7)."""
        total = self.total()
        return None if total is None else task_dominant_share(np.asarray(demand, dtype=np.float64), total)


@functools.lru_cache(maxsize=65536)
def tie_break(user: str) -> float:
    """A fixed number in [0, 1) per user id: equal shares still order strictly, so exactly
    one gradient node holds the maximum utility (eq. 3.11 is a strict inequality)."""
    return zlib.crc32(user.encode()) / 2**32


#: Scale of the tie-break in a utility: far below any difference between real shares.
TIE_SCALE = 1e-12


@dataclass
class HomeUser:
    share: float  # the global dominant share the user last reported
    request: TaskRequest | None = None  # the task waiting here, if any
    out: bool = False  # a proposal or walk for its task is under way
    stuck: bool = False  # its task found no room anywhere (walk failed)


class HomeUsers:
    """The users a server is home to (thesis 4.3: U_l).

    The lowest placeable user is cached: the gradient asks for the utility many times
    per tick, and it changes only when a user reports a share or gets stuck."""

    def __init__(self) -> None:
        self.users: dict[str, HomeUser] = {}
        self._lowest: tuple[str, HomeUser] | None = None
        self._stale = False

    def submit(self, msg: TaskRequest) -> None:
        u = self.users.get(msg.user)
        if u is None:
            self.users[msg.user] = HomeUser(msg.dominant_share, msg)
        else:
            u.share, u.request, u.out = msg.dominant_share, msg, False
        self._stale = True

    def mark_stuck(self, user: HomeUser) -> None:
        """Its task found no room anywhere: it no longer competes for the minimum."""
        user.stuck = True
        self._stale = True

    def lowest(self) -> tuple[str, HomeUser] | None:
        """The user with the lowest share that can still be placed (ties by id hash)."""
        if self._stale:
            best = None
            for uid, u in self.users.items():
                if u.stuck:
                    continue
                key = (u.share, tie_break(uid))
                if best is None or key < best[0]:
                    best = (key, uid, u)
            self._lowest = None if best is None else (best[1], best[2])
            self._stale = False
        return self._lowest

    def min_share(self) -> float:
        """min over placeable users of G_i (inf without users: utility -inf, eq. 4.2)."""
        low = self.lowest()
        return INF if low is None else low[1].share

    def utility(self) -> float:
        """Eq. 4.2 with a tie-break below any real difference in shares."""
        low = self.lowest()
        if low is None:
            return -INF
        uid, u = low
        return -(u.share + TIE_SCALE * tie_break(uid))


class TaskDesk(Role):
    """Proposals with reserved capacity, and the random walk of tasks that do not fit."""

    def __init__(self, capacity: CapacityKnowledge, sampler: Cyclon | None = None, walk_ttl: int = 1024, proposal_timeout: float = 1.0) -> None:
        self.capacity = capacity
        self.sampler = sampler
        self.walk_ttl = walk_ttl
        self.proposal_timeout = proposal_timeout
        #: a task out longer than this (a walk of walk_ttl hops at 10 ms a hop, and its
        #: proposal) was lost with a server that went down
        self.walk_patience = max(10.0, walk_ttl * 0.01) + proposal_timeout
        self.proposals: dict[tuple[str, int], tuple[list[float], float]] = {}
        self.on_resolved: Callable[[str, int, bool], None] | None = None  # (user, task, accepted)
        self.on_walk_failed: Callable[[str, int], None] | None = None

    def propose(self, user: str, task_id: int, demand: list[float], share: float) -> bool:
        """Reserve capacity and propose; False if it does not fit here."""
        if not self.actor.reserve(user, task_id, demand):
            return False
        self.proposals[(user, task_id)] = (demand, share)
        self.actor.send(user, Proposal(task_id, self.actor.address))
        self.actor.after(self.proposal_timeout, self._expire, user, task_id)
        return True

    def place(self, user: str, task_id: int, demand: list[float], share: float, home: str) -> bool:
        """Here if it fits, else start a random walk. False if no walk is possible."""
        if self.propose(user, task_id, demand, share):
            return True
        return self._walk(WalkTask(user, task_id, demand, share, home, self.walk_ttl))

    def _walk(self, msg: WalkTask) -> bool:
        peer = self.sampler.random_peer() if self.sampler is not None else None
        if peer is None or msg.ttl <= 0:
            return False
        self.actor.send(peer, WalkTask(msg.user, msg.task_id, msg.demand, msg.dominant_share, msg.home, msg.ttl - 1))
        return True

    def on_WalkTask(self, src: str, msg: WalkTask) -> None:
        if self.propose(msg.user, msg.task_id, msg.demand, msg.dominant_share):
            return
        if not self._walk(msg):
            self.actor.send(msg.home, WalkFailed(msg.user, msg.task_id))

    def on_WalkFailed(self, src: str, msg: WalkFailed) -> None:
        if self.on_walk_failed is not None:
            self.on_walk_failed(msg.user, msg.task_id)

    def on_Accept(self, src: str, msg: Accept) -> None:
        entry = self.proposals.pop((src, msg.task_id), None)
        if entry is None:
            self.actor.report("unexpected_accept", user=src, task_id=msg.task_id)
            return
        demand, share = entry
        d = self.capacity.task_share(demand)
        self.actor.start_task(src, msg.task_id, demand, share + (d or 0.0))
        if self.on_resolved is not None:
            self.on_resolved(src, msg.task_id, True)

    def on_Decline(self, src: str, msg: Decline) -> None:
        if self.proposals.pop((src, msg.task_id), None) is not None:
            self.actor.release(src, msg.task_id)
            self.actor.report("declined", user=src, task_id=msg.task_id)
            if self.on_resolved is not None:
                self.on_resolved(src, msg.task_id, False)

    def _expire(self, user: str, task_id: int) -> None:
        if self.proposals.pop((user, task_id), None) is not None:
            self.actor.release(user, task_id)
            self.actor.report("proposal_expired", user=user, task_id=task_id)
            if self.on_resolved is not None:
                self.on_resolved(user, task_id, False)
