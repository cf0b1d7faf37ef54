"""Sweeps: every combination of a grid of runs, in parallel worker processes.

A sweep file is TOML with one ``[sweep]`` table::

    [sweep]
    name = "thesis-grid"
    policies = ["drf", "dgdrf"]
    neighbors = [2, 4, 6]
    seeds = [1, 2, 3]
    scenarios = ["../configs/thesis-100x20.toml"]   # or: servers = [...], users = [...]
    data_seed = 2017                                 # generator seed for servers x users
    gradient_period = [0.1, 0.05]                    # any other run parameter, as a list

Seeds vary the run (latencies, gossip partners, ...); the data set is fixed by the
scenario file or by (servers, users, data_seed), as the thesis compared policies on
fixed data sets. Every combination is one run with a key derived from its parameters
(and the scenario file's content), so running a sweep again finds what is done and
resumes; a run that fails is recorded with its error and the sweep goes on. Each run is
its own process (forked from a preloaded server), which makes its peak memory its own
and a crash or a time-out cost only that run. Every record and the manifest (sweep.json)
hold the run's provenance (dgdrf/provenance.py: git commit and dirty flag, dgdrf, Python
and library versions), the sweep file's digest and what tells whether the record is
stale (dgdrf/bench/staleness.py: its policy's behaviour fingerprint, the revisions of the
paths only some runs take), under the key ``provenance``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import multiprocessing as mp
import os
import platform
import resource
import signal
import threading
import time
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import product
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable, Iterable

from dgdrf.build_info import core
from dgdrf.errors import ConfigError, DgdrfError
from dgdrf.bench.staleness import is_stale, marks, revision_params
from dgdrf.provenance import provenance
from dgdrf.runtime.process import die_with_parent

RESULTS_JSONL = "results.jsonl"
RESULTS_CSV = "results.csv"
SWEEP_JSON = "sweep.json"
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
    """Whether a policy's results depend on the overlay's neighbour count."""
    from dgdrf.policies import POLICIES

    return POLICIES[policy].distributed


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
    others = [k for k in data if k != "sweep"]
    if others:  # a [params] table, say, would otherwise be ignored and its runs never made
        raise ConfigError(f"{where}: {others[0]}: unknown; a sweep file holds one [sweep] table, its run parameters included")

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
        raise fail("policies", f"unknown policy {unknown[0]!r}; known: {', '.join(POLICIES)}")
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


def check_output_dir(out: Path, spec: SweepSpec) -> None:
    """One output directory per sweep file: ``out`` holds no other sweep's results (its
    manifest names this sweep, or the whole one this is a part of, or there is none)."""
    try:
        other = json.loads((Path(out) / SWEEP_JSON).read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return
    home = spec.home()
    if other is not None and other != home.name:
        hint = f", or declare part_of in {spec.source} if it is a part of {other!r}" if spec.parent is None else ""
        raise ConfigError(f"{out} holds the results of sweep {other!r}, not {home.name!r}: one directory per sweep file; give another --out{hint}")


# -- the results store ------------------------------------------------------------------------
def read_records(out: Path) -> tuple[list[dict[str, Any]], int]:
    """All records in ``out``/results.jsonl (later records of a key replace earlier
    ones) and the number of unreadable lines skipped (a line cut by an interruption)."""
    file = Path(out) / RESULTS_JSONL
    if not file.exists():
        return [], 0
    by_key: dict[str, dict[str, Any]] = {}
    bad = 0
    with file.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(rec, dict) and isinstance(rec.get("key"), str):
                by_key[rec["key"]] = rec
            else:
                bad += 1
    return list(by_key.values()), bad


#: where :func:`drop_unreadable` keeps the lines it takes out of results.jsonl
TORN_LINES = "torn-lines.txt"


def drop_unreadable(out: Path) -> int:
    """Take the unreadable lines (cut by an interruption) out of ``out``/results.jsonl,
    appending them to ``out``/torn-lines.txt, so that the warning about them is given
    once and their runs are redone once; returns how many. Atomic, as :func:`prune_stale`."""
    file = Path(out) / RESULTS_JSONL
    if not file.exists():
        return 0
    keep: list[str] = []
    torn: list[str] = []
    with file.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                rec = None
            (keep if isinstance(rec, dict) and isinstance(rec.get("key"), str) else torn).append(line)
    if not torn:
        return 0
    with (Path(out) / TORN_LINES).open("a", encoding="utf-8") as fh:
        fh.write("".join(x + "\n" for x in torn))
    tmp = file.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(x + "\n" for x in keep), encoding="utf-8")
    tmp.replace(file)
    return len(torn)


#: where :func:`prune_stale` keeps the records of code that has changed since
STALE_JSONL = "stale.jsonl"


def prune_stale(out: Path) -> int:
    """Move the records made by code that has changed since
    (:func:`dgdrf.bench.staleness.is_stale`: reports leave them out, a sweep runs them
    again) from ``out``/results.jsonl to ``out``/stale.jsonl, appended as they were;
    returns how many moved. Once a sweep has rerun them, results.jsonl then holds only
    what the current code makes, and the old records stay beside it for comparison. Unreadable lines are dropped (a sweep would
    redo their runs anyway). The new results.jsonl replaces the old one atomically."""
    out = Path(out)
    file = out / RESULTS_JSONL
    if not file.exists():
        return 0
    keep: list[str] = []
    stale: list[str] = []
    with file.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            (stale if isinstance(rec, dict) and is_stale(rec) else keep).append(line)
    if not stale:
        return 0
    with (out / STALE_JSONL).open("a", encoding="utf-8") as fh:
        fh.write("".join(x + "\n" for x in stale))
    tmp = file.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(x + "\n" for x in keep), encoding="utf-8")
    tmp.replace(file)
    return len(stale)


#: CSV columns taken from a run's result, in order (after key, status, error and parameters)
RESULT_COLUMNS = (
    "scenario", "servers", "users", "allocations", "stop_reason", "saturated", "runtime_s", "warmup_s",
    "min_share", "gini", "jain", "ratio_20_20", "error_ratio", "error_ratio_1pct", "error_ratio_5pct",
    "error_ratio_10pct", "error_ratio_15pct", "messages", "bytes", "messages_per_tick", "bytes_per_tick",
    "latency_p50_s", "latency_p99_s", "invariant_violations", "run_wall_s", "sim_per_wall", "messages_per_wall_s",
)
PROCESS_COLUMNS = ("wall_s", "cpu_s", "peak_rss_mb", "core", "finished_at")


def flat_row(rec: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: the run's parameters and the scalar figures of its result."""
    row: dict[str, Any] = {"key": rec["key"], "status": rec.get("status"), "error": rec.get("error") or ""}
    row.update(rec.get("params", {}))
    r = rec.get("result") or {}
    if r:
        tol = r.get("error_ratio_tol", {})
        msgs, nbytes = r.get("messages", {}), r.get("bytes", {})
        groups = r.get("cost_per_tick", {}).get("by_group", {})
        wall = r.get("wall_s") or 0.0
        sim = (r.get("runtime_s") or 0.0) + (r.get("warmup_s") or 0.0)
        row.update(
            scenario=r.get("scenario"), servers=r.get("servers"), users=r.get("users"), allocations=r.get("allocations"),
            stop_reason=r.get("stop_reason"), saturated=r.get("saturated"), runtime_s=r.get("runtime_s"), warmup_s=r.get("warmup_s"),
            min_share=r.get("min_share"), gini=r.get("gini"), jain=r.get("jain"), ratio_20_20=r.get("ratio_20_20"),
            error_ratio=r.get("error_ratio"), error_ratio_1pct=tol.get("0.01"), error_ratio_5pct=tol.get("0.05"),
            error_ratio_10pct=tol.get("0.10"), error_ratio_15pct=tol.get("0.15"), messages=msgs.get("total"), bytes=nbytes.get("total"),
            messages_per_tick=sum(g.get("messages", 0.0) for g in groups.values()), bytes_per_tick=sum(g.get("bytes", 0.0) for g in groups.values()),
            latency_p50_s=r.get("latency_s", {}).get("p50"), latency_p99_s=r.get("latency_s", {}).get("p99"),
            invariant_violations=len(r.get("invariant_violations", [])), run_wall_s=wall,
            sim_per_wall=sim / wall if wall > 0 else None, messages_per_wall_s=(msgs.get("total") or 0) / wall if wall > 0 else None,
        )
    for c in PROCESS_COLUMNS:
        row[c] = rec.get(c)
    return row


def write_csv(out: Path, records: Iterable[dict[str, Any]]) -> Path:
    """Rewrite ``out``/results.csv from the records (one row per run, stable columns)."""
    rows = [flat_row(r) for r in sorted(records, key=lambda r: (json.dumps(r.get("params", {}), sort_keys=True)))]
    param_cols = sorted({k for rec in rows for k in rec} - {"key", "status", "error", *RESULT_COLUMNS, *PROCESS_COLUMNS})
    cols = ["key", "status", "error", *param_cols, *RESULT_COLUMNS, *PROCESS_COLUMNS]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: ("" if v is None else v) for k, v in row.items()})
    file = Path(out) / RESULTS_CSV
    tmp = file.with_suffix(".csv.tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    tmp.replace(file)
    return file


# -- running ---------------------------------------------------------------------------------
def _child(run: RunSpec, conn) -> None:
    """Worker process: one run; sends its record down ``conn``. Ctrl-C is the parent's
    business (it stops the children), so it is ignored here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(signal.SIGKILL)  # no orphan keeps a core busy for a result nobody reads
    t0 = time.perf_counter()
    try:
        from dgdrf.emulation import RunConfig, run_emulation

        scenario = run.dataset.load()
        p = run.params
        extra = {k: v for k, v in p.items() if k in run_parameters()}
        config = RunConfig.from_settings(scenario.settings, policy=p["policy"], neighbors=p["neighbors"], seed=p["seed"], **extra)
        result = run_emulation(scenario, config).to_dict()
        rec: dict[str, Any] = {"status": "ok", "result": result, "error": None}
    except DgdrfError as exc:
        rec = {"status": "error", "result": None, "error": str(exc)}
    except Exception as exc:  # a bug: record it and let the sweep go on
        rec = {"status": "error", "result": None, "error": f"{type(exc).__name__}: {exc}"}
    rec["wall_s"] = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rec["peak_rss_mb"] = usage.ru_maxrss / 1024.0  # KiB on Linux
    rec["cpu_s"] = usage.ru_utime + usage.ru_stime  # unlike wall_s, not stretched by a shared core
    rec["core"] = core()  # compiled or pure Python: the same result, another wall time
    conn.send(rec)
    conn.close()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@dataclass
class SweepOutcome:
    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    stops: dict[str | None, int] = field(default_factory=dict)  # runs done that did not end saturated, by stop reason
    interrupted: bool = False
    wall_s: float = 0.0
    out: Path = Path(".")


def _context():
    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["dgdrf.emulation", "dgdrf.bench.sweep"])
    return ctx


def run_sweep(
    spec: SweepSpec,
    out: Path,
    workers: int | None = None,
    retry_failed: bool = False,
    timeout: float | None = None,
    progress: bool = True,
    limit: int | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> SweepOutcome:
    """Run every run of ``spec`` not yet recorded in ``out`` with ``workers`` processes
    (default: all cores). Records are appended to results.jsonl as runs finish;
    results.csv is rewritten at the end, also when interrupted (Ctrl-C stops the
    workers; finished runs stay recorded). ``limit``: start at most this many runs."""
    out = Path(out)
    check_output_dir(out, spec)
    out.mkdir(parents=True, exist_ok=True)
    workers = workers or os.cpu_count() or 1
    runs = spec.runs()
    records, _ = read_records(out)
    # a record of code that behaved otherwise (is_stale) is run again; the new one replaces it
    finished = {r["key"] for r in records if (r.get("status") == "ok" or not retry_failed) and not is_stale(r)}
    todo = [r for r in runs if r.key not in finished]
    outcome = SweepOutcome(total=len(runs), skipped=len(runs) - len(todo), out=out)
    if limit is not None:
        todo = todo[:limit]
    t0 = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    # once, here: records are made in this process, so no worker runs git
    prov = {**provenance(), "sweep_digest": sweep_digest(spec)}
    ctx = _context()
    running: dict[Any, tuple[RunSpec, Any, Any, float]] = {}  # conn -> (run, process, conn, started)
    pending = list(todo)
    bar = _Progress(spec.name, len(runs), outcome.skipped, enabled=progress)
    main = threading.current_thread() is threading.main_thread()
    previous_term = signal.signal(signal.SIGTERM, _interrupt) if main else None  # a batch system's stop: as Ctrl-C
    if main and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background
        signal.signal(signal.SIGINT, _interrupt)
    try:
        with bar, (out / RESULTS_JSONL).open("a+", encoding="utf-8") as sink:
            if sink.tell() > 0:
                sink.seek(sink.tell() - 1)
                if sink.read(1) != "\n":
                    sink.write("\n")  # end a line cut by an interruption; it stays unreadable, alone
            while pending or running:
                while pending and len(running) < workers:
                    run = pending.pop(0)
                    recv, send = ctx.Pipe(duplex=False)
                    proc = ctx.Process(target=_child, args=(run, send), name=f"dgdrf-sweep-{run.key}")
                    proc.start()
                    send.close()
                    running[recv] = (run, proc, recv, time.perf_counter())
                wait_for = None
                if timeout is not None:
                    wait_for = max(0.0, min(start + timeout for _, _, _, start in running.values()) - time.perf_counter())
                ready = wait([*running, *(p.sentinel for _, p, _, _ in running.values())], timeout=wait_for)
                now = time.perf_counter()
                for conn, (run, proc, _, start) in list(running.items()):
                    rec = None
                    if conn in ready or proc.sentinel in ready:
                        try:
                            rec = conn.recv()
                        except (EOFError, OSError):
                            proc.join(5)
                            rec = {"status": "error", "result": None, "error": f"worker process died (exit code {proc.exitcode}; killed or out of memory?)", "wall_s": now - start, "peak_rss_mb": None}
                    elif timeout is not None and now - start >= timeout:
                        proc.kill()
                        rec = {"status": "error", "result": None, "error": f"timed out after {timeout:g} s", "wall_s": now - start, "peak_rss_mb": None}
                    if rec is None:
                        continue
                    proc.join(5)
                    conn.close()
                    del running[conn]
                    # what the staleness rules read: the policy's behaviour fingerprint, the revisions of the paths only some runs take
                    made_by = {**prov, **marks(run.params)}
                    rec = {"key": run.key, "sweep": spec.name, "params": run.params, **rec, "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "provenance": made_by}
                    sink.write(json.dumps(_finite(rec)) + "\n")
                    sink.flush()
                    outcome.done += 1
                    outcome.failed += rec["status"] != "ok"
                    stop = (rec.get("result") or {}).get("stop_reason")
                    if rec["status"] == "ok" and stop != "saturated":
                        outcome.stops[stop] = outcome.stops.get(stop, 0) + 1
                    bar.advance(rec)
                    if on_record is not None:
                        on_record(rec)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)
        for _, proc, conn, _ in running.values():
            proc.kill()
            proc.join(5)
            conn.close()
        outcome.wall_s = time.perf_counter() - t0
        records, _ = read_records(out)
        write_csv(out, records)
        session = {"started": started, "wall_s": round(outcome.wall_s, 3), "runs_done": outcome.done, "failed": outcome.failed, "workers": workers, "interrupted": outcome.interrupted, "core": core()}
        if spec.parent is not None:
            session["part"] = {"name": spec.name, "source": str(spec.source) if spec.source else None, "runs": len(runs)}
        _write_manifest(out, spec, session, prov)
    return outcome


def _finite(x: Any) -> Any:
    """JSON has no infinities or NaN: they become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _write_manifest(out: Path, spec: SweepSpec, session: dict[str, Any], prov: dict[str, Any] | None = None) -> None:
    """sweep.json: the grid, the machine, every invocation's wall time (their sum is the
    sweep's time; earlier sessions are kept when a sweep is resumed), and the provenance
    (``prov``, default: this process's and the sweep file's) of the last invocation that
    ran something, as for sessions: a rerun that finds every run done keeps the earlier
    (null in a manifest written before provenance was recorded: this code made none of
    its records)."""
    from dgdrf import __version__

    file = out / SWEEP_JSON
    sessions: list[dict[str, Any]] = []
    made_by: Any = None
    try:
        previous = json.loads(file.read_text(encoding="utf-8"))
        sessions = list(previous.get("sessions", []))
        made_by = previous.get("provenance")
    except (OSError, ValueError, AttributeError):
        pass
    if session["runs_done"] or not sessions:
        sessions.append(session)
        made_by = prov if prov is not None else {**provenance(), "sweep_digest": sweep_digest(spec)}
    home = spec.home()  # a part's manifest is its whole sweep's
    doc = {
        **home.describe(),
        "runs": len(home.runs()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "dgdrf": __version__,
        "sessions": sessions,
        "wall_s": round(sum(x.get("wall_s", 0.0) for x in sessions), 3),
        "provenance": made_by,
    }
    tmp = file.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(file)


class _Progress:
    """A rich progress bar (done/total, runs per minute, ETA); silent when disabled."""

    def __init__(self, name: str, total: int, done: int, enabled: bool) -> None:
        self.enabled = enabled
        self.failed = 0
        self.stops: dict[str | None, int] = {}
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.t0 = time.perf_counter()
            self.new = 0
            self.p = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                TextColumn("{task.fields[failed]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self.task = self.p.add_task(name, total=total, completed=done, rate="", failed="")

    def __enter__(self) -> _Progress:
        if self.enabled:
            self.p.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.enabled:
            self.p.__exit__(*exc)

    def advance(self, rec: dict[str, Any]) -> None:
        if not self.enabled:
            return
        self.new += 1
        self.failed += rec["status"] != "ok"
        stop = (rec.get("result") or {}).get("stop_reason")
        if rec["status"] == "ok" and stop != "saturated":
            self.stops[stop] = self.stops.get(stop, 0) + 1
        per_min = 60.0 * self.new / max(time.perf_counter() - self.t0, 1e-9)
        notes = ([f"{self.failed} failed"] if self.failed else []) + [f"{n} {reason}" for reason, n in sorted(self.stops.items())]
        self.p.update(self.task, advance=1, rate=f"{per_min:.1f} runs/min", failed=f"[red]{', '.join(notes)}" if notes else "")

