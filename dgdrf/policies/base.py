"""What a policy is: how the gateway routes users and which roles each server hosts.

A policy is plugged into nodes; it never sees the clock or the transport, only the
actor it is hosted by. Options common to all policies are in :class:`PolicyOptions`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from dgdrf.nodes.gateway import Routing
from dgdrf.runtime.actor import Role


@dataclass(frozen=True)
class PolicyOptions:
    """Options every policy receives.

    ``central``: address of the central scheduler (centralized policies); ``neighbors``:
    overlay view size (the thesis varies it 2-10); ``tick``: allocation tick seconds.
    """

    central: str
    tick: float = 0.1
    neighbors: int = 4


class Policy(ABC):
    """An allocation policy: gateway routing plus the roles each server hosts."""

    name: ClassVar[str]
    description: ClassVar[str]

    def __init__(self, options: PolicyOptions) -> None:
        self.options = options

    @abstractmethod
    def gateway_routing(self) -> Routing:
        """Where the gateway sends users."""

    @abstractmethod
    def server_roles(self, address: str) -> list[Role]:
        """The roles the server at ``address`` hosts under this policy."""
