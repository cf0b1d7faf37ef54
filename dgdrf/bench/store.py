"""A sweep's results store: its output directory's results.jsonl (one record per run,
appended as runs finish), results.csv (rewritten from them), the manifest sweep.json, and
the records set aside (torn lines, stale records). One directory per sweep file.

Every record and the manifest hold the run's provenance (dgdrf/provenance.py: git commit
and dirty flag, dgdrf, Python and library versions), the sweep file's digest and what
tells whether the record is stale (dgdrf/bench/staleness.py: its policy's behaviour
fingerprint, the revisions of the paths only some runs take), under the key ``provenance``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import platform
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from dgdrf.errors import ConfigError
from dgdrf.bench.grid import SweepSpec, sweep_digest
from dgdrf.bench.staleness import is_stale
from dgdrf.provenance import provenance

RESULTS_JSONL = "results.jsonl"
RESULTS_CSV = "results.csv"
SWEEP_JSON = "sweep.json"


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



def _lines(file: Path) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Each non-blank line of a results file, with its record (None: unreadable, a line cut
    by an interruption: not JSON, or not an object with a string ``key``)."""
    with file.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                rec = None
            yield line, rec if isinstance(rec, dict) and isinstance(rec.get("key"), str) else None


def _move_aside(file: Path, keep: list[str], moved: list[str], to: Path) -> int:
    """Append ``moved`` to ``to`` and rewrite ``file`` with ``keep`` alone, atomically;
    how many moved."""
    if not moved:
        return 0
    with to.open("a", encoding="utf-8") as fh:
        fh.write("".join(x + "\n" for x in moved))
    tmp = file.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(x + "\n" for x in keep), encoding="utf-8")
    tmp.replace(file)
    return len(moved)


def read_records(out: Path) -> tuple[list[dict[str, Any]], int]:
    """All records in ``out``/results.jsonl (later records of a key replace earlier
    ones) and the number of unreadable lines skipped (a line cut by an interruption)."""
    file = Path(out) / RESULTS_JSONL
    if not file.exists():
        return [], 0
    by_key: dict[str, dict[str, Any]] = {}
    bad = 0
    for _, rec in _lines(file):
        if rec is None:
            bad += 1
        else:
            by_key[rec["key"]] = rec
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
    for line, rec in _lines(file):
        (keep if rec is not None else torn).append(line)
    return _move_aside(file, keep, torn, Path(out) / TORN_LINES)


#: where :func:`prune_stale` keeps the records of code that has changed since
STALE_JSONL = "stale.jsonl"


def prune_stale(out: Path) -> int:
    """Move the records made by code that has changed since
    (:func:`dgdrf.bench.staleness.is_stale`: reports leave them out, a sweep runs them
    again) from ``out``/results.jsonl to ``out``/stale.jsonl, appended as they were;
    returns how many moved. Once a sweep has rerun them, results.jsonl then holds only
    what the current code makes, and the old records stay beside it for comparison.
    Unreadable lines are dropped (a sweep would redo their runs anyway). The new
    results.jsonl replaces the old one atomically."""
    file = Path(out) / RESULTS_JSONL
    if not file.exists():
        return 0
    keep: list[str] = []
    stale: list[str] = []
    for line, rec in _lines(file):
        if rec is not None:
            (stale if is_stale(rec) else keep).append(line)
    return _move_aside(file, keep, stale, Path(out) / STALE_JSONL)


#: CSV columns taken from a run's result, in order (after key, status, error and parameters)
RESULT_COLUMNS = (
    "scenario", "servers", "users", "allocations", "stop_reason", "saturated", "runtime_s", "warmup_s",
    "min_share", "gini", "jain", "ratio_20_20", "error_ratio", "error_ratio_1pct", "error_ratio_5pct",
    "error_ratio_10pct", "error_ratio_15pct", "messages", "bytes", "messages_per_tick", "bytes_per_tick",
    "latency_p50_s", "latency_p99_s", "invariant_violations", "run_wall_s", "sim_per_wall", "messages_per_wall_s",
)
PROCESS_COLUMNS = ("wall_s", "cpu_s", "peak_rss_mb", "core", "host", "finished_at")


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


class RecordSink:
    """results.jsonl opened for appending: each record one whole line, flushed as it
    comes (a run's record is never lost to a later crash, nor cut but by one)."""

    def __init__(self, out: Path) -> None:
        self._fh: IO[str] = (Path(out) / RESULTS_JSONL).open("a+", encoding="utf-8")
        if self._fh.tell() > 0:
            self._fh.seek(self._fh.tell() - 1)
            if self._fh.read(1) != "\n":
                self._fh.write("\n")  # end a line cut by an interruption; it stays unreadable, alone

    def write(self, rec: dict[str, Any]) -> None:
        self._fh.write(json.dumps(finite(rec)) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> RecordSink:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def finite(x: Any) -> Any:
    """JSON has no infinities or NaN: they become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [finite(v) for v in x]
    return x


def write_manifest(out: Path, spec: SweepSpec, session: dict[str, Any], prov: dict[str, Any] | None = None) -> None:
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
