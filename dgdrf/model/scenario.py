"""Scenarios: the servers, users and resources of one run, loaded from TOML or JSON.

A scenario file either lists its servers and users explicitly (the JSON exchange format
written by ``dgdrf scenario``)::

    {"resources": ["cpu", "memory"],
     "servers": [{"id": "s1", "capacity": [0.5, 0.5]}],
     "users":   [{"id": "u1", "demand": [0.01, 0.005]}]}

or names a generator (``[generate] kind = "google-2011"``, ``servers``, ``users``,
``seed``). Optional run settings (``policy``, ``seed``, ``tick``, ``neighbors``,
``latency_ms``, ``loss``, ``duplicate``, ``max_time``) compose a run the way PeerSim
configuration files do; CLI flags override them. Every field is validated on load and a
bad one raises :class:`~dgdrf.errors.ScenarioError` naming the file, the field and what
is wrong.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.errors import ScenarioError
from dgdrf.model.resources import FIT_TOLERANCE

#: Keys a scenario file may hold besides resources/servers/users/generate.
RUN_SETTING_KEYS = ("policy", "seed", "tick", "neighbors", "latency_ms", "loss", "duplicate", "max_time", "capacity_knowledge", "warmup", "gradient_period", "idle_gossip", "gradient_memory", "gradient", "gradient_old_threshold", "gini_neighbours")
#: Upper bounds that keep virtual time (integer microseconds) far from overflow.
MAX_SECONDS = 1e9
MAX_LATENCY_MS = 3.6e6
KNOWN_KEYS = ("resources", "servers", "users", "generate", "name", "description") + RUN_SETTING_KEYS


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """A resource node: its id and capacity vector c_l (thesis 3.1)."""

    id: str
    capacity: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class UserSpec:
    """A user: its id and the demand vector D_i of every one of its tasks (thesis 3.1)."""

    id: str
    demand: tuple[float, ...]


@dataclass(frozen=True)
class Scenario:
    """Servers, users and the names of the resources their vectors range over."""

    resources: tuple[str, ...]
    servers: tuple[ServerSpec, ...]
    users: tuple[UserSpec, ...]
    name: str = "scenario"
    #: Optional run settings found in the file (policy, tick, ...); CLI flags override.
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: Non-fatal remarks found on load (unknown keys), shown to the user.
    warnings: tuple[str, ...] = ()

    def capacity_matrix(self) -> np.ndarray:
        """Servers x resources capacity matrix."""
        return np.array([s.capacity for s in self.servers], dtype=np.float64).reshape(len(self.servers), len(self.resources))

    def demand_matrix(self) -> np.ndarray:
        """Users x resources demand matrix."""
        return np.array([u.demand for u in self.users], dtype=np.float64).reshape(len(self.users), len(self.resources))

    def total_capacity(self) -> np.ndarray:
        """Cluster capacity C_r = sum over servers of c_lr (eq. 3.1)."""
        return self.capacity_matrix().sum(axis=0)

    def unplaceable_users(self) -> list[str]:
        """Users whose task fits on no server even when the cluster is empty."""
        cap = self.capacity_matrix()
        slack = FIT_TOLERANCE * np.maximum(cap, 1.0)
        out = []
        for user in self.users:
            if not np.any(np.all(np.asarray(user.demand) <= cap + slack, axis=1)):
                out.append(user.id)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON exchange format (exactly resources/servers/users, plus name)."""
        return {
            "resources": list(self.resources),
            "servers": [{"id": s.id, "capacity": list(s.capacity)} for s in self.servers],
            "users": [{"id": u.id, "demand": list(u.demand)} for u in self.users],
        }

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")


def build_scenario(
    resources: list[str] | tuple[str, ...],
    servers: list[tuple[str, list[float]]] | list[ServerSpec],
    users: list[tuple[str, list[float]]] | list[UserSpec],
    name: str = "scenario",
) -> Scenario:
    """Build and validate a scenario from Python values (tests, generators)."""
    data = {
        "resources": list(resources),
        "servers": [{"id": s.id, "capacity": list(s.capacity)} if isinstance(s, ServerSpec) else {"id": s[0], "capacity": list(s[1])} for s in servers],
        "users": [{"id": u.id, "demand": list(u.demand)} if isinstance(u, UserSpec) else {"id": u[0], "demand": list(u[1])} for u in users],
    }
    return parse_scenario(data, source=name)


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario from a .toml or .json file, validating every field."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read scenario file: {exc.strerror or exc}") from None
    suffix = p.suffix.lower()
    try:
        if suffix == ".toml":
            data = tomllib.loads(raw.decode("utf-8"))
        elif suffix == ".json":
            data = json.loads(raw.decode("utf-8"))
        else:
            raise ScenarioError(f"{p}: unknown scenario format {suffix or '(no suffix)'!r}; use .toml or .json")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{p}: not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: malformed TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{p}: nested too deeply to be a scenario") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{p}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return parse_scenario(data, source=str(p), base_dir=p.parent)


def parse_scenario(data: Any, source: str = "<scenario>", base_dir: Path | None = None) -> Scenario:
    """Validate a decoded scenario document; errors name ``source`` and the field."""

    def fail(where: str, what: str) -> ScenarioError:
        return ScenarioError(f"{source}: {where}: {what}")

    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: top level must be an object/table, got {type(data).__name__}")
    warnings = [f"{source}: unknown key {k!r} ignored (known: {', '.join(KNOWN_KEYS)})" for k in data if k not in KNOWN_KEYS]
    settings = _parse_settings(data, fail)
    name = data.get("name", Path(source).stem if source and not source.startswith("<") else "scenario")
    if not isinstance(name, str):
        raise fail("name", f"must be a string, got {name!r}")

    if "generate" in data:
        if "servers" in data or "users" in data or "resources" in data:
            raise fail("generate", "give either a [generate] table or explicit resources/servers/users, not both")
        from dgdrf.model.generators import generate_from_spec

        scenario = generate_from_spec(data["generate"], source=source, base_dir=base_dir)
        return Scenario(scenario.resources, scenario.servers, scenario.users, name=name, settings=settings, warnings=tuple(warnings))

    for key in ("resources", "servers", "users"):
        if key not in data:
            raise fail(key, "missing (a scenario needs resources, servers and users, or a [generate] table)")
    resources = data["resources"]
    if not isinstance(resources, list) or not resources:
        raise fail("resources", f"must be a non-empty list of resource names, got {resources!r}")
    for i, r in enumerate(resources):
        if not isinstance(r, str) or not r:
            raise fail(f"resources[{i}]", f"must be a non-empty string, got {r!r}")
    if len(set(resources)) != len(resources):
        raise fail("resources", f"names must be unique, got {resources!r}")
    m = len(resources)

    servers = tuple(ServerSpec(*_parse_entry(e, "servers", i, "capacity", m, fail)) for i, e in enumerate(_list(data, "servers", fail)))
    users = tuple(UserSpec(*_parse_entry(e, "users", i, "demand", m, fail)) for i, e in enumerate(_list(data, "users", fail)))
    _unique_ids(servers, "servers", fail)
    _unique_ids(users, "users", fail)
    for i, u in enumerate(users):
        if not any(x > 0 for x in u.demand):
            raise fail(f"users[{i}].demand", f"user {u.id!r} demands nothing; at least one resource must be positive")
    for j, r in enumerate(resources):
        if not math.isfinite(sum(sv.capacity[j] for sv in servers)):
            raise fail("servers", f"the servers' {r} capacities sum beyond the largest number (the cluster capacity C_r of eq. 3.1 would be infinite); scale them down")
    return Scenario(tuple(resources), servers, users, name=name, settings=settings, warnings=tuple(warnings))


def _list(data: Mapping, key: str, fail) -> list:
    value = data[key]
    if not isinstance(value, list) or not value:
        raise fail(key, f"must be a non-empty list, got {value!r}"[:200])
    return value


def _parse_entry(entry: Any, kind: str, index: int, vector_key: str, m: int, fail) -> tuple[str, tuple[float, ...]]:
    where = f"{kind}[{index}]"
    if not isinstance(entry, Mapping):
        raise fail(where, f"must be an object with 'id' and '{vector_key}', got {entry!r}"[:200])
    for k in entry:
        if k not in ("id", vector_key):
            raise fail(f"{where}.{k}", f"unknown field (expected 'id' and '{vector_key}')")
    if "id" not in entry:
        raise fail(f"{where}.id", "missing")
    ident = entry["id"]
    if not isinstance(ident, (str, int)) or isinstance(ident, bool) or str(ident) == "":
        raise fail(f"{where}.id", f"must be a non-empty string, got {ident!r}")
    if vector_key not in entry:
        raise fail(f"{where}.{vector_key}", "missing")
    vec = entry[vector_key]
    if not isinstance(vec, list):
        raise fail(f"{where}.{vector_key}", f"must be a list of {m} numbers, got {vec!r}")
    if len(vec) != m:
        raise fail(f"{where}.{vector_key}", f"has {len(vec)} values but there are {m} resources")
    out = []
    for j, x in enumerate(vec):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise fail(f"{where}.{vector_key}[{j}]", f"must be a number, got {x!r}")
        try:
            finite = math.isfinite(x)
        except OverflowError:
            finite = False
        if not finite:
            raise fail(f"{where}.{vector_key}[{j}]", f"must be a finite number, got {str(x)[:40]}")
        if x < 0:
            raise fail(f"{where}.{vector_key}[{j}]", f"must not be negative, got {x!r}")
        out.append(float(x))
    return str(ident), tuple(out)


def _unique_ids(entries, kind: str, fail) -> None:
    seen: set[str] = set()
    for i, e in enumerate(entries):
        if e.id in seen:
            raise fail(f"{kind}[{i}].id", f"duplicate id {e.id!r}")
        seen.add(e.id)


def _parse_settings(data: Mapping, fail) -> dict[str, Any]:
    """Validate the optional run settings; their meaning is the CLI flag of the same name."""
    s: dict[str, Any] = {}
    if "policy" in data:
        if not isinstance(data["policy"], str):
            raise fail("policy", f"must be a policy name, got {data['policy']!r}")
        s["policy"] = data["policy"]
    for key, least in (("seed", 0), ("neighbors", 1), ("gradient_memory", 0), ("gradient_old_threshold", 1)):
        if key in data:
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise fail(key, f"must be an integer >= {least}, got {v!r}")
            s[key] = v
    for key, positive, hi in (("tick", True, MAX_SECONDS), ("max_time", True, MAX_SECONDS), ("gradient_period", True, MAX_SECONDS), ("loss", False, 1.0), ("duplicate", False, 1.0)):
        if key in data:
            v = data[key]
            ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and (v > 0 if positive else v >= 0) and v <= hi
            if not ok:
                raise fail(key, f"must be a number in {'(0' if positive else '[0'}, {hi:g}], got {v!r}")
            s[key] = float(v)
    if "capacity_knowledge" in data:
        if data["capacity_knowledge"] not in ("exact", "pushsum"):
            raise fail("capacity_knowledge", f"must be \"exact\" or \"pushsum\", got {data['capacity_knowledge']!r}")
        s["capacity_knowledge"] = data["capacity_knowledge"]
    for key, choices in (("gradient", ("toolbox", "stamped")), ("gini_neighbours", ("gradient", "overlay"))):
        if key in data:
            if data[key] not in choices:
                raise fail(key, f"must be one of {', '.join(repr(c) for c in choices)}, got {data[key]!r}")
            s[key] = data[key]
    if "idle_gossip" in data:
        if not isinstance(data["idle_gossip"], bool):
            raise fail("idle_gossip", f"must be true or false, got {data['idle_gossip']!r}")
        s["idle_gossip"] = data["idle_gossip"]
    if "warmup" in data:
        v = data["warmup"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= MAX_SECONDS:
            raise fail("warmup", f"must be non-negative seconds, got {v!r}")
        s["warmup"] = float(v)
    if "latency_ms" in data:
        v = data["latency_ms"]
        if (
            not isinstance(v, list)
            or len(v) != 2
            or any(isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) for x in v)
            or not (0 <= v[0] <= v[1] <= MAX_LATENCY_MS)
        ):
            raise fail("latency_ms", f"must be [min, max] milliseconds with 0 <= min <= max <= {MAX_LATENCY_MS:g}, got {v!r}")
        s["latency_ms"] = (float(v[0]), float(v[1]))
    return s
