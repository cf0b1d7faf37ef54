"""Envy-freeness over time for every policy of issue 35's sweep, on one of its cells.

    python bench/envy_over_time.py > bench/results/envy-over-time-40x8.txt

Runs every policy of bench/overlay-fairness-40x8.toml on configs/google-finite-40x8.toml
(seed 1, P = 6, no loss, no departures: that sweep's cell) with samples every second
(``--sample-every 1``; the default is 10 s) and prints, from each run's ``envy_over_time``
(dgdrf/model/envy_over_time.py), the fraction of all users' wanting time (a next task
waiting) during which the user envied another user's bundle, and envied it beyond one
task; then per user the same fractions and how long it wanted; with the run's error
ratio and the most any user was below its sharing-incentive guarantee
(``sharing_over_time``) beside them. The sweep's records were made before envy over time
was measured, so this is its own record.
"""

from __future__ import annotations

import argparse
import multiprocessing
from pathlib import Path

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-finite-40x8.toml"
POLICIES = ("drf", "tsf", "psdsf", "probes", "ddrf-random", "ddrf-gradient", "dgdrf", "pdgdrf", "dg-tsf", "pdg-tsf", "d-psdsf")


def _run(job: tuple[str, int, int]) -> dict:
    from dgdrf.config import RunConfig, load_scenario
    from dgdrf.emulation import run_emulation

    policy, seed, neighbors = job
    scenario = load_scenario(SCENARIO)
    config = RunConfig.from_settings(scenario.settings, str(SCENARIO), seed=seed, neighbors=neighbors, policy=policy, sample_every=1.0).validate()
    r = run_emulation(scenario, config)
    return {"policy": policy, "end": r.stop_reason, "errors": r.error_ratio, "violations": len(r.invariant_violations),
            "envy": r.envy_over_time, "sharing": r.sharing_over_time}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--neighbors", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    with multiprocessing.Pool(a.workers) as pool:
        rows = pool.map(_run, [(p, a.seed, a.neighbors) for p in POLICIES], chunksize=1)
    print(f"{SCENARIO.stem}, seed {a.seed}, P = {a.neighbors}, no loss, no departures, sampled every second: envy over the time")
    print("users wanted more (all users together, then each as envious / beyond one task), and the most any user was below its SI guarantee\n")
    users = sorted({u for r in rows for u in r["envy"]["users"]})
    head = f"{'policy':13} {'end':8} {'viol':>4} {'errors':>7}  {'envious':>7} {'beyond one':>10}  {'SI below':>8}  " + "  ".join(f"{u:>13}" for u in users)
    print(head)
    print("-" * len(head))
    for r in rows:
        e, s = r["envy"], r["sharing"]
        per = "  ".join(f"{e['users'][u]['envious']:>6.1%}/{e['users'][u]['beyond_one']:<6.1%}" if u in e["users"] else f"{'-':>13}" for u in users)
        print(f"{r['policy']:13} {r['end']:8} {r['violations']:>4} {r['errors']:>7.2%}  {e['envious_overall']:>7.1%} {e['beyond_one_overall']:>10.1%}  {s['most_below']:>8.1%}  {per}")
    print("\nseconds each user wanted more (sampled):")
    for r in rows:
        print(f"{r['policy']:13} " + "  ".join(f"{r['envy']['users'][u]['wanting_s']:>13.0f}" if u in r["envy"]["users"] else f"{'-':>13}" for u in users))


if __name__ == "__main__":
    main()
