"""Wang et al.'s trace-driven simulation (TSF, §VI-B: figs. 8-11) as relations: two pages
under bench/results/papers/, each with its raw figures (NAME.json) and its JCT and
queueing-delay CDFs (NAME-jct.png).

    python bench/papers/wang_trace.py --out bench/results/papers [--seeds 3] [--jobs 2] [--cache DIR]
    python bench/papers/wang_trace.py --experiment wang-trace-contended --out bench/results/papers [--seeds 10]
    python bench/papers/wang_trace.py [--experiment NAME] --out bench/results/papers --render-only   # the page from its json, nothing run

The pages (``EXPERIMENTS``):

- ``wang-trace``: configs/wang-trace-1000.toml, the google-2011-jobs generator on the
  paper's 1,000 machines, an hour of 4,500 jobs (one user each: the paper's fairness is
  between jobs), 85 % of them restricted to machines with given attributes; fifo, drf,
  cdrf, tsf and psdsf, 3 seeds. Its jobs do not contend, so figs. 9-11 are n/a there.
- ``wang-trace-contended``: configs/wang-trace-contended.toml, the same generator on 100
  machines with 2,300 jobs, a load at which jobs contend; the paper's six policies: fifo,
  drf, cdrf, tsf and its CMMF baselines "CPU" and "Mem" (``cmmf-cpu``, ``cmmf-mem``:
  Choosy's rule on one resource), 10 seeds (the paper averages 50 simulations).

Each config's comment gives its readings. A page's policies run for run seeds
1..``--seeds`` (the seed draws the task durations, each job's from its own stream, and
the message latencies: within a seed every policy runs the same tasks for as long), each
a full emulation (``run_emulation``) in a process of its own, so that its peak memory is
its own. ``fifo`` and ``drf`` are user-driven (the lowest dominant share's task on the
first server that fits); ``cdrf``, ``tsf``, ``cmmf-cpu`` and ``cmmf-mem`` decide by server
offers, one task per offer; ``psdsf`` (Kesidis et al.'s per-server dominant share, offers)
runs beside them on the first page, in the tables but in none of the paper's relations.
Every run's wall and CPU time per simulated hour is recorded.

What is measured (the paper's definitions, §VI-B2-3):

- job queueing delay: its first task's start - its arrival (fig. 9a);
- job completion time (JCT): its last task's end - its arrival (fig. 9b);
- per-job speedup of TSF over an alternative X, in four size bins (<= 10, 11-100, 101-500,
  > 500 tasks; fig. 10): the paper defines it as "the difference between its completion
  time using an alternative algorithm and TSF" and reports it in per cent ("on average of
  10 % faster"), so ours is (JCT_X - JCT_TSF) / JCT_X, the fraction of its completion time
  TSF saves, its mean and standard deviation per bin;
- task queueing delay: a task's start - its job's arrival (every task is submitted when
  its job arrives; fig. 11a);
- per-task speedup: the reduction of a task's queueing delay under TSF against X (fig.
  11b), the same task (its job and index in the job) matched across the runs of a seed; a
  task counts as faster or slower when the difference exceeds ``SAME_S`` (1 s: the
  scheduler's own tick and message latencies move every delay by a few milliseconds).

The paper's comparisons (figs. 9-11) are judged only when the runs contend (``contention``:
two or more jobs waiting at once in half the looks, or the cluster's CPU full); on a
workload where they do not, a difference near zero would hold or fail for no policy's
reason, and those rows are n/a with the figures that say so. A claim about a policy a
page does not run is left out of that page.

Every run must end ``drained`` with no invariant violation (no task on a machine its job
does not admit, none over capacity): a run that does not is a bug, and the script stops
with the command that shows it, its events and its unfinished tasks, instead of recording it.

Cost (2 cores shared with other work): wang-trace, 4-10 min of wall time a run, about 6
simulated hours each, 15 runs at 3 seeds: about an hour with ``--jobs 2``;
wang-trace-contended, 65-99 CPU s a run (the page's cost table records each), 60 runs at
10 seeds: about 45 min with ``--jobs 2`` (timed by hand, not recorded).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.bench.relations import Alternative, Relation, Table, drain_problems, near, page, within, write
from dgdrf.config import RunConfig, load_scenario
from dgdrf.emulation import run_emulation
from dgdrf.model.generators import offered_load
from dgdrf.runtime.process import die_with_parent
from dgdrf.world import Observer

NAME = "wang-trace"
ROOT = Path(__file__).resolve().parents[2]
CONFIG = "configs/wang-trace-1000.toml"
HORIZON = 3600.0


@dataclass(frozen=True)
class Experiment:
    """One page: its scenario, the policies run on it and how many run seeds by default."""

    name: str
    config: str
    policies: tuple[str, ...]
    seeds: int


#: the pages: the paper's scale (1,000 machines, no contention between jobs: figs. 9-11
#: n/a) and a load at which jobs contend, under the paper's six policies
EXPERIMENTS = {
    e.name: e
    for e in (
        Experiment(NAME, CONFIG, ("fifo", "drf", "cdrf", "tsf", "psdsf"), 3),
        Experiment("wang-trace-contended", "configs/wang-trace-contended.toml", ("fifo", "drf", "cdrf", "tsf", "cmmf-cpu", "cmmf-mem"), 10),
    )
}
#: every page's name (the tests rebuild each from its raw figures)
NAMES = tuple(EXPERIMENTS)
#: every policy some page runs
POLICIES = tuple(dict.fromkeys(p for e in EXPERIMENTS.values() for p in e.policies))
#: the policies of the paper's figures: FIFO, DRF, CDRF, TSF and CMMF on CPU and on memory
PAPER = ("fifo", "drf", "cdrf", "tsf", "cmmf-cpu", "cmmf-mem")
#: the paper's names for them
PAPER_NAME = {"fifo": "FIFO", "drf": "DRF", "cdrf": "CDRF", "tsf": "TSF", "cmmf-cpu": "CPU", "cmmf-mem": "Mem"}
#: simulated seconds between two looks at the jobs waiting
WAIT_EVERY = 60.0
#: the paper's fair policies
FAIR = ("drf", "cdrf", "tsf", "cmmf-cpu", "cmmf-mem")
#: TSF's alternatives in figs. 10 and 11b ("the four alternatives")
ALTERNATIVES = ("drf", "cdrf", "cmmf-cpu", "cmmf-mem")
SAMPLE_EVERY = 60.0
#: fig. 10's job-size bins: (label, fewest tasks, most tasks)
BINS = (("<= 10", 1, 10), ("11-100", 11, 100), ("101-500", 101, 500), ("> 500", 501, 10**9))
#: a job or task is faster or slower under one policy than another when its time differs by more than this
SAME_S = 1.0
#: a job's queueing delay is "salient" (fig. 9a: "40 % of jobs suffering from salient queueing delay") above this
SALIENT_S = 10.0
#: the paper's figures and our tolerances (decided before the runs)
PAPER_FASTER_THAN_FIFO = 0.80
FRACTION_TOL = 0.05
PAPER_FIFO_SPEEDUP = 6.0  # "up to 6x": the horizontal gap between the JCT CDFs, read as within a factor 2
PAPER_TSF_SAVING = 0.10  # "on average of 10 % faster" for medium and big jobs
SAVING_TOL = 0.05
SMALL_SAVING_TOL = 0.05  # "little speedup for small jobs"
SIMILAR_JCT_TOL = 0.10  # fig. 9b: "similar completion time across all fair sharing algorithms"
PAPER_SALIENT = 0.40
FIFO_LONGER = 2.0  # fig. 9a: FIFO's "intolerably long" job queueing delay, read as at least twice every fair policy's mean
PAPER_TSF_TASKS_FASTER = 0.60  # fig. 11b: DRF (and CPU) "results in 60 % of tasks with longer queuing delays than TSF"
PAPER_CDRF_FASTER, PAPER_CDRF_SLOWER = 0.30, 0.60  # fig. 11b: CDRF speeds up 30 % of tasks, slows 60 %
#: "the least", "the longest", "the worst" read as by at least this much (relative), so that a tie does not count
MARGIN = 0.05
#: fig. 10's huge jobs: "both speedup and slowdown" read as each for at least this share of the bin's jobs
HUGE_BOTH = 0.05
#: the runs contend (figs. 9-11 judged) when two or more jobs wait at once in this share of the looks...
CONTENDED_LOOKS = 0.5
#: ... or the cluster's CPU in use reaches this (full: FIFO can starve a job)
CONTENDED_CPU = 0.95
#: the mechanism of every policy comparison
SCHEDULER = "dgdrf's central scheduler, one placement a 1-ms tick, each policy its own rule (fifo and drf: a user's request placed first fit; the others: server offers, one task an offer)"
#: fig. 11b: "the performance of DRF and CPU are very close to each other", read as their mean task queueing delays within this (relative)
CLOSE = 0.05
QUANTILES = (10, 20, 30, 40, 50, 60, 70, 80, 90)
#: the figure's delays below this are drawn at it (log axes; the scheduler's tick is 1 ms)
FLOOR_S = 1e-3


def command(policy: str, seed: int, max_time: float | None = None, config: str = CONFIG) -> str:
    bound = f" --max-time {max_time:g}" if max_time else ""
    return f"dgdrf run --scenario {config} --policy {policy} --seed {seed} --sample-every {SAMPLE_EVERY:g}{bound} --json out.json"


class Watch(Observer):
    """Reads a run: every ``WAIT_EVERY`` simulated seconds, how many jobs have a task
    waiting, and how many of those fit nowhere now (do jobs compete? the policies can only
    differ when two waiting jobs could use the same machine); at its end, every task's
    start (the collector's job tracker) and the placements per second (is the central
    scheduler, one task a tick, ever the bottleneck?)."""

    def __init__(self) -> None:
        self.tasks: dict[tuple[str, int, int], float] = {}
        self.arrival: dict[tuple[str, int], float] = {}
        self.per_second: np.ndarray = np.zeros(0, dtype=np.int64)
        self.start = 0.0
        #: per user with at least 100 tasks: the median time between two of its placements
        self.user_gaps: list[float] = []
        #: (simulated s, jobs with a task waiting, of which fitting nowhere now, CPU in use)
        self.waiting: list[tuple[float, int, int, float]] = []

    def started(self, world) -> None:
        world.clock.call_later(max(0.0, world.start - world.clock.now()) + WAIT_EVERY, self._look, world)

    def _look(self, world) -> None:
        ledger = world.collector.ledger
        tasked, fits = ledger.tasked(), ledger.fits_anywhere()
        cap = ledger.capacity.sum(axis=0)
        self.waiting.append((world.clock.now() - world.start, int(tasked.sum()), int((tasked & ~fits).sum()), float(ledger.used.sum(axis=0)[0] / cap[0])))
        if world.collector.jobs.finite_work_left():
            world.clock.call_later(WAIT_EVERY, self._look, world)

    def finished(self, world, result) -> None:
        jobs = world.collector.jobs
        self.start = world.start
        self.tasks = dict(jobs.task_start)
        self.arrival = dict(jobs.arrival_at)
        times = np.array([a.time - world.start for a in world.collector.allocations])
        self.per_second = np.bincount(np.floor(times).astype(np.int64)) if len(times) else np.zeros(0, dtype=np.int64)
        by_user: dict[str, list[float]] = {}
        for a in world.collector.allocations:
            by_user.setdefault(a.user, []).append(a.time)
        self.user_gaps = [float(np.median(np.diff(t))) for t in by_user.values() if len(t) >= 100]


def emulate(policy: str, seed: int, path: str = CONFIG) -> dict[str, Any]:
    """One run's raw figures (in a process of its own). Raises on a run that did not drain
    cleanly (a bug)."""
    die_with_parent(signal.SIGKILL)  # the script stopped: no orphan run goes on for an hour
    scenario = load_scenario(ROOT / path)
    config = RunConfig.from_settings(scenario.settings, path, policy=policy, seed=seed, sample_every=SAMPLE_EVERY)
    watch = Watch()
    t0, c0, last = time.perf_counter(), time.process_time(), [0.0]

    def progress(sim: float, allocations: int) -> None:
        if sim - last[0] >= 1800:
            last[0] = sim
            print(f"  {policy} seed {seed}: {sim / 3600:.1f} simulated h, {allocations:,} placed, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    load = os.getloadavg()[0]
    r = run_emulation(scenario, config, progress=progress, observers=[watch])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    cost = {
        "policy": policy, "seed": seed, "stop_reason": r.stop_reason, "allocations": r.allocations, "sim_s": r.warmup_s + r.runtime_s, "wall_s": wall, "cpu_s": cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, "load_average": load,
    }
    problems = drain_problems(r)
    if problems:
        raise RuntimeError(f"{'; '.join(problems)}: {command(policy, seed, config=path)}")
    assert r.jobs is not None and r.samples is not None
    # one job a user (the config): a job is its user's, and a task is (user, index)
    order = [j["user"] for j in r.jobs]
    keys = sorted(watch.tasks)
    task_delay = np.array([watch.tasks[k] - watch.arrival[(k[0], k[1])] for k in keys])
    util = np.asarray(r.samples["utilization"]["cpu"]) if isinstance(r.samples["utilization"], dict) else None
    tick = config.tick
    busy = watch.per_second >= 0.9 / tick
    return cost | {
        "makespan": r.makespan,
        "jct_s": r.jct_s,
        "queueing_delay_s": r.queueing_delay_s,
        "jain_time_avg": r.jain_time_avg,
        "users": order,
        "arrival": [j["arrival"] for j in r.jobs],
        "first_start": [j["first_start"] for j in r.jobs],
        "jct": [j["jct"] for j in r.jobs],
        "tasks": [j["tasks"] for j in r.jobs],
        "task_keys": [f"{u}/{j}/{k}" for u, j, k in keys],
        "task_delay": task_delay.tolist(),
        "cpu_utilisation_mean": None if util is None else float(np.mean(util)),
        "scheduler": {
            "tick": tick,
            "busiest_second": int(watch.per_second.max()) if len(watch.per_second) else 0,
            "seconds_at_90pc_of_ticks": int(busy.sum()),
            "seconds_with_placements": int((watch.per_second > 0).sum()),
            "user_gap_median": float(np.median(watch.user_gaps)) if watch.user_gaps else None,
        },
        "waiting": watch.waiting,
        "waiting_summary": {
            "max": max((x[1] for x in watch.waiting), default=0),
            "mean_first_2h": float(np.mean([x[1] for x in watch.waiting if x[0] <= 7200])) if watch.waiting else 0.0,
            "looks_with_2_or_more": float(np.mean([x[1] >= 2 for x in watch.waiting])) if watch.waiting else 0.0,
            "cpu_max": max((x[3] for x in watch.waiting), default=0.0),
        },
    }


# -- running ----------------------------------------------------------------------------------------
def collect(seeds: Sequence[int], jobs: int, cache: Path | None, log: Callable[[str], None], config: str = CONFIG, policies: Sequence[str] = POLICIES) -> dict[tuple[str, int], dict[str, Any]]:
    """Every run: (policy, seed) -> its raw figures."""
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    todo: list[tuple[str, int]] = []
    for seed in seeds:
        for policy in policies:
            path = cache / f"{policy}-s{seed}.json.gz" if cache else None
            if path is not None and path.exists():
                runs[(policy, seed)] = json.loads(gzip.decompress(path.read_bytes()))
                log(f"{policy} seed {seed}: cached ({path})")
            else:
                todo.append((policy, seed))
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
    # seed by seed (a page of fewer seeds can be made from the cache early), the longest first
    todo.sort(key=lambda x: (x[1], {"tsf": 0, "psdsf": 1, "cdrf": 2, "drf": 3, "fifo": 4}.get(x[0], 1)))
    with ProcessPoolExecutor(max_workers=jobs, max_tasks_per_child=1) as pool:
        futures = {pool.submit(emulate, p, s, config): (p, s) for p, s in todo}
        for f in as_completed(futures):
            p, s = futures[f]
            run = f.result()  # a run that did not drain raises here, with its command
            runs[(p, s)] = run
            log(f"{p} seed {s}: {run['stop_reason']} at {run['sim_s']:.0f} simulated s, {run['allocations']:,} tasks, wall {run['wall_s']:.0f} s, CPU {run['cpu_s']:.0f} s, peak {run['peak_rss_mb']:.0f} MiB")
            if cache:
                (cache / f"{p}-s{s}.json.gz").write_bytes(gzip.compress(json.dumps(run).encode()))
    return runs


# -- the scenario -------------------------------------------------------------------------------------
def describe(path: str = CONFIG) -> dict[str, Any]:
    """What configs/wang-trace-1000.toml holds, beside the paper's fig. 8 and §VI-B1."""
    s = load_scenario(ROOT / path)
    caps = np.array([sv.capacity for sv in s.servers])
    jobs = [j for u in s.users for j in u.jobs]
    tasks = np.array([j.tasks for j in jobs])
    # a job may run on a machine its constraint admits and its task fits on, empty
    usable = np.array([np.mean([j.constraint.admits(sv.id, sv.attribute_map) and bool(np.all(np.asarray(j.demand) <= cap + 1e-12)) for sv, cap in zip(s.servers, caps, strict=True)]) for j in jobs])
    return {
        "config": path,
        "servers": len(s.servers),
        "users": len(s.users),
        "jobs": len(jobs),
        "tasks": int(tasks.sum()),
        "offered_load": offered_load(s, HORIZON),
        "single_task": float(np.mean(tasks == 1)),
        "at_most_10_tasks": float(np.mean(tasks <= 10)),
        "largest_job": int(tasks.max()),
        "tasks_in_small_jobs": int(tasks[tasks <= 10].sum()),
        "constrained": float(np.mean([not j.constraint.unconstrained for j in jobs])),
        "run_everywhere": float(np.mean(usable == 1.0)),
        "run_on_at_most_20pc": float(np.mean(usable <= 0.2 + 1e-12)),
        "constrained_on_at_most_20pc": float(np.mean([u <= 0.2 + 1e-12 for u, j in zip(usable, jobs, strict=True) if not j.constraint.unconstrained])),
        "usable_median": float(np.median(usable)),
        "jobs_per_bin": {label: int(np.sum((tasks >= lo) & (tasks <= hi))) for label, lo, hi in BINS},
        "tick": float(s.settings["tick"]),
        "latency_ms": [float(x) for x in s.settings["latency_ms"]],
    }


# -- what the runs say ----------------------------------------------------------------------------------
def _arr(run: dict[str, Any], key: str) -> np.ndarray:
    return np.array([np.nan if x is None else x for x in run[key]], dtype=np.float64)


def summary(x: np.ndarray) -> dict[str, float]:
    return {"mean": float(np.mean(x)), "p50": float(np.percentile(x, 50)), "p95": float(np.percentile(x, 95)), "p99": float(np.percentile(x, 99)), "max": float(np.max(x))}


def job_delay(run: dict[str, Any]) -> np.ndarray:
    return _arr(run, "first_start") - _arr(run, "arrival")


def aligned_tasks(a: dict[str, Any], b: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Both runs' queueing delays of the same tasks (every task ran in both: drained)."""
    assert a["task_keys"] == b["task_keys"], "the two runs ran different tasks"
    return np.asarray(a["task_delay"]), np.asarray(b["task_delay"])


def _task_job_sizes(run: dict[str, Any]) -> np.ndarray:
    """Per task (in ``task_keys`` order): how many tasks its job has."""
    sizes = dict(zip(run["users"], run["tasks"], strict=True))
    return np.array([sizes[k.split("/", 1)[0]] for k in run["task_keys"]])


def ran(runs: dict[tuple[str, int], dict[str, Any]]) -> list[str]:
    """The policies of ``runs``, in the order they were given."""
    return list(dict.fromkeys(p for p, _ in runs))


def policies_of(raw: dict[str, Any]) -> list[str]:
    """The policies of a page's raw figures, in its order."""
    return list(raw["analysis"]["per_policy"])


def analyse(runs: dict[tuple[str, int], dict[str, Any]], seeds: Sequence[int]) -> dict[str, Any]:
    policies = ran(runs)
    out: dict[str, Any] = {"per_policy": {}, "vs_fifo": {}, "tsf_bins": {}, "tsf_tasks": {}, "similar_jct": {}}
    for p in policies:
        rs = [runs[(p, s)] for s in seeds]
        jct = np.concatenate([_arr(r, "jct") for r in rs])
        jd = np.concatenate([job_delay(r) for r in rs])
        td = np.concatenate([np.asarray(r["task_delay"]) for r in rs])
        # whose delay it is: each task's job size (a task key is user/job/index, one job a user)
        size = np.concatenate([_task_job_sizes(r) for r in rs])
        out["per_policy"][p] = {
            "jct": summary(jct),
            "jct_mean_seeds": [float(np.mean(_arr(r, "jct"))) for r in rs],
            "job_delay": summary(jd) | {"salient": float(np.mean(jd > SALIENT_S)), "salient_seeds": [float(np.mean(job_delay(r) > SALIENT_S)) for r in rs]},
            "task_delay": summary(td) | {"mean_seeds": [float(np.mean(r["task_delay"])) for r in rs],
                                         "share_in_jobs_over_500": float(td[size > 500].sum() / td.sum()) if td.sum() > 0 else 0.0,
                                         "delayed_over_1s": float(np.mean(td > SAME_S)),
                                         "delayed_in_jobs_over_100": float(np.mean(size[td > SAME_S] > 100)) if np.any(td > SAME_S) else 0.0},
            "makespan": [r["makespan"] for r in rs],
            "jain_time_avg": [r["jain_time_avg"] for r in rs],
            "cpu_utilisation_mean": [r["cpu_utilisation_mean"] for r in rs],
            "cost": {k: [r[k] for r in rs] for k in ("sim_s", "wall_s", "cpu_s", "peak_rss_mb", "load_average")},
            "scheduler": [r["scheduler"] for r in rs],
            "waiting": [r["waiting_summary"] for r in rs],
            "jct_quantiles": [float(np.percentile(jct, q)) for q in range(1, 100)],
            "job_delay_quantiles": [float(np.percentile(jd, q)) for q in range(1, 100)],
            "task_delay_quantiles": [float(np.percentile(td, q)) for q in range(1, 100)],
        }
    for p in policies:
        if p == "fifo":
            continue
        faster, slower, ratio, gap = [], [], [], []
        for s in seeds:
            f, x = _arr(runs[("fifo", s)], "jct"), _arr(runs[(p, s)], "jct")
            faster.append(float(np.mean(x < f - SAME_S)))
            slower.append(float(np.mean(x > f + SAME_S)))
            ratio.append(f / x)
            gap.append(max(np.percentile(f, q) / np.percentile(x, q) for q in QUANTILES))
        r = np.concatenate(ratio)
        fast = r[r > 1]
        out["vs_fifo"][p] = {
            "faster": float(np.mean(faster)), "faster_seeds": faster, "slower": float(np.mean(slower)),
            "speedup": {f"p{q}": float(np.percentile(r, q)) for q in (10, 25, 50, 75, 80, 90, 99)} | {"max": float(r.max()), "median_of_faster": float(np.median(fast)) if len(fast) else None},
            "cdf_gap": float(np.max(gap)), "cdf_gap_seeds": gap,
        }
    for p in policies:
        if p == "tsf":
            continue
        bins = {}
        for label, lo, hi in BINS:
            saving: list[np.ndarray] = []
            quicker: list[np.ndarray] = []
            later: list[np.ndarray] = []
            jx: list[np.ndarray] = []
            jt: list[np.ndarray] = []
            for s in seeds:
                a, t = _arr(runs[(p, s)], "jct"), _arr(runs[("tsf", s)], "jct")
                n = np.asarray(runs[("tsf", s)]["tasks"])
                m = (n >= lo) & (n <= hi)
                saving.append((a[m] - t[m]) / a[m])
                quicker.append(t[m] < a[m] - SAME_S)
                later.append(t[m] > a[m] + SAME_S)
                jx.append(a[m])
                jt.append(t[m])
            sv = np.concatenate(saving)
            bins[label] = {
                "jobs": len(sv), "mean": float(np.mean(sv)) if len(sv) else None, "std": float(np.std(sv)) if len(sv) else None,
                "mean_seeds": [float(np.mean(x)) if len(x) else None for x in saving],
                "tsf_faster": float(np.mean(np.concatenate(quicker))) if len(sv) else None, "tsf_slower": float(np.mean(np.concatenate(later))) if len(sv) else None,
                "mean_jct_ratio": float(np.mean(np.concatenate(jx)) / np.mean(np.concatenate(jt))) if len(sv) else None,
            }
        out["tsf_bins"][p] = bins
        faster, slower, d = [], [], []
        for s in seeds:
            x, t = aligned_tasks(runs[(p, s)], runs[("tsf", s)])
            faster.append(float(np.mean(x - t > SAME_S)))
            slower.append(float(np.mean(t - x > SAME_S)))
            d.append(x - t)
        dd = np.concatenate(d)
        out["tsf_tasks"][p] = {
            "tsf_faster": float(np.mean(faster)), "tsf_faster_seeds": faster, "tsf_slower": float(np.mean(slower)), "tsf_slower_seeds": slower,
            "reduction_quantiles": {f"p{q}": float(np.percentile(dd, q)) for q in (5, 10, 25, 50, 75, 90, 95)},
        }
        if p in FAIR:
            gaps = []
            for s in seeds:
                a, t = _arr(runs[(p, s)], "jct"), _arr(runs[("tsf", s)], "jct")
                gaps.append(max(abs(np.percentile(a, q) / np.percentile(t, q) - 1) for q in QUANTILES))
            out["similar_jct"][p] = {"max_decile_gap": float(max(gaps)), "seeds": gaps}
    return out


# -- the page ---------------------------------------------------------------------------------------------
def pct(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f} %"


def spct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{100 * x:+.{digits}f} %"


def seeds_txt(xs: Sequence[float], f: Callable[[float], str]) -> str:
    return " / ".join(f(x) for x in xs)


def contention(raw: dict[str, Any]) -> dict[str, Any]:
    """Did jobs contend in these runs (the paper's policies', every seed)? A fair policy can
    only reorder jobs that wait at the same time, and FIFO can only starve a job when the
    machines it needs are busy: the runs contend when two or more jobs waited at once in at
    least ``CONTENDED_LOOKS`` of the looks, or the cluster's CPU in use reached
    ``CONTENDED_CPU``. The comparisons of figs. 9-11 are judged only then (else n/a: a
    difference near zero would "hold" or "fail" for no policy's reason)."""
    looked = [p for p in PAPER if p in raw["analysis"]["per_policy"]]
    waits = [v for p in looked for v in raw["analysis"]["per_policy"][p]["waiting"]]
    c = {
        "looked": looked,
        "max_waiting": max(v["max"] for v in waits),
        "looks_with_2_or_more": float(np.mean([v["looks_with_2_or_more"] for v in waits])),
        "cpu_peak": max(v["cpu_max"] for v in waits),
    }
    c["contends"] = bool(c["looks_with_2_or_more"] >= CONTENDED_LOOKS or c["cpu_peak"] >= CONTENDED_CPU)
    c["why"] = f"n/a: no contention (at most {c['max_waiting']} jobs waiting at once, CPU in use at most {c['cpu_peak']:.2f}: see 'Do jobs contend here?'); "
    return c


def _fifo_longest(factor: float) -> Callable[[dict[str, float]], bool]:
    """The judge: FIFO's figure at least ``factor`` x every fair policy's (and above 0)."""
    return lambda m: m["fifo"] > 0 and all(m["fifo"] >= factor * m[p] for p in m if p != "fifo")


def _least(who: str, margin: float) -> Callable[[dict[str, float]], bool]:
    return lambda m: all(m[who] <= (1 - margin) * m[p] for p in m if p != who)


def _most(who: str, margin: float) -> Callable[[dict[str, float]], bool]:
    return lambda m: all(m[who] >= (1 + margin) * m[p] for p in m if p != who)


def _close(margin: float) -> Callable[[dict[str, float]], bool]:
    """The judge: the two figures within ``margin`` of each other (relative to the larger)."""
    return lambda m: max(m.values()) > 0 and (max(m.values()) - min(m.values())) <= margin * max(m.values())


def _names(policies: Sequence[str]) -> str:
    """The paper's names for ``policies``: "DRF, CDRF and TSF"."""
    names = [PAPER_NAME.get(p, p) for p in policies]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def tables(raw: dict[str, Any]) -> list[Table]:
    """Every relation of the page, from the committed raw figures only. The paper's six
    policies are judged among those the page ran; a claim about a policy it did not run
    is left out, and the page says which."""
    a, w = raw["analysis"], raw["scenario"]
    pp, vf, bins, tt = a["per_policy"], a["vs_fifo"], a["tsf_bins"], a["tsf_tasks"]
    present = policies_of(raw)
    paper = [p for p in PAPER if p in present]
    fair = [p for p in FAIR if p in present]
    alternatives = [p for p in ALTERNATIVES if p in present]
    absent = [p for p in PAPER if p not in present]
    c = contention(raw)

    def gate(judge: Callable[[Any], bool]) -> Callable[[Any], bool] | None:
        return judge if c["contends"] else None

    def why(text: str) -> str:
        return (c["why"] + text) if not c["contends"] else text

    not_run = f"; {_names(absent)}, which the paper also ranks, are not run on this page" if absent else ""
    workload = [
        Relation(
            "§VI-B1 (fig. 8a)", "less than 20 % of jobs can run on every machine (all 1,000)", "less than 20%", pct(w["run_everywhere"], 1), "< 20 %",
            measured=w["run_everywhere"], judge=lambda x: x < 0.20,
            alternative=Alternative(f"the generator's default constrained = 0.5 (here every unrestricted job fits every machine: {pct(1 - w['constrained'], 1)} unrestricted, {pct(w['run_everywhere'], 1)} run everywhere)", 0.5),
            why="a job can run on a machine its attributes admit and its task fits on; the generator's `constrained = 0.85`",
        ),
        Relation(
            "§VI-B1 (fig. 8a)", "50 % of jobs can run on at most a fifth of the machines (200 of 1,000)", "50% can run on 200", pct(w["run_on_at_most_20pc"], 1), f"± {100 * FRACTION_TOL:.0f} points",
            measured=w["run_on_at_most_20pc"], judge=near(0.5, FRACTION_TOL),
            alternative=Alternative(f"our attributes with every job restricted (constrained = 1): {pct(w['constrained_on_at_most_20pc'])} of the restricted jobs are on <= 20 %", w["constrained_on_at_most_20pc"]),
            why="our attributes (ConstraintModel, our choice: Sharma et al.'s measured distribution is not published in a usable form) leave "
            f"{pct(w['constrained_on_at_most_20pc'])} of the constrained jobs on <= 20 % of the machines; `constrained = 1` would give about that share of all jobs but none unrestricted. "
            "The generator cannot give both fig. 8a figures",
        ),
    ]
    fair_faster = {p: vf[p]["faster"] for p in fair}
    gaps = {p: vf[p]["cdf_gap"] for p in fair}
    jd = {p: pp[p]["job_delay"]["mean"] for p in paper}
    worst_fair = max(jd[p] for p in fair)
    salient = {p: pp[p]["job_delay"]["salient"] for p in fair}
    others = [p for p in fair if p != "tsf"]
    sim = {p: a["similar_jct"][p]["max_decile_gap"] for p in others}
    jobs = [
        Relation(
            "§VI-B2 (fig. 9b)", "fair sharing outperforms FIFO unambiguously, speeding up 80 % of jobs", "speeding up the completion of 80% of jobs",
            "; ".join(f"{p} {pct(vf[p]['faster'])} faster, {pct(vf[p]['slower'])} slower (seeds {seeds_txt(vf[p]['faster_seeds'], pct)})" for p in fair),
            f"± {100 * FRACTION_TOL:.0f} points, every fair policy", measured=fair_faster, judge=gate(lambda m: all(within(x, PAPER_FASTER_THAN_FIFO, FRACTION_TOL) for x in m.values())),
            alternative=Alternative("fair sharing speeding up 70 % of jobs", dict.fromkeys(fair, 0.70)),
            why=why(f"a job is faster when its JCT is more than {SAME_S:g} s below FIFO's in the same seed; the rest within {SAME_S:g} s or slower"),
        ),
        Relation(
            "§VI-B2 (fig. 9b)", "... by up to 6x", "by up to 6×",
            "; ".join(f"{p}: CDF gap {vf[p]['cdf_gap']:.1f}x, per-job speedup p50 {vf[p]['speedup']['p50']:.2f}x, p90 {vf[p]['speedup']['p90']:.1f}x, p99 {vf[p]['speedup']['p99']:.0f}x" for p in fair),
            "CDF gap within a factor 2 of 6x (3-12x), every fair policy", measured=gaps, judge=gate(lambda m: all(3.0 <= x <= 12.0 for x in m.values())),
            alternative=Alternative("fair sharing twice as fast as FIFO (a 2x gap)", dict.fromkeys(fair, 2.0)),
            why=why("'up to 6x' read as the widest horizontal gap between FIFO's JCT CDF and the policy's, over the deciles 10-90 (FIFO's JCT quantile / the policy's), on log axes a "
                    "factor 2 either way; the per-job ratio (JCT under FIFO / under the policy) is shown beside it: its tail is unbounded (a 1-s job queued for minutes)"),
        ),
        Relation(
            "§VI-B2 (fig. 9a)", "FIFO suffers from job starvation with intolerably long queueing delay (the longest of all)", "FIFO suffers from job starvation with intolerably long queueing delay",
            "mean / p50 / p95 s: " + "; ".join(f"{p} {pp[p]['job_delay']['mean']:.1f} / {pp[p]['job_delay']['p50']:.2f} / {pp[p]['job_delay']['p95']:.0f}" for p in paper),
            f"FIFO's mean above {SALIENT_S:g} s and at least {FIFO_LONGER:g}x every fair policy's", measured=jd,
            judge=gate(lambda m: m["fifo"] > SALIENT_S and _fifo_longest(FIFO_LONGER)(m)),
            alternative=Alternative(f"FIFO's mean 1.5x the longest fair policy's, both above {SALIENT_S:g} s", {p: 1.5 * SALIENT_S if p == "fifo" else SALIENT_S for p in paper}),
            why=why(f"job queueing delay = first task's start - arrival; 'intolerably long' read as a mean above the {SALIENT_S:g} s of 'salient' (below); FIFO's mean is {jd['fifo'] / worst_fair if worst_fair else math.inf:.1f}x the longest fair policy's. "
                    "dgdrf's fifo places the oldest waiting task that fits anywhere (it backfills): a job whose machines are full does not hold up the jobs behind it that fit elsewhere"),
        ),
        Relation(
            "§VI-B2 (fig. 9a)", "under fair sharing 40 % of jobs still suffer salient queueing delay (loaded cluster, picky jobs)", "there remain 40% of jobs suffering from salient queueing delay",
            "; ".join(f"{p} {pct(x)}" for p, x in salient.items()), f"± {100 * FRACTION_TOL:.0f} points, every fair policy",
            measured=salient, judge=gate(lambda m: all(within(x, PAPER_SALIENT, FRACTION_TOL) for x in m.values())),
            alternative=Alternative("30 % of jobs delayed", dict.fromkeys(fair, 0.30)),
            why=why(f"'salient' read as more than {SALIENT_S:g} s (the paper gives no threshold); the scheduler's own tick and latencies make a few hundredths of a second"),
        ),
        Relation(
            "§VI-B2 (fig. 9b)", "jobs experience similar completion times across all fair sharing algorithms (mice dominate)", "jobs experienced similar completion time across all fair sharing algorithms",
            "; ".join(f"{p} vs tsf: widest decile gap {pct(x, 1)}" for p, x in sim.items()),
            f"every JCT decile (10-90) within {100 * SIMILAR_JCT_TOL:.0f} % of TSF's", measured=sim, judge=gate(lambda m: all(x <= SIMILAR_JCT_TOL for x in m.values())),
            alternative=Alternative("a fair policy's JCT deciles a quarter away from TSF's", dict.fromkeys(others, 0.25)),
            why=why("deciles of each seed's JCTs, the widest over the seeds"),
        ),
    ]
    speedup = []
    for p in alternatives:
        b = bins[p]
        small = b["<= 10"]
        speedup.append(Relation(
            "§VI-B2 (fig. 10, <= 10 tasks)", f"TSF provides little speedup for small jobs (over {PAPER_NAME[p]})", "TSF provides little speedup for small jobs",
            f"{spct(small['mean'])} ± {100 * (small['std'] or 0):.0f} % ({small['jobs']} jobs; TSF faster for {pct(small['tsf_faster'])}, slower for {pct(small['tsf_slower'])})",
            f"mean within ± {100 * SMALL_SAVING_TOL:.0f} %", measured=small["mean"], judge=gate(lambda x: x is not None and within(x, 0.0, SMALL_SAVING_TOL)),
            alternative=Alternative("the medium jobs' 10 % for small jobs too", PAPER_TSF_SAVING),
            why=why("per-job speedup (JCT_X - JCT_TSF) / JCT_X, mean ± standard deviation over the jobs of the bin, every seed"),
        ))
        for label, word in (("11-100", "medium"), ("101-500", "big")):
            x = b[label]
            speedup.append(Relation(
                f"§VI-B2 (fig. 10, {label} tasks)", f"for {word} jobs TSF's speedup (over {PAPER_NAME[p]}) is almost certain, on average 10 % faster", "on average of 10% faster",
                f"{spct(x['mean'])} ± {100 * (x['std'] or 0):.0f} % ({x['jobs']} jobs, seeds {seeds_txt(x['mean_seeds'], spct)}); TSF faster for {pct(x['tsf_faster'])}, slower for {pct(x['tsf_slower'])}; "
                f"mean JCT {p} / tsf {'-' if x['mean_jct_ratio'] is None else format(x['mean_jct_ratio'], '.2f')}",
                f"mean +10 % ± {100 * SAVING_TOL:.0f} points", measured=x["mean"], judge=gate(lambda v: v is not None and within(v, PAPER_TSF_SAVING, SAVING_TOL)),
                alternative=Alternative("no speedup (TSF as fast as the alternative)", 0.0),
                why=why("the same reading"),
            ))
        huge = b["> 500"]
        speedup.append(Relation(
            "§VI-B2 (fig. 10, > 500 tasks)", f"for huge jobs both speedup and slowdown are observed (over {PAPER_NAME[p]})", "both speedup and slowdown have been observed",
            f"{spct(huge['mean'])} ± {100 * (huge['std'] or 0):.0f} % ({huge['jobs']} jobs); TSF faster for {pct(huge['tsf_faster'])}, slower for {pct(huge['tsf_slower'])}",
            f"each at least {100 * HUGE_BOTH:.0f} % of the bin's jobs", measured={"faster": huge["tsf_faster"], "slower": huge["tsf_slower"]},
            judge=gate(lambda m: (m["faster"] or 0) >= HUGE_BOTH and (m["slower"] or 0) >= HUGE_BOTH),
            alternative=Alternative("speedup only, as for medium and big jobs (TSF faster for most, slower for 1 %)", {"faster": 0.6, "slower": 0.01}),
            why=why(f"a job is faster or slower when its JCT differs by more than {SAME_S:g} s" if huge["jobs"] else "no job of more than 500 tasks in this workload"),
        ))
    td = {p: pp[p]["task_delay"] for p in paper}
    tmean = {p: td[p]["mean"] for p in paper}
    fair_mean = {p: tmean[p] for p in fair}
    cd = tt["cdrf"]
    tasks = [
        Relation(
            "§VI-B3 (fig. 11a)", "FIFO suffers the longest task queueing delay", "FIFO suffers from the longest queuing delay",
            "mean / p50 / p95 s: " + "; ".join(f"{p} {td[p]['mean']:.0f} / {td[p]['p50']:.1f} / {td[p]['p95']:.0f}" for p in paper),
            f"FIFO's mean at least {100 * MARGIN:.0f} % above every fair policy's", measured=tmean, judge=gate(_fifo_longest(1 + MARGIN)),
            alternative=Alternative("FIFO's mean 1 % above the longest fair policy's", {p: (1.01 * max(fair_mean.values()) if p == "fifo" else tmean[p]) for p in paper}),
            why=why("task queueing delay = its start - its job's arrival"),
        ),
        Relation(
            "§VI-B3 (fig. 11a)", "among the fair sharing algorithms TSF has the least task queueing delay", "TSF has the least queuing delay",
            "mean (seeds): " + "; ".join(f"{p} {td[p]['mean']:.0f} s ({seeds_txt(td[p]['mean_seeds'], lambda v: f'{v:.0f}')})" for p in fair),
            f"TSF's mean at least {100 * MARGIN:.0f} % below every other fair policy's", measured=fair_mean, judge=gate(_least("tsf", MARGIN)),
            alternative=Alternative("TSF 1 % below the others", {p: 0.99 if p == "tsf" else 1.0 for p in fair}),
            why=why("mean over the tasks of every seed" + not_run),
        ),
    ]
    for p in ("drf", "cmmf-cpu"):
        if p not in present:
            continue
        d = tt[p]
        tasks.append(Relation(
            "§VI-B3 (fig. 11b)", f"failing to address constraints, {PAPER_NAME[p]} leaves 60 % of tasks with longer queueing delays than TSF", "results in 60% of tasks with longer queuing delays than TSF",
            f"{pct(d['tsf_faster'])} longer under {p}, {pct(d['tsf_slower'])} shorter (seeds {seeds_txt(d['tsf_faster_seeds'], pct)})", f"± {100 * FRACTION_TOL:.0f} points",
            measured=d["tsf_faster"], judge=gate(near(PAPER_TSF_TASKS_FASTER, FRACTION_TOL)),
            alternative=Alternative(f"half the tasks longer under {PAPER_NAME[p]}", 0.5),
            why=why(f"the same task (job, index) in the same seed; differences within {SAME_S:g} s count as neither" + ("; the sentence is of DRF and CPU together" if p == "cmmf-cpu" else "")),
        ))
    tasks.append(Relation(
        "§VI-B3 (fig. 11b)", "CDRF performs the worst: it speeds up 30 % of tasks, and slows down the other 60 % (against TSF)", "the speedup of 30% of tasks cannot compensate for the substantial slowdown of the other 60%",
        f"{pct(cd['tsf_slower'])} faster under CDRF, {pct(cd['tsf_faster'])} slower (seeds {seeds_txt(cd['tsf_slower_seeds'], pct)} / {seeds_txt(cd['tsf_faster_seeds'], pct)})",
        f"each ± {100 * FRACTION_TOL:.0f} points", measured={"faster": cd["tsf_slower"], "slower": cd["tsf_faster"]},
        judge=gate(lambda m: within(m["faster"], PAPER_CDRF_FASTER, FRACTION_TOL) and within(m["slower"], PAPER_CDRF_SLOWER, FRACTION_TOL)),
        alternative=Alternative("the same split reversed (CDRF faster for 60 %, slower for 30 %)", {"faster": 0.6, "slower": 0.3}),
        why=why("the same task in the same seed"),
    ))
    tasks.append(Relation(
        "§VI-B3 (fig. 11b)", "CDRF is the worst of the fair sharing algorithms", "CDRF performs the worst",
        f"mean task queueing delay highest under {max(fair, key=lambda p: fair_mean[p])}; mean JCT " + ", ".join(f"{p} {pp[p]['jct']['mean']:.0f} s" for p in fair),
        f"CDRF's mean task queueing delay at least {100 * MARGIN:.0f} % above every other fair policy's", measured=fair_mean, judge=gate(_most("cdrf", MARGIN)),
        alternative=Alternative("CDRF 1 % above the others", {p: 1.01 if p == "cdrf" else 1.0 for p in fair}),
        why=why("mean over the tasks of every seed" + not_run),
    ))
    # fig. 11b's comparisons of two fair policies by their mean task queueing delay: (the two, the claim, the paper's words,
    # the tolerance, the judge, the alternative, the reading, what else the row shows)
    pairs = [
        (("cmmf-mem", "cdrf"), "Mem does not suffer from CDRF's drawback and is better than CDRF", "Mem does not suffer from the same design drawback and is better than CDRF",
         f"Mem's mean at least {100 * MARGIN:.0f} % below CDRF's", _least("cmmf-mem", MARGIN), Alternative("Mem 1 % below CDRF", {"cdrf": 1.0, "cmmf-mem": 0.99}),
         "'better' read as a shorter mean task queueing delay, the figure fig. 11 compares", ""),
        (("cmmf-cpu", "cmmf-mem"), "the workload is CPU-intensive, so fairly sharing CPU is more efficient than Mem", "fairly sharing CPU would be more efficient than Mem",
         f"CPU's mean at least {100 * MARGIN:.0f} % below Mem's", _least("cmmf-cpu", MARGIN), Alternative("CPU 1 % below Mem", {"cmmf-cpu": 0.99, "cmmf-mem": 1.0}),
         "'more efficient' read as a shorter mean task queueing delay; whether our generator's demands are CPU-intensive as the trace's are is the page's workload table",
         "; CPU in use on average " + ", ".join(f"{p} {np.mean(pp[p]['cpu_utilisation_mean']):.2f}" for p in ("cmmf-cpu", "cmmf-mem") if p in present)),
        (("drf", "cmmf-cpu"), "the performance of DRF and CPU are very close to each other", "the performance of DRF and CPU are very close to each other",
         f"means within {100 * CLOSE:.0f} % of each other", _close(CLOSE), Alternative("CPU's mean 10 % above DRF's", {"drf": 1.0, "cmmf-cpu": 1.10}),
         "the mean task queueing delay, the figure fig. 11 compares",
         "; tasks longer than under TSF: " + ", ".join(f"{p} {pct(tt[p]['tsf_faster'])}" for p in ("drf", "cmmf-cpu") if p in tt)),
    ]
    for two, claim, words, tolerance, judge, alternative, reading, also in pairs:
        if not set(two) <= set(present):
            continue
        measured = {p: fair_mean[p] for p in two}
        tasks.append(Relation(
            "§VI-B3 (fig. 11b)", claim, words, "mean task queueing delay " + ", ".join(f"{p} {measured[p]:.0f} s" for p in two) + also,
            tolerance, measured=measured, judge=gate(judge), alternative=alternative, why=why(reading),
        ))
    return [
        Table(f"the workload as generated ({w['config']}: google-2011-jobs, constrained = 0.85); no policy runs", workload),
        Table(SCHEDULER + ": jobs (figs. 9a, 9b)", jobs),
        Table(SCHEDULER + ": per-job speedup of TSF by job size (fig. 10)", speedup),
        Table(SCHEDULER + ": tasks (figs. 11a, 11b)", tasks),
    ]


def cost_table(a: dict[str, Any]) -> list[str]:
    lines = [
        "| policy | runs | simulated h | wall s | CPU s | wall s / simulated h | CPU s / simulated h | peak MiB | load average at start |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in a["per_policy"]:
        c = a["per_policy"][p]["cost"]
        h = np.array(c["sim_s"]) / 3600
        lines.append(
            f"| {p} | {len(h)} | {np.mean(h):.2f} | {np.mean(c['wall_s']):.0f} ({min(c['wall_s']):.0f}-{max(c['wall_s']):.0f}) | {np.mean(c['cpu_s']):.0f} ({min(c['cpu_s']):.0f}-{max(c['cpu_s']):.0f}) "
            f"| {np.mean(np.array(c['wall_s']) / h):.1f} | {np.mean(np.array(c['cpu_s']) / h):.1f} | {max(c['peak_rss_mb']):.0f} | {np.mean(c['load_average']):.1f} |"
        )
    return lines


def policy_table(a: dict[str, Any]) -> list[str]:
    lines = [
        "| policy | JCT mean / p50 / p95 s | job queueing delay mean / p50 / p95 s | jobs delayed > 10 s | task queueing delay mean / p50 / p95 s | makespan s | Jain (time-avg shares) "
        "| jobs waiting at once: max / mean over the first 2 h / looks with >= 2 | CPU in use, max | busiest second (placements) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in a["per_policy"]:
        x = a["per_policy"][p]
        j, q, t = x["jct"], x["job_delay"], x["task_delay"]
        lines.append(
            f"| {p} | {j['mean']:.0f} / {j['p50']:.0f} / {j['p95']:.0f} | {q['mean']:.0f} / {q['p50']:.2f} / {q['p95']:.0f} | {pct(q['salient'])} | {t['mean']:.0f} / {t['p50']:.1f} / {t['p95']:.0f} "
            f"| {np.mean(x['makespan']):.0f} | {np.mean(x['jain_time_avg']):.3f} "
            f"| {max(v['max'] for v in x['waiting'])} / {np.mean([v['mean_first_2h'] for v in x['waiting']]):.1f} / {pct(float(np.mean([v['looks_with_2_or_more'] for v in x['waiting']])))} "
            f"| {max(v['cpu_max'] for v in x['waiting']):.2f} | {max(s['busiest_second'] for s in x['scheduler'])} |"
        )
    return lines


def bins_table(a: dict[str, Any], w: dict[str, Any]) -> list[str]:
    lines = [
        "| alternative X | " + " | ".join(f"{label} tasks ({w['jobs_per_bin'][label]} jobs a seed)" for label, _, _ in BINS) + " |",
        "|---|" + "---|" * len(BINS),
    ]
    for p in a["per_policy"]:
        if p == "tsf":
            continue
        cells = []
        for label, _, _ in BINS:
            x = a["tsf_bins"][p][label]
            cells.append("-" if x["mean"] is None else f"{spct(x['mean'])} ± {100 * x['std']:.0f} % (faster {pct(x['tsf_faster'])}, slower {pct(x['tsf_slower'])})")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return lines


def draw(runs: dict[tuple[str, int], dict[str, Any]], w: dict[str, Any], path: Path, seeds: Sequence[int]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.4))
    styles = {"fifo": ("k", "-"), "drf": ("tab:blue", "--"), "cdrf": ("tab:orange", "-."), "tsf": ("tab:red", "-"), "psdsf": ("tab:green", ":"),
              "cmmf-cpu": ("tab:purple", ":"), "cmmf-mem": ("tab:brown", (0, (5, 1)))}
    for p in ran(runs):
        c, ls = styles[p]
        rs = [runs[(p, s)] for s in seeds]
        for k, x in enumerate((np.concatenate([job_delay(r) for r in rs]), np.concatenate([_arr(r, "jct") for r in rs]), np.concatenate([np.asarray(r["task_delay"]) for r in rs]))):
            x = np.sort(np.maximum(x, FLOOR_S))
            ax[k].step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=c, ls=ls, label=p)
    for k, (title, xl) in enumerate((("(fig. 9a) job queueing delay", "first task's start - arrival (s)"), ("(fig. 9b) job completion time", "JCT (s)"), ("(fig. 11a) task queueing delay", "task's start - its job's arrival (s)"))):
        ax[k].set_xscale("log")
        ax[k].set_title(title)
        ax[k].set_xlabel(xl)
        ax[k].set_ylabel("CDF")
        ax[k].grid(alpha=0.3)
        ax[k].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{w['config']}: {w['jobs']:,} jobs on {w['servers']:,} machines, seeds {', '.join(map(str, seeds))} pooled (delays below {FLOOR_S:g} s drawn at {FLOOR_S:g})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def page_name(raw: dict[str, Any]) -> str:
    """Which page the raw figures are of (figures written before there were two: the first)."""
    return str(raw.get("name", NAME))


def commands(raw: dict[str, Any]) -> list[str]:
    name = page_name(raw)
    which = "" if name == NAME else f" --experiment {name}"
    return [
        f"python bench/papers/wang_trace.py{which} --out bench/results/papers --seeds {len(raw['seeds'])} --jobs 2",
        f"# the page again from its raw figures ({name}.json), nothing run:",
        f"python bench/papers/wang_trace.py{which} --out bench/results/papers --render-only",
        "# one run of it:",
        command("tsf", 1, config=raw["config"]),
    ]


def _policies_sentence(present: Sequence[str]) -> str:
    offers = [f"`{p}`" for p in ("cdrf", "tsf", "cmmf-cpu", "cmmf-mem") if p in present]
    absent = [p for p in PAPER if p not in present]
    text = (
        "Policies: `fifo`, `drf` (user-driven: the lowest dominant share's task on the first machine that fits), "
        f"{', '.join(offers)} (server offers, one task per offer; a machine freed by a finishing task offered first"
        + ("; `cmmf-cpu` and `cmmf-mem` rank by the share of CPU or of memory alone, Choosy's rule" if "cmmf-cpu" in present else "")
        + f"), compared as the paper compares {_names([p for p in PAPER if p in present])}"
    )
    if absent:
        text += f" ({_names(absent)} are not run here: [wang-trace-contended.md](wang-trace-contended.md) runs them)"
    if "psdsf" in present:
        text += "; `psdsf` (Kesidis et al.'s per-server dominant share, offers) runs beside them, in the tables only"
    return text + "."


def render(raw: dict[str, Any]) -> str:
    """The page, from the raw figures only."""
    a, w, seeds, name = raw["analysis"], raw["scenario"], raw["seeds"], page_name(raw)
    present = policies_of(raw)
    c = contention(raw)
    sched = [s for p in present for s in a["per_policy"][p]["scheduler"]]
    tick, lat = w["tick"], w["latency_ms"]
    at_limit = max(s["seconds_at_90pc_of_ticks"] for s in sched)
    gap = float(np.median([s["user_gap_median"] for s in sched if s["user_gap_median"] is not None]))
    pace = (
        f"one placement every {1000 * gap:.1f} ms (median over jobs of >= 100 tasks), so a 10,000-task job takes ~{10000 * gap:.0f} s to place on an empty cluster"
        if not c["contends"] else f"one placement every {1000 * gap:.1f} ms (median over jobs of >= 100 tasks: on this full cluster, mostly a wait for room)"
    )
    lead = (
        "The workload is the paper's, scaled to a load at which jobs contend: a tenth of its machines and about half its jobs "
        f"({w['config']} says why). At the paper's 1,000 machines our generator's jobs do not contend: [wang-trace.md](wang-trace.md).\n"
        if c["contends"] else ""
    )
    intro = f"""
Wang et al.'s trace-driven simulation (§VI-B, figs. 8-11) on dgdrf's emulation, as near as
our Google-2011-like generator comes: {w['config']}, {w['servers']:,} machines drawn from the
2011 trace's machine table, an hour of {w['jobs']:,} jobs ({w['tasks']:,} tasks, offered load
{w['offered_load']:.2f}), one user a job (the paper's fairness is between jobs; a dgdrf user
serves its jobs one task at a time, its earliest first), {pct(w['constrained'])} of the jobs
requiring machine attributes. {_policies_sentence(present)} Run seeds {', '.join(map(str, seeds))} (the seed draws
the task durations, each job's from its own stream, and message latencies: within a seed
every policy runs the same tasks for as long). Every run ended `drained` with no invariant
violation (no task on a machine its job does not admit).
{lead}
What differs from the paper's workload (fig. 8, §VI-B1):

| | paper | ours |
|---|---|---|
| machines | 1,000 sampled from the 12k of the trace | {w['servers']:,} drawn from the trace's machine-configuration table |
| jobs, tasks in the hour | 4,500, 180k | {w['jobs']:,}, {w['tasks']:,} (offered load {w['offered_load']:.2f}) |
| single-task jobs | > 60 % | {pct(w['single_task'])} |
| jobs of <= 10 tasks, their tasks | 86 %, < 8k tasks | {pct(w['at_most_10_tasks'])}, {w['tasks_in_small_jobs']:,} tasks |
| largest job | 20k tasks | {w['largest_job']:,} tasks (the generator's cap, 10 a machine) |
| jobs that can run on every machine | < 20 % | {pct(w['run_everywhere'], 1)} |
| jobs that can run on <= a fifth of the machines | 50 % (200 of 1,000) | {pct(w['run_on_at_most_20pc'], 1)} (median job: {pct(w['usable_median'])} of the machines) |
| task demands, durations | the trace's | the generator's: demands its documented stand-in, durations log-normal per job (median 180 s, 95 % under 2 h, at most 4 h), tasks ± 20 % |
| constraints | Sharma et al.'s measured distribution: 4 classes, 21 attributes | 5 attributes of our choice (class c1-c4, kernel, arch, ssd, external_ip), one or two required |
| runs | 50 simulations, averaged | {len(seeds)} seed(s), pooled |
| scheduler | an event-driven simulator (placement instantaneous, we assume) | one central placement a tick of {tick:g} s ({1 / tick:.0f} a second), each after a proposal and an accept ({lat[0]:g}-{lat[1]:g} ms messages); a job submits its next task when the last one runs: {pace}; no run placed on 90 % or more of the ticks of more than {at_limit} seconds |

The JCT, job and task queueing delay CDFs (figs. 9a, 9b, 11a), every seed pooled:

![JCT and queueing delay CDFs]({name}-jct.png)
"""
    t = a["per_policy"]["drf"]["task_delay"]
    looked = ", ".join(c["looked"])
    inside = (
        f"Under drf, {pct(t['delayed_over_1s'])} of the tasks waited more than {SAME_S:g} s, "
        f"{pct(t['delayed_in_jobs_over_100'], 1)} of them in jobs of more than 100 tasks, and jobs of more than 500 tasks hold "
        f"{pct(t['share_in_jobs_over_500'], 1)} of all task queueing delay"
    )
    if c["contends"]:
        why = (
            "## Do jobs contend here?\n\n"
            "A fair policy can only reorder jobs that wait at the same time for the same machines, and FIFO can only starve a job whose machines are busy. "
            f"Here up to {c['max_waiting']} jobs had a task waiting at once (looked at every {WAIT_EVERY:g} simulated s, under {looked}, every seed), "
            f"{pct(c['looks_with_2_or_more'])} of the looks saw two or more, and the cluster's CPU in use reached {c['cpu_peak']:.2f} "
            f"(the page judges figs. 9-11 when two or more wait in {pct(CONTENDED_LOOKS)} of the looks or the CPU reaches {CONTENDED_CPU:g}). "
            f"The runs contend, so the comparisons of figs. 9-11 are judged. {inside}.\n"
        )
    else:
        why = (
            "## Do jobs contend here?\n\n"
            "A fair policy can only reorder jobs that wait at the same time for the same machines, and FIFO can only starve a job whose machines are busy. "
            f"Here at most {c['max_waiting']} jobs had a task waiting at once (looked at every {WAIT_EVERY:g} simulated s, under {looked}, every seed), "
            f"{pct(c['looks_with_2_or_more'])} of the looks saw two or more, and the cluster's CPU in use never passed {c['cpu_peak']:.2f} "
            f"(the page judges figs. 9-11 when two or more wait in {pct(CONTENDED_LOOKS)} of the looks or the CPU reaches {CONTENDED_CPU:g}). "
            f"The queueing is inside jobs. {inside}: the long, constrained jobs of the generator's heavy tail, "
            "whose tasks wait for the few machines their attributes admit. The offered load of "
            f"{w['offered_load']:.2f} is theirs, not a contention between jobs. In the paper jobs did compete (40 % of them with salient queueing "
            "delay under fair sharing). The comparisons of figs. 9-11 are therefore not judged (n/a): a difference near zero would hold or fail for no policy's reason. "
            "[wang-trace-contended.md](wang-trace-contended.md) judges them at a load at which jobs contend, with the paper's CPU and Mem (CMMF) baselines. "
            "What this page does show: the policies run the same trace, each drained, with no task on a machine its job does not admit.\n"
        )
    rowsums = (
        ["psdsf's run-level figure K_n is a sum over users x servers; its per-user sums are kept row by row (dgdrf/model/notions.py `RowSums`), "
         "where a recount at every placement and task end kept a whole psdsf run from finishing."] if "psdsf" in present else []
    )
    notes = "\n".join([
        why,
        "## Per policy (every seed pooled)",
        "",
        *policy_table(a),
        "",
        "## Per-job speedup of TSF over each alternative, by job size (fig. 10)",
        "",
        "(JCT_X - JCT_TSF) / JCT_X, mean ± standard deviation over the jobs of the bin (every seed); faster / slower: the jobs whose JCT under TSF is more than 1 s below / above X's.",
        "",
        *bins_table(a, w),
        "",
        "## Per-task queueing delay, TSF against each alternative (fig. 11b)",
        "",
        "| X | tasks faster under TSF | slower under TSF | reduction (X - TSF) p5 / p25 / p50 / p75 / p95 s |",
        "|---|---|---|---|",
        *[f"| {p} | {pct(a['tsf_tasks'][p]['tsf_faster'], 1)} | {pct(a['tsf_tasks'][p]['tsf_slower'], 1)} | " + " / ".join(f"{a['tsf_tasks'][p]['reduction_quantiles'][k]:.0f}" for k in ("p5", "p25", "p50", "p75", "p95")) + " |" for p in present if p != "tsf"],
        "",
        "## Against FIFO (fig. 9b)",
        "",
        "| policy | jobs faster than FIFO | slower | per-job speedup (JCT FIFO / JCT policy) p10 / p50 / p80 / p90 / p99 / max | widest gap of the JCT CDFs (deciles 10-90) |",
        "|---|---|---|---|---|",
        *[f"| {p} | {pct(a['vs_fifo'][p]['faster'], 1)} | {pct(a['vs_fifo'][p]['slower'], 1)} | " + " / ".join(f"{a['vs_fifo'][p]['speedup'][k]:.2f}" for k in ("p10", "p50", "p80", "p90", "p99", "max")) + f" | {a['vs_fifo'][p]['cdf_gap']:.2f}x |" for p in present if p != "fifo"],
        "",
        "## Wall time per simulated hour",
        "",
        "Each run in a process of its own on a 2-core machine shared with other work (the load average says how busy it was): CPU seconds are the steadier figure. "
        "Simulated time is the run's whole virtual time, to the last task's end (the arrivals span an hour; the long jobs run on for hours).",
        "",
        *cost_table(a),
        "",
        " ".join(["Simulated hours and wall time per simulated hour are the whole run's, so they include its tail (the last long jobs, few placements).", *rowsums]),
        "",
        f"The raw figures (every run's per-job arrival, first start and JCT; the quantiles of every CDF; the comparisons) are in {name}.json.",
    ])
    return page(
        "Wang et al., TSF trace-driven simulation (§VI-B: figs. 8-11)" + (", at a load where jobs contend" if name != NAME else ""),
        "W. Wang, B. Li, B. Liang, J. Li: Multi-Resource Fair Sharing for Datacenter Jobs with Placement Constraints (TSF), §VI-B",
        intro, tables(raw), commands(raw), notes,
    )


def _round(x: Any) -> Any:
    """Floats to 6 significant digits (the page's raw figures)."""
    if isinstance(x, float):
        return x if not math.isfinite(x) else float(f"{x:.6g}")
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_round(v) for v in x]
    return x


def raw(runs: dict[tuple[str, int], dict[str, Any]], a: dict[str, Any], w: dict[str, Any], seeds: Sequence[int], name: str = NAME) -> dict[str, Any]:
    policies = ran(runs)
    first = runs[(policies[0], seeds[0])]
    return {
        "name": name,
        "config": w["config"],
        "seeds": list(seeds),
        "scenario": w,
        "jobs": {"user": first["users"], "arrival": [round(x, 3) for x in first["arrival"]], "tasks": first["tasks"]},
        "runs": [
            {k: runs[(p, s)][k] for k in ("policy", "seed", "stop_reason", "allocations", "makespan", "sim_s", "wall_s", "cpu_s", "peak_rss_mb", "load_average", "jct_s", "queueing_delay_s", "jain_time_avg", "scheduler")}
            | {"first_start": [round(x, 2) for x in runs[(p, s)]["first_start"]], "jct": [round(x, 2) for x in runs[(p, s)]["jct"]]}
            for s in seeds for p in policies
        ],
        "analysis": a,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="wang_trace.py", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--experiment", choices=NAMES, default=NAME, help=f"which page: {NAME} (the paper's 1,000 machines, where jobs do not contend) or wang-trace-contended (a load at which they do, the paper's six policies); default {NAME}")
    ap.add_argument("--seeds", type=int, default=None, help="run seeds 1..N for every policy (default: the page's, 3 or 10)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once, each in a process of its own (default 2)")
    ap.add_argument("--cache", type=Path, default=None, help="keep each run's raw figures here and reuse them (a rerun after a code change must not use it)")
    ap.add_argument("--config", default=None, help="the scenario (default: the page's; another is for trying the script out)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"), help="directory of the page, its JSON and its figure")
    ap.add_argument("--render-only", action="store_true", help="run nothing: write the page again from its committed json (the figure stays)")
    args = ap.parse_args(argv)
    experiment = EXPERIMENTS[args.experiment]
    name, config = experiment.name, args.config or experiment.config
    if args.seeds is not None and args.seeds < 1:
        ap.error(f"--seeds: at least 1, got {args.seeds}")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.render_only:
        figures = json.loads((args.out / f"{name}.json").read_text())
        (args.out / f"{name}.md").write_text(render(figures))
        log(f"wrote {args.out / name}.md from {args.out / name}.json")
        return 0
    seeds = list(range(1, (args.seeds or experiment.seeds) + 1))
    t0 = time.perf_counter()
    w = describe(config)
    log(f"scenario: {w}")
    runs = collect(seeds, args.jobs, args.cache, log, config, experiment.policies)
    a = analyse(runs, seeds)
    args.out.mkdir(parents=True, exist_ok=True)
    draw(runs, w, args.out / f"{name}-jct.png", seeds)
    # the page is rendered from the figures as json gives them back (what the test reads)
    figures = json.loads(json.dumps(_round(raw(runs, a, w, seeds, name))))
    write(args.out, name, figures, render(figures))
    log(f"wrote {args.out / name}.md, .json, -jct.png in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
