"""Scenarios: the servers, users and resources of one run, loaded from TOML or JSON.

A scenario file either lists its servers and users explicitly (the JSON exchange format
written by ``dgdrf scenario``)::

    {"resources": ["cpu", "memory"],
     "servers": [{"id": "s1", "capacity": [0.5, 0.5], "attributes": {"arch": "x86"}}],
     "users":   [{"id": "u1", "demand": [0.01, 0.005]},
                 {"id": "u2", "weight": 2, "jobs": [
                     {"id": "j1", "demand": [0.02, 0.01], "tasks": 40, "duration": 30,
                      "arrival": 0, "requires": {"arch": "x86"}}]}]}

or names a generator (``[generate] kind = "google-2011"``, ``servers``, ``users``,
``seed``). A user is either the thesis's short form, ``{"id", "demand"}``: one endless
job whose tasks never end, optionally with ``eligible``, ``requires`` and ``weight``;
or ``{"id", "jobs"}`` with an optional ``weight``: jobs of finite or endless tasks that
arrive and finish (dgdrf/model/workload.py; constraints: dgdrf/model/constraints.py;
durations: dgdrf/model/distributions.py). Other top-level keys are run settings
(``policy``, ``seed``, ``tick``, ``neighbors``, ...: any declared option) that compose a
run the way PeerSim configuration files do; CLI flags override them. They are kept as
found here and checked against the options' declarations by
:func:`dgdrf.config.load_scenario`, the loader runs use (this pure layer knows no policy
or overlay). Every scenario field is validated on load and a bad one raises
:class:`~dgdrf.errors.ScenarioError` naming the file, the field (the user and job) and
what is wrong, as does a job that no server could ever run (its constraint matches no
server, or its demand fits on none of those it matches). A short-form user without
constraints whose demand fits nowhere is the exception, reported after the run as it
always was (:meth:`Scenario.unplaceable_users`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.errors import ScenarioError
from dgdrf.model.constraints import UNCONSTRAINED, Constraint, ConstraintError, Scalar, parse_attributes, parse_constraint
from dgdrf.model.distributions import DistributionError, parse_duration
from dgdrf.model.gangs import PartSlots, pack
from dgdrf.model.resources import fit_mask, natural_key
from dgdrf.model.workload import MAIN_JOB, JobSpec, Part, instance_size, job_order

#: Upper bounds that keep virtual time (integer microseconds) far from overflow.
MAX_SECONDS = 1e9
MAX_LATENCY_MS = 3.6e6
#: The keys of the scenario itself; every other top-level key is a run setting, checked
#: against the declared options where a run is composed (dgdrf/config.py). ``$schema``
#: names the JSON Schema an editor checks the file against (dgdrf/schema.py); a run
#: ignores it.
SCENARIO_KEYS = ("resources", "servers", "users", "generate", "name", "description", "$schema")
#: most tasks one job may have, and most eligible servers one constraint may list (a
#: message's list bound in network mode)
MAX_TASKS = 10**9
MAX_ELIGIBLE = 4096
#: tasks in one instance of a job of parts (a gang): its parts travel in one request
MAX_INSTANCE_TASKS = 64


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """A resource node: its id, capacity vector c_l (thesis 3.1) and attributes (what
    placement constraints match, dgdrf/model/constraints.py)."""

    id: str
    capacity: tuple[float, ...]
    attributes: tuple[tuple[str, Scalar], ...] = ()

    @property
    def attribute_map(self) -> dict[str, Scalar]:
        return dict(self.attributes)


@dataclass(frozen=True, slots=True)
class UserSpec:
    """A user: its id, its weight w_i (weighted DRF: its share counts as G_i / w_i) and
    its jobs. The thesis's user (thesis 3.1) is the short form: ``demand`` D_i of an
    endless stream of tasks that never end, with ``constraint`` (``jobs`` empty). With
    ``jobs``, ``demand`` is the demand of the job it serves first (what a per-user
    vector is asked for, such as the memory budget)."""

    id: str
    demand: tuple[float, ...]
    weight: float = 1.0
    jobs: tuple[JobSpec, ...] = ()
    constraint: Constraint = UNCONSTRAINED
    #: a user that claims servers it cannot use (the audit's misreports, model/audit.py)
    #: declines a placement anywhere but here; empty: it runs wherever it claims. Never
    #: read from a file: a lie is the audit's experiment, not a scenario
    runs_on: tuple[str, ...] = ()
    #: the user whose job stream this is, when a user has several that compete apart (UDRF,
    #: Tahir et al.: a user's jobs on several machine classes); empty: its own id
    tenant: str = ""

    @property
    def job_list(self) -> tuple[JobSpec, ...]:
        """Its jobs; the short form's one endless job."""
        return self.jobs or (JobSpec(MAIN_JOB, self.demand, constraint=self.constraint),)

    @property
    def classic(self) -> bool:
        """The thesis's user: one endless job of tasks that never end, arriving at once,
        unconstrained, weight 1 (its messages carry none of the newer fields)."""
        return not self.jobs and self.weight == 1.0 and self.constraint.unconstrained and not self.tenant


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
        """Short-form users without constraints whose task fits on no server even when
        the cluster is empty (they are reported after the run; any other user's job that
        could never run is refused on load)."""
        cap = self.capacity_matrix()
        return [u.id for u in self.users if not u.jobs and u.constraint.unconstrained and not fit_mask(np.asarray(u.demand), cap, cap).any()]

    @property
    def classic(self) -> bool:
        """Every user is the thesis's (:attr:`UserSpec.classic`) and no server has
        attributes: a run of it is a run of the thesis's world, byte for byte."""
        return all(u.classic for u in self.users) and not any(s.attributes for s in self.servers)

    @property
    def finite_jobs(self) -> bool:
        """Some job has a finite number of tasks (the run measures jobs: JCT, makespan)."""
        return any(j.finite for u in self.users for j in u.jobs)

    @property
    def gangs(self) -> bool:
        """Some job runs as instances of parts, all or nothing (model/gangs.py)."""
        return any(j.gang for u in self.users for j in u.jobs)

    @property
    def finishing(self) -> bool:
        """Some job's tasks finish, so capacity comes back during the run."""
        return any(j.finishing for u in self.users for j in u.jobs)

    def to_dict(self) -> dict[str, Any]:
        """The JSON exchange format (resources/servers/users; the newer fields only where
        a server or user has them, so a thesis scenario's document is what it was)."""
        servers = []
        for sv in self.servers:
            entry: dict[str, Any] = {"id": sv.id, "capacity": list(sv.capacity)}
            if sv.attributes:
                entry["attributes"] = dict(sv.attributes)
            servers.append(entry)
        users = []
        for u in self.users:
            doc: dict[str, Any] = {"id": u.id}
            if u.jobs:
                doc["jobs"] = [_job_to_dict(j) for j in u.jobs]
            else:
                doc["demand"] = list(u.demand)
                doc.update(u.constraint.to_json())
            if u.weight != 1.0:
                doc["weight"] = u.weight
            if u.tenant:
                doc["tenant"] = u.tenant
            users.append(doc)
        return {"resources": list(self.resources), "servers": servers, "users": users}

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")


def _job_to_dict(job: JobSpec) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": job.id}
    if job.parts:
        doc["parts"] = [{"demand": list(p.demand), "count": p.count, **p.constraint.to_json()} for p in job.parts]
    else:
        doc["demand"] = list(job.demand)
    if job.tasks is not None:
        doc["tasks"] = job.tasks
    if job.duration is not None:
        doc["duration"] = job.duration.to_json()
    doc["arrival"] = job.arrival
    if not job.parts:
        doc.update(job.constraint.to_json())
    return doc


def build_scenario(
    resources: Sequence[str],
    servers: Sequence[tuple[str, Sequence[float]] | ServerSpec | Mapping[str, Any]],
    users: Sequence[tuple[str, Sequence[float]] | UserSpec | Mapping[str, Any]],
    name: str = "scenario",
) -> Scenario:
    """Build and validate a scenario from Python values (tests, generators): entries are
    ``(id, vector)`` pairs, specs, or documents as in a scenario file."""

    def server_doc(s: Any) -> dict[str, Any]:
        if isinstance(s, Mapping):
            return dict(s)
        if isinstance(s, ServerSpec):
            return {"id": s.id, "capacity": list(s.capacity), **({"attributes": dict(s.attributes)} if s.attributes else {})}
        return {"id": s[0], "capacity": list(s[1])}

    def user_doc(u: Any) -> dict[str, Any]:
        if isinstance(u, Mapping):
            return dict(u)
        if isinstance(u, UserSpec):
            return Scenario((), (), (u,)).to_dict()["users"][0]
        return {"id": u[0], "demand": list(u[1])}

    data = {"resources": list(resources), "servers": [server_doc(s) for s in servers], "users": [user_doc(u) for u in users]}
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

    servers = tuple(_parse_server(e, i, m, fail) for i, e in enumerate(_list(data, "servers", fail)))
    _unique_ids(servers, "servers", fail)
    server_ids = [sv.id for sv in servers]
    users = tuple(_parse_user(e, i, m, server_ids, fail) for i, e in enumerate(_list(data, "users", fail)))
    _unique_ids(users, "users", fail)
    for j, r in enumerate(resources):
        if not math.isfinite(sum(sv.capacity[j] for sv in servers)):
            raise fail("servers", f"the servers' {r} capacities sum beyond the largest number (the cluster capacity C_r of eq. 3.1 would be infinite); scale them down")
    _check_runnable(servers, users, fail)
    return Scenario(tuple(resources), servers, users, name=name, settings=dict(settings or {}))


def _list(data: Mapping, key: str, fail) -> list:
    value = data[key]
    if not isinstance(value, list) or not value:
        raise fail(key, f"must be a non-empty list, got {value!r}"[:200])
    return value


def _parse_server(entry: Any, index: int, m: int, fail) -> ServerSpec:
    ident, capacity = _parse_entry(entry, "servers", index, "capacity", m, fail, extra=("attributes",))
    attributes: tuple[tuple[str, Scalar], ...] = ()
    if "attributes" in entry:
        try:
            attributes = parse_attributes(entry["attributes"])
        except ConstraintError as exc:
            raise fail(f"servers[{index}].attributes", f"server {ident!r}: {exc}") from None
    return ServerSpec(ident, capacity, attributes)


#: the fields of a short-form user besides id and demand, and of a user with jobs; of a job
_SHORT_FIELDS = ("weight", "eligible", "requires", "tenant")
_JOBS_FIELDS = ("jobs", "weight", "tenant")
_JOB_FIELDS = ("id", "demand", "parts", "gang", "tasks", "duration", "arrival", "eligible", "requires")
_PART_FIELDS = ("demand", "count", "eligible", "requires")


def _parse_user(entry: Any, index: int, m: int, servers: list[str], fail) -> UserSpec:
    where = f"users[{index}]"
    if isinstance(entry, Mapping) and "jobs" in entry:
        ident = _parse_id(entry, where, fail)
        who = f"user {ident!r}"
        for k in entry:
            if k != "id" and k not in _JOBS_FIELDS:
                hint = " (a user with jobs gives each job its demand)" if k == "demand" else ""
                raise fail(f"{where}.{k}", f"{who}: unknown field for a user with jobs (expected 'id', 'jobs', 'weight', 'tenant'){hint}")
        weight = _parse_weight(entry, where, who, fail)
        raw = entry["jobs"]
        if not isinstance(raw, list) or not raw:
            raise fail(f"{where}.jobs", f"{who}: must be a non-empty list of jobs, got {raw!r}"[:200])
        jobs = tuple(_parse_job(j, f"{where}.jobs[{k}]", who, m, servers, fail) for k, j in enumerate(raw))
        seen: set[str] = set()
        for k, job in enumerate(jobs):
            if job.id in seen:
                raise fail(f"{where}.jobs[{k}].id", f"{who}: duplicate job id {job.id!r}")
            seen.add(job.id)
        first = jobs[job_order(jobs)[0]]
        return UserSpec(ident, first.demand, weight, jobs, tenant=_parse_tenant(entry, where, who, fail))
    ident, demand = _parse_entry(entry, "users", index, "demand", m, fail, extra=_SHORT_FIELDS)
    who = f"user {ident!r}"
    if not any(x > 0 for x in demand):
        raise fail(f"{where}.demand", f"user {ident!r} demands nothing; at least one resource must be positive")
    weight = _parse_weight(entry, where, who, fail)
    constraint = _parse_constraint(entry, where, who, servers, fail)
    return UserSpec(ident, demand, weight, (), constraint, tenant=_parse_tenant(entry, where, who, fail))


def _parse_tenant(entry: Mapping, where: str, who: str, fail) -> str:
    if "tenant" not in entry:
        return ""
    t = entry["tenant"]
    if not isinstance(t, str) or not t.strip():
        raise fail(f"{where}.tenant", f"{who}: must be the id of the user whose job stream this is (a non-empty string), got {t!r}"[:200])
    return t


def _parse_weight(entry: Mapping, where: str, who: str, fail) -> float:
    if "weight" not in entry:
        return 1.0
    w = entry["weight"]
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
        raise fail(f"{where}.weight", f"{who}: must be a positive number, got {w!r}"[:200])
    return float(w)


def _parse_constraint(entry: Mapping, where: str, who: str, servers: list[str], fail) -> Constraint:
    try:
        constraint = parse_constraint(entry.get("eligible"), entry.get("requires"), servers)
    except ConstraintError as exc:
        field_name, _, what = str(exc).partition(": ")
        raise fail(f"{where}.{field_name}", f"{who}: {what}") from None
    if constraint.eligible is not None and len(constraint.eligible) > MAX_ELIGIBLE:
        raise fail(f"{where}.eligible", f"{who}: at most {MAX_ELIGIBLE} servers (use requires with an attribute instead)")
    return constraint


def _parse_job(entry: Any, where: str, who: str, m: int, servers: list[str], fail) -> JobSpec:
    if not isinstance(entry, Mapping):
        raise fail(where, f"{who}: a job must be a table with id, demand, tasks, duration, arrival, got {entry!r}"[:200])
    for k in entry:
        if k not in _JOB_FIELDS:
            raise fail(f"{where}.{k}", f"{who}: unknown field of a job (expected {', '.join(_JOB_FIELDS)})")
    ident = _parse_id(entry, where, fail)
    who = f"{who} job {ident!r}"
    parts: tuple[Part, ...] = ()
    if "parts" in entry:
        if "demand" in entry:
            raise fail(f"{where}.parts", f"{who}: give either demand or parts, not both")
        for k in ("eligible", "requires", "gang"):
            if k in entry:
                why = "a job of parts runs as a gang already" if k == "gang" else "a job of parts gives each part its own eligible and requires"
                raise fail(f"{where}.{k}", f"{who}: {why}")
        parts = _parse_parts(entry["parts"], where, who, m, servers, fail)
        demand = parts[0].demand
    else:
        demand = _parse_vector(entry, where, "demand", m, fail)
        if not any(x > 0 for x in demand):
            raise fail(f"{where}.demand", f"{who} demands nothing; at least one resource must be positive")
    tasks = entry.get("tasks")
    if tasks is not None and (isinstance(tasks, bool) or not isinstance(tasks, int) or not 0 < tasks <= MAX_TASKS):
        raise fail(f"{where}.tasks", f"{who}: must be a positive integer (at most {MAX_TASKS:g}), or left out for an endless job, got {tasks!r}"[:200])
    duration = None
    if "duration" in entry:
        try:
            duration = parse_duration(entry["duration"])
        except DistributionError as exc:
            raise fail(f"{where}.duration", f"{who}: {exc}") from None
    elif tasks is not None:
        raise fail(f"{where}.duration", f"{who}: missing (a job of {tasks} tasks needs their duration: seconds, or a distribution)")
    arrival = entry.get("arrival", 0.0)
    if isinstance(arrival, bool) or not isinstance(arrival, (int, float)) or not math.isfinite(arrival) or not 0 <= arrival <= MAX_SECONDS:
        raise fail(f"{where}.arrival", f"{who}: must be seconds >= 0 (at most {MAX_SECONDS:g}), got {arrival!r}"[:200])
    constraint = parts[0].constraint if parts else _parse_constraint(entry, where, who, servers, fail)
    gang = entry.get("gang", False)
    if not isinstance(gang, bool):
        raise fail(f"{where}.gang", f"{who}: must be true or false, got {gang!r}"[:200])
    if gang:  # its tasks are one instance: all start together
        if tasks is None or tasks > MAX_INSTANCE_TASKS:
            raise fail(f"{where}.gang", f"{who}: a gang needs its number of tasks (at most {MAX_INSTANCE_TASKS}, all started together), got {tasks!r}")
        parts, tasks = (Part(demand, tasks, constraint),), 1
    return JobSpec(ident, demand, tasks, duration, float(arrival), constraint, parts)


def _parse_parts(raw: Any, where: str, who: str, m: int, servers: list[str], fail) -> tuple[Part, ...]:
    """A job's ``parts``: a non-empty list of {demand, count (default 1), eligible?, requires?},
    at most ``MAX_INSTANCE_TASKS`` tasks in all."""
    if not isinstance(raw, list) or not raw:
        raise fail(f"{where}.parts", f"{who}: must be a non-empty list of parts ({{demand, count, eligible, requires}}), got {raw!r}"[:200])
    parts = []
    for p, entry in enumerate(raw):
        at = f"{where}.parts[{p}]"
        if not isinstance(entry, Mapping):
            raise fail(at, f"{who}: a part must be a table with demand and count, got {entry!r}"[:200])
        for k in entry:
            if k not in _PART_FIELDS:
                raise fail(f"{at}.{k}", f"{who}: unknown field of a part (expected {', '.join(_PART_FIELDS)})")
        demand = _parse_vector(entry, at, "demand", m, fail)
        if not any(x > 0 for x in demand):
            raise fail(f"{at}.demand", f"{who} part {p} demands nothing; at least one resource must be positive")
        count = entry.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 0 < count <= MAX_INSTANCE_TASKS:
            raise fail(f"{at}.count", f"{who}: must be a positive integer (at most {MAX_INSTANCE_TASKS}), got {count!r}"[:200])
        parts.append(Part(demand, count, _parse_constraint(entry, at, who, servers, fail)))
    if instance_size(parts) > MAX_INSTANCE_TASKS:
        raise fail(f"{where}.parts", f"{who}: an instance of {instance_size(parts)} tasks; at most {MAX_INSTANCE_TASKS}")
    return tuple(parts)


def _check_runnable(servers: tuple[ServerSpec, ...], users: tuple[UserSpec, ...], fail) -> None:
    """Refuse a job no server could ever run: its constraint admits no server, or its
    demand fits on none of those it admits (a short-form user without constraints is
    left to :meth:`Scenario.unplaceable_users`, reported after the run as always)."""
    if not servers:
        return
    cap = np.array([sv.capacity for sv in servers], dtype=np.float64)
    attrs = [sv.attribute_map for sv in servers]
    order = sorted(range(len(servers)), key=lambda j: natural_key(servers[j].id))
    for i, u in enumerate(users):
        if not u.jobs and u.constraint.unconstrained:
            continue
        for k, job in enumerate(u.job_list):
            where = f"users[{i}].jobs[{k}]" if u.jobs else f"users[{i}]"
            who = f"user {u.id!r} job {job.id!r}" if u.jobs else f"user {u.id!r}"
            slots = []
            for p, part in enumerate(job.part_list):
                at = f"{where}.parts[{p}]" if job.parts else where
                admitted = np.array([part.constraint.admits(sv.id, a) for sv, a in zip(servers, attrs)])
                if not admitted.any():
                    what = "eligible" if part.constraint.eligible is not None and not part.constraint.requires else "requires"
                    if part.constraint.eligible is not None and part.constraint.requires:
                        what = "eligible/requires"
                    raise fail(f"{at}.{what}", f"{who}: no server matches its constraint ({_describe(part.constraint)})")
                if not (fit_mask(np.asarray(part.demand), cap, cap) & admitted).any():
                    raise fail(f"{at}.demand", f"{who}: its demand {list(part.demand)} fits on none of the {int(admitted.sum())} server(s) its constraint admits")
                slots.append(PartSlots(np.asarray(part.demand), part.count, admitted))
            if job.gang and pack(cap, cap, order, slots) is None:
                raise fail(f"{where}.parts", f"{who}: its instance of {job.instance_size} tasks fits on no set of servers at once, placed first fit on the empty cluster")


def _describe(c: Constraint) -> str:
    parts = []
    if c.eligible is not None:
        parts.append(f"eligible {sorted(c.eligible)[:5]}{'...' if len(c.eligible) > 5 else ''}")
    if c.requires:
        parts.append(f"requires {c.wire_requires()}")
    return ", ".join(parts)


def _parse_id(entry: Mapping, where: str, fail) -> str:
    if "id" not in entry:
        raise fail(f"{where}.id", "missing")
    ident = entry["id"]
    if not isinstance(ident, (str, int)) or isinstance(ident, bool) or str(ident) == "":
        raise fail(f"{where}.id", f"must be a non-empty string, got {ident!r}")
    if len(str(ident)) > 256:
        raise fail(f"{where}.id", "must have at most 256 characters (it is an address on the wire)")
    return str(ident)


def _parse_vector(entry: Mapping, where: str, vector_key: str, m: int, fail) -> tuple[float, ...]:
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
    return tuple(out)


def _parse_entry(entry: Any, kind: str, index: int, vector_key: str, m: int, fail, extra: tuple[str, ...] = ()) -> tuple[str, tuple[float, ...]]:
    where = f"{kind}[{index}]"
    if not isinstance(entry, Mapping):
        raise fail(where, f"must be an object with 'id' and '{vector_key}', got {entry!r}"[:200])
    for k in entry:
        if k not in ("id", vector_key, *extra):
            expected = ", ".join(repr(x) for x in ("id", vector_key, *extra))
            raise fail(f"{where}.{k}", f"unknown field (expected {expected}{', or id and jobs' if kind == 'users' else ''})")
    ident = _parse_id(entry, where, fail)
    return ident, _parse_vector(entry, where, vector_key, m, fail)


def _unique_ids(entries, kind: str, fail) -> None:
    seen: set[str] = set()
    for i, e in enumerate(entries):
        if e.id in seen:
            raise fail(f"{kind}[{i}].id", f"duplicate id {e.id!r}")
        seen.add(e.id)
