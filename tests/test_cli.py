"""The ``dgdrf`` command line: bad input is one ``dgdrf...: error: ...`` line on stderr and
exit status 2 (never a traceback); good input runs, writes the documented JSON and is
deterministic apart from wall-clock time."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from dgdrf.cli import main
from dgdrf.model.generators import google_2011_scenario

RESULT_KEYS = {
    "policy", "servers", "users", "seed", "runtime_s", "wall_s", "allocations", "min_share", "gini", "jain",
    "error_ratio", "error_ratio_tol", "shares", "utilization", "messages", "bytes", "latency_s",
}


def cli(capsys, *argv):
    """Run ``dgdrf argv`` in-process; return (exit status, stdout, stderr).

    argparse usage errors leave ``main`` through SystemExit(2) rather than a return value,
    exactly as the console script sees them."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def cli_subprocess(*argv, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "dgdrf", *map(str, argv)], capture_output=True, text=True, timeout=60, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def assert_one_line_error(rc, err, *fragments):
    assert "Traceback" not in err, err
    assert rc == 2, (rc, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].strip(), f"stderr is not exactly one non-empty line: {err!r}"
    assert "error" in lines[0]
    for f in fragments:
        assert f in lines[0], f"{f!r} missing from {lines[0]!r}"


# --------------------------------------------------------------------------- scenario files


@pytest.fixture
def files(tmp_path):
    """A handful of scenario files, good and bad."""
    f = {}
    f["malformed"] = tmp_path / "malformed.toml"
    f["malformed"].write_text('resources = ["cpu", "memory"\n')
    f["negative"] = tmp_path / "negative.json"
    f["negative"].write_text(json.dumps({
        "resources": ["cpu", "memory"],
        "servers": [{"id": "s1", "capacity": [1, 1]}, {"id": "s2", "capacity": [-1, 1]}],
        "users": [{"id": "u1", "demand": [0.1, 0.1]}],
    }))
    f["short_demand"] = tmp_path / "short.toml"
    f["short_demand"].write_text(
        'resources = ["cpu", "memory"]\n'
        'servers = [{id = "s1", capacity = [1, 1]}]\n'
        'users = [{id = "u1", demand = [0.1, 0.1]}, {id = "u2", demand = [0.1]}]\n'
    )
    f["unplaceable"] = tmp_path / "unplaceable.json"
    f["unplaceable"].write_text(json.dumps({
        "resources": ["cpu", "memory"],
        "servers": [{"id": "S", "capacity": [1, 1]}],
        "users": [{"id": "A", "demand": [0.5, 0.5]}, {"id": "B", "demand": [2, 0.1]}],
    }))
    f["small"] = tmp_path / "small.json"
    google_2011_scenario(5, 3, 4).write_json(f["small"])
    f["missing"] = tmp_path / "missing.toml"
    return f


# --------------------------------------------------------------------------- bad flags


@pytest.mark.parametrize(
    "argv,fragments",
    [
        (["--tick", "-1"], ["--tick", "'-1'"]),
        (["--tick", "abc"], ["--tick", "'abc'"]),
        (["--tick", "0"], ["--tick"]),
        (["--tick", "nan"], ["--tick"]),
        (["--tick", "inf"], ["--tick"]),
        (["--seed", "-3"], ["--seed", "'-3'"]),
        (["--seed", "1.5"], ["--seed"]),
        (["--servers", "0", "--users", "3"], ["--servers", "'0'"]),
        (["--users", "x", "--servers", "3"], ["--users", "'x'"]),
        (["--neighbors", "0"], ["--neighbors"]),
        (["--latency-ms", "5,1"], ["--latency-ms", "'5,1'"]),
        (["--latency-ms", "5"], ["--latency-ms"]),
        (["--latency-ms", "a,b"], ["--latency-ms"]),
        (["--latency-ms", "-1,2"], ["--latency-ms"]),
        (["--loss", "2"], ["--loss", "'2'"]),
        (["--loss", "-0.5"], ["--loss"]),
        (["--max-time", "0"], ["--max-time"]),
        (["--policy", "nope"], ["'nope'", "drf", "fifo"]),
        (["--policy", "drf,nope"], ["'nope'"]),
        (["--policy", ","], ["policy"]),
        (["--servers", "3"], ["--servers", "--users"]),
        (["--users", "3"], ["--servers", "--users"]),
        (["--bogus"], ["--bogus"]),
    ],
)
def test_run_bad_flag(capsys, argv, fragments):
    rc, out, err = cli(capsys, "run", "--quiet", *argv)
    assert_one_line_error(rc, err, *fragments)


def test_no_command(capsys):
    rc, _, err = cli(capsys)
    assert_one_line_error(rc, err, "COMMAND")


def test_unknown_command(capsys):
    rc, _, err = cli(capsys, "launch")
    assert_one_line_error(rc, err, "launch")


def test_scenario_plus_servers(capsys, files):
    rc, _, err = cli(capsys, "run", "--scenario", files["small"], "--servers", "3", "--users", "2")
    assert_one_line_error(rc, err, "--scenario", "--servers")


def test_missing_scenario_file(capsys, files):
    rc, out, err = cli(capsys, "run", "--scenario", files["missing"])
    assert_one_line_error(rc, err, "missing.toml", "cannot read")
    assert out == ""


def test_malformed_toml_file(capsys, files):
    rc, out, err = cli(capsys, "run", "--scenario", files["malformed"])
    assert_one_line_error(rc, err, "malformed.toml", "malformed TOML")
    assert out == ""


def test_negative_capacity_file(capsys, files):
    rc, _, err = cli(capsys, "run", "--scenario", files["negative"])
    assert_one_line_error(rc, err, "negative.json", "servers[1].capacity[0]", "negative")


def test_wrong_length_demand_file(capsys, files):
    rc, _, err = cli(capsys, "run", "--scenario", files["short_demand"])
    assert_one_line_error(rc, err, "short.toml", "users[1].demand", "1 values", "2 resources")


def test_unwritable_json_output(capsys, files, tmp_path):
    rc, _, err = cli(capsys, "run", "--scenario", files["small"], "--policy", "drf", "--quiet", "--json", tmp_path / "no" / "such" / "dir.json")
    assert_one_line_error(rc, err, "cannot write")


def test_scenario_command_bad_flags(capsys, tmp_path):
    rc, _, err = cli(capsys, "scenario", "--servers", "0", "--users", "3", "-o", tmp_path / "x.json")
    assert_one_line_error(rc, err, "--servers")
    rc, _, err = cli(capsys, "scenario", "--servers", "2", "--users", "3", "--seed", "-3", "-o", tmp_path / "x.json")
    assert_one_line_error(rc, err, "--seed")
    rc, _, err = cli(capsys, "scenario", "--servers", "2", "--users", "3")
    assert_one_line_error(rc, err, "-o")
    rc, _, err = cli(capsys, "scenario", "--servers", "2", "--users", "3", "-o", tmp_path / "nodir" / "x.json")
    assert_one_line_error(rc, err, "cannot write")
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    "argv,fragments",
    [
        (["run", "--tick", "-1"], ["--tick"]),
        (["run", "--latency-ms", "5,1"], ["--latency-ms"]),
        (["run", "--scenario", "@malformed"], ["malformed.toml", "malformed TOML"]),
        (["run", "--scenario", "@negative"], ["servers[1].capacity[0]"]),
        (["run", "--scenario", "@short_demand"], ["users[1].demand"]),
        (["run", "--scenario", "@missing"], ["missing.toml"]),
    ],
)
def test_bad_input_subprocess_no_traceback(files, argv, fragments):
    argv = [str(files[a[1:]]) if a.startswith("@") else a for a in argv]
    rc, out, err = cli_subprocess(*argv)
    assert_one_line_error(rc, err, *fragments)


# --------------------------------------------------------------------------- a user that fits nowhere


def test_unplaceable_user_run_ends_and_reports(capsys, files, tmp_path):
    out_json = tmp_path / "unpl.json"
    rc, _, err = cli(capsys, "run", "--scenario", files["unplaceable"], "--policy", "drf", "--quiet", "--json", out_json)
    assert rc == 2
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and "error" in lines[0]
    assert "'B'" in lines[0] and "fits on no server" in lines[0]
    doc = json.loads(out_json.read_text())
    assert doc["tasks"] == {"A": 2, "B": 0}
    assert doc["unplaceable_users"] == ["B"]
    assert doc["allocations"] == 2


def test_unplaceable_user_subprocess(files, tmp_path):
    out_json = tmp_path / "unpl.json"
    rc, out, err = cli_subprocess("run", "--scenario", files["unplaceable"], "--policy", "drf", "--json", out_json)
    assert rc == 2
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1 and "'B'" in err and "fits on no server" in err
    assert "drf" in out  # the table is still printed
    assert json.loads(out_json.read_text())["tasks"] == {"A": 2, "B": 0}


# --------------------------------------------------------------------------- good runs


def test_scenario_then_run_json(capsys, tmp_path):
    f = tmp_path / "f.json"
    rc, out, err = cli(capsys, "scenario", "--servers", "5", "--users", "3", "--seed", "4", "-o", f)
    assert rc == 0 and err == ""
    assert "f.json" in out
    scen = json.loads(f.read_text())
    assert set(scen) == {"resources", "servers", "users"}
    assert len(scen["servers"]) == 5 and len(scen["users"]) == 3

    out_json = tmp_path / "out.json"
    rc, out, err = cli(capsys, "run", "--scenario", f, "--policy", "drf", "--json", out_json)
    assert rc == 0, err
    assert err == ""
    assert "drf" in out
    res = json.loads(out_json.read_text())
    assert isinstance(res, dict)
    assert RESULT_KEYS <= set(res), RESULT_KEYS - set(res)
    assert set(res["error_ratio_tol"]) == {"0.01", "0.05", "0.10", "0.15"}
    assert {"p50", "p90", "p99"} <= set(res["latency_s"])
    assert res["policy"] == "drf" and res["servers"] == 5 and res["users"] == 3 and res["seed"] == 1
    assert set(res["shares"]) == {"u1", "u2", "u3"}
    assert set(res["utilization"]) == {"cpu", "memory"}
    assert res["allocations"] > 0 and res["invariant_violations"] == []
    assert res["messages"]["total"] > 0 and res["bytes"]["total"] > 0


def test_scenario_file_matches_generator(capsys, tmp_path):
    f = tmp_path / "f.json"
    assert cli(capsys, "scenario", "--servers", "5", "--users", "3", "--seed", "4", "-o", f)[0] == 0
    ref = google_2011_scenario(5, 3, 4)
    assert json.loads(f.read_text()) == ref.to_dict()


def _without_wall(path):
    return "".join(line for line in path.read_text().splitlines(keepends=True) if '"wall_s"' not in line)


def test_run_is_deterministic(capsys, files, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        rc, _, err = cli(capsys, "run", "--scenario", files["small"], "--policy", "drf", "--seed", "3", "--quiet", "--json", out)
        assert rc == 0, err
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert da["seed"] == 3
    del da["wall_s"], db["wall_s"]
    assert json.dumps(da, sort_keys=True) == json.dumps(db, sort_keys=True)
    assert _without_wall(a) == _without_wall(b)
    assert a.read_text().count('"wall_s"') == 1


def test_different_seed_changes_latencies(capsys, files, tmp_path):
    outs = []
    for seed in (3, 4):
        out = tmp_path / f"s{seed}.json"
        assert cli(capsys, "run", "--scenario", files["small"], "--policy", "drf", "--seed", seed, "--quiet", "--json", out)[0] == 0
        outs.append(json.loads(out.read_text()))
    assert outs[0]["latency_s"] != outs[1]["latency_s"]


def test_two_policies_write_a_list(capsys, files, tmp_path):
    x = tmp_path / "x.json"
    rc, out, err = cli(capsys, "run", "--scenario", files["small"], "--policy", "drf,fifo", "--json", x)
    assert rc == 0, err
    docs = json.loads(x.read_text())
    assert isinstance(docs, list) and len(docs) == 2
    assert [d["policy"] for d in docs] == ["drf", "fifo"]
    assert all(RESULT_KEYS <= set(d) for d in docs)
    assert "drf" in out and "fifo" in out


def test_run_without_arguments(capsys):
    rc, out, err = cli(capsys, "run")
    assert rc == 0, err
    assert err == ""
    assert "drf" in out and "fifo" in out
    assert "default-30x10" in out


def test_quiet_prints_no_table(capsys, files):
    rc, out, err = cli(capsys, "run", "--scenario", files["small"], "--policy", "drf", "--quiet")
    assert rc == 0 and out == "" and err == ""


def test_unknown_top_level_key_is_an_error_and_with_lenient_a_warning(capsys, tmp_path):
    f = tmp_path / "warn.json"
    d = google_2011_scenario(3, 2, 1).to_dict()
    d["colour"] = "blue"
    f.write_text(json.dumps(d))
    assert_one_line_error(*cli(capsys, "run", "--scenario", f, "--policy", "drf", "--quiet")[::2], "warn.json", "unknown key 'colour'")
    rc, _, err = cli(capsys, "run", "--scenario", f, "--policy", "drf", "--quiet", "--lenient")
    assert rc == 0
    assert err.count("warning") == 1 and "colour" in err and "warn.json" in err
    assert "Traceback" not in err


def test_settings_in_file_are_used_and_flags_override(capsys, tmp_path):
    f = tmp_path / "set.toml"
    f.write_text('policy = "fifo"\nseed = 5\ntick = 0.2\n[generate]\nkind = "google-2011"\nservers = 4\nusers = 3\nseed = 2\n')
    out = tmp_path / "o.json"
    assert cli(capsys, "run", "--scenario", f, "--quiet", "--json", out)[0] == 0
    d = json.loads(out.read_text())
    assert (d["policy"], d["seed"], d["tick"], d["scenario"]) == ("fifo", 5, 0.2, "set")
    assert cli(capsys, "run", "--scenario", f, "--quiet", "--json", out, "--policy", "drf", "--seed", "7", "--tick", "0.1")[0] == 0
    d = json.loads(out.read_text())
    assert (d["policy"], d["seed"], d["tick"]) == ("drf", 7, 0.1)


def test_bad_settings_in_file(capsys, tmp_path):
    f = tmp_path / "badset.toml"
    f.write_text('loss = 2\n[generate]\nkind = "google-2011"\nservers = 4\nusers = 3\n')
    rc, _, err = cli(capsys, "run", "--scenario", f)
    assert_one_line_error(rc, err, "badset.toml", "loss")


def test_unknown_policy_in_file(capsys, tmp_path):
    f = tmp_path / "pol.toml"
    f.write_text('policy = "nope"\n[generate]\nkind = "google-2011"\nservers = 4\nusers = 3\n')
    rc, _, err = cli(capsys, "run", "--scenario", f)
    assert_one_line_error(rc, err, "'nope'")


# --------------------------------------------------------------------------- extreme inputs (bugs found and fixed)


def test_latency_infinite_max_subprocess():
    rc, _, err = cli_subprocess("run", "--servers", "2", "--users", "2", "--quiet", "--latency-ms", "1,inf")
    assert_one_line_error(rc, err, "--latency-ms")


def test_latency_huge_max_subprocess():
    rc, _, err = cli_subprocess("run", "--servers", "2", "--users", "2", "--quiet", "--latency-ms", "0,1e300")
    assert_one_line_error(rc, err, "--latency-ms")


@pytest.mark.parametrize("setting", ["tick = inf", "max_time = inf", "latency_ms = [1, inf]"])
def test_infinite_setting_in_file_subprocess(tmp_path, setting):
    f = tmp_path / "inf.toml"
    f.write_text(f'{setting}\n[generate]\nkind = "google-2011"\nservers = 2\nusers = 2\n')
    rc, _, err = cli_subprocess("run", "--scenario", f, "--quiet")
    assert_one_line_error(rc, err, "inf.toml")


def test_huge_integer_capacity_subprocess(tmp_path):
    f = tmp_path / "big.json"
    f.write_text('{"resources": ["cpu"], "servers": [{"id": "s", "capacity": [1' + "0" * 400 + ']}], "users": [{"id": "u", "demand": [0.5]}]}')
    rc, _, err = cli_subprocess("run", "--scenario", f, "--quiet")
    assert_one_line_error(rc, err, "big.json", "servers[0].capacity[0]")


def test_deeply_nested_json_subprocess(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000)
    rc, _, err = cli_subprocess("run", "--scenario", f, "--quiet")
    assert_one_line_error(rc, err, "deep.json")


def test_neighbors_zero_in_file_names_the_file(capsys, tmp_path):
    f = tmp_path / "n0.toml"
    f.write_text('neighbors = 0\n[generate]\nkind = "google-2011"\nservers = 2\nusers = 2\n')
    rc, _, err = cli(capsys, "run", "--scenario", f, "--quiet")
    assert_one_line_error(rc, err, "n0.toml", "neighbors")


def test_scenario_output_suffix_checked(capsys, tmp_path):
    f = tmp_path / "f.toml"
    rc, _, err = cli(capsys, "scenario", "--servers", "2", "--users", "2", "-o", f)
    if rc == 0:  # accepted: then the file must at least be loadable by `run`
        rc, _, err = cli(capsys, "run", "--scenario", f, "--quiet", "--policy", "drf")
        assert rc == 0, err
    else:
        assert_one_line_error(rc, err, "f.toml")


# --------------------------------------------------------------------------- dgdrf overlay


@pytest.mark.parametrize(
    "protocol, keys",
    [
        ("cyclon", ["indegree_mean", "indegree_std", "clustering"]),
        ("gradient", ["centre_correct", "converged_fraction"]),
        ("pushsum", ["max_relative_error", "mass_exact"]),
    ],
)
def test_overlay_command_writes_final_and_per_cycle_figures(capsys, tmp_path, protocol, keys):
    out = tmp_path / "o.json"
    rc, stdout, _ = cli(capsys, "overlay", "--protocol", protocol, "--nodes", "60", "--cycles", "6", "--json", out)
    assert rc == 0 and "cycle" in stdout
    doc = json.loads(out.read_text())
    for k in keys + ["per_cycle", "wall_s", "node_cycles_per_s", "messages_per_s"]:
        assert k in doc, k
    assert [c["cycle"] for c in doc["per_cycle"]] == list(range(1, 7))
    assert all(k in doc["per_cycle"][-1] for k in keys)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--protocol", "bogus"], "bogus"),
        (["--protocol", "cyclon", "--nodes", "1"], "--nodes: must be an integer >= 2"),
        (["--protocol", "cyclon", "--view-size", "3", "--shuffle-length", "5"], "shuffle length"),
        (["--protocol", "cyclon", "--view-size", "300000"], "--view-size: must be an integer >= 1 and <= 262144"),
        (["--protocol", "cyclon", "--cycles", "0"], "--cycles"),
        (["--protocol", "pushsum", "--loss", "1.5"], "--loss"),
    ],
)
def test_overlay_bad_input_is_one_line(capsys, args, fragment):
    rc, _, err = cli(capsys, "overlay", *args)
    assert_one_line_error(rc, err, fragment)


def test_sizes_beyond_memory_and_overflowing_capacities_are_refused_in_one_line(tmp_path, capsys):
    rc, _, err = cli(capsys, "run", "--servers", 200_000_000, "--users", 5)
    assert_one_line_error(rc, err, "200,000,000 servers", "GB available")
    rc, _, err = cli(capsys, "scenario", "--servers", 2_000_000_000, "--users", 5, "-o", tmp_path / "x.json")
    assert_one_line_error(rc, err, "GB available")
    over = tmp_path / "over.toml"
    over.write_text('resources=["cpu","mem"]\nservers=[{id="a",capacity=[1e308,1]},{id="b",capacity=[1e308,1]}]\nusers=[{id="u",demand=[1,0.1]}]\n')
    rc, _, err = cli(capsys, "run", "--scenario", over)
    assert_one_line_error(rc, err, "over.toml: servers: the servers' cpu capacities sum beyond the largest number")
    tiny = tmp_path / "tiny.toml"
    tiny.write_text('resources=["cpu","mem"]\nservers=[{id="a",capacity=[1,1]}]\nusers=[{id="u",demand=[1e-300,1e-300]}]\n')
    rc, _, err = cli(capsys, "run", "--scenario", tiny)
    assert_one_line_error(rc, err, "up to 2e+300 tasks could be placed")


def test_an_unknown_top_level_key_is_an_error_with_a_guess_unless_lenient(capsys, tmp_path):
    """A typo in a scenario file's run setting (polcy = "drf") is an error, as a typo in a
    job's field is, with the key it resembles; --lenient runs with it ignored, warning."""
    f = tmp_path / "typo.toml"
    f.write_text('polcy = "fifo"\nresources = ["cpu"]\nservers = [{id = "s", capacity = [2]}]\nusers = [{id = "u", demand = [1]}]\n')
    assert_one_line_error(*cli(capsys, "run", "--scenario", f)[::2], str(f), "unknown key 'polcy'", "did you mean 'policy'?", "--lenient")
    rc, out, err = cli(capsys, "run", "--scenario", f, "--lenient")
    assert rc == 0 and "unknown key 'polcy' (did you mean 'policy'?), ignored" in err and "drf" in out
    rc, out, err = cli(capsys, "audit", "--scenario", f, "--lenient", "--policy", "drf")
    assert rc == 0 and "unknown key 'polcy' (did you mean 'policy'?), ignored" in err  # every command that reads the file says so


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["run", "--tick", "-1"], ["dgdrf: error: run: argument --tick", "(see dgdrf run --help)"]),
        (["cluster", "up", "--processes", "0"], ["dgdrf: error: cluster up: argument --processes"]),
        (["run", "--policy", "drff"], ["dgdrf: error: unknown policy 'drff' (did you mean 'drf'", "known policies: drf,"]),
        (["audit", "--policy", "drff"], ["dgdrf: error: unknown policy 'drff' (did you mean 'drf'", "known policies: drf,"]),
        (["scenario", "--servers", "4", "--users", "2", "--jobs", "--load", "-1", "-o", "x.json"], ["dgdrf: error: --load: must be a positive number"]),
        (["oracle", "--scenario", "configs/thesis-100x20.toml", "--notion", "udrf"], ["dgdrf: error: configs/thesis-100x20.toml: users[0]"]),
    ],
)
def test_every_error_line_starts_the_same_and_names_what_is_wrong(capsys, argv, fragments):
    """One form for every error: "dgdrf: error: ", the command where a flag's parser
    found it, what is wrong and where (a flag, the file, not the scenario's name), once;
    an unknown name with the nearest known ones."""
    assert_one_line_error(*cli(capsys, *argv)[::2], *fragments)
    err = cli(capsys, *argv)[2]
    assert err.startswith("dgdrf: error: ") and err.count("dgdrf: error: ") == 1 and not re.search(r"dgdrf [a-z ]+: ", err)
