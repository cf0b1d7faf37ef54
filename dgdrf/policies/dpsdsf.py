"""d-psdsf: PS-DSF decided by the servers themselves, each offering itself to the users it
knows.

Centralized PS-DSF (policies/offers.py, Kesidis et al. §4) offers the servers one at a
time; an offer of server j goes to the waiting user with the lowest K_nj = x_n max_r
(d_nr / c_jr) / φ_n (eq. 12) whose next task fits on j. The score depends on j only
through j's own capacity, so j can compute it itself: here every server is its own
offer, every allocation tick, to the lowest-scored user among those it knows whose task
fits in its free room now and whose constraint admits it.

What a server knows (policies/user_directory.py): its home users exactly; the other
users' latest reports (task id, share, whether the task waits, demand, constraint), by
rumours over the random overlay (what is new to a server goes at once to two random
peers) and push-pull anti-entropy every 5 s. A user reports
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

Jobs of parts (model/gangs.py): an instance cannot go in one server's offer, so its home
places it, as the homes of ddrf and dgdrf do (policies/gang_desk.py: what fits on the
home, the rest found by a walk, every task reserved, the whole instance proposed, then
committed). Reading: the home scores a gang user K_nj on itself with its first part's
demand (as centralized psdsf scores a gang user on the server its instance's first task
goes to, model/notions.py), and when that user is the lowest it knows, with or without
room here, the home's offer is the try at the instance; the user's report says it
waits for no other server's offer (they would each offer one task of it). A server
gives room to an instance's tasks (on the home, or where its walk comes) only as its
offer would: to no user it knows with a lower K_nj whose task waits and fits there
(:meth:`OfferScheduler.room_for`), so an instance takes no room that the server would
have offered to another user first. A try that finds no room makes the user stuck,
tried again after a backoff (policies/ddrf.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dgdrf.nodes.protocol import Idle, TaskRequest
from dgdrf.policies.ddrf import HomeScheduler
from dgdrf.policies.distributed import DistributedPolicy
from dgdrf.policies.local import TaskDesk, tie_break
from dgdrf.policies.meters import PerServerShareMeter, ShareMeter
from dgdrf.policies.user_directory import UserDirectory
from dgdrf.runtime.actor import Role


#: most ticks in a row a server waits for news to settle before it offers anyway
SETTLE_TICKS = 2


class OfferScheduler(HomeScheduler):
    """One server of d-psdsf: each tick, offer this server's free room to the user with
    the lowest K_nj it knows (ties by a fixed hash of the user id) whose task fits here.
    A tick after one that found nothing to offer is skipped until something changes: a
    report, a home user's task, or room freed here.

    News settles first: a tick with news from other servers since the previous one is
    skipped (at most :data:`SETTLE_TICKS` in a row), as a rumour takes a few message
    latencies to reach every server and a report still on its way may be of a user with a
    lower score. On a constrained Google-like quarter hour (40 servers, 8 users, offered
    load 2, 3 seeds) this takes the errors from 6.9-7.3 % to 4.0-4.8 % and the proposals
    from 15 a task to 6.4, at the same JCT. (Settling after this server's own changes
    too, its home users' reports, gave 3.3-4.9 % errors with 8.7-9.2 proposals a task,
    and delayed every start on a single server by up to two ticks: bench/dpsdsf_design.py,
    record bench/results/dpsdsf-design.txt.) What errs still: the lowest user's next task
    was not yet known where the allocation was made: its previous task had just started and its next report was
    on its way, from the user to its home and across the overlay (some 10-20 ms);
    centralized psdsf places one task a tick, so it rarely allocates inside that window
    (docs/notes/2026-11-27-psdsf-by-the-servers.md)."""

    def __init__(self, desk: TaskDesk) -> None:
        super().__init__(desk)
        self.meter: PerServerShareMeter = desk.meter  # type: ignore[assignment]
        self.directory: UserDirectory = None  # type: ignore[assignment]  # set by the policy's wiring
        self._offer: tuple[str, int] | None = None  # the offer out: (user, task id)
        self._nothing_at = -1  # the directory's version when the last tick found nothing to offer
        self._last_tick = -1.0
        self._settling = 0  # ticks skipped in a row for news

    def _changed(self) -> None:
        self._nothing_at = -1

    def on_TaskRequest(self, src: str, msg: TaskRequest) -> None:
        super().on_TaskRequest(src, msg)
        self._changed()
        self.directory.home_changed()

    def on_Idle(self, src: str, msg: Idle) -> None:
        super().on_Idle(src, msg)
        self._changed()
        self.directory.home_changed()

    def on_tick(self) -> None:
        directory = self.directory
        now, last = self.actor.now(), self._last_tick
        self._last_tick = now
        if self._offer is not None or self._nothing_at == directory.version:
            return  # one offer out at a time (it resolves within the proposal timeout), or nothing new
        if directory.heard_at > last and self._settling < SETTLE_TICKS:
            self._settling += 1
            return  # news since the last tick: let it settle
        self._settling = 0
        best: tuple | None = None
        for candidate in self._candidates():
            if best is None or candidate[0] < best[0]:
                best = candidate
        if best is None:
            self._nothing_at = directory.version
            return
        _, user, task_id, demand, share, traits, home_user = best
        if home_user is not None and home_user.request is not None and home_user.request.parts:
            self._try_instance(user, home_user)
            return
        if self.desk.propose(user, task_id, list(demand), share, traits):
            self._offer = (user, task_id)
            if home_user is not None:
                home_user.out = True

    def _candidates(self, instances: bool = True) -> Iterator[tuple]:
        """Whom this server's offer may go to now, each as (its K_nj here and tie-break,
        user, task id, demand, reported share, traits, its home entry or None): the home
        users and the users known by gossip whose task waits and fits here, and (with
        ``instances``) the home's gang users not stuck, wherever their room is."""
        actor, score, directory = self.actor, self.meter.score, self.directory
        for uid, u in self.home.users.items():
            r = u.request
            if r is None or u.idle or u.out or u.started == r.task_id:
                continue
            if r.parts:  # an instance: this home tries it, wherever its room is (no other server offers for it: the directory's reports say it waits for none)
                if instances and not u.stuck:
                    yield (score(u.share, r.demand), tie_break(uid)), uid, r.task_id, r.demand, u.share, r.traits(), u
            elif not directory.placed(uid, r.task_id) and actor.fits(r.demand) and self.desk.admits(r):
                yield (score(u.share, r.demand), tie_break(uid)), uid, r.task_id, r.demand, u.share, r.traits(), u
        for e in directory.waiting():
            if actor.fits(e.demand) and actor.admits(e.traits.constraint):
                yield (score(e.share, e.demand), tie_break(e.user)), e.user, e.task_id, e.demand, e.share, e.traits, None

    def room_for(self, user: str, demands: Sequence[Sequence[float]]) -> bool:
        """Whether this server gives room to tasks of ``user``'s instance (policies/
        gang_desk.py asks, before it notes any here): as its offer would, to no user it
        knows with a lower K_nj whose task waits and fits here now (the instance's K_nj
        here: its lowest over the tasks' demands). A user whose share this server has
        not heard of yet is given room."""
        u = self.home.users.get(user)
        known = self.directory.known.get(user)
        share = u.share if u is not None else known.share if known is not None else None
        if share is None or not demands:
            return True
        mine = (min(self.meter.score(share, d) for d in demands), tie_break(user))
        return not any(c[0] < mine for c in self._candidates(instances=False) if c[1] != user)

    def _try_instance(self, user: str, u) -> None:
        """The home's offer goes to its gang user's instance: a try at it (policies/
        gang_desk.py), out until accepted, declined, failed or overdue; a try that cannot
        start (no room here, nowhere to walk) makes the user stuck."""
        req = u.request
        if not self.desk.ready() or not self._send_out(user, req, u.share):
            self._stuck(user, u)
            return
        u.out = True
        self.actor.after(self.desk.walk_patience, self._overdue, user, req.task_id)

    def _room_freed(self, user: str, task_id: int) -> None:
        """A task ended here: room to offer, and the home's gang users stuck for want of
        room whose first task fits here now try again from the next tick (as ddrf's home
        takes its stuck users back, policies/ddrf.py)."""
        self._changed()
        for u in self.home.users.values():
            if u.stuck and not u.out and u.request is not None and u.request.parts and self.actor.fits(u.request.demand):
                self.home.unstick(u)

    def _resolved(self, user: str, task_id: int, outcome: str) -> None:
        """The user answered the offer (or never did): a declined or unanswered one means
        the task runs or is being placed elsewhere, so it is not offered again, and the
        other servers hear so. (Saying so also when accepted, at once, did not shorten the
        herd of offers for one task: 3 seeds on a 40-server constrained quarter hour, 8.6
        proposals a task either way, 8 % more digests.)"""
        if self._offer == (user, task_id):
            self._offer = None
        self._changed()
        u = self.home.users.get(user)
        instance = u is not None and u.request is not None and u.request.task_id == task_id and bool(u.request.parts)
        super()._resolved(user, task_id, outcome)
        if instance:
            self.directory.home_changed()  # no other server offered for it: nothing to take back
        elif outcome != "accepted":
            self.directory.taken(user, task_id)  # declined or unanswered: placed elsewhere (news)
        elif user in self.home.users:
            self.directory.home_changed()  # a home user's task started here: no longer waiting


class DPSDSF(DistributedPolicy):
    """Servers offer themselves to the lowest PS-DSF score among the users they know
    (module docstring); judged per server against centralized ``psdsf``."""

    name = "d-psdsf"
    sweep_cost = 20.0
    description = "each server offers itself to the lowest per-server dominant share among the users it knows by gossip (Kesidis et al. eq. 12)"
    notion_name = "psdsf"
    offers = True  # judged as an offer of the server the task went to (nodes/collector.py)
    gangs = True  # a gang user's home tries its instance whole (module docstring)
    uses_neighbor_count = False  # news goes to random Cyclon peers, whatever P

    def _meter(self, server, cyclon, roles: list[Role]) -> ShareMeter | None:
        return PerServerShareMeter(server.capacity.tolist())

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        sched = OfferScheduler(desk)
        sched.directory = UserDirectory(sched.home, cyclon)
        if desk.gangs is not None:
            desk.gangs.room_for = sched.room_for
        roles += [sched.directory, sched]
        return roles
