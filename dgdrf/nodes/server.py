"""The Server actor (a resource node, thesis 3.1).

It owns a capacity vector c_l and the tasks running on it, starts a task when told to
(Allocate) only if it fits (eq. 3.2), and hosts the policy's roles (a scheduler, later
peer sampling, gradient and push-sum), calling their ``on_tick`` every allocation tick
(thesis 1.5.8, default 100 ms).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dgdrf.model.resources import fits
from dgdrf.nodes.protocol import Allocate, AllocateRejected, TaskAllocated
from dgdrf.runtime.actor import Actor


class Server(Actor):
    """A resource node with capacity, running tasks and policy roles."""

    def __init__(self, address: str, capacity: Sequence[float], tick: float = 0.1) -> None:
        super().__init__(address)
        self.capacity = np.asarray(capacity, dtype=np.float64)
        self.used = np.zeros_like(self.capacity)
        self.tick = tick
        self.running: dict[tuple[str, int], np.ndarray] = {}

    @property
    def free(self) -> np.ndarray:
        return self.capacity - self.used

    def on_start(self) -> None:
        if any(hasattr(role, "on_tick") for role in self.roles):
            self.every(self.tick, self._on_tick)

    def _on_tick(self) -> None:
        for role in self.roles:
            tick = getattr(role, "on_tick", None)
            if tick is not None:
                tick()

    def on_Allocate(self, src: str, msg: Allocate) -> None:
        key = (msg.user, msg.task_id)
        demand = np.asarray(msg.demand, dtype=np.float64)
        if key in self.running or demand.shape != self.capacity.shape or not fits(demand, self.free, self.capacity):
            self.report("rejected", user=msg.user, task_id=msg.task_id, duplicate=key in self.running)
            self.send(src, AllocateRejected(msg.user, msg.task_id))
            return
        self.used += demand
        self.running[key] = demand
        self.report("allocated", user=msg.user, task_id=msg.task_id, demand=msg.demand)
        self.send(msg.user, TaskAllocated(msg.task_id, self.address, msg.dominant_share))
