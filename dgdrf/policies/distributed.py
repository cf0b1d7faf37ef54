"""What every distributed policy's server hosts (thesis ch. 4): it announces itself to the
gateway, joins the random overlay (Cyclon), knows C exactly or by push-sum, and proposes
tasks through a :class:`~dgdrf.policies.local.TaskDesk`; a policy of TSF's or CDRF's
notion also knows the census of server kinds, exactly or by push-sum (overlay/census.py),
and ranks by a share meter (policies/meters.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from dgdrf.model.census import Census, ServerKind
from dgdrf.nodes.gateway import HomeRouting, Routing
from dgdrf.overlay.census import CensusSum
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.gradient import Gradient, GradientBase
from dgdrf.overlay.toolbox_gradient import ToolboxGradient
from dgdrf.overlay.pushsum import PushSum
from dgdrf.policies.base import AnnounceCapacity, Policy
from dgdrf.policies.gang_desk import GangDesk
from dgdrf.policies.local import CapacityKnowledge, TaskDesk
from dgdrf.policies.meters import CensusChanges, ShareMeter, UnitShareMeter
from dgdrf.runtime.actor import Role


class DistributedPolicy(Policy):
    """Common wiring of the distributed policies; subclasses add their scheduler role."""

    distributed = True
    #: the share its servers rank users by, if not the dominant share: "tsf" (task share,
    #: h_i) or "cdrf" (job slowdown, M_i), from a census of server kinds (policies/meters.py)
    meter: ClassVar[str | None] = None
    #: whether its servers send room notices unless ``--room-notices`` says otherwise
    #: (policies/local.py): off for the thesis's policies, so that their recorded runs,
    #: whose behaviour fingerprints cover finite jobs too, stay current
    room_notices: ClassVar[bool] = False
    #: whether its stamped gradient announces a rise of this server's utility at once
    #: unless ``--gradient-announce`` says otherwise (overlay/gradient.py Gradient.announce):
    #: off for the thesis's policies, for the same reason as room notices
    gradient_announce: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.meter is not None:
            cls.servers_track_members = True  # its census must lose a server reported down (policies/meters.py CensusChanges)

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
            knowledge = CapacityKnowledge(exact=o.total_capacity, counted=self._counted())
        desk = TaskDesk(knowledge, sampler=cyclon, retry=o.retry, meter=self._meter(server, cyclon, roles), room_notices=self.room_notices if o.room_notices is None else o.room_notices)
        roles.append(desk)
        if self.gangs:
            roles.append(GangDesk(desk, sampler=cyclon))
        return roles, cyclon, desk

    def _meter(self, server, cyclon: Cyclon, roles: list[Role]) -> ShareMeter | None:
        """The policy's share meter: its units from the census of server kinds, given
        (exact knowledge) or by push-sum (a :class:`CensusSum` role added to ``roles``).
        TSF's h_i ignores constraints, so its census counts capacity vectors only (5 on
        a Google-like 100-server cluster); CDRF's M_i needs the attributes too."""
        if self.meter is None:
            return None
        o = self.options
        constrained = self.meter == "cdrf"
        kinds, exact = self._given_census(constrained)
        pushsum = o.capacity_knowledge == "pushsum"
        changes = CensusChanges(kinds, constrained, count_joins=not pushsum)
        roles.append(changes)
        if pushsum:
            kind = ServerKind.of(server.capacity.tolist(), getattr(server, "attributes", {}) if constrained else None)
            census_sum = CensusSum(kind, 1.0 if server.address == o.initiator else 0.0, cyclon, o.cyclon_period)
            roles.append(census_sum)
            return UnitShareMeter(lambda: changes.current(census_sum.census()), constrained)
        return UnitShareMeter(lambda: changes.current(exact), constrained)

    def _counted(self) -> frozenset[str]:
        """The servers the given C counts, one set for all of this policy's servers."""
        cache: dict[str, frozenset[str]] = self.__dict__.setdefault("_counted_cache", {})
        if "ids" not in cache:
            o = self.options
            cache["ids"] = frozenset(o.capacity_ids or o.server_ids)
        return cache["ids"]

    def _given_census(self, constrained: bool) -> tuple[dict[str, ServerKind], Census]:
        """Every server's kind by address, and the census of them that exact knowledge
        gives, built once for all of this policy's servers (an emulation's N servers would
        otherwise build N² kinds); read-only."""
        cache: dict[bool, tuple[dict[str, ServerKind], Census]] = self.__dict__.setdefault("_census_cache", {})
        if constrained not in cache:
            o = self.options
            kinds = {a: ServerKind.of(cap, dict(attrs) if constrained else None) for a, (cap, attrs) in zip(o.server_ids, o.server_kinds)}
            cache[constrained] = (kinds, Census.of_servers((cap, dict(attrs) if constrained else {}) for cap, attrs in o.server_kinds))
        return cache[constrained]

    def make_gradient(self, utility: Callable[[], float], cyclon: Cyclon) -> GradientBase:
        """The gradient overlay (thesis 4.3-4.5) of the kind the options or the policy
        choose: the Kompics toolbox's, as the thesis ran it, or the stamped one."""
        o = self.options
        if self.gradient_kind(o.gradient) == "toolbox":
            return ToolboxGradient(utility, o.neighbors, o.gradient_every, sampler=cyclon, old_threshold=o.gradient_old_threshold, idle_quiet=not o.idle_gossip)
        return Gradient(utility, o.neighbors, o.gradient_every, sampler=cyclon, idle_quiet=not o.idle_gossip, memory=o.gradient_memory)
