"""Why dg-tsf and pdg-tsf erred more when servers leave (issue 35's sweep, 4 departures),
and what telling their servers of departures changed.

    python bench/churn_knowledge.py > bench/results/churn-knowledge-40x8.txt

Runs ``dg-tsf`` and ``pdg-tsf`` on configs/google-finite-40x8.toml at P = 6, no loss,
with 4 of the 40 servers leaving (crashing) a minute apart from t = 60 s, as that cell
of bench/overlay-fairness-40x8.toml, for seeds 1-3, twice:

- *told*: the current code, in which a server reported down (MemberDown) leaves the
  census of server kinds each server ranks by (policies/meters.py ``CensusChanges``);
- *not told*: the same with ``CensusChanges.members_down`` swapped for one that does
  nothing, for the run: each server keeps the census it was given at start (exact
  capacity knowledge), so its h_i keeps counting the servers gone. This was the code
  before.

Every allocation is judged as the run does (the Collector: task shares n_i / (h_i w_i)
with h_i over the servers still there, model/notions.py ``RowSums``) and, for the
*not told* runs, also against the h_i the servers ranked by (over every server at start),
among the same users (those whose next task fits somewhere now) with the run's
tolerance: the difference is the part of the errors that came from what the servers were
not told, not from how they decide. The observer reads and changes nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
from pathlib import Path

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-finite-40x8.toml"


def _run(job: tuple[str, int, int, int, bool]) -> dict:
    import numpy as np

    from dgdrf.config import RunConfig, load_scenario
    from dgdrf.model.problem import tasks_per_server
    from dgdrf.nodes.collector import exceeds_minimum
    from dgdrf.policies.meters import CensusChanges
    from dgdrf.world import Observer, build

    policy, seed, neighbors, departures, told = job
    scenario = load_scenario(SCENARIO)
    config = RunConfig.from_settings(scenario.settings, str(SCENARIO), seed=seed, neighbors=neighbors, churn_departures=departures, churn_every=60.0, churn_start=60.0, policy=policy).validate()

    class TwoJudges(Observer):
        def started(self, world) -> None:
            self.capacity = world.collector.ledger.capacity.copy()  # every server, as given at start
            self.counts = {"before": [0, 0, 0], "after": [0, 0, 0]}  # allocations, errors as run, errors on the h_i given at start

        def allocated(self, world, rec) -> None:
            led = world.collector.ledger  # before it counts this allocation
            as_run = rec.erred
            given_h = tasks_per_server(self.capacity, led.demand).sum(axis=1)  # of each user's next task
            shares = led.tasks / (given_h * led.weight)  # h_i > 0: the loader refuses a task that fits nowhere
            competing = led.fits_anywhere()
            low = shares[competing].min() if competing.any() else np.inf
            on_given = exceeds_minimum(shares[led.user_index[rec.user]], low)
            c = self.counts["before" if led.live().all() else "after"]
            c[0] += 1
            c[1] += as_run
            c[2] += on_given

    obs = TwoJudges()
    told_of_departures = CensusChanges.members_down
    if not told:
        CensusChanges.members_down = lambda self, addresses: None  # for this run only (restored below)
    try:
        r = build(scenario, config).run(observers=[obs])
    finally:
        CensusChanges.members_down = told_of_departures
    return {"policy": policy, "seed": seed, "told": told, "end": r.stop_reason, "allocations": r.allocations, "errors": r.error_ratio,
            "violations": len(r.invariant_violations), "counts": obs.counts, "jct_mean": r.jct_s["mean"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--neighbors", type=int, default=6)
    ap.add_argument("--departures", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    jobs = [(p, s, a.neighbors, a.departures, told) for p in ("dg-tsf", "pdg-tsf") for s in range(1, a.seeds + 1) for told in (False, True)]
    with multiprocessing.Pool(a.workers) as pool:
        rows = pool.map(_run, jobs, chunksize=1)
    print(f"{SCENARIO.stem}, P = {a.neighbors}, no loss, {a.departures} departures a minute apart from t = 60 s. Errors judged with h_i over")
    print("the servers still there (as the run), and for servers not told of departures also on the h_i they ranked by (every server at start)\n")
    head = f"{'policy':8} {'seed':>4} {'servers':9} {'end':8} {'allocs':>6} {'viol':>4} {'errors':>7} {'on their h_i':>12} {'JCT mean':>8}   {'before the first departure':>26}   after: allocs, errors as run, on their h_i"
    print(head)
    print("-" * len(head))
    for r in rows:
        b, f = r["counts"]["before"], r["counts"]["after"]
        n = b[0] + f[0]
        theirs = f"{(b[2] + f[2]) / n:>12.2%}" if not r["told"] else f"{'-':>12}"
        after = f"{f[0]}, {f[1]}" + ("" if r["told"] else f", {f[2]}")
        print(f"{r['policy']:8} {r['seed']:>4} {'told' if r['told'] else 'not told':9} {r['end']:8} {r['allocations']:>6} {r['violations']:>4} {r['errors']:>7.2%} {theirs} {r['jct_mean']:>8.1f}   "
              f"{f'{b[0]} allocs, {b[1]} errors':>26}   {after}")


if __name__ == "__main__":
    main()
