"""ORACLES.md example 12 under dgdrf on a real cluster (12 processes on loopback, mutual
TLS), run several times: how many whole instances of u2's job of two parts each run
places, and the gang protocol's messages. Emulation gives u2 5 (tests/test_gangs.py);
on the wall clock the count varies, and a run can end with u2 at 0
(docs/notes/2026-11-29-gangs-every-policy.md). ``--late`` makes u1-job2 and u3, the users
competing for u2's classes, arrive 1 s after allocation starts.

    python bench/cluster_example12_gangs.py [--runs 10] [--late] > bench/results/cluster-example12-gangs.txt
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from dgdrf.cluster.launcher import cluster_up
from dgdrf.config import load_scenario

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--late", action="store_true", help="u1-job2 and u3 arrive 1 s after allocation starts")
    args = ap.parse_args()
    scenario = ROOT / "configs" / "tahir-example12.toml"
    with tempfile.TemporaryDirectory() as tmp:
        if args.late:
            doc = load_scenario(scenario).to_dict()
            for user in doc["users"]:
                if user["id"] in ("u1-job2", "u3"):
                    user["jobs"] = [{"id": "job", "demand": user.pop("demand"), "requires": user.pop("requires"), "arrival": 1.0}]
            scenario = Path(tmp) / "example12-late.json"
            scenario.write_text(json.dumps(doc))
        print(f"# bench/cluster_example12_gangs.py --runs {args.runs}{' --late' if args.late else ''}: dgdrf, 4 servers, 5 users, 12 processes")
        counts = []
        for i in range(args.runs):
            code, result, _ = cluster_up(["--scenario", str(scenario), "--policy", "dgdrf", "--tick", "0.05"], 4, 5, None, 120)
            if result is None:
                print(f"run {i}: no result (exit {code})")
                continue
            gang = {k: v for k, v in sorted(result["messages"]["by_type"].items()) if k.startswith("Gang")}
            counts.append(result["instances"]["u2"]["job"])
            print(f"run {i}: {result['stop_reason']} at {result['runtime_s']:.1f} s, u2 {counts[-1]} whole instances, tasks {result['tasks']}, violations {len(result['invariant_violations'])}, {gang}", flush=True)
        print(f"u2's instances over {len(counts)} runs: {sorted(counts)}")


if __name__ == "__main__":
    main()
