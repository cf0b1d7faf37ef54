"""Centralized policies (thesis 4.1): DRF(H) first-fit, DRFH best-fit, and FIFO.

One server (the central scheduler) learns every server's capacity from RegisterServer
messages and every user's demand from its TaskRequests, keeps its own allocation ledger,
and on each allocation tick places at most one task: the next task of the user with the
lowest global dominant share (eq. 3.3) whose task fits somewhere, on the first server
that fits (``drf``) or the DRFH best-fit server (``drf-bestfit``, thesis 2.1.4), or the
oldest waiting task that fits anywhere (``fifo``). The placement is reserved in the
ledger, proposed to the user, and after the user's Accept the resource node is told to
start it. One task per tick models the cost of the decision (thesis 4.1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dgdrf.model.ledger import AllocationLedger
from dgdrf.nodes.gateway import FixedRouting, Routing
from dgdrf.nodes.protocol import Accept, Allocate, AllocateRejected, Decline, MemberDown, Proposal, RegisterServer, TaskRequest
from dgdrf.policies.base import AnnounceCapacity, Policy
from dgdrf.runtime.actor import Role

#: A selector picks (user index, server index) from the ledger and the waiting tasks
#: (user id -> request, in arrival order), or None when nothing waiting fits.
Selector = Callable[[AllocationLedger, dict[str, TaskRequest]], "tuple[int, int] | None"]


def _waiting_mask(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> np.ndarray:
    mask = np.zeros(len(ledger.user_ids), dtype=bool)
    mask[[ledger.user_index[u] for u in pending]] = True
    return mask & ledger.fits_anywhere()


def select_drf_first_fit(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
    """DRFH with first-fit (thesis 4.1): lowest G_i, first server in order that fits."""
    user = ledger.lowest_share_user(_waiting_mask(ledger, pending))
    return None if user is None else (user, ledger.first_fit(user))


def select_drf_best_fit(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
    """DRFH with the best-fit heuristic H(i, l) (thesis 2.1.4)."""
    user = ledger.lowest_share_user(_waiting_mask(ledger, pending))
    return None if user is None else (user, ledger.best_fit(user))


def select_fifo(ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
    """FIFO (thesis 4.1): the oldest waiting task that fits somewhere, first-fit."""
    for user_id in pending:
        user = ledger.user_index[user_id]
        server = ledger.first_fit(user)
        if server is not None:
            return user, server
    return None


class CentralScheduler(Role):
    """The central server's allocation logic: one placement per allocation tick."""

    def __init__(self, select: Selector) -> None:
        self.select = select
        self.ledger: AllocationLedger | None = None
        self.pending: dict[str, TaskRequest] = {}  # insertion order = arrival order
        self.awaiting: dict[tuple[str, int], tuple[int, TaskRequest]] = {}

    def on_RegisterServer(self, src: str, msg: RegisterServer) -> None:
        if self.ledger is None:
            self.ledger = AllocationLedger(len(msg.capacity))
        if len(msg.capacity) != self.ledger.m:
            self.actor.report("bad_message", type="RegisterServer", src=src, reason=f"{len(msg.capacity)} resources, expected {self.ledger.m}")
            return
        self.ledger.add_server(src, msg.capacity)

    def on_MemberDown(self, src: str, msg: MemberDown) -> None:
        """Servers that went down (network mode) take no more tasks."""
        if self.ledger is not None:
            for server in msg.addresses:
                s = self.ledger.server_index.get(server)
                if s is not None:
                    self.ledger.retire(s)

    def on_TaskRequest(self, src: str, msg: TaskRequest) -> None:
        if self.ledger is None or len(msg.demand) != self.ledger.m:
            self.actor.report("bad_message", type="TaskRequest", src=src, reason="demand does not match the resources")
            return
        self.ledger.add_user(msg.user, msg.demand)
        self.pending.pop(msg.user, None)
        self.pending[msg.user] = msg

    def on_tick(self) -> None:
        if not self.pending or self.ledger is None:
            return
        pick = self.select(self.ledger, self.pending)
        if pick is None:
            return
        user, server = pick
        user_id = self.ledger.user_ids[user]
        request = self.pending.pop(user_id)
        self.ledger.allocate(user, server)  # reserve until the user answers
        self.awaiting[(user_id, request.task_id)] = (server, request)
        self.actor.send(user_id, Proposal(request.task_id, self.ledger.server_ids[server]))

    def on_Accept(self, src: str, msg: Accept) -> None:
        entry = self.awaiting.pop((src, msg.task_id), None)
        if entry is None:
            self.actor.report("unexpected_accept", user=src, task_id=msg.task_id)
            return
        server, request = entry
        user = self.ledger.user_index[src]
        self.actor.send(self.ledger.server_ids[server], Allocate(src, msg.task_id, request.demand, self.ledger.share(user)))

    def on_Decline(self, src: str, msg: Decline) -> None:
        entry = self.awaiting.pop((src, msg.task_id), None)
        if entry is not None:
            self.ledger.release(self.ledger.user_index[src], entry[0])

    def on_AllocateRejected(self, src: str, msg: AllocateRejected) -> None:
        """The node refused (our view was wrong): undo the reservation, wait again."""
        self.actor.report("allocate_rejected", user=msg.user, task_id=msg.task_id, server=src)
        if self.ledger is None or msg.user not in self.ledger.user_index or src not in self.ledger.server_index:
            return
        user, server = self.ledger.user_index[msg.user], self.ledger.server_index[src]
        if self.ledger.placed[user, server] > 0:
            self.ledger.release(user, server)


class _Centralized(Policy):
    select: Selector

    def gateway_routing(self) -> Routing:
        return FixedRouting(self.options.central)

    def server_roles(self, server) -> list[Role]:
        roles: list[Role] = [AnnounceCapacity(self.options.central)]
        if server.address == self.options.central:
            roles.append(CentralScheduler(type(self).select))
        return roles


class CentralizedDRF(_Centralized):
    name = "drf"
    description = "central server, lowest global dominant share first, first-fit server (thesis 4.1)"
    select = staticmethod(select_drf_first_fit)


class CentralizedDRFBestFit(_Centralized):
    name = "drf-bestfit"
    description = "as drf, best-fit server by the DRFH heuristic (thesis 2.1.4)"
    select = staticmethod(select_drf_best_fit)


class CentralizedFIFO(_Centralized):
    name = "fifo"
    description = "central server, tasks in arrival order, first-fit server (thesis 4.1)"
    select = staticmethod(select_fifo)
