"""How long the offline progressive-filling oracle (dgdrf/model/lp_filling.py, Wang et al.
Alg. 1 by LP) takes on a random constrained instance of 1,000 servers x 100 users (the
size the issue asks it to handle): wall time, rounds and LPs solved, for the Freeze test
as the paper writes it (one LP per active user per round, ``each``) and as the oracle does
it by default (LPs of the active users' summed shares, ``sum``), and whether the two give
the same totals.

    python bench/lp_oracle_scale.py > bench/results/lp-oracle-scale.txt
    python bench/lp_oracle_scale.py --instance scattered >> bench/results/lp-oracle-scale.txt
    python bench/lp_oracle_scale.py --servers 200 --users 40 --seed 2 --freeze sum

The instance (numpy default_rng(seed)): servers of five Google-like shapes (cpu, memory as
fractions of the largest machine) in 20 attribute groups of random sizes (Dirichlet);
users demanding 0.5-5 % of such a machine per resource; 10 % of users unconstrained, the
others eligible on 1-4 random groups, less a random 0-50 % of those groups' servers (a
per-user blacklist, so no two servers are alike to every user); weights 1, or 1-3 with
``--weights``. ``--instance scattered``: 30 % of users unconstrained, the others eligible
on a random 2-50 % of all servers (three times the variables, and everyone ends in one
round: the LPs are larger, not more numerous). Timings are of this machine, which is shared: one run each.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from dgdrf.model.lp_filling import NOTIONS, progressive_filling_lp
from dgdrf.model.problem import Problem

SHAPES = np.array([[0.5, 0.5], [0.5, 0.25], [0.5, 0.75], [1.0, 1.0], [0.25, 0.25]])
GROUPS = 20


def random_problem(servers: int, users: int, seed: int, weights: bool = False, instance: str = "grouped") -> Problem:
    """A random constrained instance (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    capacity = SHAPES[rng.integers(0, len(SHAPES), servers)]
    group = rng.choice(GROUPS, size=servers, p=rng.dirichlet(np.ones(GROUPS)))
    demand = rng.uniform(0.005, 0.05, (users, 2))
    eligible = np.ones((users, servers), dtype=bool)
    for i in range(users):
        if instance == "scattered":
            if rng.random() >= 0.3:
                eligible[i] = rng.random(servers) < rng.uniform(0.02, 0.5)
        elif rng.random() >= 0.1:
            groups = rng.choice(GROUPS, size=rng.integers(1, 5), replace=False)
            eligible[i] = np.isin(group, groups) & (rng.random(servers) < rng.uniform(0.5, 1.0))
        if not eligible[i].any():
            eligible[i, rng.integers(servers)] = True
    weight = rng.integers(1, 4, users).astype(np.float64) if weights else np.ones(users)
    return Problem(
        server_ids=tuple(f"s{m}" for m in range(servers)),
        user_ids=tuple(f"u{i}" for i in range(users)),
        capacity=capacity,
        demand=demand,
        eligible=eligible,
        weight=weight,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=1000)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--notion", choices=NOTIONS, default="tsf")
    ap.add_argument("--freeze", choices=("sum", "each", "both"), default="both")
    ap.add_argument("--weights", action="store_true", help="weights 1-3 instead of 1")
    ap.add_argument("--instance", choices=("grouped", "scattered"), default="grouped")
    args = ap.parse_args()
    problem = random_problem(args.servers, args.users, args.seed, args.weights, args.instance)
    pairs = int(problem.eligible.sum())
    print(f"# bench/lp_oracle_scale.py --servers {args.servers} --users {args.users} --seed {args.seed} --notion {args.notion} --instance {args.instance}{' --weights' if args.weights else ''}")
    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, {time.strftime('%Y-%m-%d')}")
    print(f"instance: {args.servers} servers x {args.users} users, 2 resources, {pairs} eligible (user, server) pairs ({pairs / problem.eligible.size:.0%})")
    results = {}
    for how in (("each", "sum") if args.freeze == "both" else (args.freeze,)):
        t0 = time.perf_counter()
        r = progressive_filling_lp(problem, args.notion, freeze=how)
        wall = time.perf_counter() - t0
        results[how] = r
        sizes = [len(x) for x in r.rounds]
        print(f"freeze={how}: wall {wall:.1f} s, {len(r.levels)} rounds (users frozen per round: min {min(sizes)}, max {max(sizes)}), {r.lps} LPs ({wall / r.lps:.3f} s per LP)")
        print(f"  levels: first {r.levels[0]:.6g}, last {r.levels[-1]:.6g}; min share {min(r.shares.values()):.6g}, total tasks {sum(r.tasks.values()):.6f}")
    if len(results) == 2:
        a, b = results["each"], results["sum"]
        gap = max(abs(a.tasks[u] - b.tasks[u]) / max(1.0, abs(a.tasks[u])) for u in a.tasks)
        print(f"each vs sum: same rounds {a.rounds == b.rounds}; largest relative difference of a total {gap:.2e}")


if __name__ == "__main__":
    main()
