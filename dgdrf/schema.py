"""JSON Schemas (draft 2020-12) of dgdrf's input files: scenario files and sweep files.

Editors validate and complete a file with its schema (a TOML file's first line
``#:schema ./scenario.schema.json`` for taplo / Even Better TOML; a JSON scenario's
``"$schema"`` key). Both are generated from the code's own declarations, never written
by hand:

- a scenario file (:func:`scenario_schema`): its structure from the loader's bounds and
  tables (dgdrf/model/scenario_schema.py), its run settings from every built-in option's
  declaration (dgdrf/options.py: :func:`~dgdrf.options.json_schema`), ``policy`` one of
  the known policies;
- a sweep file (:func:`sweep_schema`, dgdrf/bench/sweep_schema.py): the grid's keys and
  every run parameter, from the same declarations.

Options registered from outside the package (:func:`dgdrf.options.register`) are not in
them: a schema is the same wherever it is made. The package ships the generated files as
``dgdrf/data/scenario.schema.json`` and ``dgdrf/data/sweep.schema.json``
(tests/test_schema.py holds them equal to what the code generates); ``dgdrf schema
scenario`` and ``dgdrf schema sweep`` print them. After changing an option, a bound or a
key, regenerate the shipped files::

    python -m dgdrf.schema --write     # or --check: exit 1 when a shipped file is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

#: the files that have a schema, as ``dgdrf schema`` names them
KINDS = ("scenario", "sweep")
#: each schema's ``$id``: a name, not a place (nothing is served there)
SCHEMA_IDS = {kind: f"urn:dgdrf:schema:{kind}" for kind in KINDS}


def scenario_schema() -> dict[str, Any]:
    """The schema of a scenario file (TOML or JSON)."""
    from dgdrf.config import GROUPS
    from dgdrf.model.scenario_schema import scenario_schema as structure
    from dgdrf.options import declared, json_schema
    from dgdrf.policies import POLICIES

    settings = {d.name: json_schema(d) for d in declared(*GROUPS)}
    policy = settings["policy"]  # declared a non-empty string: the policies are above options
    policy.pop("minLength")
    policy["enum"] = list(POLICIES)
    return structure(settings, SCHEMA_IDS["scenario"])


def sweep_schema() -> dict[str, Any]:
    """The schema of a sweep file."""
    from dgdrf.bench.sweep_schema import sweep_schema as sweep

    return sweep(SCHEMA_IDS["sweep"])


def schema(kind: str) -> dict[str, Any]:
    """The schema of ``kind`` (one of :data:`KINDS`)."""
    if kind == "scenario":
        return scenario_schema()
    if kind == "sweep":
        return sweep_schema()
    raise ValueError(f"no schema of {kind!r}; known: {', '.join(KINDS)}")


def render(kind: str) -> str:
    """The schema as its shipped file holds it: JSON, indented by 2, ASCII, one final newline."""
    return json.dumps(schema(kind), indent=2) + "\n"


def shipped_name(kind: str) -> str:
    return f"{kind}.schema.json"


def shipped(kind: str) -> str:
    """The text of the schema the package ships (dgdrf/data/KIND.schema.json)."""
    return (resources.files("dgdrf") / "data" / shipped_name(kind)).read_text(encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dgdrf.schema", description="Write or check the JSON Schemas shipped in dgdrf/data.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", action="store_true", help="write dgdrf/data/KIND.schema.json from the code")
    what.add_argument("--check", action="store_true", help="exit 1 when a shipped schema differs from what the code generates")
    args = parser.parse_args(argv)
    data = Path(__file__).resolve().parent / "data"
    stale = []
    for kind in KINDS:
        path = data / shipped_name(kind)
        text = render(kind)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if args.write:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
        else:
            stale.append(path)
    for path in stale:
        print(f"{path}: stale; regenerate with python -m dgdrf.schema --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
