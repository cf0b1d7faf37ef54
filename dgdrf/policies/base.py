"""What a policy is: how the gateway routes users and which roles each server hosts.

A policy is plugged into nodes; it never sees the clock or the transport, only the
actor it is hosted by. Options common to all policies are in :class:`PolicyOptions`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from dgdrf.nodes.gateway import Routing
from dgdrf.nodes.protocol import RETRY_S, RegisterServer, Registered
from dgdrf.overlay.toolbox_gradient import DEFAULT_OLD_THRESHOLD
from dgdrf.runtime.actor import Role

if TYPE_CHECKING:
    from dgdrf.nodes.server import Server

CAPACITY_KNOWLEDGE = ("exact", "pushsum")
#: how a gradient keeps its view: as the Kompics toolbox the thesis used (ages, no memory),
#: or with stamps and a memory of recently heard nodes (overlay/gradient.py)
GRADIENTS = ("toolbox", "stamped")
#: whose utilities PDGDRF's Gini test (eq. 4.7) takes: the gradient view S_l (alg. 6), or
#: also the peer-sampling view (the other neighbours a Kompics node hears utilities from)
GINI_NEIGHBOURS = ("gradient", "overlay")


@dataclass(frozen=True)
class PolicyOptions:
    """Options every policy receives (configuration, the way a deployment is configured).

    ``central``: the central scheduler's address (centralized policies); ``gateway`` and
    ``bootstrap``: well-known addresses; ``neighbors``: overlay view size P (2-10 in the
    thesis); ``tick``: allocation tick; ``total_capacity``: the cluster capacity C, given
    to the servers when ``capacity_knowledge`` is "exact" (as in the thesis), or estimated
    by push-sum ("pushsum", started by ``initiator``); ``warmup``: seconds of gossip before
    the first allocation tick of the distributed policies; gossip periods and Cyclon sizes.
    """

    central: str
    gateway: str = "gateway"
    bootstrap: str = "bootstrap"
    tick: float = 0.1
    neighbors: int = 4
    total_capacity: tuple[float, ...] = ()
    capacity_knowledge: str = "exact"
    initiator: str = ""
    warmup: float = 10.0
    cyclon_view: int = 10
    cyclon_shuffle: int = 5
    cyclon_period: float = 1.0
    gradient_period: float | None = None  # default: one exchange per allocation tick
    idle_gossip: bool = True  # servers without users start gradient exchanges (False: only answer)
    gradient_memory: int | None = None  # nodes remembered beyond the gradient view; None: the policy's default
    gradient: str | None = None  # "toolbox" or "stamped"; None: the policy's default
    gradient_old_threshold: int = DEFAULT_OLD_THRESHOLD  # toolbox: age at which the oldest entry leaves
    gini_neighbours: str = "gradient"  # PDGDRF's Gini over the gradient view, or the whole overlay
    retry: float = RETRY_S  # seconds a protocol step waits for its answer before sending again

    @property
    def gradient_every(self) -> float:
        return self.tick if self.gradient_period is None else self.gradient_period


class AnnounceCapacity(Role):
    """A resource node tells a scheduler or the gateway, at start, that it exists and
    what its capacity is (RegisterServer): nodes learn of each other only by messages.
    Sent again every ``retry`` seconds until acknowledged (Registered): a scheduler that
    never heard of a server leaves its capacity unused, and the run never saturates."""

    def __init__(self, to: str, retry: float = RETRY_S) -> None:
        self.to = to
        self.retry = retry
        self.registered = False

    def setup(self) -> None:
        self._announce()

    def _announce(self) -> None:
        if not self.registered:
            self.actor.send(self.to, RegisterServer(self.actor.capacity.tolist()))
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
    #: its servers keep fixed neighbours whose answers they wait for (DDRF's shares,
    #: probes' loads): in network mode they are told of members going down (MemberDown)
    servers_track_members: ClassVar[bool] = False
    #: the gradient a policy runs unless ``--gradient`` says otherwise
    default_gradient: ClassVar[str] = "toolbox"

    @classmethod
    def gradient_kind(cls, gradient: str | None) -> str | None:
        """The gradient this policy's servers run given ``--gradient`` (None: none at all)."""
        return (gradient or cls.default_gradient) if cls.uses_gradient else None

    def __init__(self, options: PolicyOptions) -> None:
        self.options = options

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
