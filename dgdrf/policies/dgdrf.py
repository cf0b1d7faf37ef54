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

The gradient (``--gradient``): PDGDRF runs on the Kompics toolbox's, as the thesis did
(overlay/toolbox_gradient.py: aged descriptors, view only), as its point is to allow a
non-perfect centre (4.5). DGDRF runs on the stamped gradient, in which a server with
users remembers every server with users it has heard of (overlay/gradient.py). The
validation of 3.3.1 compares the claimant's view with its lowest neighbour's, so it
passes a wrong centre whenever neither of them knows of the higher node. With the
thesis's view alone that happens at P = 2: two top nodes r and s that have not heard of
each other both hold the same two lower neighbours {a, p} (a above p), and p, whose view
is rightly {a, s}, confirms s's message {a, s} although r is higher (seen with
``--gradient toolbox``: docs/notes/2026-11-24-dgdrf-toolbox-gradient.md; with the code of
2026-11-26: docs/notes/2026-11-26-policies-rerun.md). A memory of
only the 4P + 16 most recently heard nodes (stamped gradient revision 1) was not enough
either: the servers with users form a tight pack whose top is the node gossip relays
least, and servers without users filled the memory, so the claimant and its lowest
neighbour had both forgotten the top; a bound of 24 servers with users still errs (both
on thesis-200x40 at P = 2: docs/notes/2026-11-24-dgdrf-memory-200-servers.md). With every
server with users remembered, a node that remembers a higher node, even by stale news,
does not claim the centre until fresher news says it may.

Which neighbours PDGDRF's Gini test takes (``--gini-neighbours``): alg. 6 and eq. 4.7 say
the gradient view S_l. With it, a server whose P neighbours are all above it (lower
shares: every server below the top few of a converged gradient) holds the largest share
of its set, and raising the largest value of a set never lowers its Gini coefficient, so
only servers at the top allocate, however many users there are, where thesis fig. 5.11
has PDGDRF overtake DRF (1 allocation per tick) at 40 users. ``overlay`` also takes the
utilities the peer-sampling view carries (the random neighbours a Kompics node hears
utilities from, as the Croupier samples its gradient receives), and the allocation rate
then rises with users as in fig. 5.11, with errors that rise with users too (as measured:
docs/notes/2026-11-24-pdgdrf-gini-neighbours.md; the sweeps of fig. 5.11:
docs/notes/2026-11-24-pdgdrf-users-fig-5-11.md). That the thesis's results need it is our
inference, not its text; the default follows the text.

With tasks that end, a user's share falls anywhere at any moment, and the
servers that must hear of it (the old centre and its lowest neighbour) hear at their next
exchanges with its home, while the old centre's validation passes.
``--gradient-announce`` (stamped gradient only) makes a server whose utility rose
exchange at once with every server with users it remembers (Gradient.announce); it is
on by default for dg-tsf, whose errors it lowers for under 1 % more messages
(bench/results/distributed-tsf-100x20.txt against distributed-tsf-100x20-no-announce.txt),
and off for the thesis's policies.

Choices where the thesis is silent: a utility's ties are broken by a fixed hash of the
user id far below any real share difference (eq. 3.11 needs a strict maximum, and at
start every user's share is 0); a server with a validation or a placement under way
waits for it before deciding again; the task share uses the server's knowledge of C.
"""

from __future__ import annotations

import math
from array import array
from typing import Any

from dgdrf.model.metrics import gini_falls
from dgdrf.overlay.gradient import Gradient, GradientBase
from dgdrf.policies.ddrf import HomeScheduler
from dgdrf.policies.distributed import DistributedPolicy
from dgdrf.policies.local import HomeUsers, TaskDesk
from dgdrf.runtime.actor import Role

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython


class TickState:
    """What a :class:`GradientScheduler`'s tick reads, apart from the scheduler (compiled:
    C fields, read by :func:`_tick` without a Python attribute lookup each, as every
    server runs a tick every allocation tick, most of them deciding nothing)."""

    def __init__(self, home: HomeUsers, parallel: bool) -> None:
        self.home = home
        self.parallel = parallel
        #: exchange with every server with users at once when this server's utility rose
        #: (``--gradient-announce``, stamped gradient: Gradient.announce; set by the wiring)
        self.announce = False
        self.utility_then = -math.inf
        self.gradient: GradientBase = None  # type: ignore[assignment]  # set by the policy's wiring
        self.validating = False  # a validation (3.3.1) is under way


class GradientScheduler(HomeScheduler):
    """The allocation decision of DGDRF (``parallel=False``) or PDGDRF (``True``)."""

    # slots, not the instance dictionary, for what every tick reads (a faster lookup)
    __slots__ = ("gini_overlay", "state")

    def __init__(self, desk: TaskDesk, parallel: bool, gini_overlay: bool = False) -> None:
        super().__init__(desk)
        self.gini_overlay = gini_overlay
        self.state = TickState(self.home, parallel)  # what a tick reads (announce: set by the wiring)

    @property
    def gradient(self) -> GradientBase:
        """The server's gradient (set by the policy's wiring)."""
        return self.state.gradient

    @gradient.setter
    def gradient(self, gradient: GradientBase) -> None:
        self.state.gradient = gradient

    def on_tick(self) -> None:
        _tick(self.state, self)

    def _validated(self, ok: bool) -> None:
        self.state.validating = False
        if ok and self.gradient.is_centre():
            self.place_lowest()

    def _gini_falls(self, user) -> bool:
        """Alg. 6: would eq. 4.7's Gini over {own lowest share} and the neighbours'
        finite -U fall if this user got one more task? Neighbours: the gradient view, and
        with ``gini_overlay`` also the peer-sampling view (the utilities its descriptors
        carried when they were made)."""
        meter = self.desk.meter
        if meter is None:
            d = self.desk.capacity.task_share(user.request.demand)
            if d is None:
                return False
            d /= user.request.weight  # weighted DRF: the share the task adds (1: the thesis's)
            share = user.share
        else:  # the meter's notion (policies/meters.py): e.g. 1 / (h_i w_i) for TSF
            d = meter.step(user.request)
            if d is None:
                return False
            share = meter.share(user.share, user.request)
        if self.gini_overlay and self.gradient.sampler is not None:
            sample = self.gradient.sample
            extra = [u for addr, u in self.gradient.sampler.view_profiles() if addr not in sample and isinstance(u, float)]
            utilities = array("d", [*self.gradient.sample_utilities(), *extra])
            return gini_falls(share, d, utilities, len(utilities))
        return _sample_gini_falls(self.gradient, share, d)


def _tick(t: TickState, sched: GradientScheduler) -> None:
    """:meth:`GradientScheduler.on_tick`: announce a risen utility (``announce``); unless
    a validation is under way, when the lowest home user has a task waiting that is not
    out, DGDRF validates a centre (3.3.1) and PDGDRF places at a centre or where the Gini
    coefficient falls (alg. 6)."""
    if t.announce:
        u = t.home.utility()
        if u > t.utility_then:
            t.gradient.announce()  # type: ignore[attr-defined]  # wired only with the stamped gradient
        t.utility_then = u
    if t.validating:
        return
    low = _lowest(t.home)
    if low is None or low[1].request is None or low[1].out:
        return
    if _is_centre(t.gradient):
        if t.parallel:
            sched.place_lowest()
        else:
            t.validating = True
            t.gradient.validate_centre(sched._validated)
    elif t.parallel and sched._gini_falls(low[1]):
        sched.place_lowest()


def _lowest(home: HomeUsers) -> Any:
    """``home.lowest()``; compiled, a C call (every tick asks it)."""
    return home.lowest()


def _is_centre(gradient: Any) -> bool:
    """``gradient.is_centre()`` (eq. 3.11); compiled and a compiled gradient's, a C call."""
    if cython.compiled and isinstance(gradient, GradientBase):
        return cython.cast(GradientBase, gradient).is_centre()
    return gradient.is_centre()


def _sample_gini_falls(gradient: Any, share: float, step: float) -> bool:
    """Alg. 6's test over the gradient's sample (:func:`~dgdrf.model.metrics.gini_falls`);
    compiled and a compiled gradient's, its array of utilities handed over in C."""
    if cython.compiled and isinstance(gradient, GradientBase):
        us = cython.cast(GradientBase, gradient).sample_utilities()
        return gini_falls(share, step, us, us.shape[0])
    utilities = gradient.sample_utilities()
    return gini_falls(share, step, utilities, len(utilities))


class _GradientPolicy(DistributedPolicy):
    parallel: bool
    uses_gradient = True
    gangs = True  # the placing server reserves an instance's servers, then commits (policies/gang_desk.py)

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        sched = GradientScheduler(desk, self.parallel, gini_overlay=self.options.gini_neighbours == "overlay")
        gradient = self.make_gradient(sched.home.utility, cyclon)
        announce = self.gradient_announce if self.options.gradient_announce is None else self.options.gradient_announce
        sched.state.announce = announce and isinstance(gradient, Gradient)
        sched.gradient = gradient
        roles += [gradient, sched]
        return roles


class DGDRF(_GradientPolicy):
    name = "dgdrf"
    sweep_cost = 40.0
    description = "gradient centre with validation allocates (thesis 3.3, 3.3.1, 4.4)"
    parallel = False
    default_gradient = "stamped"


class PDGDRF(_GradientPolicy):
    name = "pdgdrf"
    sweep_cost = 40.0
    description = "centre without validation, or when the local Gini falls (thesis 4.5, alg. 6)"
    parallel = True


class DGTSF(DGDRF):
    """DGDRF with Wang et al.'s task share n_i / (h_i w_i) in place of the dominant share:
    the gradient is ordered by minus the lowest task share among a server's
    placeable home users, the centre validated as in 3.3.1, and its lowest user's task
    placed here or by a walk that passes ineligible servers by. h_i comes from the census
    of server capacities (policies/meters.py). It is user-driven, as DGDRF is: judged
    against the lowest task share among users whose task fits somewhere, which is not
    the allocation of centralized ``tsf``'s server offers (ORACLES.md example 6)."""

    name = "dg-tsf"
    description = "dgdrf ranking by task share n_i / (h_i w_i), h_i from a census of server kinds (Wang et al. §V-B)"
    notion_name = "tsf"
    meter = "tsf"
    room_notices = True
    gradient_announce = True


class PDGTSF(PDGDRF):
    """PDGDRF (alg. 6) with the task share, as :class:`DGTSF`: the Gini test of eq. 4.7 is
    over task shares, the step one task adds being 1 / (h_i w_i)."""

    name = "pdg-tsf"
    description = "pdgdrf ranking by task share n_i / (h_i w_i) (Wang et al. §V-B)"
    notion_name = "tsf"
    meter = "tsf"
    room_notices = True
