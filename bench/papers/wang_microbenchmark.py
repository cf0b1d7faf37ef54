"""Wang et al.'s micro-benchmarks (TSF, §VI-A: Table II and figs. 5, 6, 7) as relations:
the report page bench/results/papers/wang-microbenchmark.md and its raw figures
(wang-microbenchmark.json).

    python bench/papers/wang_microbenchmark.py --out bench/results/papers
    python bench/papers/wang_microbenchmark.py --render-only   # the page again from its JSON, no run

The scenarios, each with its source and the readings chosen in its comment:

- configs/wang-table2.toml: Table II's four jobs on the 50-node cluster (fig. 5);
- configs/wang-fig6-static.toml, wang-fig6-shared.toml, wang-fig6-shared-weighted.toml:
  fig. 6, the same jobs in dedicated pools, and sharing the cluster (equal weights, and
  Theorem 1's weights k_i / h_i);
- configs/wang-fig7-alone.toml, wang-fig7-congested.toml: fig. 7, two elephants and two
  mice, alone and with four more elephants.

Every scenario runs under every variant below for run seeds 1..``--seeds``, each a full
emulation (``run_emulation``, samples every second): ``tsf`` (server offers, one task per
offer: dgdrf's online TSF), ``tsf-fill`` (the job an offer goes to keeps it while its next
task fits, as a Mesos framework takes an offer: the paper's prototype ran on Mesos),
``drf`` (user-driven: the lowest dominant share's task on the first server that fits) and
``cdrf`` (server offers by job slowdown n_i / (M_i w_i)). The relations are checked on
``tsf`` and ``tsf-fill``, one table each (a mechanism a table), and fig. 5's plateaus also
offline (progressive filling by LP on the jobs present, divisible tasks: the paper's
"ideally, with TSF"); drf and cdrf are shown beside them in the notes and give some of the
alternatives a tolerance must exclude.

A job's task share over time is read from the run's samples (its policy's share: task
shares under tsf, dominant shares under drf, job slowdowns under cdrf) and turned into the
job's running tasks n_i (share x h_i w_i, w_i / max_r d_ir / C_r, M_i w_i), so every policy
is measured by the same task share n_i / h_i. A plateau is the mean over the samples of a
window (seconds, at every whole second), and over the seeds; the windows are derived from
each run (:func:`windows`).

The page is made of the raw figures alone: ``tables(raw)`` builds every relation (verdicts,
alternatives, explanations) from wang-microbenchmark.json, ``render(raw)`` the page; the
paper's figures are the only numbers typed here.

Cost: 72 runs at the default 3 seeds, 0.2-5 s of wall time each (the 2,300 simulated
seconds of fig. 6's static pools the longest), about a minute in all on one core.

Every run must end ``drained`` with no invariant violation (a task only on nodes its job
admits, no node over capacity): a run that does not is a bug, and the script stops with
the command that shows it instead of recording it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.bench.relations import Alternative, Relation, Table, compact_json, drain_problems, near, page, write
from dgdrf.config import load_scenario
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.lp_filling import progressive_filling_lp
from dgdrf.model.problem import Problem, tasks_alone
from dgdrf.model.scenario import Scenario
from dgdrf.world import Observer

NAME = "wang-microbenchmark"
ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {
    "table2": "configs/wang-table2.toml",
    "fig6-static": "configs/wang-fig6-static.toml",
    "fig6-shared": "configs/wang-fig6-shared.toml",
    "fig6-shared-weighted": "configs/wang-fig6-shared-weighted.toml",
    "fig7-alone": "configs/wang-fig7-alone.toml",
    "fig7-congested": "configs/wang-fig7-congested.toml",
}
#: variant -> (policy, extra RunConfig options)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "tsf": ("tsf", {}),
    "tsf-fill": ("tsf", {"offer_tasks": "fill"}),
    "drf": ("drf", {}),
    "cdrf": ("cdrf", {}),
}
#: the variants the relations are checked on, each its own table (its mechanism)
CHECKED = ("tsf", "tsf-fill")
MECHANISM = {
    "tsf": "server offers, one task per offer (`dgdrf run --policy tsf`: nodes offered in id order, a node freed by a finishing task offered again first, each offer to the lowest task share whose task fits)",
    "tsf-fill": "server offers with fill (`dgdrf run --policy tsf --offer-tasks fill`: as one task per offer, but the job an offer goes to keeps it while its next task fits, as a Mesos framework takes an offer)",
}
SHORT = {"tsf": "one task per offer", "tsf-fill": "fill", "drf": "user-driven first fit (drf)", "cdrf": "cdrf offers (job slowdowns)"}
OFFLINE = "offline progressive filling by LP (`dgdrf oracle`: divisible tasks, the jobs of a plateau alone on the cluster, no task ending)"
SCENARIO = "none: the scenario's own figures (configs/wang-table2.toml, dgdrf's TaskShare units)"
SAMPLE_EVERY = 1.0
#: seconds between snapshots of where each job's tasks run (per pool of nodes)
SNAPSHOT_EVERY = 5.0
#: the longest task of job 1 (23.2 s + 20 %): every job-1 task running at an instant has
#: ended this long after it (checked against the scenario when measuring)
JOB1_LONGEST = 1.2 * 23.2
#: how long before its tick the scheduler may not yet have heard of a task's end (a
#: message's latency is at most 5 ms)
DECISION_LAG = 0.005
#: Table II's windows, in seconds from the start of allocation (see :func:`windows`)
ALONE = (8.0, 18.0)
#: the paper's figures (the only numbers typed here). Fig. 5's plateaus (task shares):
#: window -> job -> (figure, as printed, the paper's words)
PAPER_PLATEAUS: dict[str, dict[str, tuple[float, str, str]]] = {
    "alone": {"job1": (1.0, "1", "at the beginning job 1, the only active job, monopolizes the cluster with task share of 1")},
    "jobs12": {
        "job2": (1 / 2, "1/2", "job 2 (nodes 1-25) is allocated all 25 nodes, each running 2 tasks: task share 2 x 25 / 100 = 1/2"),
        "job1": (2 / 3, "2/3", "job 1 is allocated nodes 26-50, each running 2 tasks: task share 2 x 25 / 75 = 2/3"),
    },
    "job1_after_job2": {"job1": (1.0, "1", "after job 2 completes, job 1 monopolizes the cluster until jobs 3 and 4 start")},
    "jobs134": {
        "job1": (3 / 5, "3/5", "the other 30 nodes remain allocated to job 1, whose task share is stabilized at 2 x 30 / 100 = 3/5"),
        "job3": (1 / 5, "1/5", "jobs 3 and 4 evenly share the 20 whitelisted nodes, equalizing their task shares to 1/5"),
        "job4": (1 / 5, "1/5", "(as job 3) job 4's task share 1/5"),
    },
}
#: Table II's h_i
PAPER_H = {"job1": 75, "job2": 100, "job3": 100, "job4": 75}
PAPER_FIG6_SPEEDUP = 0.22
#: tolerances, each with the alternative it must exclude (named in its row)
PLATEAU_TOL = 0.05
#: 1/5 against divisible TSF's 8/35 = 0.2286: below half their gap (0.0143)
SHARE_34_TOL = 0.014
LP_TOL = 1e-6
TASKS_TOL = 2
SPEEDUP_TOL = 0.05
#: fig. 7: a mouse is "unaffected" when its completion time moves by at most this much
MICE_TOL = 0.10
#: ... and an elephant "delayed significantly" when it ends at least this much later
ELEPHANT_DELAY = 0.25
#: the DIGEST's reading of fig. 5's 1/5 plateau: 1/5 x 100 + 1/5 x 75 tasks of jobs 3 and 4
DIGEST_34_TASKS = 35
JOBS4 = ("job1", "job2", "job3", "job4")


class Watch(Observer):
    """Reads a run: each job's last task start; every SNAPSHOT_EVERY seconds where its
    running tasks are (per pool of nodes, the servers' ``pool`` attribute); and every
    placement the collector counts as an error (its job was not the lowest share among
    the jobs whose task fitted on the node), with the running tasks just before and just
    after the scheduler's tick that decided it."""

    def __init__(self, scenario: Scenario, units: dict[str, float]) -> None:
        self.pool_of = {s.id: int(s.attribute_map.get("pool", 0)) for s in scenario.servers}
        self.units = units
        self.last_start: dict[str, float] = {}
        self.snapshots: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        #: tick -> {"before", "after"}: (running tasks per job, which jobs have a next task, each node's use)
        self._ticks: dict[int, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}

    def started(self, world) -> None:
        now, start, tick = world.clock.now(), world.start, world.config.tick
        world.clock.call_later(max(0.0, start - now), self._snap, world)
        world.clock.call_later(max(0.0, start + tick - DECISION_LAG - now), self._tick, world, 1, "before")
        world.clock.call_later(max(0.0, start + tick + 1e-6 - now), self._tick, world, 1, "after")

    def _tick(self, world, k: int, when: str) -> None:
        ledger = world.collector.ledger
        self._ticks.setdefault(k, {})[when] = (ledger.tasks.copy(), ledger.tasked(), ledger.used.copy())
        self._ticks.pop(k - 3, None)
        world.clock.call_later(world.config.tick, self._tick, world, k + 1, when)

    def allocated(self, world, allocation) -> None:
        a = allocation
        self.last_start[a.user] = a.time - world.start
        if a.share_before <= a.min_share + 1e-12:
            return
        ledger = world.collector.ledger
        ids = list(ledger.user_ids)
        me, srv = ids.index(a.user), ledger.server_index[a.server]
        unit = np.array([self.units[u] for u in ids])
        elig = ledger.eligibility()[:, srv]
        # the jobs that made it an error at the record: a lower share, a next task, admitted
        # by the node, and fitting in the room the node had before this placement
        room = ledger.capacity[srv] - (ledger.used[srv] - ledger.demand[me])
        fits = ledger.tasked() & elig & np.all(ledger.demand <= room + 1e-9, axis=1)
        now = ledger.tasks.astype(float) / unit
        lower = [ids[i] for i in range(len(ids)) if i != me and fits[i] and now[i] < a.share_before - 1e-12]
        k = int((a.time - world.start) / world.config.tick + 1e-9)  # the tick that decided it
        seen = self._ticks.get(k, {})
        # what the scheduler could know at its tick: each job's running tasks as they were at
        # some instant from DECISION_LAG before it to just after it (a task's end reaches it
        # in 1-5 ms); explained when the job placed, at its lowest then, was not above any
        # job that fitted on the node throughout, at its highest then
        right, lo, hi, fit_any, fit_all = {}, None, None, None, None
        for when, (tasks, tasked, used) in seen.items():
            share = tasks.astype(float) / unit
            fit = tasked & elig & np.all(ledger.demand <= ledger.capacity[srv] - used[srv] + 1e-9, axis=1)
            right[when] = bool(fit[me]) and all(share[i] >= share[me] - 1e-12 for i in range(len(ids)) if fit[i])
            lo = share if lo is None else np.minimum(lo, share)
            hi = share if hi is None else np.maximum(hi, share)
            fit_any = fit if fit_any is None else fit_any | fit
            fit_all = fit if fit_all is None else fit_all & fit
        explained = lo is not None and bool(fit_any[me]) and all(hi[i] >= lo[me] - 1e-12 for i in range(len(ids)) if i != me and fit_all[i])
        self.errors.append({
            "time": round(a.time - world.start, 6), "job": a.user, "node": a.server, "share": a.share_before, "lowest": a.min_share,
            "lower_jobs": lower, "tick": round(k * world.config.tick, 6), "at_tick": {w: seen[w][0].tolist() for w in seen},
            "right_at": right, "explained": explained,
        })

    def _snap(self, world) -> None:
        ledger = world.collector.ledger
        pools = sorted(set(self.pool_of.values()))
        col = np.array([self.pool_of[s] for s in ledger.server_ids])
        per = {u: [int(ledger.placed[i, col == p].sum()) for p in pools] for i, u in enumerate(ledger.user_ids)}
        self.snapshots.append({"time": round(world.clock.now() - world.start, 6), "pools": per})
        world.clock.call_later(SNAPSHOT_EVERY, self._snap, world)


def command(config: str, variant: str, seed: int) -> str:
    policy, options = VARIANTS[variant]
    extra = " --offer-tasks fill" if options.get("offer_tasks") == "fill" else ""
    return f"dgdrf run --scenario {CONFIGS[config]} --policy {policy}{extra} --seed {seed} --sample-every {SAMPLE_EVERY:g} --json out.json"


def units(scenario: Scenario, policy: str) -> dict[str, float]:
    """Per job: what its policy's share is multiplied by to give its running tasks."""
    p = Problem.from_scenario(scenario)
    if policy == "tsf":
        u = tasks_alone(p, constrained=False) * p.weight
    elif policy == "cdrf":
        u = tasks_alone(p, constrained=True) * p.weight
    else:  # drf: the (weighted) global dominant share n_i max_r (d_ir / C_r) / w_i
        u = p.weight / (p.demand / p.total).max(axis=1)
    return dict(zip(p.user_ids, u.tolist(), strict=True))


def emulate(config: str, variant: str, seed: int) -> dict[str, Any]:
    """One run's raw figures. Raises on a run that did not drain cleanly (a bug)."""
    scenario = load_scenario(ROOT / CONFIGS[config])
    policy, options = VARIANTS[variant]
    factor = units(scenario, policy)
    watch = Watch(scenario, factor)
    t0 = time.perf_counter()
    r = run_emulation(scenario, RunConfig(policy=policy, seed=seed, sample_every=SAMPLE_EVERY, **options), observers=[watch])
    wall = time.perf_counter() - t0
    problems = drain_problems(r)
    if problems:
        raise RuntimeError(f"{'; '.join(problems)}: {command(config, variant, seed)}")
    assert r.samples is not None and r.jobs is not None
    h = dict(zip(scenario_ids(scenario), tasks_alone(Problem.from_scenario(scenario), constrained=False).tolist(), strict=True))
    tasks = {}
    for u, series in r.samples["shares"].items():
        n = np.asarray(series) * factor[u]
        assert np.allclose(n, np.round(n), atol=1e-6), f"{u}: {policy} shares x {factor[u]} are not whole tasks"
        tasks[u] = np.round(n).astype(int).tolist()
    return {
        "seed": seed,
        "stop_reason": r.stop_reason,
        "invariant_violations": len(r.invariant_violations),
        "wall_s": wall,  # not written to the JSON (the only figure that differs between identical runs)
        "makespan": r.makespan,
        "allocations": r.allocations,
        "error_ratio": r.error_ratio,
        "h": h,
        "jobs": {j["user"]: {k: j[k] for k in ("arrival", "first_start", "finish", "jct")} | {"last_start": watch.last_start.get(j["user"])} for j in r.jobs},
        "time": r.samples["time"],
        "tasks": tasks,
        "snapshots": watch.snapshots if config == "table2" else None,
        "errors": watch.errors,
    }


def scenario_ids(scenario: Scenario) -> list[str]:
    return [u.id for u in scenario.users]


# -- windows and plateaus ------------------------------------------------------------------------------
def windows(run: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Table II's windows in ``run`` (start, end), in seconds from the start of allocation
    (:func:`window_texts` says each in words)."""
    j = run["jobs"]
    return {
        "alone": ALONE,
        "jobs12": (j["job2"]["arrival"] + JOB1_LONGEST, j["job2"]["last_start"]),
        "job1_after_job2": (j["job2"]["finish"] + 1.0, j["job3"]["arrival"] - 1.0),
        "jobs134": (j["job3"]["arrival"] + JOB1_LONGEST, min(j["job3"]["last_start"], j["job4"]["last_start"])),
        "jobs14": (j["job3"]["finish"] + 1.0, j["job4"]["last_start"]),
    }


def in_window(times: Sequence[float], lo: float, hi: float) -> np.ndarray:
    t = np.asarray(times)
    return (t >= lo) & (t <= hi)


def share_series(run: dict[str, Any], job: str) -> np.ndarray:
    return np.asarray(run["tasks"][job], dtype=float) / run["h"][job]


def plateau(runs: list[dict[str, Any]], window: str, job: str, tasks: bool = False) -> dict[str, Any]:
    """Mean task share (or running tasks) of ``job`` over ``window`` in each run, and over
    all: per-seed means, the pooled mean, the samples' range."""
    per, samples = [], []
    for run in runs:
        lo, hi = windows(run)[window]
        mask = in_window(run["time"], lo, hi)
        x = np.asarray(run["tasks"][job], dtype=float) if tasks else share_series(run, job)
        x = x[mask]
        if x.size:
            per.append(float(x.mean()))
            samples.extend(x.tolist())
    if not samples:
        return {"mean": math.nan, "seeds": [], "min": math.nan, "max": math.nan, "samples": 0}
    return {"mean": float(np.mean(samples)), "seeds": per, "min": float(min(samples)), "max": float(max(samples)), "samples": len(samples)}


def window_spans(runs: list[dict[str, Any]], window: str) -> str:
    spans = [windows(r)[window] for r in runs]
    return ", ".join(f"{lo:.0f}-{hi:.0f}" for lo, hi in spans)


def pools_in(runs: list[dict[str, Any]], window: str, job: str) -> list[float]:
    """Mean running tasks of ``job`` in each pool (1: nodes 1-10, 2: 11-25, 3: 26-35,
    4: 36-50) over the snapshots in ``window``, over the runs."""
    rows = []
    for run in runs:
        lo, hi = windows(run)[window]
        rows += [s["pools"][job] for s in run["snapshots"] if lo <= s["time"] <= hi]
    return np.mean(np.array(rows, dtype=float), axis=0).tolist() if rows else []


def held(run: dict[str, Any], job: str) -> float:
    """Mean running tasks of ``job`` from its first task start to its last (while it had
    tasks pending and had started)."""
    j = run["jobs"][job]
    mask = in_window(run["time"], j["first_start"], j["last_start"])
    x = np.asarray(run["tasks"][job], dtype=float)[mask]
    return float(x.mean()) if x.size else math.nan


# -- collecting ----------------------------------------------------------------------------------------
def collect(seeds: Iterable[int], log=print) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every scenario under every variant and seed."""
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for config in CONFIGS:
        runs[config] = {}
        for variant in VARIANTS:
            runs[config][variant] = []
            for seed in seeds:
                run = emulate(config, variant, seed)
                log(f"{config:22s} {variant:9s} seed {seed}: drained at {run['makespan']:8.1f} s, {run['allocations']} tasks, {run['wall_s']:.2f} s wall")
                runs[config][variant].append(run)
    return runs


def jct(runs: list[dict[str, Any]], job: str) -> list[float]:
    return [r["jobs"][job]["jct"] for r in runs]


def summarise(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """The page's figures, from the raw runs."""
    t2 = runs["table2"]
    names = ("alone", "jobs12", "job1_after_job2", "jobs134", "jobs14")
    out: dict[str, Any] = {"table2": {}, "fig6": {}, "fig7": {}}
    for variant, rs in t2.items():
        v: dict[str, Any] = {"windows": {w: [list(windows(r)[w]) for r in rs] for w in names}}
        v["plateaus"] = {w: {j: plateau(rs, w, j) for j in JOBS4} for w in names}
        v["tasks_34"] = plateau_sum(rs, "jobs134", ("job3", "job4"))
        v["pools_jobs134"] = {j: pools_in(rs, "jobs134", j) for j in ("job1", "job3", "job4")}
        v["error_ratio"] = [r["error_ratio"] for r in rs]
        v["errors"] = [r["errors"] for r in rs]
        v["allocations"] = [r["allocations"] for r in rs]
        v["jct"] = {j: jct(rs, j) for j in JOBS4}
        v["finish"] = {j: [r["jobs"][j]["finish"] for r in rs] for j in JOBS4}
        v["last_start"] = {j: [r["jobs"][j]["last_start"] for r in rs] for j in JOBS4}
        out["table2"][variant] = v
    for variant in VARIANTS:
        f6: dict[str, Any] = {}
        for config in ("fig6-static", "fig6-shared", "fig6-shared-weighted"):
            rs = runs[config][variant]
            f6[config] = {j: {"jct": jct(rs, j), "held": [held(r, j) for r in rs]} for j in JOBS4}
        for config in ("fig6-shared", "fig6-shared-weighted"):
            f6[f"{config} speedup"] = {
                j: [1 - a / b for a, b in zip(f6[config][j]["jct"], f6["fig6-static"][j]["jct"], strict=True)] for j in JOBS4
            }
        out["fig6"][variant] = f6
        f7: dict[str, Any] = {}
        for config in ("fig7-alone", "fig7-congested"):
            rs = runs[config][variant]
            f7[config] = {j: {"jct": jct(rs, j), "held": [held(r, j) for r in rs], "first_start": [r["jobs"][j]["first_start"] for r in rs],
                              "last_start": [r["jobs"][j]["last_start"] for r in rs]} for j in rs[0]["jobs"]}
        f7["slowdown"] = {
            j: [b / a - 1 for a, b in zip(f7["fig7-alone"][j]["jct"], f7["fig7-congested"][j]["jct"], strict=True)] for j in f7["fig7-alone"]
        }
        out["fig7"][variant] = f7
    out["errors"] = {
        config: {v: {"errors": [len(r["errors"]) for r in rs], "unexplained": [sum(1 for x in r["errors"] if not x["explained"]) for r in rs]} for v, rs in by.items()}
        for config, by in runs.items()
    }
    return out


def plateau_sum(runs: list[dict[str, Any]], window: str, jobs: Sequence[str]) -> dict[str, Any]:
    """Running tasks of ``jobs`` together over ``window``: pooled mean, per seed, range."""
    per, samples = [], []
    for run in runs:
        lo, hi = windows(run)[window]
        mask = in_window(run["time"], lo, hi)
        x = sum(np.asarray(run["tasks"][j], dtype=float) for j in jobs)[mask]
        per.append(float(x.mean()))
        samples.extend(x.tolist())
    return {"mean": float(np.mean(samples)), "seeds": per, "min": float(min(samples)), "max": float(max(samples)), "samples": len(samples)}


def spans(ids: Sequence[int]) -> str:
    """1, 2, 3, 7, 8 -> "1-3, 7-8"."""
    out: list[list[int]] = []
    for k in ids:
        if out and k == out[-1][1] + 1:
            out[-1][1] = k
        else:
            out.append([k, k])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in out)


def scenario_info(config: str) -> dict[str, Any]:
    """What the page reads of a scenario: per job h_i, M_i, weight, tasks, arrival, demand,
    runtime range and its nodes (numbers in node order); each policy's share unit; the
    cluster's capacities and pools, as node ranges."""
    scenario = load_scenario(ROOT / CONFIGS[config])
    p = Problem.from_scenario(scenario)
    jobs = {}
    for i, u in enumerate(scenario.users):
        job = u.job_list[0]
        d = dict(job.duration.params) if job.duration is not None else {}
        jobs[u.id] = {"tasks": job.tasks, "arrival": job.arrival, "demand": list(job.demand), "runtime": [d.get("min"), d.get("max")],
                      "nodes": spans([k + 1 for k in np.flatnonzero(p.eligible[i])])}
    caps: dict[str, list[int]] = {}
    pools: dict[str, list[int]] = {}
    for k, srv in enumerate(scenario.servers, 1):
        caps.setdefault(" ".join(f"{c:g}" for c in srv.capacity), []).append(k)
        pools.setdefault(str(srv.attribute_map.get("pool", 0)), []).append(k)
    return {
        "h": dict(zip(p.user_ids, tasks_alone(p, constrained=False).tolist(), strict=True)),
        "M": dict(zip(p.user_ids, tasks_alone(p, constrained=True).tolist(), strict=True)),
        "weight": dict(zip(p.user_ids, p.weight.tolist(), strict=True)),
        "units": {policy: units(scenario, policy) for policy in ("tsf", "drf", "cdrf")},
        "jobs": jobs,
        "nodes": len(scenario.servers),
        "resources": list(scenario.resources),
        "capacity": {c: spans(ks) for c, ks in caps.items()},
        "pools": {k: spans(v) for k, v in sorted(pools.items())},
    }


def subset(p: Problem, ids: Sequence[str]) -> Problem:
    idx = [p.user_ids.index(u) for u in ids]
    return replace(p, user_ids=tuple(ids), demand=p.demand[idx], eligible=p.eligible[idx], weight=p.weight[idx])


#: fig. 5's plateaus and the jobs present in each
PRESENT = {"jobs12": ("job1", "job2"), "jobs134": ("job1", "job3", "job4"), "jobs14": ("job1", "job4")}


def offline() -> dict[str, Any]:
    """Progressive filling by LP (divisible tasks): each plateau's jobs alone on Table II's
    cluster (TSF and constrained CDRF, tasks per job), and fig. 6's four jobs under
    Theorem 1's weights (TSF)."""
    p = Problem.from_scenario(load_scenario(ROOT / CONFIGS["table2"]))
    out: dict[str, Any] = {w: {n: progressive_filling_lp(subset(p, ids), n).display_tasks() for n in ("tsf", "cdrf")} for w, ids in PRESENT.items()}
    out["fig6-shared-weighted"] = progressive_filling_lp(Problem.from_scenario(load_scenario(ROOT / CONFIGS["fig6-shared-weighted"])), "tsf").display_tasks()
    return out


# -- formats -------------------------------------------------------------------------------------------
def f3(x: float) -> str:
    return f"{x:.3f}"


def spread(p: dict[str, Any], digits: int = 3) -> str:
    seeds = p["seeds"]
    return f"{p['mean']:.{digits}f} (seeds {min(seeds):.{digits}f}-{max(seeds):.{digits}f}; samples {p['min']:.{digits}f}-{p['max']:.{digits}f})"


def mean(xs: Sequence[float]) -> float:
    return float(np.mean(xs))


def rng(xs: Sequence[float], pct: bool = False, digits: int = 0) -> str:
    if pct:
        return f"{100 * mean(xs):+.{digits}f} % ({100 * min(xs):+.{digits}f} to {100 * max(xs):+.{digits}f})"
    return f"{mean(xs):.{digits}f} s ({min(xs):.{digits}f}-{max(xs):.{digits}f})"


def frac(x: float, limit: int = 100) -> str:
    f = Fraction(x).limit_denominator(limit)
    return f"{f.numerator}" if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def slash(d: dict[str, float], keys: Iterable[str] | None = None) -> str:
    return " / ".join(f"{d[k]:g}" for k in (keys or d))


def label(w: str) -> str:
    return {"alone": "job 1 alone", "jobs12": "jobs 1, 2", "job1_after_job2": "job 1 alone again", "jobs134": "jobs 1, 3, 4", "jobs14": "jobs 1, 4"}[w]


def window_spans_text(v: dict[str, Any], w: str) -> str:
    return ", ".join(f"{lo:.0f}-{hi:.0f}" for lo, hi in v["windows"][w])


def window_texts(raw: dict[str, Any]) -> dict[str, str]:
    """Each window in words, with the scenario's figures it is made of."""
    sc = raw["scenarios"]["table2"]
    j = sc["jobs"]
    lo, hi = raw["summary"]["table2"]["tsf"]["windows"]["alone"][0]
    j1min, j1max = j["job1"]["runtime"]
    a2, a3 = j["job2"]["arrival"], j["job3"]["arrival"]
    return {
        "alone": f"{lo:g} s (job 1's {sc['h']['job1']:g} tasks placed, one a {raw['tick']:g} s tick) to {hi:g} s (before job 1's shortest task, "
                 f"{j1min:g} s, ends: until then job 2 cannot start)",
        "jobs12": f"job 2's arrival + job 1's longest task ({a2:g} + {j1max:g} s: every job-1 task that held job 2's nodes {j['job2']['nodes']} when job 2 "
                  "arrived has ended) to job 2's last task start (its queue empties)",
        "job1_after_job2": f"job 2's last task end + 1 s to 1 s before jobs 3 and 4 arrive ({a3:g} s)",
        "jobs134": f"jobs 3 and 4's arrival + job 1's longest task ({a3:g} + {j1max:g} s) to the first of jobs 3 and 4's last task starts (while all three "
                   "have tasks pending)",
        "jobs14": "job 3's last task end + 1 s to job 4's last task start",
    }


# -- the relations -------------------------------------------------------------------------------------
def all_at_least(x: float) -> Callable[[Sequence[float]], bool]:
    return lambda xs: min(xs) >= x


def h_row(raw: dict[str, Any]) -> Relation:
    sc = raw["scenarios"]["table2"]
    return Relation(
        "Table II", "h_i: the maximum number of tasks a job can run when monopolizing the cluster without constraints", slash(PAPER_H),
        slash(sc["h"], PAPER_H), "exact (whole tasks)", measured=sc["h"], judge=lambda h: all(h[j] == PAPER_H[j] for j in PAPER_H),
        alternative=Alternative(f"the tasks alone with constraints kept (CDRF's M_i): {slash(sc['M'], PAPER_H)}", sc["M"]),
        why="per node, whole tasks (floor), summed",
    )


def offline_rows(raw: dict[str, Any]) -> list[Relation]:
    sc = raw["scenarios"]["table2"]
    h, M, lp = sc["h"], sc["M"], raw["offline"]
    rows = []
    for w in ("jobs12", "jobs134"):
        for job, (target, printed, words) in PAPER_PLATEAUS[w].items():
            tsf, cdrf = lp[w]["tsf"][job], lp[w]["cdrf"][job]
            x = tsf / h[job]
            if w == "jobs12":
                alt = Alternative(f"constrained CDRF's {cdrf / h[job]:.3f} ({cdrf:g} tasks; offline LP)", cdrf / h[job])
                why = "the paper's \"ideally, with TSF\": the divisible allocation of the two jobs"
            elif job == "job1":
                alt = Alternative(f"the paper's '2 x 30' read literally: 2 tasks on each of the other 30 nodes, {60 / h[job]:.3f}", 60 / h[job])
                why = f"{tsf:g} of h = {h[job]:g} tasks; the paper's '2 x 30 / 100' is a typo for {tsf:g}/{h[job]:g} (DIGEST 1c)"
            else:
                alt = Alternative(f"divisible TSF's {frac(x)} = {x:.4f} (DIGEST 1c), which this LP gives", x)
                why = (f"the paper's 1/5 is its online run's (\"our TSF scheduler lets them...\"). Divisible, jobs 3 and 4 fill the "
                       f"{M['job3']:g} half-GB slots of their {sc['jobs']['job3']['nodes']} nodes together at equal task shares: {M['job3']:g} / "
                       f"({h['job3']:g} + {h['job4']:g}) = {frac(M['job3'] / (h['job3'] + h['job4']))} ({lp[w]['tsf']['job3']:.1f} + {lp[w]['tsf']['job4']:.1f} tasks)")
            rows.append(Relation(f"fig. 5 ({label(w)})", words, printed, f"{x:.4f} ({tsf:g} tasks)", f"± {LP_TOL:g}", measured=x, judge=near(target, LP_TOL),
                                 alternative=alt, why=why))
    tsf14 = lp["jobs14"]["tsf"]
    rows.append(Relation(
        "fig. 5 (jobs 1, 4)", "(ours, read with jobs 3 and 4 exchanged: see the online tables) once job 3 has gone, job 4 takes what its nodes hold",
        f"M_4 / h_4 = {M['job4']:g}/{h['job4']:g} (derived)", f"{tsf14['job4'] / h['job4']:.4f} ({tsf14['job4']:g} tasks)", f"± {LP_TOL:g}",
        measured=tsf14["job4"] / h["job4"], judge=near(M["job4"] / h["job4"], LP_TOL),
        alternative=Alternative("job 4 kept at the paper's 1/5", 0.2), printed=False, why="offline LP",
    ))
    return rows


def fig5_rows(raw: dict[str, Any], v: str) -> list[Relation]:
    s, sc = raw["summary"], raw["scenarios"]["table2"]
    h, M, pools = sc["h"], sc["M"], sc["pools"]
    t2 = s["table2"][v]
    texts = window_texts(raw)
    lp = raw["offline"]
    div34 = lp["jobs134"]["tsf"]["job3"] / h["job3"]
    rows = []
    for w, jobs in PAPER_PLATEAUS.items():
        for job, (target, printed, words) in jobs.items():
            a = t2["plateaus"][w][job]
            tol = PLATEAU_TOL
            why = f"window {texts[w]}: {window_spans_text(t2, w)} s in the {len(a['seeds'])} runs"
            if w == "alone":
                alt = Alternative(f"one task on each of the {sc['nodes']} nodes (each offered once): {sc['nodes']}/{h[job]:g} = {sc['nodes'] / h[job]:.3f}", sc["nodes"] / h[job])
            elif w == "jobs12":
                c = s["table2"]["cdrf"]["plateaus"][w][job]["mean"]
                alt = Alternative(f"cdrf offers' {c:.3f} (job slowdowns ranked; measured on the same scenario)", c)
                if job == "job2" and a["min"] < target:
                    why += f"; the samples dip below {target * h[job]:g} tasks when a task of job 2 ends between its replacement's placement ticks"
            elif w == "job1_after_job2":
                k = t2["plateaus"]["jobs12"][job]["mean"]
                alt = Alternative(f"job 1 held at its jobs-1-2 plateau (freed nodes not offered back): {k:.3f}", k)
            elif job == "job1":
                alt = Alternative(f"the paper's '2 x 30' read literally: 2 tasks on each of the other 30 nodes, {60 / h[job]:.3f}", 60 / h[job])
                p = t2["pools_jobs134"]["job1"]
                why += (f"; job 1 holds {p[1]:.1f} tasks on nodes {pools['2']} and {p[3]:.1f} on {pools['4']} ({p[0]:.1f} and {p[2]:.1f} on {pools['1']} and "
                        f"{pools['3']}), {sum(p):.1f}/{h[job]:g} in all (snapshots every {SNAPSHOT_EVERY:g} s); the paper's '2 x 30 / 100' is a typo (DIGEST 1c)")
            else:
                tol = SHARE_34_TOL
                alt = Alternative(f"divisible TSF's {frac(div34)} = {div34:.4f} (offline LP)", div34)
                why += f"; ± {tol:g}: 1/5 and {frac(div34)} are {div34 - target:.4f} apart. Per seed: " + ", ".join(f"{x:.3f}" for x in a["seeds"])
            rows.append(Relation(f"fig. 5 ({label(w)})", words, printed, spread(a), f"± {tol:g} of task share", measured=a["mean"], judge=near(target, tol),
                                 alternative=alt, why=why))
    # the relinquished resources
    if v == "tsf":
        bad = sum(s["errors"]["table2"][v]["unexplained"])
        ff = sum(s["errors"]["table2"]["drf"]["errors"])
        rows.append(Relation(
            "fig. 5", "the TSF scheduler keeps track of the task share of each job and offers resources in an ascending order of the task share",
            "every offer", f"placements the collector counts as not to the lowest task share among the jobs that fit on the node: {errors(t2)}",
            "none that the state at its decision does not explain", measured=bad, judge=lambda n: n == 0,
            alternative=Alternative(f"user-driven first fit (drf), which picks the job before the node: {ff} placements not to the lowest share", ff),
            why=f"the collector judges a placement when the node starts it, a few messages after the scheduler's tick decided it, on the state then; a "
                f"placement is explained when, on what the scheduler could know at its tick (each job's running tasks as at some instant from "
                f"{raw['decision_lag'] * 1000:g} ms before the tick to just after it), its job was not above any job whose next task fitted on the node."
                + (f" E.g. {example(t2, True)}: a task of the lower job ended between the decision and the record." if example(t2, True) else ""),
        ))
    else:
        rows.append(Relation(
            "fig. 5", "the TSF scheduler keeps track of the task share of each job and offers resources in an ascending order of the task share",
            "every offer", f"placements the collector counts as not to the lowest task share: {errors(t2)}", "—",
            why="not comparable under fill: the job an offer went to keeps it while its next task fits, whatever the others' shares (as in Mesos, where "
                "\"the remaining resources\" go to the next job only once the first has launched its tasks); the collector's test is one placement's, not one offer's"
                + (f". E.g. {example(t2, False)}" if example(t2, False) else ""),
        ))
    # after the plateau
    ls = t2["last_start"]
    pairs = [[a, b] for a, b in zip(ls["job3"], ls["job4"], strict=True)]
    j3, j4 = sc["jobs"]["job3"], sc["jobs"]["job4"]
    n3, n4 = t2["plateaus"]["jobs134"]["job3"]["mean"] * h["job3"], t2["plateaus"]["jobs134"]["job4"]["mean"] * h["job4"]
    rows.append(Relation(
        "fig. 5 (after the plateau)", "the allocation maintains until job 4 starts to complete, and the relinquished resources are offered to job 3, the lowest task share",
        "job 4's queue empties first", "last task starts, job 3 / job 4: " + ", ".join(f"{a:.0f} / {b:.0f} s" for a, b in pairs),
        "job 4 first in every run", measured=pairs, judge=lambda ps: all(b < a for a, b in ps),
        alternative=Alternative("jobs 3 and 4 exchanged (job 3's queue empties first)", [[0.0, 1.0]]),
        why=f"Table II gives job 4 {j4['tasks']} tasks of {mean(j4['runtime']):g} s on about {n4:.0f} slots at the plateau and job 3 {j3['tasks']} of "
            f"{mean(j3['runtime']):g} s on about {n3:.0f}: {j4['tasks'] * mean(j4['runtime']) / n4:.0f} s of work a slot against "
            f"{j3['tasks'] * mean(j3['runtime']) / n3:.0f}, so job 3's queue empties first. Read with jobs 3 and 4 exchanged: next row",
    ))
    j14 = t2["plateaus"]["jobs14"]
    f3t, f4t = mean(t2["finish"]["job3"]), mean(t2["finish"]["job4"])
    rows.append(Relation(
        "fig. 5 (after the plateau)", "(ours: jobs 3 and 4 exchanged) job 3 completes and its resources go to job 4, which then holds all its nodes hold",
        f"M_4 / h_4 = {M['job4']:g}/{h['job4']:g} = {M['job4'] / h['job4']:.3f} (derived)",
        f"job 4 {spread(j14['job4'])}; job 1 {f3(j14['job1']['mean'])}", f"± {PLATEAU_TOL:g} of task share", measured=j14["job4"]["mean"],
        judge=near(M["job4"] / h["job4"], PLATEAU_TOL), alternative=Alternative("job 4 kept at its 1/5", 0.2), printed=False,
        why=f"{SHORT[v]}: window {texts['jobs14']} ({window_spans_text(t2, 'jobs14')} s); job 3 ends at {f3t:.0f} s and job 4 at {f4t:.0f} s (means)",
    ))
    # jobs 3 and 4's tasks
    n34 = t2["tasks_34"]
    p = t2["pools_jobs134"]
    div_tasks = lp["jobs134"]["tsf"]["job3"] + lp["jobs134"]["tsf"]["job4"]
    small4 = p["job4"][0]
    rt4 = sc["jobs"]["job4"]["runtime"]
    rows.append(Relation(
        "fig. 5 (jobs 1, 3, 4)", f"(DIGEST 1c's reading of the 1/5 plateau) jobs 3 and 4 together: {h['job3'] / 5:g} + {h['job4'] / 5:g} tasks",
        f"{DIGEST_34_TASKS} tasks (derived)", f"{spread(n34, 1)} tasks", f"± {TASKS_TOL} tasks", measured=n34["mean"], judge=near(DIGEST_34_TASKS, TASKS_TOL),
        alternative=Alternative(f"divisible TSF's {div_tasks:.0f} tasks (offline LP)", div_tasks), printed=False,
        why=f"{SHORT[v]}: where they run (mean tasks on nodes {pools['1']} / {pools['3']}): job 3 {p['job3'][0]:.1f} / {p['job3'][2]:.1f}, job 4 "
            f"{small4:.1f} / {p['job4'][2]:.1f}. A job-4 task on nodes {pools['1']} takes the node's only core and strands its other half GB, so each "
            f"costs a slot: {M['job3']:g} half-GB slots - {small4:.1f} = {M['job3'] - small4:.1f} at most. Divisible TSF's {frac(div34)} needs every job-4 task "
            f"on nodes {pools['3']} ({lp['jobs134']['tsf']['job4']:.1f} there) and job 3 alone on {pools['1']}; online, tasks are indivisible and never "
            f"preempted, and a freed node {pools['1']} goes to the lower task share of the two: job 4 gets it when it is behind, then holds it for "
            f"{rt4[0]:g}-{rt4[1]:g} s. The DIGEST's {DIGEST_34_TASKS} fits the same effect ({h['job4'] / 5:g} job-4 tasks, "
            f"{M['job3'] - DIGEST_34_TASKS:g} of them on small nodes, leave {DIGEST_34_TASKS} slots)",
    ))
    return rows


def errors(v: dict[str, Any]) -> str:
    counts = " / ".join(str(len(e)) for e in v["errors"])
    bad = " / ".join(str(sum(1 for x in e if not x["explained"])) for e in v["errors"])
    return f"{counts} of {v['allocations'][0]} placements (seeds 1-{len(v['errors'])}), of which not explained {bad}"


def example(v: dict[str, Any], explained: bool) -> str:
    for seed, e in enumerate(v["errors"], 1):
        for x in e:
            if x["explained"] == explained:
                at = "; ".join(f"{w} it: " + ", ".join(f"{j} {n}" for j, n in zip(PAPER_H, t, strict=True)) for w, t in x["at_tick"].items())
                return (f"seed {seed}, {x['time']:.3f} s: {x['job']} (task share {x['share']:.3f}) placed on {x['node']} while {', '.join(x['lower_jobs'])} had "
                        f"{x['lowest']:.3f}; running tasks at the deciding tick, {x['tick']:g} s ({at})")
    return ""


def fig6_rows(raw: dict[str, Any], v: str) -> list[Relation]:
    s = raw["summary"]
    f = s["fig6"][v]
    pool = raw["scenarios"]["fig6-static"]["M"]
    weights = raw["scenarios"]["fig6-shared-weighted"]["weight"]
    lp = raw["offline"]["fig6-shared-weighted"]
    sp = f["fig6-shared speedup"]
    best = max(JOBS4, key=lambda j: mean(sp[j]))
    held_static = {j: mean(f["fig6-static"][j]["held"]) for j in JOBS4}
    rows = [Relation(
        "fig. 6", "TSF speeds up job completion by up to 22 % over static partitioning", "up to 22 %",
        f"up to {100 * mean(sp[best]):.0f} % ({best}); per job, mean over seeds (range): " + "; ".join(f"{j} {rng(sp[j], pct=True)}" for j in JOBS4),
        f"± {100 * SPEEDUP_TOL:.0f} points on the largest", measured=mean(sp[best]), judge=near(PAPER_FIG6_SPEEDUP, SPEEDUP_TOL),
        alternative=Alternative("TSF no faster than static partitioning (0 %)", 0.0),
        why=f"readings (the paper gives neither start times nor task counts for fig. 6): Table II's jobs, all starting at 0 s, equal weights. {best} holds "
            f"{held_static[best]:.1f} tasks on average in its pool ({pool[best]:g} slots) and {mean(f['fig6-shared'][best]['held']):.1f} shared, and its "
            f"{raw['scenarios']['fig6-shared']['jobs'][best]['tasks']} tasks run mostly after the others have ended: it must gain far more than 22 % with these task counts",
    )]
    for config, weighting, printed in (("fig6-shared", "equal weights", True), ("fig6-shared-weighted", "Theorem 1's weights k_i / h_i", False)):
        sp = f[f"{config} speedup"]
        slower = [j for j in JOBS4 if mean(sp[j]) < 0]
        held_shared = {j: mean(f[config][j]["held"]) for j in JOBS4}
        why = (f"{', '.join(slower)} slower. " if slower else "") + "Mean tasks held while running, static → shared: " + ", ".join(
            f"{j} {held_static[j]:.1f} → {held_shared[j]:.1f}" for j in JOBS4)
        if "job2" in slower and config == "fig6-shared":
            why += (f". Job 2's pool gives it {pool['job2']:g} slots from 0 s; shared, its nodes ({raw['scenarios'][config]['jobs']['job2']['nodes']}) are "
                    f"job 1's too (and jobs 3 and 4's), and equal task shares promise no job its pool (Theorem 1 needs w_i = k_i / h_i)")
        elif "job2" in slower:
            why += (f". With Theorem 1's weights ({slash(weights)}), divisible TSF gives each job {slash(lp)} tasks while all four compete (its pool's "
                    f"{slash(pool)}): the guarantee is 'no less', with nothing to spare until one ends, and online, without preemption, tasks placed "
                    f"before job 2 has its {pool['job2']:g} hold their nodes until they end")
        rows.append(Relation(
            "fig. 6 (Thm 1)" if printed else "fig. 6 (Thm 1, our reading)",
            "with TSF, jobs are allocated more resources and finish faster than in dedicated resource pools" + ("" if printed else f" ({weighting})"),
            "every job faster" + ("" if printed else " (reading)"),
            "; ".join(f"{j} {rng(f['fig6-static'][j]['jct'])} → {rng(f[config][j]['jct'])}" for j in JOBS4),
            "qualitative: no job's mean JCT later", measured=[mean(sp[j]) for j in JOBS4], judge=all_at_least(0.0),
            alternative=Alternative("a job 1 % slower shared than in its pool", [-0.01]), printed=printed,
            why=("" if printed else f"{SHORT[v]}; the paper names no weights for fig. 6. ") + why,
        ))
    return rows


def fig7_rows(raw: dict[str, Any], v: str) -> list[Relation]:
    f = raw["summary"]["fig7"][v]
    sc_a, sc_c = raw["scenarios"]["fig7-alone"], raw["scenarios"]["fig7-congested"]
    sl = f["slowdown"]
    elephants = [j for j in sc_c["jobs"] if j.startswith("elephant")]
    shortest = min(elephants, key=lambda j: mean(sc_c["jobs"][j]["runtime"]))
    wait = mean(sc_c["jobs"][shortest]["runtime"])
    m2a, m2c = f["fig7-alone"]["mouse2"], f["fig7-congested"]["mouse2"]
    start_delay = mean(m2c["last_start"]) - mean(m2a["last_start"])
    rows = []
    for mouse in ("mouse1", "mouse2"):
        a, b = f["fig7-alone"][mouse], f["fig7-congested"][mouse]
        alone = mean(a["jct"])
        why = (f"± {100 * MICE_TOL:.0f} %, over 5 points: one placement a {raw['tick']:g} s tick among {len(sc_c['jobs'])} jobs delays mouse 2's last task "
               f"start by {start_delay:.1f} s ({100 * start_delay / mean(m2a['jct']):.0f} % of its JCT alone). "
               f"Mean tasks held while running: {mean(a['held']):.1f} alone → {mean(b['held']):.1f} congested")
        if mouse == "mouse1":
            m = sc_a["jobs"][mouse]
            why += (f". Mouse 1's nodes ({m['nodes']}) hold {sc_a['M'][mouse]:g} of its tasks (task share {sc_a['M'][mouse] / sc_a['h'][mouse]:g}: "
                    f"h = {sc_a['h'][mouse]:g} counts the whole cluster, constraints removed); TSF equalises task shares, and with "
                    f"{len(elephants)} elephants the common task share falls below that, so mouse 1 gets fewer slots. Readings (demands, runtimes, "
                    "start times) in configs/wang-fig7-alone.toml")
        else:
            why += (f". Its {sc_a['jobs'][mouse]['tasks']} tasks start by {mean(a['last_start']):.1f} s alone and {mean(b['last_start']):.1f} s congested: "
                    "the delay is that of its start")
        rows.append(Relation(
            "fig. 7", f"the two mice have not been affected at all by four more elephants: {mouse.replace('mouse', 'mouse ')}", "unaffected",
            f"{rng(a['jct'])} → {rng(b['jct'])}: {rng(sl[mouse], pct=True)}", f"± {100 * MICE_TOL:.0f} % of its JCT alone", measured=mean(sl[mouse]),
            judge=near(0.0, MICE_TOL),
            alternative=Alternative(f"held back by one elephant task ({shortest}'s mean, {wait:g} s): +{100 * wait / alone:.0f} %", wait / alone), why=why,
        ))
    els = [j for j in sl if j.startswith("elephant")]
    rows.append(Relation(
        "fig. 7", "injecting more workload delays the completion of the two elephants significantly", "delayed",
        "; ".join(f"{j.replace('elephant', 'elephant ')} {rng(f['fig7-alone'][j]['jct'])} → {rng(f['fig7-congested'][j]['jct'])} ({rng(sl[j], pct=True)})" for j in els),
        f"qualitative: later by ≥ {100 * ELEPHANT_DELAY:.0f} %", measured=[mean(sl[j]) for j in els], judge=all_at_least(ELEPHANT_DELAY),
        alternative=Alternative(f"delayed no more than a mouse may be (+{100 * MICE_TOL:.0f} %)", [MICE_TOL] * len(els)),
        why=f"significantly: {100 * ELEPHANT_DELAY:.0f} %, beyond the ± {100 * MICE_TOL:.0f} % within which a mouse counts as unaffected",
    ))
    return rows


def tables(raw: dict[str, Any]) -> list[Table]:
    """Every relation, from the raw figures: the scenario's h_i, fig. 5 offline, and
    figs. 5-7 under each online mechanism checked."""
    return [Table(SCENARIO, [h_row(raw)]), Table(OFFLINE, offline_rows(raw))] + [
        Table(MECHANISM[v], fig5_rows(raw, v) + fig6_rows(raw, v) + fig7_rows(raw, v)) for v in CHECKED
    ]


# -- the page ------------------------------------------------------------------------------------------
def notes(raw: dict[str, Any]) -> str:
    s, sc = raw["summary"], raw["scenarios"]["table2"]
    t2 = s["table2"]
    unit = sc["units"]
    same = all(math.isclose(unit["drf"][j], unit["tsf"][j]) for j in JOBS4)
    lines = [
        "## Fig. 5 plateaus under every policy", "",
        "Task share n_i / h_i, mean over the window's samples and the seeds (every policy measured by the same task share: drf's dominant shares and "
        "cdrf's job slowdowns are turned into running tasks). "
        + (f"In this scenario each job's h_i ({slash(unit['tsf'])}) is also its dominant-share unit ({slash(unit['drf'])}), so drf's dominant shares "
           "*are* task shares, and jobs that arrive at a full cluster receive the nodes that free up. " if same else
           f"drf's dominant-share units are {slash(unit['drf'])} against h_i = {slash(unit['tsf'])}. ")
        + f"cdrf ranks by n_i / M_i (M = {slash(sc['M'])}: constraints kept). The offline column is progressive filling on the jobs present (divisible).", "",
        "| window | job | paper | offline LP | " + " | ".join(VARIANTS) + " |", "|---|---|---|---|" + "---|" * len(VARIANTS),
    ]
    for w, jobs in PAPER_PLATEAUS.items():
        for j, (target, _, _) in jobs.items():
            off = f3(raw["offline"][w]["tsf"][j] / sc["h"][j]) if w in raw["offline"] else "-"
            lines.append(f"| {label(w)} | {j} | {f3(target)} | {off} | " + " | ".join(f3(t2[v]["plateaus"][w][j]["mean"]) for v in VARIANTS) + " |")
    off34 = raw["offline"]["jobs134"]["tsf"]["job3"] + raw["offline"]["jobs134"]["tsf"]["job4"]
    lines.append(f"| jobs 1, 3, 4 | jobs 3 + 4 (tasks) | {DIGEST_34_TASKS} (DIGEST) | {off34:.1f} | " + " | ".join(f"{t2[v]['tasks_34']['mean']:.1f}" for v in VARIANTS) + " |")
    lines.append(f"| jobs 1, 4 | job4 | - | {f3(raw['offline']['jobs14']['tsf']['job4'] / sc['h']['job4'])} | "
                 + " | ".join(f3(t2[v]["plateaus"]["jobs14"]["job4"]["mean"]) for v in VARIANTS) + " |")
    lines += ["", "Job completion times (s), mean over seeds:", "", "| job | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]
    for j in JOBS4:
        lines.append(f"| {j} | " + " | ".join(f"{mean(t2[v]['jct'][j]):.1f}" for v in VARIANTS) + " |")
    lines += ["", "Placements the collector counts as errors (not to the lowest share, under each policy's own notion, among the jobs whose next task fitted on "
              "the node; drf: anywhere), per seed, and in brackets those that what the scheduler could know at the deciding tick does not explain (see the relation above):", "",
              "| scenario | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]
    for config, by in s["errors"].items():
        lines.append(f"| {config} | " + " | ".join(" / ".join(map(str, by[v]["errors"])) + ("" if VARIANTS[v][0] == "drf" else f" ({' / '.join(map(str, by[v]['unexplained']))})") for v in VARIANTS) + " |")
    lines += ["", "Under drf a placement is judged against every job whose task fits anywhere (drf picks the job first, then the first node that fits; "
              "no bracket: the test above is an offer's); under fill, a job keeps its offer (not an error of the scheduler). Every placement counted is in the "
              "JSON's `errors` (time, job, node, its share, the lowest, the jobs lower, the deciding tick, explained)."]
    lines += ["", "Windows (seconds from the start of allocation; each run's own):", ""]
    lines += [f"- {label(w)}: {text}" for w, text in window_texts(raw).items()]
    lines += ["", "## Fig. 6: job completion times (s), mean over seeds", "",
              "| job | static pools | " + " | ".join(f"shared, {v}" for v in VARIANTS) + " | " + " | ".join(f"k/h weights, {v}" for v in VARIANTS) + " |",
              "|---|---|" + "---|" * (2 * len(VARIANTS))]
    for j in JOBS4:
        static = mean(s["fig6"]["tsf"]["fig6-static"][j]["jct"])
        lines.append(f"| {j} | {static:.1f} | " + " | ".join(f"{mean(s['fig6'][v]['fig6-shared'][j]['jct']):.1f}" for v in VARIANTS) + " | "
                     + " | ".join(f"{mean(s['fig6'][v]['fig6-shared-weighted'][j]['jct']):.1f}" for v in VARIANTS) + " |")
    gap = max(abs(mean(s["fig6"][v]["fig6-static"][j]["jct"]) - mean(s["fig6"]["tsf"]["fig6-static"][j]["jct"])) for v in VARIANTS for j in JOBS4)
    lines += ["", f"The static pools column is tsf's run; with one job a pool every variant gives the same to within {gap:.1f} s (which job's first tasks the "
              f"scheduler places first, one a {raw['tick']:g} s tick, differs).",
              "", "## Fig. 7: job completion times (s), mean over seeds, alone → congested", "",
              "| job | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]
    for j in s["fig7"]["tsf"]["fig7-congested"]:
        cells = []
        for v in VARIANTS:
            f = s["fig7"][v]
            a = f"{mean(f['fig7-alone'][j]['jct']):.0f}" if j in f["fig7-alone"] else "-"
            cells.append(f"{a} → {mean(f['fig7-congested'][j]['jct']):.0f}")
        lines.append(f"| {j} | " + " | ".join(cells) + " |")
    m1 = raw["scenarios"]["fig7-alone"]
    lines += ["", f"Mouse 1 ({m1['jobs']['mouse1']['tasks']} tasks on nodes {m1['jobs']['mouse1']['nodes']}) is what separates the notions: TSF counts its share "
              f"against h = {m1['h']['mouse1']:g} (the whole cluster, constraints removed), so its {m1['M']['mouse1']:g} possible tasks are a task share of "
              f"{m1['M']['mouse1'] / m1['h']['mouse1']:g}; cdrf counts it against M = {m1['M']['mouse1']:g} (its own nodes), so the same tasks are a job "
              "slowdown of 1, and it is served last among jobs that want its nodes."]
    lines += ["", "The raw figures are in wang-microbenchmark.json: every run's jobs (arrival, first and last task start, finish, JCT) and the placements "
              "counted as errors (`error_fields`); for Table II also each job's running tasks every second (task share = tasks / h_i) and, under the checked "
              f"variants, every {SNAPSHOT_EVERY:g} s, in which pool of nodes; each scenario's h_i, M_i, jobs and pools (`scenarios`) and the offline LP's "
              "allocations (`offline`)."]
    return "\n".join(lines)


def render(raw: dict[str, Any]) -> str:
    sc = raw["scenarios"]["table2"]
    seeds = raw["seeds"]
    runs = [r for by in raw["runs"].values() for rs in by.values() for r in rs]
    clean = sum(1 for r in runs if r["stop_reason"] == "drained" and not r["invariant_violations"])
    cluster = ", ".join(f"nodes {nodes} <{cap.replace(' ', ', ')}>" for cap, nodes in sc["capacity"].items())
    intro = f"""
Wang et al.'s micro-benchmarks (§VI-A; Table II, figs. 5, 6, 7) on dgdrf's emulation: the
{sc['nodes']}-node cluster ({cluster}; {', '.join(sc['resources'])}), one user a job, every run to
the end over run seeds {seeds[0]}..{seeds[-1]} (the seed draws the task runtimes and message
latencies). Scenarios: configs/wang-table2.toml (fig. 5), configs/wang-fig6-*.toml,
configs/wang-fig7-*.toml; each says its source and the readings chosen where the paper gives
no number. One table a mechanism: the scenario's own h_i; fig. 5's plateaus offline
(progressive filling by LP on the jobs present: the paper's "ideally, with TSF"); and
figs. 5-7 online under dgdrf's `tsf` (server offers, one task per offer) and `tsf
--offer-tasks fill` (as a Mesos framework takes an offer: the paper's prototype ran on
Mesos). `drf` and `cdrf` are shown in the notes and give some of the alternatives. Task
shares are n_i / h_i with Table II's h_i. {clean} of {len(runs)} runs ended `drained` with no
invariant violation (in particular, no task ran on a node its job's whitelist excludes).
"""
    return page(
        "Wang et al., TSF micro-benchmarks (§VI-A: Table II, figs. 5-7)",
        "W. Wang, B. Li, B. Liang, J. Li: Multi-Resource Fair Sharing for Datacenter Jobs with Placement Constraints (TSF), §VI-A",
        intro, tables(raw), [raw["command"]], notes(raw),
    )


#: a placement counted as an error, in the JSON: one list of these a placement
ERROR_FIELDS = ("time", "job", "node", "share", "lowest", "lower_jobs", "tick", "explained")


def document(runs: dict[str, dict[str, list[dict[str, Any]]]], s: dict[str, Any], seeds: list[int], command: str) -> dict[str, Any]:
    """The JSON document: what the page is made of (the summary, each scenario's figures,
    the offline LP's) and every run's raw figures (no wall times)."""
    doc: dict[str, Any] = {
        "error_fields": ERROR_FIELDS, "configs": CONFIGS, "variants": {k: {"policy": p, **o} for k, (p, o) in VARIANTS.items()}, "seeds": seeds,
        "sample_every": SAMPLE_EVERY, "tick": RunConfig(policy="tsf").tick, "decision_lag": DECISION_LAG, "command": command,
        "scenarios": {c: scenario_info(c) for c in CONFIGS}, "offline": offline(), "summary": s, "runs": {},
    }
    for config, by_variant in runs.items():
        doc["runs"][config] = {}
        for variant, rs in by_variant.items():
            keep = [k for k in rs[0] if k not in ("wall_s", "time", "snapshots", "tasks", "errors")]
            doc["runs"][config][variant] = [
                {k: r[k] for k in keep}
                | {"errors": [[x[f] for f in ERROR_FIELDS] for x in r["errors"]]}
                | ({"time": [r["time"][0], r["time"][-1]], "tasks": r["tasks"]} if config == "table2" else {})
                | ({"snapshots": compact(r["snapshots"], doc["scenarios"][config]["pools"])} if config == "table2" and variant in CHECKED else {})
                for r in rs
            ]
    return doc


def compact(snapshots: list[dict[str, Any]], pools: dict[str, str]) -> dict[str, Any]:
    """Snapshots as columns: times, and per job its tasks per pool at each."""
    jobs = list(snapshots[0]["pools"]) if snapshots else []
    return {"every": SNAPSHOT_EVERY, "pools": ", ".join(f"{k}: nodes {v}" for k, v in pools.items()), "time": [x["time"] for x in snapshots],
            **{j: [x["pools"][j] for x in snapshots] for j in jobs}}


def _round(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 6)
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_round(v) for v in x]
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="wang_microbenchmark.py", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="run seeds 1..N for every scenario and variant (default 3)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"), help="directory of the page and its JSON")
    ap.add_argument("--render-only", action="store_true", help="run nothing: render the page again from the raw figures already in --out")
    args = ap.parse_args(argv)
    if args.render_only:
        raw = json.loads((args.out / f"{NAME}.json").read_text())
        text = render(raw)
        write(args.out, NAME, raw, text)
        print(text)
        return 0
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    job1 = scenario_info("table2")["jobs"]["job1"]["runtime"]
    if not math.isclose(job1[1], JOB1_LONGEST):
        raise SystemExit(f"JOB1_LONGEST {JOB1_LONGEST} is not job 1's longest task in {CONFIGS['table2']} ({job1[1]})")
    seeds = list(range(1, args.seeds + 1))
    t0 = time.perf_counter()
    runs = collect(seeds, log=lambda line: print(line, file=sys.stderr))
    walls = [r["wall_s"] for by in runs.values() for rs in by.values() for r in rs]
    print(f"{len(walls)} runs in {time.perf_counter() - t0:.1f} s wall; a run {min(walls):.2f}-{max(walls):.2f} s", file=sys.stderr)
    cmd = "python bench/papers/wang_microbenchmark.py" + ("" if args.seeds == 3 else f" --seeds {args.seeds}") + f" --out {args.out}"
    raw = json.loads(compact_json(_round(document(runs, summarise(runs), seeds, cmd))))  # the page is made of what the JSON gives back
    text = render(raw)
    write(args.out, NAME, raw, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
