"""The JSON Schemas of scenario and sweep files (dgdrf/schema.py): the shipped files are
what the code generates; every scenario and sweep file of the repository validates; the
schema and the loader agree on what is wrong, where a schema can say it; ``$schema`` is a
known, ignored key; ``dgdrf schema KIND`` prints the shipped file."""

from __future__ import annotations

import copy
import fnmatch
import json
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dgdrf import schema as schemas
from dgdrf.bench.grid import load_sweep, parse_sweep
from dgdrf.cli import main
from dgdrf.config import RunConfig, checked_settings, load_scenario
from dgdrf.errors import ConfigError, DgdrfError, ScenarioError
from dgdrf.model.generators import google_2011_jobs_scenario
from dgdrf.model.scenario_file import parse_document
from dgdrf.options import json_schema

ROOT = Path(__file__).resolve().parents[1]


@cache
def validator(kind: str) -> Draft202012Validator:
    """A validator of the shipped schema of ``kind``."""
    return Draft202012Validator(json.loads(schemas.shipped(kind)))


def read(path: Path) -> Any:
    if path.suffix == ".toml":
        return tomllib.loads(path.read_text(encoding="utf-8"))
    return json.loads(path.read_text(encoding="utf-8"))


def _repository_files() -> list[tuple[str, Path]]:
    """(kind, path) of every scenario and sweep file in the repository: the embedded default
    is a scenario; under configs/, examples/ and bench/ a TOML file with a [sweep] table is
    a sweep, any other TOML file a scenario, and a JSON file a scenario when it has a
    scenario's keys (the others are results)."""
    found = [("scenario", ROOT / "dgdrf" / "data" / "default.toml")]
    for top in ("configs", "examples", "bench"):
        for p in sorted((ROOT / top).rglob("*.toml")):
            found.append(("sweep" if "sweep" in read(p) else "scenario", p))
    for p in sorted([*(ROOT / "configs").rglob("*.json"), *(ROOT / "examples").rglob("*.json"), *(ROOT / "bench").rglob("*.json")]):
        data = read(p)
        if isinstance(data, dict) and ("generate" in data or {"resources", "servers", "users"} <= set(data)):
            found.append(("scenario", p))
    return found


FILES = _repository_files()


def test_the_repository_has_files_of_both_kinds():
    kinds = [k for k, _ in FILES]
    assert kinds.count("scenario") >= 10 and kinds.count("sweep") >= 10


@pytest.mark.parametrize("kind, path", FILES, ids=[str(p.relative_to(ROOT)) for _, p in FILES])
def test_repository_file_validates(kind, path):
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(kind).iter_errors(read(path))]
    assert errors == []


# -- the shipped files ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", schemas.KINDS)
def test_shipped_schema_is_what_the_code_generates(kind):
    assert schemas.shipped(kind) == schemas.render(kind), "stale: regenerate with python -m dgdrf.schema --write"
    assert schemas.main(["--check"]) == 0


@pytest.mark.parametrize("kind", schemas.KINDS)
def test_shipped_schema_is_a_draft_2020_12_schema(kind):
    doc = json.loads(schemas.shipped(kind))
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == schemas.SCHEMA_IDS[kind] and doc["title"] == f"dgdrf {kind}"


@pytest.mark.parametrize("kind", schemas.KINDS)
def test_a_wheel_ships_the_schema(kind):
    """The package data patterns of pyproject.toml take dgdrf/data/KIND.schema.json into a
    wheel (a non-editable install reads it with importlib.resources)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["dgdrf"]
    assert any(fnmatch.fnmatch(f"data/{schemas.shipped_name(kind)}", p) for p in patterns)


@pytest.mark.parametrize("kind", schemas.KINDS)
def test_cli_prints_the_shipped_schema(kind, capsys):
    assert main(["schema", kind]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == json.loads(schemas.shipped(kind)) and out == schemas.shipped(kind)


@pytest.mark.parametrize("argv", [["schema", "config"], ["schema"]])
def test_cli_schema_of_an_unknown_kind_is_a_one_line_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and out == ""
    assert err.startswith("dgdrf: error: schema: ") and err.count("\n") == 1


# -- options: the schema of each is what Option.check accepts ------------------------------
def _probes(d) -> list[Any]:
    """Values around an option's bounds and of other types."""
    o = d.option
    values: list[Any] = [json.loads(json.dumps(d.default)), None, True, "x", "", 1, -1, 0, 0.5, 1.5, [1, 2], [2, 1], [1, 2, 3], list(o.choices)]
    for bound in (o.lo, o.hi):
        if bound is not None:
            values += [bound, bound - 1, bound + 1, bound - 0.5, bound + 0.5, [bound, bound], [bound - 1, bound]]
    values += list(o.choices) + [c.upper() for c in o.choices]
    return values


@pytest.mark.parametrize("d", RunConfig.options(), ids=lambda d: d.name)
def test_option_schema_accepts_what_the_option_accepts(d):
    v = Draft202012Validator(json_schema(d))
    for value in _probes(d):
        if isinstance(value, float) and value.is_integer() and d.option.kind == "int":
            continue  # JSON Schema's integer takes 2.0; the option, a TOML integer only
        try:
            d.option.check(value)
            accepted = True
        except ValueError:
            accepted = False
        if d.option.kind == "pair" and isinstance(value, list) and len(value) == 2 and value[0] > value[1]:
            continue  # min <= max: said in the description, beyond JSON Schema
        assert v.is_valid(value) == accepted, (d.name, value)


# -- scenarios: the schema and the loader agree ----------------------------------------------
EXPLICIT: dict[str, Any] = {
    "name": "agree",
    "policy": "drf",
    "tick": 0.5,
    "resources": ["cpu", "memory"],
    "servers": [{"id": "s1", "capacity": [1, 1], "attributes": {"rack": "r1", "ssd": True}}, {"id": 2, "capacity": [2, 0.5]}],
    "users": [
        {"id": "u1", "demand": [0.1, 0.1], "weight": 2, "eligible": ["s1", 2]},
        {"id": "u2", "tenant": "t", "jobs": [
            {"id": "j1", "demand": [0.1, 0], "tasks": 3, "duration": {"dist": "exp", "mean": 3, "max": 10}, "arrival": 1, "requires": {"rack": ["r1", "r2"]}},
            {"id": "j2", "demand": [0.2, 0.1]},
        ]},
    ],
}
GENERATED: dict[str, Any] = {"name": "agree-generated", "latency_ms": [1, 2], "generate": {"kind": "google-2011-jobs", "servers": 3, "users": 2, "seed": 1, "horizon": 60, "load": 0.5}}
class _Drop:
    """The field left out (its repr names it, so that test ids are the same in every
    process: pytest-xdist's workers must collect the same tests)."""

    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()


def changed(base: dict, path: tuple, value: Any) -> dict:
    doc = copy.deepcopy(base)
    *head, last = path
    node = doc
    for k in head:
        node = node[k]
    if value is DROP:
        del node[last]
    else:
        node[last] = value
    return doc


def loader_refuses(doc: dict) -> str | None:
    """The loader's one-line error for ``doc``, or None when it loads."""
    try:
        checked_settings(parse_document(copy.deepcopy(doc), "<doc>"), "<doc>")
    except DgdrfError as exc:
        return str(exc)
    return None


SCENARIO_CASES: list[tuple[dict[str, Any], tuple[Any, ...], Any]] = [
    (EXPLICIT, (), None),
    (EXPLICIT, ("servers", 0, "capacity", 0), "x"),
    (EXPLICIT, ("servers", 0, "capacity", 1), -1),
    (EXPLICIT, ("servers", 0, "colour"), "red"),
    (EXPLICIT, ("servers", 0, "id"), ""),
    (EXPLICIT, ("servers", 0, "id"), True),
    (EXPLICIT, ("servers", 0, "attributes"), {"rack": ""}),
    (EXPLICIT, ("servers", 0, "attributes"), {"rack": ["r1"]}),
    (EXPLICIT, ("servers",), []),
    (EXPLICIT, ("resources",), ["cpu", "cpu"]),
    (EXPLICIT, ("resources",), []),
    (EXPLICIT, ("users",), DROP),
    (EXPLICIT, ("users", 0, "demand"), [0, 0]),
    (EXPLICIT, ("users", 0, "weight"), 0),
    (EXPLICIT, ("users", 0, "tenant"), " "),
    (EXPLICIT, ("users", 0, "eligible"), []),
    (EXPLICIT, ("users", 0, "requires"), {}),
    (EXPLICIT, ("users", 0, "tasks"), 3),
    (EXPLICIT, ("users", 1, "demand"), [1, 1]),
    (EXPLICIT, ("users", 1, "jobs"), []),
    (EXPLICIT, ("users", 1, "jobs", 0, "colour"), "red"),
    (EXPLICIT, ("users", 1, "jobs", 0, "tasks"), 0),
    (EXPLICIT, ("users", 1, "jobs", 0, "tasks"), True),
    (EXPLICIT, ("users", 1, "jobs", 0, "tasks"), DROP),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), DROP),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), 0),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), 2e9),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), {"dist": "exp"}),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), {"dist": "exp", "mean": 1, "seconds": 3}),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), {"dist": "zipf", "a": 2}),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), {"dist": "lognormal", "median": 1, "sigma": 0}),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), {"dist": "lognormal", "median": 1, "sigma": -1}),
    (EXPLICIT, ("users", 1, "jobs", 0, "duration"), {"dist": "empirical", "values": []}),
    (EXPLICIT, ("users", 1, "jobs", 0, "arrival"), -1),
    (EXPLICIT, ("policy",), 3),
    (EXPLICIT, ("policy",), "tsf"),
    (EXPLICIT, ("tick",), 0),
    (EXPLICIT, ("latency_ms",), [1, 2, 3]),
    (EXPLICIT, ("gradient",), "nope"),
    (EXPLICIT, ("share_level",), 4),
    (EXPLICIT, ("sample_every",), None),
    (EXPLICIT, ("name",), 3),
    (EXPLICIT, ("generate",), GENERATED["generate"]),
    (EXPLICIT, ("$schema",), "../dgdrf/data/scenario.schema.json"),
    (EXPLICIT, ("$schema",), 3),
    (GENERATED, (), None),
    (GENERATED, ("generate", "kind"), "google-2012"),
    (GENERATED, ("generate", "kind"), "google-2011"),
    (GENERATED, ("generate", "servers"), DROP),
    (GENERATED, ("generate", "servers"), 0),
    (GENERATED, ("generate", "seed"), -1),
    (GENERATED, ("generate", "load"), 0),
    (GENERATED, ("generate", "load"), 1001),
    (GENERATED, ("generate", "constrained"), 1.5),
    (GENERATED, ("generate", "max_tasks"), 0),
    (GENERATED, ("generate", "colour"), "red"),
    (GENERATED, ("resources",), ["cpu"]),
]


@pytest.mark.parametrize("base, path, value", SCENARIO_CASES, ids=[f"{b['name']}:{'.'.join(map(str, p)) or 'as-is'}={v!r}"[:80] for b, p, v in SCENARIO_CASES])
def test_schema_and_loader_agree_on_a_scenario(base, path, value):
    doc = changed(base, path, value) if path else copy.deepcopy(base)
    refused = loader_refuses(doc)
    assert validator("scenario").is_valid(doc) == (refused is None), refused


@pytest.mark.parametrize("path, value, why", [
    (("servers", 0, "capacity"), [1], "one number per resource"),
    (("users", 0, "eligible"), ["s9"], "a server of the scenario"),
    (("servers", 1, "id"), "s1", "unique ids"),
])
def test_what_only_the_loader_checks(path, value, why):
    doc = changed(EXPLICIT, path, value)
    assert validator("scenario").is_valid(doc) and loader_refuses(doc) is not None, why


@pytest.mark.parametrize("path, value", [
    (("servers", 0, "capacity", 0), "x"),
    (("servers", 0, "capacity", 0), -1.0),
    (("users", 1, "jobs", 0, "priority"), 3),
    (("policy",), 2),
])
def test_the_loader_refuses_a_bad_file_in_one_line(tmp_path, capsys, path, value):
    """A scenario file the schema refuses, the loader refuses too, and `dgdrf run` says so
    in one line naming the file and the field."""
    doc = changed(EXPLICIT, path, value)
    assert not validator("scenario").is_valid(doc)
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(doc))
    with pytest.raises(ScenarioError):
        load_scenario(file)
    assert main(["run", "--quiet", "--scenario", str(file)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"dgdrf: error: {file}: ") and err.count("\n") == 1 and str(path[-1]) in err


def test_the_exchange_format_validates():
    """What `dgdrf scenario` writes (Scenario.to_dict) is a scenario file."""
    scenario = google_2011_jobs_scenario(4, 3, seed=5, horizon=120.0)
    errors = [e.message for e in validator("scenario").iter_errors(scenario.to_dict())]
    assert errors == []


# -- $schema: for editors, not read ----------------------------------------------------------
@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_a_scenario_may_name_its_schema(tmp_path, fmt):
    file = tmp_path / f"s.{fmt}"
    if fmt == "toml":
        file.write_text('#:schema ../dgdrf/data/scenario.schema.json\n"$schema" = "../dgdrf/data/scenario.schema.json"\npolicy = "fifo"\n[generate]\nkind = "google-2011"\nservers = 3\nusers = 2\n')
    else:
        file.write_text(json.dumps({"$schema": "../dgdrf/data/scenario.schema.json", "policy": "fifo", "generate": {"kind": "google-2011", "servers": 3, "users": 2}}))
    assert validator("scenario").is_valid(read(file))
    scenario = load_scenario(file)
    assert scenario.warnings == () and scenario.settings == {"policy": "fifo"} and len(scenario.servers) == 3


def test_a_sweep_may_name_its_schema(tmp_path):
    file = tmp_path / "s.toml"
    file.write_text('"$schema" = "../dgdrf/data/sweep.schema.json"\n[sweep]\nname = "s"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [3]\nusers = [2]\n')
    assert validator("sweep").is_valid(read(file))
    assert load_sweep(file).name == "s"
    file.write_text('"$schema" = 1\n[sweep]\nname = "s"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [3]\nusers = [2]\n')
    with pytest.raises(ConfigError, match=r"\$schema"):
        load_sweep(file)


# -- sweeps: the schema and the loader agree -------------------------------------------------
SWEEP: dict[str, Any] = {"sweep": {"name": "agree", "policies": ["drf", "dgdrf"], "neighbors": [2, 4], "seeds": 1, "servers": 4, "users": [2], "loss": [0.0, 0.1], "latency_ms": [1, 5], "gossip_period": 0.5}}
SWEEP_CASES: list[tuple[tuple[str, ...], Any]] = [
    ((), None),
    (("sweep", "policies"), ["nope"]),
    (("sweep", "policies"), "drf"),
    (("sweep", "policies"), []),
    (("sweep", "seeds"), [1, 1]),
    (("sweep", "neighbors"), 0),
    (("sweep", "name"), "a/b"),
    (("sweep", "name"), " "),
    (("sweep", "users"), DROP),
    (("sweep", "scenarios"), ["../configs/thesis-100x20.toml"]),
    (("sweep", "loss"), 2),
    (("sweep", "loss"), []),
    (("sweep", "latency_ms"), [[1, 5], [2, 6]]),
    (("sweep", "latency_ms"), [1, 5, 6]),
    (("sweep", "policy"), "drf"),
    (("sweep", "seed"), 1),
    (("sweep", "gradient_period"), 0.2),
    (("sweep", "gradient"), ["toolbox", "stamped"]),
    (("sweep", "data_seed"), -1),
    (("sweep", "churn_joins"), 100_001),
    (("params",), {"loss": [0.1]}),
]


@pytest.mark.parametrize("path, value", SWEEP_CASES, ids=[f"{'.'.join(p) or 'as-is'}={v!r}"[:60] for p, v in SWEEP_CASES])
def test_schema_and_loader_agree_on_a_sweep(path, value):
    doc = changed(SWEEP, path, value) if path else copy.deepcopy(SWEEP)
    try:
        parse_sweep(doc, base=ROOT / "bench")
        refused = None
    except DgdrfError as exc:
        refused = str(exc)
    assert validator("sweep").is_valid(doc) == (refused is None), refused


TRACE = {"kind": "google-trace", "servers": 3, "users": 2, "machine_events": "m.csv", "task_events": "t.csv"}


@pytest.mark.parametrize("changes, valid", [
    ({}, True),
    ({"jobs": True, "window": [0, 60], "comparisons": "expand", "task_constraints": "c.csv", "machine_attributes": "a.csv"}, True),
    ({"window": [0, 60]}, False),  # only with jobs = true
    ({"jobs": False, "comparisons": "skip"}, False),
    ({"jobs": True, "task_constraints": "c.csv"}, False),  # with machine_attributes
    ({"jobs": True, "comparisons": "ignore"}, False),
    ({"jobs": "yes"}, False),
    ({"task_events": ""}, False),
    ({"horizon": 60}, False),  # google-2011-jobs' key
])
def test_a_trace_table(changes, valid):
    """A google-trace [generate] table: the schema refuses what the loader refuses before
    it reads the trace's files (which these tables do not have)."""
    doc = {"generate": {**TRACE, **changes}}
    assert validator("scenario").is_valid(doc) == valid
    if not valid:
        assert loader_refuses(doc) is not None
