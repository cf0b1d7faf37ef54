"""Wire a Scenario into actors on one virtual-time loop, run to saturation, measure.

A run is a pure function of (scenario, configuration, seed): one seeded numpy generator
feeds the transport (latencies, loss) and is split per actor. The run ends at
saturation (the first moment no user's next task fits on any server, thesis 1.5.5), or
when ``max_time`` virtual seconds pass, or when no task was placed for ``stall_time``
virtual seconds while some still fit (a policy that stopped making progress).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from dgdrf.config import RunConfig
from dgdrf.log import get_logger
from dgdrf.model import metrics
from dgdrf.model.scenario import Scenario, ServerSpec, UserSpec
from dgdrf.nodes.collector import ERROR_LEVELS, Collector
from dgdrf.nodes.gateway import Gateway
from dgdrf.nodes.server import Server
from dgdrf.nodes.user import User
from dgdrf.nodes.bootstrap import Bootstrap
from dgdrf.policies import PolicyOptions, make_policy
from dgdrf.policies.base import Policy
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.transport import LocalTransport
from dgdrf.memory_budget import check_scenario
from dgdrf.options import declared

GATEWAY = "gateway"
BOOTSTRAP = "bootstrap"
#: how often the run is checked for having stalled or become stranded (virtual seconds)
WATCH_PERIOD_S = 1.0
#: with a progress callback, the clock runs in slices of this many virtual seconds and
#: the callback hears the time and the allocations after each (the slices change nothing:
#: no callback runs between them)
PROGRESS_SLICE_S = 1.0
#: why a run ended: saturation (thesis 1.5.5); stranded: no allocation can ever happen
#: again although tasks fit (probes by construction, thesis 4.2; nodes/collector.py);
#: stalled: nothing was placed for ``stall_time`` although tasks fit (a bug); max_time
STOP_REASONS = ("saturated", "stranded", "stalled", "max_time")
log = get_logger("dgdrf.emulation")


@dataclass
class RunResult:
    """What one run measured; :meth:`to_dict` is the ``--json`` document."""

    policy: str
    scenario: str
    servers: int
    users: int
    seed: int
    tick: float
    neighbors: int
    latency_ms: list[float]
    runtime_s: float
    wall_s: float
    stop_reason: str
    saturated: bool
    allocations: int
    min_share: float
    gini: float
    jain: float
    ratio_20_20: float
    error_ratio: float
    error_ratio_tol: dict[str, float]
    shares: dict[str, float]
    tasks: dict[str, int]
    utilization: dict[str, float]
    messages: dict[str, Any]
    bytes: dict[str, Any]
    latency_s: dict[str, float]
    unplaceable_users: list[str]
    invariant_violations: list[str]
    capacity_knowledge: str = "exact"
    warmup_s: float = 0.0
    error_curve: dict[str, list[float]] = field(default_factory=dict)
    cost_per_tick: dict[str, Any] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)
    stranded_users: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> RunResult:
        """A result back from its ``--json`` document (keys it does not have, such as a
        network run's ``mode`` or ``processes``, are left out)."""
        return cls(**{k: v for k, v in doc.items() if k in cls.__dataclass_fields__})

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["ratio_20_20"] == float("inf"):
            d["ratio_20_20"] = None  # JSON has no infinity; None = poorest 20 % hold nothing
        return d


def policy_options(scenario: Scenario, config: RunConfig) -> PolicyOptions:
    """The options every node's policy gets (the same in emulation and on a network): the
    declared options PolicyOptions shares with the configuration, and the deployment's."""
    first = scenario.servers[0].id  # the central scheduler; the push-sum initiator
    shared = {d.name: getattr(config, d.name) for d in declared(PolicyOptions)}
    return PolicyOptions(
        **shared, central=first, gateway=GATEWAY, bootstrap=BOOTSTRAP, total_capacity=tuple(float(x) for x in scenario.total_capacity()),
        initiator=first, extras=config.extras,
    )


def build_server(spec: ServerSpec, policy: Policy, config: RunConfig) -> Server:
    """A resource node hosting the policy's roles; it allocates from the policy's start."""
    server = Server(spec.id, spec.capacity, tick=config.tick, first_tick=policy.allocation_start + config.tick)
    for role in policy.server_roles(server):
        server.add_role(role)
    return server


def build_user(spec: UserSpec, policy: Policy) -> User:
    return User(spec.id, spec.demand, GATEWAY, start_delay=policy.user_start, retry=policy.options.retry)


def run_emulation(
    scenario: Scenario,
    config: RunConfig,
    progress: Callable[[float, int], None] | None = None,
    observe: Callable[[LocalTransport, Collector], None] | None = None,
) -> RunResult:
    """Run ``scenario`` under ``config`` in virtual time and measure it. ``progress``,
    if given, is called with the virtual time and the allocations made so far after
    every :data:`PROGRESS_SLICE_S` virtual seconds (a progress bar; the result is the
    same with or without it). ``observe``, if given, is called once every actor is
    registered, before the clock starts, with the transport (its ``actors``) and the
    collector: for measurement scripts that read the run's state as it goes
    (bench/dgdrf_wrong_allocations.py), never for changing it."""
    config.validate()
    check_scenario(scenario.capacity_matrix(), scenario.demand_matrix())
    rng = np.random.default_rng(config.seed)
    clock = VirtualClock()
    collector = Collector(scenario, on_saturated=clock.stop)
    transport = LocalTransport(
        clock,
        rng,
        latency=(config.latency_ms[0] / 1000.0, config.latency_ms[1] / 1000.0),
        loss=config.loss,
        duplicate=config.duplicate,
        reporter=collector,
    )
    policy = make_policy(config.policy, policy_options(scenario, config))
    start = policy.allocation_start
    for spec in scenario.servers:
        transport.register(build_server(spec, policy, config))
    transport.register(Gateway(GATEWAY, policy.gateway_routing()))
    transport.register(Bootstrap(BOOTSTRAP))
    for spec in scenario.users:
        transport.register(build_user(spec, policy))

    if observe is not None:
        observe(transport, collector)
    stop_reason = ["saturated"]
    at_start: list[tuple[list[int], list[int]]] = []  # message counters when allocation starts
    clock.call_later(start, lambda: at_start.append((list(transport.stats.count), list(transport.stats.nbytes))))

    collector.last_allocation_at = start  # stall clock starts with allocation

    def watchdog() -> None:
        if collector.saturated_at is None and collector.stranded():
            stop_reason[0] = "stranded"
            clock.stop()
        elif collector.saturated_at is None and clock.now() - collector.last_allocation_at >= config.stall_time:
            stop_reason[0] = "stalled"
            clock.stop()
        else:
            clock.call_later(min(WATCH_PERIOD_S, config.stall_time), watchdog)

    collector.check_initial_saturation()
    if collector.saturated_at is None:
        transport.start_all()
        clock.call_later(min(WATCH_PERIOD_S, config.stall_time), watchdog)
        log.info("run started", policy=config.policy, scenario=scenario.name, servers=len(scenario.servers), users=len(scenario.users), seed=config.seed)
        t0 = time.perf_counter()
        if progress is None:
            clock.run(until=config.max_time)
        else:
            until = 0.0
            while True:
                until = min(until + PROGRESS_SLICE_S, config.max_time)
                clock.run(until=until)
                progress(clock.now(), len(collector.allocations))
                if clock.stopped or until >= config.max_time or not clock.pending():
                    break
        wall = time.perf_counter() - t0
        if collector.saturated_at is None and stop_reason[0] == "saturated":
            stop_reason[0] = "max_time"
    else:
        wall = 0.0
    collector.finish()
    result = _result(scenario, config, collector, transport, wall, stop_reason[0], start, at_start[0] if at_start else None)
    log.info("run finished", policy=config.policy, scenario=scenario.name, stop=result.stop_reason, allocations=result.allocations, runtime_s=round(result.runtime_s, 3), wall_s=round(wall, 3), messages=result.messages["total"])
    return result


def error_curve(collector: Collector, points: int = 50) -> dict[str, list[float]]:
    """Cumulative error ratio over the allocations made (thesis figs. 5.6-5.7), exact and
    with each tolerance, at up to ``points`` evenly spaced allocation counts."""
    n = len(collector.allocations)
    if not n:
        return {"allocations": [], **{key: [] for key, _ in ERROR_LEVELS}}
    rel = collector.excess_over_minimum()
    at = np.unique(np.linspace(1, n, min(points, n)).round().astype(int))
    curve: dict[str, list[float]] = {"allocations": at.tolist()}
    for key, tol in ERROR_LEVELS:
        curve[key] = (np.cumsum(rel > tol)[at - 1] / at).tolist()
    return curve


#: message types by the part of the system that sends them (for costs per tick)
MESSAGE_GROUPS = {
    "allocation": ("ServerRequest", "ServerReply", "TaskRequest", "Proposal", "Accept", "Decline", "Allocate", "AllocateRejected", "TaskAllocated", "RegisterServer", "ForwardTask", "WalkTask", "WalkFailed"),
    "neighbour_state": ("ShareRequest", "ShareReply", "LoadRequest", "LoadReply"),
    "gradient": ("GradientShuffle", "GradientReply", "CentreCheck", "CentreAck"),
    "peer_sampling": ("Join", "Peers", "CyclonShuffle", "CyclonReply"),
    "aggregation": ("PushSumShare",),
}


def cost_per_tick(transport: LocalTransport, before: tuple[list[int], list[int]] | None, ticks: float, servers: int, config: RunConfig) -> dict[str, Any]:
    """Messages and bytes per allocation tick during the allocation phase, per group, next
    to the thesis's cost model: DDRF's 2|S|P share messages of 8 bytes plus overhead
    (eqs. 4.3-4.4) and the gradient's 2x|S| messages of (P+1)(8+adr) bytes (eqs. 4.5-4.6);
    the bytes are the measured frames."""
    from dgdrf.runtime.messages import message_types

    names = {tag: cls.__name__ for tag, cls in message_types().items()}
    count0, bytes0 = before if before is not None else ([0] * 256, [0] * 256)
    stats = transport.stats
    ticks = max(ticks, 1.0)
    groups: dict[str, dict[str, float]] = {}
    for tag in range(256):
        n = stats.count[tag] - count0[tag]
        if not n:
            continue
        name = names.get(tag, f"tag{tag}")
        group = next((g for g, members in MESSAGE_GROUPS.items() if name in members), "other")
        g = groups.setdefault(group, {"messages": 0.0, "bytes": 0.0})
        g["messages"] += n / ticks
        g["bytes"] += (stats.nbytes[tag] - bytes0[tag]) / ticks
    P, S = config.neighbors, servers
    x = 1.0 if config.gradient_period is None else config.tick / config.gradient_period  # exchanges per node per tick
    model = {"ddrf_share_messages_eq_4_3": 2 * S * P, "gradient_messages_eq_4_6": 2 * x * S}
    return {"ticks": ticks, "by_group": groups, "thesis_model_worst_case": model}


def _result(scenario: Scenario, config: RunConfig, collector: Collector, transport: LocalTransport, wall: float, stop_reason: str, start: float, before: tuple[list[int], list[int]] | None) -> RunResult:
    ledger = collector.ledger
    shares = ledger.shares()
    n_alloc = len(collector.allocations)
    end = collector.saturated_at if collector.saturated_at is not None else collector.last_allocation_at
    runtime = max(0.0, end - start)  # from the first allocation tick's start (after warm-up)
    lat = np.asarray(collector.latencies)
    latency = (
        {"p50": float(np.percentile(lat, 50)), "p90": float(np.percentile(lat, 90)), "p99": float(np.percentile(lat, 99)), "mean": float(lat.mean()), "max": float(lat.max())}
        if lat.size
        else {"p50": 0.0, "p90": 0.0, "p99": 0.0, "mean": 0.0, "max": 0.0}
    )
    msg = transport.stats.summary()
    util = metrics.utilization(ledger.used, ledger.capacity)
    curve = error_curve(collector)
    final_error = {key: (values[-1] if values else 0.0) for key, values in curve.items() if key != "allocations"}
    return RunResult(
        policy=config.policy,
        scenario=scenario.name,
        servers=len(scenario.servers),
        users=len(scenario.users),
        seed=config.seed,
        tick=config.tick,
        neighbors=config.neighbors,
        latency_ms=list(config.latency_ms),
        runtime_s=float(runtime),
        wall_s=wall,
        stop_reason=stop_reason,
        saturated=collector.saturated_at is not None,
        allocations=n_alloc,
        min_share=metrics.min_share(shares),
        gini=metrics.gini(shares),
        jain=metrics.jain(shares),
        ratio_20_20=metrics.ratio_20_20(shares),
        error_ratio=final_error["exact"],
        error_ratio_tol={key: v for key, v in final_error.items() if key != "exact"},
        shares={u: float(shares[i]) for i, u in enumerate(ledger.user_ids)},
        tasks={u: int(ledger.tasks[i]) for i, u in enumerate(ledger.user_ids)},
        utilization={r: float(util[j]) for j, r in enumerate(scenario.resources)},
        messages={"total": msg["total"], "dropped": msg["dropped"], "duplicated": msg["duplicated"], "undeliverable": msg["undeliverable"], "by_type": {k: v["count"] for k, v in msg["by_type"].items()}},
        bytes={"total": msg["bytes"], "by_type": {k: v["bytes"] for k, v in msg["by_type"].items()}},
        latency_s=latency,
        unplaceable_users=scenario.unplaceable_users(),
        invariant_violations=list(collector.violations),
        capacity_knowledge=config.capacity_knowledge,
        warmup_s=start,
        error_curve=curve,
        cost_per_tick=cost_per_tick(transport, before, runtime / config.tick, len(scenario.servers), config),
        events=dict(sorted(collector.counters.items())),
        stranded_users=collector.stranded() if stop_reason == "stranded" else [],
    )
