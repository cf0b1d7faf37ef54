"""Finite jobs on a real loopback cluster whose processes are killed and joined mid-run.

For each policy: configs/google-finite-8x4.toml (8 servers, 4 users, an hour of
Google-like jobs, half of them constrained) at time scale 240, one process per node,
with keys (mutual TLS). Once the run is under way:

1. the process hosting s4 (the one server of class c3) is killed (SIGKILL): the jobs
   only it could run are given up by their users;
2. the process hosting u2 is killed: what u2 had not started is withdrawn, its tasks
   running run on;
3. a new ``dgdrf node --role server`` starts and joins the run: the bootstrap makes it
   a server of s4's kind (the earliest server down not yet replaced), so the jobs given
   up are taken up again and run there.

A run must end drained, with no invariant violation (no task run twice, none over
capacity, none on a server its constraint refuses, every task of every job still owed
run to completion once), no job given up at the end (the newcomer can run them all),
u2's jobs withdrawn, and every task lost with s4 run again.

    python bench/cluster_churn_survey.py [--policies drf,tsf,...] [--kill-server 1.5] [--kill-user 4] [--join 8]

Output recorded in bench/results/cluster-churn-survey.txt.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import time
import urllib.request
from pathlib import Path

from dgdrf.cluster.keys import Credentials, make_keys, node_names
from dgdrf.cluster.launcher import Cluster
from dgdrf.policies import POLICIES

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-finite-8x4.toml"
JOINER = "server-join-1"
DEFAULT_POLICIES = "drf,fifo,tsf,psdsf,probes,dgdrf,dg-tsf,d-psdsf"


def _url(cluster: Cluster, name: str) -> str | None:
    found = re.search(r'"url": "([^"]+)"', (cluster.logs / f"{name}.log").read_text(errors="replace"))
    return found.group(1) if found else None


def _directory(cluster: Cluster) -> dict[str, str]:
    ctx = Credentials.from_dir(cluster.keys, "admin").client_context()
    boot = _url(cluster, "bootstrap")
    assert boot is not None
    return json.loads(urllib.request.urlopen(boot + "/cluster", context=ctx, timeout=30).read())["directory"]


def _process_of(cluster: Cluster, actor: str) -> str:
    """The name of the process hosting ``actor``."""
    url = _directory(cluster)[actor]
    return next(name for name in cluster.procs if _url(cluster, name) == url)


def one(policy: str, kill_server: float, kill_user: float, join: float) -> dict:
    warm = ["--warmup", "2"] if POLICIES[policy].distributed else []
    cluster = Cluster(["--scenario", str(SCENARIO), "--policy", policy, "--time-scale", "240", "--tick", "0.05", *warm], 8, 4, verbose=True)
    make_keys(cluster.keys, node_names(8, 4) | {JOINER: "server"}, days=2)
    out = cluster.logs / "result.json"
    t0 = time.monotonic()
    events: list[str] = []
    try:
        boot = cluster.start(out)
        while '"started"' not in (cluster.logs / "collector.log").read_text(errors="replace"):
            time.sleep(0.1)
        started = time.monotonic()
        start = 2.0 if warm else 0.0  # allocation starts after the warm-up

        def at(seconds: float) -> None:
            time.sleep(max(0.0, started + start + seconds - time.monotonic()))

        at(kill_server)
        victim = _process_of(cluster, "s4")
        cluster.procs[victim].send_signal(signal.SIGKILL)
        events.append(f"{kill_server:g}s kill {victim} (s4)")
        at(kill_user)
        victim = _process_of(cluster, "u2")
        cluster.procs[victim].send_signal(signal.SIGKILL)
        events.append(f"{kill_user:g}s kill {victim} (u2)")
        at(join)
        cluster._spawn(JOINER, ["--role", "server", "--bootstrap", boot, "--listen", "127.0.0.1:0"])
        events.append(f"{join:g}s start {JOINER}")
        code = cluster.wait_collector(600)
        r = json.loads(out.read_text())
    finally:
        cluster.stop()
    withdrawn = r.get("withdrawn_jobs") or []
    return {
        "policy": policy, "exit": code, "stop": r["stop_reason"], "allocations": r["allocations"],
        "given_up": r["events"].get("given_up", 0), "resumed": r["events"].get("resumed", 0), "unrunnable": len(r.get("unrunnable_jobs") or []),
        "withdrawn": f"{len(withdrawn)}/{sum(j['tasks_left'] for j in withdrawn)}", "task_lost": r["events"].get("task_lost", 0),
        "down": r["members_down"], "up": r.get("members_up", 0), "violations": len(r["invariant_violations"]),
        "violation": (r["invariant_violations"] or [""])[0][:100], "wall_s": round(time.monotonic() - t0, 1), "events": events,
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policies", default=DEFAULT_POLICIES)
    ap.add_argument("--kill-server", type=float, default=1.5, help="seconds into allocation when the process of s4 is killed")
    ap.add_argument("--kill-user", type=float, default=4.0, help="... when the process of u2 is killed")
    ap.add_argument("--join", type=float, default=8.0, help="... when a new server process starts")
    args = ap.parse_args()
    print(f"# bench/cluster_churn_survey.py --kill-server {args.kill_server:g} --kill-user {args.kill_user:g} --join {args.join:g}: configs/google-finite-8x4.toml at time scale 240,")
    print("# one process per node, mutual TLS; s4's process killed, then u2's, then a new server process joins (of s4's kind)")
    print(f"{'policy':9s} exit {'stop':8s} alloc given_up resumed unrunnable withdrawn task_lost down                       up viol  wall_s")
    for policy in args.policies.split(","):
        r = one(policy, args.kill_server, args.kill_user, args.join)
        print(f"{r['policy']:9s} {r['exit']!s:4s} {r['stop']:8s} {r['allocations']:5d} {r['given_up']:8d} {r['resumed']:7d} {r['unrunnable']:10d} {r['withdrawn']:>9s} {r['task_lost']:9d} {json.dumps(r['down']):26s} {r['up']:2d} {r['violations']:4d} {r['wall_s']:7.1f}", flush=True)
        if r["violation"]:
            print(f"#   {r['violation']}")


if __name__ == "__main__":
    main()
