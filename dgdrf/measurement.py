"""What a run measured: :class:`RunResult` (the ``--json`` document) made by
:func:`measure` from the collector (the global truth: allocations, shares, invariants)
and the transport's message counters, the same in emulation and, gathered from every
process, on a network. The error curve (thesis figs. 5.6-5.7) and the cost per tick
(eqs. 4.3-4.6) are here too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from dgdrf.auditing import run_audit
from dgdrf.config import RunConfig
from dgdrf.model import metrics
from dgdrf.model.notions import NOTIONS, ShareLevel
from dgdrf.model.scenario import Scenario
from dgdrf.nodes.collector import ERROR_LEVELS, Collector
from dgdrf.runtime.stats import MessageStats


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
    #: the churn of the run (config.ChurnOptions: every, departures, start, and the
    #: [time, server] schedule drawn); None, and not in the JSON, without churn
    churn: dict[str, Any] | None = None
    # -- jobs (dgdrf/model/workload.py): None, and not in the JSON, for the thesis's world
    #: per finite job: user, job, arrival, first_start, finish (seconds from the start of
    #: allocation; None if it did not happen), tasks, jct (finish - arrival)
    jobs: list[dict[str, Any]] | None = None
    #: per user, per job of parts (a gang): its instances that ran whole (model/gangs.py)
    instances: dict[str, dict[str, int]] | None = None
    #: reservations of whole instances: made, given back (declined, expired, a member
    #: gone), distributed tries abandoned in part, and the resource-seconds all those held
    reservations: dict[str, Any] | None = None
    #: when the last task of the finite jobs ended (seconds from the start of allocation)
    makespan: float | None = None
    #: job completion times: mean, p50, p95, p99, max (of the jobs that finished)
    jct_s: dict[str, float] | None = None
    #: per task of a finite job: its start - its job's arrival; mean, p50, p95, p99, max
    queueing_delay_s: dict[str, float] | None = None
    #: tasks of finite jobs that did not run to completion (a run that did not drain, or
    #: the jobs given up)
    unfinished_tasks: dict[str, int] | None = None
    #: the jobs given up because no server up could run them (their constraint or demand
    #: matched only servers that left; model/fleet.py): user, job, tasks_left (None for an
    #: endless job), why, since (seconds from the start of allocation); [] when none was
    unrunnable_jobs: list[dict[str, Any]] | None = None
    #: the jobs withdrawn because their users went down (their processes killed; their
    #: tasks that ran, ran on): user, job, tasks_left, why, since; absent when no user did
    withdrawn_jobs: list[dict[str, Any]] | None = None
    #: each user's (weighted) dominant share averaged over the time it competed (had a
    #: task pending; model/timeline.py), and fairness over them
    time_avg_shares: dict[str, float] | None = None
    jain_time_avg: float | None = None
    gini_time_avg: float | None = None
    min_time_avg_share: float | None = None
    #: sharing incentive over time (model/sharing_over_time.py): per user, its held and
    #: guaranteed dominant shares averaged over the time it competed and the fraction of
    #: that time below its guarantee; None where tasks never end
    sharing_over_time: dict[str, Any] | None = None
    #: envy-freeness over time (model/envy_over_time.py): per user, the fraction of the
    #: sampled time it wanted more that it envied another's bundle, and beyond one task;
    #: None where tasks never end
    envy_over_time: dict[str, Any] | None = None
    #: samples every ``sample_every`` seconds: time, utilization per resource, shares per user
    samples: dict[str, Any] | None = None
    #: users' weights, when one is not 1; the run's time scale, when not 1
    weights: dict[str, float] | None = None
    time_scale: float | None = None
    # -- the papers' fairness (model/notions.py): None, and not in the JSON, for DRF's runs
    #: the notion the policy ranks users by, which min_share, gini, jain, ratio_20_20 and
    #: the error ratio are then computed on (``shares`` stays the dominant share)
    fairness: str | None = None
    #: every user's share under that notion; in the JSON under the notion's own key
    #: (``task_shares`` for tsf, ...: FairnessNotion.result_key)
    notion_shares: dict[str, float] | None = None
    #: ``--per-server``: each user's tasks on each server that holds some
    per_server: dict[str, dict[str, int]] | None = None
    #: the fairness audit of the final allocation (dgdrf/auditing.py): sharing incentive,
    #: envy-freeness, Pareto efficiency and their evidence; None for a scenario whose
    #: tasks end or whose users have several demands (the properties are of a static one)
    audit: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> RunResult:
        """A result back from its ``--json`` document (keys it does not have, such as a
        network run's ``mode`` or ``processes``, are left out)."""
        notion_key = {n.result_key for n in NOTIONS.values()} & doc.keys() - {"shares"}
        own = {"notion_shares": doc[notion_key.pop()]} if notion_key else {}
        return cls(**{k: v for k, v in doc.items() if k in cls.__dataclass_fields__}, **own)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in OPTIONAL_KEYS:
            if d[key] is None:
                del d[key]  # a run without churn or jobs keeps its result byte for byte
        if "notion_shares" in d:
            d[notion_result_key(self.fairness)] = d.pop("notion_shares")
        if d["ratio_20_20"] == float("inf"):
            d["ratio_20_20"] = None  # JSON has no infinity; None = poorest 20 % hold nothing
        return d


#: result keys left out of the JSON when None (they describe what the thesis's world has not)
OPTIONAL_KEYS = (
    "churn", "jobs", "instances", "reservations", "makespan", "jct_s", "queueing_delay_s", "unfinished_tasks", "unrunnable_jobs", "withdrawn_jobs", "time_avg_shares", "jain_time_avg", "gini_time_avg",
    "min_time_avg_share", "sharing_over_time", "envy_over_time", "samples", "weights", "time_scale", "fairness", "notion_shares", "per_server", "audit",
)  # fmt: skip


#: the figures a distribution of seconds is summed up by: of jobs' completion times and
#: tasks' queueing delays (SPREAD), and of allocation latencies (LATENCY, the thesis's)
SPREAD = ("mean", "p50", "p95", "p99", "max")
LATENCY = ("p50", "p90", "p99", "mean", "max")


def summary(values: np.ndarray, figures: tuple[str, ...] = SPREAD) -> dict[str, float] | None:
    """``figures`` of ``values`` ("mean", "max" or "pNN", the NN-th percentile), in that
    order; None when there are no values."""
    if not values.size:
        return None
    return {f: float(values.mean() if f == "mean" else values.max() if f == "max" else np.percentile(values, int(f[1:]))) for f in figures}


def job_measures(collector: Collector, end: float) -> dict[str, Any]:
    """What a run with jobs measured besides the thesis's figures (RunResult's job keys)."""
    out: dict[str, Any] = {}
    scenario = collector.scenario
    if scenario.finite_jobs:
        records = collector.jobs.job_records()
        out["jobs"] = records
        finishes = [r["finish"] for r in records if r["finish"] is not None]
        out["makespan"] = max(finishes) if len(finishes) + collector.jobs.finite_aside() >= len(records) and finishes else None
        out["jct_s"] = summary(np.array([r["jct"] for r in records if r["jct"] is not None], dtype=np.float64))
        out["queueing_delay_s"] = summary(collector.jobs.queueing_delays())
        unfinished = dict(collector.jobs.unfinished())
        out["unfinished_tasks"] = unfinished or None
    if scenario.gangs:
        out["instances"] = collector.jobs.instance_counts()
        out["reservations"] = collector.reservations
    if collector.jobs.specs:
        out["unrunnable_jobs"] = collector.jobs.unrunnable_records()
        if collector.jobs.users_down:
            out["withdrawn_jobs"] = collector.jobs.withdrawn_records()
    averages = collector.time_averaged_shares(end)
    if averages is not None:
        ids = collector.ledger.user_ids
        out["time_avg_shares"] = {u: float(averages[i]) for i, u in enumerate(ids)}
        out["jain_time_avg"] = metrics.jain(averages)
        out["gini_time_avg"] = metrics.gini(averages)
        out["min_time_avg_share"] = metrics.min_share(averages)
    sharing = collector.sharing_over_time(end)
    if sharing is not None:
        out["sharing_over_time"] = sharing
    envy = collector.envy_over_time(end)
    if envy is not None:
        out["envy_over_time"] = envy
    if collector.timeline is not None and collector.timeline.every:
        out["samples"] = collector.timeline.series()
    if any(u.weight != 1.0 for u in scenario.users):
        out["weights"] = {u.id: u.weight for u in scenario.users}
    return out


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


class Counted(Protocol):
    """What the result reads from a transport: its message counters (a LocalTransport's,
    or on a network the ones gathered from every process)."""

    @property
    def stats(self) -> MessageStats: ...


def cost_per_tick(transport: Counted, before: tuple[list[int], list[int]] | None, ticks: float, servers: int, config: RunConfig) -> dict[str, Any]:
    """Messages and bytes per allocation tick during the allocation phase, per group, next
    to the thesis's cost model: DDRF's 2|S|P share messages of 8 bytes plus overhead
    (eqs. 4.3-4.4) and the gradient's 2x|S| messages of (P+1)(8+adr) bytes (eqs. 4.5-4.6);
    the bytes are the measured frames."""
    from dgdrf.runtime.messages import message_types

    group_of = {tag: cls.COST_GROUP for tag, cls in message_types().items()}
    count0, bytes0 = before if before is not None else ([0] * 256, [0] * 256)
    stats = transport.stats
    ticks = max(ticks, 1.0)
    groups: dict[str, dict[str, float]] = {}
    for tag in range(256):
        n = stats.count[tag] - count0[tag]
        if not n:
            continue
        group = group_of.get(tag, "other")  # each type declares it: @message(cost=...)
        g = groups.setdefault(group, {"messages": 0.0, "bytes": 0.0})
        g["messages"] += n / ticks
        g["bytes"] += (stats.nbytes[tag] - bytes0[tag]) / ticks
    P, S = config.neighbors, servers
    x = 1.0 if config.gradient_period is None else config.tick / config.gradient_period  # exchanges per node per tick
    model = {"ddrf_share_messages_eq_4_3": 2 * S * P, "gradient_messages_eq_4_6": 2 * x * S}
    return {"ticks": ticks, "by_group": groups, "thesis_model_worst_case": model}


def measure(scenario: Scenario, config: RunConfig, collector: Collector, transport: Counted, wall: float, stop_reason: str, start: float, before: tuple[list[int], list[int]] | None, now: float | None = None) -> RunResult:
    """What a run measured, from its collector and its transport's counters (the same
    in emulation and, gathered from every process, on a network); ``now``: when it
    ended (the time-averaged shares run to it)."""
    ledger = collector.ledger
    shares = ledger.shares()
    judged = collector.shares()  # the policy's notion's (the dominant share for DRF)
    n_alloc = len(collector.allocations)
    end = collector.ended_at if collector.ended_at is not None else collector.last_allocation_at
    runtime = max(0.0, end - start)  # from the first allocation tick's start (after warm-up)
    latency = summary(np.asarray(collector.latencies, dtype=np.float64), LATENCY) or dict.fromkeys(LATENCY, 0.0)
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
        min_share=metrics.min_share(judged),
        gini=metrics.gini(judged),
        jain=metrics.jain(judged),
        ratio_20_20=metrics.ratio_20_20(judged),
        error_ratio=final_error["exact"],
        error_ratio_tol={key: v for key, v in final_error.items() if key != "exact"},
        shares={u: float(shares[i]) for i, u in enumerate(ledger.user_ids)},
        tasks={u: int(ledger.tasks[i]) for i, u in enumerate(ledger.user_ids)},
        utilization={r: float(util[j]) for j, r in enumerate(scenario.resources)},
        messages={
            "total": msg["total"], "dropped": msg["dropped"], "duplicated": msg["duplicated"], "undeliverable": msg["undeliverable"],
            # only when a partition lost some: a run without one keeps its result (and behaviour fingerprint) byte for byte
            **({"partitioned": msg["partitioned"]} if msg.get("partitioned") else {}),
            "by_type": {k: v["count"] for k, v in msg["by_type"].items()},
        },
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
        time_scale=config.time_scale if config.time_scale != 1.0 else None,
        **job_measures(collector, now if now is not None else end),
        fairness=collector.notion.label if collector.notion is not None else None,
        notion_shares={u: float(judged[i]) for i, u in enumerate(ledger.user_ids)} if collector.notion is not None else None,
        per_server={u: {s: int(ledger.placed[i, j]) for j, s in enumerate(ledger.server_ids) if ledger.placed[i, j]} for i, u in enumerate(ledger.user_ids)}
        if config.per_server
        else None,
        audit=run_audit(scenario, ledger),
    )


def notion_result_key(label: str | None) -> str:
    """The result key a notion's shares go under, from the notion's label."""
    for cls in NOTIONS.values():
        if label == cls.name:
            return cls.result_key
    return ShareLevel.result_key  # "drf level N"
