"""Runtime benchmark: messages per wall second of the actor runtime in virtual time.

N actors play a random "hot potato": each starts ``fanout`` potatoes; an actor that
receives a potato passes it to a random other actor. Every message is a msgpack-encoded
frame with a random latency (uniform 1-5 ms), delivered through the same LocalTransport
and VirtualClock that emulations use. Run: ``dgdrf bench runtime`` (figures in
bench/results/runtime.json).
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass

import numpy as np

from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.messages import message
from dgdrf.runtime.transport import LocalTransport


@message(250)
class Potato:
    """A benchmark frame: a hop counter and the address of its originator."""

    hops: int
    origin: str


class PotatoActor(Actor):
    """Passes every potato to a random peer (peers drawn from its own generator in blocks)."""

    def __init__(self, address: str, peers: list[str], fanout: int) -> None:
        super().__init__(address)
        self.peers = peers
        self.fanout = fanout
        self._picks: list[int] = []
        self.received = 0

    def _next_peer(self) -> str:
        if not self._picks:
            self._picks = self.rng.integers(0, len(self.peers), 64).tolist()
        return self.peers[self._picks.pop()]

    def on_start(self) -> None:
        for _ in range(self.fanout):
            self.send(self._next_peer(), Potato(0, self.address))

    def on_Potato(self, src: str, msg: Potato) -> None:
        self.received += 1
        self.send(self._next_peer(), Potato(msg.hops + 1, msg.origin))


@dataclass
class RuntimeBenchResult:
    actors: int
    messages: int
    bytes: int
    wall_s: float
    virtual_s: float
    messages_per_s: float


def run_runtime_bench(actors: int, messages: int, fanout: int = 4, seed: int = 1) -> RuntimeBenchResult:
    """Run until about ``messages`` messages were delivered; return the throughput."""
    rng = np.random.default_rng(seed)
    clock = VirtualClock()
    transport = LocalTransport(clock, rng)
    names = [f"a{i}" for i in range(actors)]
    for name in names:
        transport.register(PotatoActor(name, names, fanout))
    transport.start_all()
    # Stop once the target count is reached: check every 10 virtual ms.
    def check() -> None:
        if transport.stats.count[Potato.TAG] >= messages:
            clock.stop()
        else:
            clock.call_later(0.01, check)

    clock.call_later(0.01, check)
    t0 = time.perf_counter()
    clock.run()
    wall = time.perf_counter() - t0
    sent, nbytes = transport.stats.totals()
    return RuntimeBenchResult(actors, sent, nbytes, wall, clock.now(), sent / wall)


def machine_info() -> dict:
    import os

    return {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}


def bench_runtime_command(actor_counts: list[int], messages: int, fanout: int, repeat: int, out) -> int:
    """``dgdrf bench runtime``: median of ``repeat`` runs per actor count, as a table and JSON."""
    import json
    import statistics
    from datetime import datetime, timezone

    from rich.console import Console
    from rich.table import Table

    rows = []
    for n in actor_counts:
        runs = [run_runtime_bench(n, messages, fanout=fanout, seed=1 + i) for i in range(repeat)]
        rates = [r.messages_per_s for r in runs]
        rows.append(
            {
                "actors": n,
                "fanout": fanout,
                "messages": runs[0].messages,
                "bytes_per_message": runs[0].bytes / runs[0].messages,
                "messages_per_s_median": statistics.median(rates),
                "messages_per_s_all": rates,
                "wall_s_all": [r.wall_s for r in runs],
            }
        )
    table = Table(title=f"runtime: msgpack messages per wall second, virtual time, latency uniform 1-5 ms (median of {repeat})")
    for col in ("actors", "in flight", "messages", "bytes/msg", "msg/s (median)", "msg/s (all)"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["actors"]), str(r["actors"] * fanout), str(r["messages"]), f"{r['bytes_per_message']:.1f}", f"{r['messages_per_s_median']:,.0f}", ", ".join(f"{x:,.0f}" for x in r["messages_per_s_all"]))
    Console().print(table)
    if out:
        doc = {"benchmark": "runtime", "command": f"dgdrf bench runtime --actors {','.join(map(str, actor_counts))} --messages {messages} --fanout {fanout} --repeat {repeat}", "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine_info(), "results": rows}
        out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0
