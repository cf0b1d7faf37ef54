"""The JSON Schema of a scenario file's structure: resources, servers, users, jobs,
constraints, durations and ``[generate]`` tables.

Built from the declarations the loader itself checks against (the bounds of
:mod:`dgdrf.model.scenario`, the distributions' parameters, the constraints' limits, the
generators and their keys), so the two cannot drift; what JSON Schema cannot say (a
vector has one number per resource, ids are unique, an ``eligible`` id names a server of
the scenario, min <= max) is said in the descriptions and left to the loader. This pure
layer knows no option: the run settings' schemas are given to :func:`scenario_schema` by
dgdrf/schema.py, which composes the whole schema and ships it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dgdrf.model.constraints import MAX_ATTRIBUTES, MAX_VALUES
from dgdrf.model.distributions import DISTRIBUTIONS, MAX_DURATION_S
from dgdrf.model.generators import GENERATOR_KEYS, GENERATORS, JOBS_NUMBERS, TRACE_JOB_KEYS
from dgdrf.model.google_trace import COMPARISONS
from dgdrf.model.scenario import MAX_ELIGIBLE, MAX_INSTANCE_TASKS, MAX_SECONDS, MAX_TASKS, SCENARIO_KEYS

DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: the ``$schema`` key of a file: the schema an editor checks it against
SCHEMA_KEY = {"type": "string", "description": "the path or URL of the JSON Schema this file follows (for editors; dgdrf does not read it)"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _positive_seconds(what: str) -> dict[str, Any]:
    return {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DURATION_S, "description": what}


def _duration() -> dict[str, Any]:
    """A job's duration: seconds, or a distribution's table (dgdrf/model/distributions.py)."""
    params = {
        "seconds": _positive_seconds("every task's duration, seconds"),
        "mean": _positive_seconds("mean, seconds"),
        "median": _positive_seconds("median, seconds (ln X ~ N(ln median, sigma^2))"),
        "sigma": {"type": "number", "minimum": 0, "description": "log-normal: the standard deviation of ln X"},
        "scale": _positive_seconds("scale, seconds"),
        "shape": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DURATION_S, "description": "shape"},
        "min": _positive_seconds("uniform: the lower end of the range; otherwise a clip bound (seconds; min <= max)"),
        "max": _positive_seconds("uniform: the upper end of the range; otherwise a clip bound (seconds; min <= max)"),
        "values": {"type": "array", "minItems": 1, "items": _positive_seconds("seconds"), "description": "the durations drawn from, uniformly (a trace's)"},
    }
    table: dict[str, Any] = {
        "type": "object",
        "description": "a distribution each task draws its duration from: dist and its parameters",
        "required": ["dist"],
        "properties": {"dist": {"enum": list(DISTRIBUTIONS), "description": "the distribution (numpy's generator of that name draws it)"}},
        "allOf": [],
    }
    for name, (required, optional) in DISTRIBUTIONS.items():
        table["allOf"].append({
            "if": {"properties": {"dist": {"const": name}}, "required": ["dist"]},
            "then": {
                "required": ["dist", *required],
                "properties": {"dist": True, **{k: params[k] for k in required + optional}},
                "additionalProperties": False,
            },
        })
    return {
        "description": "how long each task of the job runs: seconds, or a distribution ({dist = NAME, ...})",
        "anyOf": [_positive_seconds("seconds, the same for every task"), table],
    }


def _generate() -> dict[str, Any]:
    """A ``[generate]`` table (dgdrf/model/generators.py: generate_from_spec)."""
    common = {
        "kind": {"enum": list(GENERATORS), "description": "the generator: google-2011 (the thesis's world), google-2011-jobs (finite jobs) or google-trace (a Google 2011 trace's CSV files)"},
        "servers": {"type": "integer", "minimum": 1, "description": "servers (machines) to generate or pick from the trace"},
        "users": {"type": "integer", "minimum": 1, "description": "users to generate or pick from the trace"},
        "seed": {"type": "integer", "minimum": 0, "default": 0, "description": "the generator's seed (the data set; a run's own seed is the top-level seed)"},
    }
    path = {"type": "string", "minLength": 1}
    specific: dict[str, dict[str, Any]] = {
        "google-2011-jobs": {
            **{
                k: {"type": "number", ("exclusiveMinimum" if lo_open else "minimum"): lo, "maximum": hi, "default": default, "description": what}
                for k, (default, lo, lo_open, hi, what) in JOBS_NUMBERS.items()
            },
            "max_tasks": {"type": "integer", "minimum": 1, "maximum": MAX_TASKS, "description": "most tasks one job may have (default 10 x servers)"},
        },
        "google-trace": {
            "machine_events": {**path, "description": "the trace's machine_events CSV file (relative to the scenario file)"},
            "task_events": {**path, "description": "the trace's task_events CSV file (relative to the scenario file)"},
            "jobs": {"type": "boolean", "default": False, "description": "true: the trace's finite jobs; false: one endless task per user, the thesis's"},
            "task_constraints": {**path, "description": "jobs = true: the trace's task_constraints CSV file (with machine_attributes)"},
            "machine_attributes": {**path, "description": "jobs = true: the trace's machine_attributes CSV file (with task_constraints)"},
            "window": {
                "type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "number", "minimum": 0},
                "description": "jobs = true: [start, end], the trace seconds whose arrivals are kept (start < end)",
            },
            "comparisons": {"enum": list(COMPARISONS), "default": "skip", "description": "jobs = true: what to do with constraints other than EQUAL"},
        },
    }
    assert all(set(specific.get(kind, {})) == set(keys) for kind, keys in GENERATOR_KEYS.items())
    branches: list[dict[str, Any]] = []
    for kind in GENERATORS:
        keys = specific.get(kind, {})
        then: dict[str, Any] = {"properties": {k: True for k in (*common, *keys)}, "additionalProperties": False}
        if kind == "google-trace":
            then["required"] = ["machine_events", "task_events"]
            then["allOf"] = [
                {"if": {"required": ["task_constraints"]}, "then": {"required": ["machine_attributes"]}},
                {"if": {"required": ["machine_attributes"]}, "then": {"required": ["task_constraints"]}},
                {"if": {"not": {"required": ["jobs"], "properties": {"jobs": {"const": True}}}}, "then": {"properties": {k: False for k in TRACE_JOB_KEYS}}},
            ]
        branches.append({"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": then})
    properties = dict(common)
    for keys in specific.values():
        properties.update(keys)
    return {
        "type": "object",
        "description": "generate the servers and users instead of listing them (instead of resources, servers and users)",
        "required": ["kind", "servers", "users"],
        "properties": properties,
        "allOf": branches,
    }


def structure_defs() -> dict[str, Any]:
    """The ``$defs`` of a scenario's structure."""
    scalar = {"type": ["string", "number", "boolean"], "minLength": 1, "maxLength": 256, "description": "a string (1-256 characters), number or boolean; compared for equality (true is not 1)"}
    name = {"type": "string", "minLength": 1, "maxLength": 256}
    ident = {"type": ["string", "integer"], "minLength": 1, "maxLength": 256, "description": "a unique id (at most 256 characters; an integer is read as its text)"}
    vector = {
        "type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0},
        "description": "one finite number >= 0 per resource, in the order of resources",
    }
    demand = {**vector, "contains": {"type": "number", "exclusiveMinimum": 0}, "description": "a task's demand: one finite number >= 0 per resource, in the order of resources, at least one positive"}
    eligible = {
        "type": "array", "minItems": 1, "maxItems": MAX_ELIGIBLE, "items": {"type": ["string", "integer"]},
        "description": f"the ids of the servers its tasks may run on (servers of this scenario; at most {MAX_ELIGIBLE}); left out: any server",
    }
    requires = {
        "type": "object", "minProperties": 1, "maxProperties": MAX_ATTRIBUTES, "propertyNames": name,
        "additionalProperties": {"anyOf": [scalar, {"type": "array", "minItems": 1, "maxItems": MAX_VALUES, "items": scalar, "description": "any of these values"}]},
        "description": "the attributes a server must have: name = value, or a list of values any of which will do; left out: any server",
    }
    weight = {"type": "number", "exclusiveMinimum": 0, "default": 1, "description": "the user's weight w_i (weighted DRF: its share counts as G_i / w_i)"}
    tenant = {"type": "string", "minLength": 1, "pattern": "\\S", "description": "the user whose job stream this is, when a user has several that compete apart (UDRF); left out: its own id"}
    part = {
        "type": "object",
        "description": "a part of a job of parts: count tasks of its demand, where its constraint admits them, in every instance of the job",
        "required": ["demand"],
        "properties": {
            "demand": _ref("demand"),
            "count": {"type": "integer", "minimum": 1, "maximum": MAX_INSTANCE_TASKS, "default": 1, "description": "its tasks in one instance"},
            "eligible": _ref("eligible"),
            "requires": _ref("requires"),
        },
        "additionalProperties": False,
    }
    job = {
        "type": "object",
        "description": "a job: its tasks, their demand and duration, when it arrives and where it may run; or a job of parts, whose instances are placed whole (all or nothing)",
        "required": ["id"],
        "properties": {
            "id": {**ident, "description": "the job's id, unique among its user's jobs"},
            "demand": _ref("demand"),
            "parts": {
                "type": "array", "minItems": 1, "maxItems": MAX_INSTANCE_TASKS, "items": _ref("part"),
                "description": f"instead of demand: one instance is count tasks of every part, placed all at once or not at all, started and ended together (at most {MAX_INSTANCE_TASKS} tasks); tasks then counts instances",
            },
            "gang": {"type": "boolean", "default": False, "description": f"its tasks (at most {MAX_INSTANCE_TASKS}) are one instance: all start together or none does"},
            "tasks": {"type": "integer", "minimum": 1, "maximum": MAX_TASKS, "description": "its number of tasks (of a job of parts: instances); left out: endless (tasks keep coming)"},
            "duration": _ref("duration"),
            "arrival": {"type": "number", "minimum": 0, "maximum": MAX_SECONDS, "default": 0, "description": "when it arrives, seconds from the start"},
            "eligible": _ref("eligible"),
            "requires": _ref("requires"),
        },
        "additionalProperties": False,
        "oneOf": [{"required": ["demand"]}, {"required": ["parts"], "not": {"anyOf": [{"required": ["eligible"]}, {"required": ["requires"]}, {"required": ["gang"]}]}}],
        "allOf": [
            {"if": {"required": ["tasks"]}, "then": {"required": ["duration"]}},
            {"if": {"required": ["gang"], "properties": {"gang": {"const": True}}}, "then": {"required": ["tasks"], "properties": {"tasks": {"maximum": MAX_INSTANCE_TASKS}}}},
        ],
    }
    user_short = {
        "required": ["id", "demand"],
        "properties": {"id": True, "demand": _ref("demand"), "weight": _ref("weight"), "eligible": _ref("eligible"), "requires": _ref("requires"), "tenant": _ref("tenant")},
        "additionalProperties": False,
    }
    user_jobs = {
        "required": ["id", "jobs"],
        "properties": {
            "id": True,
            "jobs": {"type": "array", "minItems": 1, "items": _ref("job"), "description": "its jobs (ids unique), served in arrival order"},
            "weight": _ref("weight"),
            "tenant": _ref("tenant"),
        },
        "additionalProperties": False,
    }
    user = {
        "type": "object",
        "description": "a user: {id, demand} (the thesis's: one endless stream of tasks that never end, optionally with weight, eligible, requires, tenant) or {id, jobs} (optionally with weight, tenant)",
        "properties": {"id": ident},
        "if": {"required": ["jobs"]},
        "then": user_jobs,
        "else": user_short,
    }
    server = {
        "type": "object",
        "description": "a resource node: its id, capacity vector c_l and attributes",
        "required": ["id", "capacity"],
        "properties": {
            "id": ident,
            "capacity": {**vector, "description": "its capacity c_l: one finite number >= 0 per resource, in the order of resources"},
            "attributes": {
                "type": "object", "maxProperties": MAX_ATTRIBUTES, "propertyNames": name, "additionalProperties": scalar,
                "description": "what placement constraints (requires) match: name = string, number or boolean",
            },
        },
        "additionalProperties": False,
    }
    return {
        "server": server,
        "user": user,
        "job": job,
        "part": part,
        "demand": demand,
        "weight": weight,
        "tenant": tenant,
        "eligible": eligible,
        "requires": requires,
        "duration": _duration(),
        "generate": _generate(),
    }


def scenario_schema(settings: Mapping[str, Mapping[str, Any]], schema_id: str) -> dict[str, Any]:
    """The whole schema of a scenario file: its structure and ``settings``, the schemas of
    the run settings it may give (by name, in the order to list them)."""
    scenario = {
        "$schema": SCHEMA_KEY,
        "name": {"type": "string", "description": "the scenario's name (results and reports name it); left out: the file's stem"},
        "description": {"type": "string", "description": "what the scenario is (not read)"},
        "resources": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string", "minLength": 1}, "description": "the names of the resources every vector ranges over, e.g. [\"cpu\", \"memory\"]"},
        "servers": {"type": "array", "minItems": 1, "items": _ref("server"), "description": "the servers (ids unique)"},
        "users": {"type": "array", "minItems": 1, "items": _ref("user"), "description": "the users (ids unique)"},
        "generate": _ref("generate"),
    }
    assert set(scenario) == set(SCENARIO_KEYS) and not set(scenario) & set(settings)
    return {
        "$schema": DRAFT,
        "$id": schema_id,
        "title": "dgdrf scenario",
        "description": (
            "A dgdrf scenario file (TOML or JSON): resources, servers and users, or a [generate] table; "
            "its other keys are run settings (dgdrf run's options; command-line flags override them). "
            "dgdrf checks more than a schema can say (one number per resource, unique ids, eligible servers that exist, min <= max); "
            "a top-level key it does not know it ignores with a warning."
        ),
        "type": "object",
        "properties": {**scenario, **settings},
        "additionalProperties": False,
        "oneOf": [
            {"required": ["resources", "servers", "users"], "not": {"required": ["generate"]}},
            {"required": ["generate"], "not": {"anyOf": [{"required": ["resources"]}, {"required": ["servers"]}, {"required": ["users"]}]}},
        ],
        "$defs": structure_defs(),
    }
