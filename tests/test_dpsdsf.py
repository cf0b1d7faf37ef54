"""d-psdsf (issue 35): PS-DSF decided by the servers, each offering itself to the lowest
per-server dominant share among the users it knows (policies/dpsdsf.py), and the user
directory it knows them by (policies/user_directory.py)."""

from __future__ import annotations

import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.errors import DecodeError
from dgdrf.model.generators import google_2011_jobs_scenario
from dgdrf.model.scenario import build_scenario
from dgdrf.model.workload import CLASSIC
from dgdrf.nodes.protocol import TaskRequest
from dgdrf.policies.local import HomeUsers
from dgdrf.policies.messages import UserDigest
from dgdrf.policies.meters import PerServerShareMeter
from dgdrf.policies.user_directory import UserDirectory, UserReport
from dgdrf.runtime.messages import MAX_RECORDS, decode_checked, encode
from harness import Harness

KESIDIS = dict(resources=["cpu", "mem"], servers=[("w1", [100, 30]), ("w2", [30, 100])], users=[("p1", [5, 1]), ("p2", [1, 5])])


def test_example8_every_offer_goes_to_its_servers_lowest_score():
    """Kesidis et al.'s workers (ORACLES.md example 8), endless tasks: each worker offers
    itself, both at once, so the ending is a race's, as PS-DSF's depends on its order
    (centralized: 20/0/0/20 or 19/2/2/19; here 20/0/0/20, 20/2/0/19 or 19/0/2/20: bench/
    results/dpsdsf-design.txt); every allocation went to the lowest K_nj on its
    worker (zero errors judged as the centralized offers are), each process has at least
    19 tasks on its matching worker, the workers hold at least 40 tasks, and the run
    saturates (no further task fits anywhere)."""
    endings = set()
    for seed in range(1, 7):
        r = run_emulation(build_scenario(**KESIDIS), RunConfig(policy="d-psdsf", per_server=True, seed=seed, neighbors=3))
        assert r.invariant_violations == [] and r.stop_reason == "saturated"
        assert r.fairness == "psdsf" and r.error_ratio == 0.0
        assert r.per_server["p1"]["w1"] >= 19 and r.per_server["p2"]["w2"] >= 19
        assert r.tasks["p1"] + r.tasks["p2"] >= 40
        endings.add((r.tasks["p1"], r.tasks["p2"]))
    assert len(endings) > 1


def test_d_psdsf_drains_a_constrained_finite_workload_near_the_centralized_order():
    """A congested constrained Google-like quarter hour on 8 servers: every task runs
    once, on a server its constraint admits (the Collector's invariants), the run drains,
    and few allocations go to a user other than the lowest-scored one that fits on the
    server (the herd of offers for one task is declined but one)."""
    sc = google_2011_jobs_scenario(8, 4, seed=5, horizon=300, load=3.0, constrained=0.5)
    r = run_emulation(sc, RunConfig(policy="d-psdsf", warmup=5.0, neighbors=3))
    assert r.invariant_violations == [] and r.stop_reason == "drained"
    assert r.fairness == "psdsf" and r.error_ratio < 0.02
    by_type = r.messages["by_type"]
    assert by_type["UserDigest"] > 0 and by_type["Proposal"] >= r.allocations


def _request(user: str, task_id: int, share: float, demand=(1.0, 1.0)) -> TaskRequest:
    return TaskRequest(user, task_id, list(demand), share, 1.0, 10.0)


def test_the_meter_gives_the_per_server_score():
    """K_nj = x_n max_r d_nr / c_jr / φ_n (Kesidis et al. eq. 12): a task adds 1 / φ_n to
    what its user reports, and the server weighs it on its own capacity."""
    meter = PerServerShareMeter([100.0, 30.0])
    assert meter.gain([5.0, 1.0], CLASSIC) == 1.0
    assert meter.share(3.0, _request("p1", 3, 3.0, (5.0, 1.0))) == pytest.approx(3 * 0.05)
    assert meter.share(3.0, _request("p2", 3, 3.0, (1.0, 5.0))) == pytest.approx(3 * 5 / 30)
    assert meter.step(TaskRequest("p", 0, [1.0, 5.0], 0.0, 2.0)) == pytest.approx(5 / 30 / 2)
    assert meter.share(0.0, _request("p", 0, 0.0, (1.0, 5.0))) == 0.0
    lacking = PerServerShareMeter([100.0, 0.0])  # a server without the second resource
    assert lacking.step(_request("p", 0, 0.0, (1.0, 5.0))) is None and lacking.share(1.0, _request("p", 0, 1.0, (1.0, 5.0))) == float("inf")


def _digest(*entries, reply: bool = False) -> UserDigest:
    """(user, home, task id, share, waiting) reports with a 1 x 1 demand and no constraint."""
    return UserDigest([e[0] for e in entries], [e[1] for e in entries], [[float(e[2]), e[3], 1.0, 10.0, 1.0 if e[4] else 0.0] for e in entries], [[1.0, 1.0] for _ in entries], [[] for _ in entries], [{} for _ in entries], reply)


class _OnePeer:
    def random_peer(self) -> str:
        return "peer"

    def sample(self, k: int) -> list[str]:
        return [f"peer{i}" for i in range(k)]


def test_a_directory_keeps_the_newest_report_of_each_user():
    """Newer: a later task; for the same task, one that says it no longer waits, or that
    it waits with a lower share (its user's tasks only end while it waits). A declined
    offer makes the task known as placed."""
    h = Harness()
    directory = UserDirectory(HomeUsers(), _OnePeer())
    h.host("me", directory, start=False)
    h.deliver("me", _digest(("a", "s1", 3, 2.0, True), ("b", "s2", 1, 0.0, True)), src="s1")
    assert {r.user: (r.task_id, r.share) for r in directory.waiting()} == {"a": (3, 2.0), "b": (1, 0.0)}
    h.deliver("me", _digest(("a", "s1", 3, 1.0, True)), src="s3")  # a task of a's ended
    h.deliver("me", _digest(("a", "s1", 2, 0.0, True)), src="s3")  # an older task: ignored
    h.deliver("me", _digest(("a", "s1", 3, 2.0, True)), src="s3")  # the older report of task 3
    assert (directory.known["a"].task_id, directory.known["a"].share) == (3, 1.0)
    directory.taken("a", 3)
    assert not directory.known["a"].waiting and directory.placed("a", 3)
    h.deliver("me", _digest(("a", "s1", 3, 0.5, True)), src="s3")  # placed: no report of it waiting revives it
    assert {r.user for r in directory.waiting()} == {"b"}
    h.deliver("me", _digest(("a", "s1", 4, 2.0, True), ("b", "s2", 1, 0.0, False)), src="s3")
    assert {r.user: r.task_id for r in directory.waiting()} == {"a": 4}


def test_a_digest_answers_with_home_users_first_and_skips_its_own():
    """A push is answered by one reply (not answered again); a home's own users come
    first and are never taken from a digest (their home knows better)."""
    h = Harness()
    home = HomeUsers()
    home.submit(_request("mine", 0, 0.5))
    directory = UserDirectory(home, _OnePeer())
    h.host("me", directory, start=False)
    h.deliver("me", _digest(("mine", "elsewhere", 9, 0.0, True), ("x", "s2", 1, 0.25, True)), src="s2")
    assert set(directory.known) == {"x"}
    reply = h.sent_messages(UserDigest, dst="s2")[0]  # what it knew before the push: no echo
    assert reply.reply and reply.users == ["mine"] and reply.numbers[0] == [0.0, 0.5, 1.0, 10.0, 1.0]
    h.deliver("me", reply, src="s2")  # a reply is not answered
    assert h.sent_messages(UserDigest, dst="s2") == [reply]
    directory.exchange()
    push = h.sent_messages(UserDigest, dst="peer")[-1]
    assert not push.reply and push.users == ["mine", "x"]


def test_news_goes_out_at_once_and_only_news():
    """What is new to a server goes at once to FANOUT random peers (not to be answered),
    and only that; a report it already had goes nowhere. Anti-entropy: every REFRESH_S
    seconds one push while a task is known to wait; with none, quiet."""
    from dgdrf.policies.user_directory import FANOUT, REFRESH_S

    h = Harness()
    home = HomeUsers()
    directory = UserDirectory(home, _OnePeer())
    h.host("me", directory)
    h.advance(3 * REFRESH_S)
    assert h.sent_messages(UserDigest) == []  # nothing known: quiet
    h.deliver("me", _digest(("x", "s2", 1, 0.25, True), ("y", "s3", 2, 0.5, True), reply=True), src="s2")
    news = h.sent_messages(UserDigest)
    assert [(m.users, m.reply) for m in news] == [(["x", "y"], True)] * FANOUT
    h.deliver("me", _digest(("x", "s2", 1, 0.25, True), ("y", "s3", 2, 0.125, True), reply=True), src="s3")
    assert [m.users for m in h.sent_messages(UserDigest)[len(news):]] == [["y"]] * FANOUT  # only y's lower share
    before = len(h.sent_messages(UserDigest))
    h.deliver("me", _digest(("x", "s2", 1, 0.25, True), reply=True), src="s4")
    assert len(h.sent_messages(UserDigest)) == before  # nothing new
    home.submit(_request("mine", 0, 0.0))
    directory.home_changed()
    assert [m.users for m in h.sent_messages(UserDigest)[before:]] == [["mine"]] * FANOUT
    before = len(h.sent_messages(UserDigest))
    h.advance(REFRESH_S)
    pushes = h.sent_messages(UserDigest)[before:]
    assert len(pushes) == 1 and not pushes[0].reply and pushes[0].users[0] == "mine"
    h.deliver("me", _digest(("x", "s2", 1, 0.25, False), ("y", "s3", 2, 0.5, False), reply=True), src="s2")
    home.idle("mine", 1)
    directory.home_changed()
    before = len(h.sent_messages(UserDigest))
    h.advance(3 * REFRESH_S)
    assert len(h.sent_messages(UserDigest)) == before  # nothing waits: quiet again


def test_bad_digests_are_refused_at_the_wire_or_by_the_directory():
    """Network mode's checks bound a digest to MAX_RECORDS entries and check each column;
    columns of different lengths or a malformed entry are reported and change nothing."""
    many = _digest(*[(f"u{i}", "s", 0, 0.0, True) for i in range(MAX_RECORDS + 1)])
    with pytest.raises(DecodeError, match="users|numbers|demands"):
        decode_checked(encode(many))
    assert decode_checked(encode(_digest(("u", "s", 0, 0.0, True)))) == _digest(("u", "s", 0, 0.0, True))
    h = Harness()
    directory = UserDirectory(HomeUsers(), _OnePeer())
    h.host("me", directory, start=False)
    good = _digest(("u", "s", 0, 0.0, True))
    bad = [
        UserDigest(["u"], [], good.numbers, good.demands, good.eligible, good.requires, True),  # columns differ
        UserDigest(["u"], ["s"], [[0.5, 0.0, 1.0, 10.0, 1.0]], good.demands, good.eligible, good.requires, True),  # task id not whole
        UserDigest(["u"], ["s"], [[0.0, 0.0, 0.0, 10.0, 1.0]], good.demands, good.eligible, good.requires, True),  # weight 0
        UserDigest(["u"], ["s"], [[0.0, 0.0, 1.0, 10.0, 0.5]], good.demands, good.eligible, good.requires, True),  # waiting neither 0 nor 1
        UserDigest(["u"], ["s"], [[0.0, 0.0, 1.0]], good.demands, good.eligible, good.requires, True),  # too few numbers
    ]
    for msg in bad:
        h.deliver("me", msg, src="peer")
    assert directory.known == {}
    assert len(h.reports_of("bad_message")) == len(bad)


def test_report_order():
    t = UserReport("a", "s", 2, 1.0, True, [1.0], CLASSIC, (1.0, 0.0, [], {}))
    assert UserReport("a", "s", 3, 9.0, True, [1.0], CLASSIC, t.wire).newer_than(t)
    assert UserReport("a", "s", 2, 0.5, True, [1.0], CLASSIC, t.wire).newer_than(t)
    assert UserReport("a", "s", 2, 9.0, False, [1.0], CLASSIC, t.wire).newer_than(t)
    assert not UserReport("a", "s", 2, 1.0, True, [1.0], CLASSIC, t.wire).newer_than(t)
    assert not t.newer_than(UserReport("a", "s", 2, 1.0, False, [1.0], CLASSIC, t.wire))
