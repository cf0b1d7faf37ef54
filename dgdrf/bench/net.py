"""Network transport benchmark: messages per second between two processes on loopback.

A source actor in this process sends ``messages`` small frames (a Potato: two integers,
about 9 bytes, like the protocols' smallest messages) to a sink actor in a child
process, through :class:`~dgdrf.runtime.net.NetTransport` over one WebSocket; the sink
answers when it has counted them all. The source sends in windows of ``window`` messages
and yields to the loop between windows, as actors do between handlers. Measured with
batching (everything queued while the loop was busy leaves as one frame) and without
(one frame per message). Run: ``dgdrf bench net`` (figures in bench/results/net.json).
"""

from __future__ import annotations

import asyncio
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dgdrf.bench.runtime import Potato
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import AsyncioClock
from dgdrf.runtime.net import NetTransport


class _Sink(Actor):
    def __init__(self, expected: int) -> None:
        super().__init__("sink")
        self.expected, self.count = expected, 0

    def on_Potato(self, src: str, msg: Potato) -> None:
        self.count += 1
        if self.count == self.expected:
            self.send(src, Potato(self.count, 0))
            self.count = 0


class _Source(Actor):
    def __init__(self) -> None:
        super().__init__("source")
        self.done = asyncio.Event()

    def on_Potato(self, src: str, msg: Potato) -> None:
        self.done.set()


async def _serve_sink(port: int, peer: str, expected: int, batching: bool) -> None:
    t = NetTransport(f"http://127.0.0.1:{port}", AsyncioClock(), batching=batching)
    t.register(_Sink(expected))
    t.set_directory({"source": peer})
    await t.start("127.0.0.1", port)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes stdin
    await t.close()


async def _measure(messages: int, window: int, batching: bool) -> dict[str, Any]:
    from dgdrf.cluster.launcher import free_port

    mine, theirs = free_port(), free_port()
    me, sink_url = f"http://127.0.0.1:{mine}", f"http://127.0.0.1:{theirs}"
    child = subprocess.Popen(
        [sys.executable, "-c", f"import asyncio, dgdrf.bench.net as n; asyncio.run(n._serve_sink({theirs}, {me!r}, {messages}, {batching}))"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        t = NetTransport(me, AsyncioClock(), batching=batching)
        src = _Source()
        t.register(src)
        t.set_directory({"sink": sink_url})
        await t.start("127.0.0.1", mine)
        # warm the connection up with one round trip of a full window
        t0 = time.perf_counter()
        sent = 0
        while sent < messages:
            for i in range(min(window, messages - sent)):
                src.send("sink", Potato(sent + i, 0))
            sent += min(window, messages - sent)
            await asyncio.sleep(0)
            peer = t.peers.get(sink_url)
            while peer is not None and len(peer.outbox) > 4 * window:  # do not outrun the socket
                await asyncio.sleep(0.001)
        await asyncio.wait_for(src.done.wait(), timeout=600)
        wall = time.perf_counter() - t0
        await t.close()
    finally:
        if child.stdin:
            child.stdin.close()
        child.wait(10)
    return {"batching": batching, "messages": messages, "window": window, "wall_s": wall, "messages_per_s": messages / wall}


def bench_net(messages: int = 200_000, window: int = 1000, repeat: int = 3) -> dict[str, Any]:
    """Median messages/s with and without batching, ``repeat`` measurements each."""
    rows = []
    for batching in (True, False):
        n = messages if batching else max(messages // 4, window)  # unbatched is several times slower
        runs = [asyncio.run(_measure(n, window, batching)) for _ in range(repeat)]
        rates = sorted(r["messages_per_s"] for r in runs)
        rows.append({"batching": batching, "messages": n, "window": window, "median_messages_per_s": rates[len(rates) // 2], "runs": runs})
    return {
        "benchmark": "net",
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "date": time.strftime("%Y-%m-%d"),
        "results": rows,
        "batching_speedup": rows[0]["median_messages_per_s"] / rows[1]["median_messages_per_s"],
    }


def bench_net_command(messages: int, window: int, repeat: int, json_out: Path | None) -> int:
    doc = bench_net(messages, window, repeat)
    for row in doc["results"]:
        print(f"batching {'on ' if row['batching'] else 'off'}: {row['median_messages_per_s']:>10,.0f} messages/s (median of {len(row['runs'])}, {row['messages']:,} messages each)")
    print(f"batching speed-up: {doc['batching_speedup']:.1f}x")
    if json_out is not None:
        json_out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0
