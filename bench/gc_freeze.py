"""What freezing the run's objects out of the garbage collector's scans saves
(dgdrf/runtime/clock.py, VirtualClock.run: gc.freeze while the clock runs).

Runs the overlay workloads of compare.sh at 10,000 nodes with the freeze as it is and
with it turned off (gc.freeze and gc.unfreeze made no-ops in this process), alternating,
and prints each run's loop wall time (wall_s) and the median of each. Wall times: they
vary with the machine's load; the results are identical either way (the collector never
changes what a run computes).

    python bench/gc_freeze.py > bench/results/gc-freeze.txt
    python bench/gc_freeze.py --nodes 2000 --repeat 3
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time

from dgdrf.build_info import core
from dgdrf.overlay_run import OverlayConfig, run_overlay

WORKLOADS = {
    "cyclon": dict(protocol="cyclon", cyclon_view=20, cyclon_shuffle=8),
    "pushsum": dict(protocol="pushsum", cyclon_view=10, cyclon_shuffle=5),
}


def loop_wall(name: str, nodes: int, cycles: int, freeze: bool) -> float:
    real = gc.freeze, gc.unfreeze
    if not freeze:
        gc.freeze = gc.unfreeze = lambda: None  # type: ignore[assignment]
    try:
        cfg = OverlayConfig(nodes=nodes, cycles=cycles, metrics_every=cycles, **WORKLOADS[name])  # type: ignore[arg-type]
        return float(run_overlay(cfg).to_dict()["wall_s"])
    finally:
        gc.freeze, gc.unfreeze = real


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, {core()} core, {args.nodes} nodes, {args.cycles} cycles, {args.repeat} alternations")
    print(f"{'workload':<10} {'gc.freeze on: wall_s (each)':>30} {'off: wall_s (each)':>30} {'on/off':>7}")
    for name in WORKLOADS:
        on: list[float] = []
        off: list[float] = []
        for _ in range(args.repeat):
            on.append(loop_wall(name, args.nodes, args.cycles, True))
            off.append(loop_wall(name, args.nodes, args.cycles, False))
        ratio = statistics.median(on) / statistics.median(off)
        print(f"{name:<10} {' '.join(f'{x:.2f}' for x in on):>30} {' '.join(f'{x:.2f}' for x in off):>30} {ratio:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
