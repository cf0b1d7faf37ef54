"""Every policy on a real loopback cluster whose server process hangs, then dies.

For each policy: 8 servers and 4 users (the tests' net-8x4 scenario: google_2011 8x4
seed 3, tasks 3x) in 6 processes with keys (mutual TLS); once allocation is under way a
server process that does not host drf's central scheduler is stopped (SIGSTOP: what it
was sent never starts) for ``--freeze`` seconds and then killed (SIGKILL). Prints how
each run ended. A run must end for the right reason: saturated (probes: or stranded, its
end by construction, thesis 4.2), no invariant violation, and every task accepted on the
dead servers and never started counted lost by its user (task_lost == lost on dead).

    python bench/kill_survey.py [--freeze 1.5] [--policies drf,dgdrf,...]

Output recorded in bench/results/kill-survey.txt; what it showed: docs/notes/2026-11-26-kill-survey.md.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import tempfile
import time
import urllib.request
from pathlib import Path

from dgdrf.cluster.keys import Credentials
from dgdrf.cluster.launcher import Cluster
from dgdrf.model.generators import google_2011_scenario
from dgdrf.model.scenario import build_scenario
from dgdrf.policies import POLICIES


def _url(cluster: Cluster, name: str) -> str:
    return re.search(r'"url": "([^"]+)"', (cluster.logs / f"{name}.log").read_text()).group(1)


def one(path: Path, scheduler: str, policy: str, freeze: float) -> dict:
    warm = [] if not POLICIES[policy].distributed else ["--warmup", "2"]
    cluster = Cluster(["--scenario", str(path), "--policy", policy, "--tick", "0.05", *warm], 8, 4, processes=6, verbose=True)
    out = cluster.logs / "result.json"
    t0 = time.monotonic()
    try:
        cluster.start(out)
        while '"started"' not in (cluster.logs / "collector.log").read_text(errors="replace"):
            time.sleep(0.1)
        time.sleep(4.0 if POLICIES[policy].distributed else 1.3)  # allocation under way
        ctx = Credentials.from_dir(cluster.keys, "admin").client_context()
        directory = json.loads(urllib.request.urlopen(_url(cluster, "bootstrap") + "/cluster", context=ctx, timeout=30).read())["directory"]
        victim = next(n for n in sorted(cluster.procs) if n.startswith("server-") and _url(cluster, n) != directory[scheduler])
        cluster.procs[victim].send_signal(signal.SIGSTOP)
        time.sleep(freeze)
        cluster.procs[victim].send_signal(signal.SIGKILL)
        code = cluster.wait_collector(300)
        r = json.loads(out.read_text())
    finally:
        cluster.stop()
    return {"policy": policy, "victim": victim, "exit": code, "stop": r["stop_reason"], "allocations": r["allocations"],
            "task_lost": r["events"].get("task_lost", 0), "lost_on_dead": r["tasks_lost_on_dead_servers"], "members_down": r["members_down"],
            "violations": len(r["invariant_violations"]), "handler_errors": r["handler_errors"], "wall_s": round(time.monotonic() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--freeze", type=float, default=1.5, help="seconds the victim hangs before it dies")
    ap.add_argument("--policies", default=",".join(POLICIES))
    args = ap.parse_args()
    base = google_2011_scenario(8, 4, 3)
    sc = build_scenario(base.resources, list(base.servers), [(u.id, [3 * x for x in u.demand]) for u in base.users], name="net-8x4")
    path = Path(tempfile.mkdtemp(prefix="kill-survey-")) / "net-8x4.json"
    sc.write_json(path)
    print(f"# bench/kill_survey.py --freeze {args.freeze}: 8 servers in 4 processes, 4 users in 2; one server process hangs then dies")
    print(f"{'policy':14s} {'victim':9s} exit {'stop':10s} alloc task_lost lost_on_dead down         viol herr  wall_s")
    for policy in args.policies.split(","):
        r = one(path, sc.servers[0].id, policy, args.freeze)
        print(f"{r['policy']:14s} {r['victim']:9s} {r['exit']!s:4s} {r['stop']:10s} {r['allocations']:5d} {r['task_lost']:9d} {r['lost_on_dead']:12d} {json.dumps(r['members_down']):12s} {r['violations']:4d} {r['handler_errors']:4d} {r['wall_s']:7.1f}", flush=True)


if __name__ == "__main__":
    main()
