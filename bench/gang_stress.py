"""Random jobs of parts on tiny clusters, many of them: every policy that places gangs,
with message loss and duplication, and a server that crashes mid-run. Each run must
drain, every instance of a job that still fits the servers up must run whole, the
collector must find no violation, and no server may hold anything at the end
(dgdrf/bench/gangs.py). The property tests (tests/test_gangs.py) draw fewer examples
from the same generator.

    python bench/gang_stress.py [--runs 2000] [--crashes 1000] > bench/results/gang-stress.txt
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from dgdrf.bench.gangs import left_behind, random_gang_scenario
from dgdrf.config import RunConfig
from dgdrf.policies import POLICIES
from dgdrf.world import build, crash

FAULTS = ((0.0, 0.0), (0.05, 0.0), (0.0, 0.05), (0.05, 0.05))


def draw_jobs(rnd: random.Random) -> list[list[tuple[int, int, int, int]]]:
    """One to five users, each a job of one to three parts (class, cpu, memory, count)."""
    return [[(rnd.randint(0, 2), rnd.randint(1, 2), rnd.randint(0, 2), rnd.randint(1, 3)) for _ in range(rnd.randint(1, 3))] for _ in range(rnd.randint(1, 5))]


def one(trial: int, policies: list[str], crashing: bool) -> str | None:
    """Trial ``trial``: None when the scenario refused its draw, else "ok" or what failed."""
    rnd = random.Random(trial)
    servers = rnd.randint(3, 8)
    jobs = draw_jobs(rnd)
    scenario = random_gang_scenario(jobs, servers=servers, durations=3)
    if scenario is None:
        return None
    policy = policies[trial % len(policies)]
    loss, duplicate = FAULTS[rnd.randrange(len(FAULTS))]
    world = build(scenario, RunConfig(policy=policy, loss=loss, duplicate=duplicate, seed=rnd.randint(1, 1000), max_time=600.0))
    if crashing:  # s0 is a centralized policy's scheduler: another server crashes
        victim, after = f"s{rnd.randint(1, servers - 1)}", rnd.uniform(0.2, 4.0)
        world.clock.call_later(world.start + after, crash, world, (victim,))
    r = world.run()
    given_up = {j["user"] for j in r.unrunnable_jobs or []}
    want = {f"u{i}": {"job": 1 + i % 3} for i in range(len(jobs)) if f"u{i}" not in given_up}
    got = {u: n for u, n in (r.instances or {}).items() if u not in given_up}
    left = left_behind(world)
    if r.stop_reason != "drained" or r.invariant_violations or got != want or left:
        return f"trial {trial} {policy} loss {loss} dup {duplicate}: {r.stop_reason}, {r.invariant_violations[:2]}, {got} != {want}, {left[:2]}"
    return "ok"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2000, help="trials without a crash")
    ap.add_argument("--crashes", type=int, default=1000, help="trials with a server crash")
    args = ap.parse_args()
    policies = [name for name, cls in POLICIES.items() if cls.gangs]
    print(f"# bench/gang_stress.py --runs {args.runs} --crashes {args.crashes}: {len(policies)} policies ({', '.join(policies)})")
    for label, n, crashing in (("no crash", args.runs, False), ("a server crashes", args.crashes, True)):
        t0 = time.perf_counter()
        outcomes: Counter[str] = Counter()
        failures = []
        for trial in range(n):
            out = one(trial, policies, crashing)
            outcomes["refused" if out is None else "ok" if out == "ok" else "failed"] += 1
            if out not in (None, "ok"):
                failures.append(out)
        ran = outcomes["ok"] + outcomes["failed"]
        print(f"{label}: {ran} runs ({outcomes['refused']} draws refused by the scenario), {outcomes['ok']} drained whole with nothing held, {outcomes['failed']} failed; {time.perf_counter() - t0:.0f} s")
        for failure in failures[:20]:
            print(f"  {failure}")


if __name__ == "__main__":
    main()
