"""Finite work under churn: a job that no server up can run any more is given up by its
user (model/fleet.py), listed in the result's ``unrunnable_jobs`` and blocks nobody, so a
run of finite jobs under departures ends drained; a run whose work is left that nothing
can bring about ends stalled, never max_time before its limit."""

from __future__ import annotations

import pytest

import dgdrf
from dgdrf.emulation import Crash, Observer, RunConfig, build
from dgdrf.world import Join
from dgdrf.model.constraints import UNCONSTRAINED, Constraint
from dgdrf.model.fleet import Fleet, runs_on
from dgdrf.model.scenario import ServerSpec, build_scenario
from dgdrf.nodes.user import User

FINITE_8X4 = "configs/google-finite-8x4.toml"


def _servers(*specs: ServerSpec) -> dict[str, ServerSpec]:
    return {s.id: s for s in specs}


A = ServerSpec("a", (4.0, 8.0), (("zone", "x"),))
B = ServerSpec("b", (2.0, 2.0), (("zone", "y"),))
C = ServerSpec("c", (8.0, 8.0), (("zone", "y"),))
IN_X = Constraint(None, (("zone", ("x",)),))


# -- the fleet a user knows -------------------------------------------------------------------


def test_a_fleet_says_a_job_can_run_while_no_server_left_and_why_not_once_its_servers_did():
    fleet = Fleet(_servers(A, B, C))
    assert fleet.why_not([4.0, 8.0], IN_X) is None
    assert fleet.leave(["b", "nobody"]) == ["b"]
    assert fleet.why_not([4.0, 8.0], IN_X) is None
    assert fleet.leave(["a"]) == ["a"] and fleet.leave(["a"]) == []
    assert fleet.why_not([4.0, 8.0], IN_X) == "no server up matches its constraint; a could, and left"
    assert fleet.why_not([1.0, 1.0], UNCONSTRAINED) is None  # c
    assert fleet.why_not([6.0, 8.0], UNCONSTRAINED) is None
    fleet.leave(["c"])
    assert fleet.why_not([1.0, 1.0], UNCONSTRAINED) == "no server up matches its constraint; a, b, c could, and left"
    assert [s.id for s in fleet.up()] == []


def test_a_fleet_names_a_demand_that_fits_only_on_servers_gone_and_takes_servers_back():
    fleet = Fleet(_servers(A, B, C))
    fleet.leave(["c"])
    assert fleet.why_not([6.0, 6.0], UNCONSTRAINED) == "its demand [6.0, 6.0] fits on none of the 2 server(s) up that its constraint admits; c could, and left"
    assert fleet.why_not([6.0, 6.0], Constraint(None, (("zone", ("y",)),))) == "its demand [6.0, 6.0] fits on none of the 1 server(s) up that its constraint admits; c could, and left"
    new = ServerSpec("d", (8.0, 8.0), (("zone", "x"),))
    assert fleet.join(new) and not fleet.join(new)
    assert fleet.why_not([6.0, 6.0], UNCONSTRAINED) is None
    assert fleet.join(C) and not fleet.join(C)  # a scenario server back, as it was
    assert sorted(s.id for s in fleet.up()) == ["a", "b", "c", "d"]
    fleet.leave(["d"])
    assert sorted(s.id for s in fleet.up()) == ["a", "b", "c"] and "d" in fleet.left


def test_runs_on_is_the_scenarios_rule_constraint_and_demand_on_the_empty_server():
    assert runs_on([4.0, 8.0], IN_X, "a", A.capacity, A.attribute_map)
    assert not runs_on([4.0, 8.0], IN_X, "c", C.capacity, C.attribute_map)
    assert not runs_on([4.0 + 1e-6, 8.0], IN_X, "a", A.capacity, A.attribute_map)
    assert runs_on([4.0 + 1e-12, 8.0], IN_X, "a", A.capacity, A.attribute_map)  # within the fit tolerance
    assert not runs_on([1.0], UNCONSTRAINED, "a", A.capacity, A.attribute_map)  # resources differ


# -- the run: departures that leave jobs nobody can run ----------------------------------


def _only_on(scenario, gone: set[str]) -> set[tuple[str, str]]:
    """The jobs that only servers in ``gone`` can run."""
    up = [s for s in scenario.servers if s.id not in gone]
    return {(u.id, j.id) for u in scenario.users for j in u.job_list if not any(runs_on(j.demand, j.constraint, s.id, s.capacity, s.attribute_map) for s in up)}


@pytest.mark.parametrize("policy", ["drf", "fifo", "tsf", pytest.param("dgdrf", marks=pytest.mark.slow), pytest.param("dg-tsf", marks=pytest.mark.slow), "d-psdsf"])
def test_two_departures_leave_the_jobs_only_they_could_run_given_up_and_every_other_job_done(policy):
    """``dgdrf run --scenario configs/google-finite-8x4.toml --policy P --churn-departures 2``:
    s8 and s4 leave at 3.5 s and 5.2 s, and class c3 with s4. The run drains; the jobs
    given up are exactly those no server left can run, and every other job is done."""
    scenario = dgdrf.load_scenario(FINITE_8X4)
    result = build(scenario, RunConfig(policy=policy, seed=1, churn_departures=2)).run()
    gone = {a for _, a in result.churn["schedule"]}
    assert gone == {"s4", "s8"}
    assert result.stop_reason == "drained" and result.invariant_violations == []
    given_up = {(j["user"], j["job"]) for j in result.unrunnable_jobs}
    done = {(j["user"], j["job"]) for j in result.jobs if j["finish"] is not None}
    assert given_up == _only_on(scenario, gone) - done and len(given_up) == 5
    assert {(j["user"], j["job"]) for j in result.jobs} - given_up == done
    assert all(j["why"] == "no server up matches its constraint; s4 could, and left" for j in result.unrunnable_jobs)
    left = {(j["user"], j["job"]): j["tasks_left"] for j in result.unrunnable_jobs}
    by_user: dict[str, int] = {}
    for (user, _), n in left.items():
        by_user[user] = by_user.get(user, 0) + n
    assert result.unfinished_tasks == by_user  # what is unfinished is what was given up
    assert result.events["given_up"] == 5 and "resumed" not in result.events


def test_a_run_with_jobs_and_no_departure_gives_nothing_up():
    result = dgdrf.run(FINITE_8X4, policy="drf")
    assert result.stop_reason == "drained" and result.unrunnable_jobs == [] and "given_up" not in result.events


#: u1's first job may run only on s2, its second anywhere; u2's anywhere
LAST_SERVER = build_scenario(
    ["cpu", "mem"],
    [{"id": "s1", "capacity": [4.0, 4.0]}, {"id": "s2", "capacity": [4.0, 4.0]}],
    [
        {"id": "u1", "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 12, "duration": 10.0, "eligible": ["s2"]}, {"id": "k", "demand": [1.0, 1.0], "tasks": 2, "duration": 1.0, "arrival": 1.0}]},
        {"id": "u2", "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 6, "duration": 5.0}]},
    ],
    name="last-server",
)


@pytest.mark.parametrize("policy", ["drf", "fifo", "udrf", "psdsf", "probes", "ddrf-random", "dgdrf", "pdg-tsf", "d-psdsf"])
def test_a_crash_that_takes_a_jobs_last_server_gives_it_up_even_mid_job(policy):
    """u1's first job may run only on s2; s2 crashes while the job's tasks run there: the
    tasks running are lost, the job is given up with what is left of it, u1's later job
    and u2's run."""
    config = RunConfig(policy=policy, seed=2, warmup=2.0, max_time=5000.0)
    world = build(LAST_SERVER, config)
    at = world.start + 12.0
    result = world.run(controls=[Crash(at, ("s2",))])
    assert result.stop_reason == "drained" and result.invariant_violations == []
    (given,) = result.unrunnable_jobs
    assert (given["user"], given["job"]) == ("u1", "j") and 0 < given["tasks_left"] < 12
    assert given["why"] == "no server up matches its constraint; s2 could, and left"
    done = {(j["user"], j["job"]) for j in result.jobs if j["finish"] is not None}
    assert done == {("u1", "k"), ("u2", "j")}


# -- a run that can no longer progress says so -------------------------------------------------


class _Deaf(Observer):
    """Makes every user forget the servers (a user that never gives a job up: the bug the
    stop rules must catch)."""

    def started(self, world) -> None:
        for actor in world.transport.actors.values():
            if isinstance(actor, User):
                actor.fleet = None


def test_a_user_that_never_gives_a_job_up_ends_its_run_stalled_not_max_time():
    """The collector knows the job cannot run and takes the user's next job for its next
    task; that one fits and nothing is placed: stalled, long before the time limit."""
    world = build(dgdrf.load_scenario(FINITE_8X4), RunConfig(policy="drf", seed=1, churn_departures=2, stall_time=30.0))
    result = world.run(observers=[_Deaf()])
    assert result.stop_reason == "stalled" and world.clock.now() < 1000.0
    assert result.unfinished_tasks and result.unrunnable_jobs == []


def test_work_left_that_nothing_can_bring_about_ends_stalled_after_the_stall_time():
    """Nothing fits, nothing runs, nothing is to arrive, and a job is neither done nor
    given up: the stall clock runs although nothing fits."""
    config = RunConfig(policy="drf", seed=2, max_time=5000.0, stall_time=40.0)
    world = build(LAST_SERVER, config)
    result = world.run(observers=[_Deaf()], controls=[Crash(12.0, ("s2",))])
    assert result.stop_reason == "stalled" and result.unrunnable_jobs == []
    assert result.unfinished_tasks["u1"] > 0 and "u2" not in result.unfinished_tasks
    lost = 12.0 + 1.5  # the crash detected: u1's tasks running on s2 lost, nothing runs after
    assert 40.0 <= world.clock.now() - lost <= 40.0 + 1.0 + 1e-9  # the stall time, to the watch's period


def test_a_clock_out_of_events_before_the_limit_is_stalled_and_the_limit_itself_max_time(monkeypatch):
    """Where nothing would ever act again the clock runs out of events before the run's
    limit: that is no time limit reached. (Every run has its watch and sampler ticking, so
    the clock here is made to run out at 50 s.)"""
    from dgdrf import world as world_module

    class RunsOut(world_module.VirtualClock):
        def run(self, until=None):
            return super().run(until=min(50.0, until))

    monkeypatch.setattr(world_module, "VirtualClock", RunsOut)
    world = build(dgdrf.load_scenario(FINITE_8X4), RunConfig(policy="drf", seed=1, max_time=10_000.0))
    result = world.run()
    assert result.stop_reason == "stalled" and world.clock.now() == 50.0
    monkeypatch.undo()
    short = build(dgdrf.load_scenario(FINITE_8X4), RunConfig(policy="drf", seed=1, max_time=40.0)).run()
    assert short.stop_reason == "max_time"  # the limit itself, reached


# -- servers that join ----------------------------------------------------------------------

#: u1's first job needs a GPU, which only s2 has; u2's jobs run anywhere, one of them late
GPU = build_scenario(
    ["cpu", "mem"],
    [{"id": "s1", "capacity": [4.0, 4.0]}, {"id": "s2", "capacity": [4.0, 4.0], "attributes": {"gpu": True}}],
    [
        {"id": "u1", "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 12, "duration": 10.0, "requires": {"gpu": True}}, {"id": "k", "demand": [1.0, 1.0], "tasks": 2, "duration": 1.0, "arrival": 1.0}]},
        {"id": "u2", "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 6, "duration": 5.0}, {"id": "late", "demand": [1.0, 1.0], "tasks": 6, "duration": 5.0, "arrival": 60.0}]},
    ],
    name="gpu",
)
NEW_GPU = ServerSpec("s3", (4.0, 4.0), (("gpu", True),))


@pytest.mark.parametrize("policy", ["drf", "fifo", "tsf", "psdsf", "probes", "ddrf-gradient", "dgdrf", "pdgdrf", "dg-tsf", "d-psdsf"])
def test_a_job_given_up_runs_again_on_a_server_that_joins(policy):
    """s2 (the only GPU) crashes: u1's GPU job is given up and u1 goes on with its next;
    s3, a GPU server, joins: the job is taken up again and runs there, and every job ends."""
    world = build(GPU, RunConfig(policy=policy, seed=2, warmup=2.0, max_time=5000.0))
    seen: list[tuple[float, str, str]] = []

    class Placements(Observer):
        def allocated(self, world, allocation) -> None:
            seen.append((allocation.time, allocation.user, allocation.server))

    result = world.run(observers=[Placements()], controls=[Crash(world.start + 12.0, ("s2",)), Join(world.start + 40.0, (NEW_GPU,))])
    assert result.stop_reason == "drained" and result.invariant_violations == []
    assert result.unrunnable_jobs == [] and result.events["given_up"] == 1 and result.events["resumed"] == 1
    assert result.events["servers_up"] == 1 and result.events["servers_down"] == 1
    assert all(j["finish"] is not None for j in result.jobs)
    on_s3 = [(t, u) for t, u, s in seen if s == "s3"]
    assert on_s3 and min(t for t, _ in on_s3) >= world.start + 40.0
    assert any(u == "u1" for _, u in on_s3)  # the GPU job's tasks left ran on the newcomer
    assert {s for _, u, s in seen if u == "u1" and _ > world.start + 13.5} <= {"s1", "s3"}


def test_a_server_that_joins_is_counted_in_c_and_in_the_census_as_the_collector_counts_it():
    """After a join every dg-tsf server's exact C and census count the newcomer, as the
    collector's ledger does (C keeps the departed server's capacity, the census does not)."""
    from dgdrf.model.census import Census
    from dgdrf.policies.local import TaskDesk

    world = build(GPU, RunConfig(policy="dg-tsf", seed=2, warmup=2.0, max_time=5000.0))
    world.run(controls=[Crash(world.start + 12.0, ("s2",)), Join(world.start + 40.0, (NEW_GPU,))])
    total = world.collector.ledger.total
    assert total.tolist() == [12.0, 12.0]  # s1, s2 gone but counted, s3
    desks = [r for a in world.transport.actors.values() if a.address in ("s1", "s3") for r in a.roles if isinstance(r, TaskDesk)]
    assert len(desks) == 2
    assert all(d.capacity.total().tolist() == [12.0, 12.0] for d in desks)
    assert all(d.meter._current() == Census.of_servers([((4.0, 4.0), {}), ((4.0, 4.0), {})]) for d in desks)


def test_churn_joins_replace_the_departed_in_order_and_leave_the_departures_as_they_were():
    """--churn-joins: each joiner a new server of the earliest departed server's kind not
    yet replaced (here before any departed: a scenario server's drawn at random); the
    departures' schedule is the same with joins as without."""
    scenario = dgdrf.load_scenario(FINITE_8X4)
    plain = build(scenario, RunConfig(policy="drf", seed=1, churn_departures=2)).run()
    world = build(scenario, RunConfig(policy="drf", seed=1, churn_departures=2, churn_joins=3, churn_every=5.0, churn_start=100.0))
    joined = world.run()
    assert joined.stop_reason == "drained" and joined.invariant_violations == [] and joined.unrunnable_jobs == []
    churn = joined.churn
    assert churn["departures"] == 2 and churn["joins"] == 3 and len(churn["join_schedule"]) == 3
    assert [a for _, a in churn["schedule"]] != [] and "joins" not in plain.churn
    ids = [j[1] for j in churn["join_schedule"]]
    assert ids == ["s9", "s10", "s11"] and [s.id for s in world.joined] == ids
    departed = [a for t, a in churn["schedule"]]
    for t, new, like in churn["join_schedule"]:
        spec = next(s for s in world.joined if s.id == new)
        original = next(s for s in scenario.servers if s.id == like)
        assert (spec.capacity, spec.attributes) == (original.capacity, original.attributes)
    gone_before = [[a for td, a in churn["schedule"] if td <= t] for t, _, _ in churn["join_schedule"]]
    replaced = [like for _, _, like in churn["join_schedule"]]
    for k, gone in enumerate(gone_before):  # the earliest departed not yet replaced, when there is one
        unreplaced = [a for a in gone if a not in replaced[:k]]
        if unreplaced:
            assert replaced[k] == unreplaced[0]
    assert set(departed) <= set(replaced)
    again = build(scenario, RunConfig(policy="drf", seed=1, churn_departures=2, churn_joins=3, churn_every=5.0, churn_start=100.0)).run()
    assert again.churn == churn and again.allocations == joined.allocations


def test_a_join_with_an_id_the_run_has_is_refused():
    with pytest.raises(ValueError, match="join: 's1' is the id of a member of the run already"):
        build(GPU, RunConfig(policy="drf")).run(controls=[Join(5.0, (ServerSpec("s1", (1.0, 1.0)),))])
    with pytest.raises(ValueError, match="join: 'x' has 1 resources, the scenario 2"):
        build(GPU, RunConfig(policy="drf")).run(controls=[Join(5.0, (ServerSpec("x", (1.0,)),))])
    with pytest.raises(ValueError, match="join: a server id twice"):
        Join(5.0, (ServerSpec("x", (1.0, 1.0)), ServerSpec("x", (1.0, 1.0))))


# -- a user that crashes -------------------------------------------------------------------------

DEAD_USER = build_scenario(
    ["cpu", "mem"],
    [{"id": "s1", "capacity": [4.0, 4.0]}, {"id": "s2", "capacity": [4.0, 4.0]}],
    [
        {"id": "u1", "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 40, "duration": 2.0}]},
        {"id": "u2", "jobs": [{"id": "j", "demand": [1.0, 1.0], "tasks": 40, "duration": 2.0}]},
        {"id": "u3", "jobs": [{"id": "j", "demand": [0.5, 0.5], "tasks": 40, "duration": 2.0}, {"id": "later", "demand": [0.5, 0.5], "tasks": 3, "duration": 2.0, "arrival": 50.0}]},
    ],
    name="dead-user",
)


@pytest.mark.parametrize("policy", ["drf", "drf-bestfit", "fifo", "tsf", "probes", "ddrf-random", "dgdrf", "pdg-tsf", "d-psdsf"])
def test_a_user_that_crashes_has_its_waiting_tasks_withdrawn_its_running_ones_run_on_and_the_rest_drain(policy):
    """u3 (the smallest tasks: often the lowest share, which DRF's strict order waits for)
    crashes 5 s in. What it had not started is withdrawn (its later job too), its tasks
    then running end as any other's, nobody goes on proposing to it or telling it of its
    tasks' ends, and u1 and u2 finish no later than they would have beside it."""
    config = RunConfig(policy=policy, seed=3, warmup=2.0, max_time=5000.0)
    plain_world = build(DEAD_USER, config)
    plain = plain_world.run()
    world = build(DEAD_USER, config)
    started: dict[tuple[str, int], float] = {}
    ended: dict[tuple[str, int], float] = {}

    class Ends(Observer):
        def started(self, world) -> None:
            finished = world.collector._on_finished

            def tee(server, time, fields):
                ended[(fields["user"], fields["task_id"])] = time
                finished(server, time, fields)

            world.collector._on_finished = tee

        def allocated(self, world, allocation) -> None:
            started[(allocation.user, allocation.task_id)] = allocation.time

    crash_at = world.start + 5.0
    result = world.run(observers=[Ends()], controls=[Crash(crash_at, ("u3",))])
    assert result.stop_reason == "drained" and result.invariant_violations == []
    assert {(j["user"], j["job"]) for j in result.withdrawn_jobs} == {("u3", "j"), ("u3", "later")}
    assert all(j["why"] == "its user went down" for j in result.withdrawn_jobs)
    assert result.unfinished_tasks == {"u3": sum(j["tasks_left"] for j in result.withdrawn_jobs)}
    running = [key for key, t in started.items() if key[0] == "u3" and t <= crash_at and ended.get(key, crash_at + 1) > crash_at]
    assert running or policy == "fifo"  # (fifo serves u1's job first: u3 has nothing running yet)
    assert all(ended.get(key, -1.0) > crash_at for key in running)  # its tasks running at the crash ran on to their end
    assert not [key for key, t in started.items() if key[0] == "u3" and t > crash_at + 1.5]  # nothing of it started after
    assert result.events["users_down"] == 1 and result.events.get("proposal_expired", 0) == 0
    assert result.events.get("retransmitted", 0) < 20  # nothing sent to it for ever (5-10: before the crash was detected)
    finish = {(j["user"], j["job"]): j["finish"] for j in result.jobs}
    plain_finish = {(j["user"], j["job"]): j["finish"] for j in plain.jobs}
    for key in (("u1", "j"), ("u2", "j")):
        assert finish[key] is not None and finish[key] <= plain_finish[key] + 1e-9


# -- an end nobody heard of, on a server that then crashed --------------------------------------


def _racks(u0_tasks: int, u0_mean: float, *, u1: bool = False, servers: int = 2, pinned_tasks: int = 1, pinned_arrival: float = 5.0, pinned_mean: float | None = None):
    """Servers of capacity (1, 1) on racks r0, r1, ...; u0's job of ``u0_tasks`` tasks of
    (0.5, 0.5) runs anywhere (exponential durations of mean ``u0_mean``), as does u1's
    (arriving at 1 s, if ``u1``); the pinned user's job only on rack r1 (s1), which crashes."""
    duration = {"dist": "exp", "mean": u0_mean, "max": 40.0}
    users = [{"id": "u0", "jobs": [{"id": "j0", "demand": [0.5, 0.5], "tasks": u0_tasks, "duration": duration, "arrival": 0.0}]}]
    if u1:
        users.append({"id": "u1", "jobs": [{"id": "j0", "demand": [0.5, 0.5], "tasks": u0_tasks, "duration": duration, "arrival": 1.0}]})
    pinned_duration = 1.0 if pinned_mean is None else {"dist": "exp", "mean": pinned_mean, "max": 40.0}
    users.append({"id": "pinned-user", "jobs": [{"id": "pinned", "demand": [0.5, 0.5], "tasks": pinned_tasks, "duration": pinned_duration, "arrival": pinned_arrival, "requires": {"rack": "r1"}}]})
    racks = [{"id": f"s{i}", "capacity": [1.0, 1.0], "attributes": {"gpu": False, "rack": f"r{i}", "zone": "a"}} for i in range(servers)]
    return build_scenario(["cpu", "mem"], racks, users, name="racks")


def _run_audited(scenario, config: RunConfig, crash_after: float | None):
    """Run with s1 crashing ``crash_after`` seconds after allocation starts (None: no
    crash), audited (tests/workload_audit.py); what ended where and when, and what users
    reported lost."""
    from workload_audit import WorkloadAudit

    world = build(scenario, config)
    audit = WorkloadAudit(world)
    ended: list[tuple[str, int, str, float]] = []
    lost: list[tuple[str, int, str]] = []
    collector = world.collector
    on_finished, on_task_lost = collector._on_finished, collector._on_task_lost

    def finished(server, time, fields):
        ended.append((fields["user"], fields["task_id"], server, time))
        on_finished(server, time, fields)

    def task_lost(user, time, fields):
        lost.append((user, fields["task_id"], fields["server"]))
        on_task_lost(user, time, fields)

    collector._on_finished, collector._on_task_lost = finished, task_lost  # type: ignore[method-assign]
    crash_at = None if crash_after is None else world.start + crash_after
    result = world.run(controls=[] if crash_at is None else [Crash(crash_at, ("s1",))])
    return world, result, audit, ended, lost, crash_at


@pytest.mark.parametrize(("policy", "tasks", "mean", "seed", "loss", "crash_after"), [
    ("pdgdrf", 1, 1.0, 2, 0.03, 1.0),  # the case the property test found
    ("pdg-tsf", 1, 1.0, 2, 0.03, 1.0),
    ("drf", 3, 0.5, 0, 0.03, 1.5),
    ("udrf", 3, 0.5, 0, 0.03, 1.5),
    ("probes", 3, 0.5, 4, 0.1, 0.3),
    ("ddrf-random", 3, 0.5, 4, 0.1, 0.3),
    ("tsf", 3, 0.5, 1, 0.1, 0.6),
    ("psdsf", 3, 0.5, 1, 0.1, 0.6),
    ("d-psdsf", 4, 2.0, 2, 0.03, 1.0),
])  # fmt: skip
def test_a_task_that_ended_unheard_on_a_server_that_then_crashed_runs_again_and_completes_once(policy, tasks, mean, seed, loss, crash_after):
    """A task of u0 ends on s1; its TaskFinished is lost, and s1 crashes before sending it
    again. Nothing tells u0 that task from one that died with s1, so when it hears of the
    crash it counts it lost and runs it again (on s0), as it must. That first end reached
    nobody: it is no completion (the collector's ``ran to completion twice`` was this), and
    u0's job is done when the run again ends, after the crash."""
    world, result, audit, ended, lost, crash_at = _run_audited(_racks(tasks, mean), RunConfig(policy=policy, seed=seed, loss=loss, warmup=2.0, max_time=5000.0), crash_after)
    assert result.invariant_violations == [] and result.stop_reason == "drained"
    unheard = [(u, t) for u, t, server, at in ended if u == "u0" and server == "s1" and at < crash_at and (u, t, "s1") in lost]
    assert unheard  # the case itself: ended on s1 before the crash, then reported lost
    assert [(j["user"], j["job"]) for j in result.unrunnable_jobs] == [("pinned-user", "pinned")]
    assert audit.check_drained(aside={("pinned-user", "pinned")}) == []
    (j0,) = [j for j in result.jobs if j["user"] == "u0"]
    assert j0["finish"] is not None and world.start + j0["finish"] > crash_at  # done by the run again
    assert result.unfinished_tasks == {"pinned-user": 1}


def test_a_pinned_task_that_ended_unheard_on_its_only_server_is_left_with_its_job_given_up():
    """The same end unheard, of the pinned user's first task on s1, its only server: run
    again it cannot be, so its job is given up with all its 3 tasks left, as its user
    holds them (the collector counted that task done, and 2 left)."""
    _, result, audit, ended, lost, crash_at = _run_audited(_racks(2, 0.5, pinned_tasks=3, pinned_arrival=0.0, pinned_mean=0.3), RunConfig(policy="drf", seed=2, loss=0.2, warmup=2.0, max_time=5000.0), 1.0)
    assert result.invariant_violations == [] and result.stop_reason == "drained"
    assert [(u, t) for u, t, server, at in ended if u == "pinned-user" and server == "s1" and at < crash_at and (u, t, "s1") in lost] == [("pinned-user", 0)]
    (given,) = result.unrunnable_jobs
    assert (given["user"], given["job"], given["tasks_left"]) == ("pinned-user", "pinned", 3)
    assert result.unfinished_tasks == {"pinned-user": 3}
    assert audit.check_drained(aside={("pinned-user", "pinned")}) == []


@pytest.mark.parametrize("policy", ["drf", "drf-bestfit"])
def test_a_central_schedulers_repeated_accept_after_its_task_ended_frees_nothing_twice(policy):
    """Without a crash, at 10 % loss: the pinned user's TaskAllocated and TaskFinished are
    lost, so it sends its Accept again after the task ended on s1, and the scheduler orders
    it again (s1 only tells of its end again: repeated_start). That order must not count the
    task as running again: the scheduler's TaskFinishedAck lost, s1's TaskFinished came
    again and freed its resources a second time in the scheduler's ledger (ValueError:
    pinned-user holds no task on s1)."""
    _, result, audit, _, _, _ = _run_audited(_racks(4, 0.3, u1=True, servers=3, pinned_tasks=2, pinned_arrival=0.0, pinned_mean=0.3), RunConfig(policy=policy, seed=3, loss=0.1, warmup=2.0, max_time=5000.0), None)
    assert result.invariant_violations == [] and result.stop_reason == "drained"
    assert result.events["repeated_start"] >= 1 and audit.check_drained() == []


def test_a_copy_held_by_a_server_that_crashed_does_not_strand_its_user():
    """probes: u1's task is held by s1 (its proposal lost) when s1 crashes; u1 asks the
    gateway for another server. The collector took the copy on the dead s1 for one held
    where it no longer fits, and with every other user done ended the run stranded."""
    _, result, audit, _, _, _ = _run_audited(_racks(3, 0.5, u1=True, pinned_tasks=2, pinned_arrival=0.0, pinned_mean=0.5), RunConfig(policy="probes", seed=4, loss=0.1, warmup=2.0, max_time=5000.0), 1.5)
    assert result.invariant_violations == [] and result.stop_reason == "drained"
    assert audit.check_drained(aside={(j["user"], j["job"]) for j in result.unrunnable_jobs}) == []


def test_a_crash_is_refused_for_a_member_whose_crash_is_not_modelled():
    with pytest.raises(ValueError, match="crash: 'gateway' is not a server or a user"):
        build(DEAD_USER, RunConfig(policy="drf")).run(controls=[Crash(1.0, ("gateway",))])


@pytest.mark.parametrize("policy", ["dgdrf", "dg-tsf"])
def test_push_sum_takes_a_newcomer_in_and_its_estimates_match_the_collector(policy):
    """With C (and dg-tsf's census) estimated by push-sum, servers leaving and joining:
    every server's estimate of C is the collector's (every server that ever joined) to
    within what a crash takes of push-sum's mass (under 1 %), and its census, rounded to
    whole servers, counts exactly the servers up (push-sum takes a newcomer in by its own
    mass)."""
    from dgdrf.model.generators import google_2011_jobs_scenario
    from dgdrf.policies.local import TaskDesk

    scenario = google_2011_jobs_scenario(12, 6, seed=7, horizon=120, load=1.0, constrained=0.5)
    config = RunConfig(policy=policy, seed=1, neighbors=3, warmup=5.0, capacity_knowledge="pushsum", churn_departures=2, churn_joins=2, churn_every=30.0, churn_start=30.0)
    world = build(scenario, config)
    result = world.run()
    assert result.stop_reason == "drained" and result.invariant_violations == []
    assert result.events["servers_up"] == 2 and result.events["servers_down"] == 2
    desks = [r for a in world.transport.actors.values() for r in getattr(a, "roles", []) if isinstance(r, TaskDesk)]
    assert len(desks) == 12
    truth = world.collector.ledger.total
    assert all(abs(d.capacity.total() - truth).max() < 0.01 * truth.max() for d in desks)
    assert all(abs(d.capacity.total() - truth).max() > 1e-9 for d in desks)  # (an estimate, not the given C)
    if policy == "dg-tsf":
        assert all(d.meter._current().servers == 12 for d in desks)
