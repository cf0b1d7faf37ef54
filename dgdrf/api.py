"""The Python API: what ``dgdrf run`` and ``dgdrf sweep`` do, as functions, and a
sweep's records as pandas data frames for a notebook (docs/API.md has a worked example).

- :func:`run` one scenario under one policy and get its :class:`RunResult` (the
  ``dgdrf run --json`` document is its ``to_dict()``);
- :func:`load_scenario` a scenario file, or build one in code with :func:`scenario`;
- :func:`sweep` a grid of runs into a results directory (resumable, as ``dgdrf sweep``);
- :func:`results`: that directory's runs, one row each (parameters and scalar figures,
  as results.csv has them); :func:`jobs`: the per-job records of finite workloads.

Everything here is the command line's own code path, so a run or a sweep is the same
whichever way it is started, and a bad input is the same one-line error (a
:class:`~dgdrf.errors.DgdrfError`: ConfigError for an option, ScenarioError for a
scenario) instead of a TypeError. pandas is optional (``pip install 'dgdrf[analysis]'``):
only :func:`results` and :func:`jobs` import it.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from importlib.resources import as_file, files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dgdrf.config import RunConfig, checked_settings, load_scenario
from dgdrf.errors import ConfigError, DgdrfError, unknown_policy
from dgdrf.measurement import RunResult
from dgdrf.model.scenario import Scenario

if TYPE_CHECKING:  # pandas is optional: imported where a frame is made
    import pandas as pd

    from dgdrf.bench.grid import SweepSpec
    from dgdrf.bench.sweep import SweepOutcome

__all__ = ["MissingDependency", "jobs", "load_scenario", "results", "run", "scenario", "sweep"]

#: the fields of a per-job record (dgdrf/model/job_tracker.py JobTracker.job_records)
JOB_COLUMNS = ("user", "job", "arrival", "first_start", "finish", "tasks", "jct")
#: the summaries of a distribution of seconds a result holds (measurement.SPREAD)
_SPREAD = ("mean", "p50", "p95", "p99", "max")
#: the scalar figures of a finite workload's result that results.csv leaves out, and the
#: result key each comes from (a summary's figure: key and figure)
_JOB_FIGURES: dict[str, tuple[str, str | None]] = {
    "makespan": ("makespan", None),
    **{f"jct_{f}_s": ("jct_s", f) for f in _SPREAD},
    **{f"queueing_delay_{f}_s": ("queueing_delay_s", f) for f in _SPREAD},
    "unfinished_tasks": ("unfinished_tasks", None),
    "jain_time_avg": ("jain_time_avg", None),
    "gini_time_avg": ("gini_time_avg", None),
    "min_time_avg_share": ("min_time_avg_share", None),
}
#: text columns of a results frame; every other figure is a number
_TEXT_COLUMNS = {"key", "status", "error", "scenario", "stop_reason", "saturated", "core", "host", "finished_at", "dataset", "scenario_digest", "policy", "stale"}


class MissingDependency(DgdrfError, ImportError):
    """An optional dependency is not installed (pandas for the data frames): which one,
    and the pip command that installs it."""


# -- one run -----------------------------------------------------------------------------------
def default_scenario() -> Scenario:
    """The embedded scenario ``dgdrf run`` runs with no arguments (30 servers, 10 users)."""
    with as_file(files("dgdrf") / "data" / "default.toml") as path:
        return load_scenario(path)


def run(scenario: Scenario | str | os.PathLike[str] | None = None, policy: str | None = None, **options: Any) -> RunResult:
    """Run ``scenario`` under ``policy`` in virtual time, as ``dgdrf run`` does, and return
    what it measured (``.to_dict()`` is the ``dgdrf run --json`` document).

    ``scenario``: a :class:`Scenario` (:func:`load_scenario`, :func:`scenario`,
    :mod:`dgdrf.model.generators`), the path of a scenario file (.toml or .json), or None
    for the embedded default. ``policy``: a policy's name; None: the scenario's own
    ``policy`` setting, else ``drf``. ``options``: any option of ``dgdrf run`` by its name
    (``seed=2``, ``tick=0.05``, ``latency_ms=(1, 5)``, ``max_time=600``; ``dgdrf run
    --help`` lists them), overriding the scenario's settings. An unknown option or a bad
    value raises ConfigError naming it, before anything runs.

    The run is a pure function of its inputs: the same arguments give the same result,
    wall time aside. Like ``dgdrf run``, it does not raise for what the result reports:
    check ``invariant_violations`` (empty unless a policy broke an invariant),
    ``unplaceable_users`` and ``stop_reason``."""
    from dgdrf.emulation import run_emulation
    from dgdrf.policies import POLICIES

    source: str | None = None
    if scenario is None:
        scenario = default_scenario()
    elif not isinstance(scenario, Scenario):
        if not isinstance(scenario, (str, os.PathLike)):
            raise ConfigError(f"scenario: must be a Scenario (dgdrf.scenario(...) builds one from plain data) or the path of a scenario file, got {type(scenario).__name__}")
        source = os.fspath(scenario)
        scenario = load_scenario(source)
        for w in scenario.warnings:
            warnings.warn(w, stacklevel=2)
    if policy is None:
        policy = scenario.settings.get("policy", "drf")
    if policy not in POLICIES:
        raise ConfigError(unknown_policy(policy, POLICIES))
    config = RunConfig.from_settings(scenario.settings, source, **options)
    return run_emulation(scenario, replace(config, policy=policy).validate())


# -- a scenario in code ------------------------------------------------------------------------
def scenario(
    servers: Sequence[Mapping[str, Any] | tuple[str, Sequence[float]]] | None = None,
    users: Sequence[Mapping[str, Any] | tuple[str, Sequence[float]]] | None = None,
    *,
    resources: Sequence[str] = ("cpu", "memory"),
    generate: Mapping[str, Any] | None = None,
    name: str = "scenario",
    **settings: Any,
) -> Scenario:
    """A scenario from plain Python data, validated as a scenario file is: the document a
    TOML or JSON file would hold, read by the same code (dgdrf/model/scenario_file.py), so
    a bad field is the same ScenarioError naming it (``users[1].demand``, ...).

    Either ``servers`` and ``users`` (over ``resources``): each a document as in a file
    (``{"id": "s1", "capacity": [1, 1], "attributes": {...}}``; a user
    ``{"id": "u1", "demand": [...]}`` or ``{"id": "u1", "weight": 2, "jobs": [{"id",
    "demand", "tasks", "duration", "arrival", "requires"}, ...]}``), or an ``(id,
    vector)`` pair; or ``generate``, a ``[generate]`` table (``{"kind":
    "google-2011-jobs", "servers": 8, "users": 4, "seed": 1, ...}``). ``settings``: the
    scenario's run settings (``policy``, ``tick``, any option of ``dgdrf run``), checked
    against the options' declarations: an unknown one is a ConfigError (a file's is
    only a warning; in code it is a typo)."""
    from dgdrf.model.scenario_file import parse_document

    source = "dgdrf.scenario()"
    doc: dict[str, Any] = {"name": name}
    if generate is not None:
        doc["generate"] = dict(generate)
    if servers is not None or users is not None or generate is None:
        doc["resources"] = list(resources)
        doc["servers"] = [_document(s, "capacity") for s in servers or ()]
        doc["users"] = [_document(u, "demand") for u in users or ()]
    RunConfig.from_settings({}, None, **{k: v for k, v in settings.items() if k != "policy"})  # an unknown option or a bad value: ConfigError naming it
    built = checked_settings(parse_document({**doc, **settings}, source=source), source)
    if "policy" in built.settings:
        from dgdrf.policies import POLICIES

        if built.settings["policy"] not in POLICIES:
            raise ConfigError(f"{source}: policy: {unknown_policy(built.settings['policy'], POLICIES)}")
    return built


def _document(entry: Any, vector: str) -> Any:
    """A server's or user's document: as given, or made of an ``(id, vector)`` pair."""
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], Sequence) and not isinstance(entry[1], str):
        return {"id": entry[0], vector: list(entry[1])}
    return dict(entry) if isinstance(entry, Mapping) else entry  # anything else: the parser names what is wrong


# -- sweeps --------------------------------------------------------------------------------
def sweep(
    spec: SweepSpec | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    retry_failed: bool = False,
    timeout: float | None = None,
    limit: int | None = None,
    progress: bool = False,
) -> SweepOutcome:
    """Run every combination of a sweep's grid not yet recorded in ``out``, as ``dgdrf
    sweep SPEC --out OUT`` does, and return the outcome (runs done, failed, skipped).

    ``spec``: a sweep file's path (bench/*.toml), or its content as a dict
    (``{"sweep": {"name": ..., "policies": [...], "neighbors": [...], "seeds": [...],
    "servers": [...], "users": [...]}}``; relative scenario paths are then relative to
    the working directory). The options are ``dgdrf sweep``'s: ``workers`` processes
    (default: all cores), or the Dask cluster at ``scheduler``; ``retry_failed``;
    ``timeout`` (wall seconds a run may take); ``limit`` (start at most this many runs
    now); ``progress`` (a progress bar on stderr). Running it again resumes: what is
    recorded is not run again. A failed run is recorded with its error (``results(out)``
    shows it), not raised; Ctrl-C stops the runs, keeps what finished and raises
    KeyboardInterrupt."""
    from dgdrf.bench.grid import SweepSpec, load_sweep, parse_sweep
    from dgdrf.bench.store import TORN_LINES, check_output_dir, drop_unreadable, read_records
    from dgdrf.bench.sweep import run_sweep

    if isinstance(spec, SweepSpec):
        parsed = spec
    elif isinstance(spec, Mapping):
        parsed = parse_sweep(dict(spec))
    elif isinstance(spec, (str, os.PathLike)):
        parsed = load_sweep(Path(spec))
    else:
        raise ConfigError(f"spec: must be a sweep file's path or its content as a dict, got {type(spec).__name__}")
    _check_count("workers", workers)
    _check_count("limit", limit)
    if timeout is not None and not (_is_number(timeout) and 0 < timeout < math.inf):
        raise ConfigError(f"timeout: must be positive seconds, got {timeout!r}")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
        raise ConfigError(f"scheduler: must be a Dask scheduler's address (tcp://HOST:PORT or local[:N]), got {scheduler!r}")
    out = Path(out)
    check_output_dir(out, parsed)  # another sweep's directory is refused before anything in it changes
    if read_records(out)[1]:
        moved = drop_unreadable(out)
        warnings.warn(f"{out}: {moved} unreadable result line(s) (cut by an interruption?) moved to {out / TORN_LINES}; those runs will be redone", stacklevel=2)
    extra: dict[str, Any] = {"scheduler": scheduler} if scheduler is not None else {}  # run_sweep takes it since the Dask executor came
    outcome = run_sweep(parsed, out, workers=workers, retry_failed=retry_failed, timeout=timeout, progress=progress, limit=limit, **extra)
    if outcome.interrupted:
        raise KeyboardInterrupt(f"sweep {parsed.name!r} interrupted: {outcome.done} runs recorded in {out}; call sweep() again to resume")
    if outcome.failed:  # dgdrf sweep says so on stderr (a script without the main guard fails every run)
        warnings.warn(
            f"sweep {parsed.name!r}: {outcome.failed} of {outcome.done} run(s) failed; results(out).error has why (rerun with retry_failed=True; "
            "a script must call sweep() under `if __name__ == '__main__':`, as the runs' processes import it)", stacklevel=2,
        )
    return outcome


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_count(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ConfigError(f"{name}: must be a positive integer, got {value!r}")


# -- a sweep's records as data frames ----------------------------------------------------------
def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise MissingDependency("pandas is needed: pip install 'dgdrf[analysis]'") from None
    return pandas


def _records(out: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """``out``'s records in results.csv's order (by parameters); ConfigError if ``out`` is
    not a directory (a mistyped path would otherwise be an empty frame)."""
    from dgdrf.bench.store import read_records

    path = Path(out)
    if not path.is_dir():
        raise ConfigError(f"{path}: no such directory (a sweep's results directory: dgdrf sweep --out, or dgdrf.sweep(spec, out))")
    records, _ = read_records(path)
    return sorted(records, key=lambda r: json.dumps(r.get("params", {}), sort_keys=True))


def _cell(value: Any) -> Any:
    """A parameter as a frame holds it: a list (latency_ms) as a tuple, so that it can be
    grouped by."""
    return tuple(_cell(v) for v in value) if isinstance(value, list) else value


def results(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The runs recorded in the sweep directory ``out``, one row per run: ``key``,
    ``status`` ("ok" or "error") and ``error``, the run's parameters (policy, seed,
    neighbors, dataset, ...), its scalar figures (min_share, gini, error_ratio,
    runtime_s, messages, ...) and its process's (wall_s, cpu_s, peak_rss_mb), as
    results.csv has them; ``stale`` (made by code that behaves otherwise since: a report
    leaves it out, a sweep runs it again); and, when some run has finite jobs, their
    figures (makespan, jct_mean_s ... jct_max_s, queueing_delay_mean_s ..., the
    unfinished tasks, fairness over time-averaged shares). Figures are numbers (NaN where
    a run has none, such as a failed run), ``finished_at`` a UTC timestamp. Needs pandas
    (``pip install 'dgdrf[analysis]'``)."""
    pd = _pandas()
    from dgdrf.bench.staleness import is_stale
    from dgdrf.bench.store import PROCESS_COLUMNS, RESULT_COLUMNS, flat_row

    records = _records(out)
    rows = []
    for rec in records:
        row = {k: _cell(v) for k, v in flat_row(rec).items()}
        row["stale"] = is_stale(rec)
        result = rec.get("result") or {}
        if "jobs" in result:
            for column, (key, figure) in _JOB_FIGURES.items():
                value = result.get(key)
                if figure is not None:
                    value = (value or {}).get(figure)
                elif key == "unfinished_tasks":
                    value = sum((value or {}).values())
                row.setdefault(column, value)
        rows.append(row)
    job_columns = [c for c in _JOB_FIGURES if any(c in row for row in rows)]
    head = ("key", "status", "stale", "error")
    params = sorted({k for row in rows for k in row} - {*head, *RESULT_COLUMNS, *PROCESS_COLUMNS, *job_columns})
    columns = [*head, *params, *RESULT_COLUMNS, *job_columns, *PROCESS_COLUMNS]
    frame = pd.DataFrame(rows, columns=columns)
    for c in columns:
        if c == "finished_at":
            frame[c] = pd.to_datetime(frame[c], utc=True)
        elif c not in _TEXT_COLUMNS and all(v is None or _is_number(v) for v in frame[c]):
            frame[c] = pd.to_numeric(frame[c])  # all None: float NaN
    return frame


def jobs(out: str | os.PathLike[str]) -> pd.DataFrame:
    """The finite jobs of every run recorded in the sweep directory ``out`` (the
    ``jobs`` list of a run's result), one row per job and run: the run's ``key`` and
    parameters (policy, seed, ...), then the job's ``user``, ``job`` (its id),
    ``arrival``, ``first_start`` and ``finish`` (seconds from the start of allocation;
    NaN if it did not happen), ``tasks`` and ``jct`` (finish - arrival). Runs without
    finite jobs (the thesis's endless users) and failed runs have none: with none at
    all, an empty frame of those columns. Needs pandas."""
    pd = _pandas()
    rows = []
    params: set[str] = set()
    for rec in _records(out):
        p = {k: _cell(v) for k, v in (rec.get("params") or {}).items()}
        params.update(p)
        for job in (rec.get("result") or {}).get("jobs") or ():
            rows.append({"key": rec["key"], **p, **{c: job.get(c) for c in JOB_COLUMNS}})
    columns = ["key", *sorted(params), *JOB_COLUMNS]
    frame = pd.DataFrame(rows, columns=columns)
    for c in ("arrival", "first_start", "finish", "jct"):
        frame[c] = pd.to_numeric(frame[c]).astype(float)
    frame["tasks"] = pd.to_numeric(frame["tasks"])
    return frame
