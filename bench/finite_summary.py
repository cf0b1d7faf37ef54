"""Every policy on a sweep of finite jobs, side by side: how each run ended, the jobs'
completion times, makespan and fairness against drf's, and what the emulator paid for
it: wall time per simulated hour and peak memory.

    python bench/finite_summary.py bench/results/google-finite-100x20 > bench/results/google-finite-100x20.txt

Reads the sweep's records (results.jsonl.gz, or an older sweep's results.jsonl: dgdrf
sweep). Per run: the simulated time is the run's virtual time at its end (warm-up and
run-time); wall time is the emulation's own (``result.wall_s``); peak memory is the
worker process's peak resident set, as the sweep records it. Fairness is Jain's index
over each user's (weighted) share averaged over the time it competed
(``jain_time_avg``). Ratios are to drf's run of the same seed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dgdrf.bench.report import POLICY_ORDER
from dgdrf.bench.staleness import is_stale
from dgdrf.bench.store import iter_records

ORDER = POLICY_ORDER


def _ratio(x: float | None, base: float | None) -> str:
    return "-" if x is None or not base else f"{x / base:.2f}"


def summarise(directory: Path) -> list[str]:
    records = list(iter_records(directory))
    runs = [r for r in records if r.get("status") == "ok" and not is_stale(r)]
    if not runs:
        return [f"{directory}: no current records"]
    lines = [f"{directory}: {len(runs)} runs ({sum(1 for r in records if is_stale(r))} stale left out)"]
    for dataset in dict.fromkeys(r["params"]["dataset"] for r in runs):
        lines += [""] + _dataset([r for r in runs if r["params"]["dataset"] == dataset])
    return lines


def _dataset(runs: list[dict]) -> list[str]:
    by = {(r["params"]["seed"], r["params"]["policy"]): r for r in runs}
    first = runs[0]["result"]
    lines = [f"{first['scenario']}: {first['servers']} servers, {first['users']} users, {first['allocations']:,} tasks", ""]
    head = f"{'policy':14s} {'seed':>4s} {'end':>8s} {'tasks':>6s} {'makespan s':>10s} {'sim h':>6s} {'wall s':>7s} {'wall s/sim h':>12s} {'peak MB':>7s} {'JCT mean':>8s} {'JCT p95':>8s} {'Jain':>6s} | {'mean/drf':>8s} {'p95/drf':>8s} {'mksp/drf':>8s} {'Jain/drf':>8s}"
    lines.append(head)
    lines.append("-" * len(head))
    for seed in sorted({s for s, _ in by}):
        base = by.get((seed, "drf"), {}).get("result")
        for policy in sorted({p for s, p in by if s == seed}, key=lambda p: (ORDER.index(p) if p in ORDER else 99, p)):
            rec = by[(seed, policy)]
            res = rec["result"]
            sim_h = (res["warmup_s"] + res["runtime_s"]) / 3600.0
            jct = res.get("jct_s") or {}
            mean, p95 = jct.get("mean"), jct.get("p95")
            mk, jain = res.get("makespan"), res.get("jain_time_avg")
            bj = (base or {}).get("jct_s") or {}
            cells = [
                f"{policy:14s}", f"{seed:4d}", f"{res['stop_reason']:>8s}", f"{res['allocations']:6d}", f"{mk:10.0f}" if mk is not None else f"{'-':>10s}",
                f"{sim_h:6.2f}", f"{res['wall_s']:7.1f}", f"{res['wall_s'] / sim_h:12.1f}", f"{rec.get('peak_rss_mb') or 0:7.0f}",
                f"{mean:8.0f}" if mean is not None else f"{'-':>8s}", f"{p95:8.0f}" if p95 is not None else f"{'-':>8s}", f"{jain:6.3f}" if jain is not None else f"{'-':>6s}",
            ]
            ratios = [_ratio(mean, bj.get("mean")), _ratio(p95, bj.get("p95")), _ratio(mk, (base or {}).get("makespan")), _ratio(jain, (base or {}).get("jain_time_avg"))]
            lines.append(" ".join(cells) + " | " + " ".join(f"{x:>8s}" for x in ratios))
            if res["invariant_violations"]:
                lines.append(f"    {len(res['invariant_violations'])} invariant violations, first: {res['invariant_violations'][0]}")
            if res.get("unfinished_tasks"):
                lines.append(f"    unfinished tasks: {res['unfinished_tasks']}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="finite_summary.py", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("directory", type=Path, help="a sweep's results directory (results.jsonl.gz)")
    args = ap.parse_args(argv)
    print("\n".join(summarise(args.directory)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
