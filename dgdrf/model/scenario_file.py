"""Scenario files: a scenario read from TOML or JSON, explicit or from a generator.

A file either lists resources, servers and users (validated by
:func:`dgdrf.model.scenario.parse_scenario`) or names a generator in a ``[generate]``
table (:func:`dgdrf.model.generators.generate_from_spec`); its other top-level keys are
run settings, kept as found here and checked against the declared options by
:func:`dgdrf.config.load_scenario`, but for ``$schema``: the path or URL of the file's
JSON Schema (dgdrf/schema.py), for editors, not read. This module sits above both the
scenario's data and the generators, so neither imports the other's reader (no import
circle).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dgdrf.errors import ScenarioError
from dgdrf.model.generators import generate_from_spec
from dgdrf.model.scenario import SCENARIO_KEYS, Scenario, default_name, parse_scenario


def read_scenario_file(path: str | Path) -> Scenario:
    """Read a scenario from a .toml or .json file, validating every field of the
    scenario; its run settings are kept as found (dgdrf.config.load_scenario checks them
    against the declared options)."""
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
    return parse_document(data, source=str(p), base_dir=p.parent)


def parse_document(data: Any, source: str = "<scenario>", base_dir: Path | None = None) -> Scenario:
    """A decoded scenario document: its name, its run settings (as found), and its
    servers and users, explicit or generated; errors name ``source`` and the field."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: top level must be an object/table, got {type(data).__name__}")
    settings = {k: v for k, v in data.items() if k not in SCENARIO_KEYS}
    name = data.get("name", default_name(source))
    if not isinstance(name, str):
        raise ScenarioError(f"{source}: name: must be a string, got {name!r}")
    if not isinstance(data.get("$schema", ""), str):  # for editors (dgdrf/schema.py); not read
        raise ScenarioError(f"{source}: $schema: must be the path or URL of the file's JSON Schema, got {data['$schema']!r}"[:200])
    if "generate" in data:
        if "servers" in data or "users" in data or "resources" in data:
            raise ScenarioError(f"{source}: generate: give either a [generate] table or explicit resources/servers/users, not both")
        scenario = generate_from_spec(data["generate"], source=source, base_dir=base_dir)
        return Scenario(scenario.resources, scenario.servers, scenario.users, name=name, settings=settings, warnings=scenario.warnings)
    return parse_scenario(data, source=source, name=name, settings=settings)
