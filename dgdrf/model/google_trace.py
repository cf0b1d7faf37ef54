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
user's tasks with their (CPU, memory) request. Every defect in the files raises
:class:`~dgdrf.errors.ScenarioError` naming the file, line and column.
"""

from __future__ import annotations

import csv
import gzip
import math
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import numpy as np

from dgdrf.errors import ScenarioError
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
