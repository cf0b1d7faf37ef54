"""An overlay's page (``dgdrf overlay --html FILE``): the overlay as a graph at chosen
cycles, so that a reader watches the gradient's views form (thesis eq. 3.9: each node's
ideal view holds the P nodes of utility just above its own, or the highest below the
top), or Cyclon's random graph mix; and the run's convergence per cycle.

The graph's layout is the gradient's picture: the nodes sit on a spiral by their
utility's rank (the highest utility in the middle), so that the nodes of close utilities
sit close; an edge goes from a node to each
entry of its view (of its gradient view, or of its Cyclon view), and the nodes that
believe themselves the centre (eq. 3.11) are marked. The same figure draws a live
cluster's overlay on its dashboard (dgdrf/pages/figures.py :func:`overlay_graph`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dgdrf.pages.figures import convergence, overlay_graph
from dgdrf.pages.html import Figure, Item, check_size, page, table


@dataclass
class OverlaySnapshot:
    """The overlay at the end of a cycle: each live node's utility (the gradient's; for
    Cyclon, the experiment's value), its view's entries, and the believed centres."""

    cycle: int
    utilities: dict[str, float]
    views: dict[str, list[str]]
    centres: list[str] = field(default_factory=list)


def default_cycles(cycles: int, most: int = 6) -> list[int]:
    """Up to ``most`` cycles to draw, from the first to the last, roughly doubling."""
    out = [1]
    while out[-1] < cycles and len(out) < most - 1:
        out.append(min(cycles, out[-1] * 2 if out[-1] > 1 else 2))
    if out[-1] != cycles:
        out.append(cycles)
    return sorted(set(out))


class OverlaySnapshots:
    """A cycle observer of an overlay run (dgdrf/overlay_run.py) that keeps the overlay
    at the given cycles; it only reads, between cycles."""

    def __init__(self, cycles: Iterable[int]) -> None:
        self.cycles = set(cycles)
        self.snapshots: list[OverlaySnapshot] = []

    def cycle_ended(self, run: Any, cycle: int, row: dict[str, Any]) -> None:
        if cycle not in self.cycles:
            return
        live = run.live()
        if run.gradient:
            views = {a: list(run.gradient[a].view) for a in live}
            centres = [a for a in live if run.gradient[a].is_centre()]
        else:
            views = {a: list(run.cyclon[a].view) for a in live}
            centres = []
        self.snapshots.append(OverlaySnapshot(cycle, {a: run.utilities[a] for a in live}, views, centres))


def overlay_page(result: Any, snapshots: Sequence[OverlaySnapshot], command: str = "") -> str:
    """The page of an overlay run's ``result`` (OverlayResult) and its ``snapshots``."""
    config = result.config
    protocol = config["protocol"]
    what = "gradient view" if protocol == "gradient" else "Cyclon view"
    graphs: list[Item] = [Figure("overlay", overlay_graph(s.utilities, s.views, s.centres, f"cycle {s.cycle}: each node's {what}"), f"cycle {s.cycle}") for s in snapshots]
    trend = convergence(result.per_cycle, protocol)
    final = [[k.replace("_", " "), _fmt(v)] for k, v in result.final.items() if not isinstance(v, (dict, list))]
    sections: list[tuple[str, Sequence[Item]]] = [
        (f"The overlay at {len(snapshots)} cycles", graphs),
        ("Convergence per cycle", [Figure("convergence", trend)] if trend is not None else []),
        ("At the end", [table(["figure", "value"], final)]),
    ]
    title = f"{protocol}: {config['nodes']} nodes, {config['cycles']} cycles, seed {config['seed']}"
    intro = (
        '<p class="note">Nodes sit by utility, the highest in the middle; an edge goes from a node to each entry of its '
        + what + ("; a star marks each node that believes itself the centre (eq. 3.11)" if protocol == "gradient" else "")
        + ". Hover a node for its id, utility and view."
        + (f" <code>{html.escape(command)}</code>" if command else "") + "</p>"
    )
    text = page(title, sections, intro)
    check_size(text, "--html")
    return text


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)

