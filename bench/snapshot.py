"""A determinism snapshot: 26 overlay and emulation runs (Cyclon, push-sum, both gradient
overlays; every policy on a small generated cluster, with and without loss and
duplication; the gradient variants; dgdrf and pdgdrf on thesis-100x20 for 400 simulated
seconds) written as JSON without their wall times, one file a run. Two snapshots of two
versions of the code must be byte-identical when a change claims to change no result:

    git switch --detach BEFORE && python bench/snapshot.py /tmp/before
    git switch main            && python bench/snapshot.py /tmp/after
    diff -r /tmp/before /tmp/after && echo identical

(BEFORE: the commit before the change; rebuild the compiled core after switching:
``pip install -e .``). A few minutes on one core. ``overlay`` or ``run`` as a second
argument takes only that half. How issue 16's speed work was checked with it:
docs/notes/2026-11-26-determinism-snapshot.md.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.generators import google_2011_scenario
from dgdrf.config import load_scenario
from dgdrf.overlay_run import OverlayConfig, run_overlay

ROOT = Path(__file__).resolve().parents[1]
#: keys that differ between identical runs
WALL = ("wall_s", "start_wall_s", "metrics_wall_s", "node_cycles_per_s", "messages_per_s")
#: the thesis's policies, the snapshot's fixed set (a snapshot must compare with one
#: taken before a policy was added; the papers' own are checked by their fingerprints)
THESIS_POLICIES = ("drf", "drf-bestfit", "fifo", "probes", "ddrf-random", "ddrf-gradient", "dgdrf", "pdgdrf")


def strip(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in WALL}


def overlay_runs() -> list[tuple[str, OverlayConfig]]:
    return [
        ("ov-cyclon", OverlayConfig(protocol="cyclon", nodes=2000, cycles=30, cyclon_view=20, cyclon_shuffle=8, metrics_every=5)),
        ("ov-cyclon-loss", OverlayConfig(protocol="cyclon", nodes=500, cycles=30, loss=0.05)),
        ("ov-pushsum", OverlayConfig(protocol="pushsum", nodes=2000, cycles=30, metrics_every=5)),
        ("ov-grad-st", OverlayConfig(protocol="gradient", nodes=500, cycles=30, metrics_every=5)),
        ("ov-grad-tb", OverlayConfig(protocol="gradient", nodes=500, cycles=30, gradient="toolbox", metrics_every=5)),
    ]


def emulation_runs() -> list[tuple[str, object, RunConfig]]:
    s100 = load_scenario(ROOT / "configs" / "thesis-100x20.toml")
    g = google_2011_scenario(60, 15, 5)
    runs = []
    for pol in THESIS_POLICIES:
        runs.append((f"g-{pol}", g, RunConfig(policy=pol, seed=2, neighbors=3)))
        runs.append((f"g-{pol}-loss", g, RunConfig(policy=pol, seed=3, loss=0.03, duplicate=0.01)))
    runs.append(("g-pd-ps", g, RunConfig(policy="pdgdrf", seed=1, capacity_knowledge="pushsum", gini_neighbours="overlay")))
    runs.append(("g-dg-tb", g, RunConfig(policy="dgdrf", seed=1, gradient="toolbox", idle_gossip=False)))
    runs.append(("g-dg-mem", g, RunConfig(policy="dgdrf", seed=1, gradient_memory=5, gradient_period=0.3)))
    for pol in ("dgdrf", "pdgdrf"):
        runs.append((f"t-{pol}", s100, RunConfig(policy=pol, seed=1, neighbors=4, max_time=400)))
    return runs


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-") or (len(argv) > 1 and argv[1] not in ("all", "overlay", "run")):
        print(__doc__)
        return 2
    out = Path(argv[0])
    which = argv[1] if len(argv) > 1 else "all"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    if which in ("all", "overlay"):
        for name, cfg in overlay_runs():
            t = time.time()
            (out / f"{name}.json").write_text(json.dumps(strip(run_overlay(cfg).to_dict()), sort_keys=True, indent=0))
            print(name, round(time.time() - t, 2), flush=True)
    if which in ("all", "run"):
        for name, scenario, cfg in emulation_runs():
            t = time.time()
            r = run_emulation(scenario, cfg).to_dict()
            (out / f"{name}.json").write_text(json.dumps(strip(r), sort_keys=True, indent=0))
            print(name, round(time.time() - t, 2), r["stop_reason"], r["allocations"], flush=True)
    print("total", round(time.time() - t0, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
