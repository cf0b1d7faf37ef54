"""Property tests (hypothesis) over random finite, constrained, weighted workloads, under
every policy, with and without loss, duplication and a server crash: no server over
capacity at any instant, resources freed exactly once, no task on a server its
constraint does not admit, every task runs to completion exactly once (one lost with a
crashed server runs again elsewhere, counted as ``task_lost``), and every run ends
drained. Under churn (servers leaving and joining, a user crashing, with loss) every run
still ends drained, the jobs given up are exactly those no server left can run, and a
crashed user's unfinished jobs are withdrawn. Checked by the collector and,
independently, by tests/workload_audit.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

from dgdrf.emulation import Crash, RunConfig
from dgdrf.errors import ScenarioError
from dgdrf.model.fleet import runs_on
from dgdrf.model.scenario import ServerSpec, build_scenario
from dgdrf.policies import POLICIES
from dgdrf.world import Join, build

from workload_audit import WorkloadAudit

capacities = st.lists(st.integers(1, 4).map(float), min_size=2, max_size=2)
demands = st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0]), min_size=2, max_size=2)
crashes = st.tuples(st.integers(0, 10), st.sampled_from([1.0, 4.0, 9.0, 20.0]))
durations = st.one_of(st.integers(1, 15).map(float), st.builds(lambda m: {"dist": "exp", "mean": float(m), "max": 40.0}, st.integers(1, 10)))


@st.composite
def workloads(draw):
    n_servers = draw(st.integers(2, 5))
    servers = [{"id": f"s{i}", "capacity": draw(capacities), "attributes": {"zone": draw(st.sampled_from(["a", "b"])), "gpu": draw(st.booleans())}} for i in range(n_servers)]
    users = []
    for u in range(draw(st.integers(1, 4))):
        jobs = []
        for j in range(draw(st.integers(1, 2))):
            job = {"id": f"j{j}", "demand": draw(demands), "tasks": draw(st.integers(1, 4)), "duration": draw(durations), "arrival": float(draw(st.integers(0, 20)))}
            kind = draw(st.sampled_from(["none", "none", "eligible", "requires", "both"]))
            if kind in ("eligible", "both"):
                job["eligible"] = draw(st.lists(st.sampled_from([s["id"] for s in servers]), min_size=1, max_size=n_servers, unique=True))
            if kind in ("requires", "both"):
                job["requires"] = {"zone": draw(st.sampled_from(["a", "b", ["a", "b"]]))}
            jobs.append(job)
        users.append({"id": f"u{u}", "weight": float(draw(st.sampled_from([1, 1, 2, 3]))), "jobs": jobs})
    try:
        return build_scenario(["cpu", "mem"], servers, users, name="random-jobs")
    except ScenarioError:  # a job that no server could run: refused on load, not a run
        assume(False)


def _still_runnable(scenario, crashed: str) -> bool:
    """Every job keeps a server its constraint admits and its demand fits, besides ``crashed``."""
    rest = [s for s in scenario.servers if s.id != crashed]
    for u in scenario.users:
        for job in u.job_list:
            if not any(job.constraint.admits(s.id, s.attribute_map) and np.all(np.asarray(job.demand) <= np.asarray(s.capacity) + 1e-9) for s in rest):
                return False
    return True


def _check(scenario, policy: str, loss: float, duplicate: float, crash: tuple[int, float] | None, seed: int) -> None:
    """Run and check; ``crash``: (server index, seconds after allocation starts) of a
    server that crashes (never the first: the central scheduler of drf and fifo)."""
    config = RunConfig(policy=policy, seed=seed, loss=loss, duplicate=duplicate, warmup=2.0, max_time=5000.0)
    controls = []
    if crash is not None:
        victim = scenario.servers[1 + crash[0] % (len(scenario.servers) - 1)].id
        assume(_still_runnable(scenario, victim))
        controls.append(Crash(at=(config.warmup if POLICIES[policy].distributed else 0.0) + crash[1], addresses=(victim,)))
    world = build(scenario, config)
    audit = WorkloadAudit(world)
    result = world.run(controls=controls)
    assert result.invariant_violations == []
    assert result.stop_reason == "drained", (result.stop_reason, result.unfinished_tasks, result.events)
    assert audit.check_drained() == []
    assert result.jobs is not None and all(j["jct"] is not None and j["jct"] >= 0 for j in result.jobs)
    if crash and audit.lost:
        assert result.events.get("task_lost", 0) == audit.lost
    event(f"{'tasks lost with the crash' if audit.lost else 'none lost'}" if crash else "no crash")
    event(f"retransmitted: {bool(result.events.get('retransmitted'))}")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(workloads(), st.sampled_from(list(POLICIES)), st.integers(0, 5))
def test_every_policy_drains_random_workloads_without_a_violation(scenario, policy, seed):
    _check(scenario, policy, 0.0, 0.0, None, seed)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(workloads(), st.sampled_from(list(POLICIES)), st.integers(0, 5), st.sampled_from([(0.05, 0.0), (0.0, 0.05), (0.05, 0.02)]))
def test_every_policy_drains_under_loss_and_duplication(scenario, policy, seed, faults):
    _check(scenario, policy, faults[0], faults[1], None, seed)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(workloads(), st.sampled_from(list(POLICIES)), st.integers(0, 5), st.sampled_from([0.0, 0.03]), crashes)
def test_tasks_lost_with_a_crashed_server_run_again_elsewhere(scenario, policy, seed, loss, crash):
    _check(scenario, policy, loss, 0.0, crash, seed)


#: the policies that decide the papers' fairness over the overlay (issue 35)
OVERLAY_FAIRNESS = ["dg-tsf", "pdg-tsf", "d-psdsf"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(workloads(), st.sampled_from(OVERLAY_FAIRNESS), st.integers(0, 20), st.sampled_from([(0.0, 0.0), (0.05, 0.0), (0.0, 0.05), (0.1, 0.05)]), st.none() | crashes)
def test_the_overlay_fairness_policies_drain_under_every_fault(scenario, policy, seed, faults, crash):
    """Issue 35's policies, each drawn more often than among all: no task on an
    ineligible server, no server over capacity, every task once, under loss, duplication
    and a crash."""
    _check(scenario, policy, faults[0], faults[1], crash, seed)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(workloads(), st.sampled_from(list(POLICIES)), st.integers(0, 20), st.sampled_from([(0.0, 0.0), (0.05, 0.0), (0.0, 0.05), (0.1, 0.05)]), st.none() | crashes)
def test_many_random_workloads_drain_under_every_fault(scenario, policy, seed, faults, crash):
    _check(scenario, policy, faults[0], faults[1], crash, seed)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_a_crash_loses_running_tasks_that_run_again_under_every_policy(policy):
    """Two servers, 6 tasks of 10 s on them; the second crashes 5 s after allocation
    starts with tasks running: they are lost (task_lost) and run again on the first."""
    s = build_scenario(["cpu", "mem"], [("s1", [2.0, 2.0]), ("s2", [2.0, 2.0])], [{"id": "u", "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 6, "duration": 10.0}]}])
    world = build(s, RunConfig(policy=policy, warmup=2.0))
    audit = WorkloadAudit(world)
    r = world.run(controls=[Crash(at=world.start + 5.0, addresses=("s2",))])
    assert r.stop_reason == "drained" and r.invariant_violations == [] and audit.check_drained() == []
    assert audit.lost >= 1 and r.events["task_lost"] == audit.lost and r.events["servers_down"] == 1
    assert set(audit.placements[("u", 0)][-4:]) == {"s1"}  # after the crash only s1 runs them


# -- churn: servers leaving and joining, a user crashing --------------------------------------
#: (server index, seconds after allocation starts) of departures; (template index, seconds,
#: whether it takes a departed server's kind) of joins; (user index, seconds) of a user crash
churns = st.fixed_dictionaries({
    "departures": st.lists(st.tuples(st.integers(0, 10), st.sampled_from([1.0, 4.0, 9.0, 20.0])), max_size=2),
    "joins": st.lists(st.tuples(st.integers(0, 10), st.sampled_from([2.0, 6.0, 15.0, 30.0]), st.booleans()), max_size=2),
    "user_crash": st.none() | st.tuples(st.integers(0, 10), st.sampled_from([3.0, 10.0])),
})


def _check_churn(scenario, policy: str, loss: float, churn: dict, seed: int) -> None:
    """Run under ``churn`` and check that the run drains with exactly the right jobs set
    aside: given up (no server up at the end can run them) or withdrawn (their user
    crashed), every other job done, nothing run twice or over capacity."""
    config = RunConfig(policy=policy, seed=seed, loss=loss, warmup=2.0, max_time=5000.0)
    world = build(scenario, config)
    servers = scenario.servers
    victims = list(dict.fromkeys(servers[1 + i % (len(servers) - 1)].id for i, _ in churn["departures"]))  # never the central scheduler
    controls: list[Crash | Join] = [Crash(world.start + t, (victim,)) for victim, (_, t) in zip(victims, churn["departures"])]
    by_id = {s.id: s for s in servers}
    for k, (i, t, like_departed) in enumerate(churn["joins"]):
        like = by_id[victims[i % len(victims)]] if like_departed and victims else servers[i % len(servers)]
        controls.append(Join(world.start + t, (ServerSpec(f"n{k}", like.capacity, like.attributes),)))
    crashed_user = None
    if churn["user_crash"] is not None:
        crashed_user = scenario.users[churn["user_crash"][0] % len(scenario.users)].id
        controls.append(Crash(world.start + churn["user_crash"][1], (crashed_user,)))
    audit = WorkloadAudit(world)
    result = world.run(controls=controls)
    assert result.invariant_violations == []
    assert result.stop_reason == "drained", (result.stop_reason, result.unfinished_tasks, result.events)
    ledger = world.collector.ledger
    up = [(sid, ledger.capacity[s], ledger.server_attributes(s)) for s, sid in enumerate(ledger.server_ids) if ledger.live()[s]]
    done = audit.completed_jobs()
    down = set(world.collector.jobs.users_down)
    given_up = {(j["user"], j["job"]) for j in result.unrunnable_jobs or []}
    withdrawn = {(j["user"], j["job"]) for j in result.withdrawn_jobs or []}
    for u in scenario.users:
        for job in u.job_list:
            key = (u.id, job.id)
            if key in done:
                assert key not in given_up and key not in withdrawn
            elif u.id in down:
                assert key in withdrawn, key  # its user crashed before it was done
            else:  # not done, its user alive: only because no server up can run it
                assert key in given_up, key
                assert not any(runs_on(job.demand, job.constraint, sid, cap, attrs) for sid, cap, attrs in up), key
    assert down <= ({crashed_user} if crashed_user else set())
    assert audit.check_drained(aside=given_up | withdrawn) == []
    event(f"given up: {bool(given_up)}, resumed: {bool(result.events.get('resumed'))}, withdrawn: {bool(withdrawn)}, joined: {len(world.joined)}")


@st.composite
def pinned(draw):
    """A random workload with one more user whose job only one server can run (a rack of
    its own), that server leaving early, and perhaps a server of its kind joining later:
    the job is given up, and taken up again when one joins."""
    base = draw(workloads())
    assume(len(base.servers) >= 2)
    k = draw(st.integers(1, len(base.servers) - 1))
    servers = [{"id": sv.id, "capacity": list(sv.capacity), "attributes": {**sv.attribute_map, "rack": f"r{i}"}} for i, sv in enumerate(base.servers)]
    job = {"id": "pinned", "demand": [0.5, 0.5], "tasks": draw(st.integers(1, 4)), "duration": draw(durations), "arrival": float(draw(st.integers(0, 20))), "requires": {"rack": f"r{k}"}}
    users = [{"id": u.id, "weight": u.weight, "jobs": [{"id": j.id, "demand": list(j.demand), "tasks": j.tasks, "duration": j.duration.to_json() if j.duration else None, "arrival": j.arrival, **j.constraint.to_json()} for j in u.jobs]} for u in base.users]
    users.append({"id": "pinned-user", "jobs": [job]})
    scenario = build_scenario(["cpu", "mem"], servers, users, name="pinned")
    churn = {
        "departures": [(k - 1, draw(st.sampled_from([0.5, 1.0, 3.0])))],
        "joins": draw(st.lists(st.tuples(st.just(0), st.sampled_from([5.0, 15.0, 40.0]), st.just(True)), max_size=1)),
        "user_crash": draw(st.none() | st.tuples(st.integers(0, 10), st.sampled_from([3.0, 10.0]))),
    }
    return scenario, churn


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(workloads(), st.sampled_from(list(POLICIES)), st.integers(0, 5), st.sampled_from([0.0, 0.03]), churns)
def test_every_policy_drains_under_departures_joins_and_a_crashed_user(scenario, policy, seed, loss, churn):
    assume(len(scenario.servers) >= 2)
    _check_churn(scenario, policy, loss, churn, seed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(pinned(), st.sampled_from(list(POLICIES)), st.integers(0, 5), st.sampled_from([0.0, 0.03]))
def test_a_job_only_a_departed_server_could_run_is_given_up_and_taken_up_when_one_joins(case, policy, seed, loss):
    scenario, churn = case
    _check_churn(scenario, policy, loss, churn, seed)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(workloads(), st.sampled_from(list(POLICIES)), st.integers(0, 20), st.sampled_from([0.0, 0.03, 0.1]), churns)
def test_many_random_workloads_drain_under_churn(scenario, policy, seed, loss, churn):
    assume(len(scenario.servers) >= 2)
    _check_churn(scenario, policy, loss, churn, seed)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(pinned(), st.sampled_from(list(POLICIES)), st.integers(0, 20), st.sampled_from([0.0, 0.03, 0.1]))
def test_many_pinned_jobs_given_up_and_taken_up_under_churn(case, policy, seed, loss):
    scenario, churn = case
    _check_churn(scenario, policy, loss, churn, seed)
