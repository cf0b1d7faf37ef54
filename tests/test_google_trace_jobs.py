"""Reading the finite jobs of a Google cluster-data 2011 subset (dgdrf/model/google_trace.py,
``read_google_trace_jobs``): arrivals from SUBMIT, durations from SCHEDULE to FINISH of the
run that finished, EQUAL constraints as ``requires`` on the machines' attributes, the
other operators skipped, refused or expanded, and every defect of the files a
ScenarioError naming the file, line and column. Synthetic files written here, plain and
gzipped."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from dgdrf.config import load_scenario
from dgdrf.errors import ScenarioError
from dgdrf.model.distributions import Duration
from dgdrf.model.google_trace import read_google_trace_jobs
from dgdrf.model.scenario import Scenario

S = 1_000_000  # microseconds per second: the trace's unit
END = 2**63 - 1  # a time after the trace

# timestamp, machine ID, event type, platform ID, CPUs, memory
MACHINES = """\
0,1,0,p,0.5,0.5
0,2,0,p,0.5,0.5
0,3,0,p,1,1
0,4,0,p,0.25,0.25
"""

# timestamp, machine ID, attribute name, attribute value, attribute deleted
ATTRIBUTES = """\
0,1,arch,x,0
0,2,arch,y,0
0,3,arch,x,0
0,1,kernel,3,0
0,2,kernel,5,0
0,3,kernel,7,0
0,4,kernel,9,0
5,3,arch,,1
0,4,rack,r1,
"""
# m3's arch is deleted at 5: only m1 has arch x; rack is named by no constraint.


def task(ts: float, job: int, index: int, event: int, user: str, cpu: object = 0.01, mem: object = 0.02) -> str:
    return f"{int(ts * S)},,{job},{index},,{event},{user},0,0,{cpu},{mem},0,0\n"


SUBMIT, SCHEDULE, EVICT, FINISH, KILL = 0, 1, 2, 4, 5
TASKS = "".join(
    [
        # job 100 (alice): two tasks, 30 s and 40 s, both EQUAL arch x
        task(1000, 100, 0, SUBMIT, "alice"),
        task(1000, 100, 1, SUBMIT, "alice"),
        task(1001, 100, 0, SCHEDULE, "alice"),
        task(1001, 100, 1, SCHEDULE, "alice"),
        task(1031, 100, 0, FINISH, "alice"),
        task(1041, 100, 1, FINISH, "alice"),
        # job 200 (bob): task 0 evicted then run again for 60 s; task 1 killed; task 2
        # asks for more, submitted later: two scenario jobs
        task(1100, 200, 0, SUBMIT, "bob", 0.02, 0.01),
        task(1100, 200, 1, SUBMIT, "bob", 0.02, 0.01),
        task(1101, 200, 0, SCHEDULE, "bob", 0.02, 0.01),
        task(1101, 200, 1, SCHEDULE, "bob", 0.02, 0.01),
        task(1105, 200, 1, KILL, "bob", 0.02, 0.01),
        task(1110, 200, 0, EVICT, "bob", 0.02, 0.01),
        task(1120, 200, 0, SCHEDULE, "bob", 0.02, 0.01),
        task(1180, 200, 0, FINISH, "bob", 0.02, 0.01),
        task(1200, 200, 2, SUBMIT, "bob", 0.05, 0.05),
        task(1201, 200, 2, SCHEDULE, "bob", 0.05, 0.05),
        task(1211, 200, 2, FINISH, "bob", 0.05, 0.05),
        # job 300 (carol): submitted before the trace (time 0): no known arrival
        "0,,300,0,,0,carol,0,0,0.01,0.01,0,0\n",
        task(700, 300, 0, SCHEDULE, "carol"),
        task(800, 300, 0, FINISH, "carol"),
        # job 400 (dave): finishes after the trace: no duration
        task(1300, 400, 0, SUBMIT, "dave"),
        task(1301, 400, 0, SCHEDULE, "dave"),
        f"{END},,400,0,,4,dave,0,0,0.01,0.01,0,0\n",
        # job 500 (erin): finishes as it starts; kernel LESS_THAN 6
        task(1400, 500, 0, SUBMIT, "erin"),
        task(1401, 500, 0, SCHEDULE, "erin"),
        task(1401, 500, 0, FINISH, "erin"),
        # job 600 (gina): EQUAL arch z, on no machine
        task(1500, 600, 0, SUBMIT, "gina"),
        task(1501, 600, 0, SCHEDULE, "gina"),
        task(1502, 600, 0, FINISH, "gina"),
        # job 700 (alice): kernel GREATER_THAN 4 and NOT_EQUAL 9
        task(2000, 700, 0, SUBMIT, "alice"),
        task(2001, 700, 0, SCHEDULE, "alice"),
        task(2101, 700, 0, FINISH, "alice"),
    ]
)

# timestamp, job ID, task index, comparison operator, attribute name, attribute value
CONSTRAINTS = f"""\
{1000 * S},100,0,0,arch,x
{1000 * S},100,1,0,arch,x
{1400 * S},500,0,2,kernel,6
{1500 * S},600,0,0,arch,z
{2000 * S},700,0,3,kernel,4
{2000 * S},700,0,1,kernel,9
{1500 * S},100,0,0,arch,y
"""
# line 7 is a later row of job 100's task 0 (an update): its constraints at submission count


def write(path: Path, text: str) -> Path:
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


class Trace:
    def __init__(self, root: Path, ext: str, **texts: str) -> None:
        self.root, self.ext = root, ext
        self.paths = {}
        for name, default in (("machine_events", MACHINES), ("task_events", TASKS), ("task_constraints", CONSTRAINTS), ("machine_attributes", ATTRIBUTES)):
            self.paths[name] = write(root / f"{name}.{ext}", texts.get(name, default))

    def read(self, servers: int = 4, users: int = 3, seed: int = 0, constraints: bool = True, **kwargs) -> Scenario:
        more: dict[str, Any] = {"task_constraints": self.paths["task_constraints"], "machine_attributes": self.paths["machine_attributes"]} if constraints else {}
        return read_google_trace_jobs(self.paths["machine_events"], self.paths["task_events"], servers=servers, users=users, seed=seed, **more, **kwargs)


@pytest.fixture(params=["csv", "csv.gz"])
def trace(request, tmp_path: Path) -> Trace:
    return Trace(tmp_path, request.param)


def jobs(sc: Scenario) -> dict[str, dict]:
    return {f"{u['id']}/{j['id']}": j for u in sc.to_dict()["users"] for j in u["jobs"]}


def test_arrivals_durations_and_equal_constraints(trace: Trace) -> None:
    sc = trace.read()
    assert [u.id for u in sc.users] == ["alice", "bob", "erin"]  # carol, dave: no usable job; gina: none runnable
    assert sc.name == "google-trace-jobs-4x3-seed0"
    got = jobs(sc)
    assert set(got) == {"alice/100", "alice/700", "bob/200.1", "bob/200.2", "erin/500"}
    # arrivals: first SUBMIT, from the earliest arrival (job 100 at 1000 s)
    assert {k: j["arrival"] for k, j in got.items()} == {"alice/100": 0.0, "alice/700": 1000.0, "bob/200.1": 100.0, "bob/200.2": 200.0, "erin/500": 400.0}
    # durations: FINISH - SCHEDULE of the run that finished
    assert got["alice/100"]["tasks"] == 2 and got["alice/100"]["duration"] == {"dist": "empirical", "values": [30.0, 40.0]}
    assert got["bob/200.1"]["tasks"] == 1 and got["bob/200.1"]["duration"] == 60.0  # evicted at 1110, run again 1120-1180
    assert got["bob/200.2"]["duration"] == 10.0 and got["bob/200.2"]["demand"] == [0.05, 0.05]
    assert got["bob/200.1"]["demand"] == [0.02, 0.01]
    assert got["erin/500"]["duration"] == 1e-6  # a zero-length run: one microsecond
    assert got["alice/700"]["duration"] == 100.0
    # EQUAL: requires; the update of task 0 (arch y, later) is not followed
    assert got["alice/100"]["requires"] == {"arch": "x"}
    # other operators skipped (the default): those jobs unconstrained
    assert "requires" not in got["erin/500"] and "requires" not in got["alice/700"]
    # servers carry the attributes some kept constraint names, their latest values
    assert {s.id: s.attribute_map for s in sc.servers} == {"m1": {"arch": "x"}, "m2": {"arch": "y"}, "m3": {}, "m4": {}}
    job = next(j for j in sc.users[0].jobs if j.id == "100")
    assert job.duration == Duration("empirical", (("values", (30.0, 40.0)),))
    assert [s.id for s in sc.servers if job.constraint.admits(s.id, s.attribute_map)] == ["m1"]


def test_warnings_count_what_was_left_out(trace: Trace) -> None:
    warnings = " | ".join(trace.read().warnings)
    assert "2 task(s) without a run that finished" in warnings  # bob's killed task, dave's
    assert "1 job(s) without a SUBMIT after the trace's start" in warnings  # carol's
    assert "3 constraint row(s) with another operator than EQUAL" in warnings and "comparisons = 'skip'" in warnings
    assert "1 job(s) none of the 4 picked machines can run" in warnings  # gina's arch z
    assert trace.paths["task_constraints"].name in warnings


def test_expand_approximates_the_other_operators(trace: Trace) -> None:
    sc = trace.read(comparisons="expand")
    got = jobs(sc)
    assert got["erin/500"]["requires"] == {"kernel": ["3", "5"]}  # kernel < 6 (as integers)
    assert got["alice/700"]["requires"] == {"kernel": ["5", "7"]}  # > 4 and != 9
    assert got["alice/100"]["requires"] == {"arch": "x"}
    kernels = {s.id: s.attribute_map.get("kernel") for s in sc.servers}
    assert kernels == {"m1": "3", "m2": "5", "m3": "7", "m4": "9"}
    assert not any("constraint row" in w for w in sc.warnings)


def test_refuse_names_the_first_other_operator(trace: Trace) -> None:
    with pytest.raises(ScenarioError) as info:
        trace.read(comparisons="refuse")
    msg = str(info.value)
    assert trace.paths["task_constraints"].name in msg and "line 3" in msg and "column 4 (comparison operator)" in msg, msg
    assert "LESS_THAN" in msg and "not verified" in msg


def test_empty_values(tmp_path: Path) -> None:
    t = Trace(tmp_path, "csv", task_constraints=CONSTRAINTS + f"{1000 * S},100,1,0,rack,\n")
    assert jobs(t.read())["alice/100"]["requires"] == {"arch": "x"}
    assert any("4 constraint row(s)" in w for w in t.read().warnings)
    t = Trace(tmp_path, "csv", task_constraints=f"{1000 * S},100,1,0,rack,\n")
    with pytest.raises(ScenarioError, match=r"line 1, column 6 \(attribute value\): an empty value"):
        t.read(comparisons="refuse")


def test_without_constraints(trace: Trace) -> None:
    sc = trace.read(users=4, constraints=False)
    assert [u.id for u in sc.users] == ["alice", "bob", "erin", "gina"]  # gina's job runs anywhere now
    assert all(not s.attributes for s in sc.servers)
    assert all("requires" not in j for j in jobs(sc).values())


def test_window(trace: Trace) -> None:
    sc = trace.read(users=2, window=(1050.0, 1450.0))
    assert [u.id for u in sc.users] == ["bob", "erin"]
    assert {k: j["arrival"] for k, j in jobs(sc).items()} == {"bob/200.1": 50.0, "bob/200.2": 150.0, "erin/500": 350.0}
    with pytest.raises(ScenarioError, match="only 2 users"):
        trace.read(users=3, window=(1050.0, 1450.0))


def test_picks_are_a_pure_function_of_the_seed(tmp_path: Path) -> None:
    machines = "".join(f"0,{m},0,p,0.5,0.5\n" for m in range(1, 21))
    tasks = "".join(task(1000 + j, j, 0, ev, f"user{j % 7}") for j in range(1, 31) for ev in (SUBMIT, SCHEDULE)) + "".join(task(1100 + j, j, 0, FINISH, f"user{j % 7}") for j in range(1, 31))
    t = Trace(tmp_path, "csv", machine_events=machines, task_events=tasks)
    a, b = t.read(servers=5, users=3, seed=9, constraints=False), t.read(servers=5, users=3, seed=9, constraints=False)
    assert a.to_dict() == b.to_dict()
    picks = {(tuple(s.id for s in t.read(servers=5, users=3, seed=s, constraints=False).servers), tuple(u.id for u in t.read(servers=5, users=3, seed=s, constraints=False).users)) for s in range(8)}
    assert len(picks) > 1
    for u in a.users:  # a user's jobs are all its own, every one
        k = int(u.id.removeprefix("user"))
        assert sorted(int(j.id) for j in u.jobs) == [j for j in range(1, 31) if j % 7 == k]
        assert all(j.tasks == 1 and j.duration is not None and j.duration.fixed == 100.0 for j in u.jobs)


# --------------------------------------------------------------------------- defects


def expect(t: Trace, *fragments: str, **kwargs) -> None:
    with pytest.raises(ScenarioError) as info:
        t.read(**kwargs)
    msg = str(info.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, msg


@pytest.mark.parametrize("ext", ["csv", "csv.gz"])
@pytest.mark.parametrize(
    ("table", "text", "fragments"),
    [
        ("task_constraints", f"{S},100,0,7,arch,x\n", ("line 1", "column 4 (comparison operator)", "unknown comparison operator 7")),
        ("task_constraints", f"{S},1.5,0,0,arch,x\n", ("line 1", "column 2 (job ID)", "'1.5'")),
        ("task_constraints", f"{S},100,0,0,,x\n", ("line 1", "column 5 (attribute name)", "empty attribute name")),
        ("task_constraints", f"{S},100,0,0,arch\n", ("line 1", "5 columns")),
        ("machine_attributes", "0,1,arch,x,yes\n", ("line 1", "column 5 (attribute deleted)", "'yes'")),
        ("machine_attributes", "0,m1,arch,x,0\n", ("line 1", "column 2 (machine ID)", "'m1'")),
        ("machine_attributes", "0,1,arch\n", ("line 1", "3 columns")),
        ("task_events", TASKS + task(2200, 800, 0, 9, "zed"), ("line 33", "column 6 (event type)", "unknown task event type 9")),
        ("task_events", TASKS + "-5,,800,0,,0,zed,0,0,0.1,0.1,0,0\n", ("line 33", "column 1 (timestamp)", "negative")),
        ("task_events", TASKS + task(2200, 800, 0, SUBMIT, "zed", "lots", 0.1), ("line 33", "column 10 (CPU request)", "'lots'")),
    ],
)
def test_defects_name_file_line_and_column(tmp_path: Path, ext: str, table: str, text: str, fragments: tuple[str, ...]) -> None:
    t = Trace(tmp_path, ext, **{table: text})
    expect(t, f"{table}.{ext}", *fragments)


def test_missing_and_corrupt_files(tmp_path: Path) -> None:
    t = Trace(tmp_path, "csv")
    t.paths["task_constraints"] = tmp_path / "absent.csv.gz"
    expect(t, "absent.csv.gz", "not found")
    t = Trace(tmp_path, "csv")
    bad = tmp_path / "machine_attributes.csv.gz"
    bad.write_text(ATTRIBUTES)  # not gzip
    t.paths["machine_attributes"] = bad
    expect(t, "machine_attributes.csv.gz", "cannot read")


def test_bad_arguments(trace: Trace) -> None:
    expect(trace, "comparisons", comparisons="maybe")
    expect(trace, "window", window=(10.0, 5.0))
    expect(trace, "only 4 usable machines", servers=5)
    with pytest.raises(ScenarioError, match="go together"):
        read_google_trace_jobs(trace.paths["machine_events"], trace.paths["task_events"], servers=1, users=1, seed=0, task_constraints=trace.paths["task_constraints"])
    expect(trace, "only 3 users", users=4)


# --------------------------------------------------------------------------- [generate]


def toml(tmp_path: Path, body: str) -> Path:
    Trace(tmp_path, "csv")
    p = tmp_path / "trace-jobs.toml"
    p.write_text('[generate]\nkind = "google-trace"\nmachine_events = "machine_events.csv"\ntask_events = "task_events.csv"\nservers = 4\nusers = 3\n' + body)
    return p


def test_generate_table(tmp_path: Path) -> None:
    sc = load_scenario(toml(tmp_path, 'jobs = true\ntask_constraints = "task_constraints.csv"\nmachine_attributes = "machine_attributes.csv"\ncomparisons = "expand"\n'))
    ref = Trace(tmp_path, "csv").read(comparisons="expand")
    assert sc.to_dict() == ref.to_dict() and sc.name == "trace-jobs"
    assert sc.warnings == ref.warnings and sc.warnings  # the importer's remarks reach the run
    p = tmp_path / "w.toml"
    p.write_text('[generate]\nkind = "google-trace"\nmachine_events = "machine_events.csv"\ntask_events = "task_events.csv"\nservers = 4\nusers = 2\njobs = true\nwindow = [1050, 1450]\n')
    assert [u.id for u in load_scenario(p).users] == ["bob", "erin"]
    # jobs = false (the default) is the thesis's importer, unchanged
    thesis = load_scenario(toml(tmp_path, ""))
    assert all(not u.jobs for u in thesis.users)


@pytest.mark.parametrize(
    ("body", "where", "fragment"),
    [
        ('task_constraints = "task_constraints.csv"\n', "generate.task_constraints", "only read with jobs = true"),
        ("window = [0, 10]\n", "generate.window", "only read with jobs = true"),
        ('jobs = "yes"\n', "generate.jobs", "must be true"),
        ('jobs = true\ntask_constraints = "task_constraints.csv"\n', "generate.machine_attributes", "go together"),
        ("jobs = true\nwindow = [10, 5]\n", "generate.window", "0 <= start < end"),
        ("jobs = true\nwindow = [1, 2, 3]\n", "generate.window", "[start, end]"),
        ('jobs = true\ncomparisons = "all"\n', "generate.comparisons", "must be one of"),
        ("jobs = true\ntask_constraints = 5\nmachine_attributes = 6\n", "generate.task_constraints", "path"),
        ("jobs = true\nhorizon = 5\n", "generate.horizon", "unknown field"),
    ],
)
def test_generate_table_errors(tmp_path: Path, body: str, where: str, fragment: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(toml(tmp_path, body))
    msg = str(info.value)
    assert "trace-jobs.toml" in msg and where in msg and fragment in msg, msg
