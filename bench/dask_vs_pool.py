"""bench/quick.toml through this machine's process pool and through a local two-worker Dask
cluster, one after the other, each into a fresh directory: the sweep's wall time each way,
and what Dask costs a run over the pool (its wall time's excess, over the runs).

    python bench/dask_vs_pool.py [--sweep bench/quick.toml] [--workers 2] [--repeat 2] > bench/results/dask-vs-pool.txt

Both executors run the same runs, longest first, ``workers`` at a time. The records must
be the same but for what the machine measures: the script checks it. The load average at
each start says how busy the machine was (2 cores, shared).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from dgdrf.bench.grid import load_sweep
from dgdrf.bench.store import read_records
from dgdrf.bench.sweep import run_sweep
from dgdrf.build_info import core

MEASURED = ("wall_s", "cpu_s", "peak_rss_mb", "host", "finished_at")


def comparable(out: Path) -> dict[str, dict]:
    records, _ = read_records(out)
    keep = {}
    for r in records:
        rec = {k: v for k, v in r.items() if k not in MEASURED}
        if rec.get("result"):
            rec["result"] = {k: v for k, v in rec["result"].items() if k != "wall_s"}
        keep[r["key"]] = rec
    return keep


def one(spec, out: Path, **how) -> tuple[float, float, float]:
    """(wall s of the sweep, mean of its runs' own wall s, load average at its start)."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    outcome = run_sweep(spec, out, progress=False, **how)
    wall = time.perf_counter() - t0
    if outcome.failed or outcome.done != outcome.total:
        raise SystemExit(f"{how}: {outcome.failed} failed, {outcome.done} of {outcome.total} done")
    records, _ = read_records(out)
    return wall, sum(r["wall_s"] for r in records) / len(records), load


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sweep", type=Path, default=Path("bench/quick.toml"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2, help="alternate pool and Dask this many times")
    args = ap.parse_args()
    spec = load_sweep(args.sweep)
    runs = len(spec.runs())
    print(f"# {datetime.now(timezone.utc).isoformat(timespec='seconds')}, {core()} core, {os.cpu_count()} cpus; {args.sweep}: {runs} runs, {args.workers} at a time")
    print("# python bench/dask_vs_pool.py --sweep", args.sweep, "--workers", args.workers, "--repeat", args.repeat)
    print("executor         sweep wall s   mean run wall s   load at start")
    rows: dict[str, list[float]] = {"pool": [], "dask": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            pool = one(spec, Path(tmp) / f"pool{i}", workers=args.workers)
            dask = one(spec, Path(tmp) / f"dask{i}", scheduler=f"local:{args.workers}")
            if comparable(Path(tmp) / f"pool{i}") != comparable(Path(tmp) / f"dask{i}"):
                raise SystemExit("the two executors' records differ")
            for name, (wall, mean_run, load) in (("pool", pool), ("dask local:%d" % args.workers, dask)):
                print(f"{name:16s} {wall:12.1f}   {mean_run:15.2f}   {load:13.1f}")
            rows["pool"].append(pool[0])
            rows["dask"].append(dask[0])
    pool_wall, dask_wall = min(rows["pool"]), min(rows["dask"])
    print(f"best of {args.repeat}: pool {pool_wall:.1f} s, Dask {dask_wall:.1f} s (x{dask_wall / pool_wall:.2f}); "
          f"Dask's overhead {(dask_wall - pool_wall) * args.workers / runs:+.2f} s a run "
          f"(the excess wall time x {args.workers} workers / {runs} runs: starting the local cluster, "
          "a subprocess and its imports per run, shipping each scenario)")
    print("records identical but for what the machine measures: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
