"""Random workloads of jobs of parts, and what a run left held, for the property tests
(tests/test_gangs.py) and the stress benchmark (bench/gang_stress.py) alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dgdrf.errors import ScenarioError
from dgdrf.model.scenario import Scenario, build_scenario
from dgdrf.nodes.server import Server
from dgdrf.nodes.user import User
from dgdrf.policies.gang_desk import COMMITTED, HOLD_LEASE_S, GangDesk
from dgdrf.policies.local import TaskDesk

#: one part as drawn: (class, cpu, memory, count); class 0 or 1 requires that class, 2 runs anywhere
PartDraw = tuple[int, int, int, int]


def random_gang_scenario(jobs: Sequence[Sequence[PartDraw]], servers: int, durations: int) -> Scenario | None:
    """``servers`` servers of <4, 4>, classes c0 and c1 in turn; user i has one job of the
    parts ``jobs[i]``, 1 + i % 3 instances of 1 + i % ``durations`` seconds arriving at
    0.5 i s. None when an instance fits no set of servers at once (the scenario refuses
    it)."""
    server_docs: list[dict[str, Any]] = [{"id": f"s{k}", "capacity": [4, 4], "attributes": {"class": f"c{k % 2}"}} for k in range(servers)]
    docs = []
    for i, parts in enumerate(jobs):
        doc_parts = [{"demand": [cpu, mem], "count": count, **({"requires": {"class": f"c{cls}"}} if cls < 2 else {})} for cls, cpu, mem, count in parts]
        docs.append({"id": f"u{i}", "jobs": [{"id": "job", "tasks": 1 + i % 3, "duration": 1 + i % durations, "arrival": 0.5 * i, "parts": doc_parts}]})
    try:
        return build_scenario(["cpu", "mem"], server_docs, docs)
    except ScenarioError:
        return None


def left_behind(world: Any, settle: float = HOLD_LEASE_S + 10.0) -> list[str]:
    """What a drained run's servers hold for good: reservations, running tasks, and a
    distributed policy's tries not committed, room noted and tasks held for others'
    tries. Judged at the run's end and, if something is held then, again after its
    members went on for ``settle`` more virtual seconds (a lease and some): a try still
    looking when the run drained, for a job its user gave up, ends by itself. (A commit sent again at the very end, its answer not yet in, holds nothing;
    a proposal the user declined, its Decline lost, expires by itself; a task its user is
    aborting stops when the AbortTask arrives; a coordinator that crashed, the run over
    before anyone knew, has its holds given back when that is known.)"""
    left = _held(world)
    if left and settle > 0:
        world.clock.run(until=world.clock.now() + settle)
        left = _held(world)
    return left


def _held(world: Any) -> list[str]:
    actors = world.transport.actors
    left = []
    aborting = {(a.address, server, t) for a in actors.values() if isinstance(a, User) for server, ids in a._aborting.items() for t in ids}
    for actor in actors.values():
        if not isinstance(actor, Server):
            continue
        running = {key for key in actor.running if (key[0], actor.address, key[1]) not in aborting}
        proposed = {key for role in actor.roles if isinstance(role, TaskDesk) for key in role.proposals.open}
        if set(actor.reserved) - proposed:
            left.append(f"{actor.address} reserves {sorted(set(actor.reserved) - proposed)}")
        if running:
            left.append(f"{actor.address} runs {sorted(running)}")
        for role in actor.roles:
            if isinstance(role, GangDesk):
                tries = [key for key, plan in role.plans.items() if plan.phase != COMMITTED]
                notes, holds = [k for k in role.noted if k[0] in actors], [k for k in role.holds if k[0] in actors]
                if tries or notes or holds:
                    left.append(f"{actor.address}: tries {tries}, notes {notes}, holds {holds}")
    return left
