"""Issue 35, item 3: how long the random walk (thesis 4.3) takes to find an eligible
server, against the fraction of servers a task's constraint admits.

    python bench/walk_length.py > bench/results/walk-length-1000.txt

1,000 servers of capacity (1, 1); ``k`` of them carry the attribute ``pool = "p"``
(k = 12 ... 1,000). 20 users, each with one job of 20 tasks of demand (0.01, 0.01)
lasting 5 s that requires ``pool = "p"`` (so even k = 12 has room for all 400 at once).
Each user's home is a random server, so a task starts with a walk unless its home is
eligible. Per k: WalkTask messages per task (hops; no loss, so no hop is sent twice),
allocation latency (from the task's submission to its start) p50 / p99 / max, and how
the run ended, and when the last task ended (the run-time, counted from the first allocation tick). A walk's hop goes to a uniformly random Cyclon neighbour, so the number
of hops until an eligible server is geometric with mean about 1 / f (f = k / 1,000);
the walk gives up after ``walk_ttl`` = 1,024 hops, which at f = 1.2 % fails with
probability (1 - f)**1024, about 4e-6.
"""

from __future__ import annotations

import argparse
import multiprocessing

import numpy as np

SERVERS = 1000
USERS = 20


def _run(job: tuple[str, int, int]) -> dict:
    from dgdrf.api import run, scenario

    policy, k, seed = job
    rng = np.random.default_rng(seed)
    eligible = set(rng.choice(SERVERS, size=k, replace=False).tolist())
    servers = [{"id": f"s{i + 1}", "capacity": [1.0, 1.0], "attributes": {"pool": "p" if i in eligible else "q"}} for i in range(SERVERS)]
    users = [
        {"id": f"u{j + 1}", "jobs": [{"id": f"j{j + 1}", "demand": [0.01, 0.01], "tasks": 20, "duration": 5.0, "arrival": 0.0, "requires": {"pool": "p"}}]}
        for j in range(USERS)
    ]
    r = run(scenario(servers, users, name=f"walk-{k}"), policy, seed=seed, tick=0.1, neighbors=4)
    walks = r.messages["by_type"].get("WalkTask", 0)
    return {"policy": policy, "k": k, "seed": seed, "end": r.stop_reason, "allocations": r.allocations, "hops": walks / max(r.allocations, 1), "latency": r.latency_s, "violations": len(r.invariant_violations), "runtime": r.runtime_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="ddrf-random")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    ks = (12, 25, 50, 100, 250, 500, 1000)
    jobs = [(a.policy, k, s) for k in ks for s in range(1, a.seeds + 1)]
    with multiprocessing.Pool(a.workers) as pool:
        rows = pool.map(_run, jobs, chunksize=1)
    print(f"random walk to an eligible server: {SERVERS} servers, {USERS} users x 20 tasks requiring pool = p, policy {a.policy}\n")
    head = f"{'eligible':>8} {'fraction':>8} {'1/f':>6} {'seed':>4} {'end':8} {'tasks':>5} {'hops/task':>9} {'latency p50 / p99 / max (s)':>28} {'last end s':>10} {'viol':>4}"
    print(head)
    print("-" * len(head))
    for r in rows:
        lat = r["latency"]
        f = r["k"] / SERVERS
        print(f"{r['k']:>8} {f:>8.3f} {1 / f:>6.1f} {r['seed']:>4} {r['end']:8} {r['allocations']:>5} {r['hops']:>9.1f} {lat['p50']:>10.3f} / {lat['p99']:>6.3f} / {lat['max']:>6.3f} {r['runtime']:>10.1f} {r['violations']:>4}")


if __name__ == "__main__":
    main()
