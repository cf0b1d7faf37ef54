"""The allocation ledger's amortized growth (over-allocated buffers, natural order kept by
insertion, incremental fit counts) must not change any decision: a ledger that learns
servers and users in any order, interleaved with allocations, decides as one built in
natural order, and its incremental state always equals a recount from scratch.

Capacities are integers and demands multiples of 1/4, so sums are exact whatever the
order and results can be compared with ==.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.resources import FIT_TOLERANCE, natural_key

M = 2
capacities = st.lists(st.integers(0, 8).map(float), min_size=M, max_size=M)
demands = st.lists(st.integers(0, 8).map(lambda k: k / 4), min_size=M, max_size=M).filter(lambda d: max(d) > 0)


@st.composite
def clusters(draw):
    """Servers and users with unique natural keys (ids like s-3, u-12), in natural order."""
    servers = sorted(draw(st.sets(st.integers(0, 60), min_size=1, max_size=12)))
    users = sorted(draw(st.sets(st.integers(0, 60), min_size=1, max_size=8)))
    return ([(f"s-{k}", draw(capacities)) for k in servers], [(f"u-{k}", draw(demands)) for k in users])


def _add(ledger: AllocationLedger, entry: tuple[str, str, list[float]]) -> None:
    kind, ident, vector = entry
    (ledger.add_server if kind == "server" else ledger.add_user)(ident, vector)


def _step(ledger: AllocationLedger, best: bool) -> tuple[str, str] | None:
    """One DRF progressive-filling step (as the oracle and the drf policies take it)."""
    user = ledger.lowest_share_user(ledger.fits_anywhere())
    if user is None:
        return None
    server = ledger.best_fit(user) if best else ledger.first_fit(user)
    assert server is not None
    assert ledger.allocate(user, server)
    return ledger.user_ids[user], ledger.server_ids[server]


def _by_id(ledger: AllocationLedger) -> dict:
    """Everything a decision depends on, keyed by ids instead of learning-order indices."""
    fits = ledger.fits_anywhere()
    shares = ledger.shares()
    ids = ledger.server_ids

    def named(s: int | None) -> str | None:
        return None if s is None else ids[s]

    return {
        "order": [ids[s] for s in ledger.order],
        "total": ledger.total.tolist(),
        "users": {u: (bool(fits[i]), float(shares[i]), named(ledger.first_fit(i)), named(ledger.best_fit(i))) for i, u in enumerate(ledger.user_ids)},
        "free": {s: ledger.free[i].tolist() for i, s in enumerate(ids)},
    }


def _check_against_recount(ledger: AllocationLedger) -> None:
    """The incremental state equals one recomputed from capacities, usage and demands."""
    n, u = len(ledger.server_ids), len(ledger.user_ids)
    assert ledger.capacity.shape == ledger.used.shape == (n, M) and ledger.demand.shape == (u, M)
    assert ledger.placed.shape == ledger.fit.shape == (u, n) and ledger.tasks.shape == (u,)
    slack = FIT_TOLERANCE * np.maximum(ledger.capacity, 1.0)
    fit = np.all(ledger.demand[:, None, :] <= (ledger.capacity - ledger.used + slack)[None, :, :], axis=2)
    assert (ledger.fit == fit).all()
    assert (ledger.fits_anywhere() == fit.any(axis=1)).all()
    assert (ledger.tasks == ledger.placed.sum(axis=1)).all()
    assert (ledger.used == ledger.placed.T @ ledger.demand).all()
    assert ledger.total.tolist() == ledger.capacity.sum(axis=0).tolist()
    natural = sorted(range(n), key=lambda s: natural_key(ledger.server_ids[s]))
    assert ledger.order.tolist() == natural
    for i in range(u):
        fitting = [s for s in natural if fit[i, s]]
        assert ledger.first_fit(i) == (fitting[0] if fitting else None)


@settings(max_examples=150, deadline=None)
@given(clusters(), st.randoms(use_true_random=False), st.integers(0, 30), st.booleans())
def test_learning_order_does_not_change_decisions(cluster, rnd, steps_between, best):
    """Two batches of servers and users, allocations in between: learned in natural order
    or shuffled (users before servers, servers after users), the picks are the same."""
    servers, users = cluster
    entries = [("server", i, c) for i, c in servers] + [("user", i, d) for i, d in users]
    shuffled = entries[:]
    rnd.shuffle(shuffled)
    cut = rnd.randint(0, len(shuffled))
    natural_ledger, shuffled_ledger = AllocationLedger(M), AllocationLedger(M)
    for last, batch in ((False, shuffled[:cut]), (True, shuffled[cut:])):
        for entry in sorted(batch, key=lambda e: (e[0] != "server", natural_key(e[1]))):
            _add(natural_ledger, entry)
        for entry in batch:
            _add(shuffled_ledger, entry)
        assert _by_id(shuffled_ledger) == _by_id(natural_ledger)
        for _ in range(10_000 if last else steps_between):
            pick = _step(natural_ledger, best)
            assert _step(shuffled_ledger, best) == pick
            if pick is None:
                break
        assert _by_id(shuffled_ledger) == _by_id(natural_ledger)
    assert not natural_ledger.fits_anywhere().any()  # filled to saturation
    _check_against_recount(shuffled_ledger)


operations = st.lists(
    st.one_of(
        st.tuples(st.just("server"), st.integers(0, 40), capacities),
        st.tuples(st.just("user"), st.integers(0, 40), demands),
        st.tuples(st.just("allocate"), st.integers(0, 10**6), st.integers(0, 10**6)),
        st.tuples(st.just("release"), st.integers(0, 10**6), st.integers(0, 10**6)),
    ),
    max_size=80,
)


@settings(max_examples=200, deadline=None)
@given(operations)
def test_incremental_state_equals_a_recount(ops):
    """Any mix of joins (also repeated ones), allocations and releases, checked after
    every operation; enough joins to cross several buffer doublings."""
    ledger = AllocationLedger(M)
    for kind, a, b in ops:
        if kind == "server":
            ledger.add_server(f"s{a}", b)
        elif kind == "user":
            ledger.add_user(f"u{a}", b)
        elif ledger.user_ids and ledger.server_ids:
            user, server = a % len(ledger.user_ids), b % len(ledger.server_ids)
            if kind == "allocate":
                fits = bool(ledger.fit[user, server])
                assert ledger.allocate(user, server) == fits
            elif ledger.placed[user, server] > 0:
                ledger.release(user, server)
        _check_against_recount(ledger)


def test_growth_keeps_earlier_allocations():
    """Servers and users joining after tasks were placed move the buffers; nothing is lost."""
    ledger = AllocationLedger(M)
    ledger.add_server("s-0", [4.0, 4.0])
    ledger.add_user("u-0", [1.0, 1.0])
    assert ledger.allocate(0, 0)
    for k in range(1, 100):
        ledger.add_server(f"s-{k}", [4.0, 4.0])
        ledger.add_user(f"u-{k}", [1.0, 1.0])
        assert ledger.allocate(k, k)
    assert ledger.placed.shape == (100, 100)
    assert (ledger.placed == np.eye(100, dtype=np.int64)).all()
    assert ledger.used.tolist() == [[1.0, 1.0]] * 100
    _check_against_recount(ledger)


def test_reserve_changes_nothing_visible():
    plain, reserved = AllocationLedger(M), AllocationLedger(M)
    reserved.reserve(50, 20)
    assert reserved.capacity.shape == (0, M) and reserved.fit.shape == (0, 0)
    for ledger in (plain, reserved):
        for k in (3, 1, 2):
            ledger.add_server(f"s-{k}", [k, 2.0])
        ledger.add_user("u-1", [1.0, 0.5])
        ledger.add_user("u-2", [0.5, 1.0])
        while _step(ledger, best=False):
            pass
    assert _by_id(plain) == _by_id(reserved)
    assert (plain.placed == reserved.placed).all()


def test_equal_natural_keys_keep_learning_order():
    """s1, s01 and s001 have the same natural key: first fit prefers the one learned
    first, as a stable sort of the ids would."""
    ledger = AllocationLedger(1)
    for ident in ("s01", "s2", "s001", "s1", "s0"):
        ledger.add_server(ident, [1.0])
    assert [ledger.server_ids[s] for s in ledger.order] == ["s0", "s01", "s001", "s1", "s2"]
    ledger.add_user("u", [1.0])
    assert ledger.server_ids[ledger.first_fit(0)] == "s0"
    ledger.allocate(0, ledger.first_fit(0))
    assert ledger.server_ids[ledger.first_fit(0)] == "s01"


def test_share_ties_go_to_the_lower_user_id_in_natural_order():
    ledger = AllocationLedger(1)
    ledger.add_server("s", [100.0])
    for ident in ("u-10", "u-9", "u-2"):
        ledger.add_user(ident, [1.0])
    assert ledger.user_ids[ledger.lowest_share_user(ledger.fits_anywhere())] == "u-2"
    ledger.allocate(ledger.user_index["u-2"], 0)
    assert ledger.user_ids[ledger.lowest_share_user(ledger.fits_anywhere())] == "u-9"


def test_retired_server_takes_nothing_and_still_counts_in_the_totals_after_a_join():
    ledger = AllocationLedger(1)
    ledger.add_server("s-1", [4.0])
    ledger.add_server("s-2", [4.0])
    ledger.add_user("u", [1.0])
    ledger.allocate(0, 0)
    assert ledger.total.tolist() == [8.0]
    ledger.retire(0)
    assert ledger.first_fit(0) == 1 and ledger.fits_anywhere().tolist() == [True]
    assert ledger.total.tolist() == [8.0]  # a departure changes no share
    ledger.retire(1)
    ledger.retire(1)  # twice: once
    assert ledger.first_fit(0) is None and ledger.best_fit(0) is None
    assert ledger.fits_anywhere().tolist() == [False]
    ledger.add_server("s-3", [2.0])
    assert ledger.total.tolist() == [4.0 + 4.0 + 2.0]  # every server that ever joined
    assert ledger.capacity.tolist() == [[1.0], [0.0], [2.0]]  # the retired hold what they held
    assert ledger.first_fit(0) == 2 and ledger.fits_anywhere().tolist() == [True]
    # a retired server keeps no fit tolerance, not even after another server joins
    tiny = ledger.add_user("tiny", [1e-12])
    assert ledger.first_fit(tiny) == 2 and not ledger.fit[tiny, 0] and not ledger.fit[tiny, 1]
