"""What a rerun changed: DGDRF's and PDGDRF's figures per neighbour count P with the current
code against the records it superseded (``stale.jsonl.gz``, or an older sweep's
``stale.jsonl``, moved aside by ``dgdrf sweep --prune-stale``), on the same seeds. The
source of the before/after tables in docs/notes/2026-11-25-thesis-100x20-rerun.md ("What
the gradient fix changed here") and docs/notes/2026-11-25-thesis-200x40-rerun.md; output
recorded in results/rerun-compare.txt:

    python bench/rerun_compare.py bench/results/thesis-grid-100x20 --before gradient-preference > bench/results/rerun-compare.txt
    python bench/rerun_compare.py bench/results/thesis-grid-200x40 --before protocol >> bench/results/rerun-compare.txt

``--before protocol``: the records made before the allocation protocol's revisions
(issue 15's fixes); ``gradient-preference``: made with the fixed protocol, before the
gradient's preference revision. Where several superseded records share a run (older
stamped-gradient revisions), the newest is taken. Medians over the seeds both have.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

from dgdrf.bench.staleness import is_stale
from dgdrf.bench.store import STALE_JSONL, iter_records, read_records

POLICIES = ("dgdrf", "pdgdrf")
GENERATIONS = {
    "protocol": lambda p: "protocol_revision" not in p,
    "gradient-preference": lambda p: "protocol_revision" in p and "gradient_preference_revision" not in p,
}


def _by_run(records: list[dict]) -> dict[tuple[str, int], dict[int, dict]]:
    """(policy, P) -> seed -> result, the newest stamped-gradient revision winning."""
    runs: dict[tuple[str, int], dict[int, tuple[int, dict]]] = defaultdict(dict)
    for r in records:
        p = r["params"]
        if p["policy"] in POLICIES and r.get("status") == "ok":
            rev = p.get("stamped_gradient_revision") or 0
            held = runs[(p["policy"], p["neighbors"])].get(p["seed"])
            if held is None or rev > held[0]:
                runs[(p["policy"], p["neighbors"])][p["seed"]] = (rev, r["result"])
    return {k: {s: res for s, (_, res) in v.items()} for k, v in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--before", choices=sorted(GENERATIONS), required=True)
    args = ap.parse_args()

    current = [r for r in read_records(args.results)[0] if not is_stale(r)]
    older = GENERATIONS[args.before]
    stale = [r for r in iter_records(args.results, STALE_JSONL) if older(r["params"])]
    drf = statistics.median(r["result"]["runtime_s"] for r in current if r["params"]["policy"] == "drf")
    now, then = _by_run(current), _by_run(stale)
    ps = sorted({p for _, p in now})

    def cell(runs: dict, key: tuple[str, int], seeds: set[int], fmt) -> str:
        got = [runs[key][s] for s in seeds if s in runs.get(key, {})]
        if not got:
            return "-"
        stalled = any(g["stop_reason"] != "saturated" for g in got)
        return fmt(got) + (" (stalled)" if stalled else "")

    def med(field: str, got: list[dict]) -> float:
        return statistics.median(g[field] for g in got)

    rows = {
        "run-time / DRF's": lambda g: f"{med('runtime_s', g) / drf:.1f}x",
        "run-time (s)": lambda g: f"{med('runtime_s', g):,.0f}",
        "errors": lambda g: f"{100 * med('error_ratio', g):.2f} %",
    }
    print(f"{args.results.name}: now against before ({args.before}); DRF {drf:,.0f} s; medians over the seeds both have")
    print("| P | " + " | ".join(map(str, ps)) + " |")
    print("|---|" + "---:|" * len(ps))
    for pol in POLICIES:
        for name, fmt in rows.items():
            for label, runs in (("now", now), ("before", then)):
                cells = [cell(runs, (pol, p), set(now.get((pol, p), {})), fmt) for p in ps]
                print(f"| {pol} {name}, {label} | " + " | ".join(cells) + " |")
    seeds = {p: sorted(set(now.get(("dgdrf", p), {})) & set(now.get(("pdgdrf", p), {}))) for p in ps}
    ratio = [f"{med('runtime_s', [now[('pdgdrf', p)][s] for s in seeds[p]]) / med('runtime_s', [now[('dgdrf', p)][s] for s in seeds[p]]):.2f}" if seeds[p] else "-" for p in ps]
    print("| pdgdrf / dgdrf run-time, now | " + " | ".join(ratio) + " |")
    print()


if __name__ == "__main__":
    main()
