"""Issue 35: TSF decided over the gradient overlay, against centralized ``tsf``.

    python bench/distributed_tsf.py --census > bench/results/distributed-tsf-100x20.txt
    python bench/distributed_tsf.py --census --no-room-notices    # the same without room notices
    python bench/distributed_tsf.py --census --no-gradient-announce > bench/results/distributed-tsf-100x20-no-announce.txt

Runs ``tsf`` (server offers), ``dg-tsf`` and ``pdg-tsf`` on the constrained Google-like
scenario (configs/google-finite-100x20.toml: 100 servers, 20 users, half the jobs
constrained) for seeds 1-3 and neighbour counts 3 and 4, and prints per run how it ended,
the error ratio on the task share (exact and at 5 %), where the errors come from, the
minimum time-averaged task share, JCT mean and p95, makespan and messages per task.
dg-tsf runs with its defaults: room notices and the stamped gradient's announcements
(overlay/gradient.py Gradient.announce); ``--no-gradient-announce`` runs it without them.

Where errors come from: at each allocation judged an error (its user's task share above
the lowest among users whose next task fits somewhere), an observer reads the home entry
of the user with the lowest share: *stuck* (its task found no room on its last try, or
its try is overdue: it waits for a retry, so it does not compete), *idle* (its home has not
yet heard of its next task), *out* (its task is being placed), *competing* (it competes:
the gradient's centre was elsewhere, or its home had not heard of its lower share yet),
or *unknown* (no home has heard of it yet). The observer reads and changes nothing.

With ``--census`` it also runs dg-tsf with ``--capacity-knowledge pushsum`` at a warm-up
of 10 s and 30 s and says when every server's census (overlay/census.py) was last not
exact at an allocation: from then on every h_i a server used was exact.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "configs" / "google-finite-100x20.toml"
CAUSES = ("stuck", "idle", "out", "competing", "unknown")


def _run(job: tuple[str, int, int, dict]) -> dict:
    from dgdrf.api import load_scenario
    from dgdrf.config import RunConfig
    from dgdrf.model.census import Census
    from dgdrf.overlay.census import CensusSum
    from dgdrf.policies.ddrf import HomeScheduler
    from dgdrf.world import Observer, build

    policy, seed, neighbors, extra = job
    scenario = load_scenario(SCENARIO)
    config = replace(RunConfig.from_settings(scenario.settings, str(SCENARIO), seed=seed, neighbors=neighbors, **extra), policy=policy).validate()
    world = build(scenario, config)
    exact = Census.of_servers((s.capacity, {}) for s in scenario.servers)

    class Causes(Observer):
        def started(self, w) -> None:
            self.causes: Counter[str] = Counter()
            self.homes = [r for a in w.transport.actors.values() for r in getattr(a, "roles", []) if isinstance(r, HomeScheduler)]
            self.census = [r for a in w.transport.actors.values() for r in getattr(a, "roles", []) if isinstance(r, CensusSum)]
            self.census_wrong_at = None

        def allocated(self, w, rec) -> None:
            if self.census and any(r.census() != exact for r in self.census):
                self.census_wrong_at = rec.time
            c = w.collector
            if not rec.erred:
                return
            led = c.ledger
            uid = led.user_ids[c.lowest_competitor(led.server_index[rec.server])]
            hu = next((h.home.users[uid] for h in self.homes if uid in h.home.users), None)
            if hu is None:
                cause = "unknown"
            elif hu.stuck:
                cause = "stuck"
            elif hu.idle or hu.request is None:
                cause = "idle"
            elif hu.out:
                cause = "out"
            else:
                cause = "competing"
            self.causes[cause] += 1

    obs = Causes()
    r = world.run(observers=[obs] if world.policy.distributed else [])
    tasks = max(r.allocations, 1)
    return {
        "policy": policy, "seed": seed, "P": neighbors, "extra": extra, "end": r.stop_reason, "allocations": r.allocations,
        "errors": r.error_ratio, "errors5": r.error_ratio_tol["0.05"], "causes": dict(obs.causes) if world.policy.distributed else {},
        "min_avg": r.min_time_avg_share, "jct_mean": r.jct_s["mean"], "jct_p95": r.jct_s["p95"], "makespan": r.makespan,
        "msgs_per_task": r.messages["total"] / tasks, "violations": len(r.invariant_violations),
        "census_wrong_at": getattr(obs, "census_wrong_at", None), "warmup": config.warmup,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--census", action="store_true", help="also the push-sum census runs")
    ap.add_argument("--no-room-notices", action="store_true", help="the gradient runs without room notices (policies/local.py)")
    ap.add_argument("--no-gradient-announce", action="store_true", help="dg-tsf without announcing its servers' utility rises (overlay/gradient.py Gradient.announce)")
    a = ap.parse_args()
    off = {"room_notices": False} if a.no_room_notices else {}
    if a.no_gradient_announce:
        off["gradient_announce"] = False
    jobs = [("tsf", s, 4, {}) for s in range(1, a.seeds + 1)]
    jobs += [(p, s, n, dict(off)) for p in ("dg-tsf", "pdg-tsf") for n in (3, 4) for s in range(1, a.seeds + 1)]
    if a.census:
        jobs += [("dg-tsf", 1, 4, {"capacity_knowledge": "pushsum", "warmup": w, **off}) for w in (10.0, 30.0)]
    with multiprocessing.Pool(a.workers) as pool:
        rows = pool.map(_run, jobs, chunksize=1)
    print(f"{SCENARIO.name}: tsf (server offers), dg-tsf and pdg-tsf; error ratio on the task share (n_i / h_i w_i)\n")
    head = f"{'policy':8} {'P':>2} {'seed':>4} {'end':8} {'allocs':>6} {'errors':>7} {'at 5%':>7} {'min avg':>8} {'JCT mean':>8} {'JCT p95':>8} {'makespan':>8} {'msg/task':>8} {'viol':>4}  errors by the lowest user's state at its home"
    print(head)
    print("-" * len(head))
    for r in rows:
        causes = ", ".join(f"{k} {r['causes'][k]}" for k in CAUSES if r["causes"].get(k))
        extra = " ".join(f"{k}={v}" for k, v in r["extra"].items() if k not in ("room_notices", "gradient_announce"))
        print(f"{r['policy']:8} {r['P']:>2} {r['seed']:>4} {r['end']:8} {r['allocations']:>6} {r['errors']:>7.2%} {r['errors5']:>7.2%} {r['min_avg']:>8.5f} {r['jct_mean']:>8.1f} {r['jct_p95']:>8.1f} {r['makespan']:>8.1f} {r['msgs_per_task']:>8.0f} {r['violations']:>4}  {causes} {extra}")
    for r in rows:
        if r["extra"].get("capacity_knowledge") == "pushsum":
            at = r["census_wrong_at"]
            print(f"\npush-sum census, warm-up {r['warmup']:g} s: " + ("every server's census exact at every allocation" if at is None else f"some server's census not exact at an allocation until t = {at:.1f} s"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
