"""Behaviour fingerprints: whether a recorded result was made by code that behaves as
the current code does, decided by running the code rather than by a hand-kept revision.

For every policy (and, for the gradient policies, each gradient kind) one small
deterministic emulation exercises the protocol with loss and duplicates; the digest of
its result (wall time aside) is the policy's *behaviour*. The current code's behaviours
are committed in ``dgdrf/data/behaviour.json`` and a test recomputes them
(tests/test_fingerprint.py), so a change that alters what a policy does cannot land
without updating the file, whether it was meant or not. Every sweep record carries the
behaviour of its run's policy in its provenance; a record whose behaviour differs from
the committed one was made by code that behaved otherwise, and is stale
(:func:`dgdrf.bench.staleness.is_stale`). Records made before behaviours were recorded keep
the older test, the revisions in their parameters.

``python -m dgdrf.bench.fingerprint`` prints the current behaviours; ``--write`` updates
the committed file (after a change whose new results are intended).

The small runs see what a small cluster shows; a change visible only at scale (the
gradient memory on 200 servers) still needs a revision bump, as before.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

#: the file the committed behaviours live in (package data)
BEHAVIOUR_FILE = "behaviour.json"
#: the run whose result is a behaviour: small, saturating, with loss and duplicates so the
#: repeat paths run too
SCENARIO = (24, 6, 7)  # servers, users, generator seed
CONFIG: dict[str, Any] = {"seed": 3, "neighbors": 3, "loss": 0.02, "duplicate": 0.01, "warmup": 2.0, "tick": 0.1}


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


def measure_behaviour(name: str) -> str:
    """The digest of the behaviour run of ``name`` under the current code (16 hex)."""
    from dgdrf.emulation import RunConfig, run_emulation
    from dgdrf.model.generators import google_2011_scenario

    policy, _, kind = name.partition("/")
    config = RunConfig(policy=policy, gradient=kind or None, **CONFIG)
    result = run_emulation(google_2011_scenario(*SCENARIO), config).to_dict()
    result.pop("wall_s")
    return hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()[:16]


@functools.cache
def committed() -> dict[str, str]:
    """The behaviours committed with this code, read once (empty if the file is missing)."""
    try:
        text = (resources.files("dgdrf") / "data" / BEHAVIOUR_FILE).read_text(encoding="utf-8")
    except OSError:
        return {}
    return dict(json.loads(text)["behaviours"])


def committed_behaviour(params: dict[str, Any]) -> str | None:
    """The committed behaviour of a run with these parameters (None if unknown)."""
    name = behaviour_name(params)
    return None if name is None else committed().get(name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dgdrf.bench.fingerprint", description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--write", action="store_true", help=f"write the current behaviours to dgdrf/data/{BEHAVIOUR_FILE}")
    args = ap.parse_args(argv)
    now = {name: measure_behaviour(name) for name in behaviour_names()}
    old = dict(committed())
    for name, digest in now.items():
        mark = "" if old.get(name) == digest else ("  (new)" if name not in old else f"  (changed from {old[name]})")
        print(f"{name:24s} {digest}{mark}")
    if args.write:
        path = Path(__file__).resolve().parents[1] / "data" / BEHAVIOUR_FILE
        doc = {"about": "behaviour fingerprints of the current code: dgdrf/bench/fingerprint.py", "run": {"scenario": list(SCENARIO), "config": CONFIG}, "behaviours": now}
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
