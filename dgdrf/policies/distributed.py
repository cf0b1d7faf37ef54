"""What every distributed policy's server hosts (thesis ch. 4): it announces itself to the
gateway, joins the random overlay (Cyclon), knows C exactly or by push-sum, and proposes
tasks through a :class:`~dgdrf.policies.local.TaskDesk`."""

from __future__ import annotations

from collections.abc import Callable

from dgdrf.nodes.gateway import HomeRouting, Routing
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.gradient import Gradient, GradientBase
from dgdrf.overlay.toolbox_gradient import ToolboxGradient
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
        roles: list[Role] = [AnnounceCapacity(o.gateway, o.retry), cyclon]
        if o.capacity_knowledge == "pushsum":
            pushsum = PushSum(server.capacity.tolist(), 1.0 if server.address == o.initiator else 0.0, cyclon, o.cyclon_period)
            roles.append(pushsum)
            knowledge = CapacityKnowledge(pushsum=pushsum)
        else:
            knowledge = CapacityKnowledge(exact=o.total_capacity)
        desk = TaskDesk(knowledge, sampler=cyclon, retry=o.retry)
        roles.append(desk)
        return roles, cyclon, desk

    def make_gradient(self, utility: Callable[[], float], cyclon: Cyclon) -> GradientBase:
        """The gradient overlay (thesis 4.3-4.5) of the kind the options or the policy
        choose: the Kompics toolbox's, as the thesis ran it, or the stamped one."""
        o = self.options
        if self.gradient_kind(o.gradient) == "toolbox":
            return ToolboxGradient(utility, o.neighbors, o.gradient_every, sampler=cyclon, old_threshold=o.gradient_old_threshold, idle_quiet=not o.idle_gossip)
        return Gradient(utility, o.neighbors, o.gradient_every, sampler=cyclon, idle_quiet=not o.idle_gossip, memory=o.gradient_memory)
