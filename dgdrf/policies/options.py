"""The allocation policies' options, and :class:`PolicyOptions`, what every policy gets.

Declared once (dgdrf/options.py); a run's configuration (dgdrf/config.py) composes them
with the other components' options, and :class:`PolicyOptions` takes the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dgdrf.model.constraints import Scalar
from dgdrf.model.scenario import MAX_SECONDS
from dgdrf.nodes.protocol import RETRY_S
from dgdrf.options import option
from dgdrf.overlay.options import OverlayOptions

CAPACITY_KNOWLEDGE = ("exact", "pushsum")
#: whose utilities PDGDRF's Gini test (eq. 4.7) takes: the gradient view S_l (alg. 6), or
#: also the peer-sampling view (the other neighbours a Kompics node hears utilities from)
GINI_NEIGHBOURS = ("gradient", "overlay")
#: the order a round of server offers takes (policies/offers.py)
OFFER_ORDERS = ("fixed", "random")
OFFER_TASKS = ("one", "fill")


@dataclass(frozen=True)
class AllocationOptions:
    """When servers allocate and what they know of the cluster."""

    tick: float = option(0.1, "allocation tick in seconds", lo=0.0, lo_open=True, hi=MAX_SECONDS, unit="seconds", thesis="thesis 1.5.8")
    capacity_knowledge: str = option(
        "exact", "how distributed servers know the cluster capacity C: given (exact, as in the thesis) or estimated by push-sum", choices=CAPACITY_KNOWLEDGE,
    )
    warmup: float = option(10.0, "gossip seconds before distributed policies allocate", lo=0.0, hi=MAX_SECONDS, unit="seconds")
    room_notices: bool | None = option(
        None, "distributed policies with walks: a server a walked task passed for want of room tells the task's home when a task ends there and it fits (no: the home retries a stuck task on its own timer)",
        kind="bool", none_means="on for dg-tsf and pdg-tsf; off for ddrf, dgdrf and pdgdrf, whose recorded runs it would make stale",
        thesis="not in the thesis, whose tasks never end",
    )
    share_level: int | None = option(
        None, "drf: the share a user is ranked by is the Lev-th largest of its per-resource shares (Ru et al. alg. 1; 1 is the dominant share)",
        kind="int", lo=1, hi=3, none_means="1, the dominant share", thesis="Ru et al. alg. 1", label=True,
    )
    offer_order: str = option(
        "fixed", "server offers (tsf, cdrf, psdsf, rpsdsf): each round offers the servers in id order, or in a fresh seeded permutation",
        choices=OFFER_ORDERS, thesis="Kesidis et al. §4", label=True,
    )
    offer_tasks: str = option(
        "one", "server offers: an offer places one task, or the user it goes to keeps it while its next task fits (fill, as a Mesos framework takes an offer)",
        choices=OFFER_TASKS, thesis="Kesidis et al. §4 (one); Wang et al. §VI-A on Mesos (fill)", label=True,
    )
    gini_neighbours: str = option(
        "gradient", "pdgdrf: whose utilities the Gini test takes: the gradient view (alg. 6) or also the peer-sampling view", choices=GINI_NEIGHBOURS,
        thesis="eq. 4.7", label=True,
    )


@dataclass(frozen=True, kw_only=True)
class PolicyOptions(AllocationOptions, OverlayOptions):
    """Options every policy receives: the declared allocation and overlay options, and
    what the deployment fixes. ``central``: the central scheduler's address (centralized
    policies); ``gateway`` and ``bootstrap``: well-known addresses; ``total_capacity``:
    the cluster capacity C, given to the servers when ``capacity_knowledge`` is "exact",
    or estimated by push-sum started by ``initiator`` (``server_kinds``: likewise, the
    census of servers by kind); ``retry``: seconds a protocol step
    waits for its answer before sending again; ``extras``: the values of option groups
    registered from outside the package (dgdrf.options.register)."""

    central: str
    gateway: str = "gateway"
    bootstrap: str = "bootstrap"
    total_capacity: tuple[float, ...] = ()
    #: every server's (capacity, attributes), for the census TSF's and CDRF's distributed
    #: policies are given when ``capacity_knowledge`` is "exact" (model/census.py)
    server_kinds: tuple[tuple[tuple[float, ...], tuple[tuple[str, Scalar], ...]], ...] = ()
    #: the servers' addresses, in the order of ``server_kinds`` (a server reported down
    #: leaves the census: policies/meters.py CensusChanges)
    server_ids: tuple[str, ...] = ()
    #: the servers ``total_capacity`` counts (empty: those of ``server_ids``): a server
    #: that joins a run is given a C of every server that ever joined, those gone too
    capacity_ids: tuple[str, ...] = ()
    initiator: str = ""
    retry: float = RETRY_S
    extras: Mapping[str, object] = field(default_factory=dict)

    @property
    def gradient_every(self) -> float:
        """Seconds between gradient exchanges: the period, or one per allocation tick."""
        return self.tick if self.gradient_period is None else self.gradient_period
