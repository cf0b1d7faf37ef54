"""Ru et al., 3-D DRF with share levels, as relations: the report page
bench/results/papers/ru-3d-drf.md and its raw figures (ru-3d-drf.json).

    python bench/papers/ru_3d_drf.py --out bench/results/papers

(a) Fig. 1 (ORACLES.md example 5): one pool <24 vCPU, 36 GB, 54 vdisk>, a <2, 4, 3>,
b <3, 2, 6>, c <1, 3, 6>, emulated under ``drf --share-level 1|2|3``: tasks, utilisation,
dominant shares, the level shares, and the order of the allocations.

(b) §III's "original DRF": the users ranked by their share of CPU and memory only, the disk
still a capacity. No dgdrf policy ranks by a subset of the resources (it would take a
per-resource weight of 0 in the share, Ru et al. §IV-B's w_m,n), so it is computed by
:func:`simulate` below on the pool with endless tasks (its state after time 0), under
skip semantics (a user whose task fits nowhere is passed over: dgdrf's DRF) and under
alg. 1's literal line 14 (the first pick that does not fit stops the allocation), with
ties to the lower user ("index") or to the lower share after the next task, then the
lower user ("after": the rule that replays Fig. 1's order, DIGEST 3c).

(c) Figs. 6-8 qualitatively ("3-D DRF gives higher utilisation of the disk/IO and shorter
completion times than 2-D DRF"), on a synthetic workload of finite jobs, with
:func:`simulate` as a small discrete-event simulation of online DRF: at every instant
jobs arrive or tasks end, then the lowest-share tenant whose next task fits goes first,
one task at a time, on the first machine where it fits; a task holds its demand for its
duration. The share is the largest of the tenant's shares A_r / C_r over CPU and memory
(2-D) or over all three (3-D); every resource is a capacity either way. Placement is
instantaneous (dgdrf's emulation places one task per 0.1 s tick with message latencies);
the same 3-D workload through ``dgdrf run --policy drf`` checks the simulation (its
``samples`` give the utilisation over time).

The workload (our choice; the paper's measured YARN jobs on hardware have no demand
vectors): 5 machines <8 cores, 16 GB, 3 disks> as §V's cluster; four tenants, one a
benchmark, with per-task demands and durations chosen so that a Pi, a Malloc and a
Read/Write task together use half of every resource of a machine:

    Pi (CPU)          <2 cores, 2 GB, 0.25 disk>  30 s
    Malloc (memory)   <1 core,  4 GB, 0.25 disk>  40 s
    Read/Write (IO)   <1 core,  2 GB, 1 disk>     50 s
    TeraSort (mixed)  <1 core,  3 GB, 0.5 disk>   60 s

- batch (figs. 7, 8): Pi, Malloc and Read/Write each submit one job of S tasks at time 0,
  S = 50, 100, 200, ..., 600; per S the batch's completion time (its makespan), the mean
  job completion time, and the utilisation of each resource averaged over the makespan;
- continuous (fig. 6): the four tenants submit jobs of 20-60 tasks (uniform) by Poisson
  processes of mean gap 200 s each over an hour (offered load about 1.0-1.5 of the
  cluster on every resource), one workload per seed (numpy ``default_rng(seed)``), seeds
  1..N; the utilisation averaged over that hour (while jobs arrive) and the mean JCT.
"""

from __future__ import annotations

import argparse
import heapq
import sys
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.bench.relations import Relation, page, within, write
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.scenario import build_scenario
from dgdrf.world import Observer

NAME = "ru-3d-drf"
RESOURCES = ["cpu", "memory", "disk"]
POOL = (24, 36, 54)
FIG1 = {"a": (2, 4, 3), "b": (3, 2, 6), "c": (1, 3, 6)}
FIG1_ORDER = "acbacbacbac"  # Fig. 1's rows, A C B A C B A C B A C
TWO_D, THREE_D = (0, 1), (0, 1, 2)

MACHINES = [(8, 16, 3)] * 5
#: the benchmark types: per-task demand <cores, GB, disks> and duration (s)
TYPES = {"pi": ((2, 2, 0.25), 30.0), "malloc": ((1, 4, 0.25), 40.0), "readwrite": ((1, 2, 1), 50.0), "terasort": ((1, 3, 0.5), 60.0)}
BATCH_TYPES = ("pi", "malloc", "readwrite")
SIZES = (50, 100, 200, 300, 400, 500, 600)
HORIZON, GAP, JOB_TASKS = 3600.0, 200.0, (20, 60)


@dataclass(frozen=True)
class Job:
    tenant: str
    id: str
    arrival: float
    demand: tuple[float, ...]
    tasks: int
    duration: float


def simulate(machines: Sequence[Sequence[float]], jobs: Sequence[Job], dims: Sequence[int], level: int = 1, stop: bool = False, tie: str = "index", until: float = float("inf")) -> dict[str, Any]:
    """Online DRF over ``machines`` (first fit) for ``jobs``: tenants ranked by the
    ``level``-th largest of their shares over resources ``dims``; ``stop``: alg. 1's line 14
    (the lowest tenant's task fits nowhere: wait for the next event) instead of skipping it;
    ``tie``: "index" or "after" (share after its next task, then index). Runs until no
    event is left or the next is after ``until``. Returns each job's finish, the end, the
    order of placements, what is in use, and the trace of use after every instant."""
    caps = np.array(machines, dtype=float)
    free, total, dims = caps.copy(), caps.sum(axis=0), list(dims)
    tenants = list(dict.fromkeys(j.tenant for j in jobs))
    demand = [np.array(j.demand, dtype=float) for j in jobs]
    usage = {t: np.zeros(len(total)) for t in tenants}
    queue: dict[str, deque[list[int]]] = {t: deque() for t in tenants}  # per tenant: [job, its tasks not started], in arrival order
    left, finish, order = [j.tasks for j in jobs], [float("nan")] * len(jobs), []
    events = [(j.arrival, 1, i, -1) for i, j in enumerate(jobs)]  # (time, 0 a task ends | 1 a job arrives, job, machine)
    heapq.heapify(events)
    now, trace = 0.0, []

    def share(t: str, d: Any = 0.0) -> float:
        return round(float(np.sort((usage[t] + d)[dims] / total[dims])[-level]), 12)

    def first_fit(i: int) -> int | None:
        return next((m for m in range(len(caps)) if np.all(free[m] + 1e-9 >= demand[i])), None)

    while events and events[0][0] <= until:
        now = events[0][0]
        while events and events[0][0] == now:  # everything that happens at this instant, then the placements
            _, kind, i, m = heapq.heappop(events)
            if kind == 1:
                queue[jobs[i].tenant].append([i, jobs[i].tasks])
                continue
            free[m] += demand[i]
            usage[jobs[i].tenant] -= demand[i]
            left[i] -= 1
            if left[i] == 0:
                finish[i] = now
        while True:
            heads = {k: queue[t][0][0] for k, t in enumerate(tenants) if queue[t]}
            cands = list(heads) if stop else [k for k in heads if first_fit(heads[k]) is not None]
            if not cands:
                break
            k = min(cands, key=lambda k: (share(tenants[k]), share(tenants[k], demand[heads[k]]) if tie == "after" else 0.0, k))
            i, m = heads[k], first_fit(heads[k])
            if m is None:
                break  # line 14: the lowest tenant's task fits nowhere; nothing more until the next event
            free[m] -= demand[i]
            usage[tenants[k]] += demand[i]
            order.append(tenants[k])
            queue[tenants[k]][0][1] -= 1
            if queue[tenants[k]][0][1] == 0:
                queue[tenants[k]].popleft()
            heapq.heappush(events, (now + jobs[i].duration, 0, i, m))
        trace.append((now, (total - free.sum(axis=0)) / total))
    return {"finish": finish, "end": now, "order": order, "used": total - free.sum(axis=0), "trace": trace}


# ---- the use over time ---------------------------------------------------------------------
def time_average(trace: list[tuple[float, np.ndarray]], start: float, end: float) -> np.ndarray:
    """The utilisation of each resource averaged over [start, end] (piecewise constant)."""
    area = np.zeros(len(trace[0][1]))
    for (t0, u), (t1, _) in zip(trace, [*trace[1:], (max(end, trace[-1][0]), None)]):
        lo, hi = max(t0, start), min(t1, end)
        if hi > lo:
            area += u * (hi - lo)
    return area / (end - start)


def at(trace: list[tuple[float, np.ndarray]], t: float) -> np.ndarray:
    """The utilisation just after time ``t``'s events."""
    u = np.zeros(len(trace[0][1]))
    for t0, v in trace:
        if t0 > t:
            break
        u = v
    return u


# ---- (a) and (b): Fig. 1 ----------------------------------------------------------------------
class Order(Observer):
    def __init__(self) -> None:
        self.users: list[str] = []

    def allocated(self, world, allocation) -> None:
        self.users.append(allocation.user)


def fig1_emulated(level: int) -> dict[str, Any]:
    """Fig. 1's pool under ``dgdrf``'s drf at share level ``level``."""
    scenario = build_scenario(RESOURCES, [("pool", list(POOL))], [(u, list(d)) for u, d in FIG1.items()], name="ru-fig1")
    order = Order()
    r = run_emulation(scenario, RunConfig(policy="drf", share_level=level), observers=[order])
    if r.stop_reason != "saturated" or r.invariant_violations:
        raise RuntimeError(f"Fig. 1 at level {level}: {r.stop_reason} {r.invariant_violations}: dgdrf run --policy drf --share-level {level} on ORACLES.md 5")
    return {"tasks": r.tasks, "utilization": r.utilization, "shares": r.shares, "level_shares": r.notion_shares, "order": "".join(order.users)}


def fig1_greedy(dims: Sequence[int], level: int = 1, stop: bool = False, tie: str = "index") -> dict[str, Any]:
    """Fig. 1's pool by :func:`simulate` with endless tasks: the allocation at time 0."""
    jobs = [Job(u, u, 0.0, d, 10**6, float("inf")) for u, d in FIG1.items()]
    r = simulate([POOL], jobs, dims, level, stop, tie, until=0.0)
    return {"tasks": dict(Counter(r["order"])), "utilization": dict(zip(RESOURCES, (r["used"] / np.array(POOL)).tolist())), "order": "".join(r["order"])}


# ---- (c): finite jobs ----------------------------------------------------------------------------
def batch(size: int) -> list[Job]:
    return [Job(t, f"{t}-{size}", 0.0, TYPES[t][0], size, TYPES[t][1]) for t in BATCH_TYPES]


def continuous(seed: int) -> list[Job]:
    rng = np.random.default_rng(seed)
    jobs = []
    for t, (d, duration) in TYPES.items():
        arrival = float(rng.exponential(GAP))
        while arrival < HORIZON:
            jobs.append(Job(t, f"{t}-{len(jobs)}", round(arrival, 3), d, int(rng.integers(JOB_TASKS[0], JOB_TASKS[1] + 1)), duration))
            arrival += float(rng.exponential(GAP))
    return sorted(jobs, key=lambda j: (j.arrival, j.id))


def measure(jobs: list[Job], dims: Sequence[int], stop: bool, window: tuple[float, float] | None = None) -> dict[str, Any]:
    """One simulation: makespan, mean JCT, utilisation averaged over ``window`` (default:
    the makespan)."""
    r = simulate(MACHINES, jobs, dims, stop=stop)
    jct = [f - j.arrival for f, j in zip(r["finish"], jobs)]
    util = time_average(r["trace"], *(window or (0.0, r["end"])))
    return {"makespan": r["end"], "mean_jct": float(np.mean(jct)), "jct": dict(zip((j.id for j in jobs), jct)), "utilization": dict(zip(RESOURCES, util.round(6).tolist())), "trace": r["trace"]}


def scenario_of(jobs: list[Job], name: str):
    users: dict[str, list[dict[str, Any]]] = {}
    for j in jobs:
        users.setdefault(j.tenant, []).append({"id": j.id, "demand": list(j.demand), "tasks": j.tasks, "duration": j.duration, "arrival": j.arrival})
    return build_scenario(RESOURCES, [(f"m{i + 1}", list(c)) for i, c in enumerate(MACHINES)], [{"id": u, "jobs": js} for u, js in users.items()], name=name)


def emulate_jobs(jobs: list[Job], name: str, window: tuple[float, float] | None = None, every: float = 1.0) -> dict[str, Any]:
    """The same jobs through dgdrf's drf (3-D): makespan, mean JCT, utilisation averaged
    over ``window`` from its samples, and the samples."""
    r = run_emulation(scenario_of(jobs, name), RunConfig(policy="drf", sample_every=every))
    if r.stop_reason != "drained" or r.invariant_violations:
        raise RuntimeError(f"{name}: {r.stop_reason} {r.invariant_violations}")
    assert r.samples is not None and r.jobs is not None and r.makespan is not None
    times = np.array(r.samples["time"])
    lo, hi = window or (0.0, r.makespan)
    inside = (times >= lo) & (times < hi)
    util = {res: round(float(np.mean(np.array(v)[inside])), 6) for res, v in r.samples["utilization"].items()}
    return {"makespan": r.makespan, "mean_jct": float(np.mean([j["jct"] for j in r.jobs])), "utilization": util, "samples": {"time": r.samples["time"], "utilization": r.samples["utilization"]}}


VARIANTS = {"3-D skip": (THREE_D, False), "2-D skip": (TWO_D, False), "3-D stop": (THREE_D, True), "2-D stop": (TWO_D, True)}


def collect(seeds: Sequence[int], sizes: Sequence[int] = SIZES, check_size: int = 200, check_seed: int | None = None) -> dict[str, Any]:
    """Every figure of the page."""
    doc: dict[str, Any] = {"fig1": {"pool": POOL, "users": FIG1}}
    doc["fig1"]["emulated"] = {str(level): fig1_emulated(level) for level in (1, 2, 3)}
    doc["fig1"]["greedy"] = {
        f"{d}-D {'stop' if stop else 'skip'} {tie}": fig1_greedy(TWO_D if d == 2 else THREE_D, 1, stop, tie) for d in (3, 2) for stop in (False, True) for tie in ("index", "after")
    }
    doc["workload"] = {"machines": MACHINES, "types": {t: {"demand": d, "duration": s} for t, (d, s) in TYPES.items()}, "batch_types": BATCH_TYPES,
                       "continuous": {"horizon": HORIZON, "mean_gap": GAP, "job_tasks": JOB_TASKS}}
    doc["batch"] = {str(s): {v: _strip(measure(batch(s), dims, stop)) for v, (dims, stop) in VARIANTS.items()} for s in sizes}
    window = (0.0, HORIZON)
    doc["continuous"] = {str(seed): {v: _strip(measure(continuous(seed), dims, stop, window)) for v, (dims, stop) in VARIANTS.items()} for seed in seeds}
    check_seed = seeds[0] if check_seed is None else check_seed
    b = batch(check_size)
    c = continuous(check_seed)
    sims = {"batch": measure(b, THREE_D, False), "continuous": measure(c, THREE_D, False, window), "continuous 2-D": measure(c, TWO_D, False, window)}
    emus = {"batch": emulate_jobs(b, f"ru-batch-{check_size}"), "continuous": emulate_jobs(c, f"ru-continuous-{check_seed}", window)}
    doc["check"] = {"batch_size": check_size, "seed": check_seed, "simulated": {k: _strip(v) for k, v in sims.items()}, "emulated": {k: {kk: vv for kk, vv in v.items() if kk != "samples"} for k, v in emus.items()}}
    times = [t for t in emus["continuous"]["samples"]["time"] if t % 600 == 0 and t <= HORIZON]
    doc["check"]["over_time"] = {
        "time": times,
        "dgdrf drf (3-D)": [[round(emus["continuous"]["samples"]["utilization"][r][emus["continuous"]["samples"]["time"].index(t)], 4) for r in RESOURCES] for t in times],
        "simulated 3-D": [at(sims["continuous"]["trace"], t).round(4).tolist() for t in times],
        "simulated 2-D": [at(sims["continuous 2-D"]["trace"], t).round(4).tolist() for t in times],
    }
    return doc


def _strip(m: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in m.items() if k not in ("trace", "jct")}
    out["makespan"], out["mean_jct"] = round(out["makespan"], 6), round(out["mean_jct"], 6)
    return out


# ---- the page ---------------------------------------------------------------------------------
def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def triple(u: dict[str, float]) -> str:
    return " / ".join(pct(u[r]) for r in RESOURCES)


def per_user(v: dict[str, float]) -> str:
    return " / ".join(f"{v[u]:.3f}" for u in FIG1)


def points(a: dict[str, float], b: dict[str, float]) -> str:
    """a - b per resource, in percentage points."""
    return " / ".join(f"{100 * (a[r] - b[r]):+.1f}" for r in RESOURCES)


def tasks_of(t: dict[str, int]) -> str:
    return "/".join(str(t.get(u, 0)) for u in FIG1)


def mean_over(doc: dict[str, Any], variant: str, key: str, res: str | None = None) -> float:
    runs = [v[variant] for v in doc["continuous"].values()]
    return float(np.mean([r[key][res] if res else r[key] for r in runs]))


def count_over(doc: dict[str, Any], better: str, worse: str, key: str, res: str | None = None, lower: bool = False) -> int:
    """Seeds in which ``better``'s figure is above ``worse``'s (below, with ``lower``)."""
    n = 0
    for v in doc["continuous"].values():
        a, b = (v[better][key][res], v[worse][key][res]) if res else (v[better][key], v[worse][key])
        n += (a < b) if lower else (a > b)
    return n


def relations(doc: dict[str, Any]) -> list[Relation]:
    em, gr = doc["fig1"]["emulated"], doc["fig1"]["greedy"]
    one = em["1"]
    shares = {u: one["shares"][u] for u in FIG1}
    rel = [
        Relation("Fig. 1, §III", "3-D DRF (Lev 1): a = 4, b = 3, c = 4 tasks", "4/3/4", tasks_of(one["tasks"]), "exact", one["tasks"] == {"a": 4, "b": 3, "c": 4}, "dgdrf run --policy drf on the pool"),
        Relation("Fig. 1, §III", "utilisation CPU / memory / disk", "87.50 % / 94.44 % / 100.00 %", triple(one["utilization"]), "exact",
                 all(within(one["utilization"][r], v, 1e-9) for r, v in zip(RESOURCES, (21 / 24, 34 / 36, 1.0))), ""),
        Relation("Fig. 1, §III", "dominant shares a 16/36 (memory), b 9/24 (CPU), c 24/54 (disk)", "0.444 / 0.375 / 0.444", per_user(shares), "exact",
                 all(within(shares[u], v, 1e-9) for u, v in zip(FIG1, (16 / 36, 9 / 24, 24 / 54))), ""),
        Relation("alg. 1 (Lev 2, 3)", "share levels 2 and 3 on Fig. 1's pool", "not printed (DIGEST 3c: 4/3/4 under skip)",
                 f"Lev 2: {tasks_of(em['2']['tasks'])}, level shares {per_user(em['2']['level_shares'])}; Lev 3: {tasks_of(em['3']['tasks'])}, level shares {per_user(em['3']['level_shares'])}", "exact", em["2"]["tasks"] == em["3"]["tasks"] == {"a": 4, "b": 3, "c": 4},
                 "dgdrf run --policy drf --share-level 2, then 3 (skip semantics: a user whose task fits nowhere is passed over)"),
        Relation("Fig. 1", "allocation order A C B A C B A C B A C", FIG1_ORDER.upper(), one["order"].upper(), "exact sequence", one["order"] == FIG1_ORDER,
                 f"ties at equal shares go to the lower user in dgdrf (second pick: b and c both at 0, b goes); the paper's order comes from breaking ties by the share after the next task "
                 f"(simulated: {gr['3-D skip after']['order'].upper()}); the final allocation is the same either way, as the paper's caption says"),
    ]
    skip, lit = gr["2-D skip index"], gr["2-D stop after"]
    rel += [
        Relation("§III", "original (2-D) DRF: a = 3, b = 3, c = 4", "3/3/4", f"{tasks_of(skip['tasks'])} (skip semantics)", "exact", skip["tasks"] == {"a": 3, "b": 3, "c": 4},
                 f"simulated (no dgdrf policy ranks by CPU and memory only). With dgdrf's skip semantics the 2-D rank gives the 3-D allocation; the paper's 3/3/4 needs alg. 1's "
                 f"line-14 stop and ties by the share after the next task ({tasks_of(lit['tasks'])}, order {lit['order'].upper()}: c's task first, then a's, then b's, as §III tells)"),
        Relation("§III", "2-D utilisation CPU / memory / disk", "79 % / 83 % / 100 %", f"{triple(skip['utilization'])} (skip); {triple(lit['utilization'])} (stop, after)", "± 0.5 point",
                 all(within(100 * skip["utilization"][r], v, 0.5) for r, v in zip(RESOURCES, (79, 83, 100))),
                 "no reading gives the paper's three figures: its 3/3/4 uses 51 of 54 vdisks (94.4 %), not 100 %; 79 % and 83 % are that allocation's CPU and memory"),
        Relation("§III", "3-D DRF's utilisation about 10 % above 2-D DRF's on this example", "≈ +10 %",
                 f"skip: {points(one['utilization'], skip['utilization'])} points; stop, after: {points(one['utilization'], lit['utilization'])} points", "qualitative: 3-D above 2-D",
                 all(one["utilization"][r] > skip["utilization"][r] for r in RESOURCES),
                 "under skip semantics the third resource gains nothing on the paper's own example; the gain is the line-14 stop's: the 2-D rank's 11th pick is c (tied with a at 1/3, lower after its next task), whose task no longer fits the disk, and the allocation ends while a's task would still fit"),
    ]
    b = doc["batch"]
    sizes = list(b)
    disk_up = sum(b[s]["3-D skip"]["utilization"]["disk"] > b[s]["2-D skip"]["utilization"]["disk"] for s in sizes)
    faster = sum(b[s]["3-D skip"]["makespan"] < b[s]["2-D skip"]["makespan"] for s in sizes)
    gaps = [b[s]["2-D skip"]["makespan"] - b[s]["3-D skip"]["makespan"] for s in sizes]
    jct_gaps = [b[s]["2-D skip"]["mean_jct"] - b[s]["3-D skip"]["mean_jct"] for s in sizes]
    big = sizes[-1]
    rel += [
        Relation("fig. 7", "batch jobs: IO utilisation 3-D above 2-D", "94.91 % vs 79.41 %",
                 f"3-D above at {disk_up} of {len(sizes)} sizes; mean {pct(np.mean([b[s]['3-D skip']['utilization']['disk'] for s in sizes]))} vs {pct(np.mean([b[s]['2-D skip']['utilization']['disk'] for s in sizes]))}",
                 "qualitative: 3-D above at every size", disk_up == len(sizes),
                 "simulated, skip semantics; averaged over each batch's makespan, a resource's utilisation is its fixed total work over the makespan, so this is fig. 8's relation again"),
        Relation("fig. 8", "batch jobs: completion time shorter with 3-D, by 457.5 s on average, 660 s at size 600", "−457.5 s (mean), −660 s (600)",
                 f"makespan −{np.mean(gaps):.0f} s (mean), −{gaps[-1]:.0f} s ({big}); mean JCT −{np.mean(jct_gaps):.0f} s (mean), −{jct_gaps[-1]:.0f} s ({big})",
                 "qualitative: 3-D shorter at every size", faster == len(sizes) and all(g > 0 for g in jct_gaps),
                 f"3-D's makespan shorter at {faster} of {len(sizes)} sizes; magnitudes are our workload's, not comparable with YARN on hardware"),
    ]
    n = len(doc["continuous"])
    mean = {v: {r: mean_over(doc, v, "utilization", r) for r in RESOURCES} for v in ("3-D skip", "2-D skip")}
    disk_more = count_over(doc, "3-D skip", "2-D skip", "utilization", "disk")
    cpu_more, mem_more = (count_over(doc, "3-D skip", "2-D skip", "utilization", r) for r in ("cpu", "memory"))
    jct3, jct2 = mean_over(doc, "3-D skip", "mean_jct"), mean_over(doc, "2-D skip", "mean_jct")
    jct_less = count_over(doc, "3-D skip", "2-D skip", "mean_jct", lower=True)
    rel += [
        Relation("fig. 6", "continuous mixed workload: disk (IO) utilisation 3-D above 2-D", "92.6 % vs 65.6 %",
                 f"{pct(mean['3-D skip']['disk'])} vs {pct(mean['2-D skip']['disk'])} (mean of {n} seeds; 3-D above in {disk_more})", "qualitative: 3-D above on the mean",
                 mean["3-D skip"]["disk"] > mean["2-D skip"]["disk"],
                 "an allocation model has no IO contention: 2-D DRF ranks the Read/Write tenant by its small CPU and memory shares and gives it more tasks, so more of the disk is "
                 "allocated, and CPU and memory wait (§III's own story of 2-D DRF exhausting the disk); the paper measured IO throughput under YARN without blkio control"),
        Relation("fig. 6", "continuous mixed workload: CPU and memory utilisation 3-D above 2-D", "CPU 97.38 % vs 85.88 %, memory 91.63 % (+7.75 points)",
                 f"CPU {pct(mean['3-D skip']['cpu'])} vs {pct(mean['2-D skip']['cpu'])}, memory {pct(mean['3-D skip']['memory'])} vs {pct(mean['2-D skip']['memory'])} "
                 f"(3-D above in {cpu_more} and {mem_more} of {n} seeds)", "qualitative: 3-D above on the mean",
                 mean["3-D skip"]["cpu"] > mean["2-D skip"]["cpu"] and mean["3-D skip"]["memory"] > mean["2-D skip"]["memory"], "utilisation averaged over the hour jobs arrive in"),
        Relation("abstract", "completion time 59 % shorter on average", "−59 %", f"mean JCT {jct3:.0f} s vs {jct2:.0f} s ({100 * (jct3 / jct2 - 1):+.1f} %; 3-D shorter in {jct_less} of {n} seeds)",
                 "qualitative: 3-D shorter on the mean", jct3 < jct2, "continuous workload, simulated, skip semantics"),
    ]
    return rel


def render(doc: dict[str, Any], commands: list[str]) -> str:
    em, gr = doc["fig1"]["emulated"], doc["fig1"]["greedy"]
    n = len(doc["continuous"])
    intro = f"""
Ru et al.'s Fig. 1 and §III example on one pool <24 vCPU, 36 GB, 54 vdisk> (a <2, 4, 3>,
b <3, 2, 6>, c <1, 3, 6>) through `dgdrf run --policy drf --share-level 1|2|3`; §III's
2-D "original DRF" (users ranked by their CPU and memory shares, the disk still a
capacity), which no dgdrf policy expresses (it would take a per-resource weight of 0 in
the share: Ru et al. §IV-B's w_m,n), computed by a small simulation in the script; and
figs. 6-8's relation, 3-D against 2-D DRF, on a synthetic workload of finite jobs on 5
machines <8 cores, 16 GB, 3 disks>: batches of S Pi, Malloc and Read/Write tasks (figs.
7, 8) and an hour of Poisson arrivals of four tenants' jobs ({n} seeds; fig. 6), by the
same simulation (online DRF: lowest share first among the tenants whose next task fits,
first-fit machine, every resource a capacity; the shares over CPU and memory for 2-D,
over all three for 3-D). Demands, durations and arrivals are ours (the script's doc): the
paper measured YARN on hardware, so only the sign of each relation is compared. The
simulation's 3-D runs are checked against dgdrf's own drf on the same jobs (below).
"""
    L = ["## Fig. 1 under dgdrf's drf", "", "| share level | tasks a/b/c | utilisation CPU / memory / disk | dominant shares a / b / c | level shares | order |", "|---|---|---|---|---|---|"]
    for lev, r in em.items():
        ls = per_user(r["level_shares"]) if r["level_shares"] else "(= dominant)"
        L.append(f"| {lev} | {tasks_of(r['tasks'])} | {triple(r['utilization'])} | {per_user(r['shares'])} | {ls} | {r['order'].upper()} |")
    L += ["", "## Fig. 1's pool by the simulation (level 1): 2-D and 3-D, skip or stop, ties", "",
          "skip: a user whose task fits nowhere is passed over (dgdrf); stop: alg. 1's line 14, the first pick that does not fit ends the allocation. "
          "index: ties to the lower user; after: to the lower share after the next task, then the lower user.", "",
          "| rank by | line 14 | ties | tasks a/b/c | utilisation CPU / memory / disk | order |", "|---|---|---|---|---|---|"]
    for key, r in gr.items():
        d, sem, tie = key.split(" ")
        L.append(f"| {d} | {sem} | {tie} | {tasks_of(r['tasks'])} | {triple(r['utilization'])} | {r['order'].upper()} |")
    L += ["", "## Batches (figs. 7, 8): Pi, Malloc and Read/Write, S tasks each at time 0", "",
          "Makespan and mean JCT in seconds; utilisation CPU / memory / disk averaged over the makespan.", "",
          "| S | variant | makespan | mean JCT | utilisation |", "|---|---|---|---|---|"]
    for s, v in doc["batch"].items():
        for var, r in v.items():
            L.append(f"| {s} | {var} | {r['makespan']:.0f} | {r['mean_jct']:.0f} | {triple(r['utilization'])} |")
    L += ["", f"## Continuous mixed workload (fig. 6): the mean of {n} seeds", "",
          "Utilisation averaged over the hour jobs arrive in; mean JCT over every job; makespan when the last task ends.", "",
          "| variant | utilisation CPU / memory / disk | mean JCT | makespan |", "|---|---|---|---|"]
    for var in VARIANTS:
        L.append(f"| {var} | {' / '.join(pct(mean_over(doc, var, 'utilization', r)) for r in RESOURCES)} | {mean_over(doc, var, 'mean_jct'):.0f} | {mean_over(doc, var, 'makespan'):.0f} |")
    ck = doc["check"]
    L += ["", "## The simulation against dgdrf's drf (3-D, skip) on the same jobs", "",
          f"Batch S = {ck['batch_size']} and the continuous workload of seed {ck['seed']}; dgdrf places one task per 0.1 s tick with message latencies, the simulation "
          "at once, and tasks that end together are released together in the simulation, one by one in dgdrf (its utilisation: the mean of its samples, one a second).", "",
          "| workload | run | makespan | mean JCT | utilisation |", "|---|---|---|---|---|"]
    for w in ("batch", "continuous"):
        for who, r in (("simulated", ck["simulated"][w]), ("dgdrf drf", ck["emulated"][w])):
            L.append(f"| {w} | {who} | {r['makespan']:.1f} | {r['mean_jct']:.1f} | {triple(r['utilization'])} |")
    ot = ck["over_time"]
    L += ["", f"Utilisation CPU / memory / disk over time, continuous workload of seed {ck['seed']} (dgdrf: its `samples`):", "",
          "| time (s) | dgdrf drf (3-D) | simulated 3-D | simulated 2-D |", "|---|---|---|---|"]
    for i, t in enumerate(ot["time"]):
        L.append(f"| {t:.0f} | " + " | ".join(" / ".join(f"{100 * x:.0f} %" for x in ot[k][i]) for k in ("dgdrf drf (3-D)", "simulated 3-D", "simulated 2-D")) + " |")
    L += ["", "The raw figures are in ru-3d-drf.json."]
    return page(
        "Ru et al., 3-D DRF with share levels",
        "J. Ru, J. Grundy, Y. Yang, J. Keung, L. Hao: Providing fairer resource allocation for multi-tenant cloud-based systems (Fig. 1, §III, alg. 1, §V figs. 6-8)",
        intro, relations(doc), commands, "\n".join(L),
    )




def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ru_3d_drf.py", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="continuous workloads of seeds 1..N (default 20)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"), help="directory of the page and its JSON")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    doc = collect(range(1, args.seeds + 1))
    cmd = "python bench/papers/ru_3d_drf.py" + ("" if args.seeds == 20 else f" --seeds {args.seeds}") + f" --out {args.out}"
    text = render(doc, [cmd])
    write(args.out, NAME, doc, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
