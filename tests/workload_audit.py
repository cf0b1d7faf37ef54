"""An audit of a run with jobs, independent of the collector: it hears every report the
actors make (a tee in front of the collector) and checks, from them alone and the
scenario, what every workload run must keep:

- no server over capacity at any instant (its running tasks' demands, from the
  ``allocated`` and ``finished`` reports, within its capacity);
- resources freed exactly once (a task ends once, and only after it started);
- no task on a server its constraint does not admit;
- every task of a finite job runs to completion exactly once (a task lost with a crashed
  server may run again, and is then counted lost once; so may one that ended on a server
  that crashed before its user heard so, whose first end is then no completion).

The collector checks the same things in its own way; this re-derivation in the tests is
the second opinion that makes a bug in the instrument visible.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from dgdrf.model.resources import FIT_TOLERANCE
from dgdrf.model.scenario import Scenario
from dgdrf.world import World


class WorkloadAudit:
    def __init__(self, world: World) -> None:
        self.scenario: Scenario = world.scenario
        self.problems: list[str] = []
        self.capacity = {s.id: s.capacity for s in self.scenario.servers}
        self.attributes = {s.id: s.attribute_map for s in self.scenario.servers}
        self.users = {u.id: u for u in self.scenario.users}
        self.used: dict[str, list[float]] = {s.id: [0.0] * len(self.scenario.resources) for s in self.scenario.servers}
        self.task_of: dict[tuple[str, int], tuple[int, int]] = {}  # (user, task id) -> (job, index)
        self.running: dict[tuple[str, int], tuple[str, list[float]]] = {}  # (user, task id) -> (server, demand)
        self.ended: dict[tuple[str, int], str] = {}  # (user, task id) -> the server it ended on
        self.down = world.down  # the servers whose crash the run has detected (a live set)
        self.completed: Counter[tuple[str, int, int]] = Counter()
        self.peak: dict[str, int] = defaultdict(int)  # server -> most tasks running at once
        self.placements: dict[tuple[str, int], list[str]] = defaultdict(list)  # (user, job) -> servers its tasks ran on
        self.lost = 0
        self.crashed: set[str] = set()
        for actor in world.transport.actors.values():
            inner = actor.ctx.reporter
            actor.ctx.reporter = self._tee(inner)
        join = world.join

        def joined(spec) -> None:  # a server that joins is heard too
            self.capacity[spec.id] = spec.capacity
            self.attributes[spec.id] = spec.attribute_map
            self.used[spec.id] = [0.0] * len(self.scenario.resources)
            join(spec)
            actor = world.transport.actors[spec.id]
            actor.ctx.reporter = self._tee(actor.ctx.reporter)

        world.join = joined  # type: ignore[method-assign]

    def _tee(self, inner: Any):
        def report(kind: str, source: str, time: float, fields: dict[str, Any]) -> None:
            self.hear(kind, source, time, fields)
            inner(kind, source, time, fields)

        return report

    def hear(self, kind: str, source: str, time: float, f: dict[str, Any]) -> None:
        if kind == "submitted" and "job" in f:
            self.task_of[(source, f["task_id"])] = (f["job"], f["index"])
        elif kind == "allocated":
            key = (f["user"], f["task_id"])
            if key in self.running or key in self.ended:
                self.problems.append(f"t={time}: {key} started twice")
            demand = [float(x) for x in f["demand"]]
            used = self.used[source]
            for r, d in enumerate(demand):
                used[r] += d
            cap = self.capacity[source]
            if any(used[r] > cap[r] + FIT_TOLERANCE * max(cap[r], 1.0) for r in range(len(cap))):
                self.problems.append(f"t={time}: {source} over capacity: {used} > {list(cap)}")
            self.running[key] = (source, demand)
            self.peak[source] = max(self.peak[source], sum(1 for s, _ in self.running.values() if s == source))
            job = self.task_of.get(key)
            user = self.users[f["user"]]
            if job is not None:
                spec = user.job_list[job[0]]
                self.placements[(f["user"], job[0])].append(source)
                if not spec.constraint.admits(source, self.attributes[source]):
                    self.problems.append(f"t={time}: {key} of job {spec.id} on {source}, not admitted")
            elif not user.classic and not user.constraint.admits(source, self.attributes[source]):
                self.problems.append(f"t={time}: {key} on {source}, not admitted")
        elif kind == "finished":
            key = (f["user"], f["task_id"])
            if key not in self.running:
                self.problems.append(f"t={time}: {key} ended but was not running (freed twice?)")
                return
            server, demand = self.running.pop(key)
            if server != source:
                self.problems.append(f"t={time}: {key} ended on {source}, ran on {server}")
            self.ended[key] = source
            used = self.used[server]
            for r, d in enumerate(demand):
                used[r] -= d
            job = self.task_of.get(key)
            if job is not None:
                self.completed[(f["user"], *job)] += 1
        elif kind == "task_lost":
            self.lost += 1
            key = (source, f["task_id"])
            if self.ended.get(key) == f.get("server") and f.get("server") in self.down:
                # it ended there, and the server crashed before its user heard so: its
                # user runs it again, and that end reached no one
                del self.ended[key]
                job = self.task_of.get(key)
                if job is not None:
                    self.completed[(source, *job)] -= 1
            lost = self.running.pop(key, None)
            if lost is not None:  # it ran on a server that died: its resources died with it
                used = self.used[lost[0]]
                for i, d in enumerate(lost[1]):
                    used[i] -= d

    def check_drained(self, aside: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset()) -> list[str]:
        """What is wrong, for a run that drained: every task of every finite job
        completed exactly once; of a job set ``aside`` (given up, withdrawn: (user, job
        id)), at most once, and not every one."""
        out = list(self.problems)
        for u in self.scenario.users:
            for j, spec in enumerate(u.job_list):
                if spec.tasks is None:
                    continue
                counts = [self.completed[(u.id, j, i)] for i in range(spec.tasks)]
                if (u.id, spec.id) in aside:
                    if max(counts) > 1 or min(counts) == 1:
                        out.append(f"job {spec.id} of {u.id}, set aside, completed its tasks {counts} times")
                    continue
                for i, n in enumerate(counts):
                    if n != 1:
                        out.append(f"task {i} of job {spec.id} of {u.id} completed {n} times")
        return out

    def completed_jobs(self) -> set[tuple[str, str]]:
        """(user, job id) of the finite jobs whose every task completed."""
        return {(u.id, spec.id) for u in self.scenario.users for j, spec in enumerate(u.job_list) if spec.tasks is not None and all(self.completed[(u.id, j, i)] >= 1 for i in range(spec.tasks))}
