"""What a policy is: how the gateway routes users and which roles each server hosts.

A policy is plugged into nodes; it never sees the clock or the transport, only the
actor it is hosted by. Its options are :class:`PolicyOptions` (policies/options.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from dgdrf.errors import ConfigError
from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.notions import FairnessNotion, notion
from dgdrf.nodes.gateway import Routing
from dgdrf.nodes.protocol import RETRY_S, RegisterServer, Registered
from dgdrf.policies.options import PolicyOptions
from dgdrf.runtime.actor import Role

if TYPE_CHECKING:
    from dgdrf.nodes.server import Server


class AnnounceCapacity(Role):
    """A resource node tells a scheduler or the gateway, at start, that it exists and
    what its capacity is (RegisterServer): nodes learn of each other only by messages.
    Sent again every ``retry`` seconds until acknowledged (Registered): a scheduler that
    never heard of a server leaves its capacity unused, and the run never saturates."""

    actor: Server  # hosted by a resource node

    def __init__(self, to: str, retry: float = RETRY_S) -> None:
        self.to = to
        self.retry = retry
        self.registered = False

    def setup(self) -> None:
        self._announce()

    def _announce(self) -> None:
        if not self.registered:
            self.actor.send(self.to, RegisterServer(self.actor.capacity.tolist(), getattr(self.actor, "attributes", {})))
            self.actor.after(self.retry, self._announce)

    def on_Registered(self, src: str, msg: Registered) -> None:
        if src == self.to:
            self.registered = True


class Policy(ABC):
    """An allocation policy: gateway routing plus the roles each server hosts."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: distributed policies gossip for ``warmup`` seconds before the first allocation tick
    distributed: ClassVar[bool] = False
    #: whether the policy's servers run a gradient overlay (DistributedPolicy.make_gradient)
    uses_gradient: ClassVar[bool] = False
    #: whether what it does depends on ``--neighbors`` (P): a sweep runs a policy that
    #: does not once, at its first neighbour count, as it does a centralized one
    uses_neighbor_count: ClassVar[bool] = True
    #: its servers keep fixed neighbours whose answers they wait for (DDRF's shares,
    #: probes' loads), or a census of servers (a distributed policy with a unit share
    #: meter: DistributedPolicy sets it): they are told of members going down (MemberDown)
    servers_track_members: ClassVar[bool] = False
    #: the gradient a policy runs unless ``--gradient`` says otherwise
    default_gradient: ClassVar[str] = "toolbox"
    #: the fairness notion it ranks users by (model/notions.py), and whether it decides
    #: by server offers (policies/offers.py) rather than user first
    notion_name: ClassVar[str] = "drf"
    offers: ClassVar[bool] = False
    #: whether it places an instance of a job of parts whole, in one decision (model/gangs.py)
    gangs: ClassVar[bool] = False
    #: whether ``--share-level`` means something to it (Ru et al.'s levels of DRF)
    share_levels: ClassVar[bool] = False
    #: a run's relative cost per server x user, by which sweeps start the longest first
    sweep_cost: ClassVar[float] = 1.0

    @classmethod
    def gradient_kind(cls, gradient: str | None) -> str | None:
        """The gradient this policy's servers run given ``--gradient`` (None: none at all)."""
        return (gradient or cls.default_gradient) if cls.uses_gradient else None

    @classmethod
    def member_down_audience(cls, servers: list[str], users: list[str], gone: set[str], gateway: str = "gateway", gangs: bool = False) -> list[str]:
        """Who must hear that the members ``gone`` went down (MemberDown), so that the run
        goes on without them: the gateway re-homes their users; every user, as one may
        have accepted a placement from a server now gone, or have a job that only servers
        gone could run (model/fleet.py); the central scheduler of a centralized policy;
        the servers of a policy whose fixed neighbours may be among the dead
        (:attr:`servers_track_members`); and, when users went down, or in a run with jobs
        of parts (``gangs``: a server may hold a reservation for an instance whose
        coordinator is gone, policies/gang_desk.py), every server (any may hold a task of
        theirs, a proposal to them, or owe them a TaskFinished)."""
        audience = [gateway, *(u for u in users if u not in gone)]
        if gone.intersection(users) or (gangs and cls.distributed):
            audience += [s for s in servers if s not in gone]
        elif not cls.distributed:
            audience.append(servers[0])  # the central scheduler
        elif cls.servers_track_members:
            audience += [s for s in servers if s not in gone]
        return audience

    @classmethod
    def member_up_audience(cls, servers: list[str], users: list[str], gateway: str = "gateway") -> list[str]:
        """Who must hear that a server joined (MemberUp): every member keeps its picture of
        the cluster: the gateway routes to it, users take up again a job it can run, and
        servers count it in the capacity C or the census they know (the newcomer
        included: it counts itself)."""
        return [gateway, *users, *servers]

    def __init__(self, options: PolicyOptions) -> None:
        if options.share_level is not None and not self.share_levels:
            raise ConfigError(f"share_level: policy {self.name!r} has no share levels (drf has: Ru et al.'s levels 1-3)")
        self.options = options

    def fairness(self) -> FairnessNotion:
        """The notion this policy ranks users by, and its runs are judged on."""
        return notion(self.notion_name, self.options.share_level)

    def placeable(self) -> Callable[[AllocationLedger], np.ndarray] | None:
        """Which users the policy may place a task of now, over a ledger of the truth (the
        Collector's): what a run is saturated without and an allocation judged among.
        None: every user whose next task fits somewhere (a work-conserving policy)."""
        return None

    @property
    def allocation_start(self) -> float:
        """When allocation ticks begin: after the overlay's warm-up for distributed policies."""
        return self.options.warmup if self.distributed else 0.0

    @property
    def user_start(self) -> float:
        """When users send their first request: once servers have announced themselves."""
        return 0.05 if self.distributed else 0.0

    @abstractmethod
    def gateway_routing(self) -> Routing:
        """Where the gateway sends users."""

    @abstractmethod
    def server_roles(self, server: Server) -> list[Role]:
        """The roles ``server`` hosts under this policy."""
