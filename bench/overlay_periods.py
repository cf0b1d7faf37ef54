"""Where an overlay run's timed loop goes, period by period: the first protocol period
(every node's Join answered by the bootstrap, its first shuffle) against the ones after.

compare.sh times ``dgdrf overlay``'s loop (``wall_s``): the nodes' start at time 0 is
timed apart (``start_wall_s``), the bootstrap's Join/Peers exchange is not, since it
happens in virtual time among the first rounds. This prints, for each workload of
``bench/peersim_compare.sh`` at one size, the start, the first period, the median and
range of the others, and their sum (the loop), in ms, each the median of REPEAT runs
(each run's periods taken from that run).

    python bench/overlay_periods.py > bench/results/overlay-periods-10k.txt
    NODES=1000 REPEAT=5 python bench/overlay_periods.py

Another checkout's code: ``PYTHONPATH=/path/to/checkout python bench/overlay_periods.py``
(the header says which code ran).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from dgdrf.build_info import core
from dgdrf.overlay_run import OverlayConfig, OverlayRun

#: compare.sh's workloads: (protocol, cycles, c, l)
WORKLOADS = (("cyclon", 100, 20, 8), ("pushsum", 30, 10, 5))


def periods(protocol: str, nodes: int, cycles: int, c: int, shuffle: int) -> tuple[float, list[float]]:
    """One run: its start's wall time and each period's, in seconds."""
    run = OverlayRun(OverlayConfig(protocol=protocol, nodes=nodes, cycles=cycles, cyclon_view=c, cyclon_shuffle=shuffle, seed=1, metrics_every=cycles))
    walls = []
    for _ in range(cycles):
        before = run.wall_s
        run.run_cycles(1)
        walls.append(run.wall_s - before)
    return run.start_wall_s, walls


def main() -> int:
    nodes = int(os.environ.get("NODES", "10000"))
    repeat = int(os.environ.get("REPEAT", "3"))
    import dgdrf

    where = os.path.dirname(os.path.dirname(os.path.abspath(dgdrf.__file__)))
    rev = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, {core()} core, git {rev} ({where}), {os.cpu_count()} cpus, {nodes:,} nodes, median of {repeat} runs")
    print(f"{'workload':<28} {'start':>7} {'1st period':>11} {'later (median, range)':>24} {'loop':>7}  ms")
    for protocol, cycles, c, shuffle in WORKLOADS:
        runs = [periods(protocol, nodes, cycles, c, shuffle) for _ in range(repeat)]
        start = statistics.median(s for s, _ in runs) * 1e3
        first = statistics.median(w[0] for _, w in runs) * 1e3
        later = [statistics.median(w[1:]) * 1e3 for _, w in runs]
        lo = min(min(w[1:]) for _, w in runs) * 1e3
        hi = max(max(w[1:]) for _, w in runs) * 1e3
        loop = statistics.median(sum(w) for _, w in runs) * 1e3
        name = f"{protocol} {nodes} x {cycles} (c={c}, l={shuffle})"
        print(f"{name:<28} {start:>7.0f} {first:>11.0f} {statistics.median(later):>12.1f} ({lo:.0f}-{hi:.0f}) {loop:>7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
