"""Scenario files (.toml / .json): every bad field is a ScenarioError naming the file, the
field path and the problem; unknown top-level keys are warnings; valid files round-trip;
the Google-2011-like generator is a deterministic function of (servers, users, seed)."""

from __future__ import annotations

import json
import math

import pytest

from dgdrf.errors import ScenarioError
from dgdrf.model.generators import DEMAND_MODEL, GOOGLE_2011_MACHINES, google_2011_scenario
from dgdrf.config import load_scenario
from dgdrf.model.scenario import Scenario

RES2 = ["cpu", "memory"]
SERVERS2 = [{"id": "s1", "capacity": [1.0, 1.0]}, {"id": "s2", "capacity": [0.5, 0.25]}]
USERS2 = [{"id": "u1", "demand": [0.1, 0.05]}, {"id": "u2", "demand": [0.02, 0.2]}]


def doc(**changes):
    """A valid 2-resource scenario document with some top-level keys replaced/removed."""
    d = {"resources": list(RES2), "servers": json.loads(json.dumps(SERVERS2)), "users": json.loads(json.dumps(USERS2))}
    for k, v in changes.items():
        if v is _DROP:
            d.pop(k, None)
        else:
            d[k] = v
    return d


_DROP = object()


def write_json(tmp_path, data, name="scen.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data))  # python json writes NaN/Infinity, as the spec allows loading them
    return p


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isnan(v):
            return "nan"
        if isinstance(v, float) and math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def write_toml(tmp_path, data, name="scen.toml"):
    """Top-level scalars/arrays first, then tables (e.g. [generate])."""
    lines = [f"{k} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{kk} = {toml_value(vv)}" for kk, vv in v.items()]
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


WRITERS = {"json": write_json, "toml": write_toml}


@pytest.fixture(params=["json", "toml"])
def fmt(request):
    return request.param


def expect_error(path, *fragments) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    msg = str(info.value)
    assert "\n" not in msg, f"multi-line error: {msg!r}"
    assert path.name in msg, f"file name missing from {msg!r}"
    for f in fragments:
        assert f in msg, f"{f!r} missing from {msg!r}"
    return msg


# --------------------------------------------------------------------------- valid files


def test_valid_json_and_toml_load(tmp_path, fmt):
    p = WRITERS[fmt](tmp_path, doc())
    s = load_scenario(p)
    assert s.resources == ("cpu", "memory")
    assert [(x.id, x.capacity) for x in s.servers] == [("s1", (1.0, 1.0)), ("s2", (0.5, 0.25))]
    assert [(x.id, x.demand) for x in s.users] == [("u1", (0.1, 0.05)), ("u2", (0.02, 0.2))]
    assert s.warnings == ()
    assert s.name == "scen"


def test_three_resource_scenario_loads(tmp_path, fmt):
    data = {
        "resources": ["cpu", "memory", "disk"],
        "servers": [{"id": "p1", "capacity": [24, 36, 54]}, {"id": "p2", "capacity": [8, 8, 8]}],
        "users": [{"id": "a", "demand": [2, 4, 3]}, {"id": "b", "demand": [3, 2, 6]}, {"id": "c", "demand": [1, 3, 0]}],
    }
    s = load_scenario(WRITERS[fmt](tmp_path, data))
    assert s.resources == ("cpu", "memory", "disk")
    assert s.capacity_matrix().shape == (2, 3)
    assert s.demand_matrix().shape == (3, 3)
    assert list(s.total_capacity()) == [32.0, 44.0, 62.0]
    assert s.users[2].demand == (1.0, 3.0, 0.0)


def test_valid_run_settings_are_kept(tmp_path, fmt):
    p = WRITERS[fmt](tmp_path, doc(policy="fifo", seed=3, tick=0.5, neighbors=2, latency_ms=[0, 2], loss=0.1, duplicate=0.0, max_time=50))
    s = load_scenario(p)
    assert s.settings == {"policy": "fifo", "seed": 3, "tick": 0.5, "neighbors": 2, "latency_ms": (0.0, 2.0), "loss": 0.1, "duplicate": 0.0, "max_time": 50.0}


def test_unknown_top_level_key_is_an_error_and_lenient_a_warning(tmp_path, fmt):
    p = WRITERS[fmt](tmp_path, doc(colour="blue", seeed=3))
    with pytest.raises(ScenarioError, match=rf"{p.name}: unknown key 'colour'; .*--lenient"):
        load_scenario(p)
    s = load_scenario(p, lenient=True)
    assert len(s.servers) == 2 and len(s.users) == 2
    assert len(s.warnings) == 2
    assert "colour" in s.warnings[0] and p.name in s.warnings[0]
    assert "unknown key 'seeed' (did you mean 'seed'?)" in s.warnings[1]


def test_round_trip_write_json_load(tmp_path):
    original = google_2011_scenario(7, 5, 3)
    p = tmp_path / "g.json"
    original.write_json(p)
    doc_ = json.loads(p.read_text())
    assert set(doc_) == {"resources", "servers", "users"}
    assert all(set(s) == {"id", "capacity"} for s in doc_["servers"])
    assert all(set(u) == {"id", "demand"} for u in doc_["users"])
    loaded = load_scenario(p)
    assert loaded.resources == original.resources
    assert loaded.servers == original.servers
    assert loaded.users == original.users
    assert loaded.warnings == ()


# --------------------------------------------------------------------------- generator


def test_generator_is_deterministic():
    a = google_2011_scenario(40, 15, 11)
    b = google_2011_scenario(40, 15, 11)
    assert (a.resources, a.servers, a.users) == (b.resources, b.servers, b.users)
    assert a.name == b.name


def test_generator_different_seed_differs():
    a = google_2011_scenario(40, 15, 11)
    c = google_2011_scenario(40, 15, 12)
    assert (a.servers, a.users) != (c.servers, c.users)


def test_generator_sizes_and_ids():
    s = google_2011_scenario(9, 4, 0)
    assert s.resources == ("cpu", "memory")
    assert [x.id for x in s.servers] == [f"s{i}" for i in range(1, 10)]
    assert [x.id for x in s.users] == [f"u{i}" for i in range(1, 5)]


@pytest.mark.parametrize("seed", [0, 1, 2017])
def test_generator_capacities_from_google_table_and_demands_in_bounds(seed):
    s = google_2011_scenario(300, 200, seed)
    configs = {(c, m) for c, m, _ in GOOGLE_2011_MACHINES}
    assert all(x.capacity in configs for x in s.servers)
    m = DEMAND_MODEL
    eps = 1e-6  # demands are rounded to 6 decimals
    for u in s.users:
        cpu, mem = u.demand
        assert m.cpu_min - eps <= cpu <= m.cpu_max + eps, u
        assert m.mem_min - eps <= mem <= m.mem_max + eps, u
    assert s.unplaceable_users() == []


def test_generate_table_in_file_matches_function(tmp_path, fmt):
    p = WRITERS[fmt](tmp_path, {"name": "gen", "tick": 0.2, "generate": {"kind": "google-2011", "servers": 6, "users": 4, "seed": 9}})
    s = load_scenario(p)
    ref = google_2011_scenario(6, 4, 9)
    assert (s.resources, s.servers, s.users) == (ref.resources, ref.servers, ref.users)
    assert s.name == "gen"
    assert s.settings == {"tick": 0.2}


# --------------------------------------------------------------------------- file-level errors


def test_malformed_toml(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('resources = ["cpu", "memory"\nservers = \n')
    expect_error(p, "malformed TOML")


def test_malformed_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"resources": ["cpu", "memory"], "servers": [}')
    expect_error(p, "malformed JSON", "line 1")


@pytest.mark.parametrize("top", [[1, 2], "text", 3, None])
def test_json_top_level_not_an_object(tmp_path, top):
    expect_error(write_json(tmp_path, top), "top level")


def test_not_utf8(tmp_path):
    p = tmp_path / "bin.json"
    p.write_bytes(b'{"resources": "\xff\xfe"}')
    expect_error(p, "UTF-8")


def test_empty_toml_file_reports_missing_resources(tmp_path):
    p = tmp_path / "empty.toml"
    p.write_text("")
    expect_error(p, "resources", "missing")


def test_unknown_suffix(tmp_path):
    p = tmp_path / "scen.yaml"
    p.write_text("resources: [cpu]\n")
    expect_error(p, "'.yaml'", ".toml or .json")


def test_no_suffix(tmp_path):
    p = tmp_path / "scenario"
    p.write_text("{}")
    expect_error(p, "no suffix")


def test_missing_file(tmp_path):
    expect_error(tmp_path / "nowhere.toml", "cannot read")


def test_directory_instead_of_file(tmp_path):
    d = tmp_path / "dir.json"
    d.mkdir()
    expect_error(d, "cannot read")


# --------------------------------------------------------------------------- structure errors


@pytest.mark.parametrize("key", ["resources", "servers", "users"])
def test_missing_section(tmp_path, fmt, key):
    expect_error(WRITERS[fmt](tmp_path, doc(**{key: _DROP})), key, "missing")


@pytest.mark.parametrize("key", ["resources", "servers", "users"])
def test_empty_section(tmp_path, fmt, key):
    expect_error(WRITERS[fmt](tmp_path, doc(**{key: []})), key, "non-empty")


def test_resources_not_a_list(tmp_path):
    expect_error(write_json(tmp_path, doc(resources="cpu")), "resources", "non-empty list")


def test_duplicate_resource_names(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, doc(resources=["cpu", "cpu"])), "resources", "unique")


def test_server_entry_not_an_object(tmp_path):
    expect_error(write_json(tmp_path, doc(servers=[SERVERS2[0], [1, 1]])), "servers[1]", "must be an object")


def test_server_missing_capacity(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, doc(servers=[SERVERS2[0], {"id": "s2"}])), "servers[1].capacity", "missing")


def test_user_missing_id(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, doc(users=[USERS2[0], {"demand": [0.1, 0.1]}])), "users[1].id", "missing")


def test_unknown_field_inside_server(tmp_path, fmt):
    servers = [SERVERS2[0], {"id": "s2", "capacity": [1, 1], "cores": 4}]
    expect_error(WRITERS[fmt](tmp_path, doc(servers=servers)), "servers[1].cores", "unknown field")


def test_unknown_field_inside_user(tmp_path, fmt):
    users = [{"id": "u1", "demand": [0.1, 0.1], "priority": 2}]
    expect_error(WRITERS[fmt](tmp_path, doc(users=users)), "users[0].priority", "unknown field")


# --------------------------------------------------------------------------- vector errors


def _bad_server_capacity(value):
    return doc(servers=[SERVERS2[0], {"id": "s2", "capacity": [value, 1.0]}])


def test_negative_capacity(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, _bad_server_capacity(-0.5)), "servers[1].capacity[0]", "negative", "-0.5")


@pytest.mark.parametrize("value", ["1.0", "lots", True, False])
def test_non_numeric_capacity(tmp_path, fmt, value):
    expect_error(WRITERS[fmt](tmp_path, _bad_server_capacity(value)), "servers[1].capacity[0]", "must be a number")


def test_null_capacity_json(tmp_path):
    expect_error(write_json(tmp_path, _bad_server_capacity(None)), "servers[1].capacity[0]", "must be a number")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_capacity(tmp_path, fmt, value):
    expect_error(WRITERS[fmt](tmp_path, _bad_server_capacity(value)), "servers[1].capacity[0]", "finite")


def test_json_nan_literal_in_demand(tmp_path):
    p = tmp_path / "nan.json"
    p.write_text('{"resources": ["cpu", "memory"], "servers": [{"id": "s", "capacity": [1, 1]}], "users": [{"id": "u", "demand": [NaN, 0.1]}]}')
    expect_error(p, "users[0].demand[0]", "finite")


def test_json_infinity_literal_in_capacity(tmp_path):
    p = tmp_path / "inf.json"
    p.write_text('{"resources": ["cpu", "memory"], "servers": [{"id": "s", "capacity": [1, Infinity]}], "users": [{"id": "u", "demand": [0.1, 0.1]}]}')
    expect_error(p, "servers[0].capacity[1]", "finite")


@pytest.mark.parametrize("vec", [[1.0], [1.0, 1.0, 1.0], []])
def test_capacity_wrong_length(tmp_path, fmt, vec):
    msg = expect_error(WRITERS[fmt](tmp_path, doc(servers=[SERVERS2[0], {"id": "s2", "capacity": vec}])), "servers[1].capacity")
    assert f"has {len(vec)} values" in msg and "2 resources" in msg


@pytest.mark.parametrize("vec", [[0.1], [0.1, 0.1, 0.1]])
def test_demand_wrong_length(tmp_path, fmt, vec):
    msg = expect_error(WRITERS[fmt](tmp_path, doc(users=[USERS2[0], {"id": "u2", "demand": vec}])), "users[1].demand")
    assert f"has {len(vec)} values" in msg and "2 resources" in msg


def test_capacity_not_a_list(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, doc(servers=[{"id": "s", "capacity": 4}])), "servers[0].capacity", "must be a list")


def test_negative_demand(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, doc(users=[{"id": "u", "demand": [0.1, -1]}])), "users[0].demand[1]", "negative")


def test_user_demanding_all_zeros(tmp_path, fmt):
    msg = expect_error(WRITERS[fmt](tmp_path, doc(users=[USERS2[0], {"id": "idle", "demand": [0, 0.0]}])), "users[1].demand")
    assert "'idle'" in msg and "demands nothing" in msg


# --------------------------------------------------------------------------- id errors


def test_duplicate_server_ids(tmp_path, fmt):
    servers = [SERVERS2[0], SERVERS2[1], {"id": "s1", "capacity": [1, 1]}]
    expect_error(WRITERS[fmt](tmp_path, doc(servers=servers)), "servers[2].id", "duplicate", "'s1'")


def test_duplicate_user_ids(tmp_path, fmt):
    users = [USERS2[0], {"id": "u1", "demand": [0.2, 0.2]}]
    expect_error(WRITERS[fmt](tmp_path, doc(users=users)), "users[1].id", "duplicate", "'u1'")


def test_duplicate_ids_int_and_string_collide(tmp_path):
    users = [{"id": 7, "demand": [0.1, 0.1]}, {"id": "7", "demand": [0.2, 0.2]}]
    expect_error(write_json(tmp_path, doc(users=users)), "users[1].id", "duplicate")


@pytest.mark.parametrize("ident", ["", True, 1.5, None, [1]])
def test_bad_id(tmp_path, ident):
    expect_error(write_json(tmp_path, doc(servers=[{"id": ident, "capacity": [1, 1]}])), "servers[0].id", "non-empty string")


# --------------------------------------------------------------------------- generator errors


def gen(**fields):
    spec = {"kind": "google-2011", "servers": 4, "users": 3, "seed": 1}
    for k, v in fields.items():
        if v is _DROP:
            spec.pop(k)
        else:
            spec[k] = v
    return {"generate": spec}


def test_unknown_generator_kind(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, gen(kind="azure-2019")), "generate.kind", "unknown generator", "'azure-2019'")


def test_missing_generator_kind(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, gen(kind=_DROP)), "generate.kind", "unknown generator")


@pytest.mark.parametrize(
    "field,value,problem",
    [
        ("servers", 0, "positive integer"),
        ("users", 0, "positive integer"),
        ("servers", -3, "positive integer"),
        ("servers", 2.5, "positive integer"),
        ("servers", "10", "positive integer"),
        ("users", True, "positive integer"),
        ("seed", -1, "non-negative integer"),
        ("seed", 1.5, "non-negative integer"),
    ],
)
def test_bad_generator_fields(tmp_path, fmt, field, value, problem):
    expect_error(WRITERS[fmt](tmp_path, gen(**{field: value})), f"generate.{field}", problem)


def test_missing_generator_servers(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, gen(servers=_DROP)), "generate.servers", "missing")


def test_unknown_generator_field(tmp_path, fmt):
    expect_error(WRITERS[fmt](tmp_path, gen(machines=3)), "generate.machines", "unknown field")


def test_generate_not_a_table(tmp_path):
    expect_error(write_json(tmp_path, {"generate": "google-2011"}), "generate", "must be a table")


@pytest.mark.parametrize("extra", ["servers", "users"])
def test_generate_together_with_explicit_entries(tmp_path, fmt, extra):
    data = gen()
    data[extra] = SERVERS2 if extra == "servers" else USERS2
    expect_error(WRITERS[fmt](tmp_path, data), "generate", "not both")


def test_generate_together_with_resources_is_not_silently_ignored(tmp_path):
    data = gen()
    data["resources"] = ["cpu", "memory", "disk"]
    p = write_toml(tmp_path, data)
    try:
        s = load_scenario(p)
    except ScenarioError as exc:
        assert "resources" in str(exc)
        return
    assert s.resources == ("cpu", "memory", "disk") or any("resources" in w for w in s.warnings)


# --------------------------------------------------------------------------- run settings


@pytest.mark.parametrize(
    "field,value",
    [
        ("tick", 0),
        ("tick", -0.1),
        ("tick", "fast"),
        ("loss", 2),
        ("loss", -0.1),
        ("duplicate", 1.5),
        ("max_time", 0),
        ("latency_ms", [5, 1]),
        ("latency_ms", [-1, 1]),
        ("latency_ms", [1, 2, 3]),
        ("latency_ms", 5),
        ("latency_ms", [1, "x"]),
        ("neighbors", -1),
        ("neighbors", 2.5),
        ("seed", -1),
        ("seed", True),
        ("policy", 3),
        ("policy", ["drf"]),
        ("name", 5),
    ],
)
def test_bad_run_settings(tmp_path, fmt, field, value):
    msg = expect_error(WRITERS[fmt](tmp_path, doc(**{field: value})), f": {field}:")
    assert "must be" in msg


def test_bad_run_setting_with_generate(tmp_path, fmt):
    data = gen()
    data["tick"] = 0
    expect_error(WRITERS[fmt](tmp_path, data), "tick", "must be")


@pytest.mark.parametrize("field,value", [("tick", math.inf), ("max_time", math.inf), ("latency_ms", [1, math.inf])])
def test_non_finite_run_settings_rejected(tmp_path, fmt, field, value):
    expect_error(WRITERS[fmt](tmp_path, doc(**{field: value})), field)


# --------------------------------------------------------------------------- extreme inputs


def test_huge_integer_capacity(tmp_path):
    p = tmp_path / "big.json"
    p.write_text('{"resources": ["cpu"], "servers": [{"id": "s", "capacity": [1' + "0" * 400 + ']}], "users": [{"id": "u", "demand": [0.5]}]}')
    expect_error(p, "servers[0].capacity[0]")


def test_deeply_nested_json(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000)
    expect_error(p)


def test_deeply_nested_toml(tmp_path):
    p = tmp_path / "deep.toml"
    p.write_text("x = " + "[" * 100_000)
    expect_error(p)


def test_scenario_is_frozen() -> None:
    s = google_2011_scenario(2, 2, 1)
    assert isinstance(s, Scenario)
    with pytest.raises(AttributeError):
        s.servers = ()  # type: ignore[misc]
