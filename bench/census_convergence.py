"""How fast push-sum's census of server kinds (overlay/census.py) converges: every node's
worst relative error over the counts of all kinds, and how many nodes hold the exact
census once rounded, every 5 s, on a Google-like cluster (issue 35, item 1).

    python bench/census_convergence.py > bench/results/census-convergence-1000.txt

The cluster is ``google_2011_jobs_scenario(SERVERS, 200, seed=7)``'s machines with their
attributes (198 kinds on 1,000), Cyclon view 8 and shuffle 4 at one round a second, the
census's initiator the first server, the same set-up as tests/test_census.py.
"""

from __future__ import annotations

import argparse

import numpy as np

from dgdrf.model.census import Census, ServerKind
from dgdrf.model.generators import google_2011_jobs_scenario
from dgdrf.nodes.bootstrap import Bootstrap
from dgdrf.overlay.census import CensusSum
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay_run import OverlayNode
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.transport import LocalTransport


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--servers", type=int, default=1000)
    ap.add_argument("--until", type=float, default=60.0, help="virtual seconds")
    a = ap.parse_args()
    scenario = google_2011_jobs_scenario(a.servers, 200, seed=7, constrained=0.5)
    truth = Census.of_servers((s.capacity, s.attribute_map) for s in scenario.servers)
    clock = VirtualClock()
    transport = LocalTransport(clock, np.random.default_rng(5))
    transport.register(Bootstrap())
    roles = []
    for i, s in enumerate(scenario.servers):
        node = OverlayNode(s.id)
        cyclon = node.add_role(Cyclon(8, 4))
        roles.append(node.add_role(CensusSum(ServerKind.of(s.capacity, s.attribute_map), 1.0 if i == 0 else 0.0, cyclon)))
        transport.register(node)
    transport.start_all()
    keys = {k.key(): n for k, n in truth.counts.items()}
    print(f"census push-sum on {a.servers} Google-like servers, {len(keys)} kinds (capacity and attributes)\n")
    print(f"{'s':>4} {'worst relative error':>21} {'nodes exact':>11}")
    for t in np.arange(5.0, a.until + 1e-9, 5.0):
        clock.run(until=float(t))
        worst, exact = 0.0, 0
        for r in roles:
            est = r.estimate()
            if est is None:
                worst = float("inf")
                continue
            worst = max(worst, max(abs(est.get(k, 0.0) - n) / n for k, n in keys.items()))
            exact += r.census() == truth
        print(f"{t:>4.0f} {worst:>21.2e} {exact:>11}")


if __name__ == "__main__":
    main()
