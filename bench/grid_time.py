"""How long the full thesis grid takes on this machine, from what is recorded.

The thesis-100x20 half is measured in full. Of the thesis-200x40 half, the light
policies are measured in full and dgdrf/pdgdrf in part: their missing runs are projected
from the 100x20 runs with the same policy and neighbours, scaled by the median ratio of
the matched pairs recorded on both halves. Two figures come out: the grid's messages
divided by the bare runtime's delivery rate (bench/results/runtime.json: no policy or
overlay work at all, so a lower bound on any sweep of this grid with this runtime), and
the projected wall time at the rates the runs actually had.

    python bench/grid_time.py > bench/results/grid-time.txt
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from dgdrf.bench.staleness import is_stale
from dgdrf.bench.store import iter_records

RESULTS = Path(__file__).parent / "results"
GRADIENT = ("dgdrf", "pdgdrf")


def load(name: str) -> list[dict]:
    """One record per run, the one whose cost is best measured: a record with its CPU
    seconds (cpu_s), else one made by earlier code (dgdrf.bench.staleness.is_stale) in a
    session that did not share cores, before a current record without cpu_s whose
    session did (its wall time stretched; which records, and why the earlier code's cost
    stands for the run: docs/notes/2026-11-24-grid-time.md), else whatever there is."""
    ok = [r for r in iter_records(RESULTS / name) if r.get("status") == "ok"]  # a key's every record: the rank picks
    rank = lambda r: (r.get("cpu_s") is not None, is_stale(r))  # noqa: E731 - best last: it wins
    by_id = {run_id(r): r for r in sorted(ok, key=rank)}
    return list(by_id.values())


def run_id(r: dict) -> tuple:
    p = r["params"]
    return p["policy"], p["neighbors"], p["seed"]


def main() -> None:
    small, large = load("thesis-grid-100x20"), load("thesis-grid-200x40")
    runtime = json.loads((RESULTS / "runtime.json").read_text())  # the rate and the cores it was measured on
    ceiling, cores = runtime["results"][0]["messages_per_s_median"], runtime["machine"]["cpus"]
    by_id = {run_id(r): r for r in small}
    done = {run_id(r) for r in large}
    pairs = [(r, by_id[run_id(r)]) for r in large if r["params"]["policy"] in GRADIENT]
    k_msgs = statistics.median(a["result"]["messages"]["total"] / b["result"]["messages"]["total"] for a, b in pairs)
    missing = [r for r in small if r["params"]["policy"] in GRADIENT and run_id(r) not in done]

    def msgs(rs: list[dict]) -> float:
        return sum(r["result"]["messages"]["total"] for r in rs)

    def wall(rs: list[dict]) -> float:
        """Core-seconds: a run's CPU time where recorded (runs that shared a core have a
        stretched wall time), else its wall time."""
        return sum(r.get("cpu_s") or r["wall_s"] for r in rs)

    k_wall = statistics.median(wall([a]) / wall([b]) for a, b in pairs)

    m_small, w_small = msgs(small), wall(small)
    m_large = msgs(large) + k_msgs * msgs(missing)
    w_large = wall(large) + k_wall * wall(missing)
    stale = sum(is_stale(r) for r in small + large)
    if stale:
        print(f"({stale} of the runs below are costed from records of code changed since)")
    print(f"thesis-100x20: {len(small)} runs, {m_small / 1e6:,.0f} M messages, {w_small / 3600:.1f} core-h (measured)")
    print(
        f"thesis-200x40: {len(large)} runs measured, {len(missing)} projected from 100x20 "
        f"(x{k_msgs:.2f} messages, x{k_wall:.2f} wall, medians of {len(pairs)} matched pairs): "
        f"{m_large / 1e6:,.0f} M messages, {w_large / 3600:.1f} core-h "
        f"(the projected runs: {k_wall * wall(missing) / 3600:.1f} core-h)"
    )
    total_m, total_w = m_small + m_large, w_small + w_large
    print(f"full grid: {total_m / 1e6:,.0f} M messages")
    print(f"  at the bare runtime's {ceiling:,.0f} messages/s per core on {cores} cores: >= {total_m / ceiling / cores / 60:,.0f} min")
    print(f"  at the recorded runs' rates: {total_w / 3600:.1f} core-h, {total_w / cores / 3600:.1f} h on {cores} cores")


if __name__ == "__main__":
    main()
