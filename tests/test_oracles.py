"""ORACLES.md examples 1, 2, 3, 5 through the full actor emulation (users, gateway and
servers exchanging msgpack-encoded messages in virtual time), and through the pure
progressive-filling oracle; exact numbers."""

from __future__ import annotations

import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.oracle import progressive_filling
from dgdrf.model.scenario import build_scenario


def emulate(scenario, policy="drf", seed=1):
    result = run_emulation(scenario, RunConfig(policy=policy, seed=seed))
    assert result.invariant_violations == []
    assert result.saturated and result.stop_reason == "saturated"
    assert result.messages["total"] > 0 and result.bytes["total"] > result.messages["total"]
    return result


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_example1_drf_one_server(oracle1, seed):
    r = emulate(oracle1, seed=seed)
    assert r.tasks == {"A": 3, "B": 2}
    assert r.shares["A"] == pytest.approx(2 / 3, abs=1e-12)
    assert r.shares["B"] == pytest.approx(2 / 3, abs=1e-12)
    assert r.error_ratio == 0.0
    assert progressive_filling(oracle1).tasks == {"A": 3, "B": 2}


def test_example2_drf_vs_asset_fairness(oracle2):
    r = emulate(oracle2)
    assert r.tasks == {"A": 14, "B": 7}
    assert r.utilization["memory"] == pytest.approx(1.0)  # memory full
    assert r.utilization["cpu"] == pytest.approx(21 / 28)
    # asset fairness, 1 CPU = 2 GB: the weights make both resources count per cluster share
    assert progressive_filling(oracle2, fairness="asset").tasks == {"A": 12, "B": 8}
    assert progressive_filling(oracle2).tasks == {"A": 14, "B": 7}


@pytest.mark.parametrize("policy", ["drf", "drf-bestfit"])
def test_example3_centralized_drf(oracle3, policy):
    r = emulate(oracle3, policy=policy)
    assert r.tasks == {"U1": 1, "U2": 12}  # would be 11 without the fit tolerance
    assert r.shares["U1"] == pytest.approx(1 / 2.2, abs=1e-12)
    assert r.shares["U2"] == pytest.approx(1.2 / 2.2, abs=1e-12)
    assert round(r.shares["U1"], 4) == 0.4545 and round(r.shares["U2"], 4) == 0.5455
    assert r.error_ratio == 0.0


def test_example3_whichever_user_goes_first():
    # same instance with the small user holding the lower id: it goes first on the tie
    s = build_scenario(["cpu", "memory"], [("S1", [1.2, 1.2]), ("S2", [1, 1])], [("U1", [0.1, 0.1]), ("U2", [1, 1])])
    assert emulate(s).tasks == {"U1": 12, "U2": 1}


def test_example3_naive_per_server_table_shares():
    """Thesis table 3.1 end state (U1 = 2 tasks, U2 = 2): eq. 3.3 gives 0.909 / 0.0909."""
    from dgdrf.model.ledger import AllocationLedger

    ledger = AllocationLedger(2)
    ledger.add_server("S1", [1.2, 1.2])
    ledger.add_server("S2", [1, 1])
    u1, u2 = ledger.add_user("U1", [1, 1]), ledger.add_user("U2", [0.1, 0.1])
    for user, server in [(u2, 0), (u1, 0), (u2, 0), (u1, 1)]:
        assert ledger.allocate(user, server)
    assert ledger.share(u1) == pytest.approx(2 / 2.2) and round(ledger.share(u1), 3) == 0.909
    assert ledger.share(u2) == pytest.approx(0.2 / 2.2) and round(ledger.share(u2), 4) == 0.0909


def test_example5_three_resources(oracle5):
    r = emulate(oracle5)
    assert r.tasks == {"a": 4, "b": 3, "c": 4}
    assert r.utilization == pytest.approx({"cpu": 21 / 24, "memory": 34 / 36, "disk": 1.0})
    assert round(r.utilization["memory"] * 100, 2) == 94.44
    assert r.shares == pytest.approx({"a": 16 / 36, "b": 9 / 24, "c": 24 / 54})


def test_fifo_runs_the_oracles_to_saturation(oracle1, oracle3, oracle5):
    for s in (oracle1, oracle3, oracle5):
        r = emulate(s, policy="fifo")
        assert r.allocations == sum(r.tasks.values()) > 0
