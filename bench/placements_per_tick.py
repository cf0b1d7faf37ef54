"""How many tasks each policy places per allocation tick over the first part of a run:
whether a policy's jobs finish sooner because it places faster, or because of which tasks
it places first.

    python bench/placements_per_tick.py configs/google-finite-100x20-load3.toml 1500 drf dgdrf ddrf-random

Per policy (run seed 1, the scenario's settings): the allocations in the first SECONDS of
allocation, how many ticks placed anything, the most placed in one tick, and how many
ticks placed more than one. Recorded: bench/results/google-finite-100x20-placements.txt.
"""

from __future__ import annotations

import argparse
import collections
import sys

from dgdrf.config import RunConfig, load_scenario
from dgdrf.world import Observer, build


class Times(Observer):
    def __init__(self) -> None:
        self.times: list[float] = []

    def allocated(self, world, allocation) -> None:
        self.times.append(allocation.time)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="placements_per_tick.py", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("scenario", help="a scenario file")
    ap.add_argument("seconds", type=float, help="seconds of allocation to count")
    ap.add_argument("policies", nargs="+", help="the policies to run")
    args = ap.parse_args(argv)
    scenario = load_scenario(args.scenario)
    seconds = args.seconds
    print(f"{scenario.name}: the first {seconds:g} s of allocation, run seed 1")
    for policy in args.policies:
        config = RunConfig.from_settings(scenario.settings, args.scenario, policy=policy, seed=1)
        world = build(scenario, config)
        times = Times()
        world.run(observers=[times], until=world.start + seconds)
        per_tick = collections.Counter(int((t - world.start) / config.tick) for t in times.times)
        print(f"{policy:14s} allocations {len(times.times):6d}  ticks placing {len(per_tick):6d} of {int(seconds / config.tick)}  most in one tick {max(per_tick.values(), default=0)}  ticks placing more than one {sum(1 for v in per_tick.values() if v > 1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
