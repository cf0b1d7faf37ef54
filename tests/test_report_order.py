"""The collector's reports over a real network come from different processes, so they
arrive in any order between processes (in order within one). The job tracker must not
guess which task a start is: a start that comes before its user's "submitted" waits for
it. These tests feed one collector the reports of a run in orders a network gives."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from dgdrf.model.scenario import build_scenario
from dgdrf.nodes.collector import Collector


def _scenario(tasks: int = 3):
    servers = [{"id": f"s{i}", "capacity": [4.0, 4.0]} for i in (1, 2)]
    users = [{"id": "u1", "jobs": [{"id": "a", "demand": [1.0, 1.0], "tasks": tasks, "duration": 1.0}]}]
    return build_scenario(["cpu", "mem"], servers, users, name="order")


def _reports(tasks: int = 3) -> list[tuple[str, str, float, dict]]:
    """What a run of one user's ``tasks`` tasks reports, in the order it happened: task k
    (index k) submitted, accepted, started on s1 or s2 in turn, later ended there."""
    out: list[tuple[str, str, float, dict]] = []
    for k in range(tasks):
        server = f"s{1 + k % 2}"
        out.append(("submitted", "u1", 0.1 * k, {"task_id": k, "job": 0, "index": k}))
        out.append(("accepted", "u1", 0.1 * k + 0.01, {"task_id": k, "server": server}))
        out.append(("allocated", server, 0.1 * k + 0.02, {"user": "u1", "task_id": k}))
    for k in range(tasks):
        out.append(("finished", f"s{1 + k % 2}", 2.0 + 0.1 * k, {"user": "u1", "task_id": k}))
    return out


def _feed(reports) -> Collector:
    collector = Collector(_scenario())
    for kind, source, time, fields in reports:
        collector(kind, source, time, dict(fields))
    collector.finish()
    return collector


def _merge(streams: list[list], order: list[int]) -> list:
    """Interleave per-source streams (each kept in its order) as ``order`` picks them."""
    at = [0] * len(streams)
    out = []
    for s in order:
        out.append(streams[s][at[s]])
        at[s] += 1
    return out


def test_in_order_every_task_runs_once_and_the_job_drains():
    c = _feed(_reports())
    assert c.violations == [] and not c.finite_work_left(10.0)
    assert sorted(r.task_id for r in c.allocations) == [0, 1, 2]


def test_a_later_start_before_earlier_submissions_is_not_taken_for_the_earlier_task():
    """The order that ran a task twice on a cluster: s2's start of task 1 comes first, then
    the user's reports, then s1's start of task 0. Before, the tracker took task 1 for
    index 0 (the user's next by its count), then task 0 for index 0 again."""
    reports = _reports()
    user = [r for r in reports if r[1] == "u1"]
    s1 = [r for r in reports if r[1] == "s1"]
    s2 = [r for r in reports if r[1] == "s2"]
    # s2: task 1 started; u1: everything; s1: task 0 started; s1, s2: task 2, the ends
    order = [2] + [0] * len(user) + [1] * len(s1) + [2] * (len(s2) - 1)
    c = _feed(_merge([user, s1, s2], order))
    assert c.violations == []
    assert not c.finite_work_left(10.0)
    records = c.jobs.job_records()
    assert [(r["job"], r["tasks"]) for r in records] == [("a", 3)]


def _gang_scenario():
    servers = [{"id": f"s{i}", "capacity": [4.0, 4.0]} for i in (1, 2)]
    parts = [{"demand": [1.0, 1.0]}, {"demand": [1.0, 0.5]}]
    users = [{"id": "u1", "jobs": [{"id": "a", "parts": parts, "tasks": 2, "duration": 1.0}]}]
    return build_scenario(["cpu", "mem"], servers, users, name="order-gangs")


def _gang_reports() -> list[tuple[str, str, float, dict]]:
    """Two instances of a job of two parts, each part on its own server: instance k has
    task ids 2k (on s1) and 2k + 1 (on s2), and is reported submitted with its first."""
    out: list[tuple[str, str, float, dict]] = []
    for k in range(2):
        base = 2 * k
        out.append(("submitted", "u1", 0.1 * k, {"task_id": base, "job": 0, "index": k}))
        out += [("accepted", "u1", 0.1 * k + 0.01, {"task_id": base + p, "server": f"s{1 + p}"}) for p in (0, 1)]
        out += [("allocated", f"s{1 + p}", 0.1 * k + 0.02, {"user": "u1", "task_id": base + p}) for p in (0, 1)]
    out += [("finished", f"s{1 + p}", 2.0 + 0.1 * k, {"user": "u1", "task_id": 2 * k + p}) for k in range(2) for p in (0, 1)]
    return out


@settings(max_examples=150, deadline=None)
@given(data=st.data(), gangs=st.booleans())
def test_any_interleaving_of_the_sources_gives_the_in_order_result(data, gangs):
    """Every interleaving that keeps each source's own order (what a network keeps), of a
    job's tasks or of a job of parts' instances: no violation, nothing left, every task
    started once and the job done with all its tasks."""
    reports = _gang_reports() if gangs else _reports()
    streams = [[r for r in reports if r[1] == src] for src in ("u1", "s1", "s2")]
    order = data.draw(st.permutations(list(itertools.chain.from_iterable([i] * len(s) for i, s in enumerate(streams)))))
    collector = Collector(_gang_scenario() if gangs else _scenario())
    for kind, source, time, fields in _merge(streams, order):
        collector(kind, source, time, dict(fields))
    collector.finish()
    assert collector.violations == []
    assert not collector.finite_work_left(10.0)
    assert collector.jobs.running == {} and collector.jobs.taken == {}
    assert [(r["job"], r["tasks"]) for r in collector.jobs.job_records()] == [("a", 2 if gangs else 3)]


def test_a_start_whose_task_is_never_reported_is_counted_not_dropped():
    """A start held for a task its user never reported (its process lost the report): at
    the end it is counted in the result's events, not silently dropped."""
    collector = Collector(_scenario())
    collector("allocated", "s1", 0.5, {"user": "u1", "task_id": 7})
    collector.finish()
    assert collector.counters.get("never_submitted") == 1 and collector.allocations == []
