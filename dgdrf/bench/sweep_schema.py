"""The JSON Schema of a sweep file (dgdrf/bench/grid.py: :func:`~dgdrf.bench.grid.load_sweep`).

Built from what the loader checks against: the grid's keys, the known policies, and every
run parameter's declaration (dgdrf/options.py: :func:`~dgdrf.options.json_schema`), so
the schema cannot drift from them. What JSON Schema cannot say (a scenario file exists
and is valid, ``part_of`` names a sweep whose grid holds this one's runs, every
combination is a valid run) the loader checks. dgdrf/schema.py composes and ships it.
"""

from __future__ import annotations

from typing import Any

from dgdrf.bench.grid import DEFAULT_DATA_SEED, GRID_KEYS, PARAM_ALIASES
from dgdrf.model.scenario_schema import DRAFT, SCHEMA_KEY


def _one_or_list(item: dict[str, Any], description: str, unique: bool = True) -> dict[str, Any]:
    """A value, or a non-empty list of values (the loader reads a value as a list of one)."""
    listed: dict[str, Any] = {"type": "array", "minItems": 1, "items": item}
    if unique:
        listed["uniqueItems"] = True
    return {"description": description, "anyOf": [item, listed]}


def sweep_schema(schema_id: str) -> dict[str, Any]:
    """The schema of a sweep file, its ``$id`` ``schema_id``."""
    from dgdrf.config import GROUPS
    from dgdrf.options import declared, json_schema
    from dgdrf.policies import POLICIES

    positive = {"type": "integer", "minimum": 1}
    non_blank = {"type": "string", "minLength": 1, "pattern": "\\S"}
    grid: dict[str, Any] = {
        "name": {
            "type": "string", "allOf": [{"pattern": "\\S"}, {"pattern": "^[^/\\\\\\u0000]*$"}],
            "description": "the sweep's name: its results go to results/<name>/ (no slashes)",
        },
        "policies": _one_or_list({"enum": list(POLICIES)}, "the policies to run, each at every point of the grid"),
        "neighbors": _one_or_list(positive, "overlay neighbours per node P (a centralized policy runs at the first only)"),
        "seeds": _one_or_list({"type": "integer", "minimum": 0}, "run seeds: latencies, losses, gossip partners (not the data set)"),
        "servers": _one_or_list(positive, "servers of the generated Google-2011-like data sets (with users; instead of scenarios)"),
        "users": _one_or_list(positive, "users of the generated Google-2011-like data sets (with servers; every servers x users pair is one)"),
        "scenarios": _one_or_list(non_blank, "scenario files (relative to the sweep file; their names distinct), each a data set (instead of servers and users)"),
        "data_seed": {"type": "integer", "minimum": 0, "default": DEFAULT_DATA_SEED, "description": "the generator's seed of the servers x users data sets"},
        "part_of": {**non_blank, "description": "the file of the whole sweep this one is a part of (its runs a subset of that grid's); the results go to the whole sweep's directory"},
    }
    assert list(grid) == list(GRID_KEYS)
    params: dict[str, Any] = {}
    for d in declared(*GROUPS):
        if d.name in ("policy", "seed", "neighbors"):  # policies, seeds, neighbors above
            continue
        option = json_schema(d)
        params[d.name] = _one_or_list({k: v for k, v in option.items() if k != "description"}, f"run parameter, a value or a list of values to vary: {option['description']}", unique=False)
    for alias, name in PARAM_ALIASES.items():
        params[alias] = {**params[name], "description": f"another name of {name}: {params[name]['description']}"}
    table = {
        "type": "object",
        "description": "the grid: every combination of data set, policy, neighbour count, seed and the run parameters listed is one run",
        "required": ["name", "policies", "neighbors", "seeds"],
        "properties": {**grid, **params},
        "additionalProperties": False,
        "if": {"required": ["scenarios"]},
        "then": {"not": {"anyOf": [{"required": ["servers"]}, {"required": ["users"]}]}},
        "else": {"required": ["servers", "users"]},
        "not": {"anyOf": [{"required": [alias, name]} for alias, name in PARAM_ALIASES.items()]},  # a parameter given twice
    }
    return {
        "$schema": DRAFT,
        "$id": schema_id,
        "title": "dgdrf sweep",
        "description": (
            "A dgdrf sweep file (TOML, for dgdrf sweep): one [sweep] table, the grid of runs. "
            "The loader also checks what the schema cannot say: the scenario files exist and are valid, "
            "part_of names a sweep whose grid holds every run of this one, and every combination is a valid run."
        ),
        "type": "object",
        "required": ["sweep"],
        "properties": {"$schema": SCHEMA_KEY, "sweep": table},
        "additionalProperties": False,
    }
