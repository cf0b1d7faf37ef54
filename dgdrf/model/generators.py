"""Workload generators: "Google-2011-like" scenarios (thesis 5.1).

The thesis builds its test cases from the Google cluster data (2011): X machines picked at
random from the trace and Y users, each user with one task picked at random from its
tasks, submitted endlessly. The machine side is reproduced here exactly from the trace's
published machine-configuration table (normalised CPU, memory -> machine count). The user
side is a *documented stand-in*, not the trace: see :data:`DEMAND_MODEL`. For the real
trace, use :mod:`dgdrf.model.google_trace` on a subset in the Google 2011 CSV schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.errors import ScenarioError
from dgdrf.model.google_trace import read_google_trace
from dgdrf.model.scenario import Scenario, build_scenario

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


GENERATORS = ("google-2011", "google-trace")


def generate_from_spec(spec: Any, source: str = "<scenario>", base_dir: Path | None = None) -> Scenario:
    """Build a scenario from a ``[generate]`` table of a scenario file."""

    def fail(where: str, what: str) -> ScenarioError:
        return ScenarioError(f"{source}: generate.{where}: {what}")

    if not isinstance(spec, Mapping):
        raise ScenarioError(f"{source}: generate: must be a table, got {spec!r}")
    kind = spec.get("kind")
    if kind not in GENERATORS:
        raise fail("kind", f"unknown generator {kind!r}; known: {', '.join(GENERATORS)}")
    allowed = {"kind", "servers", "users", "seed"} | ({"machine_events", "task_events"} if kind == "google-trace" else set())
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
    paths = {}
    for k in ("machine_events", "task_events"):
        v = spec.get(k)
        if not isinstance(v, str) or not v:
            raise fail(k, f"must be a path to a Google 2011 CSV file, got {v!r}")
        p = Path(v)
        paths[k] = p if p.is_absolute() or base_dir is None else base_dir / p
    return read_google_trace(paths["machine_events"], paths["task_events"], servers=values["servers"], users=values["users"], seed=values["seed"])
