"""Run recorded sweep runs again and check that the current code reproduces them: every
key of the result equal to the record's but the wall time (issue 16's acceptance: a
faster emulator must compute exactly what the slower one did). Prints one line per run
(recorded and current wall time, their ratio) and a summary; exit status 1 if any run
differs, naming the keys that do.

    python bench/reproduce.py bench/results/quick
    python bench/reproduce.py bench/results/thesis-grid-100x20 --policy dgdrf,pdgdrf --seed 1 --workers 2
    python bench/reproduce.py bench/results/thesis-grid-100x20 --sample 20 --json bench/results/reproduce-100x20.json

Runs are picked from ``DIR/results.jsonl.gz`` (records of the current code revisions only,
as the report takes them); ``--sample N`` takes N of them spread evenly over the
records sorted by recorded wall time (short and long runs alike). A run's data set is
rebuilt from its parameters: a generated Google-2011-like cluster, or the scenario file
the sweep's manifest (``DIR/sweep.json``) names for its label, whose digest must match.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

from dgdrf.bench.staleness import is_stale
from dgdrf.bench.grid import Dataset, run_parameters
from dgdrf.bench.store import read_records
from dgdrf.build_info import core
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.config import load_scenario

ROOT = Path(__file__).resolve().parents[1]
#: keys of a result that differ between identical runs
WALL_KEYS = ("wall_s",)


def _datasets(out: Path) -> dict[str, Path]:
    """Scenario files of a sweep directory's manifest, by data set label."""
    manifest = out / "sweep.json"
    if not manifest.exists():
        return {}
    doc = json.loads(manifest.read_text())
    paths = {}
    for ds in doc.get("datasets", []):
        if ds.get("path"):
            path = Path(ds["path"])
            paths[ds["dataset"]] = path if path.is_absolute() else (ROOT / path).resolve()
    return paths


def _dataset(params: dict[str, Any], paths: dict[str, Path]) -> Dataset:
    if "servers" in params and "users" in params:
        return Dataset(params["dataset"], servers=params["servers"], users=params["users"], data_seed=params["data_seed"])
    path = paths.get(params["dataset"])
    if path is None:
        raise SystemExit(f"reproduce: no scenario file for data set {params['dataset']!r} in the sweep manifest")
    return Dataset(params["dataset"], path=path, digest=params.get("scenario_digest", ""))


def _rerun(job: tuple[dict[str, Any], Dataset]) -> tuple[str, dict[str, Any], float]:
    params, ds = job
    scenario = ds.load() if ds.path is None else load_scenario(ds.path)
    extra = {k: v for k, v in params.items() if k in run_parameters()}
    config = RunConfig.from_settings(scenario.settings, policy=params["policy"], neighbors=params["neighbors"], seed=params["seed"], **extra)
    t0 = time.perf_counter()
    result = run_emulation(scenario, config).to_dict()
    return params["key"], result, time.perf_counter() - t0


#: keys a result gained after records were made: a measurement added (the audit of the
#: final allocation, issue 32), not a difference in what the run did; compared when the
#: record has them
ADDED_KEYS = ("audit",)


def _differences(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    keys = (set(recorded) | set(now)) - set(WALL_KEYS) - (set(ADDED_KEYS) - set(recorded))
    return sorted(k for k in keys if json.dumps(recorded.get(k), sort_keys=True) != json.dumps(now.get(k), sort_keys=True))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="a sweep's output directory (results.jsonl.gz, sweep.json)")
    ap.add_argument("--policy", help="only these policies (comma-separated)")
    ap.add_argument("--neighbors", help="only these neighbour counts (comma-separated)")
    ap.add_argument("--seed", help="only these run seeds (comma-separated)")
    ap.add_argument("--sample", type=int, help="at most N runs, spread over the recorded wall times")
    ap.add_argument("--workers", type=int, default=1, help="runs at once (default 1: the walls compare)")
    ap.add_argument("--json", type=Path, help="write every run's recorded and current wall time and verdict here")
    args = ap.parse_args(argv)

    records, _ = read_records(args.dir)
    chosen = [r for r in records if r.get("status") == "ok" and not is_stale(r)]
    for flag, key, cast in (("policy", "policy", str), ("neighbors", "neighbors", int), ("seed", "seed", int)):
        value = getattr(args, flag)
        if value:
            wanted = {cast(v) for v in value.split(",")}
            chosen = [r for r in chosen if r["params"].get(key) in wanted]
    chosen.sort(key=lambda r: r["wall_s"])
    if args.sample and len(chosen) > args.sample:
        step = (len(chosen) - 1) / max(1, args.sample - 1)
        chosen = [chosen[round(i * step)] for i in range(args.sample)]
    if not chosen:
        print("reproduce: no records match", file=sys.stderr)
        return 2
    paths = _datasets(args.dir)
    by_key = {r["key"]: r for r in chosen}
    jobs = [({**r["params"], "key": r["key"]}, _dataset(r["params"], paths)) for r in chosen]
    print(f"{len(jobs)} runs of {args.dir} ({core()} core, {args.workers} at once)")
    print(f"{'policy':<14}{'P':>3}{'seed':>5}{'recorded s':>12}{'now s':>9}{'speed-up':>10}  verdict")
    rows, differing = [], 0
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for key, result, wall in pool.imap_unordered(_rerun, jobs):
            rec = by_key[key]
            diff = _differences(rec["result"], result)
            differing += bool(diff)
            p = rec["params"]
            verdict = "identical" if not diff else "DIFFERS in " + ", ".join(diff)
            print(f"{p['policy']:<14}{p['neighbors']:>3}{p['seed']:>5}{rec['wall_s']:>12.1f}{wall:>9.1f}{rec['wall_s'] / wall:>9.2f}x  {verdict}", flush=True)
            rows.append({"key": key, "params": p, "recorded_wall_s": rec["wall_s"], "recorded_core": rec.get("core"), "wall_s": wall, "identical": not diff, "differs_in": diff})
    total_before = sum(r["recorded_wall_s"] for r in rows)
    total_now = sum(r["wall_s"] for r in rows)
    print(f"{len(rows) - differing} of {len(rows)} identical; run wall {total_before:,.0f} s recorded, {total_now:,.0f} s now ({total_before / total_now:.2f}x); {time.perf_counter() - t0:,.0f} s elapsed")
    if args.json:
        args.json.write_text(json.dumps({"dir": str(args.dir), "core": core(), "workers": args.workers, "runs": rows}, indent=1) + "\n")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
