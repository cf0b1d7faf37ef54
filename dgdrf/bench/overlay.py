"""Overlay benchmarks: the protocols as real actors exchanging encoded messages.

- Cyclon with N = 10,000 and 50,000 nodes, c = 50, l = 8, 100 cycles: the configuration
  of a public PeerSim Cyclon experiment (PeerSim is a Java cycle-driven simulator, the
  figure to beat).
- Push-sum on 100,000 nodes for 30 cycles (over Cyclon with c = 10, l = 5 running
  alongside, as in every dgdrf run).

Wall time counts only the protocol (the virtual-time loop); measuring is done once at
the end and timed separately. Run: ``dgdrf bench overlay --json bench/results/overlay.json``.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dgdrf.bench.runtime import machine_info
from dgdrf.overlay_run import OverlayConfig, run_overlay

DEFAULT_CASES = (
    OverlayConfig(protocol="cyclon", nodes=10_000, cycles=100, cyclon_view=50, cyclon_shuffle=8, metrics_every=100),
    OverlayConfig(protocol="cyclon", nodes=50_000, cycles=100, cyclon_view=50, cyclon_shuffle=8, metrics_every=100),
    OverlayConfig(protocol="pushsum", nodes=100_000, cycles=30, metrics_every=30),
)


def bench_overlay_command(out: Path | None, scale: float = 1.0) -> int:
    """Run the default cases (node counts times ``scale``), print a table, write JSON."""
    rows = []
    for case in DEFAULT_CASES:
        cfg = OverlayConfig(**{**case.__dict__, "nodes": max(100, int(case.nodes * scale))})
        doc = run_overlay(cfg).to_dict()
        doc.pop("per_cycle")
        rows.append(doc)
        Console().print(f"{cfg.protocol} {cfg.nodes} nodes x {cfg.cycles} cycles: {doc['wall_s']:.1f} s")
    table = Table(title="overlay protocols as actors, virtual time, latency 1-5 ms")
    for col in ("protocol", "nodes", "c / l", "cycles", "wall s", "node-cycles/s", "messages/s", "result"):
        table.add_column(col, justify="right")
    for d in rows:
        cfg = d["config"]
        result = f"in-degree {d['indegree_mean']:.1f} ± {d['indegree_std']:.2f}" if d["protocol"] == "cyclon" else f"max rel. error {d['max_relative_error']:.2g}" if d.get("max_relative_error") is not None else "no estimate everywhere"
        table.add_row(d["protocol"], f"{cfg['nodes']:,}", f"{cfg['view_size']} / {cfg['shuffle_length']}", str(cfg["cycles"]), f"{d['wall_s']:.1f}", f"{d['node_cycles_per_s']:,.0f}", f"{d['messages_per_s']:,.0f}", result)
    Console().print(table)
    if out is not None:
        out.write_text(json.dumps({"benchmark": "overlay", "command": "dgdrf bench overlay" + (f" --scale {scale}" if scale != 1.0 else ""), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine_info(), "results": rows}, indent=1) + "\n")
    return 0
