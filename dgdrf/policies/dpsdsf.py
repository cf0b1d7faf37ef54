"""d-psdsf: PS-DSF decided by the servers themselves, each offering itself to the users it
knows (issue 35).

Centralized PS-DSF (policies/offers.py, Kesidis et al. §4) offers the servers one at a
time; an offer of server j goes to the waiting user with the lowest K_nj = x_n max_r
(d_nr / c_jr) / φ_n (eq. 12) whose next task fits on j. The score depends on j only
through j's own capacity, so j can compute it itself: here every server is its own
offer, every allocation tick, to the lowest-scored user among those it knows whose task
fits in its free room now and whose constraint admits it.

What a server knows (policies/user_directory.py): its home users exactly; the other
users' latest reports (task id, share, whether the task waits, demand, constraint), by
rumour-mongering push-pull digests over the random overlay (one exchange per
``--gradient-period``, the tick by default, while a server has news). A user reports
x_n / φ_n with its task, as dg-tsf's users report n_i / w_i (policies/meters.py
:class:`PerServerShareMeter`). What it does not know: tasks that began waiting in the last
few exchanges, a user's share that fell since its report left its home, and whether
another server has just placed a task; so its errors (judged as the centralized offers
are: against the lowest K_nj among users whose next task fits on j, nodes/collector.py)
come from those.

The offer is a proposal with capacity reserved (policies/local.py :class:`TaskDesk`),
made straight to the user, who accepts one proposal per task and declines the rest (a
task several servers offered themselves for at once runs once; the others' reservations
are given back, and those servers know the task as placed and say so: user_directory.py). A server has one
offer out at a time. No task walks: a task that fits nowhere now waits until some server
that knows of it has room.
"""

from __future__ import annotations

from dgdrf.policies.ddrf import HomeScheduler
from dgdrf.policies.distributed import DistributedPolicy
from dgdrf.policies.local import TaskDesk, tie_break
from dgdrf.policies.meters import PerServerShareMeter, ShareMeter
from dgdrf.policies.user_directory import UserDirectory
from dgdrf.runtime.actor import Role


class OfferScheduler(HomeScheduler):
    """One server of d-psdsf: each tick, offer this server's free room to the user with
    the lowest K_nj it knows (ties by a fixed hash of the user id) whose task fits here."""

    def __init__(self, desk: TaskDesk) -> None:
        super().__init__(desk)
        self.meter: PerServerShareMeter = desk.meter  # type: ignore[assignment]
        self.directory: UserDirectory = None  # type: ignore[assignment]  # set by the policy's wiring
        self._offer: tuple[str, int] | None = None  # the offer out: (user, task id)

    def on_tick(self) -> None:
        if self._offer is not None:
            return  # one offer out at a time: it resolves within the proposal timeout
        actor, score, directory = self.actor, self.meter.score, self.directory
        best: tuple | None = None
        for uid, u in self.home.users.items():
            r = u.request
            if r is None or u.idle or u.out or u.started == r.task_id or directory.placed(uid, r.task_id):
                continue
            if actor.fits(r.demand) and self.desk.admits(r):
                key = (score(u.share, r.demand), tie_break(uid))
                if best is None or key < best[0]:
                    best = (key, uid, r.task_id, r.demand, u.share, r.traits(), u)
        for e in directory.waiting():
            if actor.fits(e.demand) and actor.admits(e.traits.constraint):
                key = (score(e.share, e.demand), tie_break(e.user))
                if best is None or key < best[0]:
                    best = (key, e.user, e.task_id, e.demand, e.share, e.traits, None)
        if best is None:
            return
        _, user, task_id, demand, share, traits, home_user = best
        if self.desk.propose(user, task_id, list(demand), share, traits):
            self._offer = (user, task_id)
            if home_user is not None:
                home_user.out = True

    def _resolved(self, user: str, task_id: int, outcome: str) -> None:
        """The user answered the offer (or never did): a declined or lost one means the
        task runs or is being placed elsewhere, so it is not offered again."""
        if self._offer == (user, task_id):
            self._offer = None
        if outcome != "accepted":
            self.directory.forget(user, task_id)
        super()._resolved(user, task_id, outcome)


class DPSDSF(DistributedPolicy):
    """Servers offer themselves to the lowest PS-DSF score among the users they know
    (module docstring); judged per server against centralized ``psdsf``."""

    name = "d-psdsf"
    sweep_cost = 20.0
    description = "each server offers itself to the lowest per-server dominant share among the users it knows by gossip (Kesidis et al. eq. 12; issue 35)"
    notion_name = "psdsf"
    offers = True  # judged as an offer of the server the task went to (nodes/collector.py)

    def _meter(self, server, cyclon, roles: list[Role]) -> ShareMeter | None:
        return PerServerShareMeter(server.capacity.tolist())

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        sched = OfferScheduler(desk)
        sched.directory = UserDirectory(sched.home, cyclon, self.options.gradient_every)
        roles += [sched.directory, sched]
        return roles
