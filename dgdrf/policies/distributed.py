"""What every distributed policy's server hosts (thesis ch. 4): it announces itself to the
gateway, joins the random overlay (Cyclon), knows C exactly or by push-sum, and proposes
tasks through a :class:`~dgdrf.policies.local.TaskDesk`."""

from __future__ import annotations

from dgdrf.nodes.gateway import HomeRouting, Routing
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.pushsum import PushSum
from dgdrf.policies.base import AnnounceCapacity, Policy
from dgdrf.policies.local import CapacityKnowledge, TaskDesk
from dgdrf.runtime.actor import Role


class DistributedPolicy(Policy):
    """Common wiring of the distributed policies; subclasses add their scheduler role."""

    distributed = True

    def gateway_routing(self) -> Routing:
        return HomeRouting()

    def common_roles(self, server) -> tuple[list[Role], Cyclon, TaskDesk]:
        o = self.options
        cyclon = Cyclon(o.cyclon_view, o.cyclon_shuffle, o.cyclon_period, bootstrap=o.bootstrap)
        roles: list[Role] = [AnnounceCapacity(o.gateway), cyclon]
        if o.capacity_knowledge == "pushsum":
            pushsum = PushSum(server.capacity.tolist(), 1.0 if server.address == o.initiator else 0.0, cyclon, o.cyclon_period)
            roles.append(pushsum)
            knowledge = CapacityKnowledge(pushsum=pushsum)
        else:
            knowledge = CapacityKnowledge(exact=o.total_capacity)
        desk = TaskDesk(knowledge, sampler=cyclon)
        roles.append(desk)
        return roles, cyclon, desk
