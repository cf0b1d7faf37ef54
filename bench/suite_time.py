"""The default test suite's wall time at several worker counts, one run right after the
other on this machine (the README's test command is ``pytest -q -n auto``; how many
workers ``auto`` means is tests/conftest.py's choice, which these figures support).

    python bench/suite_time.py [--workers 2,3,4] > bench/results/suite-time.txt

Per worker count: the wall seconds, the CPU seconds of the suite's processes (user +
system, children included), and pytest's summary line. Timings vary with the machine's
load: compare the rows of one run, never runs of two days.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="2,3,4", help="comma-separated worker counts (default 2,3,4)")
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"# bench/suite_time.py --workers {args.workers}: {datetime.now(timezone.utc):%Y-%m-%dT%H:%MZ}, git {commit}, {os.cpu_count()} cpus")
    print(f"{'workers':>7s} {'wall (s)':>9s} {'cpu (s)':>8s}  pytest")
    for n in args.workers.split(","):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", n, "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"{n:>7s} {wall:9.1f} {cpu:8.1f}  {summary}", flush=True)


if __name__ == "__main__":
    main()
