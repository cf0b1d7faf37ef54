"""Scenarios: the servers, users and resources of one run, loaded from TOML or JSON.

A scenario file either lists its servers and users explicitly (the JSON exchange format
written by ``dgdrf scenario``)::

    {"resources": ["cpu", "memory"],
     "servers": [{"id": "s1", "capacity": [0.5, 0.5]}],
     "users":   [{"id": "u1", "demand": [0.01, 0.005]}]}

or names a generator (``[generate] kind = "google-2011"``, ``servers``, ``users``,
``seed``). Other top-level keys are run settings (``policy``, ``seed``, ``tick``,
``neighbors``, ...: any declared option) that compose a run the way PeerSim configuration
files do; CLI flags override them. They are kept as found here and checked against the
options' declarations by :func:`dgdrf.config.load_scenario`, the loader runs use (this
pure layer knows no policy or overlay). Every scenario field is validated on load and a
bad one raises :class:`~dgdrf.errors.ScenarioError` naming the file, the field and what
is wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.errors import ScenarioError
from dgdrf.model.resources import FIT_TOLERANCE

#: Upper bounds that keep virtual time (integer microseconds) far from overflow.
MAX_SECONDS = 1e9
MAX_LATENCY_MS = 3.6e6
#: The keys of the scenario itself; every other top-level key is a run setting, checked
#: against the declared options where a run is composed (dgdrf/config.py).
SCENARIO_KEYS = ("resources", "servers", "users", "generate", "name", "description")


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
    #: Run settings found in the file (policy, tick, ...), as found; dgdrf.config checks
    #: them against the declared options. CLI flags override them.
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: Non-fatal remarks found on load (unknown keys; dgdrf.config), shown to the user.
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
    return parse_scenario(data, source=name, name=default_name(name))


def default_name(source: str) -> str:
    """A scenario's name when its document gives none: its file's stem."""
    return Path(source).stem if source and not source.startswith("<") else "scenario"


def parse_scenario(data: Any, source: str = "<scenario>", name: str = "scenario", settings: Mapping[str, Any] | None = None) -> Scenario:
    """Validate an explicit scenario document (resources, servers, users); errors name
    ``source`` and the field. Files, ``[generate]`` tables and run settings are read by
    :mod:`dgdrf.model.scenario_file`."""

    def fail(where: str, what: str) -> ScenarioError:
        return ScenarioError(f"{source}: {where}: {what}")

    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: top level must be an object/table, got {type(data).__name__}")
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
    return Scenario(tuple(resources), servers, users, name=name, settings=dict(settings or {}))


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
