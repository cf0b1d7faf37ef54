"""DGDRF and PDGDRF (thesis 3.3, 3.3.1, 4.4, 4.5 and algorithm 6).

Every user has a fixed home server; servers run a continuous gradient overlay whose
utility is eq. 4.2 (minus the lowest global dominant share among the server's placeable
users, minus infinity without users), one exchange with a random neighbour per
allocation tick by default.

DGDRF: each tick, a server that sees itself as the gradient centre (eq. 3.11: every
neighbour's known utility below its own) validates it (3.3.1: it sends (S minus {p}) plus
itself to its lowest neighbour p, which acknowledges if that equals p's own view), and on
an acknowledgement places the task of its lowest user: on itself if it fits, else by a
random walk (4.3). So it mimics DRF: only the user with the lowest share allocates.

PDGDRF (alg. 6): no validation; a server places its lowest user's task if it believes it
is the centre, or else if the Gini coefficient (eq. 4.7) over its own lowest share and
its neighbours' (-U, finite ones) would fall with that task; so several servers can
allocate in the same tick.

The gradient: DGDRF's remembers the 4P + 16 nodes it heard of most recently
(overlay/gradient.py), without which a wrong centre can pass validation at P = 2; PDGDRF
runs on the thesis's toolbox gradient (view only, ``memory=0``), as its point is to
allow a non-perfect centre (4.5). With the memory PDGDRF behaves as DGDRF without
validation and almost never errs (30 servers, 20 users, P = 2: 0.1 % errors against
11.9 % without), unlike the 5-64 % of thesis tables 5.3/5.4. ``--gradient-memory``
overrides either.

Choices where the thesis is silent: a utility's ties are broken by a fixed hash of the
user id far below any real share difference (eq. 3.11 needs a strict maximum, and at
start every user's share is 0); a server with a validation or a placement under way
waits for it before deciding again; the task share uses the server's knowledge of C.
"""

from __future__ import annotations

import math

from dgdrf.model.metrics import gini
from dgdrf.overlay.gradient import Gradient
from dgdrf.policies.ddrf import HomeScheduler
from dgdrf.policies.distributed import DistributedPolicy
from dgdrf.policies.local import TaskDesk
from dgdrf.runtime.actor import Role


class GradientScheduler(HomeScheduler):
    """The allocation decision of DGDRF (``parallel=False``) or PDGDRF (``True``)."""

    def __init__(self, desk: TaskDesk, parallel: bool) -> None:
        super().__init__(desk)
        self.parallel = parallel
        self.gradient: Gradient | None = None
        self.validating = False

    def on_tick(self) -> None:
        if self.validating:
            return
        low = self.home.lowest()
        if low is None or low[1].request is None or low[1].out:
            return
        if self.gradient.is_centre():
            if self.parallel:
                self.place_lowest()
            else:
                self.validating = True
                self.gradient.validate_centre(self._validated)
        elif self.parallel and self._gini_falls(low[1]):
            self.place_lowest()

    def _validated(self, ok: bool) -> None:
        self.validating = False
        if ok and self.gradient.is_centre():
            self.place_lowest()

    def _gini_falls(self, user) -> bool:
        """Alg. 6: would eq. 4.7's Gini over {own lowest share} and the neighbours'
        finite -U fall if this user got one more task?"""
        d = self.desk.capacity.task_share(user.request.demand)
        if d is None:
            return False
        others = [-u for u, _ in self.gradient.view.values() if math.isfinite(u)]
        return gini([user.share + d, *others]) < gini([user.share, *others])


class _GradientPolicy(DistributedPolicy):
    parallel: bool
    default_memory: int | None  # remembered nodes beyond the view (None: the gradient's default)

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        sched = GradientScheduler(desk, self.parallel)
        memory = self.options.gradient_memory
        gradient = Gradient(
            sched.home.utility, self.options.neighbors, self.options.gradient_every, sampler=cyclon,
            idle_quiet=not self.options.idle_gossip, memory=self.default_memory if memory is None else memory,
        )
        sched.gradient = gradient
        roles += [gradient, sched]
        return roles


class DGDRF(_GradientPolicy):
    name = "dgdrf"
    description = "gradient centre with validation allocates (thesis 3.3, 3.3.1, 4.4)"
    parallel = False
    default_memory = None


class PDGDRF(_GradientPolicy):
    name = "pdgdrf"
    description = "centre without validation, or when the local Gini falls (thesis 4.5, alg. 6)"
    parallel = True
    default_memory = 0
