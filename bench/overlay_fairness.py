"""Issue 35's acceptance sweep, summarised: every distributed policy next to the
centralized policy of its notion, by neighbour count, loss and churn.

    python bench/overlay_fairness.py bench/results/overlay-fairness-40x8 > bench/results/overlay-fairness-40x8.txt

Reads the sweep's records (bench/overlay-fairness-40x8.toml) and prints:

- how every run ended (drained or saturated; anything else, or a failed run, is listed:
  a run that stalls is a bug, not a data point);
- per (loss, churn), per policy and neighbour count, over the seeds present: the error
  ratio on the policy's own notion (mean, and the range), JCT mean and p95, makespan,
  messages per task and the minimum of the users' time-averaged shares, each distributed
  policy's JCT as a ratio to its reference's (the centralized policy of its notion: drf
  for probes, ddrf, dgdrf and pdgdrf; tsf for dg-tsf and pdg-tsf; psdsf for d-psdsf) in
  the same seed, loss and churn; and sharing incentive over time
  (model/sharing_over_time.py): the largest fraction of a user's active time spent below
  its guarantee (waiting while holding less than its slice), and the largest part of a
  user's guaranteed resource-time it did not get, each averaged over the seeds;
- which runs of the grid are not there yet (the sweep resumes where it stopped).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from dgdrf.bench.grid import load_sweep, uses_neighbors
from dgdrf.bench.staleness import is_stale
from dgdrf.bench.store import read_records
from dgdrf.model.notions import notion
from dgdrf.policies import POLICIES

ROOT = Path(__file__).resolve().parent.parent
SWEEP = ROOT / "bench" / "overlay-fairness-40x8.toml"
ENDS = ("drained", "saturated")


def reference(policy: str) -> str:
    """The centralized policy whose allocations are the policy's notion's reference."""
    return notion(POLICIES[policy].notion_name).reference


def _fmt_range(values: list[float]) -> str:
    if not values:
        return "-"
    lo, hi, mean = min(values), max(values), float(np.mean(values))
    return f"{mean:6.2%} ({lo:.2%}-{hi:.2%})" if hi > lo else f"{mean:6.2%}"


def main(out: Path) -> None:
    records, torn = read_records(out)
    spec = load_sweep(SWEEP)
    grid = {r.key: r for r in spec.runs()}
    current = [r for r in records if r["key"] in grid and not is_stale(r)]
    stale = sum(1 for r in records if r["key"] in grid and is_stale(r))
    ok = [r for r in current if r["status"] == "ok"]
    failed = [r for r in current if r["status"] != "ok"]
    print(f"{spec.name}: {len(grid)} runs in the grid ({', '.join(ds.label for ds in spec.datasets)}; seeds {spec.seeds}, "
          f"P {spec.neighbors}, loss {spec.params.get('loss')}, departures {spec.params.get('churn_departures')}); "
          f"{len(ok)} recorded, {len(failed)} failed, {stale} stale left out, {len(grid) - len(current)} not run yet" + (f", {torn} torn lines" if torn else ""))
    bad_ends = [r for r in ok if r["result"]["stop_reason"] not in ENDS or r["result"]["invariant_violations"]]
    print(f"every recorded run ended drained or saturated with no invariant violation: {'yes' if not bad_ends and not failed else 'NO'}")
    for r in bad_ends + failed:
        p = r["params"]
        print(f"  !! {p['policy']} P={p['neighbors']} seed={p['seed']} loss={p['loss']} departures={p['churn_departures']}: "
              f"{r['result']['stop_reason'] if r['status'] == 'ok' else r['status'] + ' ' + str(r.get('error'))[:120]}")

    # the reference of each (seed, loss, churn) for the JCT ratios
    ref_jct: dict[tuple, tuple[float, float]] = {}
    for r in ok:
        p, res = r["params"], r["result"]
        if not POLICIES[p["policy"]].distributed:
            ref_jct[(p["policy"], p["seed"], p["loss"], p["churn_departures"])] = (res["jct_s"]["mean"], res["jct_s"]["p95"])
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in ok:
        p = r["params"]
        groups[(p["loss"], p["churn_departures"], p["policy"], p["neighbors"] if uses_neighbors(p["policy"]) else 0)].append(r)
    order = {name: i for i, name in enumerate(spec.policies)}
    for loss in spec.params.get("loss", [0.0]):
        for churn in spec.params.get("churn_departures", [0]):
            print(f"\nloss {loss:.0%}, {churn} departures")
            head = (f"{'policy':13} {'P':>2} {'runs':>4} {'ends':18} {'errors (range over seeds)':28} {'JCT mean':>8} {'p95':>7} {'/ref':>5} {'p95/ref':>7} "
                    f"{'makespan':>8} {'msg/task':>8} {'min avg':>8} {'SI below':>8} {'short':>6}  reference")
            print(head)
            print("-" * len(head))
            keys = sorted((k for k in groups if k[0] == loss and k[1] == churn), key=lambda k: (order[k[2]], k[3]))
            for k in keys:
                rs = sorted(groups[k], key=lambda r: r["params"]["seed"])
                res = [r["result"] for r in rs]
                policy = k[2]
                ends = ", ".join(f"{e} {sum(1 for x in res if x['stop_reason'] == e)}" for e in sorted({x["stop_reason"] for x in res}))
                jm = float(np.mean([x["jct_s"]["mean"] for x in res]))
                jp = float(np.mean([x["jct_s"]["p95"] for x in res]))
                ratios_m, ratios_p = [], []
                ref = reference(policy)
                if POLICIES[policy].distributed:
                    for r in rs:
                        got = ref_jct.get((ref, r["params"]["seed"], loss, churn))
                        if got is not None:
                            ratios_m.append(r["result"]["jct_s"]["mean"] / got[0])
                            ratios_p.append(r["result"]["jct_s"]["p95"] / got[1])
                rm = f"{np.mean(ratios_m):5.2f}" if ratios_m else "    -"
                rp = f"{np.mean(ratios_p):7.2f}" if ratios_p else "      -"
                mk = float(np.mean([x["makespan"] for x in res]))
                mpt = float(np.mean([x["messages"]["total"] / max(x["allocations"], 1) for x in res]))
                mins = [x["min_time_avg_share"] for x in res if x.get("min_time_avg_share") is not None]
                mavg = f"{np.mean(mins):8.5f}" if mins else "       -"
                si = [x["sharing_over_time"] for x in res if x.get("sharing_over_time")]
                below = f"{np.mean([d['most_below'] for d in si]):8.2%}" if si else "       -"
                short = f"{np.mean([d['most_shortfall'] for d in si]):6.1%}" if si else "     -"
                print(f"{policy:13} {k[3] if k[3] else '':>2} {len(rs):>4} {ends:18} {_fmt_range([x['error_ratio'] for x in res]):28} {jm:8.1f} {jp:7.0f} {rm} {rp} "
                      f"{mk:8.0f} {mpt:8.0f} {mavg} {below} {short}  {ref if ref != policy else ''}")
    # the job whose first task waited longest, under each centralized reference (no loss,
    # no departures): README's account of why drf is slow on this workload
    print("\nthe three longest waits for a job's first task, no loss, no departures (s; the job's user, tasks and constraint)")
    scenario = spec.datasets[0].load()
    constraint = {(u.id, j.id): j.constraint for u in scenario.users for j in u.job_list}
    for r in sorted(ok, key=lambda r: (order[r["params"]["policy"]], r["params"]["seed"])):
        p = r["params"]
        if POLICIES[p["policy"]].distributed or p["loss"] or p["churn_departures"]:
            continue
        for j in sorted(r["result"]["jobs"], key=lambda j: j["arrival"] - j["first_start"])[:3]:
            req = dict(constraint[(j["user"], j["job"])].requires)
            print(f"  {p['policy']:6} seed {p['seed']}: {j['first_start'] - j['arrival']:8.1f}  {j['user']} {j['job']} ({j['tasks']} tasks, requires {req or 'nothing'})")
    missing = [r for key, r in grid.items() if key not in {x["key"] for x in current}]
    if missing:
        by: dict[str, int] = defaultdict(int)
        for r in missing:
            by[f"seed {r.params['seed']}"] += 1
        print(f"\nnot run yet: {len(missing)} ({', '.join(f'{k}: {v}' for k, v in sorted(by.items()))}); "
              f"resume with: dgdrf sweep {SWEEP.relative_to(ROOT)} --out {out}")
    sys.stdout.flush()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path, default=ROOT / "bench" / "results" / "overlay-fairness-40x8", help="the sweep's results directory")
    main(ap.parse_args().out)
