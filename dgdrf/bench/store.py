"""A sweep's results store: its output directory's results.jsonl.gz (one record per run,
appended as runs finish), results.csv (rewritten from them), the manifest sweep.json, and
the records set aside (torn records, stale records). One directory per sweep file.

Records are JSON lines, gzip'd: each record its own gzip member, appended and flushed as
its run finishes. Members concatenate into one gzip stream (``zcat results.jsonl.gz``
reads it), so appending stays what it was with plain lines: nothing written is rewritten,
and an interruption can cut only the last member, which readers count as unreadable (as
a torn line) and read past. A run's record is mostly its timelines (``samples``); gzip
takes them and the rest to about a tenth (a 300-run sweep's 92 MB to 8.8 MB), which is
what lets the committed sweeps under bench/results/ stay light in a clone.

Directories written before records were compressed hold the plain form (results.jsonl,
stale.jsonl). Everything that reads records reads both, through :func:`record_files`
(the plain first, then the gzip'd: a key's later record replaces its earlier). Nothing
but :func:`compress`, :func:`drop_unreadable` and :func:`prune_stale` rewrites a plain
file, and they rewrite it into the gzip'd form (the plain file is then removed); a sweep
resumed there appends its new records to results.jsonl.gz beside the plain file, which it
leaves as it is (``python -m dgdrf.bench.store DIR`` converts a directory in one go).

Every record and the manifest hold the run's provenance (dgdrf/provenance.py: git commit
and dirty flag, dgdrf, Python and library versions), the sweep file's digest and what
tells whether the record is stale (dgdrf/bench/staleness.py: its policy's behaviour
fingerprint, the revisions of the paths only some runs take), under the key ``provenance``.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import platform
import sys
import zlib
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from dgdrf.errors import ConfigError
from dgdrf.bench.grid import SweepSpec, sweep_digest
from dgdrf.bench.staleness import is_stale
from dgdrf.provenance import provenance

#: where a sweep appends its records
RESULTS_JSONL = "results.jsonl.gz"
RESULTS_CSV = "results.csv"
SWEEP_JSON = "sweep.json"
#: zlib's default level: within 0.3 % of level 9's size on sweep records, in a third of the time
GZIP_LEVEL = 6
_GZIP_MAGIC = b"\x1f\x8b\x08"  # a gzip member's first bytes (deflate)
_CHUNK = 1 << 16


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


# -- which file, plain or gzip'd -----------------------------------------------------------------
def plain_name(name: str) -> str:
    """The plain form of the records file ``name`` (results.jsonl for results.jsonl.gz),
    as sweeps wrote it before records were compressed."""
    return name.removesuffix(".gz")


def record_files(out: Path, name: str = RESULTS_JSONL) -> list[Path]:
    """The files of ``out`` that hold the records ``name`` (:data:`RESULTS_JSONL` or
    :data:`STALE_JSONL`), in the order they are read: the plain form, then the gzip'd
    (a sweep resumed on an old directory appends there, so what it wrote comes last)."""
    out = Path(out)
    return [f for f in (out / plain_name(name), out / name) if f.is_file()]


def _record(line: str) -> dict[str, Any] | None:
    """The record a line holds; None: unreadable (not JSON, or not an object with a
    string ``key``: a line cut by an interruption)."""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    return rec if isinstance(rec, dict) and isinstance(rec.get("key"), str) else None


def _plain_lines(file: Path) -> Iterator[tuple[str, dict[str, Any] | None]]:
    with file.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.strip():
                yield line, _record(line)


def _inflate(data: memoryview, at: int) -> tuple[bytes, int | None]:
    """Decompress the gzip member starting at ``at``: what it holds and where it ends
    (None: not a whole member, such as one cut by an interruption; then what could be
    decompressed of it)."""
    d = zlib.decompressobj(wbits=31)  # gzip header and trailer: the CRC is checked
    parts: list[bytes] = []
    pos = at
    while not d.eof and pos < len(data):
        chunk = data[pos:pos + _CHUNK]
        before = d.copy()
        try:
            parts.append(d.decompress(chunk))
        except zlib.error:  # what the chunk held before the error, byte by byte
            try:
                for i in range(len(chunk)):
                    parts.append(before.decompress(chunk[i:i + 1]))
            except zlib.error:
                pass
            return b"".join(parts), None
        pos += len(chunk)
    return b"".join(parts), (pos - len(d.unused_data)) if d.eof else None


def _members(data: bytes) -> Iterator[tuple[bytes, bool]]:
    """Each gzip member of ``data``: (what it holds, whether it is whole). After a member
    that is not (cut by an interruption, later members appended after it), reading takes
    up at the next gzip header that starts a whole member, and the bytes between are one
    unreadable member (bytes inside it that look like a header are not taken for one
    unless what follows checks out, CRC-32 and length)."""
    view = memoryview(data)
    pos = 0
    while pos < len(data):
        text, end = _inflate(view, pos)
        if end is not None:
            yield text, True
            pos = end
            continue
        nxt = data.find(_GZIP_MAGIC, pos + 1)
        while nxt != -1 and _inflate(view, nxt)[1] is None:
            nxt = data.find(_GZIP_MAGIC, nxt + 1)
        end = len(data) if nxt == -1 else nxt
        if end < len(data):  # what its own bytes hold, not what the next member's look like to it
            text = _inflate(view[:end], pos)[0]
        yield text, False
        pos = end


def _gzip_lines(file: Path) -> Iterator[tuple[str, dict[str, Any] | None]]:
    for raw, whole in _members(file.read_bytes()):
        text = raw.decode("utf-8", errors="replace")
        if not whole:  # one unreadable entry, whatever part of a record it holds
            yield text.rstrip("\n"), None
            continue
        for line in text.split("\n"):
            if line.strip():
                yield line, _record(line)


def _lines(out: Path, name: str = RESULTS_JSONL) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Each entry of ``out``'s records ``name``, plain or gzip'd, in order: a non-blank
    line, or a gzip member cut by an interruption (its text so far), with its record
    (None: unreadable)."""
    for file in record_files(out, name):
        yield from (_gzip_lines(file) if file.name.endswith(".gz") else _plain_lines(file))


def iter_records(out: Path, name: str = RESULTS_JSONL) -> Iterator[dict[str, Any]]:
    """Every readable record of ``out``'s ``name`` (:data:`RESULTS_JSONL` or
    :data:`STALE_JSONL`) in the order written, superseded ones included: for readers
    that weigh them all (bench/grid_time.py, bench/rerun_compare.py);
    :func:`read_records` keeps a key's last."""
    for _, rec in _lines(out, name):
        if rec is not None:
            yield rec


def gzip_member(line: str) -> bytes:
    """One record line as a gzip member of its own (no timestamp: the same line, the same bytes)."""
    return gzip.compress((line + "\n").encode("utf-8"), compresslevel=GZIP_LEVEL, mtime=0)


def _replace(out: Path, name: str, lines: Iterable[str], tail: bytes = b"") -> None:
    """Write ``lines`` (then the gzip'd bytes ``tail``) as ``out``/``name`` atomically,
    then remove the plain form: the records are then in the gzip'd form alone. (Cut
    between the two, the plain file is read again before the new one: what was moved
    out of it comes back, to be moved again; nothing is lost.)"""
    file = Path(out) / name
    tmp = file.with_name(file.name + ".tmp")
    with tmp.open("wb") as fh:
        for line in lines:
            fh.write(gzip_member(line))
        fh.write(tail)
    tmp.replace(file)
    (Path(out) / plain_name(name)).unlink(missing_ok=True)


def _move_aside(out: Path, name: str, keep: list[str], moved: list[str], to: Path) -> int:
    """Append ``moved`` to ``to`` (gzip members if it is a .gz, else lines) and rewrite
    ``out``'s records ``name`` with ``keep`` alone, atomically and gzip'd; how many moved."""
    if not moved:
        return 0
    if to.name.endswith(".gz"):
        with to.open("ab") as fh:
            fh.write(b"".join(gzip_member(x) for x in moved))
    else:
        with to.open("a", encoding="utf-8") as fh:
            fh.write("".join(x + "\n" for x in moved))
    _replace(out, name, keep)
    return len(moved)


def read_records(out: Path) -> tuple[list[dict[str, Any]], int]:
    """All records in ``out``'s results (results.jsonl.gz, or an old directory's
    results.jsonl, or both; later records of a key replace earlier ones) and the number
    of unreadable entries skipped (a line or gzip member cut by an interruption)."""
    by_key: dict[str, dict[str, Any]] = {}
    bad = 0
    for _, rec in _lines(out):
        if rec is None:
            bad += 1
        else:
            by_key[rec["key"]] = rec
    return list(by_key.values()), bad


#: where :func:`drop_unreadable` keeps what it takes out of the results: one line each
#: (a torn gzip member: the text it held so far)
TORN_LINES = "torn-lines.txt"


def drop_unreadable(out: Path) -> int:
    """Take the unreadable entries (cut by an interruption) out of ``out``'s results,
    appending them to ``out``/torn-lines.txt, so that the warning about them is given
    once and their runs are redone once; returns how many. Atomic, as :func:`prune_stale`."""
    keep: list[str] = []
    torn: list[str] = []
    for line, rec in _lines(out):
        (keep if rec is not None else torn).append(line)
    return _move_aside(out, RESULTS_JSONL, keep, torn, Path(out) / TORN_LINES)


#: where :func:`prune_stale` keeps the records of code that has changed since
STALE_JSONL = "stale.jsonl.gz"


def prune_stale(out: Path) -> int:
    """Move the records made by code that has changed since
    (:func:`dgdrf.bench.staleness.is_stale`: reports leave them out, a sweep runs them
    again) from ``out``'s results to ``out``/stale.jsonl.gz, appended as they were;
    returns how many moved. Once a sweep has rerun them, the results then hold only what
    the current code makes, and the old records stay beside them for comparison.
    Unreadable entries are dropped (a sweep would redo their runs anyway). The new
    results.jsonl.gz replaces the old results atomically, an old directory's plain
    results.jsonl with them (its stale.jsonl stays: it is read before stale.jsonl.gz)."""
    keep: list[str] = []
    stale: list[str] = []
    for line, rec in _lines(out):
        if rec is not None:
            (stale if is_stale(rec) else keep).append(line)
    return _move_aside(out, RESULTS_JSONL, keep, stale, Path(out) / STALE_JSONL)


def compress(out: Path) -> list[Path]:
    """Rewrite ``out``'s plain results.jsonl and stale.jsonl (the form before records were
    compressed) gzip'd, a member per line as a sweep writes them, and remove them; the
    files written. Every line is kept as it was, an unreadable one too (it stays
    unreadable); records already in the gzip'd form follow the plain ones, as they are
    read. Atomic per file, as :func:`prune_stale`."""
    written = []
    for name in (RESULTS_JSONL, STALE_JSONL):
        plain, file = Path(out) / plain_name(name), Path(out) / name
        if not plain.is_file():
            continue
        tail = file.read_bytes() if file.is_file() else b""
        _replace(out, name, (line for line, _ in _plain_lines(plain)), tail)
        written.append(file)
    return written


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
    """results.jsonl.gz opened for appending: each record a gzip member of its own,
    flushed as it comes (a run's record is never lost to a later crash, nor cut but by
    one; a member so cut is read past, as a torn line was). An old directory's plain
    results.jsonl is left as it is: it is read first, so a record written here replaces
    its key's record there."""

    def __init__(self, out: Path) -> None:
        self._fh: IO[bytes] = (Path(out) / RESULTS_JSONL).open("ab")

    def write(self, rec: dict[str, Any]) -> None:
        self._fh.write(gzip_member(json.dumps(finite(rec))))
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


def main(argv: list[str] | None = None) -> int:
    """``python -m dgdrf.bench.store DIR...``: convert sweep directories written before
    records were compressed (:func:`compress`)."""
    dirs = sys.argv[1:] if argv is None else argv
    if not dirs:
        print("usage: python -m dgdrf.bench.store DIR...  (gzip a sweep directory's results.jsonl and stale.jsonl)", file=sys.stderr)
        return 2
    for d in dirs:
        written = compress(Path(d))
        print(f"{d}: " + (", ".join(f.name for f in written) if written else "nothing in the plain form"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
