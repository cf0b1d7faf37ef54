"""What a distributed server ranks its home users by, when it is not DRF's dominant share.

The thesis's distributed policies (DDRF, DGDRF, PDGDRF) rank users by the global
dominant share each user reports with its task (alg. 3): the sum over its running tasks
of what each added, max_r D_r / C_r over its weight, which the server that starts a task
computes (TaskDesk) from its knowledge of C. That is the default, with no meter.

A :class:`ShareMeter` changes what a task adds (:meth:`~ShareMeter.gain`, summed by the
user and reported as before) and how a home turns the reported sum into the share it
ranks by (:meth:`~ShareMeter.share`). :class:`UnitShareMeter` is TSF's task share
n_i / (h_i w_i) (Wang et al. §V-B, Def. 7) or CDRF's job slowdown n_i / (M_i w_i) (App.
B-C): a task adds 1 / w_i, so a user reports n_i / w_i, its weighted count of running
tasks, and its home divides by the unit u_i (h_i or M_i) of the task waiting there, from
what it knows of the cluster: the census of server kinds (model/census.py), given
(``--capacity-knowledge exact``) or estimated by push-sum (overlay/census.py). This is the
reading of model/notions.py, which the Collector judges by: n_i counts all of a user's
running tasks, u_i is its next task's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from dgdrf.model.census import Census, ServerKind
from dgdrf.model.constraints import Scalar
from dgdrf.model.workload import TaskTraits
from dgdrf.nodes.protocol import TaskRequest
from dgdrf.runtime.actor import Role

INF = float("inf")


class ShareMeter(Protocol):
    """A notion of share as a distributed server computes it."""

    def ready(self) -> bool:
        """Whether this server knows enough to rank users (push-sum may still be spreading)."""
        ...

    def version(self) -> int:
        """Changes when what the shares are computed from changes (rank again then)."""
        ...

    def gain(self, demand: Sequence[float], traits: TaskTraits) -> float:
        """What one task adds to the sum its user reports."""
        ...

    def share(self, reported: float, request: TaskRequest) -> float:
        """The user's share under the notion, from the sum it reported with ``request``."""
        ...

    def step(self, request: TaskRequest) -> float | None:
        """What one more task of ``request`` adds to its user's share (None: not known yet)."""
        ...


class UnitShareMeter:
    """n_i / (u_i w_i): u_i = h_i (``constrained`` False, TSF) or M_i (True, CDRF) of the
    waiting task's demand (and constraint), from the census ``census()`` gives (None
    while it is not known). A unit of 0 (the task fits on no server, even alone) makes
    the share infinite, as the Collector's notion does."""

    def __init__(self, census: Callable[[], Census | None], constrained: bool) -> None:
        self._source = census
        self.constrained = constrained
        self._census: Census | None = None
        self._version = 0
        self._units: dict[tuple, float | None] = {}

    def _current(self) -> Census | None:
        census = self._source()
        if census is not self._census:
            self._census, self._version = census, self._version + 1
            self._units.clear()
        return census

    def ready(self) -> bool:
        return self._current() is not None

    def version(self) -> int:
        self._current()
        return self._version

    def units(self, request: TaskRequest) -> float | None:
        """u_i of the task of ``request`` (None: not known)."""
        census = self._current()
        if census is None:
            return None
        constraint = request.traits().constraint if self.constrained and request.extended else None
        key = (tuple(request.demand), constraint)
        if key not in self._units:
            self._units[key] = census.units(request.demand, constraint)
        return self._units[key]

    def gain(self, demand: Sequence[float], traits: TaskTraits) -> float:
        return 1.0 / traits.weight

    def share(self, reported: float, request: TaskRequest) -> float:
        u = self.units(request)
        if u is None:
            return INF
        return reported / u if u > 0 else (INF if reported > 0 else 0.0)

    def step(self, request: TaskRequest) -> float | None:
        u = self.units(request)
        return None if u is None or u <= 0 else 1.0 / (u * request.weight)


class CensusChanges(Role):
    """The servers the failure detector reported down (MemberDown) and those that joined
    since (MemberUp), as the bootstrap tells the members that must know
    (Policy.member_down_audience, member_up_audience), applied to the census a unit share
    meter reads. Without the departures, a server given the census at start
    (``--capacity-knowledge exact``) kept counting servers gone in every user's h_i, which
    the Collector's notion no longer does (model/notions.py RowSums): in the acceptance
    sweep's cell with 4 departures (dg-tsf, seed 1, P 6), 4.8 of its 5.9 % errors
    (bench/results/churn-knowledge-40x8.txt). Push-sum's estimate needs the departures
    too: once it has converged, a crashed node takes its share of the mass with it and the
    ratios stay those of the whole cluster at start. A server that joins is counted in a
    given census (``count_joins``); push-sum takes it in by itself, the newcomer
    gossiping its own mass (overlay/census.py). ``kinds``: every server's kind by address
    at start, shared by all the policy's servers and never changed (of the kinds the
    census counts: capacity only, for TSF, ``constrained`` False)."""

    def __init__(self, kinds: dict[str, ServerKind], constrained: bool = False, count_joins: bool = True) -> None:
        self.kinds = kinds
        self.constrained = constrained
        self.count_joins = count_joins
        self.gone: dict[ServerKind, int] = {}
        self.joined: dict[ServerKind, int] = {}
        self._joined_kinds: dict[str, ServerKind] = {}  # servers that joined, by address
        self._seen: set[str] = set()  # departures counted
        self._cache: tuple[Census | None, Census | None] = (None, None)  # (census read, that census changed)

    def members_down(self, addresses: Sequence[str]) -> None:
        for address in addresses:
            kind = self.kinds.get(address) or self._joined_kinds.get(address)
            if kind is not None and address not in self._seen:
                self._seen.add(address)
                self.gone[kind] = self.gone.get(kind, 0) + 1
                self._cache = (None, None)

    def member_up(self, server: str, capacity: Sequence[float], attributes: Mapping[str, Scalar]) -> None:
        if server in self.kinds or server in self._joined_kinds:
            return  # counted already (a repeated notice)
        kind = ServerKind.of(capacity, attributes if self.constrained else None)
        self._joined_kinds[server] = kind
        if self.count_joins:
            self.joined[kind] = self.joined.get(kind, 0) + 1
            self._cache = (None, None)

    def current(self, census: Census | None) -> Census | None:
        """``census`` less the departed servers and with those that joined: the same
        object while none left or joined (so a meter reading it ranks as before), and one
        object per census read after."""
        if census is None or not (self.gone or self.joined):
            return census
        if self._cache[0] is not census:
            counts = dict(census.counts)
            for kind, n in self.joined.items():
                counts[kind] = counts.get(kind, 0) + n
            for kind, n in self.gone.items():
                counts[kind] = counts.get(kind, 0) - n
            self._cache = (census, Census({k: n for k, n in counts.items() if n > 0}))
        return self._cache[1]


def per_server_ratio(demand: Sequence[float], capacity: Sequence[float]) -> float:
    """max_r d_r / c_jr over the resources the task needs: what one task weighs on server
    j (Kesidis et al. eq. 12); inf when the server lacks a resource the task needs."""
    worst = 0.0
    for d, c in zip(demand, capacity):
        if d > 0:
            if c <= 0:
                return INF
            worst = max(worst, d / c)
    return worst


class PerServerShareMeter:
    """PS-DSF's score on this server j, K_nj = x_n max_r (d_nr / c_jr) / φ_n (Kesidis et
    al. eq. 12): a task adds 1 / φ_n, so a user reports x_n / φ_n, and the server
    multiplies by the weight of the waiting task on its own capacity ``capacity``. It
    needs nothing of the rest of the cluster (no census), so it is always ready."""

    def __init__(self, capacity: Sequence[float]) -> None:
        self.capacity = [float(c) for c in capacity]

    def ready(self) -> bool:
        return True

    def version(self) -> int:
        return 0

    def gain(self, demand: Sequence[float], traits: TaskTraits) -> float:
        return 1.0 / traits.weight

    def score(self, reported: float, demand: Sequence[float]) -> float:
        """K_nj of a user that reported ``reported`` (x_n / φ_n) with a task of ``demand``."""
        ratio = per_server_ratio(demand, self.capacity)
        return reported * ratio if reported > 0 else (0.0 if ratio < INF else INF)

    def share(self, reported: float, request: TaskRequest) -> float:
        return self.score(reported, request.demand)

    def step(self, request: TaskRequest) -> float | None:
        ratio = per_server_ratio(request.demand, self.capacity)
        return None if ratio == INF else ratio / request.weight
