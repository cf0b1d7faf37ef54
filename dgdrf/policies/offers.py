"""Server offers: the centralized mechanism of Kesidis et al. (PS-DSF, §4) and of Wang et
al.'s online TSF (§V-D), and of the CMMF baselines of their §VI-B (Choosy: a freed
machine to the user of least allocation it admits), beside the thesis's user-driven one
(policies/centralized.py).

User-driven DRF picks the user first (the lowest share) and then a server (first fit).
Here the server comes first: a round offers every server once, in id order (or, with
``--offer-order random``, in a fresh permutation drawn from the scheduler's seeded
generator every round); an offer places at most one task: of the waiting users whose next
task the server admits and has room for, the one with the lowest score under the policy's
fairness notion (model/notions.py; ties to the lower user id in natural order, the
scenario's order in every generated scenario). A round that places nothing means no
waiting task fits anywhere: the run is saturated (or waits for room, with jobs). The
per-server notions of PS-DSF can only be decided this way: their score depends on the
server offered. With user-driven first fit, TSF on Wang et al.'s fig. 4 gives 4/1/4 tasks,
not 6/1/3 (ORACLES.md example 6).

How many tasks an offer places (``--offer-tasks``): one, as the issue and Kesidis et al.'s
greedy have it (rPS-DSF's 19/2/2/19 needs it: DIGEST 2c); or ``fill``: the user an offer
goes to keeps it while its next task still fits there, as a Mesos framework takes a
whole offer (mesos-ps runs TSF so). One task per offer does not give Wang et al.'s fig. 2a
(ORACLES.md example 7): alternating offers of m1 and m2 hand u1 a slot on m2 in the
third round (u1 at 3/18 and u2 at 2/12 tie at 1/6; the lower id wins: bench/results/papers/wang-static.md), so u1 = 10 and u2 = 5, and the early placement is permanent;
``fill`` gives 9 and 6, and still 6/1/3 on fig. 4. Each test names the one it uses.

One offer that places a task is one decision, so the central scheduler still places one
task per allocation tick: offers that place nothing are skipped within the tick, and the
sequence of placements is the offline offer algorithm's (DIGEST 2a "*_offer").

Finite jobs (§V-D): "when a task completes on machine m, offer m's free resources to the
users that may run on m, lowest task share first, until nothing more fits". A server that
frees resources is offered next, and again while something fits on it, before the round
goes on. (Wang et al. leave the server a new task goes to unspecified; offers decide it.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.notions import FairnessNotion
from dgdrf.policies.centralized import _Centralized, waiting_mask

if TYPE_CHECKING:
    from dgdrf.nodes.protocol import TaskRequest


class OfferRound:
    """The selector of server offers (a :data:`~dgdrf.policies.centralized.Selector`):
    where the round stands, and the servers freed since."""

    def __init__(self, notion: FairnessNotion, order: str = "fixed", fill: bool = False, rng: Callable[[], np.random.Generator] | None = None) -> None:
        self.notion = notion
        self.random = order == "random"
        self.fill = fill
        self._rng = rng or (lambda: np.random.default_rng(0))  # read when first needed: the host's, once it runs
        self._round: list[int] = []
        self._pos = 0
        self._freed: deque[int] = deque()
        self._held: tuple[int, int] | None = None  # fill: the offer a user keeps while its task fits

    def freed(self, server: int) -> None:
        """A task ended on ``server``: offer it before the round goes on."""
        if server not in self._freed:
            self._freed.append(server)

    def _next_server(self, ledger: AllocationLedger) -> int:
        if self._pos >= len(self._round):
            order = ledger.order
            self._round = (self._rng().permutation(order) if self.random else order).tolist()
            self._pos = 0
        self._pos += 1
        return self._round[self._pos - 1]

    def __call__(self, ledger: AllocationLedger, pending: dict[str, TaskRequest]) -> tuple[int, int] | None:
        waiting = waiting_mask(ledger, pending)
        if not waiting.any():
            return None
        if self._held is not None:  # fill: the user keeps its offer while its next task fits
            user, server = self._held
            if waiting[user] and ledger.fit[user, server]:
                return user, server
            self._held = None
        while self._freed:  # a freed server, while something fits on it
            server = self._freed[0]
            pick = self._offer(ledger, waiting, server)
            if pick is not None:
                return pick
            self._freed.popleft()
        # the rest of this round, then a whole fresh one, which must place: someone fits
        for _ in range(len(self._round) - self._pos + len(ledger.server_ids)):
            pick = self._offer(ledger, waiting, self._next_server(ledger))
            if pick is not None:
                return pick
        raise AssertionError("a waiting task fits somewhere, but no offer of a whole round placed it")

    def _offer(self, ledger: AllocationLedger, waiting: np.ndarray, server: int) -> tuple[int, int] | None:
        """One offer of ``server``: the lowest-scored waiting user whose task fits there."""
        candidates = waiting & ledger.fit[:, server]
        if not candidates.any():
            return None
        user = ledger.lowest_user(candidates, self.notion.scores(ledger, server))
        assert user is not None  # candidates.any()
        if self.fill:
            self._held = (user, server)
        return user, server


class _ServerOffers(_Centralized):
    """A centralized policy deciding by server offers under its notion."""

    offers = True
    strict = False  # an offer picks among the requests in; it waits for no one
    gangs = True  # a gang user is offered the server its instance's first fit starts on, and the instance is placed whole (model/notions.py readings)

    def selector(self, server) -> OfferRound:
        return OfferRound(self.fairness(), self.options.offer_order, self.options.offer_tasks == "fill", lambda: server.rng)


class TSF(_ServerOffers):
    name = "tsf"
    description = "server offers to the lowest task share n_i / (h_i w_i), constraints removed from h_i (Wang et al. §V-D)"
    notion_name = "tsf"


class CDRF(_ServerOffers):
    name = "cdrf"
    description = "server offers to the lowest job slowdown n_i / (M_i w_i), constraints kept in M_i (Wang et al. App. B-C)"
    notion_name = "cdrf"


class PSDSF(_ServerOffers):
    name = "psdsf"
    description = "server offers to the lowest per-server dominant share of the offered server (Kesidis et al. eq. 12)"
    notion_name = "psdsf"


class RPSDSF(_ServerOffers):
    name = "rpsdsf"
    description = "server offers to the lowest per-server dominant share on the offered server's residual (Kesidis et al. §4)"
    notion_name = "rpsdsf"


class CMMFCpu(_ServerOffers):
    name = "cmmf-cpu"
    description = "server offers to the lowest CPU share, constrained max-min on one resource (Choosy; Wang et al. §VI-B's CPU)"
    notion_name = "cmmf-cpu"


class CMMFMemory(_ServerOffers):
    name = "cmmf-mem"
    description = "server offers to the lowest memory share, constrained max-min on one resource (Choosy; Wang et al. §VI-B's Mem)"
    notion_name = "cmmf-mem"
