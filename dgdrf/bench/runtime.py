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
