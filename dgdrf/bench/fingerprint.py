"""Behaviour fingerprints: whether a recorded result was made by code that behaves as
the current code does, decided by running the code rather than by a hand-kept revision.

For every policy (and, for the gradient policies, each gradient kind) one small
deterministic emulation exercises the protocol with loss and duplicates (:data:`SCENARIO`,
:data:`CONFIG`). The policy's *behaviour* is what it did in that run, not what the run's
result document says about it: an observer (dgdrf/world.py ``Observer``) records, under
the scheme :data:`SCHEME` (2),

- every allocation, in order: virtual time, user, task id, server;
- why and when the run ended: its stop reason and the virtual time at the end;
- the messages and bytes sent per message type, and the messages the emulated network
  dropped, duplicated or could not deliver;
- the collector's event counts and the number of invariant violations,

read from the run's collector and transport, never from its ``RunResult``; and the same
of a second run (scheme 3), of jobs that arrive and finish on constrained, weighted
users (:func:`jobs_scenario`, :data:`JOBS_CONFIG`), so that what a policy does with
finite, constrained workloads is its behaviour too. The digest of that
:class:`Behaviour` (canonical JSON with the scheme number, sha256, 16 hex) is the
fingerprint. A key added to the result (a new metric) changes no fingerprint, so no
record goes stale for it; what the policy does (where and when it allocates, what it
sends) does. Scheme 1 digested the whole result document but its wall time, so that any
new key of the result changed every fingerprint; scheme 2 had the thesis's run only.

The current code's behaviours are committed in ``dgdrf/data/behaviour.json`` with their
scheme, and a test recomputes them (tests/test_fingerprint.py), so a change that alters
what a policy does cannot land without updating the file, whether it was meant or not.
Every sweep record carries the behaviour of its run's policy and its scheme in its
provenance (``behaviour``, ``behaviour_scheme``; a record without the scheme is of
scheme 1). Whether a record is stale is decided in one place,
:mod:`dgdrf.bench.staleness`: a record of the committed scheme is stale when its
behaviour differs from the committed one. For records of an earlier scheme the file
keeps, per behaviour, the earlier scheme's digest frozen when the scheme changed
(``replaced``) together with the digest that replaced it (``by``): such a record is
current while its digest is the frozen one and its policy's committed behaviour is
still the one that replaced it. When a behaviour changes, ``--write`` drops its frozen
digests, and its earlier-scheme records become stale then, and only then. Records made
before behaviours were recorded keep the older test, the revisions in their parameters.

``python -m dgdrf.bench.fingerprint`` prints the current behaviours; ``--write`` updates
the committed file (after a change whose new results are intended). Changing
:data:`SCHEME` (what is digested) must be a commit of its own that changes no behaviour:
``--write`` then freezes the committed behaviours of the earlier scheme as replaced by
the new ones.

The small runs see what a small cluster shows; a change visible only at scale (the
gradient memory on 200 servers) still needs a revision bump, as before.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dgdrf.measurement import RunResult
    from dgdrf.nodes.collector import AllocationRecord
    from dgdrf.world import World

#: the file the committed behaviours live in (package data)
BEHAVIOUR_FILE = "behaviour.json"
#: what a fingerprint digests (:class:`Behaviour`); 1: the whole result but its wall
#: time; 2: the thesis's run's behaviour; 3: that and the jobs run's
SCHEME = 3
#: the scheme of records whose provenance does not name one (made before schemes were)
FIRST_SCHEME = 1
#: the run whose behaviour is a policy's: small, saturating, with loss and duplicates so
#: the repeat paths run too
SCENARIO = (24, 6, 7)  # servers, users, generator seed
CONFIG: dict[str, Any] = {"seed": 3, "neighbors": 3, "loss": 0.02, "duplicate": 0.01, "warmup": 2.0, "tick": 0.1}
#: the jobs run's configuration (its scenario: :func:`jobs_scenario`)
JOBS_CONFIG: dict[str, Any] = {"seed": 5, "neighbors": 3, "loss": 0.02, "duplicate": 0.01, "warmup": 2.0, "tick": 0.1}


def jobs_scenario() -> Any:
    """The jobs run's scenario: 8 servers (half with an attribute ``ssd``), 4 users with
    weights 1-3 and jobs of a few tasks of 1-6 s arriving over 20 s, one user's on the
    ``ssd`` servers, one's on two named servers, one endless job whose tasks end: every
    path of jobs (arrivals, ends, constraints, weights, an idle user) runs in a few
    seconds of virtual time."""
    from dgdrf.model.scenario import build_scenario

    servers = [{"id": f"s{i}", "capacity": [1.0 + (i % 3), 2.0 + (i % 2)], "attributes": {"ssd": i % 2 == 0}} for i in range(1, 9)]
    users: list[dict[str, Any]] = [
        {"id": "u1", "jobs": [{"id": "a", "demand": [0.5, 0.5], "tasks": 12, "duration": {"dist": "exp", "mean": 2.0, "max": 6.0}, "arrival": 0}]},
        {"id": "u2", "weight": 2, "jobs": [{"id": "b", "demand": [1.0, 0.5], "tasks": 8, "duration": 3.0, "arrival": 2, "requires": {"ssd": True}},
                                           {"id": "c", "demand": [0.5, 1.0], "tasks": 6, "duration": {"dist": "uniform", "min": 1, "max": 4}, "arrival": 12}]},
        {"id": "u3", "weight": 3, "jobs": [{"id": "d", "demand": [0.5, 0.5], "tasks": 10, "duration": 2.5, "arrival": 5, "eligible": ["s2", "s3"]}]},
        {"id": "u4", "jobs": [{"id": "e", "demand": [1.0, 1.0], "tasks": 5, "duration": 1.0, "arrival": 20}]},
    ]  # fmt: skip
    return build_scenario(["cpu", "memory"], servers, users, name="behaviour-jobs")


@dataclass
class Behaviour:
    """What a policy did in a run, as scheme :data:`SCHEME` digests it."""

    #: every allocation in the order made: [virtual time, user, task id, server]
    allocations: list[list[Any]] = field(default_factory=list)
    stop_reason: str | None = None
    #: the virtual time when the run ended
    end_s: float = 0.0
    #: per message type: [messages, bytes] sent
    messages: dict[str, list[int]] = field(default_factory=dict)
    #: the emulated network's dropped, duplicated and undeliverable messages
    network: dict[str, int] = field(default_factory=dict)
    #: the collector's event counts (the result's ``events``)
    events: dict[str, int] = field(default_factory=dict)
    invariant_violations: int = 0
    #: the same of the jobs run (scheme 3)
    jobs: Behaviour | None = None

    def document(self) -> dict[str, Any]:
        """What is digested: every field, under the scheme's number."""
        doc = {
            "scheme": SCHEME, "allocations": self.allocations, "stop_reason": self.stop_reason, "end_s": self.end_s,
            "messages": self.messages, "network": self.network, "events": self.events, "invariant_violations": self.invariant_violations,
        }
        if self.jobs is not None:
            doc["jobs"] = {k: v for k, v in self.jobs.document().items() if k != "scheme"}
        return doc

    def digest(self) -> str:
        """The fingerprint: sha256 of the canonical JSON of :meth:`document`, 16 hex."""
        text = json.dumps(self.document(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _recorder() -> Any:
    """An observer that fills a :class:`Behaviour` (``.behaviour``) from the world it
    watches (defined on first use: dgdrf.world is heavy to import for a report)."""
    from dgdrf.world import Observer

    class BehaviourRecorder(Observer):
        def __init__(self) -> None:
            self.behaviour = Behaviour()

        def allocated(self, world: World, allocation: AllocationRecord) -> None:
            a = allocation
            self.behaviour.allocations.append([float(a.time), str(a.user), int(a.task_id), str(a.server)])

        def finished(self, world: World, result: RunResult) -> None:
            b, stats = self.behaviour, world.transport.stats
            b.stop_reason = world.stop_reason
            b.end_s = float(world.clock.now())
            b.messages = {kind: [v["count"], v["bytes"]] for kind, v in stats.by_type().items()}
            b.network = {"dropped": stats.dropped, "duplicated": stats.duplicated, "undeliverable": stats.undeliverable}
            b.events = dict(sorted(world.collector.counters.items()))
            b.invariant_violations = len(world.collector.violations)

    return BehaviourRecorder()


def behaviour_names() -> list[str]:
    """``policy`` for every policy, ``policy/gradient`` for each gradient kind a gradient
    policy can run."""
    from dgdrf.overlay.options import GRADIENTS
    from dgdrf.policies import POLICIES

    names = []
    for name, cls in POLICIES.items():
        names += [f"{name}/{kind}" for kind in GRADIENTS] if cls.uses_gradient else [name]
    return names


def behaviour_name(params: dict[str, Any]) -> str | None:
    """The behaviour a run with these parameters has (None for an unknown policy)."""
    from dgdrf.policies import POLICIES

    cls = POLICIES.get(params.get("policy", ""))
    if cls is None:
        return None
    kind = cls.gradient_kind(params.get("gradient"))
    return cls.name if kind is None else f"{cls.name}/{kind}"


def trace_behaviour(name: str) -> Behaviour:
    """What the behaviour run of ``name`` does under the current code."""
    from dgdrf.emulation import RunConfig, run_emulation
    from dgdrf.model.generators import google_2011_scenario

    policy, _, kind = name.partition("/")
    config = RunConfig(policy=policy, gradient=kind or None, **CONFIG)
    recorder = _recorder()
    run_emulation(google_2011_scenario(*SCENARIO), config, observers=[recorder])
    behaviour: Behaviour = recorder.behaviour
    jobs = _recorder()
    run_emulation(jobs_scenario(), RunConfig(policy=policy, gradient=kind or None, **JOBS_CONFIG), observers=[jobs])
    behaviour.jobs = jobs.behaviour
    return behaviour


def measure_behaviour(name: str) -> str:
    """The fingerprint of ``name`` under the current code (16 hex, scheme :data:`SCHEME`)."""
    return trace_behaviour(name).digest()


@functools.cache
def _document() -> dict[str, Any]:
    """The committed file, read once (empty if it is missing)."""
    try:
        text = (resources.files("dgdrf") / "data" / BEHAVIOUR_FILE).read_text(encoding="utf-8")
    except OSError:
        return {}
    doc: dict[str, Any] = json.loads(text)
    return doc


def committed() -> dict[str, str]:
    """The behaviours committed with this code, by name (of :func:`committed_scheme`)."""
    return dict(_document().get("behaviours", {}))


def committed_scheme() -> int:
    """The scheme of the committed behaviours (a file without one: scheme 1)."""
    return int(_document().get("scheme", FIRST_SCHEME))


def replaced() -> dict[int, dict[str, dict[str, str]]]:
    """Earlier schemes' behaviours frozen when the scheme changed: scheme -> name ->
    ``{"digest": the earlier scheme's, "by": the committed behaviour that replaced it}``."""
    return {int(scheme): dict(table) for scheme, table in _document().get("replaced", {}).items()}


def committed_behaviour(params: dict[str, Any]) -> str | None:
    """The committed behaviour of a run with these parameters (None if unknown)."""
    name = behaviour_name(params)
    return None if name is None else committed().get(name)


def updated_document(doc: dict[str, Any], now: dict[str, str]) -> dict[str, Any]:
    """The committed file ``doc`` with the behaviours ``now`` (scheme :data:`SCHEME`), as
    ``--write`` writes it. A behaviour that changed loses its frozen digests of earlier
    schemes (its records of those schemes become stale); one that did not keeps them. If
    ``doc``'s scheme is an earlier one, its behaviours are frozen as replaced by ``now``,
    and so are those frozen before them that its behaviours had replaced (a record of
    scheme 1 stays current through schemes 2 and 3): a scheme changes in a commit that
    changes no behaviour."""
    old_scheme = int(doc.get("scheme", FIRST_SCHEME))
    frozen = {str(s): {n: dict(e) for n, e in t.items()} for s, t in doc.get("replaced", {}).items()}
    if doc.get("behaviours") and old_scheme != SCHEME:
        old = doc["behaviours"]
        for table in frozen.values():  # still current: they were replaced by what is replaced now
            for n, e in table.items():
                if n in now and e.get("by") == old.get(n):
                    e["by"] = now[n]
        frozen[str(old_scheme)] = {n: {"digest": d, "by": now[n]} for n, d in old.items() if n in now}
    frozen = {s: kept for s, t in frozen.items() if (kept := {n: e for n, e in t.items() if now.get(n) == e.get("by")})}
    about = (
        "behaviour fingerprints of the current code, of scheme 'scheme': dgdrf/bench/fingerprint.py. 'replaced': per earlier scheme, "
        "each behaviour's digest under it ('digest') and the behaviour that replaced it ('by'): a record of that scheme is current "
        "while its digest is 'digest' and its policy's behaviour is still 'by' (dgdrf/bench/staleness.py)"
    )
    return {
        "about": about,
        "scheme": SCHEME,
        "run": {"scenario": list(SCENARIO), "config": CONFIG, "jobs": {"scenario": "fingerprint.jobs_scenario()", "config": JOBS_CONFIG}},
        "behaviours": now,
        "replaced": dict(sorted(frozen.items(), key=lambda item: int(item[0]))),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dgdrf.bench.fingerprint", description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--write", action="store_true", help=f"write the current behaviours to dgdrf/data/{BEHAVIOUR_FILE}")
    args = ap.parse_args(argv)
    now = {name: measure_behaviour(name) for name in behaviour_names()}
    same = committed_scheme() == SCHEME
    old = committed()
    if not same:
        print(f"the committed behaviours are of scheme {committed_scheme()}, this code's is {SCHEME}: not compared", file=sys.stderr)
    for name, digest in now.items():
        mark = "" if not same or old.get(name) == digest else ("  (new)" if name not in old else f"  (changed from {old[name]})")
        print(f"{name:24s} {digest}{mark}")
    if args.write:
        path = Path(__file__).resolve().parents[1] / "data" / BEHAVIOUR_FILE
        path.write_text(json.dumps(updated_document(_document(), now), indent=1) + "\n", encoding="utf-8")
        print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
