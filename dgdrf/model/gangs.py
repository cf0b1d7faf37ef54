"""Jobs whose tasks run together: an *instance* of a job of parts is ``count`` tasks of
every part, placed all at once or not at all (Tahir et al. §II-A: a complex job needs
tasks on several machine classes at once; gang scheduling of a job's workers).

Where an instance goes is decided here, in one place, for the scenario's check (does an
instance fit the empty cluster?), the central scheduler's ledger and the Collector's:
first fit, task by task, parts in the job's order and servers in the given order (natural
id order: "first fit" as the thesis's 4.1 has it), each task against the room the tasks
before it left. First fit is a heuristic: deciding whether a set of vectors packs onto
servers is vector bin packing, and first fit can miss a packing that exists (an instance
it refuses may fit another way). Every part must go where its own constraint admits it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dgdrf.model.resources import FIT_TOLERANCE, natural_key

if TYPE_CHECKING:
    from dgdrf.model.constraints import Scalar
    from dgdrf.model.workload import Part


@dataclass(frozen=True)
class PartSlots:
    """One part of an instance as the packer sees it: its demand, how many tasks, and
    which servers (a boolean mask over the servers) its constraint admits."""

    demand: np.ndarray
    count: int
    admits: np.ndarray


def pack(free: np.ndarray, capacity: np.ndarray, order: Sequence[int] | np.ndarray, parts: Sequence[PartSlots]) -> list[int] | None:
    """One server index per task of the instance (parts in order, each part's ``count``
    tasks in a row), by first fit over ``order`` against ``free`` (servers x resources)
    with the fit tolerance of a single task (model/resources.py); None when some task
    finds no server. ``free`` is not changed."""
    room = np.array(free, dtype=np.float64, copy=True)
    slack = FIT_TOLERANCE * np.maximum(np.asarray(capacity, dtype=np.float64), 1.0)
    order = np.asarray(order, dtype=np.int64)
    slots: list[int] = []
    for part in parts:
        demand = np.asarray(part.demand, dtype=np.float64)
        candidates = order[np.asarray(part.admits, dtype=bool)[order]] if len(order) else order
        for _ in range(part.count):
            fits = np.all(demand <= room[candidates] + slack[candidates], axis=1) if len(candidates) else np.zeros(0, dtype=bool)
            if not fits.any():
                return None
            server = int(candidates[int(np.argmax(fits))])
            room[server] -= demand
            slots.append(server)
    return slots


def packs_on(parts: Sequence[Part], servers: Sequence[tuple[str, Sequence[float], Mapping[str, Scalar]]]) -> bool:
    """Whether one instance of ``parts`` fits ``servers`` ((id, capacity, attributes) of
    each) when they are empty, by first fit in natural id order: what the scenario checks
    of every job of parts on load, and what a member checks again once servers have left
    (model/fleet.py, the Collector)."""
    if not servers:
        return False
    ordered = sorted(servers, key=lambda s: natural_key(s[0]))
    cap = np.array([c for _, c, _ in ordered], dtype=np.float64)
    slots = [PartSlots(np.asarray(p.demand, dtype=np.float64), p.count, np.array([p.constraint.admits(i, a) for i, _, a in ordered], dtype=bool)) for p in parts]
    return pack(cap, cap, np.arange(len(ordered)), slots) is not None


#: a bound on the instances :func:`instances_alone` counts (an instance of tiny demands on
#: a large cluster; it only weighs a share)
MAX_INSTANCES_ALONE = 100_000


def instances_alone(parts: Sequence[PartSlots], capacity: np.ndarray, order: Sequence[int] | np.ndarray) -> int:
    """How many instances of ``parts`` fit the empty servers of ``capacity`` together, each
    placed by first fit over ``order`` beside those before it: the whole-instance count a
    user runs with the cluster to itself (TSF's h_i and CDRF's M_i of a job of parts,
    model/notions.py). 0 for parts that demand nothing."""
    if not parts or all(not np.any(np.asarray(p.demand) > 0) for p in parts):
        return 0
    room = np.array(capacity, dtype=np.float64, copy=True)
    demands = [np.asarray(p.demand, dtype=np.float64) for p in parts for _ in range(p.count)]
    n = 0
    while n < MAX_INSTANCES_ALONE:
        slots = pack(room, capacity, order, parts)
        if slots is None:
            break
        for server, demand in zip(slots, demands, strict=True):
            room[server] -= demand
        n += 1
    return n
