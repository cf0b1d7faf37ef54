"""Run one overlay protocol alone in virtual time and measure its convergence per cycle.

``dgdrf overlay --protocol cyclon|gradient|pushsum`` builds N overlay-only nodes (each
hosting Cyclon, plus the gradient or push-sum on top of it) and a Bootstrap, runs K
cycles of the protocol period, and after every cycle reads the nodes' state the way the
Collector reads allocations: as an instrument, never as part of the protocol.

Per cycle: Cyclon - in-degree mean/std, clustering coefficient (on a sample of nodes),
self/duplicate entries; gradient - fraction of nodes whose view equals the ideal sorted
view, and whether the centre is correct (the top node passes eq. 3.11 with the P
next-highest nodes as its view, and no other node passes eq. 3.11); push-sum - max and
mean relative error of the sum estimate, and exact mass accounting.

Controls of dgdrf/world.py act on an overlay run as on an allocation run (it is a
:class:`~dgdrf.world.Stage`): ``Crash`` and ``Churn`` take overlay nodes away for good,
``Partition`` splits the network. Nobody is told of a crash: each protocol must cope on
its own (Cyclon drops a shuffle partner that never answers; PeerSim's churn experiments).
Once a node has left, Cyclon's and the gradient's figures are over the nodes that remain,
and ``dead_entries`` counts the entries their views still hold of nodes that left;
push-sum's error stays against the sum of every node's value (the mass a departed node
held is lost with it). Loss and duplication (``loss``, ``duplicate``) act as in an
allocation run: a lost share takes its mass with it, a duplicated one adds its mass
twice (push-sum's ``weight_at_nodes`` below or above 1).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Protocol

import numpy as np

from dgdrf.errors import ConfigError
from dgdrf.model.scenario import MAX_SECONDS
from dgdrf.options import option, option_of, validate
from dgdrf.model.overlay_metrics import clustering, ideal_gradient_views, indegree
from dgdrf.nodes.bootstrap import Bootstrap
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.options import OverlayOptions
from dgdrf.overlay.gradient import Gradient, GradientBase
from dgdrf.overlay.toolbox_gradient import ToolboxGradient
from dgdrf.overlay.pushsum import PushSum
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.frozen import objects_frozen
from dgdrf.runtime.options import TransportOptions
from dgdrf.runtime.transport import LocalTransport

if TYPE_CHECKING:
    from dgdrf.world import StageControl

PROTOCOLS = ("cyclon", "gradient", "pushsum")


#: the overlay and transport options an overlay run alone leaves out (why: OverlayConfig)
LEFT_OUT = ("cyclon_period", "gradient_period", "idle_gossip", "gradient_announce")


@dataclass(frozen=True)
class OverlayConfig:
    """One overlay experiment; the ``dgdrf overlay`` flags are derived from its options.

    The experiment's own options (protocol, nodes, cycles, period, seed, metrics_every,
    clustering_sample) are declared here. The overlays' and the transport's are taken
    from their one declaration (:class:`~dgdrf.overlay.options.OverlayOptions`,
    :class:`~dgdrf.runtime.options.TransportOptions`, with :func:`~dgdrf.options.option_of`)
    under the same names, so that ``dgdrf overlay`` cannot drift from ``dgdrf run``. What
    is the overlay command's own: the flags ``--view-size`` and ``--shuffle-length`` it
    has always had for ``cyclon_view`` and ``cyclon_shuffle``, the stamped gradient by
    default, and the words for the stamped gradient's default memory (every node here has
    a finite utility, so it remembers them all).

    Left out (:data:`LEFT_OUT`), as they cannot apply to an overlay run alone:
    ``cyclon_period`` and ``gradient_period``, because every protocol of an overlay run
    runs at one period, ``period``, the cycle its figures are counted in; and
    ``idle_gossip``, which quiets the nodes without users (utility -inf), because every
    node of an overlay run has a finite utility, so it would change nothing; and
    ``gradient_announce``, which a policy's scheduler triggers when its users' shares fall,
    because an overlay run's utilities are fixed.
    """

    protocol: str = option("cyclon", "the protocol run alone", choices=PROTOCOLS)
    nodes: int = option(1000, "number of nodes", lo=2)
    cycles: int = option(30, "protocol periods to run", lo=1)
    cyclon_view: int = option_of(OverlayOptions, "cyclon_view", cli="view-size")
    cyclon_shuffle: int = option_of(OverlayOptions, "cyclon_shuffle", cli="shuffle-length")
    neighbors: int = option_of(OverlayOptions, "neighbors")
    gradient_memory: int | None = option_of(OverlayOptions, "gradient_memory", none_means="every node of finite utility, here all of them")
    gradient: str = option_of(OverlayOptions, "gradient", default="stamped", label=False)
    gradient_old_threshold: int = option_of(OverlayOptions, "gradient_old_threshold")
    period: float = option(1.0, "seconds per protocol period", lo=0.0, lo_open=True, hi=MAX_SECONDS, unit="seconds", flag=False)
    seed: int = option(1, "run seed", lo=0)
    latency_ms: tuple[float, float] = option_of(TransportOptions, "latency_ms")
    loss: float = option_of(TransportOptions, "loss")
    duplicate: float = option_of(TransportOptions, "duplicate")
    metrics_every: int = option(1, "measure every k cycles (measuring is not timed)", lo=1)
    clustering_sample: int = option(200, "nodes whose clustering coefficient is measured", lo=1, flag=False)

    def validate(self) -> OverlayConfig:
        """Each option within its declaration, and Cyclon's l <= c."""
        validate(self, lambda name, problem: ConfigError(f"overlay {name}: {problem}"))
        if self.cyclon_shuffle > self.cyclon_view:
            raise ConfigError(f"need 1 <= shuffle length <= view size, got l={self.cyclon_shuffle}, c={self.cyclon_view}")
        return self


class CycleObserver(Protocol):
    """Watches an overlay run cycle by cycle: called after each measured cycle with the
    row of figures measured (``cycle`` and the protocol's metrics), to which it may add
    its own (a metric of your own, without touching the run). Between cycles, with the
    clock stopped, so adding one changes no result; its time counts as measuring."""

    def cycle_ended(self, run: OverlayRun, cycle: int, row: dict[str, Any]) -> None: ...


class OverlayNode(Actor):
    """A node that hosts only overlay roles."""


@dataclass
class OverlayResult:
    config: dict[str, Any]
    per_cycle: list[dict[str, Any]]
    final: dict[str, Any]
    wall_s: float
    metrics_wall_s: float
    messages: dict[str, Any]
    bytes: int
    start_wall_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        cycles = self.config["cycles"]
        nodes = self.config["nodes"]
        doc = {
            "protocol": self.config["protocol"],
            **_json_safe(self.final),
            "config": self.config,
            "wall_s": self.wall_s,
            "start_wall_s": self.start_wall_s,
            "metrics_wall_s": self.metrics_wall_s,
            "node_cycles_per_s": nodes * cycles / self.wall_s if self.wall_s > 0 else None,
            "messages_per_s": self.messages["total"] / self.wall_s if self.wall_s > 0 else None,
            "messages": self.messages,
            "bytes": self.bytes,
            "per_cycle": [_json_safe(c) for c in self.per_cycle],
        }
        return doc


def _json_safe(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


class OverlayRun:
    """The nodes of one overlay experiment on one virtual clock; advance cycle by cycle.
    ``controls`` (dgdrf/world.py: crashes, churn, partitions) are started once every node
    is scheduled to start; ``observers`` see every measured cycle's row."""

    def __init__(self, config: OverlayConfig, controls: Iterable[StageControl] = (), observers: Iterable[CycleObserver] = ()) -> None:
        self.config = config.validate()
        rng = np.random.default_rng(config.seed)
        self.clock = VirtualClock()
        self.transport = LocalTransport(
            self.clock, rng.spawn(1)[0], latency=(config.latency_ms[0] / 1000, config.latency_ms[1] / 1000), loss=config.loss, duplicate=config.duplicate,
        )
        values_rng = rng.spawn(1)[0]
        self.names = [f"n{i}" for i in range(config.nodes)]
        self.transport.register(Bootstrap("bootstrap"))
        self.cyclon: dict[str, Cyclon] = {}
        self.gradient: dict[str, GradientBase] = {}
        self.pushsum: dict[str, PushSum] = {}
        # gradient: distinct random utilities the test harness may change; push-sum: values
        self.utilities: dict[str, float] = dict(zip(self.names, values_rng.permutation(config.nodes).astype(float) / config.nodes))
        self.values = {a: values_rng.uniform(0.0, 1.0, 2).tolist() for a in self.names}
        for i, name in enumerate(self.names):
            node = OverlayNode(name)
            cyc = node.add_role(Cyclon(config.cyclon_view, config.cyclon_shuffle, config.period))
            self.cyclon[name] = cyc
            if config.protocol == "gradient":
                utility = lambda a=name: self.utilities[a]  # noqa: E731
                if config.gradient == "toolbox":
                    g: GradientBase = ToolboxGradient(utility, config.neighbors, config.period, sampler=cyc, old_threshold=config.gradient_old_threshold)
                else:
                    g = Gradient(utility, config.neighbors, config.period, sampler=cyc, memory=config.gradient_memory)
                self.gradient[name] = node.add_role(g)
            elif config.protocol == "pushsum":
                # sum mode: node n0 starts with all the weight (thesis 2.3.1)
                self.pushsum[name] = node.add_role(PushSum(self.values[name], 1.0 if i == 0 else 0.0, cyc, config.period))
            self.transport.register(node)
        if self.pushsum:
            self.initial_mass = self._mass_at_nodes()
            self.truth = [float(sum(v[j] for v in self.values.values())) for j in range(2)]
        self.transport.start_all()
        self.cycle = 0
        self.per_cycle: list[dict[str, Any]] = []
        self.wall_s = 0.0
        self.start_wall_s = 0.0
        self._started = False
        self.metrics_wall_s = 0.0
        self._metric_rng = np.random.default_rng(config.seed + 1)
        self.observers = list(observers)
        for control in controls:
            control.started(self)

    # -- what a control acts on (dgdrf.world.Stage) --------------------------------------
    @property
    def seed(self) -> int:
        return self.config.seed

    @property
    def departing(self) -> str:
        return "an overlay node"

    @property
    def crashing(self) -> str:
        return "an overlay node"

    def departable(self) -> list[str]:
        """Every overlay node (not the bootstrap)."""
        return list(self.names)

    def crashable(self) -> list[str]:
        """The same nodes: an overlay run's members are its servers."""
        return self.departable()

    def members_down(self, addresses: tuple[str, ...]) -> None:
        """Nobody is told: an overlay finds out for itself that a node is gone."""

    def live(self) -> list[str]:
        """The nodes that have not left."""
        actors = self.transport.actors
        return [a for a in self.names if a in actors]

    def run_cycles(self, k: int) -> None:
        """Advance ``k`` protocol periods, measuring after each (every metrics_every).

        ``wall_s`` is the protocols' time, as PeerSim's anchor measures its own (from the
        end of the initializers): the nodes' start at time 0 (each seeding its generators
        and scheduling its rounds, what PeerSim's initializers do) runs first, on its own
        timer, ``start_wall_s``. The bootstrap's Join/Peers exchange happens in virtual
        time, among the first rounds, and stays in ``wall_s``. Running the events at time
        0 first, then the rest, runs them in the order one run would. While they run, the
        network built and started before is out of the garbage collector's scans
        (:func:`~dgdrf.runtime.frozen.objects_frozen`)."""
        if not self._started:
            self._started = True
            with objects_frozen():
                t0 = time.perf_counter()
                self.clock.run(until=0.0)
                self.start_wall_s = time.perf_counter() - t0
        with objects_frozen():  # the network lives for the run, started: no collection scans it
            for _ in range(k):
                self.cycle += 1
                t0 = time.perf_counter()
                self.clock.run(until=self.cycle * self.config.period)
                self.wall_s += time.perf_counter() - t0
                if self.cycle % self.config.metrics_every == 0 or self.cycle == self.config.cycles:
                    t0 = time.perf_counter()
                    row = {"cycle": self.cycle, **self.measure()}
                    for observer in self.observers:
                        observer.cycle_ended(self, self.cycle, row)
                    self.per_cycle.append(row)
                    self.metrics_wall_s += time.perf_counter() - t0

    def run(self) -> OverlayResult:
        self.run_cycles(self.config.cycles - self.cycle)
        return self.result()

    # -- measurement -------------------------------------------------------------------
    def measure(self) -> dict[str, Any]:
        if self.config.protocol == "cyclon":
            return self.measure_cyclon()
        if self.config.protocol == "gradient":
            return self.measure_gradient()
        return self.measure_pushsum()

    def measure_cyclon(self, with_clustering: bool = True) -> dict[str, Any]:
        live = self.live()
        views = {a: self.cyclon[a].view for a in live}
        deg = indegree(views, live)
        bad = sum(1 for a, v in views.items() if a in v)
        out = {
            "indegree_mean": float(deg.mean()),
            "indegree_std": float(deg.std()),
            "indegree_max": int(deg.max()),
            "view_fill": float(np.mean([len(v) for v in views.values()])),
            "self_entries": bad,
        }
        if len(live) < len(self.names):  # some left
            alive = set(live)
            out["dead_entries"] = sum(1 for v in views.values() for a in v if a not in alive)
        if with_clustering:
            k = min(self.config.clustering_sample, len(live))
            sample = [live[i] for i in self._metric_rng.choice(len(live), k, replace=False)]
            out["clustering"] = clustering(views, sample)
        return out

    def _live_utilities(self) -> dict[str, float]:
        return {a: self.utilities[a] for a in self.live()}

    def centre_state(self) -> tuple[bool, int]:
        """(centre correct, number of nodes passing eq. 3.11), among the nodes that remain."""
        utilities = self._live_utilities()
        top = max(utilities, key=utilities.__getitem__)
        passing = [a for a in utilities if self.gradient[a].is_centre()]
        ideal_top = ideal_gradient_views(utilities, self.config.neighbors)[top]
        ok = passing == [top] and set(self.gradient[top].view) == ideal_top
        return ok, len(passing)

    def measure_gradient(self) -> dict[str, Any]:
        utilities = self._live_utilities()
        ideal = ideal_gradient_views(utilities, self.config.neighbors)
        converged = sum(1 for a in utilities if set(self.gradient[a].view) == ideal[a])
        ok, passing = self.centre_state()
        return {"converged_fraction": converged / len(utilities), "centre_correct": ok, "centres": passing}

    def measure_pushsum(self) -> dict[str, Any]:
        errors = []
        missing = 0
        for p in self.pushsum.values():
            est = p.estimate()
            if est is None:
                missing += 1
                continue
            errors.append(max(abs(e - t) / abs(t) for e, t in zip(est, self.truth)))
        in_nodes = self._mass_at_nodes()
        # each node's counters read once: compiled, each read converts its C integers
        in_flight = [sum(col) for col in zip(*([a - b for a, b in zip(p.sent_mass, p.received_mass)] for p in self.pushsum.values()))]
        return {
            "max_relative_error": max(errors) if errors and not missing else float("inf"),
            "mean_relative_error": float(np.mean(errors)) if errors else float("inf"),
            "nodes_without_estimate": missing,
            "mass_exact": all(n + f == i for n, f, i in zip(in_nodes, in_flight, self.initial_mass)),
            "weight_at_nodes": in_nodes[2] / self.initial_mass[2],
        }

    def _mass_at_nodes(self) -> list[int]:
        """The push-sum mass held at the nodes, s's components then w, summed exactly."""
        return [sum(col) for col in zip(*(p.s + [p.w] for p in self.pushsum.values()))]

    def result(self) -> OverlayResult:
        final = dict(self.per_cycle[-1]) if self.per_cycle else {}
        final.pop("cycle", None)
        if self.config.protocol != "cyclon":
            final.update({k: v for k, v in self.measure_cyclon(with_clustering=False).items() if k in ("indegree_mean", "indegree_std")})
        msg = self.transport.stats.summary()
        cfg = self.config
        return OverlayResult(
            config={  # under the names results have always used (view_size: cyclon_view ...)
                "protocol": cfg.protocol, "nodes": cfg.nodes, "cycles": self.cycle, "view_size": cfg.cyclon_view, "shuffle_length": cfg.cyclon_shuffle,
                "neighbors": cfg.neighbors, "period": cfg.period, "seed": cfg.seed, "latency_ms": list(cfg.latency_ms), "loss": cfg.loss,
                **({"duplicate": cfg.duplicate} if cfg.duplicate else {}),  # only when some are (the results before it had none)
            },
            per_cycle=self.per_cycle,
            final=final,
            wall_s=self.wall_s,
            start_wall_s=self.start_wall_s,
            metrics_wall_s=self.metrics_wall_s,
            messages={
                "total": msg["total"], "dropped": msg["dropped"],
                **({"partitioned": msg["partitioned"]} if msg.get("partitioned") else {}),  # only with a partition that lost some
                **({"duplicated": msg["duplicated"]} if msg.get("duplicated") else {}),  # only with duplication that doubled some
                "by_type": {k: v["count"] for k, v in msg["by_type"].items()},
            },
            bytes=msg["bytes"],
        )


def run_overlay(config: OverlayConfig, controls: Iterable[StageControl] = (), observers: Iterable[CycleObserver] = ()) -> OverlayResult:
    """Build and run one overlay experiment to the end, under ``controls``, with
    ``observers`` adding their figures to each cycle's."""
    return OverlayRun(config, controls, observers).run()
