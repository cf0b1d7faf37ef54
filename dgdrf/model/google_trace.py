"""Scenarios from a real Google cluster-data 2011 subset (thesis 5.1).

The thesis builds its test cases from the Google 2011 trace: "X machines are picked at
random from the trace, and Y users. If a user contains several different tasks, one will
be picked at random from that user's tasks." :mod:`dgdrf.model.generators` only imitates
the user side; this module reads the trace itself, in its official CSV schema (no header
row, plain ``.csv`` or gzip-compressed ``.csv.gz``):

- machine_events: timestamp, machine ID, event type (0 ADD, 1 REMOVE, 2 UPDATE),
  platform ID, CPUs, memory (CPUs and memory normalised, possibly empty);
- task_events: timestamp, missing info, job ID, task index, machine ID, event type, user,
  scheduling class, priority, CPU request, memory request, disk request,
  different-machine restriction (empty fields allowed).

Only what the thesis needs is kept: each machine's current (CPU, memory) capacity and each
user's tasks with their (CPU, memory) request (:func:`read_google_trace`).

:func:`read_google_trace_jobs` reads the trace's *finite jobs* instead: arrivals from the
task events' SUBMIT times, task durations from SCHEDULE to FINISH, and, where given,
placement constraints from two more tables:

- task_constraints: timestamp, job ID, task index, comparison operator, attribute name,
  attribute value;
- machine_attributes: timestamp, machine ID, attribute name, attribute value, attribute
  deleted.

Every defect in the files raises :class:`~dgdrf.errors.ScenarioError` naming the file,
line and column.
"""

from __future__ import annotations

import csv
import gzip
import math
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from dgdrf.errors import ScenarioError
from dgdrf.model.constraints import MAX_ATTRIBUTES, MAX_VALUES, Constraint
from dgdrf.model.resources import fit_mask, natural_key
from dgdrf.model.scenario import Scenario, build_scenario

MACHINE_COLUMNS = ("timestamp", "machine ID", "event type", "platform ID", "CPUs", "memory")
TASK_COLUMNS = (
    "timestamp",
    "missing info",
    "job ID",
    "task index",
    "machine ID",
    "event type",
    "user",
    "scheduling class",
    "priority",
    "CPU request",
    "memory request",
    "disk space request",
    "different-machine restriction",
)
MACHINE_ADD, MACHINE_REMOVE, MACHINE_UPDATE = 0, 1, 2
TASK_SUBMIT = 0


class _Row:
    """One CSV row with typed accessors whose errors name file, line and column."""

    def __init__(self, path: Path, line: int, fields: list[str], columns: tuple[str, ...]) -> None:
        self.path, self.line, self.fields, self.columns = path, line, fields, columns

    def fail(self, col: int, what: str) -> ScenarioError:
        return ScenarioError(f"{self.path}: line {self.line}, column {col + 1} ({self.columns[col]}): {what}")

    def text(self, col: int) -> str:
        return self.fields[col].strip()

    def integer(self, col: int) -> int:
        value = self.text(col)
        try:
            return int(value)
        except ValueError:
            raise self.fail(col, f"expected an integer, got {value!r}") from None

    def amount(self, col: int) -> float | None:
        """A normalised resource amount: None when empty, else a finite number >= 0."""
        value = self.text(col)
        if not value:
            return None
        try:
            x = float(value)
        except ValueError:
            raise self.fail(col, f"expected a number, got {value!r}") from None
        if not math.isfinite(x) or x < 0:
            raise self.fail(col, f"expected a finite non-negative number, got {value!r}")
        return x


def _open(path: Path) -> TextIO:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _rows(path: Path, columns: tuple[str, ...], required: int) -> Iterator[_Row]:
    """Yield the non-blank rows of a headerless trace CSV, turning every read or decode
    failure (missing file, bad gzip, bad UTF-8, bad CSV) into a ScenarioError."""
    line = 0
    try:
        with _open(path) as fh:
            reader = csv.reader(fh)
            for fields in reader:
                line = reader.line_num
                if not fields or fields == [""]:
                    continue
                if len(fields) < required:
                    raise ScenarioError(
                        f"{path}: line {line}: has {len(fields)} columns, need at least {required} ({', '.join(columns[:required])})"
                    )
                yield _Row(path, line, fields, columns)
    except FileNotFoundError:
        raise ScenarioError(f"{path}: trace file not found") from None
    except (OSError, EOFError, zlib.error) as exc:
        where = f" after line {line}" if line else ""
        raise ScenarioError(f"{path}: cannot read trace file{where}: {getattr(exc, 'strerror', None) or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{path}: not UTF-8 text after line {line}: {exc.reason}") from None
    except csv.Error as exc:
        raise ScenarioError(f"{path}: line {line + 1}: malformed CSV: {exc}") from None


def read_machines(path: Path) -> dict[int, tuple[float, float]]:
    """Machine ID -> current (CPU, memory) capacity.

    The capacity is the latest one given with both values by an ADD or UPDATE event; a
    machine whose last event is REMOVE has left the cluster and is dropped, as is one whose
    capacity is never fully known.
    """
    last: dict[int, tuple[int, int]] = {}  # machine -> (timestamp, event type)
    caps: dict[int, tuple[int, tuple[float, float]]] = {}  # machine -> (timestamp, capacity)
    for row in _rows(path, MACHINE_COLUMNS, len(MACHINE_COLUMNS)):
        ts, machine, event = row.integer(0), row.integer(1), row.integer(2)
        if event not in (MACHINE_ADD, MACHINE_REMOVE, MACHINE_UPDATE):
            raise row.fail(2, f"unknown machine event type {event} (expected 0 ADD, 1 REMOVE or 2 UPDATE)")
        cpu, mem = row.amount(4), row.amount(5)
        if ts >= last.get(machine, (ts, 0))[0]:  # the trace is time-ordered; ties go to file order
            last[machine] = (ts, event)
        if event != MACHINE_REMOVE and cpu is not None and mem is not None and ts >= caps.get(machine, (ts, None))[0]:
            caps[machine] = (ts, (cpu, mem))
    return {m: cap for m, (_, cap) in caps.items() if last[m][1] != MACHINE_REMOVE}


def read_tasks(path: Path) -> dict[str, dict[tuple[int, int], tuple[float, float]]]:
    """User -> {(job ID, task index): (CPU, memory) request} for tasks requesting both.

    A task's request is that of its submit event when it gives both values, else that of
    the earliest event that does. Rows without a user cannot be attributed and are skipped.
    """
    owner: dict[tuple[int, int], str] = {}
    submit: dict[tuple[int, int], tuple[float, float]] = {}
    first: dict[tuple[int, int], tuple[int, tuple[float, float]]] = {}
    for row in _rows(path, TASK_COLUMNS, len(TASK_COLUMNS)):
        ts, job, index, event = row.integer(0), row.integer(2), row.integer(3), row.integer(5)
        user = row.text(6)
        cpu, mem = row.amount(9), row.amount(10)
        if not user:
            continue
        task = (job, index)
        owner.setdefault(task, user)
        if cpu is None or mem is None:
            continue
        if event == TASK_SUBMIT:
            submit.setdefault(task, (cpu, mem))
        if ts < first.get(task, (ts + 1, None))[0]:
            first[task] = (ts, (cpu, mem))
    out: dict[str, dict[tuple[int, int], tuple[float, float]]] = {}
    for task, (_, req) in first.items():
        cpu, mem = submit.get(task, req)
        if cpu > 0 and mem > 0:
            out.setdefault(owner[task], {})[task] = (cpu, mem)
    return out


def read_google_trace(machine_events: Path, task_events: Path, servers: int, users: int, seed: int) -> Scenario:
    """A scenario of ``servers`` machines and ``users`` users drawn from the trace (thesis 5.1).

    Machines and users are picked uniformly at random without replacement, then one task
    at random for each chosen user; its request is that user's demand vector. Candidates are
    sorted by id before drawing from ``numpy.random.default_rng(seed)``, so the result is
    a pure function of the two files and the seed.
    """
    machine_events, task_events = Path(machine_events), Path(task_events)
    if servers < 1 or users < 1 or seed < 0:
        raise ScenarioError(f"google-trace: need servers >= 1, users >= 1 and seed >= 0, got servers={servers}, users={users}, seed={seed}")
    machines = read_machines(machine_events)
    if len(machines) < servers:
        raise ScenarioError(f"{machine_events}: only {len(machines)} usable machines (alive, with CPU and memory known), need servers={servers}")
    tasks = read_tasks(task_events)
    if len(tasks) < users:
        raise ScenarioError(f"{task_events}: only {len(tasks)} usable users (with a task requesting CPU and memory), need users={users}")

    rng = np.random.default_rng(seed)
    machine_ids = sorted(machines)
    user_ids = sorted(tasks)
    chosen_machines = [machine_ids[i] for i in sorted(rng.choice(len(machine_ids), size=servers, replace=False))]
    chosen_users = [user_ids[i] for i in sorted(rng.choice(len(user_ids), size=users, replace=False))]
    server_specs = [(f"m{m}", list(machines[m])) for m in chosen_machines]
    user_specs = []
    for user in chosen_users:
        candidates = sorted(tasks[user])
        user_specs.append((user, list(tasks[user][candidates[int(rng.integers(len(candidates)))]])))
    return build_scenario(["cpu", "memory"], server_specs, user_specs, name=f"google-trace-{servers}x{users}-seed{seed}")


# --------------------------------------------------------------------------------------
# Finite jobs: arrivals, durations and constraints from the trace

#: task event types (the 2011 schema's codes as the trace's task_events use them, and as
#: the ``TaskEventType`` enum of google/cluster-data's amplab-charles/src/main/protobuf/
#: trace.proto, by one of the schema's authors, numbers them)
TASK_SCHEDULE, TASK_EVICT, TASK_FAIL, TASK_FINISH, TASK_KILL, TASK_LOST = 1, 2, 3, 4, 5, 6
TASK_EVENT_TYPES = 9  # 0 SUBMIT ... 8 UPDATE_RUNNING
#: a timestamp at or beyond the largest signed 64-bit value is after the trace's end (the
#: amplab-charles converter maps times beyond it to it); 0 is before its first second
TIME_AFTER_TRACE = 2**63 - 1
CONSTRAINT_COLUMNS = ("timestamp", "job ID", "task index", "comparison operator", "attribute name", "attribute value")
ATTRIBUTE_COLUMNS = ("timestamp", "machine ID", "attribute name", "attribute value", "attribute deleted")
#: comparison operators of task_constraints. NOT verified against the 2011 schema
#: document (not found through our search): the codes are those of the
#: ``MachineConstraint.Type`` enum in google/cluster-data's amplab-charles/src/main/
#: protobuf/trace.proto (EQUAL = 0; NOT_EQUAL = 1; LESS_THAN = 2; GREATER_THAN = 3), a
#: converter of this trace by one of the schema's authors whose other enums of the same
#: file (task event types, missing-info kinds) number as the CSV files do.
OP_EQUAL, OP_NOT_EQUAL, OP_LESS_THAN, OP_GREATER_THAN = 0, 1, 2, 3
OPERATORS = {OP_EQUAL: "EQUAL", OP_NOT_EQUAL: "NOT_EQUAL", OP_LESS_THAN: "LESS_THAN", OP_GREATER_THAN: "GREATER_THAN"}
#: what the importer does with a constraint it cannot read exactly (another operator than
#: EQUAL, or an empty value): see :func:`read_google_trace_jobs`
COMPARISONS = ("skip", "refuse", "expand")


@dataclass
class _TaskRecord:
    """What the task events say of one task: its user, request, first submission and the
    duration of its run that finished (microseconds; None if none did, measurably)."""

    user: str
    events: list[tuple[int, int, int]] = field(default_factory=list)  # (timestamp, line, event)
    submit_request: tuple[float, float] | None = None
    first_request: tuple[int, tuple[float, float]] | None = None

    @property
    def request(self) -> tuple[float, float] | None:
        """The request of its submit event when it gives both values, else that of the
        earliest event that does (the rule of :func:`read_tasks`)."""
        if self.submit_request is not None:
            return self.submit_request
        return self.first_request[1] if self.first_request is not None else None

    def submitted(self) -> int | None:
        """Its earliest SUBMIT time (microseconds), if any."""
        times = [ts for ts, _, ev in self.events if ev == TASK_SUBMIT]
        return min(times) if times else None

    def finished_run(self) -> int | None:
        """FINISH - SCHEDULE of its first run that finished (microseconds), events taken in
        time order (ties in file order). A run whose SCHEDULE is at 0 (before the trace) or
        whose FINISH is after it has no measurable duration; EVICT, FAIL, KILL and LOST end
        a run without finishing it."""
        scheduled: int | None = None
        for ts, _, ev in sorted(self.events):
            if ev == TASK_SCHEDULE:
                scheduled = ts if 0 < ts < TIME_AFTER_TRACE else None
            elif ev == TASK_FINISH:
                if scheduled is not None and ts < TIME_AFTER_TRACE:
                    return ts - scheduled
                scheduled = None
            elif ev in (TASK_EVICT, TASK_FAIL, TASK_KILL, TASK_LOST):
                scheduled = None
        return None


def read_task_records(path: Path) -> dict[tuple[int, int], _TaskRecord]:
    """(job ID, task index) -> its :class:`_TaskRecord`, for every task with a user."""
    tasks: dict[tuple[int, int], _TaskRecord] = {}
    for row in _rows(path, TASK_COLUMNS, len(TASK_COLUMNS)):
        ts, job, index, event = row.integer(0), row.integer(2), row.integer(3), row.integer(5)
        if not 0 <= event < TASK_EVENT_TYPES:
            raise row.fail(5, f"unknown task event type {event} (expected 0 SUBMIT ... 8 UPDATE_RUNNING)")
        if ts < 0:
            raise row.fail(0, f"a timestamp must not be negative, got {ts}")
        user = row.text(6)
        cpu, mem = row.amount(9), row.amount(10)
        if not user:
            continue
        record = tasks.setdefault((job, index), _TaskRecord(user))
        record.events.append((ts, row.line, event))
        if cpu is None or mem is None:
            continue
        if event == TASK_SUBMIT and record.submit_request is None:
            record.submit_request = (cpu, mem)
        if record.first_request is None or ts < record.first_request[0]:
            record.first_request = (ts, (cpu, mem))
    return tasks


@dataclass(frozen=True)
class _Requirement:
    """One row of task_constraints, where it is (for errors)."""

    op: int
    name: str
    value: str


def read_task_constraints(path: Path, comparisons: str) -> tuple[dict[tuple[int, int], tuple[_Requirement, ...]], int]:
    """(job ID, task index) -> its constraint rows at its earliest timestamp in the file
    (its constraints when submitted; later rows, an update, are not followed), and the
    number of rows skipped because their operator is not EQUAL or their value is empty
    (with ``comparisons`` = "refuse", the first such row is an error instead)."""
    rows: dict[tuple[int, int], tuple[int, list[_Requirement]]] = {}
    unsupported = 0
    for row in _rows(path, CONSTRAINT_COLUMNS, len(CONSTRAINT_COLUMNS)):
        ts, job, index, op = row.integer(0), row.integer(1), row.integer(2), row.integer(3)
        name, value = row.text(4), row.text(5)
        if op not in OPERATORS:
            raise row.fail(3, f"unknown comparison operator {op} (expected {', '.join(f'{k} {v}' for k, v in OPERATORS.items())})")
        if not name:
            raise row.fail(4, "empty attribute name")
        if op != OP_EQUAL or not value:
            what = f"operator {op} ({OPERATORS[op]}; its code is not verified against the 2011 schema document)" if op != OP_EQUAL else "an empty value (its meaning is not documented here)"
            if comparisons == "refuse":
                raise row.fail(3 if op != OP_EQUAL else 5, f"{what}: only EQUAL with a value is read exactly (comparisons = 'skip' leaves such rows out, 'expand' approximates them)")
            if comparisons == "skip" or not value:
                unsupported += 1
                continue
        task = (job, index)
        first = rows.get(task)
        if first is None or ts < first[0]:
            rows[task] = (ts, [_Requirement(op, name, value)])
        elif ts == first[0]:
            first[1].append(_Requirement(op, name, value))
    return {task: tuple(sorted(set(reqs), key=lambda r: (r.name, r.op, r.value))) for task, (_, reqs) in rows.items()}, unsupported


def read_machine_attributes(path: Path) -> dict[int, dict[str, str]]:
    """Machine ID -> attribute name -> value, each the latest row for its (machine, name)
    (ties in file order); an attribute whose latest row is deleted is absent, as is one
    with an empty value (a scenario's attribute values are non-empty)."""
    latest: dict[tuple[int, str], tuple[int, str, bool]] = {}
    for row in _rows(path, ATTRIBUTE_COLUMNS, len(ATTRIBUTE_COLUMNS)):
        ts, machine, name, value, deleted = row.integer(0), row.integer(1), row.text(2), row.text(3), row.text(4)
        if not name:
            raise row.fail(2, "empty attribute name")
        if deleted not in ("", "0", "1"):
            raise row.fail(4, f"expected 0 or 1 (or empty), got {deleted!r}")
        key = (machine, name)
        if ts >= latest.get(key, (ts, "", False))[0]:
            latest[key] = (ts, value, deleted == "1")
    out: dict[int, dict[str, str]] = {}
    for (machine, name), (_, text, gone) in latest.items():
        if not gone and text:
            out.setdefault(machine, {})[name] = text
    return out


def _matches(op: int, have: str, value: str) -> bool:
    """Whether a machine's attribute value ``have`` satisfies ``op value`` (the expanded
    operators: LESS_THAN and GREATER_THAN compare integers, and a value that is not one
    satisfies neither)."""
    if op == OP_EQUAL:
        return have == value
    if op == OP_NOT_EQUAL:
        return have != value
    try:
        a, b = int(have), int(value)
    except ValueError:
        return False
    return a < b if op == OP_LESS_THAN else a > b


def _requirement_doc(reqs: tuple[_Requirement, ...], machines: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    """The scenario fields (``requires``, maybe ``eligible``) of a task's constraint rows
    on the picked ``machines`` (server id, attributes): EQUAL rows exactly, the others
    (with comparisons = "expand") as the values present on those machines that satisfy
    them, or, past :data:`MAX_VALUES` values, as the servers that do. Rows on the same
    attribute all hold (their value sets intersect)."""
    requires: dict[str, set[str]] = {}
    eligible: set[str] | None = None
    for r in reqs:
        holders = [(sid, attrs[r.name]) for sid, attrs in machines if r.name in attrs and _matches(r.op, attrs[r.name], r.value)]
        if r.op == OP_EQUAL:
            values = {r.value}
        else:
            values = {v for _, v in holders}
            if len(values) > MAX_VALUES:
                ids = {sid for sid, _ in holders}
                eligible = ids if eligible is None else eligible & ids
                continue
        requires[r.name] = requires[r.name] & values if r.name in requires else values
    doc: dict[str, Any] = {}
    if requires:
        doc["requires"] = {name: sorted(vs) for name, vs in requires.items()}
    if eligible is not None:
        doc["eligible"] = sorted(eligible, key=natural_key)
    return doc


def read_google_trace_jobs(
    machine_events: Path,
    task_events: Path,
    servers: int,
    users: int,
    seed: int,
    task_constraints: Path | None = None,
    machine_attributes: Path | None = None,
    window: tuple[float, float] | None = None,
    comparisons: str = "skip",
) -> Scenario:
    """A scenario of the trace's own finite jobs: ``servers`` machines and ``users`` users
    picked at random as :func:`read_google_trace` picks them, each user with its jobs that
    arrive in ``window`` (trace seconds [start, end); default: every job).

    What is exact, on the picked machines:

    - a job's arrival is its first SUBMIT (seconds, from ``window``'s start, or else from
      the earliest arrival of the picked users' jobs); a job first submitted at time 0
      (before the trace's first recorded second) has no known arrival and is dropped;
    - a task's duration is FINISH - SCHEDULE of its run that finished
      (:meth:`_TaskRecord.finished_run`); a task that never finished measurably (killed,
      failed, still running at the end, started before the trace) is dropped, and a job
      left with no task is dropped. A duration of 0 becomes 1 microsecond, the run's
      clock resolution;
    - a task's demand is its (CPU, memory) request (the rule of :func:`read_tasks`;
      tasks without both, or with either 0, are dropped);
    - EQUAL constraints (task_constraints with machine_attributes): ``requires`` the
      value, on servers whose ``attributes`` are the machines' latest, for the attributes
      any kept constraint names.

    What is approximated:

    - the tasks of a trace job are one scenario job per distinct (request, constraint)
      (ids ``<job>`` or ``<job>.<k>``); its durations are ``{"dist": "empirical",
      "values": [...]}`` of its tasks' durations (a fixed duration if they are all equal):
      each task draws one of them, so the job keeps its durations' distribution but not
      which task had which;
    - attributes and constraints are taken once: machines' latest values, each task's
      constraints at their earliest timestamp;
    - other operators: ``comparisons`` = "skip" (default) leaves those rows (and EQUAL
      rows with an empty value) out, so such tasks are less constrained than in the trace;
      "refuse" makes the first of them an error; "expand" reads NOT_EQUAL, LESS_THAN and
      GREATER_THAN by the unverified codes of :data:`OPERATORS` as the set of values
      present on the picked machines that satisfy them (integers compared as integers; a
      machine without the attribute satisfies none).

    Jobs that no picked machine can run (their constraint admits none, or their demand
    fits on none it admits) are dropped before users are picked: the users are drawn among
    those left with a job. Every count of dropped things is in the scenario's
    ``warnings``. A pure function of the files and its arguments.
    """
    machine_events, task_events = Path(machine_events), Path(task_events)
    if servers < 1 or users < 1 or seed < 0:
        raise ScenarioError(f"google-trace: need servers >= 1, users >= 1 and seed >= 0, got servers={servers}, users={users}, seed={seed}")
    if comparisons not in COMPARISONS:
        raise ScenarioError(f"google-trace: comparisons must be one of {', '.join(COMPARISONS)}, got {comparisons!r}")
    if (task_constraints is None) != (machine_attributes is None):
        raise ScenarioError("google-trace: task_constraints and machine_attributes go together (a constraint is matched against the machines' attributes)")
    if window is not None and not (0 <= window[0] < window[1]):
        raise ScenarioError(f"google-trace: window must be [start, end] trace seconds with 0 <= start < end, got {list(window)}")
    machines = read_machines(machine_events)
    if len(machines) < servers:
        raise ScenarioError(f"{machine_events}: only {len(machines)} usable machines (alive, with CPU and memory known), need servers={servers}")
    records = read_task_records(task_events)
    constraints: dict[tuple[int, int], tuple[_Requirement, ...]] = {}
    attributes: dict[int, dict[str, str]] = {}
    skipped_rows = 0
    if task_constraints is not None and machine_attributes is not None:
        constraints, skipped_rows = read_task_constraints(Path(task_constraints), comparisons)
        attributes = read_machine_attributes(Path(machine_attributes))

    # jobs: their tasks that finished, their arrival
    unfinished = unrequested = early = 0
    by_job: dict[int, list[tuple[int, _TaskRecord, int]]] = {}
    arrival: dict[int, int] = {}
    for (job, index), rec in sorted(records.items()):
        submitted = rec.submitted()
        if submitted is not None:
            arrival[job] = min(arrival.get(job, submitted), submitted)
        run = rec.finished_run()
        req = rec.request
        if run is None:
            unfinished += 1
        elif req is None or not (req[0] > 0 and req[1] > 0):
            unrequested += 1
        else:
            by_job.setdefault(job, []).append((index, rec, run))
    for j in [j for j in by_job if arrival.get(j, 0) <= 0]:
        early += 1
        del by_job[j]
    if window is not None:
        lo, hi = window[0] * 1e6, window[1] * 1e6
        by_job = {j: ts for j, ts in by_job.items() if lo <= arrival[j] < hi}

    rng = np.random.default_rng(seed)
    machine_ids = sorted(machines)
    chosen = [machine_ids[i] for i in sorted(rng.choice(len(machine_ids), size=servers, replace=False))]
    picked = [(f"m{m}", attributes.get(m, {})) for m in chosen]
    cap = np.array([machines[m] for m in chosen], dtype=np.float64)

    # scenario jobs: one per (request, constraint) of a trace job, if the picked machines can run it
    candidates: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    unrunnable = 0
    for job in sorted(by_job):
        groups: dict[tuple[tuple[float, float], tuple[_Requirement, ...]], list[tuple[int, _TaskRecord, int]]] = {}
        for index, rec, run in by_job[job]:
            assert rec.request is not None
            groups.setdefault((rec.request, constraints.get((job, index), ())), []).append((index, rec, run))
        user = by_job[job][0][1].user
        for k, ((req, reqs), tasks) in enumerate(sorted(groups.items(), key=lambda g: g[1][0][0])):
            doc = _job_doc(job if len(groups) == 1 else f"{job}.{k + 1}", req, tasks, arrival[job], reqs, picked)
            if not _runnable(doc, picked, cap):
                unrunnable += 1
                continue
            candidates.setdefault(user, []).append((arrival[job], doc))
    if len(candidates) < users:
        raise ScenarioError(
            f"{task_events}: only {len(candidates)} users have a job the {servers} picked machines can run (finished tasks with CPU and memory requests"
            f"{', arriving in the window' if window is not None else ''}), need users={users}"
        )
    user_ids = sorted(candidates)
    chosen_users = [user_ids[i] for i in sorted(rng.choice(len(user_ids), size=users, replace=False))]
    origin = window[0] * 1e6 if window is not None else min(a for u in chosen_users for a, _ in candidates[u])
    user_docs: list[Mapping[str, Any]] = []
    for user in chosen_users:
        jobs = []
        for _, doc in candidates[user]:
            jobs.append({**doc, "arrival": round((doc["arrival"] - origin) / 1e6, 6)})
        user_docs.append({"id": user, "jobs": jobs})

    named = {name for u in user_docs for j in u["jobs"] for name in j.get("requires", {})}
    server_docs: list[Mapping[str, Any]] = []
    for (sid, attrs), capacity in zip(picked, cap):
        server: dict[str, Any] = {"id": sid, "capacity": [float(x) for x in capacity]}
        kept = {name: v for name, v in sorted(attrs.items()) if name in named}
        if len(kept) > MAX_ATTRIBUTES:
            raise ScenarioError(f"{machine_attributes}: machine {sid[1:]} has {len(kept)} attributes the picked jobs' constraints name; a scenario's server may have at most {MAX_ATTRIBUTES}")
        if kept:
            server["attributes"] = kept
        server_docs.append(server)
    warnings = []
    if unfinished:
        warnings.append(f"{task_events}: {unfinished} task(s) without a run that finished in the trace left out (no duration)")
    if unrequested:
        warnings.append(f"{task_events}: {unrequested} finished task(s) without a positive CPU and memory request left out")
    if early:
        warnings.append(f"{task_events}: {early} job(s) without a SUBMIT after the trace's start left out (no known arrival)")
    if skipped_rows:
        warnings.append(f"{task_constraints}: {skipped_rows} constraint row(s) with another operator than EQUAL or an empty value skipped (comparisons = {comparisons!r}): those tasks are less constrained than in the trace")
    if unrunnable:
        warnings.append(f"{task_events}: {unrunnable} job(s) none of the {servers} picked machines can run left out")
    scenario = build_scenario(["cpu", "memory"], server_docs, user_docs, name=f"google-trace-jobs-{servers}x{users}-seed{seed}")
    return replace(scenario, warnings=tuple(warnings))


def _job_doc(ident: int | str, req: tuple[float, float], tasks: list[tuple[int, _TaskRecord, int]], job_arrival: int, reqs: tuple[_Requirement, ...], picked: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    """A scenario job of ``tasks`` (index, record, duration in microseconds), arriving at
    the first SUBMIT among them (else the job's), in microseconds until the caller
    shifts it."""
    durations = [max(run, 1) / 1e6 for _, _, run in sorted(tasks, key=lambda t: t[0])]
    submits = [s for s in (rec.submitted() for _, rec, _ in tasks) if s is not None and s > 0]
    doc: dict[str, Any] = {
        "id": str(ident),
        "demand": list(req),
        "tasks": len(tasks),
        "duration": durations[0] if len(set(durations)) == 1 else {"dist": "empirical", "values": durations},
        "arrival": min(submits) if submits else job_arrival,
    }
    doc.update(_requirement_doc(reqs, picked))
    return doc


def _runnable(doc: Mapping[str, Any], picked: list[tuple[str, dict[str, str]]], cap: np.ndarray) -> bool:
    """Whether some picked machine admits the job's constraint and fits its demand (the
    loader's check, dgdrf/model/scenario.py, made before users are picked)."""
    fits = fit_mask(np.asarray(doc["demand"], dtype=np.float64), cap, cap)
    constraint = Constraint.from_wire(doc.get("eligible", []), doc.get("requires", {}))
    return any(fit and constraint.admits(sid, attrs) for (sid, attrs), fit in zip(picked, fits))
