"""Reading a Google cluster-data 2011 subset into a scenario (thesis 5.1)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from dgdrf.errors import ScenarioError
from dgdrf.model.google_trace import read_google_trace
from dgdrf.config import load_scenario

# timestamp, machine ID, event type, platform ID, CPUs, memory
MACHINES = """\
0,1,0,p,0.5,0.5
0,2,0,p,0.5,0.25
0,3,0,p,1,1
0,4,0,p,,
0,5,0,p,0.5,
100,2,2,p,0.25,0.125
200,3,1,p,,
300,1,2,p,,
"""
# usable: m1 (0.5, 0.5), m2 updated to (0.25, 0.125); m3 removed, m4/m5 never fully known.

# timestamp, missing, job, task index, machine, event type, user, class, prio, cpu, mem, disk, diffmachine
TASKS = """\
0,,10,0,,0,alice,0,0,0.01,0.02,0,0
5,,10,0,1,1,alice,0,0,0.5,0.5,0,0
0,,11,0,,0,bob,0,0,,,0,0
7,,11,0,,1,bob,0,0,0.03,0.04,0,0
9,,11,0,,4,bob,0,0,0.9,0.9,0,0
0,,12,0,,0,carol,0,0,0,0.1,0,0
0,,13,0,,0,,0,0,0.1,0.1,0,0
"""
# alice: (10, 0) submitted with (0.01, 0.02); bob: (11, 0) first full request (0.03, 0.04);
# carol requests no CPU so is unusable; the row without a user is skipped.


def write(path: Path, text: str) -> Path:
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(params=["csv", "csv.gz"])
def trace(request, tmp_path: Path) -> tuple[Path, Path]:
    ext = request.param
    return write(tmp_path / f"machine_events.{ext}", MACHINES), write(tmp_path / f"task_events.{ext}", TASKS)


def test_all_usable_machines_and_users_are_picked(trace: tuple[Path, Path]) -> None:
    sc = read_google_trace(*trace, servers=2, users=2, seed=0)
    assert sc.resources == ("cpu", "memory")
    assert {s.id: s.capacity for s in sc.servers} == {"m1": (0.5, 0.5), "m2": (0.25, 0.125)}
    assert {u.id: u.demand for u in sc.users} == {"alice": (0.01, 0.02), "bob": (0.03, 0.04)}
    assert sc.name == "google-trace-2x2-seed0"


def test_same_seed_same_scenario_and_subsets_vary(tmp_path: Path) -> None:
    machines = "".join(f"0,{m},0,p,{m / 100},{m / 200}\n" for m in range(1, 31))
    tasks = "".join(f"0,,{j},{t},,0,user{j % 12},0,0,{(j + 1) / 1000},{(t + 1) / 1000},0,0\n" for j in range(40) for t in range(3))
    me, te = write(tmp_path / "m.csv", machines), write(tmp_path / "t.csv", tasks)
    a = read_google_trace(me, te, servers=5, users=4, seed=7)
    b = read_google_trace(me, te, servers=5, users=4, seed=7)
    assert a.to_dict() == b.to_dict()
    assert len(a.servers) == 5 and len({s.id for s in a.servers}) == 5
    assert len(a.users) == 4 and len({u.id for u in a.users}) == 4
    picks = {tuple(s.id for s in read_google_trace(me, te, servers=5, users=4, seed=s).servers) for s in range(10)}
    assert len(picks) > 1
    for s in a.servers:
        m = int(s.id[1:])
        assert s.capacity == (m / 100, m / 200)
    # each user's demand is the request of one of that user's own tasks
    for seed in range(10):
        for u in read_google_trace(me, te, servers=1, users=12, seed=seed).users:
            k = int(u.id.removeprefix("user"))
            own = {((j + 1) / 1000, (t + 1) / 1000) for j in range(40) if j % 12 == k for t in range(3)}
            assert u.demand in own


def test_task_choice_varies_within_a_user(tmp_path: Path) -> None:
    me = write(tmp_path / "m.csv", "0,1,0,p,1,1\n")
    te = write(tmp_path / "t.csv", "".join(f"0,,{j},0,,0,solo,0,0,0.0{j},0.01,0,0\n" for j in range(1, 6)))
    demands = {read_google_trace(me, te, servers=1, users=1, seed=s).users[0].demand for s in range(30)}
    assert len(demands) > 1
    assert demands <= {(j / 100, 0.01) for j in range(1, 6)}


def test_toml_generate_table(tmp_path: Path) -> None:
    write(tmp_path / "machine_events.csv", MACHINES)
    write(tmp_path / "task_events.csv", TASKS)
    cfg = tmp_path / "trace.toml"
    cfg.write_text(
        '[generate]\nkind = "google-trace"\nmachine_events = "machine_events.csv"\n'
        'task_events = "task_events.csv"\nservers = 2\nusers = 2\nseed = 1\n'
    )
    sc = load_scenario(cfg)
    assert {s.id for s in sc.servers} == {"m1", "m2"}
    assert {u.id: u.demand for u in sc.users} == {"alice": (0.01, 0.02), "bob": (0.03, 0.04)}


def test_toml_missing_trace_file(tmp_path: Path) -> None:
    write(tmp_path / "task_events.csv", TASKS)
    cfg = tmp_path / "trace.toml"
    cfg.write_text('[generate]\nkind = "google-trace"\nmachine_events = "nope.csv"\ntask_events = "task_events.csv"\nservers = 1\nusers = 1\n')
    with pytest.raises(ScenarioError, match="nope.csv"):
        load_scenario(cfg)


def expect_error(me: Path, te: Path, *fragments: str, servers: int = 1, users: int = 1) -> str:
    with pytest.raises(ScenarioError) as info:
        read_google_trace(me, te, servers=servers, users=users, seed=0)
    msg = str(info.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, msg
    return msg


def test_missing_files(tmp_path: Path) -> None:
    te = write(tmp_path / "task_events.csv", TASKS)
    me = write(tmp_path / "machine_events.csv", MACHINES)
    expect_error(tmp_path / "absent_machines.csv", te, "absent_machines.csv")
    expect_error(me, tmp_path / "absent_tasks.csv.gz", "absent_tasks.csv.gz")
    expect_error(tmp_path, te, str(tmp_path))  # a directory is not readable as a file


@pytest.mark.parametrize("ext", ["csv", "csv.gz"])
def test_too_few_columns(tmp_path: Path, ext: str) -> None:
    me = write(tmp_path / f"machine_events.{ext}", "0,1,0,p,0.5,0.5\n0,2,0,p,0.5\n")
    te = write(tmp_path / f"task_events.{ext}", TASKS)
    expect_error(me, te, f"machine_events.{ext}", "line 2", "5 columns")
    me = write(tmp_path / f"machine_events.{ext}", MACHINES)
    te = write(tmp_path / f"task_events.{ext}", TASKS + "0,,14,0,,0,dave\n")
    expect_error(me, te, f"task_events.{ext}", "line 8", "7 columns")


@pytest.mark.parametrize(
    ("machines", "tasks", "fragments"),
    [
        ("0,1,0,p,0.5,0.5\n0,x,0,p,0.5,0.5\n", TASKS, ("machine_events.csv", "line 2", "column 2 (machine ID)", "'x'")),
        ("0,1,0,p,half,0.5\n", TASKS, ("machine_events.csv", "line 1", "column 5 (CPUs)", "'half'")),
        ("0,1,0,p,0.5,-1\n", TASKS, ("machine_events.csv", "line 1", "column 6 (memory)")),
        ("0,1,0,p,0.5,nan\n", TASKS, ("machine_events.csv", "line 1", "column 6 (memory)")),
        ("0,1,7,p,0.5,0.5\n", TASKS, ("machine_events.csv", "line 1", "column 3 (event type)")),
        ("t0,1,0,p,0.5,0.5\n", TASKS, ("machine_events.csv", "line 1", "column 1 (timestamp)")),
        (MACHINES, TASKS + "0,,1.5,0,,0,dave,0,0,0.1,0.1,0,0\n", ("task_events.csv", "line 8", "column 3 (job ID)")),
        (MACHINES, "0,,1,0,,0,dave,0,0,0.1,lots,0,0\n", ("task_events.csv", "line 1", "column 11 (memory request)", "'lots'")),
        (MACHINES, "0,,1,,,0,dave,0,0,0.1,0.1,0,0\n", ("task_events.csv", "line 1", "column 4 (task index)")),
    ],
)
def test_non_numeric_values(tmp_path: Path, machines: str, tasks: str, fragments: tuple[str, ...]) -> None:
    me = write(tmp_path / "machine_events.csv", machines)
    te = write(tmp_path / "task_events.csv", tasks)
    expect_error(me, te, *fragments)


def test_too_few_machines_or_users(trace: tuple[Path, Path]) -> None:
    me, te = trace
    expect_error(me, te, me.name, "only 2 usable machines", "servers=3", servers=3, users=2)
    expect_error(me, te, te.name, "only 2 usable users", "users=3", servers=2, users=3)


def test_empty_files(tmp_path: Path) -> None:
    me, te = write(tmp_path / "machine_events.csv", ""), write(tmp_path / "task_events.csv", TASKS)
    expect_error(me, te, "machine_events.csv", "only 0 usable machines")


def test_corrupt_files(tmp_path: Path) -> None:
    te = write(tmp_path / "task_events.csv", TASKS)
    not_gzip = tmp_path / "machine_events.csv.gz"
    not_gzip.write_text(MACHINES)
    expect_error(not_gzip, te, "machine_events.csv.gz")
    truncated = tmp_path / "trunc.csv.gz"
    truncated.write_bytes(gzip.compress(MACHINES.encode())[:-12])
    expect_error(truncated, te, "trunc.csv.gz")
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes(MACHINES.encode() + "0,9,0,p,0.5,0.5 é\n".encode("latin-1"))
    expect_error(latin1, te, "latin1.csv")
    latin1_gz = tmp_path / "latin1.csv.gz"
    latin1_gz.write_bytes(gzip.compress(latin1.read_bytes()))
    expect_error(latin1_gz, te, "latin1.csv.gz")
    nul = tmp_path / "nul.csv"
    nul.write_bytes(MACHINES.encode() + b"0,9,0,p,0.5\x00,0.5\n")
    expect_error(nul, te, "nul.csv", "line 9")


def test_bad_arguments(trace: tuple[Path, Path]) -> None:
    expect_error(*trace, "servers=0", servers=0)
    with pytest.raises(ScenarioError, match="seed"):
        read_google_trace(*trace, servers=1, users=1, seed=-1)
