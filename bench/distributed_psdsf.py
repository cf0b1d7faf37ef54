"""Issue 35: PS-DSF decided by the servers (``d-psdsf``), against centralized ``psdsf``.

    python bench/distributed_psdsf.py > bench/results/distributed-psdsf.txt

Runs ``psdsf`` (server offers, one a tick) and ``d-psdsf`` (every server offers itself
every tick to the lowest K_nj among the users it knows: policies/dpsdsf.py) on the
constrained Google-like hour (configs/google-finite-100x20.toml: 100 servers, 20 users)
and on the congested 40-server quarter hour of the acceptance sweep
(configs/google-finite-40x8.toml), seeds 1-3 at P = 4, and prints per run how it ended,
the error ratio on the per-server dominant share (exact and at 5 %: judged as an offer of
the server the task went to), the minimum time-averaged K_n, JCT mean and p95, makespan,
messages and offers (proposals) per task, and where the errors come from.

Where errors come from: at each allocation judged an error, an observer finds the user
with the lowest K_nj among those whose next task fits on that server (the Collector's
truth) and reads what the allocating server knew of it: *home* (its own home user: it
knew it exactly), *unknown* (no report of it had reached the server), *taken* (the
server knew its last task as started, and no report of its next one had come yet: the
next is on its way from the user to its home and across the overlay), *stale* (it knew
the task waiting, with a share above the true one: a task of that user had ended since)
or *other*. The observer reads and changes nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = (ROOT / "configs" / "google-finite-100x20.toml", ROOT / "configs" / "google-finite-40x8.toml")
CAUSES = ("home", "unknown", "taken", "stale", "other")


def _run(job: tuple[str, str, int, int]) -> dict:
    from dgdrf.api import load_scenario
    from dgdrf.config import RunConfig
    from dgdrf.policies.dpsdsf import OfferScheduler
    from dgdrf.world import Observer, build

    path, policy, seed, neighbors = job
    scenario = load_scenario(Path(path))
    config = replace(RunConfig.from_settings(scenario.settings, str(path), seed=seed, neighbors=neighbors), policy=policy).validate()
    world = build(scenario, config)

    class Causes(Observer):
        def started(self, w) -> None:
            self.causes: Counter[str] = Counter()
            self.servers = {a: r for a, act in w.transport.actors.items() for r in getattr(act, "roles", []) if isinstance(r, OfferScheduler)}

        def allocated(self, w, rec) -> None:
            if not rec.erred:
                return
            c = w.collector
            led = c.ledger
            i = c.lowest_competitor(led.server_index[rec.server])
            uid = led.user_ids[i]
            sched = self.servers[rec.server]
            known = sched.directory.known.get(uid)
            if uid in sched.home.users:
                cause = "home"
            elif known is None:
                cause = "unknown"
            elif not known.waiting:
                cause = "taken"
            elif known.share > led.tasks[i] / led.weight[i] * (1 + 1e-9):
                cause = "stale"
            else:
                cause = "other"
            self.causes[cause] += 1

    obs = Causes()
    r = world.run(observers=[obs] if world.policy.distributed else [])
    tasks = max(r.allocations, 1)
    by_type = r.messages["by_type"]
    return {
        "scenario": scenario.name, "policy": policy, "seed": seed, "P": neighbors, "end": r.stop_reason, "allocations": r.allocations,
        "errors": r.error_ratio, "errors5": r.error_ratio_tol["0.05"], "causes": dict(obs.causes) if world.policy.distributed else {},
        "min_avg": r.min_time_avg_share, "jct_mean": r.jct_s["mean"], "jct_p95": r.jct_s["p95"], "makespan": r.makespan,
        "msgs_per_task": r.messages["total"] / tasks, "offers_per_task": by_type.get("Proposal", 0) / tasks,
        "digests_per_task": by_type.get("UserDigest", 0) / tasks, "violations": len(r.invariant_violations),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    jobs = [(str(sc), p, s, 4) for sc in SCENARIOS for p in ("psdsf", "d-psdsf") for s in range(1, a.seeds + 1)]
    with multiprocessing.Pool(a.workers) as pool:
        rows = pool.map(_run, jobs, chunksize=1)
    print("psdsf (server offers, one a tick) and d-psdsf (every server offers itself); error ratio on the per-server dominant share K_nj\n")
    head = f"{'scenario':20} {'policy':8} {'P':>2} {'seed':>4} {'end':8} {'allocs':>6} {'errors':>7} {'at 5%':>7} {'min avg':>8} {'JCT mean':>8} {'JCT p95':>8} {'makespan':>8} {'msg/task':>8} {'offers':>6} {'digests':>7} {'viol':>4}  errors by what the server knew of the lowest user"
    print(head)
    print("-" * len(head))
    for r in rows:
        causes = ", ".join(f"{k} {r['causes'][k]}" for k in CAUSES if r["causes"].get(k))
        print(f"{r['scenario']:20} {r['policy']:8} {r['P']:>2} {r['seed']:>4} {r['end']:8} {r['allocations']:>6} {r['errors']:>7.2%} {r['errors5']:>7.2%} {r['min_avg']:>8.5f} {r['jct_mean']:>8.1f} {r['jct_p95']:>8.1f} {r['makespan']:>8.1f} {r['msgs_per_task']:>8.0f} {r['offers_per_task']:>6.1f} {r['digests_per_task']:>7.0f} {r['violations']:>4}  {causes}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
