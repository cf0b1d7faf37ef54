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
from typing import Any

import numpy as np

from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.messages import Message, message
from dgdrf.runtime.transport import LocalTransport


@message(250)
class Potato(Message):
    """A benchmark frame: a hop counter and the state of the potato's own random walk."""

    hops: int
    state: int


#: Numerical Recipes LCG constants: the walk's next state, cheap and deterministic.
_LCG_A, _LCG_C, _LCG_M = 1664525, 1013904223, 2**32


class PotatoActor(Actor):
    """Passes every potato to a pseudo-random peer.

    The next peer comes from an LCG whose state travels in the potato, so choosing it costs
    one multiplication: the benchmark measures the runtime (encode, schedule, deliver,
    decode, dispatch), not a random-number library. Starting states come from the actor's
    own seeded generator.
    """

    __slots__ = ("peers", "fanout")

    def __init__(self, address: str, peers: list[str], fanout: int) -> None:
        super().__init__(address)
        self.peers = peers
        self.fanout = fanout

    def on_start(self) -> None:
        for state in self.rng.integers(0, _LCG_M, self.fanout).tolist():
            self.send(self.peers[state % len(self.peers)], Potato(0, state))

    def on_Potato(self, src: str, msg: Potato) -> None:
        state = (msg.state * _LCG_A + _LCG_C) % _LCG_M
        self.send(self.peers[(state >> 8) % len(self.peers)], Potato(msg.hops + 1, state))


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


def run_asyncio_queue_baseline(actors: int, messages: int, fanout: int = 4, seed: int = 1) -> RuntimeBenchResult:
    """The design the runtime is compared with: one asyncio.Queue and one task per actor,
    one ``loop.call_later`` per message (real time, same latencies, same msgpack frames,
    same potato walk). Measured in the same run as :func:`run_runtime_bench`, so the two
    compare as a ratio on a noisy machine."""
    import asyncio

    from dgdrf.runtime.messages import decode, encode

    rng = np.random.default_rng(seed)
    names = [f"a{i}" for i in range(actors)]
    latencies = rng.uniform(0.001, 0.005, 1 << 16).tolist()
    counters = {"sent": 0, "bytes": 0, "lat": 0}

    async def main() -> float:
        loop = asyncio.get_running_loop()
        queues: dict[str, asyncio.Queue[bytes]] = {n: asyncio.Queue() for n in names}
        done = loop.create_future()

        def send(dst: str, msg: Potato) -> None:
            frame = encode(msg)
            counters["sent"] += 1
            counters["bytes"] += len(frame)
            counters["lat"] = (counters["lat"] + 1) & 0xFFFF
            loop.call_later(latencies[counters["lat"]], queues[dst].put_nowait, frame)
            if counters["sent"] >= messages and not done.done():
                done.set_result(None)

        async def actor(name: str, starts: list[int]) -> None:
            for state in starts:
                send(names[state % actors], Potato(0, state))
            q = queues[name]
            while True:
                msg: Any = decode(await q.get())  # a Potato
                state = (msg.state * _LCG_A + _LCG_C) % _LCG_M
                send(names[(state >> 8) % actors], Potato(msg.hops + 1, state))

        t0 = time.perf_counter()
        tasks = [asyncio.create_task(actor(n, rng.integers(0, _LCG_M, fanout).tolist())) for n in names]
        await done
        wall = time.perf_counter() - t0
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return wall

    wall = asyncio.run(main())
    return RuntimeBenchResult(actors, counters["sent"], counters["bytes"], wall, wall, counters["sent"] / wall)


def machine_info() -> dict:
    import os

    return {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}


def bench_runtime_command(actor_counts: list[int], messages: int, fanout: int, repeat: int, out, baseline: bool = True) -> int:
    """``dgdrf bench runtime``: median of ``repeat`` runs per actor count, as a table and
    JSON, with the asyncio.Queue-per-actor baseline measured alongside (ratio)."""
    import json
    import statistics
    from datetime import datetime, timezone

    from rich.console import Console
    from rich.table import Table

    rows: list[dict[str, Any]] = []
    for n in actor_counts:
        runs = [run_runtime_bench(n, messages, fanout=fanout, seed=1 + i) for i in range(repeat)]
        rates = [r.messages_per_s for r in runs]
        base = [run_asyncio_queue_baseline(n, messages, fanout=fanout, seed=1 + i).messages_per_s for i in range(repeat)] if baseline else []
        rows.append(
            {
                "actors": n,
                "fanout": fanout,
                "messages": runs[0].messages,
                "bytes_per_message": runs[0].bytes / runs[0].messages,
                "messages_per_s_median": statistics.median(rates),
                "messages_per_s_all": rates,
                "wall_s_all": [r.wall_s for r in runs],
                "asyncio_queue_baseline_per_s_median": statistics.median(base) if base else None,
                "asyncio_queue_baseline_per_s_all": base,
                "speedup_vs_baseline": statistics.median(rates) / statistics.median(base) if base else None,
            }
        )
    table = Table(title=f"runtime: msgpack messages per wall second, virtual time, latency uniform 1-5 ms (median of {repeat})")
    for col in ("actors", "in flight", "messages", "bytes/msg", "msg/s (median)", "asyncio.Queue baseline", "ratio"):
        table.add_column(col, justify="right")
    for r in rows:
        base = r["asyncio_queue_baseline_per_s_median"]
        table.add_row(str(r["actors"]), str(r["actors"] * fanout), str(r["messages"]), f"{r['bytes_per_message']:.1f}", f"{r['messages_per_s_median']:,.0f}", f"{base:,.0f}" if base else "-", f"{r['speedup_vs_baseline']:.2f}x" if base else "-")
    Console().print(table)
    if out:
        doc = {"benchmark": "runtime", "command": f"dgdrf bench runtime --actors {','.join(map(str, actor_counts))} --messages {messages} --fanout {fanout} --repeat {repeat}" + ("" if baseline else " --no-baseline"), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine_info(), "results": rows}
        out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0
