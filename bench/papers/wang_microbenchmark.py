"""Wang et al.'s micro-benchmarks (TSF, §VI-A: Table II and figs. 5, 6, 7) as relations:
the report page bench/results/papers/wang-microbenchmark.md and its raw figures
(wang-microbenchmark.json).

    python bench/papers/wang_microbenchmark.py --out bench/results/papers

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
``tsf`` and ``tsf-fill``; drf and cdrf are shown beside them.

A job's task share over time is read from the run's samples (its policy's share: task
shares under tsf, dominant shares under drf, job slowdowns under cdrf) and turned into the
job's running tasks n_i (share x h_i w_i, w_i / max_r d_ir / C_r, M_i w_i), so every policy
is measured by the same task share n_i / h_i. A plateau is the mean over the samples of a
window (seconds, at every whole second), and over the seeds; the windows are derived from
each run (the module's :data:`WINDOWS`).

Cost: 72 runs at the default 3 seeds, 0.2-5 s of wall time each (the 2,300 simulated
seconds of fig. 6's static pools the longest), about a minute in all on one core.

Every run must end ``drained`` with no invariant violation (a task only on nodes its job
admits, no node over capacity): a run that does not is a bug, and the script stops with
the command that shows it instead of recording it.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.bench.relations import Relation, drain_problems, page, within, write
from dgdrf.config import load_scenario
from dgdrf.emulation import RunConfig, run_emulation
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
#: the variants the relations are checked on
CHECKED = ("tsf", "tsf-fill")
SAMPLE_EVERY = 1.0
#: seconds between snapshots of where each job's tasks run (per pool of nodes)
SNAPSHOT_EVERY = 5.0
#: the longest task of job 1 (23.2 s + 20 %): every job-1 task running at an instant has
#: ended this long after it
JOB1_LONGEST = 1.2 * 23.2
#: how long before its tick the scheduler may not yet have heard of a task's end (a
#: message's latency is at most 5 ms)
DECISION_LAG = 0.005
#: Table II's windows, from each run: (start, end) in seconds from the start of allocation
WINDOWS = {
    "alone": "8 s (job 1's 75 tasks placed, one a tick) to 18 s (before job 1's shortest task, 18.56 s, ends: until then job 2 cannot start)",
    "jobs12": "job 2's arrival + job 1's longest task (37.84 s: every job-1 task that held nodes 1-25 when job 2 arrived has ended) to job 2's last task start (its queue empties)",
    "job1_after_job2": "job 2's last task end + 1 s to 149 s (jobs 3 and 4 arrive at 150 s)",
    "jobs134": "150 s + job 1's longest task (177.84 s) to the first of jobs 3 and 4's last task starts (while all three have tasks pending)",
    "jobs14": "job 3's last task end + 1 s to job 4's last task start",
}
#: the paper's fig. 5 plateaus (task shares): window -> job -> figure
PAPER_PLATEAUS = {
    "alone": {"job1": 1.0},
    "jobs12": {"job1": 2 / 3, "job2": 1 / 2},
    "job1_after_job2": {"job1": 1.0},
    "jobs134": {"job1": 3 / 5, "job3": 1 / 5, "job4": 1 / 5},
}
PLATEAU_TOL = 0.05
#: jobs 3 and 4 in the paper's plateau (20 + 15 tasks) and in divisible TSF (8/35 each)
PAPER_34_TASKS = 35
DIVISIBLE_34 = 8 / 35
DIVISIBLE_34_TASKS = 8 / 35 * (100 + 75)  # = 40
TASKS_TOL = 2
#: Table II's h_i
PAPER_H = {"job1": 75, "job2": 100, "job3": 100, "job4": 75}
PAPER_FIG6_SPEEDUP = 0.22
SPEEDUP_TOL = 0.05
#: fig. 7: a mouse is "unaffected" when its completion time moves by at most this much
MICE_TOL = 0.10
#: ... and an elephant "delayed significantly" when it ends at least this much later
ELEPHANT_DELAY = 0.25


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
    """Table II's windows in ``run`` (:data:`WINDOWS`)."""
    j = run["jobs"]
    return {
        "alone": (8.0, 18.0),
        "jobs12": (j["job2"]["arrival"] + JOB1_LONGEST, j["job2"]["last_start"]),
        "job1_after_job2": (j["job2"]["finish"] + 1.0, 149.0),
        "jobs134": (150.0 + JOB1_LONGEST, min(j["job3"]["last_start"], j["job4"]["last_start"])),
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
    out: dict[str, Any] = {"windows": WINDOWS, "table2": {}, "fig6": {}, "fig7": {}}
    for variant, rs in t2.items():
        v: dict[str, Any] = {"windows": {w: [list(windows(r)[w]) for r in rs] for w in WINDOWS}}
        v["plateaus"] = {w: {j: plateau(rs, w, j) for j in ("job1", "job2", "job3", "job4")} for w in WINDOWS}
        v["tasks_34"] = plateau_sum(rs, "jobs134", ("job3", "job4"))
        v["pools_jobs134"] = {j: pools_in(rs, "jobs134", j) for j in ("job1", "job3", "job4")}
        v["error_ratio"] = [r["error_ratio"] for r in rs]
        v["errors"] = [r["errors"] for r in rs]
        v["allocations"] = [r["allocations"] for r in rs]
        v["jct"] = {j: jct(rs, j) for j in ("job1", "job2", "job3", "job4")}
        v["finish"] = {j: [r["jobs"][j]["finish"] for r in rs] for j in ("job1", "job2", "job3", "job4")}
        out["table2"][variant] = v
    for variant in VARIANTS:
        f6: dict[str, Any] = {}
        for config in ("fig6-static", "fig6-shared", "fig6-shared-weighted"):
            rs = runs[config][variant]
            f6[config] = {j: {"jct": jct(rs, j), "held": [held(r, j) for r in rs]} for j in ("job1", "job2", "job3", "job4")}
        for config in ("fig6-shared", "fig6-shared-weighted"):
            f6[f"{config} speedup"] = {
                j: [1 - a / b for a, b in zip(f6[config][j]["jct"], f6["fig6-static"][j]["jct"], strict=True)] for j in ("job1", "job2", "job3", "job4")
            }
        out["fig6"][variant] = f6
        f7: dict[str, Any] = {}
        for config in ("fig7-alone", "fig7-congested"):
            rs = runs[config][variant]
            f7[config] = {j: {"jct": jct(rs, j), "held": [held(r, j) for r in rs], "last_start": [r["jobs"][j]["last_start"] for r in rs]} for j in rs[0]["jobs"]}
        f7["slowdown"] = {
            j: [b / a - 1 for a, b in zip(f7["fig7-alone"][j]["jct"], f7["fig7-congested"][j]["jct"], strict=True)] for j in f7["fig7-alone"]
        }
        out["fig7"][variant] = f7
    out["h"] = t2["tsf"][0]["h"]
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


# -- relations -----------------------------------------------------------------------------------------
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


def fig5_relations(s: dict[str, Any]) -> list[Relation]:
    t2 = s["table2"]
    one, fill = t2["tsf"], t2["tsf-fill"]
    rel = [
        Relation(
            "Table II", "h_i: tasks a job runs on the whole cluster, constraints removed", " / ".join(str(PAPER_H[j]) for j in PAPER_H),
            " / ".join(f"{s['h'][j]:g}" for j in PAPER_H), "exact", all(s["h"][j] == PAPER_H[j] for j in PAPER_H),
            "dgdrf's TaskShare units: per node, whole tasks (floor), summed",
        )
    ]
    claims = {
        ("alone", "job1"): "at the beginning job 1, the only active job, monopolizes the cluster: task share 1",
        ("jobs12", "job2"): "job 2 (nodes 1-25) is allocated all 25 nodes, 2 tasks each: task share 2 x 25 / 100 = 1/2",
        ("jobs12", "job1"): "job 1 is allocated nodes 26-50, 2 tasks each: task share 2 x 25 / 75 = 2/3",
        ("job1_after_job2", "job1"): "after job 2 completes, job 1 monopolizes the cluster until jobs 3 and 4 start",
        ("jobs134", "job1"): "the other 30 nodes remain allocated to job 1: task share 3/5",
        ("jobs134", "job3"): "jobs 3 and 4 evenly share the 20 whitelisted nodes: task shares 1/5",
        ("jobs134", "job4"): "(as job 3) job 4's task share 1/5",
    }
    paper_txt = {1.0: "1", 2 / 3: "2/3", 1 / 2: "1/2", 3 / 5: "3/5", 1 / 5: "1/5"}
    for (w, j), claim in claims.items():
        target = PAPER_PLATEAUS[w][j]
        a, b = one["plateaus"][w][j], fill["plateaus"][w][j]
        ok = within(a["mean"], target, PLATEAU_TOL) and within(b["mean"], target, PLATEAU_TOL)
        why = f"window {WINDOWS[w]}: {window_spans_text(one, w)} s in the three runs"
        if (w, j) == ("jobs134", "job1"):
            why += "; job 1 holds 15 tasks on nodes 11-25 and 30 on 36-50: 45/75 = 3/5 (the paper's '2 x 30 / 100' is a typo, DIGEST 1c)"
        if (w, j) in (("jobs134", "job3"), ("jobs134", "job4")):
            why += "; see the next two rows for 1/5 against divisible TSF's 8/35"
        if (w, j) == ("jobs12", "job2"):
            why += "; the samples dip below 50 when a task of job 2 ends between its replacement's placement ticks"
        printed = next((txt for v, txt in paper_txt.items() if abs(v - target) < 1e-12), f3(target))
        rel.append(Relation(f"fig. 5 ({label(w)})", claim, printed,
                            f"one task per offer: {spread(a)}; fill: {spread(b)}", f"± {PLATEAU_TOL} of task share", ok, why))
    n34a, n34b = one["tasks_34"], fill["tasks_34"]
    pa = one["pools_jobs134"]
    rel.append(Relation(
        "fig. 5 (jobs 1, 3, 4)", "jobs 3 and 4 together: 1/5 each, 20 + 15 = 35 tasks on the 20 whitelisted nodes", f"{PAPER_34_TASKS} tasks",
        f"one task per offer: {spread(n34a, 1)}; fill: {spread(n34b, 1)} tasks", f"± {TASKS_TOL} tasks",
        within(n34a["mean"], PAPER_34_TASKS, TASKS_TOL) and within(n34b["mean"], PAPER_34_TASKS, TASKS_TOL),
        f"where they run (one task per offer, mean tasks in nodes 1-10 / 26-35): job 3 {pa['job3'][0]:.1f} / {pa['job3'][2]:.1f}, job 4 {pa['job4'][0]:.1f} / {pa['job4'][2]:.1f}; "
        f"a job-4 task on nodes 1-10 takes the node's only core and strands its other 0.5 GB, so each one costs a slot: 40 half-GB slots - {pa['job4'][0]:.1f} = {40 - pa['job4'][0]:.1f} at most",
    ))
    rel.append(Relation(
        "DIGEST 1c (fig. 5)", "divisible offline TSF (progressive filling) gives jobs 3 and 4 8/35 each: 40 tasks (22.9 + 17.1)",
        f"{f3(DIVISIBLE_34)} each, {DIVISIBLE_34_TASKS:.0f} tasks",
        f"one task per offer: job 3 {f3(one['plateaus']['jobs134']['job3']['mean'])}, job 4 {f3(one['plateaus']['jobs134']['job4']['mean'])}, {n34a['mean']:.1f} tasks; "
        f"fill: {f3(fill['plateaus']['jobs134']['job3']['mean'])}, {f3(fill['plateaus']['jobs134']['job4']['mean'])}, {n34b['mean']:.1f} tasks",
        f"± {TASKS_TOL} tasks", within(n34a["mean"], DIVISIBLE_34_TASKS, TASKS_TOL) and within(n34b["mean"], DIVISIBLE_34_TASKS, TASKS_TOL),
        "8/35 needs every job-4 task on nodes 26-35 (17.1 there) and job 3 alone on nodes 1-10. Online, tasks are indivisible and not preempted, and a freed node 1-10 "
        "is offered to the lower task share of the two: job 4 gets it when it is behind, then holds a whole small node for 44-67 s. The paper's 35 (20 + 15) is "
        "consistent with the same effect (fifteen job-4 tasks, five of them on small nodes, leave 35 slots)",
    ))
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

    unexplained = [x for e in one["errors"] for x in e if not x["explained"]]
    ex_one, ex_fill = example(one, True), example(fill, False)
    rel.append(Relation(
        "fig. 5", "the relinquished resources are offered to the job having the lowest task share", "every offer",
        f"placements the collector counts as not to the lowest task share among the jobs that fit on the node: one task per offer {errors(one)}; fill {errors(fill)}",
        "one task per offer: none that the state at its decision does not explain", not unexplained,
        "the collector judges a placement when the node starts it, a few ms after the scheduler's tick decided it (proposal, accept, start: messages of 1-5 ms), "
        "on the state then; a placement is explained when, on what the scheduler could know at its tick (each job's running tasks as at some instant from 5 ms "
        "before the tick to just after it), its job was not above any job whose next task fitted on the node."
        + (f" One task per offer, e.g. {ex_one}: a task of the lower job ended between the decision and the record." if ex_one else "")
        + (f" With fill the job an offer went to keeps it while its next task fits, whatever the others' shares (Mesos's offers; not an error of the scheduler), e.g. {ex_fill}." if ex_fill else ""),
    ))
    j14 = one["plateaus"]["jobs14"]
    f3t, f4t = mean(one["finish"]["job3"]), mean(one["finish"]["job4"])
    rel.append(Relation(
        "fig. 5 (after the plateau)", "job 4 starts to complete, its resources go to job 3 (the lowest task share); finally job 1 gradually takes the resources released by job 3",
        "job 4 → job 3 → job 1", f"job 3 ends first ({f3t:.0f} s; job 4 at {f4t:.0f} s); from then to job 4's last start job 4 holds {f3(j14['job4']['mean'])} "
        f"(all 30 tasks its nodes hold = 0.4) and job 1 {f3(j14['job1']['mean'])}: job 4 takes job 3's resources, job 1 what job 4 releases", "qualitative", None,
        "not comparable as printed: job 4's 100 tasks of 55.6 s on about 15 slots cannot end before job 3's 100 of 21.3 s on about 20; read with jobs 3 and 4 "
        "exchanged (job 3 ends, its resources go to job 4, the lower task share, and job 1 takes those job 4 releases) it is what we see",
    ))
    return rel


def window_spans_text(v: dict[str, Any], w: str) -> str:
    return ", ".join(f"{lo:.0f}-{hi:.0f}" for lo, hi in v["windows"][w])


def label(w: str) -> str:
    return {"alone": "job 1 alone", "jobs12": "jobs 1, 2", "job1_after_job2": "job 1 alone again", "jobs134": "jobs 1, 3, 4", "jobs14": "jobs 1, 4"}[w]


JOBS4 = ("job1", "job2", "job3", "job4")


FIG6_WHY = {
    "fig6-shared": "Job 2's pool (nodes 11-25) gives it 30 slots from 0 s; shared, nodes 1-25 are job 1's too (and jobs 3 and 4's), and equal task shares "
    "give job 2 20 of them against job 1 (n1/75 = n2/100, n1 + n2/2 = 25): equal weights promise no job its pool (Theorem 1 needs w_i = k_i / h_i)",
    "fig6-shared-weighted": "With Theorem 1's weights, divisible TSF gives each job exactly its pool while all four compete (10, 30, 20, 30 tasks: the guarantee "
    "is 'no less', with nothing to spare until one ends). Online, without preemption, the first rounds of offers (every share 0, nodes in id order) put "
    "tasks of jobs 1, 3 and 4 on nodes 1-25 before job 2 has its 30, and they hold them until they end, while job 2's pool would have been its own from 0 s",
}


def fig6_relations(s: dict[str, Any]) -> list[Relation]:
    rel = []
    for variant in CHECKED:
        f = s["fig6"][variant]
        mode = "one task per offer" if variant == "tsf" else "fill"
        sp = f["fig6-shared speedup"]
        best = max(JOBS4, key=lambda j: mean(sp[j]))
        per = "; ".join(f"{j} {rng(sp[j], pct=True)}" for j in JOBS4)
        rel.append(Relation(
            "fig. 6", f"TSF speeds up job completion by up to 22 % over static partitioning ({mode})", "up to 22 %",
            f"up to {100 * mean(sp[best]):.0f} % ({best}); per job, mean over seeds (range): {per}", f"± {100 * SPEEDUP_TOL:.0f} points on the largest",
            within(mean(sp[best]), PAPER_FIG6_SPEEDUP, SPEEDUP_TOL),
            "readings (the paper gives neither start times nor task counts for fig. 6): Table II's jobs, all starting at 0 s. Job 1's pool (nodes 1-10) holds 10 of its "
            "tasks; shared, it holds up to 25 once the others end, and its 1000 tasks run mostly after they have: it must gain far more than 22 % with these task counts",
        ))
        for config, weights in (("fig6-shared", "equal weights"), ("fig6-shared-weighted", "Theorem 1's weights k_i / h_i")):
            sp = f[f"{config} speedup"]
            slower = [j for j in JOBS4 if mean(sp[j]) < 0]
            held_static = {j: mean(f["fig6-static"][j]["held"]) for j in JOBS4}
            held_shared = {j: mean(f[config][j]["held"]) for j in JOBS4}
            rel.append(Relation(
                "fig. 6 (Thm 1)", f"with TSF every job finishes no later than in its dedicated pool ({weights}, {mode})", "every job faster",
                "; ".join(f"{j} {rng(f['fig6-static'][j]['jct'])} → {rng(f[config][j]['jct'])}" for j in JOBS4),
                "qualitative: no job's mean JCT later", not slower,
                (f"{', '.join(slower)} slower. " if slower else "")
                + "Mean tasks held while running, static → shared: " + ", ".join(f"{j} {held_static[j]:.1f} → {held_shared[j]:.1f}" for j in JOBS4)
                + (". " + FIG6_WHY[config] if "job2" in slower else ""),
            ))
    return rel


def fig7_relations(s: dict[str, Any]) -> list[Relation]:
    rel = []
    for variant in CHECKED:
        f = s["fig7"][variant]
        mode = "one task per offer" if variant == "tsf" else "fill"
        sl = f["slowdown"]
        for mouse in ("mouse1", "mouse2"):
            a, b = f["fig7-alone"][mouse], f["fig7-congested"][mouse]
            rel.append(Relation(
                "fig. 7", f"{mouse.replace('mouse', 'mouse ')}'s completion time is not affected by 4 more elephants ({mode})", "unaffected",
                f"{rng(a['jct'])} → {rng(b['jct'])}: {rng(sl[mouse], pct=True)}", f"± {100 * MICE_TOL:.0f} %", within(mean(sl[mouse]), 0.0, MICE_TOL),
                f"mean tasks held while running: {mean(a['held']):.1f} alone → {mean(b['held']):.1f} congested"
                + (". Mouse 1's 10 nodes hold 20 of its tasks (task share 0.2: h = 100 counts the whole cluster, constraints removed); TSF equalises task shares, "
                   "and with six elephants the common task share falls below 0.2, so mouse 1 gets fewer than 20 slots. Readings (demands, runtimes, start times) in "
                   "configs/wang-fig7-alone.toml" if mouse == "mouse1" else f". Its 10 tasks start by {mean(a['last_start']):.1f} s alone and {mean(b['last_start']):.1f} s congested (the scheduler places one task a 0.1 s tick, "
                   "and eight jobs' first tasks share the first ticks): the delay is that of its start, its tasks are never held back"),
            ))
        els = [j for j in sl if j.startswith("elephant") and j in f["fig7-alone"]]
        rel.append(Relation(
            "fig. 7", f"injecting more workload delays the completion of the two elephants significantly ({mode})", "delayed",
            "; ".join(f"{j.replace('elephant', 'elephant ')} {rng(f['fig7-alone'][j]['jct'])} → {rng(f['fig7-congested'][j]['jct'])} ({rng(sl[j], pct=True)})" for j in els),
            f"qualitative: later by ≥ {100 * ELEPHANT_DELAY:.0f} %", all(mean(sl[j]) >= ELEPHANT_DELAY for j in els), "",
        ))
    return rel


# -- the page ------------------------------------------------------------------------------------------
def notes(s: dict[str, Any]) -> str:
    t2 = s["table2"]
    lines = [
        "## Fig. 5 plateaus under every policy", "",
        "Task share n_i / h_i, mean over the window's samples and the seeds (every policy measured by the same task share: drf's dominant shares and "
        "cdrf's job slowdowns are turned into running tasks). In this scenario each job's h_i is also its dominant-share unit (75 CPU / 1 core, "
        "50 GB / 0.5 GB), so drf's dominant shares *are* task shares, and jobs that arrive at a full cluster receive the nodes that free up: "
        "drf reaches the same plateaus. cdrf ranks by n_i / M_i (M = 75, 50, 40, 30: constraints kept), which favours the constrained jobs.", "",
        "| window | job | paper | " + " | ".join(VARIANTS) + " |", "|---|---|---|" + "---|" * len(VARIANTS),
    ]
    for w, jobs in PAPER_PLATEAUS.items():
        for j, target in jobs.items():
            lines.append(f"| {label(w)} | {j} | {f3(target)} | " + " | ".join(f3(t2[v]["plateaus"][w][j]["mean"]) for v in VARIANTS) + " |")
    lines.append("| jobs 1, 3, 4 | jobs 3 + 4 (tasks) | 35 | " + " | ".join(f"{t2[v]['tasks_34']['mean']:.1f}" for v in VARIANTS) + " |")
    lines.append("| jobs 1, 4 | job4 | - | " + " | ".join(f3(t2[v]["plateaus"]["jobs14"]["job4"]["mean"]) for v in VARIANTS) + " |")
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
    lines += [f"- {label(w)}: {text}" for w, text in WINDOWS.items()]
    lines += ["", "## Fig. 6: job completion times (s), mean over seeds", "",
              "| job | static pools | " + " | ".join(f"shared, {v}" for v in VARIANTS) + " | " + " | ".join(f"k/h weights, {v}" for v in VARIANTS) + " |",
              "|---|---|" + "---|" * (2 * len(VARIANTS))]
    for j in JOBS4:
        static = mean(s["fig6"]["tsf"]["fig6-static"][j]["jct"])
        lines.append(f"| {j} | {static:.1f} | " + " | ".join(f"{mean(s['fig6'][v]['fig6-shared'][j]['jct']):.1f}" for v in VARIANTS) + " | "
                     + " | ".join(f"{mean(s['fig6'][v]['fig6-shared-weighted'][j]['jct']):.1f}" for v in VARIANTS) + " |")
    gap = max(abs(mean(s["fig6"][v]["fig6-static"][j]["jct"]) - mean(s["fig6"]["tsf"]["fig6-static"][j]["jct"])) for v in VARIANTS for j in JOBS4)
    lines += ["", f"The static pools column is tsf's run; with one job a pool every variant gives the same to within {gap:.1f} s (which job's first tasks the "
              "scheduler places first, one a 0.1 s tick, differs).",
              "", "## Fig. 7: job completion times (s), mean over seeds, alone → congested", "",
              "| job | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]
    for j in s["fig7"]["tsf"]["fig7-congested"]:
        cells = []
        for v in VARIANTS:
            f = s["fig7"][v]
            a = f"{mean(f['fig7-alone'][j]['jct']):.0f}" if j in f["fig7-alone"] else "-"
            cells.append(f"{a} → {mean(f['fig7-congested'][j]['jct']):.0f}")
        lines.append(f"| {j} | " + " | ".join(cells) + " |")
    lines += ["", "Mouse 1 (100 tasks on nodes 1-5 and 26-30) is what separates the notions: TSF counts its share against h = 100 (the whole cluster, "
              "constraints removed), so its 20 possible tasks are a task share of 0.2; cdrf counts it against M = 20 (its own nodes), so the same 20 tasks "
              "are a job slowdown of 1, and it is served last among jobs that want its nodes."]
    lines += ["", "The raw figures are in wang-microbenchmark.json: every run's jobs (arrival, first and last task start, finish, JCT) and the placements "
              "counted as errors (`error_fields`); for Table II also each job's running tasks every second (task share = tasks / h_i) and, under tsf, every 5 s, in which pool of nodes."]
    return "\n".join(lines)


def render(s: dict[str, Any], seeds: list[int], commands: list[str]) -> str:
    intro = f"""
Wang et al.'s micro-benchmarks (§VI-A; Table II, figs. 5, 6, 7) on dgdrf's emulation: the
50-node cluster (nodes 1-25 <1 core, 1 GB>, 26-50 <2 cores, 1 GB>), one user a job, task
runtimes uniform within ± 20 % of the job's mean, every run to the end (drained) over run
seeds {seeds[0]}..{seeds[-1]} (the seed draws the task runtimes and message latencies). Scenarios:
configs/wang-table2.toml (fig. 5), configs/wang-fig6-*.toml, configs/wang-fig7-*.toml; each
says its source and the readings chosen where the paper gives no number. Online TSF is
dgdrf's `tsf` (server offers in node order, a node freed by a finishing task offered again
first; one task per offer) and `tsf --offer-tasks fill` (the job an offer goes to keeps it
while its next task fits, as a Mesos framework takes an offer: the paper's prototype ran
on Mesos); the relations are checked on both; `drf` and `cdrf` are shown beside them in
the notes. Task shares are n_i / h_i with Table II's h_i. Every run ended `drained` with no
invariant violation (in particular, no task ran on a node its job's whitelist excludes).
"""
    rel = fig5_relations(s) + fig6_relations(s) + fig7_relations(s)
    return page(
        "Wang et al., TSF micro-benchmarks (§VI-A: Table II, figs. 5-7)",
        "W. Wang, B. Li, B. Liang, J. Li: Multi-Resource Fair Sharing for Datacenter Jobs with Placement Constraints (TSF), §VI-A",
        intro, rel, commands, notes(s),
    )


#: a placement counted as an error, in the JSON: one list of these a placement
ERROR_FIELDS = ("time", "job", "node", "share", "lowest", "lower_jobs", "tick", "explained")


def raw(runs: dict[str, dict[str, list[dict[str, Any]]]], s: dict[str, Any], seeds: list[int]) -> dict[str, Any]:
    """The JSON document: the summary and every run's raw figures (no wall times)."""
    doc: dict[str, Any] = {"error_fields": ERROR_FIELDS, "configs": CONFIGS, "variants": {k: {"policy": p, **o} for k, (p, o) in VARIANTS.items()}, "seeds": seeds, "sample_every": SAMPLE_EVERY, "summary": s, "runs": {}}
    for config, by_variant in runs.items():
        doc["runs"][config] = {}
        for variant, rs in by_variant.items():
            keep = [k for k in rs[0] if k not in ("wall_s", "time", "snapshots", "tasks", "errors")]
            doc["runs"][config][variant] = [
                {k: r[k] for k in keep}
                | {"errors": [[x[f] for f in ERROR_FIELDS] for x in r["errors"]]}
                | ({"time": [r["time"][0], r["time"][-1]], "tasks": r["tasks"]} if config == "table2" else {})
                | ({"snapshots": compact(r["snapshots"])} if config == "table2" and variant in CHECKED else {})
                for r in rs
            ]
    return doc


def compact(snapshots: list[dict[str, Any]]) -> dict[str, Any]:
    """Snapshots as columns: times, and per job its tasks per pool at each."""
    jobs = list(snapshots[0]["pools"]) if snapshots else []
    return {"every": SNAPSHOT_EVERY, "pools": "1: nodes 1-10, 2: 11-25, 3: 26-35, 4: 36-50", "time": [x["time"] for x in snapshots],
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
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    seeds = list(range(1, args.seeds + 1))
    t0 = time.perf_counter()
    runs = collect(seeds, log=lambda line: print(line, file=sys.stderr))
    walls = [r["wall_s"] for by in runs.values() for rs in by.values() for r in rs]
    print(f"{len(walls)} runs in {time.perf_counter() - t0:.1f} s wall; a run {min(walls):.2f}-{max(walls):.2f} s", file=sys.stderr)
    s = summarise(runs)
    cmd = "python bench/papers/wang_microbenchmark.py" + ("" if args.seeds == 3 else f" --seeds {args.seeds}") + f" --out {args.out}"
    text = render(s, seeds, [cmd])
    write(args.out, NAME, _round(raw(runs, s, seeds)), text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
