"""The census of server kinds (model/census.py) and its push-sum (overlay/census.py):
h_i and M_i without a list of the servers (issue 35, item 1)."""

from __future__ import annotations

import numpy as np
import pytest

from dgdrf.model.census import Census, ServerKind
from dgdrf.model.constraints import Constraint
from dgdrf.model.generators import google_2011_jobs_scenario
from dgdrf.model.problem import Problem, tasks_alone, tasks_per_server
from dgdrf.nodes.bootstrap import Bootstrap
from dgdrf.overlay.census import CensusSum
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.messages import CensusShare
from dgdrf.overlay.pushsum import SCALE, int_to_bytes
from dgdrf.overlay_run import OverlayNode
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.transport import LocalTransport


def _census_of(scenario) -> Census:
    return Census.of_servers((s.capacity, s.attribute_map) for s in scenario.servers)


def _units_truth(scenario, constrained: bool) -> np.ndarray:
    """h_i (or M_i) of every user's first job, from the whole matrix (model/problem.py)."""
    return tasks_alone(Problem.from_scenario(scenario), constrained)


def test_the_exact_census_gives_the_problems_h_and_m_for_every_user():
    scenario = google_2011_jobs_scenario(100, 20, seed=2017, constrained=0.5)
    census = _census_of(scenario)
    assert census.servers == 100
    assert len({k.capacity for k in census.counts}) == 5  # the generator's machine table
    first = [u.job_list[0] for u in scenario.users]
    assert [census.units(j.demand) for j in first] == _units_truth(scenario, constrained=False).tolist()
    assert [census.units(j.demand, j.constraint) for j in first] == _units_truth(scenario, constrained=True).tolist()
    assert any(not j.constraint.unconstrained for j in first)  # M_i differs from h_i somewhere
    assert census.units([0.5, 0.5], Constraint(eligible=frozenset({"s1"}))) is None  # kinds cannot say which servers


def test_a_kind_key_round_trips_and_bad_bytes_are_refused():
    kind = ServerKind.of([0.5, 0.25], {"arch": "a1", "ssd": False})
    assert ServerKind.from_key(kind.key()) == kind
    assert ServerKind.of([0.5, 0.25], {"ssd": False, "arch": "a1"}).key() == kind.key()  # canonical
    for bad in (b"\xc1", b"\x93\x01\x02\x03", kind.key() + b"\x00"):
        with pytest.raises(ValueError, match="not a server kind"):
            ServerKind.from_key(bad)


def test_census_push_sum_is_within_1e3_of_h_and_m_after_warm_up_on_1000_servers():
    """Issue 35's acceptance: every server's h_i and M_i estimates within 1e-3 relative of
    the truth after the warm-up, and rounded to whole servers the census is exact."""
    scenario = google_2011_jobs_scenario(1000, 200, seed=7, constrained=0.5)
    truth = _census_of(scenario)
    clock = VirtualClock()
    transport = LocalTransport(clock, np.random.default_rng(5))
    transport.register(Bootstrap())
    roles = []
    for i, s in enumerate(scenario.servers):
        node = OverlayNode(s.id)
        cyclon = node.add_role(Cyclon(8, 4))
        roles.append(node.add_role(CensusSum(ServerKind.of(s.capacity, s.attribute_map), 1.0 if i == 0 else 0.0, cyclon)))
        transport.register(node)
    transport.start_all()
    clock.run(until=40.0)  # every node exact from about 30 s on (1,000 servers, 198 kinds)
    jobs = [j for u in scenario.users for j in u.job_list[:3]]
    assert any(not j.constraint.unconstrained for j in jobs)
    kinds = sorted(truth.counts, key=lambda k: k.key())
    index = {k.key(): i for i, k in enumerate(kinds)}
    per = tasks_per_server(np.array([k.capacity for k in kinds]), np.array([j.demand for j in jobs]))  # jobs x kinds
    admits = np.array([[j.constraint.admits("", dict(k.attributes)) for k in kinds] for j in jobs])
    exact = np.array([truth.counts[k] for k in kinds], dtype=float)
    h, m = per @ exact, (per * admits) @ exact
    assert np.array_equal(h, [truth.units(j.demand) for j in jobs]) and np.array_equal(m, [truth.units(j.demand, j.constraint) for j in jobs])
    worst = 0.0
    for r in roles:
        est = r.estimate()
        assert est is not None and set(est) <= set(index)
        counts = np.zeros(len(kinds))
        for k, x in est.items():
            counts[index[k]] = x  # unrounded: the push-sum's own error
        worst = max(worst, float(np.max(np.abs(per @ counts - h) / h)), float(np.max(np.abs((per * admits) @ counts - m) / np.maximum(m, 1.0))))
        assert r.census() == truth  # rounded to whole servers: exact
    assert worst <= 1e-3


def test_a_bad_census_share_is_refused_and_changes_nothing():
    from harness import Harness

    kind = ServerKind.of([1.0, 1.0], {"arch": "a1"})
    h = Harness()
    census = CensusSum(kind, 0.0, Cyclon())
    h.host("me", census)
    before = census.masses(), census.w
    bad = [
        CensusShare([kind.key()], [], int_to_bytes(1)),  # kinds and masses differ in number
        CensusShare([b"\xc1"], [int_to_bytes(1)], int_to_bytes(1)),  # not a kind
        CensusShare([ServerKind.of([1.0, 1.0, 1.0]).key()], [int_to_bytes(1)], int_to_bytes(1)),  # 3 resources
        CensusShare([kind.key()], [int_to_bytes(-1)], int_to_bytes(1)),  # negative
    ]
    for msg in bad:
        h.deliver("me", msg, src="peer")
    assert (census.masses(), census.w) == before
    assert len(h.reports_of("bad_message")) == len(bad)
    h.deliver("me", CensusShare([kind.key()], [int_to_bytes(SCALE)], int_to_bytes(SCALE)), src="peer")
    assert census.census() == Census({kind: 2})


def test_a_census_round_halves_every_mass_exactly_and_keeps_the_rest():
    """Push-sum's conservation (overlay/pushsum.py): what is sent plus what is kept is
    what was held, to the last 2**-64 unit, kind by kind; the receiver adds it all."""
    from harness import Harness

    a, b = ServerKind.of([1.0, 0.5]), ServerKind.of([0.5, 0.5], {"ssd": True})
    h = Harness()
    class OnePeer:
        def random_peer(self) -> str:
            return "peer"

    first = CensusSum(a, 1.0, OnePeer())
    second = CensusSum(b, 0.0, Cyclon())
    h.host("me", first, start=False)
    h.host("peer", second, start=False)
    h.deliver("me", CensusShare([a.key(), b.key()], [int_to_bytes(3), int_to_bytes(5 * SCALE + 1)], int_to_bytes(7)), src="x")
    held = {k: first.masses().get(k, 0) + second.masses().get(k, 0) for k in (a.key(), b.key())}, first.w + second.w
    for _ in range(5):
        first.round()
        h.pump()
        assert ({k: first.masses().get(k, 0) + second.masses().get(k, 0) for k in (a.key(), b.key())}, first.w + second.w) == held
    assert first.masses()[b.key()] + second.masses()[b.key()] == 6 * SCALE + 1
