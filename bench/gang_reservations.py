"""What placing jobs of parts whole costs: configs/google-gangs-100x20.toml (an hour of
Google-2011-like jobs on 100 machines, its 68 jobs of 2-54 tasks run as gangs) under
centralized DRF and every distributed policy that places gangs, with and without 5 %
message loss (seed 1).

Per run: how it ended, the collector's invariant violations, the gang instances placed,
the messages gangs cost per instance (policies/gang_desk.py's reservation protocol, every
message type whose name starts with ``Gang``, which the centralized scheduler needs
none of; and the users' AllStarted, from which the tasks' durations count), the
reservations made, given back whole and given back in part, the resource-seconds those
given back held and that as a share of the cluster's capacity over the makespan (the
utilisation held for nothing), the gangs' mean job completion time against the other
jobs', and the wall time.

    python bench/gang_reservations.py [--policies drf,dgdrf] [--loss 0,0.05] [--workers 2]
        [--crash s7@1800] > bench/results/gang-reservations.md
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import dgdrf
from dgdrf.config import RunConfig
from dgdrf.world import Crash, build

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-gangs-100x20.toml"
POLICIES = ("drf", "probes", "ddrf-random", "ddrf-gradient", "dgdrf", "pdgdrf", "dg-tsf", "pdg-tsf", "d-psdsf")


def gang_type(name: str) -> bool:
    """Whether a message type is one that gangs cost (and plain tasks do not)."""
    return name.startswith("Gang") or name == "AllStarted"


def one(policy: str, loss: float, crash: tuple[str, float] | None = None) -> dict[str, Any]:
    """One run, measured; ``crash``: a server that crashes at a time (seconds)."""
    scenario = dgdrf.load_scenario(SCENARIO)
    gang_jobs = {(u.id, j.id) for u in scenario.users for j in u.jobs if j.gang}
    capacity = [sum(s.capacity[r] for s in scenario.servers) for r in range(len(scenario.resources))]
    t0 = time.perf_counter()
    controls = [Crash(crash[1], (crash[0],))] if crash else []
    r = build(scenario, RunConfig(policy=policy, seed=1, loss=loss)).run(controls=controls)
    wall = time.perf_counter() - t0
    print(f"{policy} loss {loss:g}: {r.stop_reason}, {wall:.0f} s", file=sys.stderr, flush=True)
    by_type = r.messages["by_type"]
    gang_messages = sum(v for k, v in by_type.items() if gang_type(k))
    instances = sum(sum(v.values()) for v in (r.instances or {}).values())
    held = (r.reservations or {}).get("held_resource_seconds", {})
    makespan = r.makespan or 0.0
    jct = {True: [], False: []}
    for job in r.jobs or []:
        if job.get("jct") is not None:
            jct[(job["user"], job["job"]) in gang_jobs].append(job["jct"])
    return {
        "policy": policy, "loss": loss, "stop": r.stop_reason, "violations": len(r.invariant_violations), "instances": instances,
        "gang_messages": gang_messages, "by_type": {k: v for k, v in by_type.items() if gang_type(k)},
        "reservations": r.reservations, "held_share": [held.get(name, 0.0) / (c * makespan) if c * makespan > 0 else 0.0 for name, c in zip(scenario.resources, capacity, strict=True)],
        "makespan": makespan, "jct_gangs": sum(jct[True]) / len(jct[True]) if jct[True] else None, "jct_others": sum(jct[False]) / len(jct[False]) if jct[False] else None,
        "wall": wall, "lost": r.events.get("task_lost", 0), "aborted": r.events.get("aborted", 0),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--loss", default="0,0.05", help="message loss rates, comma-separated")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--crash", help="SERVER@SECONDS: that server crashes then in every run")
    args = ap.parse_args()
    crash = None
    if args.crash:
        server, _, at = args.crash.partition("@")
        crash = (server, float(at))
    runs = [(p, float(x), crash) for p in args.policies.split(",") for x in args.loss.split(",")]
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(one, *zip(*runs, strict=True)))
    print("# What placing gangs costs: configs/google-gangs-100x20.toml, seed 1\n")
    flags = f" --crash {args.crash}" if args.crash else ""
    print(f"`python bench/gang_reservations.py --policies {args.policies} --loss {args.loss}{flags}`; 68 jobs of 2-54 tasks run as gangs.")
    if crash:
        print(f"Server {crash[0]} crashes at {crash[1]:g} s: lost, the tasks its users reported lost (every task of an instance that lost one); aborted, those stopped on the servers left.")
    print("Messages: of the reservation protocol (types Gang*) and the users' AllStarted, per instance placed. Held: resource-seconds that reservations given back held,")
    print("as a share of the cluster's capacity over the makespan (CPU, memory). JCT: mean job completion time, gangs / other jobs.\n")
    print("| policy | loss | stop | violations | instances | messages / instance | made | given back | in part | held (CPU, mem) | makespan (s) | JCT gangs / others (s) | lost | aborted | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        res = row["reservations"] or {}
        per = row["gang_messages"] / row["instances"] if row["instances"] else 0.0
        held = ", ".join(f"{x:.2e}" for x in row["held_share"])
        jct = f"{row['jct_gangs']:.0f} / {row['jct_others']:.0f}" if row["jct_gangs"] is not None and row["jct_others"] is not None else "n/a"
        print(
            f"| {row['policy']} | {row['loss']:g} | {row['stop']} | {row['violations']} | {row['instances']} | {per:.1f} | {res.get('made', 0)} | {res.get('given_back', 0)} | "
            f"{res.get('partial', 0)} | {held} | {row['makespan']:.0f} | {jct} | {row['lost']} | {row['aborted']} | {row['wall']:.0f} |"
        )
    print("\nMessages of gangs by type, in each run:\n")
    for row in rows:
        if row["by_type"]:
            print(f"- {row['policy']}, loss {row['loss']:g}: " + ", ".join(f"{k} {v}" for k, v in sorted(row["by_type"].items())))


if __name__ == "__main__":
    main()
