"""The overlays' options: peer sampling (Cyclon) and the gradient topology.

Declared once (dgdrf/options.py); the distributed policies build their overlays from
them (policies/distributed.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from dgdrf.model.scenario import MAX_SECONDS
from dgdrf.options import option
from dgdrf.overlay.cyclon import MAX_VIEW as MAX_CYCLON_VIEW
from dgdrf.overlay.toolbox_gradient import DEFAULT_OLD_THRESHOLD

#: how a gradient keeps its view: as the Kompics toolbox the thesis used (ages, no memory),
#: or with stamps and a memory of recently heard nodes (overlay/gradient.py)
GRADIENTS = ("toolbox", "stamped")


@dataclass(frozen=True)
class OverlayOptions:
    """The view sizes and periods of the peer-sampling and gradient overlays."""

    neighbors: int = option(4, "overlay neighbours per node P, used by distributed policies", lo=1, thesis="P = 2-10 in thesis ch. 5")
    cyclon_view: int = option(10, "Cyclon view size c of the distributed policies' peer sampling", lo=1, hi=MAX_CYCLON_VIEW)
    cyclon_shuffle: int = option(5, "Cyclon shuffle length l", lo=1)
    cyclon_period: float = option(1.0, "seconds between a server's Cyclon shuffles", lo=0.0, lo_open=True, hi=MAX_SECONDS, unit="seconds")
    gradient: str | None = option(
        None, "how gradient views are kept: as the thesis's Kompics toolbox (ages) or with stamps and a memory of recently heard nodes",
        kind="str", choices=GRADIENTS, none_means="the policy's, toolbox", label=True,
    )
    gradient_period: float | None = option(
        None, "seconds between a server's gradient exchanges", kind="float", lo=0.0, lo_open=True, hi=MAX_SECONDS, unit="seconds",
        none_means="the tick", thesis="thesis fig. 5.12 varies it",
    )
    idle_gossip: bool = option(True, "whether servers without users start gradient exchanges (no: they only answer, about 2x fewer messages, slower convergence)", thesis="the thesis: yes")
    gradient_memory: int | None = option(
        None, "stamped gradient: bound on the nodes remembered beyond the view and reconsidered at every selection (0: none, as the toolbox)",
        kind="int", lo=0, none_means="a server with users remembers every server with users it hears of, one without the 4P+16 most recent", label=True,
    )
    gradient_announce: bool | None = option(
        None, "stamped gradient: a server whose utility rose (a home user's share fell, or its task became placeable) exchanges at once with every server with users it remembers, rather than at its next rounds",
        kind="bool", none_means="on for dg-tsf; off for dgdrf and pdgdrf, whose recorded runs it would make stale (and with the toolbox gradient, which has no memory to announce to)",
        thesis="not in the thesis, whose shares only grow (the centre's lag when shares fall)",
    )
    gradient_old_threshold: int = option(DEFAULT_OLD_THRESHOLD, "toolbox gradient: age (exchanges) at which a node's oldest entry leaves its view", lo=1, thesis="the toolbox's reference configuration")

