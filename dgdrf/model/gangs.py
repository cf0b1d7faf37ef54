"""Jobs whose tasks run together: an *instance* of a job of parts is ``count`` tasks of
every part, placed all at once or not at all (Tahir et al. §II-A: a complex job needs
tasks on several machine classes at once; gang scheduling of a job's workers).

Where an instance goes is decided here, in one place, for the scenario's check (does an
instance fit the empty cluster?), the central scheduler's ledger and the Collector's:
first fit, task by task, parts in the job's order and servers in the given order (natural
id order: "first fit" as the thesis's 4.1 has it), each task against the room the tasks
before it left, and if that fails, with the most constrained part first (:func:`pack`).
First fit is a heuristic: deciding whether a set of vectors packs onto
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
    finds no server. ``free`` is not changed.

    The parts are placed in the job's order; if some task then finds no server, again
    with the most constrained part first (fewest servers admitted, then the largest
    demand over the capacity), as a part that may go anywhere can leave the few servers
    another part needs (first fit in one order misses packings that another finds)."""
    room = np.array(free, dtype=np.float64, copy=True)
    slack = FIT_TOLERANCE * np.maximum(np.asarray(capacity, dtype=np.float64), 1.0)
    order = np.asarray(order, dtype=np.int64)
    slots = _first_fit(room, slack, order, parts, range(len(parts)))
    if slots is None and len(parts) > 1:
        scale = np.maximum(np.max(np.asarray(capacity, dtype=np.float64), axis=0), 1e-300) if len(capacity) else None
        tight = sorted(range(len(parts)), key=lambda i: (int(np.count_nonzero(np.asarray(parts[i].admits, dtype=bool)[order])), -float(np.max(np.asarray(parts[i].demand) / scale)) if scale is not None else 0.0))
        if tight != list(range(len(parts))):
            slots = _first_fit(np.array(free, dtype=np.float64, copy=True), slack, order, parts, tight)
    return slots


def _first_fit(room: np.ndarray, slack: np.ndarray, order: np.ndarray, parts: Sequence[PartSlots], sequence: Sequence[int]) -> list[int] | None:
    """First fit of the parts in ``sequence``'s order, ``room`` taken as it goes; the
    servers returned one a task in the parts' own order."""
    at: dict[int, list[int]] = {}
    for i in sequence:
        part = parts[i]
        demand = np.asarray(part.demand, dtype=np.float64)
        candidates = order[np.asarray(part.admits, dtype=bool)[order]] if len(order) else order
        servers = at.setdefault(i, [])
        for _ in range(part.count):
            fits = np.all(demand <= room[candidates] + slack[candidates], axis=1) if len(candidates) else np.zeros(0, dtype=bool)
            if not fits.any():
                return None
            server = int(candidates[int(np.argmax(fits))])
            room[server] -= demand
            servers.append(server)
    return [server for i in range(len(parts)) for server in at[i]]


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
