"""Sweeps: every combination of a grid of runs (dgdrf/bench/grid.py), run where the
executor says (dgdrf/bench/executors.py: this machine's processes, or a Dask cluster),
recorded in the sweep's results store (dgdrf/bench/store.py) as each run finishes.

Running a sweep again finds what is done and resumes; a run that fails is recorded with
its error and the sweep goes on; a record of code that has changed since is run again.
Records are made here, in the client, whichever executor ran the run: results.jsonl.gz
gets each run once, whole, as it comes back (dgdrf/bench/store.py; a directory written
before records were gzip'd, a plain results.jsonl, resumes too: its records are kept and
read first).
"""

from __future__ import annotations

import dataclasses
import signal
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from dgdrf.bench.executors import Executor, executor as make_executor
from dgdrf.bench.grid import SweepSpec, sweep_digest
from dgdrf.bench.staleness import is_stale, marks
from dgdrf.bench.store import RecordSink, check_output_dir, read_records, write_csv, write_manifest
from dgdrf.build_info import core
from dgdrf.provenance import provenance


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


#: the folder of a sweep's run pages (``dgdrf sweep --html``)
PAGES = "pages"


def run_sweep(
    spec: SweepSpec,
    out: Path,
    workers: int | None = None,
    retry_failed: bool = False,
    timeout: float | None = None,
    progress: bool = True,
    limit: int | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    scheduler: str | None = None,
    executor: Executor | None = None,
    html: bool = False,
) -> SweepOutcome:
    """Run every run of ``spec`` not yet recorded in ``out``: on this machine with
    ``workers`` processes (default: all cores), or on the Dask cluster ``scheduler`` names
    (``tcp://HOST:PORT``, ``local[:N]``), or on ``executor``. Records are appended to
    results.jsonl.gz as runs finish; results.csv is rewritten at the end, also when
    interrupted (Ctrl-C stops the runs; finished runs stay recorded). ``limit``: start at
    most this many runs. A scheduler that cannot be reached, or whose workers run other
    code, is a ConfigError before anything is written. ``html``: each run's page too, in
    ``out``/pages/KEY.html (what a click on its point in the report's page opens)."""
    out = Path(out)
    check_output_dir(out, spec)
    runs = spec.runs()
    records, _ = read_records(out)
    # a record of code that behaved otherwise (is_stale) is run again; the new one replaces it
    finished = {r["key"] for r in records if (r.get("status") == "ok" or not retry_failed) and not is_stale(r)}
    todo = [r for r in runs if r.key not in finished]
    outcome = SweepOutcome(total=len(runs), skipped=len(runs) - len(todo), out=out)
    if limit is not None:
        todo = todo[:limit]
    if html:
        todo = [dataclasses.replace(r, page=True) for r in todo]
    owned = executor is None
    runner = make_executor(workers, scheduler) if executor is None else executor  # connects (and may refuse) before anything is written
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    # once, here: records are made in this process, so no worker runs git
    prov = {**provenance(), "sweep_digest": sweep_digest(spec)}
    bar = _Progress(spec.name, len(runs), outcome.skipped, enabled=progress)
    main = threading.current_thread() is threading.main_thread()
    previous_term = signal.signal(signal.SIGTERM, _interrupt) if main else None  # a batch system's stop: as Ctrl-C
    if main and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background
        signal.signal(signal.SIGINT, _interrupt)
    finishing = runner.run(todo, timeout)
    try:
        with bar, RecordSink(out) as sink:
            for run, rec in finishing:
                page = rec.pop("page", None)
                if page is not None:
                    (out / PAGES).mkdir(exist_ok=True)
                    (out / PAGES / f"{run.key}.html").write_text(page, encoding="utf-8")
                # what the staleness rules read: the policy's behaviour fingerprint, the revisions of the paths only some runs take
                made_by = {**prov, **marks(run.params)}
                rec = {"key": run.key, "sweep": spec.name, "params": run.params, **rec, "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "provenance": made_by}
                sink.write(rec)
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
        finishing.close()  # stops the runs still going
        if owned:
            runner.close()
        outcome.wall_s = time.perf_counter() - t0
        records, _ = read_records(out)
        write_csv(out, records)
        session = {"started": started, "wall_s": round(outcome.wall_s, 3), "runs_done": outcome.done, "failed": outcome.failed, **runner.describe(), "interrupted": outcome.interrupted, "core": core()}
        if spec.parent is not None:
            session["part"] = {"name": spec.name, "source": str(spec.source) if spec.source else None, "runs": len(runs)}
        write_manifest(out, spec, session, prov)
    return outcome


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

