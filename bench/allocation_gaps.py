"""Is a slow run slow for the right reason? The gaps between its allocations and how its
users are spread over home servers.

A run that ends saturated can still have waited on near-stalls (long gaps with nothing
placed, each ended by a timeout or a lucky exchange); a run that is merely slower
allocates at an even rate. Used for the seed spread of DGDRF on thesis-100x20 at high P
(docs/notes/2026-11-25-thesis-100x20-rerun.md, "What the gradient fix changed here");
output recorded in results/allocation-gaps-100x20.txt:

    python bench/allocation_gaps.py --policy dgdrf --neighbors 10 --seeds 1 2 3 > bench/results/allocation-gaps-100x20.txt
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

from dgdrf.config import load_scenario
from dgdrf.emulation import GATEWAY, RunConfig, build

SCENARIO = Path(__file__).parent.parent / "configs" / "thesis-100x20.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    ap.add_argument("--policy", default="dgdrf")
    ap.add_argument("--neighbors", type=int, default=10)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    args = ap.parse_args()

    scenario = load_scenario(args.scenario)
    for seed in args.seeds:
        world = build(scenario, RunConfig(policy=args.policy, neighbors=args.neighbors, seed=seed))
        result = world.run()
        collector, gateway = world.collector, world.transport.actors[GATEWAY]
        t = np.array([a.time for a in collector.allocations])
        gaps = np.diff(t)
        homes = Counter(getattr(gateway.routing, "home", {}).values())
        per_tenth, _ = np.histogram(t, bins=10)
        print(f"{args.scenario.stem} {args.policy} P={args.neighbors} seed={seed}: {result.stop_reason}, {len(t)} allocations, run-time {result.runtime_s:.0f} s")
        print(f"  gap between allocations (s): median {np.median(gaps):.2f}, p99 {np.quantile(gaps, 0.99):.2f}, longest {gaps.max():.2f}; gaps over 5 s: {(gaps > 5).sum()}")
        print(f"  allocations in each tenth of the run: {per_tenth.tolist()}")
        print(f"  servers with users: {len(homes)} (users per such server: {sorted(homes.values(), reverse=True)})")


if __name__ == "__main__":
    main()
