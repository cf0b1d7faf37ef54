"""Where a gradient policy's users are while below their sharing-incentive guarantee
(issue 35's sweep: dg-tsf under 1 % loss left its worst user 21-27 % of its guaranteed
resource-time short, tsf 2.5-4.3 %).

    python bench/sharing_below.py > bench/results/sharing-below-40x8.txt

Runs ``dg-tsf`` on configs/google-finite-40x8.toml (seed 1, P = 6, with and without 1 %
loss, as cells of bench/overlay-fairness-40x8.toml) and, every simulated second, finds
the users holding less than their guarantee while they have a task waiting
(model/sharing_over_time.py) and reads their home entry: *competing* (its task waits
there and takes part in the order of task shares), *out* (being placed), *stuck*
(its last walk found no room; it waits for a retry or a room notice), *idle* (its home
has not heard of its next task), and whether its task fits on some server now. Prints
each user's fraction of active time below and shortfall, then the sample counts. The
observer reads and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from dgdrf.config import RunConfig, load_scenario
from dgdrf.policies.ddrf import HomeScheduler
from dgdrf.world import Observer, build

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-finite-40x8.toml"


class Below(Observer):
    def started(self, world) -> None:
        self.world = world
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.homes = [r for a in world.transport.actors.values() for r in getattr(a, "roles", []) if isinstance(r, HomeScheduler)]
        world.clock.call_later(world.start + 1.0, self._sample)

    def _sample(self) -> None:
        c = self.world.collector
        sharing = c.sharing
        below = sharing._active & (sharing._held < sharing._guarantee * (1 - 1e-9))
        fits = c.ledger.fits_anywhere()
        for i in np.flatnonzero(below):
            uid = c.ledger.user_ids[i]
            hu = next((h.home.users[uid] for h in self.homes if uid in h.home.users), None)
            state = "unknown" if hu is None else "stuck" if hu.stuck else "idle" if hu.idle or hu.request is None else "out" if hu.out else "competing"
            self.counts[(uid, state, "fits somewhere" if fits[i] else "fits nowhere")] += 1
        if c.ended_at is None:
            self.world.clock.call_later(1.0, self._sample)


def main() -> None:
    scenario = load_scenario(SCENARIO)
    for loss in (0.0, 0.01):
        obs = Below()
        r = build(scenario, RunConfig(policy="dg-tsf", seed=1, neighbors=6, loss=loss).validate()).run(observers=[obs])
        s = r.sharing_over_time
        print(f"{scenario.name}, dg-tsf, seed 1, P = 6, loss {loss:.0%}: {r.stop_reason}, errors {r.error_ratio:.2%}, JCT mean {r.jct_s['mean']:.1f} s")
        print("  per user, fraction of active time below its guarantee / part of its guaranteed resource-time missing:")
        print("  " + ", ".join(f"{u} {d['below']:.1%}/{d['shortfall']:.1%}" for u, d in s["users"].items()))
        print("  one-second samples of users below their guarantee, by user, home state and whether its task fits:")
        for (uid, state, fits), n in sorted(obs.counts.items(), key=lambda kv: -kv[1])[:12]:
            print(f"    {uid:4} {state:9} {fits:15} {n:5}")
        print()


if __name__ == "__main__":
    main()
