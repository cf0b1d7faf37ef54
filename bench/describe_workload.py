"""What a scenario of finite jobs holds: jobs and tasks, the offered load, tasks per job,
durations, constraints and how many machines they leave each job, jobs per user.

    python bench/describe_workload.py configs/google-finite-100x20.toml [HORIZON]

HORIZON (default 3600) is the seconds over which the offered load is counted
(dgdrf.model.generators.offered_load). The shipped example's figures in
docs/notes/2026-11-26-google-finite-workload.md and bench/results/google-finite-100x20.txt
come from this.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from dgdrf.config import load_scenario
from dgdrf.model.generators import offered_load


def describe(path: str, horizon: float = 3600.0) -> list[str]:
    s = load_scenario(path)
    jobs = [(u.id, j) for u in s.users for j in u.jobs if j.finite]
    tasks = np.array([j.tasks for _, j in jobs])
    means = np.array([j.duration.mean() if j.duration is not None else 0.0 for _, j in jobs])
    constrained = [(uid, j) for uid, j in jobs if not j.constraint.unconstrained]
    fractions = np.array([sum(j.constraint.admits(sv.id, sv.attribute_map) for sv in s.servers) / len(s.servers) for _, j in constrained])
    per_user = {u.id: sum(1 for uid, _ in jobs if uid == u.id) for u in s.users}
    arrivals = np.array([j.arrival for _, j in jobs])
    lines = [
        f"{s.name}: {len(s.servers)} servers, {len(s.users)} users",
        f"jobs {len(jobs)}, tasks {int(tasks.sum()):,}, offered load over {horizon:g} s {offered_load(s, horizon):.3f}",
        f"arrivals {arrivals.min():.0f}-{arrivals.max():.0f} s",
        f"tasks per job: single {np.mean(tasks == 1):.0%}, median {np.median(tasks):.0f}, p90 {np.percentile(tasks, 90):.0f}, <= 10 {np.mean(tasks <= 10):.0%}, max {tasks.max()}",
        f"mean task duration per job: median {np.median(means):.0f} s, under 2 h {np.mean(means < 7200):.0%}, longest {means.max():.0f} s",
        f"constrained jobs {len(constrained)} ({len(constrained) / len(jobs):.1%}) holding {sum(j.tasks for _, j in constrained):,} tasks",
    ]
    if len(fractions):
        lines.append(f"machines a constrained job may use: median {np.median(fractions):.0%}, <= 20 % for {np.mean(fractions <= 0.2):.0%} of them, fewest {fractions.min() * len(s.servers):.0f}")
        held = np.array([j.tasks for _, j in constrained])  # a random walk's hops to such a machine: about 1 / fraction
        lines.append(f"random-walk hops a constrained task needs, 1 / fraction weighted by tasks: mean {np.sum(held / fractions) / held.sum():.1f}; tasks whose job may use < 10 % of the machines: {held[fractions < 0.1].sum() / held.sum():.1%}")
    lines.append(f"jobs per user: {min(per_user.values())}-{max(per_user.values())}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="describe_workload.py", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("scenario", help="a scenario file with finite jobs")
    ap.add_argument("horizon", type=float, nargs="?", default=3600.0, help="seconds over which the offered load is counted (default 3600)")
    args = ap.parse_args(argv)
    print("\n".join(describe(args.scenario, args.horizon)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
