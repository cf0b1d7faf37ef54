"""Workload generators: "Google-2011-like" scenarios (thesis 5.1).

The thesis builds its test cases from the Google cluster data (2011): X machines picked at
random from the trace and Y users, each user with one task picked at random from its
tasks, submitted endlessly. The machine side is reproduced here exactly from the trace's
published machine-configuration table (normalised CPU, memory -> machine count). The user
side is a *documented stand-in*, not the trace: see :data:`DEMAND_MODEL`. For the real
trace, use :mod:`dgdrf.model.google_trace` on a subset in the Google 2011 CSV schema.

Two generators:

- ``google-2011`` (:func:`google_2011_scenario`): the thesis's world, one endless task
  stream per user. Its draws are frozen: the thesis's results depend on its scenarios,
  byte for byte (tests/test_generators_jobs.py holds their hashes).
- ``google-2011-jobs`` (:func:`google_2011_jobs_scenario`): the same machines, with
  attributes, and *finite jobs* arriving by a Poisson process over a horizon, their sizes
  and durations from published analyses of the 2011 trace (:class:`JobModel`) and half
  of them restricted to machines with given attributes (:class:`ConstraintModel`).
  docs/notes/2026-11-26-google-finite-workload.md gives the sources of every number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from dgdrf.errors import ScenarioError
from dgdrf.model.constraints import Constraint, Scalar
from dgdrf.model.gangs import PartSlots, pack
from dgdrf.model.google_trace import COMPARISONS, read_google_trace, read_google_trace_jobs
from dgdrf.model.resources import fit_mask, task_dominant_share
from dgdrf.model.scenario import MAX_INSTANCE_TASKS, MAX_SECONDS, MAX_TASKS, Scenario, build_scenario

#: Google cluster data 2011, machine configurations: (normalised CPU, normalised memory)
#: -> number of machines. 12,583 machines in all.
GOOGLE_2011_MACHINES: tuple[tuple[float, float, int], ...] = (
    (0.5, 0.4995, 6732),
    (0.5, 0.2493, 3863),
    (0.5, 0.749, 1001),
    (1.0, 1.0, 795),
    (0.25, 0.2498, 126),
    (0.5, 0.1241, 52),
    (0.5, 0.9678, 5),
    (0.5, 0.03085, 5),
    (1.0, 0.5, 3),
    (0.5, 0.06158, 1),
)


@dataclass(frozen=True)
class DemandModel:
    """Parameters of the Google-2011-like per-task demand of a user.

    Why these: in the 2011 trace task requests are small fractions of the largest machine
    (CPU requests mostly between ~0.003 and ~0.06, i.e. 1/16 to 1/8 core-slices of a
    0.5-CPU machine), spread over more than an order of magnitude, and most jobs ask for
    more CPU than memory relative to the cluster (the trace is CPU-bound). So:

    - CPU request: log-uniform on [cpu_min, cpu_max] (order-of-magnitude spread; it is
      what makes arrival-order FIFO unfair to small users, thesis table 5.1);
    - memory request: CPU request times a log-normal ratio with median ``mem_ratio_median``
      and log-sd ``mem_ratio_sigma`` (median below 1: CPU-heavy; about one user in ten is
      memory-dominant), clipped to [mem_min, mem_max];
    - values rounded to 6 decimals so scenario files stay readable.
    """

    cpu_min: float = 0.0025
    cpu_max: float = 0.05
    mem_ratio_median: float = 0.5
    mem_ratio_sigma: float = 0.5
    mem_min: float = 0.0005
    mem_max: float = 0.05


DEMAND_MODEL = DemandModel()


def sample_google_2011_servers(n: int, rng: np.random.Generator) -> list[tuple[float, float]]:
    """Draw ``n`` machine configurations weighted by their count in the 2011 table."""
    weights = np.array([c for _, _, c in GOOGLE_2011_MACHINES], dtype=np.float64)
    idx = rng.choice(len(GOOGLE_2011_MACHINES), size=n, p=weights / weights.sum())
    return [(GOOGLE_2011_MACHINES[i][0], GOOGLE_2011_MACHINES[i][1]) for i in idx]


def sample_google_2011_demands(n: int, rng: np.random.Generator, model: DemandModel = DEMAND_MODEL) -> list[tuple[float, float]]:
    """Draw ``n`` per-task (cpu, memory) demands from :class:`DemandModel`."""
    cpu = np.exp(rng.uniform(np.log(model.cpu_min), np.log(model.cpu_max), size=n))
    ratio = np.exp(rng.normal(np.log(model.mem_ratio_median), model.mem_ratio_sigma, size=n))
    mem = np.clip(cpu * ratio, model.mem_min, model.mem_max)
    return [(round(float(c), 6), round(float(m), 6)) for c, m in zip(cpu, mem)]


def google_2011_scenario(servers: int, users: int, seed: int, name: str | None = None) -> Scenario:
    """A Google-2011-like scenario: machines from the real configuration table, user
    demands from :data:`DEMAND_MODEL`. A pure function of (servers, users, seed)."""
    if servers < 1 or users < 1:
        raise ScenarioError(f"google-2011: need at least one server and one user, got servers={servers}, users={users}")
    rng = np.random.default_rng(seed)
    caps = sample_google_2011_servers(servers, rng)
    dems = sample_google_2011_demands(users, rng)
    return build_scenario(
        ["cpu", "memory"],
        [(f"s{i + 1}", list(c)) for i, c in enumerate(caps)],
        [(f"u{i + 1}", list(d)) for i, d in enumerate(dems)],
        name=name or f"google-2011-{servers}x{users}-seed{seed}",
    )


# --------------------------------------------------------------------------------------
# Finite jobs (kind "google-2011-jobs")

#: the standard normal distribution (quantiles of the published percentiles)
_NORMAL = NormalDist()


@dataclass(frozen=True)
class JobModel:
    """Sizes and durations of Google-2011-like jobs: every number is a published fact
    about the 2011 trace or marked "our choice".

    Tasks per job (a mixture: one task, or a heavy tail):

    - ``single_task`` = 0.75: "75% of jobs consist of only one task" (Reiss et al. 2012,
      "Heterogeneity and dynamicity of clouds at scale: Google trace analysis", SoCC);
    - the other jobs have max(2, round(X)) tasks, X log-normal with its parameters set so
      that the whole mixture's 90th and 99th percentiles are ``tasks_p90`` = 18 and
      ``tasks_p99`` = 970: the tail we measured on a public copy of the 2011 trace (job
      sizes counted in task_events parts 0-13 of the copy in the tommycarpi/py-tracy
      repository, the trace's first ~19.5 h, 14,303 jobs: 79 % single-task, median 1,
      mean 31.6, p90 18, p99 967, max 10,500; not a published figure). With these, 88 % of jobs have at most 10
      tasks, as Wang et al. (TSF, §VI-B) report for their one-hour Google sample (86 %
      "small jobs (<= 10 tasks)");
    - at most ``tasks_per_server`` x servers tasks (our choice: 10, so 1,000 on 100
      servers, about the trace's p99; Wang et al.'s largest job, 20k tasks on 1,000
      machines, is 20 per machine; the trace's largest, 10,500 on 12,583 machines, under
      one). Without a cap one job could hold most of a small cluster's hour.

    Durations: each job has a mean task duration m; its tasks last uniformly between
    (1 - ``spread``) m and (1 + ``spread``) m:

    - m is log-normal with median ``duration_median`` = 180 s and log-sd
      sigma = ln(``duration_p95`` / median) / z(0.95) = ln(7200 / 180) / 1.645 = 2.24:
      Reiss et al. 2012: "half of the jobs run for less than 3 minutes" and jobs shorter
      than two hours are "more than 95%", and a heavy-tailed distribution is what they
      recommend modelling. A job's tasks run in parallel when it is served, so its run
      time is about its tasks' duration; the median of m is that of job durations;
    - m is clipped to [``duration_min``, ``duration_max``] = [1 s, 4 h] (our choice: 1 s
      is below the trace's scheduling latencies; 4 h keeps the 5 % of jobs longer than
      2 h without letting a days-long service hold a one-hour workload's makespan);
    - ``spread`` = 0.2: Wang et al. (TSF, §VI-A) let "runtime ... fluctuate up and down
      randomly by up to 20% from the mean, so as to emulate the task execution in
      production datacenters", citing Reiss et al.: the tasks of a job are copies of one
      program on similar inputs, so their durations are close, unlike jobs'.
    """

    single_task: float = 0.75
    tasks_p90: float = 18.0
    tasks_p99: float = 970.0
    tasks_per_server: int = 10
    duration_median: float = 180.0
    duration_p95: float = 7200.0
    duration_min: float = 1.0
    duration_max: float = 4 * 3600.0
    spread: float = 0.2

    def tasks_lognormal(self) -> tuple[float, float]:
        """(mu, sigma) of ln X, the tail of multi-task jobs: the mixture's p90 and p99
        are the conditional quantiles (p - single) / (1 - single) of X."""
        q90 = _NORMAL.inv_cdf((0.90 - self.single_task) / (1 - self.single_task))
        q99 = _NORMAL.inv_cdf((0.99 - self.single_task) / (1 - self.single_task))
        sigma = (math.log(self.tasks_p99) - math.log(self.tasks_p90)) / (q99 - q90)
        return math.log(self.tasks_p90) - q90 * sigma, sigma

    def duration_sigma(self) -> float:
        """The log-sd of a job's mean task duration: ln(p95 / median) / z(0.95)."""
        return math.log(self.duration_p95 / self.duration_median) / _NORMAL.inv_cdf(0.95)

    def max_tasks(self, servers: int) -> int:
        return max(1, min(MAX_TASKS, self.tasks_per_server * servers))


JOB_MODEL = JobModel()


@dataclass(frozen=True)
class Attribute:
    """A machine attribute: its values and the fraction of machines with each, and
    ``weight``, how often a constrained job's requirement names it. A boolean attribute
    (values True, False) is required only as True (a job needs an SSD; none needs its
    absence)."""

    name: str
    values: tuple[Scalar, ...]
    prevalence: tuple[float, ...]
    weight: float

    @property
    def boolean(self) -> bool:
        return self.values == (True, False)


@dataclass(frozen=True)
class ConstraintModel:
    """Machine attributes and the constraints jobs put on them.

    Sources: Wang et al. (TSF, §VI-B) synthesise constraints after Sharma et al. 2011:
    "machines are classified into classes and are associated with attributes following
    the distribution measured in Google's production clusters (4 classes and 21 attributes
    in total). Tasks specify required machine attributes"; "less than 20% of jobs can run
    on all 1000 machines, and 50% can run on 200". Sharma et al. 2011 (via Wang, §I): at
    Google "approximately 50% of its production jobs have simple, yet restrictive,
    constraints" (the default ``constrained`` fraction of the generator), and the kinds of
    constraint (hardware architecture, kernel version, machine class, ...).

    The measured distributions themselves are not published in a form we have, so the
    attributes below are *our choice*: five attributes named after those kinds (``class``
    c1-c4 for Wang's 4 classes, ``kernel``, ``arch``, ``ssd`` and ``external_ip`` for the
    GPU/SSD and public-IP examples of Wang §I), each machine drawing each independently
    with the prevalences given. A constrained job requires one attribute value, or two
    (probability ``two_attributes`` = 0.3, our choice), the attributes picked by weight,
    each value that of an *anchor* machine picked at random among those its demand fits
    (so a value is required in proportion to the machines that have it, and the job can
    always run somewhere). With these numbers about half the constrained jobs can use 20 %
    of the machines or fewer (median eligible fraction 0.20, 10th percentile 0.06, on a
    large cluster): Wang's "50% can run on 200" of 1,000 machines, among the constrained
    half. Wang's own mix is more constrained (fewer than 20 % of jobs unrestricted):
    ``constrained`` near 0.9 gives it.
    """

    attributes: tuple[Attribute, ...] = (
        Attribute("arch", ("a1", "a2"), (0.8, 0.2), 0.2),
        Attribute("class", ("c1", "c2", "c3", "c4"), (0.4, 0.3, 0.2, 0.1), 0.3),
        Attribute("external_ip", (True, False), (0.1, 0.9), 0.1),
        Attribute("kernel", ("k1", "k2", "k3"), (0.5, 0.3, 0.2), 0.3),
        Attribute("ssd", (True, False), (0.2, 0.8), 0.1),
    )
    two_attributes: float = 0.3


CONSTRAINT_MODEL = ConstraintModel()

#: the defaults of :func:`google_2011_jobs_scenario` (and its [generate] keys)
DEFAULT_HORIZON = 3600.0
DEFAULT_LOAD = 0.8
DEFAULT_CONSTRAINED = 0.5
#: points of the deterministic quadratures of :func:`expected_job_work`
_GRID = 2000


def _quantiles(n: int) -> np.ndarray:
    """Standard normal quantiles at the midpoints of n equal-probability bins."""
    return np.array([_NORMAL.inv_cdf((i + 0.5) / n) for i in range(n)])


def expected_job_work(capacity_total: np.ndarray, max_tasks: int, model: JobModel = JOB_MODEL, demands: DemandModel = DEMAND_MODEL) -> float:
    """E[tasks x mean task duration x dominant share of a task] of one job: the seconds
    of the whole cluster (in dominant-share units) a job occupies on average. Tasks,
    duration and demand are drawn independently, so it is the product of the three means,
    each computed by a deterministic quadrature over the models (no random draws)."""
    z = _quantiles(_GRID)
    mu, sigma = model.tasks_lognormal()
    tail = np.minimum(np.maximum(2.0, np.rint(np.exp(mu + sigma * z))), max_tasks)
    tasks = model.single_task + (1 - model.single_task) * float(tail.mean())
    m = np.clip(np.exp(math.log(model.duration_median) + model.duration_sigma() * z), model.duration_min, model.duration_max)
    duration = float(m.mean())
    u = (np.arange(_GRID // 4) + 0.5) / (_GRID // 4)
    cpu = np.exp(np.log(demands.cpu_min) + u * (np.log(demands.cpu_max) - np.log(demands.cpu_min)))[:, None]
    ratio = np.exp(np.log(demands.mem_ratio_median) + demands.mem_ratio_sigma * z[:: 4])[None, :]
    mem = np.clip(cpu * ratio, demands.mem_min, demands.mem_max)
    share = float(np.maximum(cpu / capacity_total[0], mem / capacity_total[1]).mean())
    return tasks * duration * share


def offered_load(scenario: Scenario, horizon: float) -> float:
    """The load a finite-job scenario offers over ``horizon`` seconds: the sum over jobs
    of tasks x mean task duration x the task's dominant share of the cluster, divided by
    the horizon (1.0: the cluster's dominant resource busy for the whole horizon)."""
    total = scenario.total_capacity()
    work = 0.0
    for user in scenario.users:
        for job in user.jobs:
            if job.tasks is None or job.duration is None:
                raise ScenarioError(f"offered_load: user {user.id!r} job {job.id!r} is endless")
            work += job.tasks * job.duration.mean() * task_dominant_share(job.demand, total.tolist())
    return work / horizon


def google_2011_jobs_scenario(
    servers: int,
    users: int,
    seed: int,
    horizon: float = DEFAULT_HORIZON,
    load: float = DEFAULT_LOAD,
    constrained: float = DEFAULT_CONSTRAINED,
    max_tasks: int | None = None,
    user_skew: float = 0.0,
    gangs: float = 0.0,
    name: str | None = None,
    model: JobModel = JOB_MODEL,
    constraints: ConstraintModel = CONSTRAINT_MODEL,
    demands: DemandModel = DEMAND_MODEL,
) -> Scenario:
    """A Google-2011-like scenario of finite jobs: a pure function of its arguments.

    - Machines: the same draws as :func:`google_2011_scenario` with this seed (so the
      same cluster), plus attributes (:class:`ConstraintModel`).
    - Jobs arrive by a Poisson process of rate lambda over ``horizon`` seconds: their
      number is Poisson(lambda x horizon) and, given it, their times are independent and
      uniform on [0, horizon) (the process's order-statistics property). lambda is set so
      that the expected offered load (:func:`offered_load`) is ``load``:
      lambda = load / :func:`expected_job_work`. The papers evaluate loaded clusters (Wang
      et al. "heavily loading the simulated cluster"); 0.8 is our choice. The work of a
      job is heavy-tailed (tasks times duration), so the realised load varies much from
      seed to seed: on 100 servers, seeds 0-99 give a median of 0.53 and a 10th-90th
      percentile range of 0.22-1.35 for a target of 0.8 (:func:`offered_load` tells).
    - Each job belongs to a user: every user gets one job (the scenario format needs one;
      so at least ``users`` jobs are drawn), the others are drawn with probability
      proportional to rank^-``user_skew`` (0, the default: uniformly; our choice, the
      trace's skew across its hundreds of users has no published form for 20).
    - Tasks, durations: :class:`JobModel` (tasks capped at ``max_tasks``, default
      ``tasks_per_server`` x servers); demand: one :class:`DemandModel` draw per job (the
      documented stand-in); a fraction ``constrained`` of the jobs (default 0.5, Sharma et
      al. via Wang et al.) requires machine attributes (:class:`ConstraintModel`).
    - Gangs (``gangs``, default 0): that fraction of the jobs of 2 to
      :data:`~dgdrf.model.scenario.MAX_INSTANCE_TASKS` tasks, if all their tasks fit the
      empty cluster at once (model/gangs.py), runs its tasks all at once (``gang = true``):
      an ML training job's workers, placed whole. Our choice: the 2011 trace does not
      mark gangs; drawn after everything else, so ``gangs = 0`` leaves the scenario of
      a seed as it was.
    - Runnable by construction: a demand that fits no machine is redrawn; a constrained
      job's values are those of a machine its demand fits; if no machine it fits has a
      required boolean attribute (a tiny cluster), that requirement is dropped (relaxed,
      not redrawn).

    One numpy Generator from ``seed`` draws, in this order: the machines' configurations
    (as :func:`google_2011_scenario`), their attributes, the number of jobs, arrival
    times, owners, tasks, mean durations, demands, which jobs are constrained, then job
    by job in arrival order a new demand for one that fits no machine and a constrained
    job's requirements.
    """
    if servers < 1 or users < 1:
        raise ScenarioError(f"google-2011-jobs: need at least one server and one user, got servers={servers}, users={users}")
    if not (math.isfinite(horizon) and 0 < horizon <= MAX_SECONDS):
        raise ScenarioError(f"google-2011-jobs: horizon must be positive seconds (at most {MAX_SECONDS:g}), got {horizon!r}")
    if not (math.isfinite(load) and load > 0):
        raise ScenarioError(f"google-2011-jobs: load must be a positive number, got {load!r}")
    if not 0 <= constrained <= 1:
        raise ScenarioError(f"google-2011-jobs: constrained must be a fraction in [0, 1], got {constrained!r}")
    if not 0 <= gangs <= 1:
        raise ScenarioError(f"google-2011-jobs: gangs must be a fraction in [0, 1], got {gangs!r}")
    if not (math.isfinite(user_skew) and user_skew >= 0):
        raise ScenarioError(f"google-2011-jobs: user_skew must be a number >= 0, got {user_skew!r}")
    cap = model.max_tasks(servers) if max_tasks is None else max_tasks
    if not 1 <= cap <= MAX_TASKS:
        raise ScenarioError(f"google-2011-jobs: max_tasks must be a positive integer (at most {MAX_TASKS:g}), got {max_tasks!r}")
    rng = np.random.default_rng(seed)

    # machines: the thesis generator's draws, then attributes
    caps = np.array(sample_google_2011_servers(servers, rng), dtype=np.float64)
    attrs: list[dict[str, Scalar]] = [{} for _ in range(servers)]
    for a in constraints.attributes:
        picks = rng.choice(len(a.values), size=servers, p=np.asarray(a.prevalence) / sum(a.prevalence))
        for i, k in enumerate(picks):
            v = a.values[int(k)]
            attrs[i][a.name] = v if isinstance(v, bool) else str(v)

    # jobs: a Poisson process, its marks
    work = expected_job_work(caps.sum(axis=0), cap, model, demands)
    n = max(users, int(rng.poisson(load * horizon / work)))
    arrivals = np.sort(rng.uniform(0.0, horizon, n))
    weights = np.arange(1, users + 1, dtype=np.float64) ** -user_skew
    owners = rng.permutation(np.concatenate([np.arange(users), rng.choice(users, size=n - users, p=weights / weights.sum())]))
    mu, sigma = model.tasks_lognormal()
    single = rng.random(n) < model.single_task
    tail = np.maximum(2.0, np.rint(np.exp(rng.normal(mu, sigma, n))))
    tasks = np.where(single, 1, np.minimum(tail, cap)).astype(np.int64)
    means = np.clip(np.exp(rng.normal(math.log(model.duration_median), model.duration_sigma(), n)), model.duration_min, model.duration_max)
    dems = sample_google_2011_demands(n, rng, demands)
    restricted = rng.random(n) < constrained

    jobs: list[list[dict[str, Any]]] = [[] for _ in range(users)]
    for j in range(n):
        demand = dems[j]
        fits = fit_mask(np.asarray(demand), caps, caps)
        for _ in range(100):
            if fits.any():
                break
            demand = sample_google_2011_demands(1, rng, demands)[0]
            fits = fit_mask(np.asarray(demand), caps, caps)
        else:
            raise ScenarioError(f"google-2011-jobs: no demand drawn fits any of the {servers} machines (seed {seed}); use more servers")
        m = float(means[j])
        doc: dict[str, Any] = {
            "id": f"j{j + 1}",
            "demand": list(demand),
            "tasks": int(tasks[j]),
            "duration": {"dist": "uniform", "min": round(m * (1 - model.spread), 3), "max": round(m * (1 + model.spread), 3)},
            "arrival": round(float(arrivals[j]), 3),
        }
        if restricted[j]:
            requires = _draw_requirement(rng, constraints, attrs, fits)
            if requires:
                doc["requires"] = requires
        jobs[int(owners[j])].append(doc)
    if gangs > 0:  # drawn last: without gangs, a seed's scenario is what it was
        gang = rng.random(n) < gangs
        for docs in jobs:
            for doc in docs:
                j = int(doc["id"][1:]) - 1
                if gang[j] and 2 <= doc["tasks"] <= MAX_INSTANCE_TASKS and _packs_whole(doc, caps, attrs):
                    doc["gang"] = True

    server_docs: list[Mapping[str, Any]] = [{"id": f"s{i + 1}", "capacity": [float(c) for c in caps[i]], "attributes": attrs[i]} for i in range(servers)]
    user_docs: list[Mapping[str, Any]] = [{"id": f"u{i + 1}", "jobs": jobs[i]} for i in range(users)]
    return build_scenario(
        ["cpu", "memory"],
        server_docs,
        user_docs,
        name=name or f"google-2011-jobs-{servers}x{users}-seed{seed}",
    )


def _packs_whole(doc: Mapping[str, Any], caps: np.ndarray, attrs: list[dict[str, Scalar]]) -> bool:
    """Whether all of a job's tasks fit the empty cluster at once, where its constraint
    admits them (the scenario's own check of a gang: model/gangs.py first fit)."""
    constraint = Constraint.from_wire([], doc.get("requires") or {})
    admits = np.array([constraint.admits(f"s{i + 1}", attrs[i]) for i in range(len(caps))], dtype=bool)
    part = PartSlots(np.asarray(doc["demand"], dtype=np.float64), int(doc["tasks"]), admits)
    return pack(caps, caps, np.arange(len(caps)), [part]) is not None


def _draw_requirement(rng: np.random.Generator, model: ConstraintModel, attrs: list[dict[str, Scalar]], fits: np.ndarray) -> dict[str, Scalar]:
    """One or two attribute values a job requires (:class:`ConstraintModel`), matched by a
    machine its demand fits; a boolean requirement no such machine meets is dropped."""
    weights = np.array([a.weight for a in model.attributes], dtype=np.float64)
    k = 2 if rng.random() < model.two_attributes else 1
    chosen = [model.attributes[int(i)] for i in sorted(rng.choice(len(model.attributes), size=k, replace=False, p=weights / weights.sum()))]
    ok = fits.copy()
    for a in chosen:
        if a.boolean:
            has = np.array([m[a.name] is True for m in attrs])
            if (ok & has).any():
                ok &= has
    anchor = attrs[int(rng.choice(np.flatnonzero(ok)))]
    return {a.name: anchor[a.name] for a in chosen if not a.boolean or anchor[a.name] is True}


GENERATORS = ("google-2011", "google-2011-jobs", "google-trace")
#: the keys of each generator's table besides kind, servers, users and seed
GENERATOR_KEYS = {
    "google-2011": (),
    "google-2011-jobs": ("horizon", "load", "constrained", "max_tasks", "user_skew", "gangs"),
    "google-trace": ("machine_events", "task_events", "jobs", "task_constraints", "machine_attributes", "window", "comparisons"),
}
#: the google-trace keys that only a trace of jobs (``jobs = true``) reads
TRACE_JOB_KEYS = ("task_constraints", "machine_attributes", "window", "comparisons")
#: the optional numbers of a google-2011-jobs table: key -> (default, lo, lo excluded, hi,
#: what a valid value is); ``max_tasks`` besides, an integer (default 10 x servers)
JOBS_NUMBERS: dict[str, tuple[float, float, bool, float, str]] = {
    "horizon": (DEFAULT_HORIZON, 0.0, True, MAX_SECONDS, "positive seconds"),
    "load": (DEFAULT_LOAD, 0.0, True, 1e3, "a positive number (the offered load; 1 = the cluster's dominant resource busy for the horizon)"),
    "constrained": (DEFAULT_CONSTRAINED, 0.0, False, 1.0, "a fraction of jobs in [0, 1]"),
    "user_skew": (0.0, 0.0, False, 100.0, "a number >= 0 (0: jobs spread uniformly over users)"),
    "gangs": (0.0, 0.0, False, 1.0, "a fraction of jobs in [0, 1] (jobs of 2-64 tasks that run all at once)"),
}


def generate_from_spec(spec: Any, source: str = "<scenario>", base_dir: Path | None = None) -> Scenario:
    """Build a scenario from a ``[generate]`` table of a scenario file.

    - ``kind = "google-2011"``: servers, users, seed (:func:`google_2011_scenario`);
    - ``kind = "google-2011-jobs"``: the same, and optionally ``horizon`` (seconds, default
      3600), ``load`` (default 0.8), ``constrained`` (fraction of jobs, default 0.5),
      ``max_tasks`` (default 10 x servers), ``user_skew`` (default 0: uniform)
      (:func:`google_2011_jobs_scenario`);
    - ``kind = "google-trace"``: servers, users, seed, ``machine_events``, ``task_events``
      (:func:`~dgdrf.model.google_trace.read_google_trace`); with ``jobs = true`` the
      trace's finite jobs instead, optionally with ``task_constraints`` and
      ``machine_attributes`` (together), ``window = [start, end]`` (trace seconds) and
      ``comparisons`` ("skip", "refuse" or "expand")
      (:func:`~dgdrf.model.google_trace.read_google_trace_jobs`). Relative paths are
      relative to the scenario file.
    """

    def fail(where: str, what: str) -> ScenarioError:
        return ScenarioError(f"{source}: generate.{where}: {what}")

    if not isinstance(spec, Mapping):
        raise ScenarioError(f"{source}: generate: must be a table, got {spec!r}")
    kind = spec.get("kind")
    if kind not in GENERATORS:
        raise fail("kind", f"unknown generator {kind!r}; known: {', '.join(GENERATORS)}")
    allowed = {"kind", "servers", "users", "seed", *GENERATOR_KEYS[kind]}
    for k in spec:
        if k not in allowed:
            raise fail(k, f"unknown field for generator {kind!r} (allowed: {', '.join(sorted(allowed))})")
    values = {}
    for k in ("servers", "users", "seed"):
        v = spec.get(k, 0 if k == "seed" else None)
        if v is None:
            raise fail(k, "missing")
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if k == "seed" else 1):
            raise fail(k, f"must be a {'non-negative' if k == 'seed' else 'positive'} integer, got {v!r}")
        values[k] = v
    if kind == "google-2011":
        return google_2011_scenario(values["servers"], values["users"], values["seed"])
    if kind == "google-2011-jobs":
        return google_2011_jobs_scenario(
            values["servers"],
            values["users"],
            values["seed"],
            horizon=_number(spec, "horizon", fail),
            load=_number(spec, "load", fail),
            constrained=_number(spec, "constrained", fail),
            max_tasks=_integer(spec, "max_tasks", fail),
            user_skew=_number(spec, "user_skew", fail),
            gangs=_number(spec, "gangs", fail),
        )
    paths: dict[str, Path] = {}
    for k in ("machine_events", "task_events", "task_constraints", "machine_attributes"):
        v = spec.get(k)
        if v is None and k in TRACE_JOB_KEYS:
            continue
        if not isinstance(v, str) or not v:
            raise fail(k, f"must be a path to a Google 2011 CSV file, got {v!r}")
        p = Path(v)
        paths[k] = p if p.is_absolute() or base_dir is None else base_dir / p
    jobs = spec.get("jobs", False)
    if not isinstance(jobs, bool):
        raise fail("jobs", f"must be true (the trace's finite jobs) or false (one endless task per user, the thesis's), got {jobs!r}")
    if not jobs:
        for k in TRACE_JOB_KEYS:
            if k in spec:
                raise fail(k, "only read with jobs = true (a trace of finite jobs)")
        return read_google_trace(paths["machine_events"], paths["task_events"], servers=values["servers"], users=values["users"], seed=values["seed"])
    if ("task_constraints" in paths) != ("machine_attributes" in paths):
        missing = "machine_attributes" if "task_constraints" in paths else "task_constraints"
        raise fail(missing, "missing: task_constraints and machine_attributes go together (constraints are matched against the machines' attributes)")
    window = spec.get("window")
    if window is not None:
        ok = isinstance(window, list) and len(window) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in window)
        if not ok or not 0 <= window[0] < window[1]:
            raise fail("window", f"must be [start, end], trace seconds with 0 <= start < end, got {window!r}")
        window = (float(window[0]), float(window[1]))
    comparisons = spec.get("comparisons", "skip")
    if comparisons not in COMPARISONS:
        raise fail("comparisons", f"must be one of {', '.join(repr(c) for c in COMPARISONS)} (what to do with constraints other than EQUAL), got {comparisons!r}")
    return read_google_trace_jobs(
        paths["machine_events"],
        paths["task_events"],
        servers=values["servers"],
        users=values["users"],
        seed=values["seed"],
        task_constraints=paths.get("task_constraints"),
        machine_attributes=paths.get("machine_attributes"),
        window=window,
        comparisons=comparisons,
    )


def _number(spec: Mapping[str, Any], key: str, fail: Any) -> float:
    """An optional number of a [generate] table within its :data:`JOBS_NUMBERS` range."""
    default, lo, lo_open, hi, what = JOBS_NUMBERS[key]
    v = spec.get(key, default)
    ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        raise fail(key, f"must be {what} (at most {hi:g}), got {v!r}")
    return float(v)


def _integer(spec: Mapping[str, Any], key: str, fail: Any) -> int | None:
    """An optional positive integer of a [generate] table (None when absent)."""
    v = spec.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_TASKS:
        raise fail(key, f"must be a positive integer (at most {MAX_TASKS:g}), got {v!r}")
    return v
