"""Jobs that arrive and finish, placement constraints and weights (dgdrf/model/workload.py),
under every policy: the answers known by hand (ticks and latencies allowed: 1 s on JCTs
of tens of seconds), each run drained and audited independently of the collector
(tests/workload_audit.py); the thesis's user unchanged on the wire; and the result keys."""

from __future__ import annotations

import pytest

from dgdrf.emulation import RunConfig
from dgdrf.model.scenario import build_scenario
from dgdrf.nodes.protocol import Allocate, ServerRequest, TaskAllocated, TaskRequest
from dgdrf.policies import POLICIES
from dgdrf.runtime.messages import decode, decode_checked, encode
from dgdrf.world import build

from workload_audit import WorkloadAudit

ALL = list(POLICIES)
FAIR = [p for p in ALL if p != "fifo"]  # the DRF family, every one of which should give DRF's answers here


def run(scenario, policy, audit: bool = True, **config):
    world = build(scenario, RunConfig(policy=policy, warmup=2.0, **config))
    a = WorkloadAudit(world) if audit else None
    result = world.run()
    return result, a


def jcts(result) -> dict[str, float]:
    return {f"{j['user']}/{j['job']}": j["jct"] for j in result.jobs}


def two_users_one_server():
    """One server <4, 4>; u1 and u2 each one job of 4 tasks <2, 2>, 10 s."""
    return build_scenario(["cpu", "mem"], [("s1", [4, 4])], [
        {"id": "u1", "jobs": [{"id": "a", "demand": [2, 2], "tasks": 4, "duration": 10, "arrival": 0}]},
        {"id": "u2", "jobs": [{"id": "b", "demand": [2, 2], "tasks": 4, "duration": 10, "arrival": 0}]},
    ], name="two-users")  # fmt: skip


def weighted():
    """One server <4, 4>; u1 weight 3, a job of 6 tasks <1, 1>; u2 weight 1, 2 tasks; 10 s."""
    return build_scenario(["cpu", "mem"], [("s1", [4, 4])], [
        {"id": "u1", "weight": 3, "jobs": [{"id": "a", "demand": [1, 1], "tasks": 6, "duration": 10, "arrival": 0}]},
        {"id": "u2", "weight": 1, "jobs": [{"id": "b", "demand": [1, 1], "tasks": 2, "duration": 10, "arrival": 0}]},
    ], name="weighted")  # fmt: skip


@pytest.mark.parametrize("policy", FAIR)
def test_drf_shares_one_server_between_two_jobs_both_end_at_40(policy):
    """Each user holds half the server at a time: 4 tasks of 10 s in turns, both JCT 40."""
    r, a = run(two_users_one_server(), policy)
    assert r.stop_reason == "drained" and r.invariant_violations == [] and a.check_drained() == []
    assert jcts(r) == pytest.approx({"u1/a": 40.0, "u2/b": 40.0}, abs=1.0)
    assert r.makespan == pytest.approx(40.0, abs=1.0)
    assert r.allocations == 8 and r.tasks == {"u1": 0, "u2": 0}  # nothing runs at the end


def test_fifo_serves_the_first_job_whole_first():
    r, a = run(two_users_one_server(), "fifo")
    assert r.stop_reason == "drained" and a.check_drained() == []
    assert jcts(r) == pytest.approx({"u1/a": 20.0, "u2/b": 40.0}, abs=1.0)


@pytest.mark.parametrize("policy", FAIR)
def test_weights_3_and_1_make_both_jobs_end_at_20(policy):
    """Weighted DRF: u1 holds 3 of the 4 slots, u2 1: both jobs end at 20 (unweighted,
    u2's two tasks would both run at once and end at 10)."""
    r, a = run(weighted(), policy)
    assert r.stop_reason == "drained" and a.check_drained() == []
    assert jcts(r) == pytest.approx({"u1/a": 20.0, "u2/b": 20.0}, abs=1.0)
    assert r.weights == {"u1": 3.0, "u2": 1.0}


def test_without_the_weights_the_small_job_ends_at_10():
    plain = build_scenario(["cpu", "mem"], [("s1", [4, 4])], [
        {"id": "u1", "jobs": [{"id": "a", "demand": [1, 1], "tasks": 6, "duration": 10, "arrival": 0}]},
        {"id": "u2", "jobs": [{"id": "b", "demand": [1, 1], "tasks": 2, "duration": 10, "arrival": 0}]},
    ])  # fmt: skip
    r, _ = run(plain, "drf")
    assert jcts(r)["u2/b"] == pytest.approx(10.0, abs=1.0)
    assert r.weights is None


@pytest.mark.parametrize("policy", ALL)
def test_a_job_restricted_to_a_small_server_runs_there_one_task_at_a_time(policy):
    """3 tasks of 10 s, eligible only on 'small' <1, 1> (one task's room), beside an
    empty 'big' <8, 8>: they run on 'small' one after another, never on 'big'."""
    s = build_scenario(["cpu", "mem"], [("small", [1, 1]), ("big", [8, 8])], [
        {"id": "u1", "jobs": [{"id": "a", "demand": [1, 1], "tasks": 3, "duration": 10, "arrival": 0, "eligible": ["small"]}]},
    ])  # fmt: skip
    r, a = run(s, policy)
    assert r.stop_reason == "drained" and r.invariant_violations == [] and a.check_drained() == []
    assert set(a.placements[("u1", 0)]) == {"small"} and a.peak["small"] == 1 and a.peak["big"] == 0
    assert r.jobs[0]["jct"] >= 30.0
    if policy in ("drf", "drf-bestfit", "fifo", "probes"):  # distributed homes find 'small' by walks and retries
        assert r.jobs[0]["jct"] == pytest.approx(30.0, abs=1.0)


@pytest.mark.parametrize("policy", ALL)
def test_a_task_that_requires_an_attribute_waits_for_the_server_that_has_it(policy):
    """u1's task holds the only gpu server from 0 to 20 s; u2's, arriving at 5 and also
    requiring gpu, waits for it though 'plain' is empty, and runs from 20 to 25."""
    s = build_scenario(["cpu", "mem"], [("plain", [8, 8]), {"id": "gpu", "capacity": [2, 2], "attributes": {"gpu": True}}], [
        {"id": "u1", "jobs": [{"id": "a", "demand": [2, 2], "tasks": 1, "duration": 20, "arrival": 0, "requires": {"gpu": True}}]},
        {"id": "u2", "jobs": [{"id": "b", "demand": [1, 1], "tasks": 1, "duration": 5, "arrival": 5, "requires": {"gpu": True}}]},
    ])  # fmt: skip
    r, a = run(s, policy)
    assert r.stop_reason == "drained" and a.check_drained() == []
    assert a.placements[("u1", 0)] == ["gpu"] and a.placements[("u2", 0)] == ["gpu"]
    by_user = {j["user"]: j for j in r.jobs}
    assert by_user["u2"]["arrival"] == 5.0
    assert by_user["u2"]["first_start"] == pytest.approx(20.0, abs=1.0)
    assert by_user["u2"]["jct"] == pytest.approx(20.0, abs=1.0)  # waited 15, ran 5


def test_a_list_in_requires_means_any_of_its_values():
    s = build_scenario(["cpu"], [{"id": "a", "capacity": [1], "attributes": {"arch": "arm"}}, {"id": "b", "capacity": [1], "attributes": {"arch": "x86"}}, ("c", [1])], [
        {"id": "u1", "jobs": [{"id": "j", "demand": [1], "tasks": 4, "duration": 10, "requires": {"arch": ["x86", "arm"]}}]},
    ])  # fmt: skip
    r, a = run(s, "drf")
    assert r.stop_reason == "drained" and sorted(set(a.placements[("u1", 0)])) == ["a", "b"]
    assert jcts(r)["u1/j"] == pytest.approx(20.0, abs=1.0)


def test_eligible_and_requires_both_hold():
    s = build_scenario(["cpu"], [{"id": "a", "capacity": [1], "attributes": {"ssd": True}}, {"id": "b", "capacity": [1], "attributes": {"ssd": True}}, ("c", [1])], [
        {"id": "u1", "jobs": [{"id": "j", "demand": [1], "tasks": 2, "duration": 10, "eligible": ["b", "c"], "requires": {"ssd": True}}]},
    ])  # fmt: skip
    r, a = run(s, "drf-bestfit")
    assert set(a.placements[("u1", 0)]) == {"b"} and jcts(r)["u1/j"] == pytest.approx(20.0, abs=1.0)


@pytest.mark.parametrize("policy", ALL)
def test_jobs_that_arrive_later_wait_for_their_arrival_and_the_run_drains(policy):
    s = build_scenario(["cpu", "mem"], [("s1", [2, 2]), ("s2", [2, 2])], [
        {"id": "u1", "jobs": [{"id": "early", "demand": [1, 1], "tasks": 2, "duration": 5, "arrival": 0},
                              {"id": "late", "demand": [2, 1], "tasks": 2, "duration": 5, "arrival": 30}]},
        {"id": "u2", "weight": 2, "jobs": [{"id": "only", "demand": [1, 2], "tasks": 3, "duration": {"dist": "uniform", "min": 2, "max": 4}, "arrival": 12}]},
    ])  # fmt: skip
    r, a = run(s, policy)
    assert r.stop_reason == "drained" and r.invariant_violations == [] and a.check_drained() == []
    by_job = {j["job"]: j for j in r.jobs}
    assert by_job["late"]["first_start"] >= 30.0 and by_job["only"]["first_start"] >= 12.0
    assert r.makespan == max(j["finish"] for j in r.jobs)
    assert r.queueing_delay_s is not None and r.queueing_delay_s["p50"] >= 0.0


def test_a_mixed_workload_ends_saturated_once_the_finite_jobs_are_done():
    """An endless user of the thesis beside a finite job: the run ends when the finite
    job is done and the endless user's next task no longer fits."""
    s = build_scenario(["cpu"], [("s1", [10])], [
        {"id": "endless", "demand": [1]},
        {"id": "finite", "jobs": [{"id": "j", "demand": [1], "tasks": 3, "duration": 5, "arrival": 0}]},
    ])  # fmt: skip
    r, _ = run(s, "drf")
    assert r.stop_reason == "saturated" and r.invariant_violations == []
    assert r.jobs[0]["finish"] is not None and r.tasks["endless"] == 10


def test_an_endless_job_whose_tasks_end_runs_until_max_time():
    s = build_scenario(["cpu"], [("s1", [2])], [{"id": "u", "jobs": [{"id": "stream", "demand": [1], "duration": 3}]}])
    r, _ = run(s, "drf", max_time=60.0)
    assert r.stop_reason == "max_time" and r.invariant_violations == []
    assert r.allocations >= 2 * 60 // 3 - 2  # two at a time, each 3 s
    assert r.samples is not None and max(r.samples["utilization"]["cpu"]) == 1.0


def test_durations_are_drawn_from_the_seed_the_same_under_every_policy():
    """A job's tasks last as long under every policy (their own stream of the seed):
    the sum of the busy time is the same for drf and dgdrf, and differs with the seed."""
    s = build_scenario(["cpu"], [("s1", [4])], [{"id": "u", "jobs": [{"id": "j", "demand": [1], "tasks": 8, "duration": {"dist": "exp", "mean": 5}}]}])
    areas = {}
    for policy, seed in (("drf", 1), ("dgdrf", 1), ("drf", 2)):
        r, _ = run(s, policy, seed=seed, sample_every=0.5)
        areas[(policy, seed)] = round(sum(r.samples["utilization"]["cpu"]) * 0.5 * 4, 0)  # ~ task-seconds
    assert areas[("drf", 1)] == pytest.approx(areas[("dgdrf", 1)], abs=3.0)
    assert areas[("drf", 1)] != areas[("drf", 2)]


def test_the_result_of_a_run_with_jobs_has_its_keys_and_the_thesis_run_none():
    r, _ = run(two_users_one_server(), "drf")
    d = r.to_dict()
    for key in ("jobs", "makespan", "jct_s", "queueing_delay_s", "time_avg_shares", "jain_time_avg", "gini_time_avg", "samples"):
        assert key in d, key
    assert set(d["jobs"][0]) == {"user", "job", "arrival", "first_start", "finish", "tasks", "jct"}
    assert d["samples"]["every"] == 10.0 and d["samples"]["time"][:3] == [0.0, 10.0, 20.0]
    assert d["time_avg_shares"]["u1"] == pytest.approx(d["time_avg_shares"]["u2"], rel=0.05)
    assert d["jain_time_avg"] == pytest.approx(1.0, abs=0.01)
    thesis = build_scenario(["cpu"], [("s1", [4])], [("u1", [1]), ("u2", [2])])
    plain = run(thesis, "drf", audit=False)[0].to_dict()
    for key in ("jobs", "makespan", "samples", "time_avg_shares", "weights", "time_scale"):
        assert key not in plain


def test_time_scale_divides_arrivals_and_durations():
    s = build_scenario(["cpu"], [("s1", [1])], [{"id": "u", "jobs": [{"id": "j", "demand": [1], "tasks": 2, "duration": 100, "arrival": 50}]}])
    r, _ = run(s, "drf", time_scale=10.0)
    assert r.stop_reason == "drained" and r.time_scale == 10.0
    assert r.jobs[0]["arrival"] == 5.0 and r.jobs[0]["jct"] == pytest.approx(20.0, abs=0.5)


# -- the wire ------------------------------------------------------------------------------
def test_the_thesis_task_is_the_frame_it_always_was():
    """Optional fields holding their defaults are left off the frame (runtime/messages.py)."""
    assert encode(TaskRequest("u1", 3, [0.1, 0.2], 0.5)) == b"\x95\x03\xa2u1\x03\x92\xcb?\xb9\x99\x99\x99\x99\x99\x9a\xcb?\xc9\x99\x99\x99\x99\x99\x9a\xcb?\xe0\x00\x00\x00\x00\x00\x00"
    assert len(encode(ServerRequest(7))) == 3 and len(encode(TaskAllocated(1, "s1", 0.5))) == encode(TaskAllocated(1, "s1", 0.5, 0.0)).__len__()
    full = TaskRequest("u1", 3, [0.1, 0.2], 0.5, 2.0, 10.0, ["s1"], {"gpu": True, "arch": ["x86", "arm"]}, 1.0, 4)
    assert decode(encode(full)) == full == decode_checked(encode(full))
    assert decode_checked(encode(Allocate("u", 1, [1.0], 0.2, 3.0))) == Allocate("u", 1, [1.0], 0.2, 3.0, 0.0)


def test_a_frame_with_too_many_or_too_few_fields_is_refused_naming_the_range():
    import msgpack

    from dgdrf.errors import DecodeError

    with pytest.raises(DecodeError, match=r"TaskRequest frame has 3 fields, expected 4 to 15"):
        decode_checked(msgpack.packb([3, "u", 1, [1.0]]))
    with pytest.raises(DecodeError, match=r"TaskRequest.weight must be"):
        decode_checked(msgpack.packb([3, "u", 1, [1.0], 0.0, "heavy"]))


# -- bad input: one line naming the user, job and field, exit 2 ------------------------
def _scenario_file(tmp_path, users, servers=None):
    import json

    servers = servers or [{"id": "s1", "capacity": [4, 4], "attributes": {"gpu": False}}, {"id": "s2", "capacity": [1, 1], "attributes": {"gpu": True}}]
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"resources": ["cpu", "mem"], "servers": servers, "users": users}))
    return path


def _job(**fields):
    return {"id": "u1", "jobs": [{"id": "j1", "demand": [1, 1], "tasks": 2, "duration": 10, "arrival": 0, **fields}]}


BAD = [
    (_job(requires={"gpu": True, "arch": "x86"}), "users[0].jobs[0].requires: user 'u1' job 'j1': no server matches its constraint"),
    (_job(requires={"gpu": True}, demand=[2, 1]), "users[0].jobs[0].demand: user 'u1' job 'j1': its demand [2.0, 1.0] fits on none of the 1 server(s) its constraint admits"),
    (_job(eligible=["s1", "s9"]), "users[0].jobs[0].eligible[1]: user 'u1' job 'j1': no server 's9' in the scenario"),
    (_job(eligible=[]), "users[0].jobs[0].eligible: user 'u1' job 'j1': is empty"),
    (_job(duration=0), "users[0].jobs[0].duration: user 'u1' job 'j1': duration: must be a positive finite number, got 0"),
    (_job(duration=-3.5), "users[0].jobs[0].duration: user 'u1' job 'j1': duration: must be a positive finite number"),
    (_job(tasks=0), "users[0].jobs[0].tasks: user 'u1' job 'j1': must be a positive integer"),
    (_job(tasks=2.5), "users[0].jobs[0].tasks: user 'u1' job 'j1': must be a positive integer"),
    (_job(arrival=-1), "users[0].jobs[0].arrival: user 'u1' job 'j1': must be seconds >= 0"),
    (_job(duration={"dist": "gamma", "shape": 2}), "users[0].jobs[0].duration: user 'u1' job 'j1': dist: unknown distribution 'gamma'; known: fixed, exp, lognormal"),
    (_job(duration={"dist": "lognormal", "median": 30}), "users[0].jobs[0].duration: user 'u1' job 'j1': sigma: missing"),
    (_job(duration={"dist": "exp", "mean": -2}), "users[0].jobs[0].duration: user 'u1' job 'j1': mean: must be a positive finite number, got -2"),
    (_job(duration={"dist": "pareto", "scale": 1, "shape": 2, "mode": 3}), "users[0].jobs[0].duration: user 'u1' job 'j1': mode: not a parameter of 'pareto'"),
    (_job(duration={"dist": "uniform", "min": 5, "max": 2}), "users[0].jobs[0].duration: user 'u1' job 'j1': min: 5 is above max 2"),
    ({**_job(), "weight": 0}, "users[0].weight: user 'u1': must be a positive number, got 0"),
    ({**_job(), "weight": -1.5}, "users[0].weight: user 'u1': must be a positive number"),
    ({"id": "u1", "demand": [1, 1], "weight": "high"}, "users[0].weight: user 'u1': must be a positive number, got 'high'"),
    ({"id": "u1", "demand": [1, 1], "eligible": ["nowhere"]}, "users[0].eligible[0]: user 'u1': no server 'nowhere' in the scenario"),
    ({"id": "u1", "demand": [3, 3], "requires": {"gpu": True}}, "users[0].demand: user 'u1': its demand [3.0, 3.0] fits on none of the 1 server(s)"),
    ({**_job(), "demand": [1, 1]}, "users[0].demand: user 'u1': unknown field for a user with jobs"),
    (_job(tasks=2, duration=None), "users[0].jobs[0].duration: user 'u1' job 'j1'"),
    ({"id": "u1", "jobs": []}, "users[0].jobs: user 'u1': must be a non-empty list of jobs"),
    ({"id": "u1", "jobs": [{"id": "a", "demand": [1, 1], "tasks": 1, "duration": 1}, {"id": "a", "demand": [1, 1], "tasks": 1, "duration": 1}]}, "users[0].jobs[1].id: user 'u1': duplicate job id 'a'"),
    (_job(priority=3), "users[0].jobs[0].priority: user 'u1': unknown field of a job"),
]


@pytest.mark.parametrize("user,expected", BAD, ids=[e.split(":")[0] + "-" + str(i) for i, (_, e) in enumerate(BAD)])
def test_a_bad_job_is_one_error_line_naming_the_user_job_and_field(tmp_path, capsys, user, expected):
    from dgdrf.cli import main

    if isinstance(user.get("jobs"), list) and user["jobs"] and user["jobs"][0].get("duration", 0) is None:
        del user["jobs"][0]["duration"]
    path = _scenario_file(tmp_path, [user])
    assert main(["run", "--scenario", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dgdrf: error: ") and "Traceback" not in err, err
    assert f"jobs.json: {expected}" in err, err


def test_a_bad_server_attribute_is_named(tmp_path, capsys):
    from dgdrf.cli import main

    path = _scenario_file(tmp_path, [{"id": "u1", "demand": [1, 1]}], servers=[{"id": "s1", "capacity": [1, 1], "attributes": {"gpu": [1, 2]}}])
    assert main(["run", "--scenario", str(path), "--quiet"]) == 2
    assert "jobs.json: servers[0].attributes: server 's1': gpu: must be a string, number or boolean" in capsys.readouterr().err


def test_a_scenario_with_jobs_survives_its_json_round_trip(tmp_path):
    from dgdrf.config import load_scenario

    s = build_scenario(["cpu", "mem"], [("s1", [4, 4]), {"id": "s2", "capacity": [2, 2], "attributes": {"gpu": True, "zone": "b"}}], [
        {"id": "u1", "demand": [1, 1], "weight": 2.5, "requires": {"zone": ["a", "b"]}},
        {"id": "u2", "jobs": [{"id": "j", "demand": [1, 2], "tasks": 3, "duration": {"dist": "lognormal", "median": 30, "sigma": 1.2, "max": 600}, "arrival": 7.5, "eligible": ["s2"]},
                              {"id": "k", "demand": [2, 1], "duration": 5}]},
    ])  # fmt: skip
    path = tmp_path / "s.json"
    s.write_json(path)
    again = load_scenario(path)
    assert again.users == s.users and again.servers == s.servers
    assert not again.classic and again.finite_jobs and again.users[1].job_list[1].tasks is None


@pytest.mark.parametrize("policy", ["drf", "probes", "dgdrf"])
def test_waiting_for_a_running_task_to_end_is_not_a_stall(policy):
    """Two tasks that each need the whole server, 300 s each: the second waits 300 s with
    nothing placed, more than the stall time (120 s), and the run drains all the same;
    the stop rules do not run the stall clock while nothing pending fits."""
    s = build_scenario(["cpu"], [("s1", [1.0])], [{"id": "u", "jobs": [{"id": "j", "demand": [1.0], "tasks": 2, "duration": 300}]}])
    r, a = run(s, policy)
    assert r.stop_reason == "drained" and a.check_drained() == []
    assert jcts(r)["u/j"] == pytest.approx(600.0, abs=1.0)


def test_a_stall_is_still_a_stall():
    """The stop rules still catch a run where something fits and nothing is placed: a
    scheduler that stops placing (here: its server's ticks cancelled) ends stalled."""
    s = build_scenario(["cpu"], [("s1", [4.0])], [{"id": "u", "jobs": [{"id": "j", "demand": [1.0], "tasks": 8, "duration": 5}]}])
    world = build(s, RunConfig(policy="drf", stall_time=30.0))

    from dgdrf.world import Observer

    class StopTicking(Observer):
        def started(self, world) -> None:
            world.clock.call_later(0.25, lambda: [t.cancel() for t in world.transport.actors["s1"]._timers])

    r = world.run(observers=[StopTicking()])
    assert r.stop_reason == "stalled" and r.unfinished_tasks == {"u": 6}


@pytest.mark.parametrize("policy", ["drf", "dgdrf", "pdgdrf", "ddrf-random"])
def test_weighted_endless_users_share_in_proportion_to_their_weights(policy):
    """The thesis's endless users with weights 2 and 1 and the same demand on one server
    of 12 slots: weighted DRF gives them 8 and 4 tasks at saturation (G_i / w_i equal)."""
    s = build_scenario(["cpu"], [("s1", [12.0])], [{"id": "a", "demand": [1.0], "weight": 2}, {"id": "b", "demand": [1.0]}])
    r, _ = run(s, policy)
    assert r.stop_reason == "saturated" and r.invariant_violations == []
    assert r.tasks == {"a": 8, "b": 4}
    assert r.shares == pytest.approx({"a": 1 / 3, "b": 1 / 3})  # weighted: 8/12 / 2 and 4/12
    assert r.time_avg_shares is not None and r.jobs is None


def test_a_short_form_user_with_requires_runs_only_where_admitted():
    s = build_scenario(["cpu"], [("plain", [4.0]), {"id": "fast", "capacity": [2.0], "attributes": {"cpu": "fast"}}], [{"id": "a", "demand": [1.0], "requires": {"cpu": "fast"}}])
    r, a = run(s, "drf-bestfit")
    assert r.stop_reason == "saturated" and r.tasks == {"a": 2} and a.peak["plain"] == 0
