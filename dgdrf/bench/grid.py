"""A sweep's grid: the sweep file, its data sets and its runs, each with the key that
identifies its result.

A sweep file is TOML with one ``[sweep]`` table::

    [sweep]
    name = "thesis-grid"
    policies = ["drf", "dgdrf"]
    neighbors = [2, 4, 6]
    seeds = [1, 2, 3]
    scenarios = ["../configs/thesis-100x20.toml"]   # or: servers = [...], users = [...]
    data_seed = 2017                                 # generator seed for servers x users
    gradient_period = [0.1, 0.05]                    # any other run parameter, as a list

Besides, a ``$schema`` key at the top names the file's JSON Schema for editors (dgdrf
schema sweep prints it; dgdrf/bench/sweep_schema.py); it is not read.

Seeds vary the run (latencies, gossip partners, ...); the data set is fixed by the
scenario file or by (servers, users, data_seed), as the thesis compared policies on
fixed data sets. Every combination is one run with a key derived from its parameters
(and the scenario file's content), so running a sweep again finds what is done and
resumes (dgdrf/bench/store.py keeps the records; dgdrf/bench/sweep.py runs them).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any, Callable

from dgdrf.errors import ConfigError, unknown_policy
from dgdrf.bench.staleness import revision_params

DEFAULT_DATA_SEED = 2017
#: sweep-file names accepted for run parameters of another name
PARAM_ALIASES = {"gossip_period": "gradient_period"}
#: grid keys of the [sweep] table that are not run parameters
GRID_KEYS = ("name", "policies", "neighbors", "seeds", "servers", "users", "scenarios", "data_seed", "part_of")


def _policy_cost(policy: str) -> float:
    """Relative cost of one run by policy (Policy.sweep_cost), for longest-first
    scheduling only: rough weights (the gradient policies exchange views every tick on
    every server); where they came from: docs/notes/2026-11-22-sweep-policy-cost.md."""
    from dgdrf.policies import POLICIES

    return POLICIES[policy].sweep_cost


def run_parameters() -> tuple[str, ...]:
    """Run parameters a sweep may vary besides policy, neighbours and seed."""
    from dgdrf.config import option_names

    return tuple(n for n in option_names() if n not in ("policy", "seed", "neighbors"))


@dataclass(frozen=True)
class Dataset:
    """A fixed data set: a scenario file, or a generated Google-2011-like cluster."""

    label: str
    path: Path | None = None
    digest: str = ""
    servers: int = 0
    users: int = 0
    data_seed: int = DEFAULT_DATA_SEED

    def load(self):
        from dgdrf.model.generators import google_2011_scenario
        from dgdrf.config import load_scenario

        if self.path is not None:
            return load_scenario(self.path)
        return google_2011_scenario(self.servers, self.users, self.data_seed)

    def params(self) -> dict[str, Any]:
        if self.path is not None:
            return {"dataset": self.label, "scenario_digest": self.digest}
        return {"dataset": self.label, "servers": self.servers, "users": self.users, "data_seed": self.data_seed}


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: its parameters and the key that identifies its result."""

    key: str
    params: dict[str, Any]
    dataset: Dataset
    cost: float = 1.0
    #: also the run's page (``dgdrf sweep --html``; dgdrf/pages/run_page.py): it comes back
    #: with the record, under ``page``, and is written beside the records, not into them
    page: bool = False


@dataclass
class SweepSpec:
    """A parsed, validated sweep file."""

    name: str
    policies: list[str]
    neighbors: list[int]
    seeds: list[int]
    datasets: list[Dataset]
    params: dict[str, list[Any]] = field(default_factory=dict)
    source: Path | None = None
    #: sha256 of the sweep file's bytes as read by :func:`load_sweep`, 16 hex digits
    source_digest: str | None = field(default=None, compare=False, repr=False)
    #: the sweep this one is a part of (``part_of``): a subset of its grid, run on its
    #: own (e.g. the cheapest runs first) into the whole sweep's output directory
    parent: SweepSpec | None = field(default=None, compare=False, repr=False)

    def home(self) -> SweepSpec:
        """The sweep whose output directory and manifest this one's results go to: one
        directory per sweep file, and a part's results are its whole sweep's."""
        return self.parent if self.parent is not None else self

    def runs(self) -> list[RunSpec]:
        """Every combination, most expensive first (a longer run started last would
        leave a core idle at the end). A centralized policy does not use the overlay, so
        it runs once, at the first neighbour count, whatever the list (the report draws
        that run at every neighbour count)."""
        from dgdrf.emulation import RunConfig

        names = sorted(self.params)
        runs = []
        combos = (
            (ds, policy, nb, seed, *values)
            for ds, policy, seed, *values in product(self.datasets, self.policies, self.seeds, *(self.params[n] for n in names))
            for nb in (self.neighbors if uses_neighbors(policy) else self.neighbors[:1])
        )
        for ds, policy, nb, seed, *values in combos:
            extra = dict(zip(names, values))
            params = {**ds.params(), "policy": policy, "neighbors": nb, "seed": seed, **extra, **revision_params(policy, extra)}
            try:
                RunConfig.from_settings({}, policy=policy, neighbors=nb, seed=seed, **extra).validate()
            except (ConfigError, TypeError, ValueError) as exc:
                raise ConfigError(f"sweep {self.name!r}: run {params}: {exc}") from None
            cost = ds.servers * max(ds.users, 1) * _policy_cost(policy) * (1 + nb / 10)
            runs.append(RunSpec(run_key(params), params, ds, cost))
        runs.sort(key=lambda r: -r.cost)
        return runs

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": str(self.source) if self.source else None,
            "policies": self.policies,
            "neighbors": self.neighbors,
            "seeds": self.seeds,
            "datasets": [ds.params() | ({"path": str(ds.path)} if ds.path else {}) for ds in self.datasets],
            "params": self.params,
        }


def uses_neighbors(policy: str) -> bool:
    """Whether a policy's results depend on the overlay's neighbour count (d-psdsf's do
    not: its gossip goes to random Cyclon peers, whatever P)."""
    from dgdrf.policies import POLICIES

    cls = POLICIES[policy]
    return cls.distributed and cls.uses_neighbor_count


def run_key(params: dict[str, Any]) -> str:
    """A stable identifier of a run's parameters (the resume key)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


# -- parsing --------------------------------------------------------------------------------
def load_sweep(path: Path) -> SweepSpec:
    """Read and validate a sweep file; errors name the file and the field."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        # as read_text would: universal newlines
        data = tomllib.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
    except FileNotFoundError:
        raise ConfigError(f"sweep file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"sweep file {path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"sweep file {path}: not valid TOML: {exc}") from None
    spec = parse_sweep(data, base=path.parent, source=path)
    spec.source_digest = hashlib.sha256(raw).hexdigest()[:16]  # the bytes parsed, not the file now
    return spec


def sweep_digest(spec: SweepSpec) -> str:
    """The sweep file's digest (sha256, 16 hex digits): of the bytes :func:`load_sweep`
    parsed, or of the file now when the spec was parsed from data naming it; of the
    canonical JSON of :meth:`SweepSpec.describe` when there is no file."""
    if spec.source_digest:
        return spec.source_digest
    if spec.source is not None:
        try:
            return hashlib.sha256(Path(spec.source).read_bytes()).hexdigest()[:16]
        except OSError:
            pass
    text = json.dumps(spec.describe(), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_sweep(data: dict[str, Any], base: Path = Path("."), source: Path | None = None) -> SweepSpec:
    from dgdrf.policies import POLICIES

    where = str(source) if source else "sweep"
    table = data.get("sweep")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: needs a [sweep] table")
    others = [k for k in data if k not in ("sweep", "$schema")]
    if others:  # a [params] table, say, would otherwise be ignored and its runs never made
        raise ConfigError(f"{where}: {others[0]}: unknown; a sweep file holds one [sweep] table, its run parameters included")
    if not isinstance(data.get("$schema", ""), str):  # for editors (dgdrf/schema.py); not read
        raise ConfigError(f"{where}: $schema: must be the path or URL of the file's JSON Schema, got {data['$schema']!r}"[:200])

    def fail(key: str, problem: str) -> ConfigError:
        return ConfigError(f"{where}: sweep.{key}: {problem}")

    def as_list(key: str, check: Callable[[Any], bool], what: str, required: bool = True) -> list[Any]:
        if key not in table:
            if required:
                raise fail(key, f"missing (a list of {what})")
            return []
        v = table[key]
        values = v if isinstance(v, list) else [v]
        if not values:
            raise fail(key, f"must not be empty (a list of {what})")
        bad = [x for x in values if not check(x)]
        if bad:
            raise fail(key, f"must be a list of {what}, got {bad[0]!r}")
        if len(set(map(repr, values))) != len(values):
            raise fail(key, "lists a value twice")
        return values

    def positive_int(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 1

    name = table.get("name")
    if not isinstance(name, str) or not name.strip() or any(c in name for c in "/\\\0"):
        raise fail("name", f"must be a non-empty name without slashes, got {name!r}")
    policies = as_list("policies", lambda x: isinstance(x, str), "policy names")
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise fail("policies", unknown_policy(unknown[0], POLICIES))
    neighbors = as_list("neighbors", positive_int, "integers >= 1")
    seeds = as_list("seeds", lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0, "integers >= 0")

    datasets: list[Dataset] = []
    if "scenarios" in table:
        if "servers" in table or "users" in table:
            raise fail("scenarios", "give either scenarios or servers/users, not both")
        for p in as_list("scenarios", lambda x: isinstance(x, str) and x.strip() != "", "scenario file paths"):
            file = (base / p) if not Path(p).is_absolute() else Path(p)
            try:
                content = file.read_bytes()
            except OSError as exc:
                raise fail("scenarios", f"cannot read {file}: {exc.strerror or exc}") from None
            from dgdrf.config import load_scenario

            sc = load_scenario(file)  # validate now, not in a worker
            datasets.append(Dataset(label=sc.name, path=file, digest=hashlib.sha256(content).hexdigest()[:16], servers=len(sc.servers), users=len(sc.users)))
        labels = [d.label for d in datasets]
        if len(set(labels)) != len(labels):
            raise fail("scenarios", f"two scenario files have the same name ({labels}); give them distinct `name`s")
    else:
        servers = as_list("servers", positive_int, "integers >= 1")
        users = as_list("users", positive_int, "integers >= 1")
        ds = table.get("data_seed", DEFAULT_DATA_SEED)
        if not isinstance(ds, int) or isinstance(ds, bool) or ds < 0:
            raise fail("data_seed", f"must be an integer >= 0, got {ds!r}")
        datasets = [Dataset(label=f"google-2011-{s}x{u}", servers=s, users=u, data_seed=ds) for s, u in product(servers, users)]

    known = run_parameters()
    params: dict[str, list[Any]] = {}
    for key, v in table.items():
        if key in GRID_KEYS:
            continue
        param = PARAM_ALIASES.get(key, key)
        if param not in known:
            raise fail(key, f"unknown run parameter; known: {', '.join(GRID_KEYS[1:] + known)}")
        if param in params:
            raise fail(key, f"given twice (also as {param})")
        if param == "latency_ms" and isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
            v = [v]  # one [min, max] pair
        values = v if isinstance(v, list) else [v]
        if not values:
            raise fail(key, "must not be empty")
        params[param] = values
    spec = SweepSpec(name.strip(), policies, neighbors, seeds, datasets, params, source)
    runs = spec.runs()  # every combination must be a valid run configuration
    if "part_of" in table:
        spec.parent = _parent_sweep(table["part_of"], base, runs, fail)
    return spec


def _parent_sweep(part_of: Any, base: Path, runs: list[RunSpec], fail: Callable[[str, str], ConfigError]) -> SweepSpec:
    """The whole sweep a part names (``part_of``): a sweep file whose grid holds every run
    of the part, and that is not itself a part."""
    if not isinstance(part_of, str) or not part_of.strip():
        raise fail("part_of", f"must be the path of the whole sweep's file, got {part_of!r}")
    path = Path(part_of) if Path(part_of).is_absolute() else base / part_of
    parent = load_sweep(path)
    if parent.parent is not None:
        raise fail("part_of", f"{path} is itself a part of another sweep; name the whole one")
    whole = {r.key for r in parent.runs()}
    outside = [r for r in runs if r.key not in whole]
    if outside:
        raise fail("part_of", f"{len(outside)} run(s) are not in {path}'s grid, e.g. {outside[0].params}")
    return parent
