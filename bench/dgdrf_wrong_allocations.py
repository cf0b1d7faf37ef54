"""At every wrong DGDRF allocation, what the allocating server and the rightful one knew.

A diagnostic, not a benchmark: it runs one emulation and, each time the collector sees an
allocation to a user whose share is not the lowest (thesis 5.3), prints both servers'
utility, centre test, view and memory, and which servers hold the rightful one in their
view. What it found: docs/notes/2026-11-24-dgdrf-memory-200-servers.md (a bounded
memory, dgdrf/overlay/gradient.py) and docs/notes/2026-11-26-dgdrf-bounded-walk-wrong-allocation.md
(a bounded walk). Recorded:

    python bench/dgdrf_wrong_allocations.py --seed 1 --neighbors 2 --max-time 2000 --gradient-memory 24 \\
        > bench/results/dgdrf-wrong-allocations-200x40.txt

and, with a header, in bench/results/dgdrf-wrong-allocations-200x40-p10-s3.txt:

    python bench/dgdrf_wrong_allocations.py --seed 3 --neighbors 10 --max-time 8000
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from dgdrf.config import load_scenario
from dgdrf.emulation import Observer, RunConfig, run_emulation
from dgdrf.policies.ddrf import HomeScheduler
from dgdrf.policies.dgdrf import GradientScheduler

SCENARIO = Path(__file__).parent.parent / "configs" / "thesis-200x40.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--neighbors", type=int, default=2)
    ap.add_argument("--max-time", type=float, default=2000.0)
    ap.add_argument("--gradient-memory", type=int)
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    args = ap.parse_args()
    actors: dict = {}

    def scheduler(addr: str) -> GradientScheduler | None:
        return next((r for r in actors[addr].roles if isinstance(r, GradientScheduler)), None)

    def home_of(user: str) -> str:
        return next(a for a in actors if (s := scheduler(a)) is not None and user in s.home.users)

    def describe(tag: str, addr: str, rightful: str) -> None:
        s = scheduler(addr)
        g = s.gradient
        print(f"  {tag} {addr}: utility {g.utility():.6f}, believes it is the centre: {g.is_centre()}")
        print("    view: " + ", ".join(f"{a} {u:.6f}" for a, (u, _) in g.view.items()))
        memory = getattr(g, "_fresh", {})
        if addr != rightful:
            print(f"    memory ({len(memory)} nodes) holds the rightful server: {rightful in memory}")
        else:  # why it does not claim the centre: its users' state (a stuck one does not compete, eq. 4.2)
            for uid, u in s.home.users.items():
                print(f"    home user {uid}: share {u.share:.6f}, task waiting {u.request is not None}, out {u.out}, stuck {u.stuck} (retried after {u.stuck_for:g} s)")

    class WrongAllocations(Observer):
        """Describes each allocation to a user above the lowest eligible share."""

        def started(self, world) -> None:
            actors.update(world.transport.actors)

        def allocated(self, world, record) -> None:
            if record.min_share > 0 and (record.share_before - record.min_share) / record.min_share > 1e-9:
                ledger = world.collector.ledger  # as before this allocation
                shares, eligible = ledger.shares(), ledger.fits_anywhere()
                names = {i: u for u, i in ledger.user_index.items()}
                lowest = names[int(np.flatnonzero(eligible & (shares <= record.min_share * (1 + 1e-12)))[0])]
                allocator, rightful = home_of(record.user), home_of(lowest)
                print(f"wrong allocation {len(world.collector.allocations) + 1} at t={record.time:.3f}: {record.user} (share {record.share_before:.6f}) instead of {lowest} (share {record.min_share:.6f})")
                describe("allocating server", allocator, rightful)
                describe("rightful server", rightful, rightful)
                holders = [a for a in actors if (s := scheduler(a)) is not None and rightful in s.gradient.view]
                print(f"  servers with the rightful one in their view: {len(holders)}")
                print(f"  servers with room for {lowest}'s next task: {int(ledger.fit[ledger.user_index[lowest]].sum())}; walks failed so far: {walk_failed[0]}")

    walk_failed = [0]
    failed = HomeScheduler._walk_failed

    def count_walk_failure(self, user: str, task_id: int) -> None:
        walk_failed[0] += 1
        print(f"walk failed at t={self.actor.now():.3f}: {user}'s task {task_id} (home {self.actor.address})")
        failed(self, user, task_id)

    HomeScheduler._walk_failed = count_walk_failure
    scenario = load_scenario(args.scenario)
    config = RunConfig.from_settings(scenario.settings, policy="dgdrf", neighbors=args.neighbors, seed=args.seed, max_time=args.max_time, gradient_memory=args.gradient_memory)
    result = run_emulation(scenario, config, observers=[WrongAllocations()])
    print(f"{result.allocations} allocations, error ratio {result.error_ratio:.6f}, run stopped at {result.runtime_s:.1f} s ({result.stop_reason})")


if __name__ == "__main__":
    main()
