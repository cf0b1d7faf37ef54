"""DDRF without task forwarding (Zhu & Oh; thesis 4.3, algorithm 5).

Every user has a fixed home server. Each tick a server takes its user with the lowest
global dominant share whose task waits, and places it if that share is no higher than
every neighbour's last reported minimum (eq. 3.8): on itself if it fits, else by a random
walk over the random overlay. Then it asks all its neighbours for their minimum share
(2|S|P messages a tick at most, eq. 4.3).

``ddrf-random``: the P neighbours are drawn at random (from Cyclon) when allocation
starts. ``ddrf-gradient``: they are the server's gradient view at that moment, the
gradient having run during the warm-up with the utility of eq. 4.2 (0 for servers with
users, -inf without), so servers with users know each other (fig. 4.2). In both the
neighbours are then fixed for the rest of the run. Until a neighbour answers, its share
counts as infinite (alg. 5 starts from [inf, ..., inf]).

A task whose walk finds no room, or is out longer than a walk should take, marks its user
as stuck: it no longer counts towards this server's minimum (its next task fits nowhere
the walk could find) and its task is tried again in the background.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dgdrf.nodes.protocol import Idle, IdleNoted, TaskQueued, TaskRequest
from dgdrf.overlay.gradient import GradientBase
from dgdrf.policies.distributed import DistributedPolicy
from dgdrf.policies.gang_desk import instance_request_ok
from dgdrf.policies.local import HomeUsers, TaskDesk, tie_break
from dgdrf.policies.messages import RoomFreed, ShareReply, ShareRequest
from dgdrf.policies.neighbours import FixedNeighbours
from dgdrf.nodes.ticking import TickingRole
from dgdrf.runtime.actor import Role

if TYPE_CHECKING:
    from dgdrf.nodes.server import Server


#: how long a user whose task found no room stays out of the competition before its task
#: is tried again, at first; doubled at every further failure, up to STUCK_MAX_S (tasks
#: that never end: room found missing stays missing) or STUCK_ENDING_MAX_S (a task with a
#: duration: tasks end, and room comes back)
STUCK_FIRST_S = 10.0
STUCK_MAX_S = 640.0
STUCK_ENDING_MAX_S = 10.0


class HomeScheduler(TickingRole):
    actor: Server  # hosted by a resource node

    """Home-user bookkeeping shared by DDRF, DGDRF and PDGDRF.

    Tasks arrive from home users with the share each user reports (alg. 3). While a
    user's task is out (proposed here or walking), the user keeps its reported share, so
    the server keeps its place in the overlay's order until the user reports the share the
    placed task gave it: no other server's user can overtake a task still on its way, as
    DRF's strict order requires.

    A task whose walk found no room makes its user *stuck*: it no longer counts towards
    this server's minimum (eq. 4.2), so the rest of the cluster goes on. A walk has a
    bounded length (4.3) and can miss the one server with room, and tasks never end, so
    capacity that exists now stays: the task is tried again, by a walk in the background
    (the user stays stuck meanwhile), after STUCK_FIRST_S seconds, then after twice as long
    at every further failure (up to STUCK_MAX_S). A run ends when no task fits anywhere,
    so a task that really fits nowhere costs a few walks' messages. With tasks that end
    (jobs), room comes back: a stuck task with a duration is tried again at least every
    STUCK_ENDING_MAX_S, and a task ending on this server makes the stuck home users whose
    task fits here compete again at once (:meth:`_room_freed`). A home user with nothing
    pending (Idle) leaves the competition as a stuck one does, until its next task.

    A task still out after the desk's ``walk_patience`` (overdue) makes its user stuck in
    the same way: its walk's failure is presumed. Under loss a walk of a task that fits
    nowhere can take much longer than that (each lost hop waits RETRY_S before it is sent
    again), and its WalkFailed is sent once and can be lost; until the user is stuck it
    holds this server's minimum, so in DGDRF it holds the gradient's centre and nothing
    else is placed (docs/notes/2026-11-26-controls-crash-churn-partition.md)."""

    # its fields in slots, not the instance dictionary: a tick reads desk and home (a faster lookup)
    __slots__ = ("desk", "home", "_room_at", "_gang_tries")

    def __init__(self, desk: TaskDesk) -> None:
        self.desk = desk
        self.home = HomeUsers(desk.meter)
        #: user -> the server whose room notice unstuck it (its next walk's first hop)
        self._room_at: dict[str, str] = {}
        self._gang_tries = 0  # instances' failed tries here (their backoffs differ by it)
        desk.on_resolved = self._resolved
        desk.on_walk_failed = self._walk_failed

    def setup(self) -> None:
        hooks = getattr(self.actor, "on_finished", None)  # a resource node's (tests host roles on bare actors)
        if hooks is not None:
            hooks.append(self._room_freed)

    def on_TaskRequest(self, src: str, msg: TaskRequest) -> None:
        if msg.parts and not self._instance_ok(src, msg):
            return
        self.actor.send(msg.user, TaskQueued(msg.task_id))
        self.home.submit(msg)

    def _instance_ok(self, src: str, msg: TaskRequest) -> bool:
        return instance_request_ok(self.actor, self.desk.gangs, src, msg)

    def on_Idle(self, src: str, msg: Idle) -> None:
        """A home user with nothing pending leaves the competition (eq. 4.2's minimum)
        until its next task: else it would hold this server's minimum, and in DGDRF the
        centre, for a task that is not coming."""
        self.actor.send(src, IdleNoted(msg.task_id))
        self.home.idle(src, msg.task_id)

    def members_down(self, addresses: Sequence[str]) -> None:
        """Home users that went down (their processes killed) compete no more: their
        tasks waiting here are dropped (a proposal of one out is the desk's to give back:
        TaskDesk.members_down), so none holds this server's minimum, or in DGDRF the
        centre, for a user that will never answer."""
        for user in addresses:
            if self.home.forget(user):
                self._room_at.pop(user, None)

    def on_RoomFreed(self, src: str, msg: RoomFreed) -> None:
        """A server that ``msg``'s task walked past for want of room has room for it now
        (room notices, policies/local.py): a stuck user with that task competes again
        from the next tick, and its next placement walks there first. A notice for a
        task placed or replaced since changes nothing."""
        u = self.home.users.get(msg.user)
        if u is not None and u.stuck and not u.out and u.request is not None and u.request.task_id == msg.task_id:
            self.home.unstick(u)
            self._room_at[msg.user] = src

    def _room_freed(self, user: str, task_id: int) -> None:
        """A task ended on this server: the home users stuck for want of room whose task
        fits here now compete again (from the next tick, in their order of shares, as
        DRF takes back a user whose task fits again), rather than at their next retry."""
        for u in self.home.users.values():
            if u.stuck and not u.out and u.request is not None and self.actor.fits(u.request.demand) and self.desk.admits(u.request):
                self.home.unstick(u)

    def place_lowest(self, admit: Callable[[float], bool] | None = None) -> bool:
        """Send out the task of the lowest placeable user, if it waits and ``admit``s."""
        low = self.home.lowest()
        if low is None:
            return False
        uid, u = low
        if u.request is None or u.out or (admit is not None and not admit(self.home.min_share())):
            return False
        if not self.desk.ready():  # no estimate of C (or of the meter's census) yet: push-sum spreading
            return False
        req = u.request
        if not self._send_out(uid, req, u.share, self._room_at.pop(uid, None)):
            self._stuck(uid, u)  # no room here and nowhere to walk
            return False
        u.out = True
        self.actor.after(self.desk.walk_patience, self._overdue, uid, req.task_id)
        return True

    def _send_out(self, user: str, req: TaskRequest, share: float, first: str | None = None) -> bool:
        """Propose ``req``'s task here or walk it (TaskDesk.place); an instance of a job
        of parts, reserve it whole then commit (policies/gang_desk.py). False if no
        walk is possible."""
        if req.parts:
            return self.desk.gangs.place(user, req, share, first)
        return self.desk.place(user, req.task_id, req.demand, share, self.actor.address, req.traits(), first)

    def _overdue(self, user: str, task_id: int) -> None:
        """A task still out after the longest lossless walk and its proposal: its walk
        was lost (with a server that went down, or every retransmission of a hop lost),
        its proposal's end went unreported to this home, or it is still walking, slowed
        by retransmissions, and will likely fail. Its user is made stuck, as by a
        WalkFailed (see the class), and a task that fits after all is placed by the
        background retry, STUCK_FIRST_S later. A late original is harmless: the user
        accepts one proposal per task and declines the rest. A task known to run is not
        placed again."""
        u = self.home.users.get(user)
        if u is not None and u.out and u.request is not None and u.request.task_id == task_id and u.started != task_id:
            u.out = False
            self.actor.report("task_overdue", user=user, task_id=task_id)
            self._stuck(user, u)

    def _resolved(self, user: str, task_id: int, outcome: str) -> None:
        u = self.home.users.get(user)
        if u is None or u.request is None or u.request.task_id != task_id:
            return
        if outcome == "accepted":
            u.started = task_id
        else:
            u.out = False  # declined or unanswered: the task waits here again
            if u.stuck:
                self._stuck(user, u)

    def _walk_failed(self, user: str, task_id: int) -> None:
        u = self.home.users.get(user)
        if u is not None and u.request is not None and u.request.task_id == task_id:
            u.out = False
            self._stuck(user, u)  # its task found no room: it no longer holds the minimum

    def _stuck(self, user: str, u) -> None:
        self.home.mark_stuck(u)
        longest = STUCK_ENDING_MAX_S if u.request.duration > 0 else STUCK_MAX_S
        u.stuck_for = min(longest, 2 * u.stuck_for) if u.stuck_for else STUCK_FIRST_S
        wait = u.stuck_for
        if u.request.parts:  # instances that took each other's room try again apart, not in step (policies/gang_desk.py)
            self._gang_tries += 1
            wait *= 1.0 + tie_break(f"{user}/{u.request.task_id}/{self._gang_tries}")
        self.actor.after(wait, self._retry_stuck, user, u.request.task_id)

    def _retry_stuck(self, user: str, task_id: int) -> None:
        """Try a stuck user's task again, in the background: it stays out of the
        competition (eq. 4.2's utility leaves it out), so a task that fits nowhere does
        not hold DGDRF's strict order back for a walk at every retry (several servers'
        stuck users would take the centre in turn, and a run could stall:
        docs/notes/2026-11-25-why-runs-stalled.md, "Stuck for good").
        Placing it when room is found keeps DRF's order: its share was the lowest when it
        got stuck, and the others' have only grown."""
        u = self.home.users.get(user)
        if u is None or not u.stuck or u.out or u.idle or u.request is None or u.request.task_id != task_id:
            return
        if not self.desk.ready():
            self._stuck(user, u)
            return
        if not self._send_out(user, u.request, u.share):
            self._stuck(user, u)
            return
        u.out = True
        self.actor.after(self.desk.walk_patience, self._overdue, user, u.request.task_id)



class DdrfScheduler(HomeScheduler):
    """Algorithm 5 on one server."""

    def __init__(self, desk: TaskDesk, neighbour_source: Callable[[], list[str]], neighbors: int) -> None:
        super().__init__(desk)
        self.fixed = FixedNeighbours(neighbour_source, neighbors)
        self.shares: dict[str, float] = {}  # neighbour -> its last reported minimum share

    @property
    def neighbours(self) -> list[str] | None:
        return self.fixed.members

    def on_tick(self) -> None:
        if not self.fixed.complete():
            for n in self.fixed.draw():  # alg. 5 starts from [inf, ..., inf]
                self.shares.setdefault(n, math.inf)
        floor = min(self.shares.values(), default=math.inf)
        self.place_lowest(lambda share: share <= floor)
        if self.home.users:  # only servers with users need their neighbours' state (4.3)
            for n in self.neighbours or ():
                self.actor.send(n, ShareRequest())

    def members_down(self, addresses: Sequence[str]) -> None:
        """Neighbours that went down (network mode) are replaced at the next tick: the
        last minimum share a dead neighbour reported would otherwise hold this server's
        users back for ever (eq. 3.8 compares against it), although its users moved."""
        super().members_down(addresses)
        self.fixed.forget(addresses)
        for n in addresses:
            self.shares.pop(n, None)

    def on_ShareRequest(self, src: str, msg: ShareRequest) -> None:
        self.actor.send(src, ShareReply(self.home.min_share()))

    def on_ShareReply(self, src: str, msg: ShareReply) -> None:
        if src in self.shares:
            self.shares[src] = msg.share


class DdrfRandom(DistributedPolicy):
    name = "ddrf-random"
    sweep_cost = 8.0
    gangs = True  # its homes reserve an instance's servers, then commit (policies/gang_desk.py)
    servers_track_members = True
    description = "DDRF, fixed random neighbours (thesis 4.3, alg. 5)"

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        roles.append(DdrfScheduler(desk, lambda: cyclon.sample(self.options.neighbors), self.options.neighbors))
        return roles


class DdrfGradient(DistributedPolicy):
    name = "ddrf-gradient"
    sweep_cost = 8.0
    gangs = True  # as ddrf-random
    servers_track_members = True
    description = "DDRF, neighbours fixed from a gradient built during warm-up (thesis 4.3, eq. 4.2)"
    uses_gradient = True

    def server_roles(self, server) -> list[Role]:
        roles, cyclon, desk = self.common_roles(server)
        holder: list[GradientBase] = []
        sched = DdrfScheduler(desk, lambda: holder[0].neighbours() or cyclon.sample(self.options.neighbors), self.options.neighbors)
        # eq. 4.2 during warm-up: 0 with users (nobody has a task yet), -inf without
        gradient = self.make_gradient(lambda: 0.0 if sched.home.users else -math.inf, cyclon)
        holder.append(gradient)
        gradient.stop_after = self.options.warmup  # frozen once allocation starts
        roles += [gradient, sched]
        return roles
