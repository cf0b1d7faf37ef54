"""The proposer's side of the placement handshake, one copy for every scheduler.

A scheduler that has placed a task (reserved capacity for it: in the central ledger, or
on its own server) proposes it to the task's user; the user accepts one proposal per task
and declines the rest (nodes/user.py, thesis 4.2's proposals). Under loss and repeats
(nodes/protocol.py) the proposer's part is the same wherever the reservation lives:

- the Proposal is sent again every ``retry`` seconds until the user answers, and expires
  after ``proposal_timeout`` (the reservation is given back, by the owner's ``on_expired``);
- an Accept for the open proposal takes it (the owner starts or orders the task); one
  repeated for the proposal accepted last is the user's answer to a lost start, so the
  owner starts or orders it again; any other Accept (a proposal that expired or was
  withdrawn) is answered Withdrawn, so the user waits for another;
- a Decline for the open proposal gives it back.

:class:`~dgdrf.policies.centralized.CentralScheduler` and
:class:`~dgdrf.policies.local.TaskDesk` (every distributed policy) hold one each; what they
keep per proposal (a ledger placement, a local reservation) is their own item ``T``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dgdrf.nodes.protocol import PROPOSAL_TIMEOUT_S, RETRY_S, Accept, Decline, Proposal, Withdrawn
from dgdrf.runtime.actor import Role

T = TypeVar("T")


@dataclass(slots=True)
class Open(Generic[T]):
    """A proposal out, unanswered: the owner's item and the proposal's reference."""

    item: T
    ref: int


@dataclass(slots=True)
class Taken(Generic[T]):
    """The proposal a user accepted last: its task, reference and the owner's item."""

    task_id: int
    ref: int
    item: T


class ProposalHandshake(Generic[T]):
    """Proposals of one scheduler, keyed by (user, task). ``owner`` is the role that
    sends them (its actor's clock, network and reports); ``on_expired(user, task_id,
    item)`` gives back what an unanswered proposal held."""

    def __init__(self, owner: Role, on_expired: Callable[[str, int, T], None], retry: float = RETRY_S, proposal_timeout: float = PROPOSAL_TIMEOUT_S) -> None:
        self.owner = owner
        self.on_expired = on_expired
        self.retry = retry
        self.proposal_timeout = proposal_timeout
        self.open: dict[tuple[str, int], Open[T]] = {}
        self.taken: dict[str, Taken[T]] = {}  # user -> the proposal it accepted last
        self._ref = 0

    def propose(self, user: str, task_id: int, server: str, item: T, servers: Sequence[str] = ()) -> int:
        """Propose ``user``'s task on ``server`` (sent now and again every ``retry``
        seconds until answered); its reference. ``servers``: an instance of a job of
        parts, one server a task (model/gangs.py)."""
        self._ref += 1
        ref = self._ref
        self.open[(user, task_id)] = Open(item, ref)
        actor = self.owner.actor
        actor.send(user, Proposal(task_id, server, ref, list(servers)))
        actor.after(self.retry, self._again, user, task_id, server, ref, self.retry, tuple(servers))
        return ref

    def _again(self, user: str, task_id: int, server: str, ref: int, waited: float, servers: tuple[str, ...] = ()) -> None:
        p = self.open.get((user, task_id))
        if p is None or p.ref != ref:
            return  # answered
        actor = self.owner.actor
        if waited >= self.proposal_timeout:
            del self.open[(user, task_id)]
            actor.report("proposal_expired", user=user, task_id=task_id)
            self.on_expired(user, task_id, p.item)
            return
        actor.report("retransmitted", step="proposal")
        actor.send(user, Proposal(task_id, server, ref, list(servers)))
        actor.after(self.retry, self._again, user, task_id, server, ref, waited + self.retry, servers)

    def accept(self, user: str, msg: Accept) -> tuple[T, bool] | None:
        """The proposal ``msg`` accepts and whether this is its first Accept (else the
        user repeats it: the start or its TaskAllocated was lost). None for an Accept of
        a proposal no longer open, which is answered Withdrawn."""
        key = (user, msg.task_id)
        p = self.open.get(key)
        if p is not None and p.ref == msg.ref:
            del self.open[key]
            self.taken[user] = Taken(msg.task_id, msg.ref, p.item)
            return p.item, True
        taken = self.taken.get(user)
        if taken is not None and taken.task_id == msg.task_id and taken.ref == msg.ref:
            return taken.item, False
        actor = self.owner.actor
        actor.report("unexpected_accept", user=user, task_id=msg.task_id)
        actor.send(user, Withdrawn(msg.task_id, msg.ref))
        return None

    def decline(self, user: str, msg: Decline) -> T | None:
        """The open proposal ``msg`` declines, now closed; None if it is not open."""
        key = (user, msg.task_id)
        p = self.open.get(key)
        if p is None or p.ref != msg.ref:
            return None
        del self.open[key]
        return p.item

    def withdraw(self, user: str, task_id: int) -> T | None:
        """Take back an open proposal (the user is told Withdrawn); its item, if open."""
        p = self.open.pop((user, task_id), None)
        if p is None:
            return None
        self.owner.actor.send(user, Withdrawn(task_id, p.ref))
        return p.item

    def drop_user(self, user: str) -> list[tuple[int, T]]:
        """Take back every open proposal to ``user``, which went down (nobody is told):
        (task id, item) of each, for the owner to give back what it held."""
        dropped = [(task_id, p.item) for (u, task_id), p in self.open.items() if u == user]
        for task_id, _ in dropped:
            del self.open[(user, task_id)]
        return dropped

    def void(self, user: str, task_id: int) -> Taken[T] | None:
        """Forget the accepted proposal of ``user``'s task ``task_id`` (it could not
        start after all) and tell the user it no longer stands; what it was, if held."""
        taken = self.taken.get(user)
        if taken is None or taken.task_id != task_id:
            return None
        del self.taken[user]
        self.owner.actor.send(user, Withdrawn(task_id, taken.ref))
        return taken
