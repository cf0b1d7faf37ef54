"""Tahir et al.'s evaluation trends (UDRF, §V, fig. 10) on synthetic multi-class jobs: the
report page bench/results/papers/tahir-trends.md and its raw figures (tahir-trends.json).

    python bench/papers/tahir_trends.py --out bench/results/papers [--seeds 12] [--jobs 2]

The paper runs 24 h of the Google trace (700 machine classes, a random repetition count
per job, runtimes 10-100 s, decisions every second, a waiting queue of 100 jobs) under its
online UDRF and under DRF with the machine classes as resources, and plots the job
completion time (JCT) CDFs (fig. 10a) and UDRF's JCT reduction over DRF against the
repetition count (10b) and against the classes a job needs (10c), printing no numbers:
"the more machine classes the job needs, the more time reduction is expected", and "the
more times the job is required to execute, the higher reduction".

Here, per scenario seed (``generate``, a seeded numpy generator; no model code of its own):

- ``CLASSES``: six machine classes of two to four servers each (a server's attribute
  ``class``), of different CPU/memory shapes (Tahir's standard, hadoop, public-IP and
  high-mem among them);
- ``JOBS`` jobs of ``TENANTS`` tenants (each job's tenant drawn uniformly): a job needs
  1-4 classes (35/30/20/15 %: "around 65 % of jobs required between one to two machine
  classes", fig. 8), drawn without replacement in proportion to the classes' server
  counts; its repetition count is log-uniform on 1..``MAX_REPS`` (floored); its demand
  on each class is 1-4 CPUs with memory in the class's own CPU:memory ratio times a
  log-normal factor (sigma 0.4);
- a job is one job stream of its tenant (a scenario user with the tenant's ``tenant``):
  one finite job of parts, one part a class it needs (``requires = {class = ...}``), run
  ``repetitions`` times, each run placed whole and lasting a uniform 10-100 s (drawn per
  run from the run seed: both policies run the same runs for as long);
- arrivals: a Poisson process whose rate makes the offered load ``LOAD`` (expected busy
  fraction of the bottleneck resource of a class, averaged over the classes); a stand-in
  for the paper's always-full 100-job queue (dgdrf has open arrivals, not a closed queue).

Each scenario is run under ``udrf`` (the tenant's share over (class, resource) pairs, its
stream with the lowest own share, first fit) and ``drf-bundle``, the paper's DRF (the
(class, resource) pairs as resources, a tenant's jobs in equal counts: its job with the
fewest runs going goes next, and the tenant waits when that one does not fit; our reading
online), run seed = scenario seed. A job's JCT = its last run's end - its arrival; its
reduction = 1 - JCT_udrf / JCT_drf-bundle. Every run must end ``drained`` with no
invariant violation; one that does not is a bug: the script stops with the command that
shows it (the scenario written to a file), its events and its unfinished tasks, and
records nothing.

The paper's four claims (fig. 9's waste, fig. 10a-c) are judged: the waste by what is in
use, in the classes that jobs with a run waiting need, every ``LOOK_EVERY`` simulated
seconds (``Backlog``): less under DRF in more seeds than chance? The trends by a one-sided
sign test over the seeds (``ALPHA``): does the reduction rise over the bins in more seeds
than it falls, beyond chance? ``tables(raw)`` and
``render(raw)`` make every figure of the page from the raw figures alone (the run
records, ``runs_from_raw``).

The page's relations are on ``SEEDS`` seeds at ``LOAD``; ``OTHER_SEEDS`` seeds at each of
``OTHER_LOADS`` (the same jobs, their arrivals spread for another load) are shown beside
them, not judged. Cost: 100 runs by default; with the default two worker processes one run of
the script took 243 s of wall time on two cores, 2.4-9.4 s a run (its own timing on
stderr, not recorded: wall times stay off the page so that a rerun rewrites it byte for
byte). The page does not depend on ``--jobs``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from dgdrf.bench.relations import Alternative, Relation, Table, compact_json, equals, page, write
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.scenario import Scenario, build_scenario
from dgdrf.world import Observer

NAME = "tahir-trends"
#: the paper's DRF: the (class, resource) pairs as resources, a user's jobs in equal counts
BASELINE = "drf-bundle"
POLICIES = ("udrf", BASELINE)
RESOURCES = ("cpu", "memory")
#: class -> (server capacity <cpu, memory>, servers)
CLASSES: dict[str, tuple[tuple[float, float], int]] = {
    "standard": ((16, 40), 4),
    "hadoop": ((56, 64), 2),
    "public-IP": ((24, 48), 3),
    "high-mem": ((8, 256), 3),
    "high-cpu": ((48, 32), 2),
    "gpu": ((32, 128), 2),
}
TENANTS = 8
JOBS = 60
MAX_REPS = 50
#: classes per job 1..4 and their probabilities (fig. 8: about 65 % need one or two)
CLASS_COUNTS = (1, 2, 3, 4)
CLASS_COUNT_P = (0.35, 0.30, 0.20, 0.15)
DURATION = {"dist": "uniform", "min": 10, "max": 100}
MEAN_DURATION = 55.0
LOAD = 0.9
#: fig. 10b's bins of repetition counts (inclusive) and fig. 10c's of classes per job
REP_BINS = ((1, 2), (3, 5), (6, 12), (13, 25), (26, MAX_REPS))
CLASS_BINS = tuple((c, c) for c in CLASS_COUNTS)
#: a trend "grows" in our runs when the seeds whose reduction rises over the bins (Spearman's
#: rho of the seed's bin means with the bins' order > 0) outnumber those where it falls beyond
#: chance: a one-sided sign test over the seeds with a signed rho, p < ALPHA (its alternative,
#: no trend, puts half the seeds each way)
ALPHA = 0.05
SEEDS = 30
#: other offered loads, fewer seeds each: does a verdict depend on the load?
OTHER_LOADS = (0.6, 1.2)
OTHER_SEEDS = 10


# -- the workload -----------------------------------------------------------------------------------
def generate(seed: int, jobs: int = JOBS, tenants: int = TENANTS, load: float = LOAD, max_reps: int = MAX_REPS) -> tuple[Scenario, list[dict[str, Any]]]:
    """A scenario of ``jobs`` multi-class jobs (as job streams of their tenants) and the
    jobs' descriptions: tenant, job id, classes, repetitions, arrival, streams."""
    rng = np.random.default_rng(seed)
    names = list(CLASSES)
    weight = np.array([CLASSES[c][1] for c in names], dtype=float)
    cap = {c: np.array(CLASSES[c][0], dtype=float) * CLASSES[c][1] for c in names}  # the class's pool
    servers = [{"id": f"{c}-{i + 1}", "capacity": list(CLASSES[c][0]), "attributes": {"class": c}} for c in names for i in range(CLASSES[c][1])]
    drawn = []
    work = {c: np.zeros(len(RESOURCES)) for c in names}  # expected resource-seconds a class is asked for
    for j in range(jobs):
        tenant = f"t{int(rng.integers(tenants)) + 1}"
        k = int(rng.choice(CLASS_COUNTS, p=CLASS_COUNT_P))
        classes = [names[i] for i in sorted(rng.choice(len(names), size=k, replace=False, p=weight / weight.sum()))]
        reps = min(int(math.floor(math.exp(rng.uniform(0.0, math.log(max_reps + 1))))), max_reps)
        demands = {}
        for c in classes:
            shape = CLASSES[c][0]
            cpu = float(rng.integers(1, 5))
            mem = max(0.5, round(cpu * shape[1] / shape[0] * float(rng.lognormal(0.0, 0.4)) * 2) / 2)
            mem = min(mem, float(shape[1]))
            demands[c] = (cpu, mem)
            work[c] += reps * MEAN_DURATION * np.array([cpu, mem])
        drawn.append((tenant, f"j{j + 1:02d}", classes, reps, demands))
    # the horizon that makes the mean over classes of the bottleneck resource's offered load `load`
    per_second = np.mean([float(np.max(work[c] / cap[c])) for c in names])
    horizon = per_second / load
    arrivals = np.sort(rng.uniform(0.0, horizon, size=jobs))
    users, described = [], []
    for (tenant, job, classes, reps, demands), arrival in zip(drawn, arrivals):
        uid = f"{tenant}-{job}"  # one job stream of its tenant: a job of one part a class, run `reps` times, each run whole
        parts = [{"demand": list(demands[c]), "requires": {"class": c}} for c in classes]
        users.append({"id": uid, "tenant": tenant, "jobs": [{"id": job, "parts": parts, "tasks": reps, "duration": dict(DURATION), "arrival": round(float(arrival), 3)}]})
        described.append({"tenant": tenant, "job": job, "classes": classes, "repetitions": reps, "arrival": round(float(arrival), 3), "streams": [uid]})
    scenario = build_scenario(RESOURCES, servers, users, name=f"tahir-trends-s{seed}-load{load:g}")
    return scenario, described


def job_jct(result_jobs: Sequence[dict[str, Any]], described: Sequence[dict[str, Any]]) -> list[float]:
    """Each described job's completion time: its streams' latest finish - its arrival."""
    finish = {r["user"]: r["finish"] for r in result_jobs}
    out = []
    for d in described:
        ends = [finish.get(s) for s in d["streams"]]
        if any(e is None for e in ends):
            raise RuntimeError(f"job {d['job']} of {d['tenant']}: a stream did not finish ({dict(zip(d['streams'], ends))})")
        out.append(max(ends) - d["arrival"])  # type: ignore[type-var]
    return out


# -- running ----------------------------------------------------------------------------------------
#: simulated seconds between two looks at what is in use while jobs wait (fig. 9)
LOOK_EVERY = 10.0


class Backlog(Observer):
    """Fig. 9's waste: every ``LOOK_EVERY`` simulated seconds, in each machine class that a
    job with a run waiting needs, the CPU and memory in use (fractions of the class's
    capacity); what is not in use there is left idle while work that needs it waits."""

    def __init__(self) -> None:
        self.in_use: list[list[float]] = []
        self.label = np.zeros(0, dtype=str)  # each server's class (the scenario's servers: no churn here)

    def started(self, world) -> None:
        ledger = world.collector.ledger
        self.label = np.array([str(ledger.server_attributes(s).get("class", "")) for s in range(len(ledger.server_ids))])
        world.clock.call_later(max(0.0, world.start - world.clock.now()) + LOOK_EVERY, self._look, world)

    def _look(self, world) -> None:
        ledger = world.collector.ledger
        label = self.label
        needed: set[str] = set()
        for u in np.flatnonzero(ledger.tasked()):
            for part in ledger.gang_of(int(u)) or ():
                needed.update(str(v) for k, vs in part.constraint.requires if k == "class" for v in vs)
        for c in sorted(needed):
            on = label == c
            self.in_use.append((ledger.used[on].sum(axis=0) / ledger.capacity[on].sum(axis=0)).tolist())
        if world.collector.jobs.finite_work_left():
            world.clock.call_later(LOOK_EVERY, self._look, world)

    def summary(self) -> dict[str, Any]:
        use = np.array(self.in_use) if self.in_use else np.zeros((0, len(RESOURCES)))
        return {"looks": len(use), "in_use": [float(x) for x in use.mean(axis=0)] if len(use) else [math.nan] * len(RESOURCES)}


def emulate(seed: int, load: float = LOAD) -> dict[str, Any]:
    """Both policies on one seed's scenario: per job its JCT under each, and the runs' costs.
    Raises on a run that did not end drained with no invariant violation (a bug)."""
    scenario, described = generate(seed, load=load)
    out: dict[str, Any] = {"seed": seed, "load": load, "jobs": described, "streams": len(scenario.users), "tasks": sum(d["repetitions"] * len(d["classes"]) for d in described), "runs": {}}
    for policy in POLICIES:
        t0 = time.perf_counter()
        backlog = Backlog()
        r = run_emulation(scenario, RunConfig(policy=policy, seed=seed), observers=[backlog])
        wall = time.perf_counter() - t0
        if r.stop_reason != "drained" or r.invariant_violations:
            path = Path(tempfile.gettempdir()) / f"{scenario.name}.json"
            scenario.write_json(path)
            raise RuntimeError(f"not drained cleanly: dgdrf run --scenario {path} --policy {policy} --seed {seed} --json out.json: stop_reason {r.stop_reason}, "
                               f"events {r.events}, unfinished_tasks {r.unfinished_tasks}, invariant_violations {r.invariant_violations[:5]}")
        assert r.jobs is not None
        out["runs"][policy] = {"jct": job_jct(r.jobs, described), "makespan": r.makespan, "stop_reason": r.stop_reason, "allocations": r.allocations,
                               "sim_s": r.runtime_s, "wall_s": wall, "backlog": backlog.summary()}
    return out


def collect(todo: Sequence[tuple[int, float]], workers: int) -> list[dict[str, Any]]:
    """``emulate`` for every (seed, load), in order."""
    if workers <= 1:
        return [emulate(s, load) for s, load in todo]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(emulate, [s for s, _ in todo], [load for _, load in todo]))


# -- analysis ---------------------------------------------------------------------------------------
def rho(means: Sequence[float]) -> float:
    """Spearman's rank correlation of ``means`` with their order (nan with fewer than 2)."""
    ok = [(i, m) for i, m in enumerate(means) if not math.isnan(m)]
    return spearman([i for i, _ in ok], [m for _, m in ok])["rho"]


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Spearman's rho and its p-value (nan when either side is constant or too short)."""
    if len(x) < 2 or len(set(np.asarray(x).tolist())) < 2 or len(set(np.asarray(y).tolist())) < 2:
        return {"rho": math.nan, "p": math.nan}
    r = stats.spearmanr(x, y)
    return {"rho": float(r.statistic), "p": float(r.pvalue)}


def binned(ju: np.ndarray, jd: np.ndarray, key: np.ndarray, bins: Sequence[tuple[int, int]], busy: np.ndarray | None = None) -> list[dict[str, Any]]:
    """Per bin of ``key``: its jobs, the mean, standard error and median of their
    reductions 1 - JCT_udrf / JCT_drf, the reduction of the bin's mean JCT, and (with
    ``busy``) the mean reduction of the jobs that arrived while their tenant had another
    job running under DRF and of those that did not."""
    rows = []
    for lo, hi in bins:
        sel = (key >= lo) & (key <= hi)
        v = 1.0 - ju[sel] / jd[sel]
        row = {"bin": f"{lo}" if lo == hi else f"{lo}-{hi}", "jobs": int(sel.sum()), "mean": float(v.mean()) if v.size else math.nan,
               "median": float(np.median(v)) if v.size else math.nan, "sem": float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan,
               "of_mean_jct": float(1.0 - ju[sel].mean() / jd[sel].mean()) if v.size else math.nan}
        if busy is not None:
            for name, flag in (("busy", True), ("idle", False)):
                w = v[busy[sel] == flag]
                row[f"{name}_jobs"], row[f"{name}_mean"] = int(w.size), float(w.mean()) if w.size else math.nan
        rows.append(row)
    return rows


def tenant_busy(jobs: Sequence[dict[str, Any]], jct_drf: Sequence[float]) -> np.ndarray:
    """Per job: did it arrive while another job of its tenant was running (under DRF)?"""
    out = np.zeros(len(jobs), dtype=bool)
    for i, j in enumerate(jobs):
        out[i] = any(k != i and o["tenant"] == j["tenant"] and o["arrival"] <= j["arrival"] < o["arrival"] + jct_drf[k] for k, o in enumerate(jobs))
    return out


def tenant_work(jobs: Sequence[dict[str, Any]]) -> np.ndarray:
    """Per job, its tenant's tasks in the seed (over every class and job of the tenant)."""
    total: dict[str, int] = {}
    for j in jobs:
        total[j["tenant"]] = total.get(j["tenant"], 0) + j["repetitions"] * len(j["classes"])
    return np.array([total[j["tenant"]] for j in jobs])


def in_use(run: dict[str, Any]) -> float:
    """A run's CPU and memory in use where work waited (``Backlog``), their mean; nan when
    no run ever waited at a look (the raw figures hold it as null)."""
    return float(np.mean([math.nan if x is None else x for x in run["backlog"]["in_use"]]))


def analyse(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    reps = np.array([d["repetitions"] for r in runs for d in r["jobs"]])
    ncls = np.array([len(d["classes"]) for r in runs for d in r["jobs"]])
    jct = {p: np.array([x for r in runs for x in r["runs"][p]["jct"]]) for p in POLICIES}
    red = 1.0 - jct["udrf"] / jct[BASELINE]
    busy = np.concatenate([tenant_busy(r["jobs"], r["runs"][BASELINE]["jct"]) for r in runs])
    by_reps, by_classes = binned(jct["udrf"], jct[BASELINE], reps, REP_BINS, busy), binned(jct["udrf"], jct[BASELINE], ncls, CLASS_BINS, busy)
    work = np.concatenate([tenant_work(r["jobs"]) for r in runs])
    per_seed = []
    for r in runs:
        u, d = np.array(r["runs"]["udrf"]["jct"]), np.array(r["runs"][BASELINE]["jct"])
        rr = 1.0 - u / d
        k_reps = np.array([j["repetitions"] for j in r["jobs"]])
        k_cls = np.array([len(j["classes"]) for j in r["jobs"]])
        per_seed.append({"seed": r["seed"], "mean_jct_udrf": float(u.mean()), "mean_jct_drf": float(d.mean()), "median_jct_udrf": float(np.median(u)),
                         "median_jct_drf": float(np.median(d)), "mean_reduction": float(rr.mean()),
                         "in_use_udrf": in_use(r["runs"]["udrf"]), "in_use_drf": in_use(r["runs"][BASELINE]),
                         "rho_reps": rho([b["mean"] for b in binned(u, d, k_reps, REP_BINS)]), "rho_classes": rho([b["mean"] for b in binned(u, d, k_cls, CLASS_BINS)])})
    q = (10, 25, 50, 75, 90)
    return {
        "jobs": int(red.size),
        "jct": {p: {"mean": float(jct[p].mean()), "median": float(np.median(jct[p])), **{f"p{k}": float(np.percentile(jct[p], k)) for k in q}} for p in POLICIES},
        "deciles_udrf_le_drf": int(sum(np.percentile(jct["udrf"], k) <= np.percentile(jct[BASELINE], k) for k in range(10, 100, 10))),
        "deciles_udrf_lt_drf": int(sum(np.percentile(jct["udrf"], k) < np.percentile(jct[BASELINE], k) for k in range(10, 100, 10))),
        "reduction": {"mean": float(red.mean()), "median": float(np.median(red)), "faster": int((red > 0.01).sum()), "slower": int((red < -0.01).sum())},
        "by_repetitions": by_reps,
        "by_classes": by_classes,
        "rho_bins_repetitions": rho([b["mean"] for b in by_reps]),
        "rho_bins_classes": rho([b["mean"] for b in by_classes]),
        "rho_jobs_repetitions": spearman(reps, red),
        "rho_jobs_classes": spearman(ncls, red),
        "rho_jobs_tenant_tasks": spearman(work, red),
        "per_seed": per_seed,
        "seeds_rho_reps_positive": sum(1 for s in per_seed if s["rho_reps"] > 0),
        "seeds_rho_classes_positive": sum(1 for s in per_seed if s["rho_classes"] > 0),
        # the seeds whose trend has a sign (a sign test leaves out ties and seeds without a trend)
        "seeds_rho_reps_signed": sum(1 for s in per_seed if not math.isnan(s["rho_reps"]) and s["rho_reps"] != 0),
        "seeds_rho_classes_signed": sum(1 for s in per_seed if not math.isnan(s["rho_classes"]) and s["rho_classes"] != 0),
        "seeds_mean_jct_lower": sum(1 for s in per_seed if s["mean_jct_udrf"] < s["mean_jct_drf"]),
        # fig. 9: the CPU and memory in use while work waits (their mean), lower under DRF: more of the cluster idle while jobs wait
        "seeds_drf_wastes_more": sum(1 for s in per_seed if s["in_use_drf"] < s["in_use_udrf"]),
        "seeds_waste_differs": sum(1 for s in per_seed if s["in_use_drf"] != s["in_use_udrf"]),
    }


# -- the raw figures --------------------------------------------------------------------------------
def _round(x: Any) -> Any:
    if isinstance(x, float):
        return None if math.isnan(x) else round(x, 4)
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_round(v) for v in x]
    return x


#: a run record's per-job columns, one list each (a job's stream is "{tenant}-{job}", its
#: classes joined by "+")
JOB_COLUMNS = ("tenant", "job", "classes", "repetitions", "arrival", "jct_udrf", f"jct_{BASELINE}")


def run_record(r: dict[str, Any]) -> dict[str, Any]:
    """One seed and load's raw figures: each policy's run, and the jobs as JOB_COLUMNS."""
    jobs = r["jobs"]
    columns = {"tenant": [j["tenant"] for j in jobs], "job": [j["job"] for j in jobs], "classes": ["+".join(j["classes"]) for j in jobs],
               "repetitions": [j["repetitions"] for j in jobs], "arrival": [j["arrival"] for j in jobs],
               **{f"jct_{p}": [round(x, 3) for x in r["runs"][p]["jct"]] for p in POLICIES}}
    return {"seed": r["seed"], "load": r["load"], **{p: {k: _round(v) for k, v in r["runs"][p].items() if k not in ("wall_s", "jct")} for p in POLICIES}, **columns}


def runs_from_raw(raw: dict[str, Any], load: float) -> list[dict[str, Any]]:
    """The run records of ``load`` in ``analyse``'s form (the inverse of ``run_record``): the
    page's every figure comes from the raw figures, not from the runs in memory."""
    out = []
    for rec in raw["runs"]:
        if rec["load"] != load:
            continue
        jobs = []
        for i, job in enumerate(rec["job"]):
            classes = rec["classes"][i].split("+")
            jobs.append({"tenant": rec["tenant"][i], "job": job, "classes": classes, "repetitions": rec["repetitions"][i], "arrival": rec["arrival"][i],
                         "streams": [f"{rec['tenant'][i]}-{job}"]})
        out.append({"seed": rec["seed"], "load": rec["load"], "jobs": jobs, "streams": len(jobs),
                    "tasks": sum(j["repetitions"] * len(j["classes"]) for j in jobs),
                    "runs": {p: {**rec[p], "jct": rec[f"jct_{p}"]} for p in POLICIES}})
    return out


# -- the relations and the page ---------------------------------------------------------------------
def pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{100 * x:+.1f} %"


def bins_txt(rows: Sequence[dict[str, Any]]) -> str:
    return "; ".join(f"{b['bin']}: {pct(b['mean'])}" for b in rows)


def sign_test(m: dict[str, int]) -> bool:
    """Do the seeds whose trend rises (``positive`` of ``seeds`` with a signed trend)
    outnumber those where it falls beyond chance (one-sided sign test, p < ALPHA)?"""
    return m["seeds"] > 0 and float(stats.binomtest(m["positive"], m["seeds"], 0.5, alternative="greater").pvalue) < ALPHA


def sign_p(positive: int, seeds: int) -> float:
    return float(stats.binomtest(positive, seeds, 0.5, alternative="greater").pvalue) if seeds else math.nan


def analysis(raw: dict[str, Any]) -> dict[str, Any]:
    """``analyse`` of the runs at LOAD, from the raw figures."""
    return analyse(runs_from_raw(raw, raw["load"]))


def tables(raw: dict[str, Any]) -> list[Table]:
    a = analysis(raw)
    n = len(raw["seeds"])
    ju, jd = a["jct"]["udrf"], a["jct"][BASELINE]
    cross = 0 < a["deciles_udrf_lt_drf"] < 9
    why_a = ("the deciles of every seed's jobs pooled; 'improves job completion times' read as UDRF's JCT lower at every decile"
             + (f"; the CDFs cross: UDRF's p10 {ju['p10']:.1f} s vs {jd['p10']:.1f} s, p90 {ju['p90']:.0f} s vs {jd['p90']:.0f} s" if cross else ""))
    why_trend = (f"reduction = 1 − JCT_udrf / JCT_{BASELINE} per job, its mean per bin; a trend grows when the seeds whose bin means rise "
                 f"(Spearman's ρ with the bins' order > 0) outnumber those where they fall beyond chance")

    def trend(key: str) -> dict[str, int]:
        return {"positive": a[f"seeds_rho_{key}_positive"], "seeds": a[f"seeds_rho_{key}_signed"]}

    def no_trend(key: str) -> Alternative:
        signed = trend(key)["seeds"]
        return Alternative(f"no trend: the reduction rising in half the seeds ({signed // 2} of {signed})", {"positive": signed // 2, "seeds": signed})

    def trend_txt(key: str, name: str, by: str) -> str:
        t, pooled, per_job = trend(key), a[f"rho_bins_{name}"], a[f"rho_jobs_{name}"]
        return (f"the reduction rises over the bins in {t['positive']} of the {t['seeds']} seeds with a signed trend (sign test p = {sign_p(t['positive'], t['seeds']):.2g}); "
                f"mean reduction per bin of {by} {bins_txt(a['by_' + name])}, pooled ρ(bin means) = {pooled:+.2f}; "
                f"per job ρ = {per_job['rho']:+.2f} (p = {per_job['p']:.2g})")

    sign_tol = f"one-sided sign test over the seeds, p < {ALPHA:g}"
    waste = {"positive": a["seeds_drf_wastes_more"], "seeds": a["seeds_waste_differs"]}
    use_u = np.mean([s["in_use_udrf"] for s in a["per_seed"]])
    use_d = np.mean([s["in_use_drf"] for s in a["per_seed"]])
    paper = Table(f"online UDRF (`udrf`) vs the paper's DRF (`{BASELINE}`: the (class, resource) pairs as resources, each tenant's jobs in equal counts), "
                  "whole multi-class jobs (jobs of parts), dgdrf's central scheduler", [
        Relation("fig. 9, §V", "DRF wastes CPU and memory compared with UDRF: \"the number of job instance of each job are equal and fixed. This causes DRF to do not "
                 "utilizes the all resource available\"", "more waste under DRF (a time series, no numbers)",
                 f"less in use, in the classes waiting jobs need, under DRF in {waste['positive']} of the {waste['seeds']} seeds (sign test p = {sign_p(waste['positive'], waste['seeds']):.2g}); "
                 f"CPU and memory in use there, their mean: {100 * use_d:.1f} % under DRF, {100 * use_u:.1f} % under UDRF", sign_tol, measured=waste, judge=sign_test,
                 alternative=Alternative(f"no difference: DRF's lower in half the seeds ({waste['seeds'] // 2} of {waste['seeds']})", {"positive": waste["seeds"] // 2, "seeds": waste["seeds"]}),
                 why=(f"waste read as what is idle where work waits: every {LOOK_EVERY:g} simulated s, in each class a job with a run waiting needs, the CPU and memory "
                      "in use (fractions of the class's capacity), their mean over the looks, classes and the two resources")),
        Relation("fig. 10a, §VII", "UDRF improves job completion times over DRF: \"UDRF achieves significant improvements in terms of reducing wasted resources while "
                 "improving job completion times\" (§VII)", "CDFs (no numbers)",
                 f"UDRF < DRF at {a['deciles_udrf_lt_drf']} of 9 deciles (pooled jobs); mean {ju['mean']:.0f} s vs {jd['mean']:.0f} s, median {ju['median']:.1f} s vs "
                 f"{jd['median']:.1f} s; UDRF's mean lower in {a['seeds_mean_jct_lower']} of {n} seeds",
                 "UDRF's JCT lower at all 9 deciles", measured=a["deciles_udrf_lt_drf"], judge=equals(9),
                 alternative=Alternative("CDFs that cross (UDRF lower at 8 of 9 deciles)", 8), why=why_a),
        Relation("fig. 10b, §V", "\"the more times the job is required to execute, the higher reduction in completion time is expected from UDRF\"",
                 "a rising trend (no numbers)", trend_txt("reps", "repetitions", "repetitions"), sign_tol, measured=trend("reps"), judge=sign_test,
                 alternative=no_trend("reps"), why=why_trend),
        Relation("fig. 10c, §V", "\"the more machine classes the job needs, the more time reduction is expected\"", "a rising trend (no numbers)",
                 trend_txt("classes", "classes", "classes per job"), sign_tol, measured=trend("classes"), judge=sign_test, alternative=no_trend("classes"), why=why_trend),
    ])
    return [paper]


def bins_table(title: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    out = [f"| {title} | jobs | mean reduction | ± s.e. | median reduction | reduction of the mean JCT | mean reduction, tenant busy at arrival (jobs) | "
           "mean reduction, tenant idle (jobs) |", "|---|---|---|---|---|---|---|---|"]
    for b in rows:
        sem = "—" if math.isnan(b["sem"]) else f"{100 * b['sem']:.1f} %"
        out.append(f"| {b['bin']} | {b['jobs']} | {pct(b['mean'])} | {sem} | {pct(b['median'])} | {pct(b['of_mean_jct'])} | {pct(b['busy_mean'])} ({b['busy_jobs']}) | "
                   f"{pct(b['idle_mean'])} ({b['idle_jobs']}) |")
    return out


def sensitivity_table(by_load: dict[float, dict[str, Any]]) -> list[str]:
    out = ["| load | seeds | mean JCT udrf / drf | median JCT udrf / drf | mean reduction | seeds rising / signed, repetitions | seeds rising / signed, classes | "
           "per job ρ, tenant's tasks |", "|---|---|---|---|---|---|---|---|"]
    for load, a in sorted(by_load.items()):
        ju, jd = a["jct"]["udrf"], a["jct"][BASELINE]
        out.append(f"| {load:g} | {len(a['per_seed'])} | {ju['mean']:.0f} / {jd['mean']:.0f} s | {ju['median']:.0f} / {jd['median']:.0f} s | {pct(a['reduction']['mean'])} | "
                   f"{a['seeds_rho_reps_positive']} / {a['seeds_rho_reps_signed']} | {a['seeds_rho_classes_positive']} / {a['seeds_rho_classes_signed']} | "
                   f"{a['rho_jobs_tenant_tasks']['rho']:+.2f} |")
    return out


def command(raw: dict[str, Any]) -> str:
    """The command that made ``raw``."""
    seeds, other = len(raw["seeds"]), raw["other_seeds"]
    return "python bench/papers/tahir_trends.py --out bench/results/papers" + (f" --seeds {seeds}" if seeds != SEEDS else "") + (
        f" --other-seeds {other}" if other != OTHER_SEEDS else "")


def render(raw: dict[str, Any]) -> str:
    """The page, from the raw figures alone."""
    a = analysis(raw)
    runs = runs_from_raw(raw, raw["load"])
    seeds = raw["seeds"]
    n = len(seeds)
    by_load = {raw["load"]: a, **{load: analyse(runs_from_raw(raw, load)) for load in OTHER_LOADS if raw["other_seeds"]}}
    tasks = sum(r["tasks"] for r in runs)
    records = raw["runs"]
    drained = sum(1 for rec in records for p in POLICIES if rec[p]["stop_reason"] == "drained")
    classes = ", ".join(f"{c} {v['servers']}×<{v['capacity'][0]:g}, {v['capacity'][1]:g}>" for c, v in raw["classes"].items())
    intro = f"""Tahir et al.'s §V compares their online UDRF with DRF on 24 h of the Google trace and shows,
without numbers, that DRF wastes CPU and memory (fig. 9), and that UDRF shortens job
completion times (fig. 10a), more so for jobs that run more times (10b) and need more
machine classes (10c). Their DRF takes the machine classes as resources and each user as
one bundle of its jobs in equal counts (§II-A, fig. 2: "the number of job instance of each
job are equal and fixed"). Here it is `{BASELINE}`: a tenant's share is its largest share
of a (class, resource) pair (as UDRF's), its next placement an instance of its waiting job
with the fewest instances running, and the tenant waits when that one does not fit (our
reading online: dgdrf/policies/centralized.py `select_bundle_drf`). A job over several
classes is one job of parts, one part a class, each run placed whole (all or nothing).

The workload is synthetic, in the spirit of §V (`bench/papers/tahir_trends.py`, its
docstring has every choice): {len(raw['classes'])} machine classes ({classes}; a class is one
pool, its servers' attribute `class`); per seed {raw['jobs_per_seed']} jobs of {raw['tenants']} tenants, each
needing 1-4 classes (35/30/20/15 %) and run a log-uniform 1-{raw['max_repetitions']} times, each run of
uniform 10-100 s, Poisson arrivals at offered load {raw['load']:g}. A job is a job stream of its
tenant (a scenario user with `tenant`): one finite job of `repetitions` runs, each run one
task on each of its classes, placed whole; its JCT is its last run's end - its arrival, and
its reduction 1 - JCT_udrf / JCT_{BASELINE}. {n} seeds ({seeds[0]}-{seeds[-1]}), {a['jobs']} jobs,
{tasks:,} tasks, each scenario under `udrf` and `{BASELINE}` with the same run seed (the same
runs for as long); {drained} of {len(records) * len(POLICIES)} runs (every load) ended `drained` with no invariant violation
(no run with a part missing). A trend "grows" when the seeds whose reduction rises over the
bins (Spearman's ρ of the seed's bin means with the bins' order, 5 bins of repetitions, 4
of classes) outnumber those where it falls beyond chance: a one-sided sign test, p < {ALPHA:g}
(no trend puts half the seeds each way); the pooled ρ is shown too.

**What differs from the paper.** The workload is synthetic, not the Google trace
({len(raw['classes'])} classes, not 700), and arrivals are open (Poisson at a set load), not a waiting
queue kept at 100 jobs; the central scheduler places one run every 0.1 s tick, not a batch
every second; the paper's DRF online is our reading (its text gives the offline rule)."""
    notes = [
        "## JCT (every seed's jobs pooled)",
        "",
        "| policy | mean | p10 | p25 | median | p75 | p90 |",
        "|---|---|---|---|---|---|---|",
        *[f"| {p} | {a['jct'][p]['mean']:.1f} s | {a['jct'][p]['p10']:.1f} | {a['jct'][p]['p25']:.1f} | {a['jct'][p]['median']:.1f} | {a['jct'][p]['p75']:.1f} | {a['jct'][p]['p90']:.1f} |"
          for p in POLICIES],
        "",
        f"Per job: mean reduction {pct(a['reduction']['mean'])}, median {pct(a['reduction']['median'])}; "
        f"{a['reduction']['faster']} jobs more than 1 % faster under UDRF, {a['reduction']['slower']} more than 1 % slower, of {a['jobs']}. "
        f"Per job, the reduction's Spearman correlation with its tenant's tasks in the seed (all its jobs, all classes): "
        f"ρ = {a['rho_jobs_tenant_tasks']['rho']:+.2f} (p = {a['rho_jobs_tenant_tasks']['p']:.2g}).",
        "",
        "## Reduction by repetition count (fig. 10b)",
        "",
        *bins_table("repetitions", a["by_repetitions"]),
        "",
        "## Reduction by classes per job (fig. 10c)",
        "",
        *bins_table("classes", a["by_classes"]),
        "",
        "## Per seed",
        "",
        "| seed | mean JCT udrf | mean JCT drf | median udrf | median drf | mean reduction | ρ repetitions | ρ classes |",
        "|---|---|---|---|---|---|---|---|",
        *[f"| {s['seed']} | {s['mean_jct_udrf']:.1f} | {s['mean_jct_drf']:.1f} | {s['median_jct_udrf']:.1f} | {s['median_jct_drf']:.1f} | {pct(s['mean_reduction'])} | "
          f"{s['rho_reps']:+.2f} | {s['rho_classes']:+.2f} |" for s in a["per_seed"]],
    ]
    if len(by_load) > 1:
        notes += ["", "## Other loads (not relations: does the verdict depend on the load?)", "",
                  "The same seeds' jobs, classes and repetitions, their arrivals spread for another offered load.", "", *sensitivity_table(by_load)]
    sim = sum(r["runs"][p]["sim_s"] for r in runs for p in POLICIES) / 3600
    notes += ["", f"{2 * n} emulated runs at load {raw['load']:g}, {sim:.1f} simulated hours (wall times go to stderr, so that a rerun rewrites this page byte for byte)."]
    return page("Tahir et al. (UDRF): fig. 10's trends on synthetic multi-class jobs", "Tahir, Yang, Koliousis, McCann: UDRF: multi-resource fairness for complex jobs",
                intro, tables(raw), [command(raw)], "\n".join(notes))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"))
    ap.add_argument("--seeds", type=int, default=SEEDS, help=f"scenario and run seeds 1..N at load {LOAD:g} (default {SEEDS})")
    ap.add_argument("--other-seeds", type=int, default=OTHER_SEEDS, help=f"seeds 1..N at each of the other loads {OTHER_LOADS} (0: none; default {OTHER_SEEDS})")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (the page does not depend on it; default 2)")
    args = ap.parse_args(argv)
    seeds = list(range(1, args.seeds + 1))
    todo = [(s, LOAD) for s in seeds] + [(s, load) for load in OTHER_LOADS for s in range(1, args.other_seeds + 1)]
    t0 = time.perf_counter()
    try:
        done = collect(todo, args.jobs)
    except RuntimeError as exc:
        print(f"tahir_trends: {exc}", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0
    doc: dict[str, Any] = {"seeds": seeds, "classes": {c: {"capacity": list(cap), "servers": n} for c, (cap, n) in CLASSES.items()}, "tenants": TENANTS,
                           "jobs_per_seed": JOBS, "max_repetitions": MAX_REPS, "load": LOAD, "other_seeds": args.other_seeds, "runs": [run_record(r) for r in done]}
    raw = json.loads(compact_json(_round(doc)))  # the figures as the page's test reads them back
    write(args.out, NAME, raw, render(raw))
    print((args.out / f"{NAME}.md").read_text())
    walls = [r["runs"][p]["wall_s"] for r in done for p in POLICIES]
    print(f"{wall:.0f} s of wall time on {os.cpu_count()} cores ({args.jobs} workers), {len(walls)} runs of {min(walls):.1f}-{max(walls):.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
