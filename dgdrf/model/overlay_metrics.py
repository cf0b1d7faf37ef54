"""Graph measures of overlays (pure): in-degree distribution, clustering, gradient
convergence. Views are given as node -> iterable of neighbour addresses."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np


def indegree(views: Mapping[str, Iterable[str]], nodes: Sequence[str]) -> np.ndarray:
    """In-degree of every node in ``nodes`` (0 for nodes nobody points at)."""
    index = {a: i for i, a in enumerate(nodes)}
    targets = [index[a] for view in views.values() for a in view if a in index]
    return np.bincount(np.asarray(targets, dtype=np.int64), minlength=len(nodes))


def clustering(views: Mapping[str, Iterable[str]], sample: Sequence[str]) -> float:
    """Mean local clustering coefficient of the undirected overlay graph, over ``sample``
    (the fraction of a node's neighbour pairs that are themselves linked)."""
    adj: dict[str, set[str]] = {a: set() for a in views}
    for a, view in views.items():
        for b in view:
            if b != a:
                adj[a].add(b)
                adj.setdefault(b, set()).add(a)
    coeffs = []
    for v in sample:
        nbrs = adj.get(v, set())
        k = len(nbrs)
        if k < 2:
            coeffs.append(0.0)
            continue
        links = sum(len(adj[a] & nbrs) for a in nbrs) / 2
        coeffs.append(links / (k * (k - 1) / 2))
    return float(np.mean(coeffs)) if coeffs else 0.0


def ideal_gradient_views(utilities: Mapping[str, float], P: int) -> dict[str, set[str]]:
    """Each node's converged gradient view under eq. 3.9 given the true utilities: the P
    nearest higher nodes, topped up with the nearest lower ones (utilities distinct)."""
    order = sorted(utilities, key=lambda a: utilities[a])  # ascending
    out = {}
    for i, a in enumerate(order):
        higher = order[i + 1 : i + 1 + P]
        need = P - len(higher)
        lower = order[max(0, i - need) : i] if need > 0 else []
        out[a] = set(higher) | set(lower)
    return out
