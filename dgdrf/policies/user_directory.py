"""What a d-psdsf server knows of the users that may run on it: a directory of their latest
reports, spread by rumour-mongering push-pull gossip over the random overlay.

PS-DSF's score of user n on server j, K_nj = x_n max_r (d_nr / c_jr) / φ_n (Kesidis et al.
eq. 12), needs only n's demand, weight and running task count x_n, and j's own capacity:
no census and no list of servers. What server j lacks is who the users are. A user's home
server knows it exactly (the user's TaskRequest carries x_n / φ_n, its next task's demand,
weight, duration and constraint: alg. 3, with #19's traits). So every home describes its
users, and every server relays what it has heard:

- a *report* of a user is its task id, the share it reported, whether that task still
  waits, its demand and traits. A report supersedes another of the same user when it is
  of a later task, or of the same task and says it no longer waits (its task started:
  placed here or elsewhere, or its user went idle), or says it waits with a lower share
  (while its task waits, a user's share only falls, as its tasks end). No clock enters:
  reports are ordered by what they say, so homes may move (churn) and clocks may differ;
- news travels at once: a server that learns something new (a report merged, one of its
  home users' reports changed, or an offer of its own answered: the task is placed, here
  or elsewhere) sends just that, at once, to :data:`FANOUT` random peers (Cyclon), which do
  the same with what is new to them: a rumour floods the overlay in O(log N) message
  latencies, and each server hears it about FANOUT times;
- anti-entropy catches what a rumour missed (a lost message, a server that joined): every
  :data:`REFRESH_S` seconds a server that knows of a waiting task sends a random peer a
  :class:`UserDigest` of its most recently changed reports, home users' waiting tasks
  first (at most :data:`MOST`), and the peer merges it and answers with its own
  (push-pull, as Cyclon's shuffle). A server that knows of no waiting task is quiet.

What a server knows, then: its home users exactly; every other user's report that has had
a few exchanges to reach it. What it does not know: a task that began waiting, or a share
that fell, in the last few exchanges, and whether another server has just placed a task;
it learns that from the news (the server whose offer was accepted says so at once) or
from the user's Decline of its own offer.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dgdrf.model.workload import TaskTraits
from dgdrf.nodes.protocol import task_traits, trait_fields
from dgdrf.overlay.sampling import PeerSampling
from dgdrf.policies.messages import UserDigest
from dgdrf.runtime.actor import Role
from dgdrf.runtime.messages import MAX_RECORDS

if TYPE_CHECKING:
    from dgdrf.policies.local import HomeUsers

#: most reports one digest carries (the wire's bound on a column of records)
MOST = MAX_RECORDS
#: peers a server sends what is new to it
FANOUT = 2
#: seconds between the anti-entropy exchanges of a server that knows of a waiting task
REFRESH_S = 5.0


@dataclass(slots=True)
class UserReport:
    """A user's latest task as its home described it: waiting for a server, or not."""

    user: str
    home: str
    task_id: int
    share: float  # what its user reported: x_n / φ_n
    waiting: bool
    demand: list[float]
    traits: TaskTraits
    #: the traits' wire fields (weight, duration, eligible, requires), kept to relay
    wire: tuple[float, float, list[str], dict[str, Any]]
    changed: float = 0.0  # local time this server learned it (the most recent are sent first)

    def newer_than(self, other: UserReport) -> bool:
        """Whether this report of the user supersedes ``other``."""
        return supersedes(self.task_id, self.waiting, self.share, other)


def supersedes(task_id: int, waiting: bool, share: float, old: UserReport) -> bool:
    """Whether a report (``task_id``, ``waiting``, ``share``) of a user supersedes ``old``:
    a later task; for the same task, "no longer waiting" (it started, or its user went
    idle); or, waiting still, a lower share (a waiting task's user only loses tasks)."""
    if task_id != old.task_id:
        return task_id > old.task_id
    if waiting != old.waiting:
        return not waiting
    return waiting and share < old.share


def home_report(user: str, home: str, request, share: float, waiting: bool) -> UserReport:
    """The report of a home user with ``request`` (a TaskRequest) waiting or not."""
    traits = request.traits()
    return UserReport(user, home, request.task_id, share, waiting, list(request.demand), traits, tuple(trait_fields(traits)[:4]))  # type: ignore[arg-type]


class UserDirectory(Role):
    """The other servers' users this server has heard of (``known``: each one's latest
    report), and the gossip that spreads them; ``home`` is this server's own users."""

    def __init__(self, home: HomeUsers, sampler: PeerSampling | None, refresh: float = REFRESH_S, fanout: int = FANOUT, most: int = MOST) -> None:
        self.home = home
        self.sampler = sampler
        self.refresh = refresh
        self.fanout = fanout
        self.most = most
        self.known: dict[str, UserReport] = {}
        #: the home users' reports as last described (user -> report)
        self._mine: dict[str, UserReport] = {}
        #: home users' tasks an offer of this server was declined for (placed elsewhere)
        self._placed: dict[str, int] = {}
        #: bumped whenever what this server knows changes (a scheduler may offer again)
        self.version = 0
        #: when news from another server last came (local time)
        self.heard_at = -1.0
        self._gone: set[str] = set()  # users declared down

    def setup(self) -> None:
        rng = self.actor.rng
        self.actor.every(self.refresh, self.exchange, first=float(rng.uniform(0.0, self.refresh)))

    # -- what this server knows ---------------------------------------------------------
    def waiting(self) -> list[UserReport]:
        """The other servers' users' tasks known to wait."""
        return [r for r in self.known.values() if r.waiting]

    def placed(self, user: str, task_id: int) -> bool:
        """Whether the task is known to have started (an offer of it was declined)."""
        known = self.known.get(user)
        return self._placed.get(user, -1) >= task_id or (known is not None and known.task_id >= task_id and not known.waiting)

    def taken(self, user: str, task_id: int) -> None:
        """The task started, here (its user accepted this server's offer) or elsewhere
        (the offer was declined, or never answered): known as not waiting from now on,
        and that is news, which the other servers need to stop offering it."""
        if user in self.home.users:
            self._placed[user] = max(task_id, self._placed.get(user, -1))
            self.home_changed()
        entry = self.known.get(user)
        if entry is not None and entry.task_id <= task_id and entry.waiting:
            report = UserReport(user, entry.home, task_id, entry.share, False, entry.demand, entry.traits, entry.wire, self.actor.now())
            self.known[user] = report
            self._news([report])

    def members_down(self, addresses: Sequence[str]) -> None:
        """Users that went down wait for nothing any more: their reports are dropped, and
        one heard of them later (gossip from a server that had not heard yet) is not kept."""
        for user in addresses:
            self._gone.add(user)
            self._placed.pop(user, None)
            if self.known.pop(user, None) is not None or self._mine.pop(user, None) is not None:
                self.version += 1

    # -- gossip ---------------------------------------------------------------------------
    def home_changed(self) -> None:
        """A home user's report may have changed (its task came, started, or its share
        fell): what changed goes out at once."""
        changed = self._describe_home()
        if changed:
            self._news(changed)

    def _describe_home(self) -> list[UserReport]:
        """The home users' reports now: those that changed."""
        me, now, mine = self.actor.address, self.actor.now(), self._mine
        changed = []
        for uid, u in self.home.users.items():
            r = u.request
            if r is None:
                continue
            # an instance (a job of parts) waits for its home's try, not for another server's offer
            waiting = not u.idle and u.started != r.task_id and self._placed.get(uid, -1) < r.task_id and not r.parts
            old = mine.get(uid)
            if old is None or old.task_id != r.task_id or old.waiting != waiting or (waiting and old.share != u.share):
                report = home_report(uid, me, r, u.share, waiting)
                report.changed = now
                mine[uid] = report
                changed.append(report)
        return changed

    def _news(self, reports: list[UserReport], heard: bool = False) -> None:
        """What changed here goes out; ``heard``: it came from another server (a report
        still on its way to this one may follow it: :attr:`heard_at`)."""
        self.version += 1
        if heard:
            self.heard_at = self.actor.now()
        self._spread(reports)

    def _spread(self, reports: list[UserReport]) -> None:
        """Send what is new here to FANOUT random peers (not answered)."""
        if self.sampler is None:
            return
        digest = self._pack(reports, reply=True)
        peers = self.sampler.sample(self.fanout)
        if not peers:  # a view caught empty (Cyclon on very few nodes): the last partner
            peer = self.sampler.random_peer()
            peers = [peer] if peer is not None else []
        for peer in peers:
            self.actor.send(peer, digest)

    def exchange(self) -> None:
        """Anti-entropy: push the digest to a random peer (it answers with its own) while
        a task is known to wait; else stay quiet."""
        self.home_changed()
        if not (any(r.waiting for r in self._mine.values()) or any(r.waiting for r in self.known.values())):
            return
        peer = self.sampler.random_peer() if self.sampler is not None else None
        if peer is not None:
            self.actor.send(peer, self._digest(reply=False))

    def _digest(self, reply: bool) -> UserDigest:
        """The home users' waiting tasks first, then the most recently changed reports."""
        mine = self._mine
        first = [r for r in mine.values() if r.waiting]
        rest = sorted([r for r in mine.values() if not r.waiting] + list(self.known.values()), key=lambda r: -r.changed)
        return self._pack((first + rest)[: self.most], reply)

    @staticmethod
    def _pack(reports: list[UserReport], reply: bool) -> UserDigest:
        return UserDigest(
            [r.user for r in reports],
            [r.home for r in reports],
            [[float(r.task_id), r.share, r.wire[0], r.wire[1], 1.0 if r.waiting else 0.0] for r in reports],
            [r.demand for r in reports],
            [r.wire[2] for r in reports],
            [r.wire[3] for r in reports],
            reply,
        )

    def on_UserDigest(self, src: str, msg: UserDigest) -> None:
        n = len(msg.users)
        if not (len(msg.homes) == len(msg.numbers) == len(msg.demands) == len(msg.eligible) == len(msg.requires) == n) or n > self.most:
            self.actor.report("bad_message", type="UserDigest", src=src, reason="columns of different lengths, or too many reports")
            return
        for i, numbers in enumerate(msg.numbers):
            if len(numbers) != 5 or numbers[0] != int(numbers[0]) or numbers[2] <= 0 or numbers[4] not in (0.0, 1.0):
                self.actor.report("bad_message", type="UserDigest", src=src, reason=f"report {i}: numbers must be [task id, share, weight > 0, duration, waiting 0 or 1]")
                return
        if not msg.reply:
            self.home_changed()
            self.actor.send(src, self._digest(reply=True))
        now, home_users, known = self.actor.now(), self.home.users, self.known
        news: list[UserReport] = []
        for i in range(n):
            user = msg.users[i]
            if user in home_users or user in self._gone:
                continue  # its home knows better; or it went down
            numbers = msg.numbers[i]
            task_id, share, waiting = int(numbers[0]), numbers[1], numbers[4] == 1.0
            old = known.get(user)
            if old is not None and not supersedes(task_id, waiting, share, old):
                continue  # not newer: nothing to build
            try:
                traits = task_traits(numbers[2], numbers[3], msg.eligible[i], msg.requires[i], 0.0, 0)
            except (TypeError, ValueError) as exc:
                self.actor.report("bad_message", type="UserDigest", src=src, reason=f"report {i}: {exc}")
                continue
            report = UserReport(user, msg.homes[i], task_id, share, waiting, list(msg.demands[i]), traits, (numbers[2], numbers[3], msg.eligible[i], msg.requires[i]), now)
            known[user] = report
            news.append(report)
        if news:
            self._news(news, heard=True)
