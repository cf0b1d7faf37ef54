"""A census of the cluster's servers by kind: what the unit quantities of TSF and CDRF
need, without a list of the servers.

Wang et al.'s task share n_i / h_i (§V-B, Def. 7) and CDRF's job slowdown n_i / M_i
(App. B-C) divide by how many tasks a user would run with the cluster to itself: h_i
with its constraints removed, M_i with them kept. Both are sums over servers of a count
that depends only on the server's capacity and attributes (``tasks_per_server``: floor of
min_r C_mr / d_ir, times p_im for M_i). So they are sums over server *kinds* (a capacity
vector and an attribute table) of (servers of that kind) x (the count on one of them):
a node that knows how many servers of each kind there are knows every user's h_i and
(for attribute constraints) M_i, whatever the demand. Push-sum can estimate those
numbers without a central server, as it estimates the cluster's capacity C
(overlay/census.py); a Google-like cluster of 100 servers has 5 capacity vectors and 56
kinds with attributes.

A constraint that names servers (``eligible``) cannot be counted from kinds: its M_i needs
the named servers' capacities. :func:`units` says so (``None``) rather than guess; h_i
never needs it (TSF removes constraints).

Counts of servers are whole numbers, so an estimate is rounded to the nearest
(overlay/census.py): once push-sum's error is below one half server per kind, the
rounded census is exact, and h_i and M_i with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import msgpack
import numpy as np

from dgdrf.model.constraints import Constraint, Scalar
from dgdrf.model.problem import tasks_per_server


@dataclass(frozen=True)
class ServerKind:
    """A server's capacity vector and attributes: all TSF and CDRF ask of a server."""

    capacity: tuple[float, ...]
    attributes: tuple[tuple[str, Scalar], ...] = ()

    @classmethod
    def of(cls, capacity: Sequence[float], attributes: Mapping[str, Scalar] | None = None) -> ServerKind:
        return cls(tuple(float(c) for c in capacity), tuple(sorted((attributes or {}).items())))

    def key(self) -> bytes:
        """The kind as the bytes a census frame names it by (canonical: equal kinds give
        equal bytes, on every node)."""
        return msgpack.packb([list(self.capacity), [list(a) for a in self.attributes]], use_bin_type=True)

    @classmethod
    def from_key(cls, key: bytes) -> ServerKind:
        """The kind a census frame names; :class:`ValueError` for bytes that are not one."""
        try:
            cap, attrs = msgpack.unpackb(key, raw=False, strict_map_key=True)
            kind = cls(tuple(float(c) for c in cap), tuple((str(n), v) for n, v in attrs))
        except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
            raise ValueError(f"not a server kind: {exc}") from None
        if any(not isinstance(v, (str, int, float, bool)) for _, v in kind.attributes):
            raise ValueError("not a server kind: an attribute value is not a string, number or boolean")
        return kind


@dataclass(frozen=True)
class Census:
    """How many servers of each kind the cluster has."""

    counts: Mapping[ServerKind, int]

    @classmethod
    def of_servers(cls, servers: Iterable[tuple[Sequence[float], Mapping[str, Scalar]]]) -> Census:
        """The exact census of (capacity, attributes) pairs."""
        counts: dict[ServerKind, int] = {}
        for cap, attrs in servers:
            kind = ServerKind.of(cap, attrs)
            counts[kind] = counts.get(kind, 0) + 1
        return cls(counts)

    @cached_property
    def _arrays(self) -> tuple[list[ServerKind], np.ndarray, np.ndarray]:
        kinds = sorted(self.counts, key=lambda k: k.key())
        cap = np.array([k.capacity for k in kinds], dtype=np.float64).reshape(len(kinds), -1)
        return kinds, cap, np.array([self.counts[k] for k in kinds], dtype=np.float64)

    @property
    def servers(self) -> int:
        return sum(self.counts.values())

    def units(self, demand: Sequence[float], constraint: Constraint | None = None) -> float | None:
        """How many tasks of ``demand`` the cluster runs with nobody else on it: h_i
        (``constraint`` None: constraints removed, Wang et al. §V-B) or M_i (its
        constraint kept, App. B-C), whole tasks per server as ``tasks_per_server``
        counts them. None for a constraint naming servers (kinds do not say which)."""
        kinds, cap, n = self._arrays
        if not kinds:
            return 0.0
        d = np.asarray(demand, dtype=np.float64).reshape(1, -1)
        if d.shape[1] != cap.shape[1]:
            raise ValueError(f"demand has {d.shape[1]} resources, the census's servers {cap.shape[1]}")
        per = tasks_per_server(cap, d)[0] * n
        if constraint is not None and not constraint.unconstrained:
            if constraint.eligible is not None:
                return None
            per = per * np.array([constraint.admits("", dict(k.attributes)) for k in kinds], dtype=np.float64)
        return float(per.sum())
