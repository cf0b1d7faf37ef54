"""The emulator's cost per simulated second against cluster size, from 100 servers to a
whole Google cell (12,583 machines), with users in the cell's proportion (1,000 per
12,583 servers), for each policy asked: wall seconds per simulated second of the
allocation phase (after the warm-up), messages per simulated second, and the cost per
message; a log-log fit says how the cost grows with servers + users (issue 16: no worse
than linear for a fixed neighbour count). The cost is the run's CPU seconds (a run is one
thread), so a point measured beside other work on a shared machine is not stretched the
way its wall time is; the wall time is recorded beside it.

    python bench/cost_scaling.py --out bench/results/cost-scaling
    python bench/cost_scaling.py --sizes 100,1000 --policies drf --window 5 --out /tmp/x

Each point is one run of ``--window`` simulated seconds after the policy's warm-up (a
run does not reach saturation, out of reach on a cell here: the cost of a simulated
second is what is measured; see docs/notes/2026-11-25-google-cell-figures-in-code.md
and docs/notes/2026-11-29-performance-history.md). The wall time
of each simulated second is taken from the run's progress callback, so the warm-up
(joins, the first gossip) is left out. One run at a time, each in its own process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

from dgdrf.build_info import core
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.generators import google_2011_scenario

CELL_SERVERS, CELL_USERS = 12_583, 1_000
SIZES = (100, 200, 500, 1000, 2000, 5000, CELL_SERVERS)


def users_for(servers: int) -> int:
    """Users in the proportion of a Google cell (at least 2)."""
    return max(2, round(servers * CELL_USERS / CELL_SERVERS))


def measure(policy: str, servers: int, window: float, neighbors: int, seed: int) -> dict:
    """One run: the wall time of each simulated second after the warm-up."""
    users = users_for(servers)
    scenario = google_2011_scenario(servers, users, 2017)
    config = RunConfig(policy=policy, neighbors=neighbors, seed=seed, max_time=10.0 + window)
    marks: list[tuple[float, float, float, int]] = []  # (simulated s, wall s, CPU s, allocations)
    t0 = time.perf_counter()
    result = run_emulation(scenario, config, progress=lambda sim, n: marks.append((sim, time.perf_counter() - t0, time.process_time(), n)))
    start = result.warmup_s
    inside = [m for m in marks if m[0] >= start]
    sim = inside[-1][0] - inside[0][0]
    wall = inside[-1][1] - inside[0][1]
    cpu = inside[-1][2] - inside[0][2]
    phase = result.cost_per_tick  # messages per allocation tick, during allocation
    msgs_per_tick = sum(g["messages"] for g in phase["by_group"].values())
    msgs_per_sim_s = msgs_per_tick / config.tick
    return {
        "policy": policy,
        "servers": servers,
        "users": users,
        "neighbors": neighbors,
        "window_s": sim,
        "wall_s": wall,
        "wall_per_sim_s": wall / sim,
        "cpu_s": cpu,
        "cpu_per_sim_s": cpu / sim,
        "messages_per_sim_s": msgs_per_sim_s,
        "us_per_message": 1e6 * (cpu / sim) / msgs_per_sim_s if msgs_per_sim_s else None,
        "allocations_in_window": inside[-1][3] - inside[0][3],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average": os.getloadavg()[0],  # other work on the machine (this run counts 1)
        "run_wall_s": result.wall_s,
    }


def slope(points: list[dict]) -> float:
    """Exponent b of CPU s per simulated s ~ (servers + users)^b, least squares in log-log."""
    x = np.log([p["servers"] + p["users"] for p in points])
    y = np.log([p["cpu_per_sim_s"] for p in points])
    return float(np.polyfit(x, y, 1)[0])


def draw(points: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for policy in sorted({p["policy"] for p in points}):
        ps = sorted((p for p in points if p["policy"] == policy), key=lambda p: p["servers"])
        n = [p["servers"] + p["users"] for p in ps]
        ax[0].loglog(n, [p["cpu_per_sim_s"] for p in ps], "o-", label=f"{policy} (slope {slope(ps):.2f})")
        ax[1].semilogx(n, [p["us_per_message"] for p in ps], "o-", label=policy)
    ref = np.array([min(p["servers"] + p["users"] for p in points), max(p["servers"] + p["users"] for p in points)])
    top = max(p["cpu_per_sim_s"] for p in points if p["servers"] + p["users"] == ref[1])
    ax[0].loglog(ref, top * ref / ref[1], "k:", label="linear")
    ax[0].set_xlabel("servers + users")
    ax[0].set_ylabel("CPU s per simulated s")
    ax[0].set_title("cost of a simulated second (allocation phase)")
    ax[0].legend(fontsize=8)
    ax[1].set_xlabel("servers + users")
    ax[1].set_ylabel("CPU µs per message")
    ax[1].set_title("cost per message")
    ax[1].set_ylim(bottom=0)
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="servers per point (comma-separated)")
    ap.add_argument("--policies", default="drf,dgdrf,pdgdrf")
    ap.add_argument("--window", type=float, default=10.0, help="simulated seconds measured after the warm-up")
    ap.add_argument("--neighbors", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    points = []
    for policy in args.policies.split(","):
        for servers in map(int, args.sizes.split(",")):
            # each run in its own process: peak memory is the run's, and no run inherits another's heap
            import multiprocessing as mp

            with mp.get_context("spawn").Pool(1) as pool:
                p = pool.apply(measure, (policy, servers, args.window, args.neighbors, args.seed))
            points.append(p)
            print(f"{policy:<8}{servers:>7} servers {p['users']:>5} users: {p['cpu_per_sim_s']:8.3f} CPU s / sim s ({p['wall_per_sim_s']:.3f} wall), {p['messages_per_sim_s']:>10,.0f} messages / sim s, {p['us_per_message'] or 0:6.2f} us / message, {p['peak_rss_mb']:7.0f} MiB", flush=True)
    doc = {"command": " ".join(["python", "bench/cost_scaling.py", *(argv if argv is not None else sys.argv[1:])]), "core": core(), "python": platform.python_version(), "cpus": os.cpu_count(), "points": points,
           "slopes": {pol: slope([p for p in points if p["policy"] == pol]) for pol in sorted({p["policy"] for p in points}) if sum(p["policy"] == pol for p in points) > 1}}
    (args.out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    draw(points, args.out / "cost_per_sim_second.png")
    lines = ["# Cost of a simulated second against cluster size\n", f"`{doc['command']}` ({doc['core']} core, Python {doc['python']}, {doc['cpus']} cpus; its runs one at a time, the machine's load average beside each). Users in a Google cell's proportion; allocation phase only (after the warm-up). Cost in CPU seconds of the run's one thread; wall seconds beside it.\n",
             "| policy | servers | users | CPU s / sim s | wall s / sim s | messages / sim s | CPU µs / message | peak MiB | load |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in points:
        lines.append(f"| {p['policy']} | {p['servers']:,} | {p['users']:,} | {p['cpu_per_sim_s']:.3f} | {p['wall_per_sim_s']:.3f} | {p['messages_per_sim_s']:,.0f} | {p['us_per_message'] or 0:.2f} | {p['peak_rss_mb']:,.0f} | {p.get('load_average', float('nan')):.1f} |")
    lines.append("")
    for pol, b in doc["slopes"].items():
        lines.append(f"- {pol}: CPU s per simulated s grows as (servers + users)^{b:.2f} {'(no worse than linear)' if b <= 1.05 else '(WORSE than linear)'}")
    lines.append("\n![cost per simulated second](cost_per_sim_second.png)\n")
    (args.out / "report.md").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
