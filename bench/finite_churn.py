"""Every policy on configs/google-finite-8x4.toml with two servers leaving.

The run of ``dgdrf run --scenario configs/google-finite-8x4.toml --policy P
--churn-departures 2`` (seed 1: s8 and s4 leave at 3.5 s and 5.2 s; s4 is the one server
of class c3), for every policy: how it ended, when its clock stopped, its allocations,
the jobs given up, the tasks left unfinished, and the wall time. It uses only what every
checkout has (``dgdrf.load_scenario``, ``RunConfig``, ``build``), so it runs on an older
checkout too, for a before/after (``--max-time``: a run that never ends by itself goes
to the limit, 100,000 s by default).

    python bench/finite_churn.py [--policies drf,tsf,...] [--max-time 20000]

Output recorded in bench/results/finite-churn-8x4.txt (this code) and
bench/results/finite-churn-8x4-before.txt (f507a6f, before jobs nobody can run were given
up; --max-time 20000).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import dgdrf
from dgdrf.config import RunConfig
from dgdrf.policies import POLICIES
from dgdrf.world import build

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-finite-8x4.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--max-time", type=float, default=100_000.0)
    args = ap.parse_args()
    scenario = dgdrf.load_scenario(SCENARIO)
    print(f"# bench/finite_churn.py --max-time {args.max_time:g}: configs/google-finite-8x4.toml, seed 1, 2 departures")
    print(f"{'policy':14s} {'stop':9s} {'clock (s)':>10s} {'alloc':>6s} {'given up':>8s} {'unfinished':>10s} {'violations':>10s} {'wall (s)':>8s}")
    for policy in args.policies.split(","):
        world = build(scenario, RunConfig(policy=policy, seed=1, churn_departures=2, max_time=args.max_time))
        t0 = time.perf_counter()
        r = world.run()
        wall = time.perf_counter() - t0
        given_up = len(getattr(r, "unrunnable_jobs", None) or [])
        unfinished = sum((r.unfinished_tasks or {}).values())
        print(f"{policy:14s} {r.stop_reason:9s} {world.clock.now():10.1f} {r.allocations:6d} {given_up:8d} {unfinished:10d} {len(r.invariant_violations):10d} {wall:8.1f}", flush=True)


if __name__ == "__main__":
    main()
