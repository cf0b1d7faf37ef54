"""Differential tests: each hand-optimised hot path against a plain reference of what it
promises, on inputs hypothesis generates.

Where a module can run compiled (dgdrf/build_info.py COMPILED_MODULES), each test runs
the module as imported (the extension module, or its source under ``DGDRF_PURE=1`` or
when stale) and, if that was the extension, also its .py source loaded apart
(:func:`variants`), so both builds meet the same reference in one process.

The fast paths and their references:

- ``Gradient._select`` (bisection into a sorted memory, reuse of the last selection, for
  nodes with users and without) against :func:`most_preferred` (eq. 3.9) over the pool
  it describes; ``_preference`` (eq. 3.9 as one sort key) and ``preferred`` (the
  toolbox's, typed) against :func:`most_preferred`;
- ``ToolboxGradient``'s merge against the Kompics GradientView.merge its docstring
  describes;
- Cyclon's ``_oldest``, ``_sample`` and ``random_peer`` against ``min``, a uniform
  k-subset and indexing a list, and its ``sample_descriptors`` against ``_sample``;
- ``VirtualClock`` (a heap of C records compiled, slots per tick interpreted) against a
  sorted list of (due tick, scheduling order);
- ``LocalTransport``'s send (the closure of the interpreted build, the method) against
  each other;
- ``Server.fits`` / ``reserve`` (Python floats) against :func:`dgdrf.model.resources.fits`
  (numpy) and the allocation ledger;
- the ledger's DRF pick, first-fit and best-fit (numpy, incremental) against plain-Python
  eq. 3.3 / 3.7, eq. 3.2 and the DRFH heuristic H(i, l) (thesis 2.1.4);
- ``HomeUsers.lowest`` (cached) against a recount; ``gini`` in Python floats against
  numpy beyond ``SMALL_GINI``; push-sum's estimate against exact rationals.
"""

from __future__ import annotations

import importlib.util
import math
import random
from array import array
import types
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import Harness, selection_pool, source_module
from dgdrf.model.constraints import UNCONSTRAINED, Constraint
from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.notions import notion
from dgdrf.model.problem import tasks_per_server
from dgdrf.model.resources import FIT_TOLERANCE, SHARE_TIE_TOLERANCE, fits, natural_key
from dgdrf.nodes.protocol import ServerRequest, TaskRequest
from dgdrf.nodes.server import Server
from dgdrf.overlay.messages import GradientReply, GradientShuffle, Peers, PushSumShare
from dgdrf.overlay.pushsum import bytes_to_int, int_to_bytes
from dgdrf.runtime.actor import Actor

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_source = source_module


def variants(name: str) -> list:
    """The module as imported, and its .py source too if the import was compiled."""
    imported = importlib.import_module(name)
    if str(imported.__file__).endswith(".py"):
        return [pytest.param(imported, id="as-imported")]
    return [pytest.param(imported, id="compiled"), pytest.param(_source(name), id="source")]


# -- the stamped gradient's selection (overlay/gradient.py) -----------------------------------------
NEG_INF = -math.inf
UTILITIES = st.sampled_from([NEG_INF, -0.9, -0.5, -0.4, -0.3, -0.25, -0.2, -0.1, -1e-12, 0.0])
OWN = st.sampled_from([-0.5, -0.3, -0.25, -0.2, -1e-12, 0.0])
ADDRS = [f"n{i}" for i in range(14)]
descriptors = st.tuples(st.sampled_from(ADDRS), UTILITIES, st.integers(-1, 12))


@pytest.mark.parametrize("mod", variants("dgdrf.overlay.gradient"))
@SETTINGS
@given(
    st.lists(st.tuples(st.sampled_from(ADDRS), UTILITIES, st.integers(0, 12), st.lists(descriptors, max_size=4)), max_size=25),
    st.lists(st.dictionaries(st.sampled_from(ADDRS), st.tuples(UTILITIES, st.integers(-1, 14)), max_size=5), min_size=1, max_size=4),
    OWN,
    st.integers(1, 5),
    st.sampled_from([None, 0, 2, 6]),
)
def test_stamped_selection_is_most_preferred_over_its_pool(mod, messages, heards, own, P, memory):
    """Gradient._select = the P most preferred of its pool by eq. 3.9 (most_preferred), in
    that order and each with its freshest descriptor; repeated selections (where the last
    one is reused, _reselect) included."""
    h = Harness()
    g = mod.Gradient(lambda: own, P, memory=memory)
    h.host("me", g)
    for src, u, s, entries in messages:
        h.deliver("me", GradientShuffle(u, s, [list(e) for e in entries]), src=src)
    for heard in heards:
        pool = selection_pool(g, heard)
        g._select(dict(heard), own)
        if len(pool) <= P:
            assert g.view == pool
        else:
            expected = mod.most_preferred(own, [(d[0], g.tiebreak_of(a), a) for a, d in pool.items()], P)
            assert list(g.view) == expected
            assert all(g.view[a] == pool[a] for a in expected)


@pytest.mark.parametrize("mod", variants("dgdrf.overlay.gradient"))
@SETTINGS
@given(st.dictionaries(st.sampled_from(ADDRS), st.tuples(UTILITIES, st.integers(0, 3)), max_size=14), OWN, st.integers(1, 6))
def test_preference_key_orders_as_most_preferred(mod, candidates, own, P):
    """_preference is eq. 3.9 as one sort key, for a finite own utility."""
    cands = [(u, t, a) for a, (u, t) in candidates.items()]
    by_key = [a for u, t, a in sorted(cands, key=lambda c: mod._preference(c[0], c[1], c[2], own))[:P]]
    assert by_key == mod.most_preferred(own, cands, P)


@pytest.mark.parametrize("mod", variants("dgdrf.overlay.gradient"))
@SETTINGS
@given(
    st.dictionaries(st.sampled_from(ADDRS), st.tuples(UTILITIES, st.one_of(st.integers(0, 3), st.integers(0, 2**32 - 1))), max_size=14),
    st.one_of(OWN, st.just(NEG_INF)),
    st.integers(1, 6),
)
def test_the_hot_paths_preference_is_most_preferred(mod, candidates, own, P):
    """preferred (the toolbox gradient's merge: C doubles, idle keys raised by 2**32) picks
    what most_preferred picks, in its order, for CRC-32-sized tie-breaks (equal ones too)."""
    cands = [(u, t, a) for a, (u, t) in candidates.items()]
    assert mod.preferred(own, list(cands), P) == mod.most_preferred(own, cands, P)


# -- the Kompics toolbox's gradient (overlay/toolbox_gradient.py) -----------------------------------
def _reference_merge(view: dict, me: str, clock: int, entries, own: float, P: int, threshold: int, tiebreak, most_preferred) -> dict:
    """GradientView.merge as the module docstring gives it: a strictly younger
    descriptor replaces the one held; the single oldest entry leaves once its age reached
    ``old_threshold``; then the P most preferred (eq. 3.9) stay."""
    view = dict(view)
    for addr, u, age in entries:
        if addr == me:
            continue
        birth = clock - age
        if addr not in view or view[addr][1] < birth:
            view[addr] = (u, birth)
    if not view:
        return view
    oldest = min(view, key=lambda a: view[a][1])  # min keeps the first of equals
    if clock - view[oldest][1] >= threshold:
        del view[oldest]
    if len(view) > P:
        keep = most_preferred(own, [(d[0], tiebreak(a), a) for a, d in view.items()], P)
        view = {a: view[a] for a in keep}
    return view


@pytest.mark.parametrize("mod", variants("dgdrf.overlay.toolbox_gradient"))
@SETTINGS
@given(
    st.lists(st.tuples(st.sampled_from(ADDRS), UTILITIES, st.integers(0, 30), st.lists(st.tuples(st.sampled_from(ADDRS + ["me"]), UTILITIES, st.integers(0, 30)), max_size=5)), max_size=25),
    st.sampled_from([NEG_INF, -0.3, -0.2, 0.0]),
    st.integers(1, 4),
    st.integers(1, 12),
)
def test_toolbox_merge_is_the_gradient_view_merge(mod, requests, own, P, threshold):
    """Every request a node answers (on_GradientShuffle): age the view by one, merge the
    entries, then the sender's own descriptor, each merge as the reference does."""
    from dgdrf.overlay.gradient import most_preferred

    h = Harness()
    g = mod.ToolboxGradient(lambda: own, P, old_threshold=threshold)
    h.host("me", g)
    expected: dict = {}
    for src, u, age, entries in requests:
        h.deliver("me", GradientShuffle(u, age, [list(e) for e in entries]), src=src)
        clock = g.clock
        expected = _reference_merge(expected, "me", clock, entries, own, P, threshold, g.tiebreak_of, most_preferred)
        expected = _reference_merge(expected, "me", clock, [(src, u, age)], own, P, threshold, g.tiebreak_of, most_preferred)
        assert list(g.view.items()) == list(expected.items())


# -- Cyclon's helpers (overlay/cyclon.py) -----------------------------------------------------------
@pytest.mark.parametrize("mod", variants("dgdrf.overlay.cyclon"))
@SETTINGS
@given(st.dictionaries(st.sampled_from(ADDRS), st.integers(0, 4), min_size=1), st.integers(0, 16), st.integers(0, 2**32))
def test_cyclon_oldest_sample_and_random_peer_match_their_references(mod, view, k, seed):
    items = list(view)
    # the view array's layout: (id, birth, profile's birth) per entry, in view order
    births = array("q", [x for a in items for x in (0, view[a], view[a])])
    assert mod._oldest(births, len(items)) == items.index(min(view, key=view.get))
    picked = mod._sample(list(items), k, random.Random(seed).random)
    if k >= len(items):
        assert picked == items  # all of them, in order
    else:
        assert len(picked) == k and len(set(picked)) == k and set(picked) <= set(items)
    h = Harness()
    cyclon = mod.Cyclon(view_size=16, shuffle_length=1, bootstrap=None)
    h.host("me", cyclon)
    h.deliver("me", Peers(items), src="bootstrap")  # the view, in this order
    assert cyclon.neighbours() == items
    cyclon.rnd = random.Random(seed)
    ref = random.Random(seed)
    for _ in range(5):  # the k-th entry in view order, walked without copying the view
        assert cyclon.random_peer() == items[int(ref.random() * len(items))]
    for _ in range(5):  # the compiled draw (in place, in C) picks what _sample picks, in order
        assert [a for a, _ in cyclon.sample_descriptors(k)] == mod._sample(list(items), k, ref.random)


# -- the virtual clock (runtime/clock.py) ---------------------------------------------------------
#: one event: (delay in ticks, how it is scheduled, whether it stops the run, events it
#: schedules when it runs, an earlier event it cancels when it runs)
event = st.tuples(st.sampled_from([0, 1, 2, 3, 7]), st.sampled_from(["call_later", "schedule", "ticks"]), st.booleans())
program = st.tuples(
    st.lists(st.tuples(event, st.booleans()), min_size=1, max_size=12),  # initial events, cancelled before the run?
    st.lists(st.tuples(st.integers(0, 11), st.lists(event, max_size=3), st.integers(-1, 30)), max_size=12),  # per initial event: children, a cancel target
    st.lists(st.integers(0, 25), max_size=3),  # run(until=...) limits, in ticks
)


def _run_clock(clock_cls, prog) -> tuple[list, list]:
    """Run ``prog`` on a clock; the callbacks' (id, tick) in order, and after each run
    (now, pending)."""
    initial, children_of, limits = prog
    children = {i: (kids, target) for i, kids, target in children_of}
    clock = clock_cls()
    log: list = []
    handles: dict[int, Any] = {}
    counter = [0]

    def schedule(ev, eid):
        delay, how, stop = ev
        args = (eid, stop)
        if how == "call_later":
            handles[eid] = clock.call_later(delay / 1e6, fire, *args)
        elif how == "schedule":
            clock.schedule(delay / 1e6, fire, args)
        else:
            clock.schedule_ticks(delay, fire, args)

    def fire(eid, stop):
        log.append((eid, clock.now_ticks()))
        kids, target = children.get(eid, ((), -1))
        for ev in kids:
            counter[0] += 1
            schedule(ev, 100 + counter[0])
        if target in handles:
            handles[target].cancel()
        if stop:
            clock.stop()

    for i, (ev, cancelled) in enumerate(initial):
        schedule(ev, i)
        if cancelled and i in handles:
            handles[i].cancel()
    states = []
    for limit in [*sorted(limits), None]:
        while True:
            clock.run(until=None if limit is None else limit / 1e6)
            states.append((clock.now_ticks(), clock.pending()))
            if not clock.stopped:
                break
    return log, states


def _reference_clock(prog) -> tuple[list, list]:
    """The same program on a list of pending (due tick, scheduling order), the least run
    first; a cancelled callback still takes its place in time (it runs and does nothing,
    as both builds' handles do), and cancelling one that already ran changes nothing."""
    initial, children_of, limits = prog
    children = {i: (kids, target) for i, kids, target in children_of}
    cancellable = {i for i, (ev, _) in enumerate(initial) if ev[1] == "call_later"}
    now, seq, counter = 0, 0, 0
    pending: list = []  # [due, seq, eid, stop]
    cancelled: set[int] = set()
    log: list = []
    states = []

    def schedule(ev, eid):
        nonlocal seq
        delay, _, stop = ev
        pending.append([now + delay, seq, eid, stop])
        seq += 1

    for i, (ev, cancel) in enumerate(initial):
        schedule(ev, i)
        if cancel and i in cancellable:
            cancelled.add(i)
    for limit in [*sorted(limits), None]:
        while True:
            stopped = False
            while pending:
                pending.sort()
                due, _, eid, stop = pending[0]
                if limit is not None and due > limit:
                    now = limit
                    break
                pending.pop(0)
                now = due
                if eid in cancelled:
                    continue
                log.append((eid, now))
                kids, target = children.get(eid, ((), -1))
                for ev in kids:
                    counter += 1
                    schedule(ev, 100 + counter)
                if target in cancellable:
                    cancelled.add(target)
                if stop:
                    stopped = True
                    break
            states.append((now, len(pending)))
            if not stopped:
                break
    return log, states


@pytest.mark.parametrize("mod", variants("dgdrf.runtime.clock"))
@settings(max_examples=150, deadline=None)
@given(program)
def test_virtual_clock_runs_events_in_due_then_scheduling_order(mod, prog):
    """Callbacks run in order of due tick, those due at the same tick in the order they
    were scheduled (also when scheduled by a callback at the running tick), cancelled ones
    not at all, stops and ``until`` limits changing nothing in the order."""
    assert _run_clock(mod.VirtualClock, prog) == _reference_clock(prog)


# -- the local transport's send (runtime/transport.py) ------------------------------------------
class _Relay(Actor):
    """Hands every ServerRequest(n > 0) on as ServerRequest(n - 1) to the next address."""

    def __init__(self, address: str, ring: list[str], log: list, clock: Any) -> None:
        super().__init__(address)
        self.ring, self.log, self.clock = ring, log, clock

    def on_ServerRequest(self, src, msg) -> None:
        self.log.append((self.clock.now_ticks(), self.address, src, msg.task_id))
        if msg.task_id > 0:
            self.send(self.ring[(self.ring.index(self.address) + 1) % len(self.ring)], ServerRequest(msg.task_id - 1))


def _transport_trace(transport_mod, clock_mod, method: bool, seed: int, loss: float, dup: float, sends: list) -> tuple:
    clock = clock_mod.VirtualClock()
    t = transport_mod.LocalTransport(clock, np.random.default_rng(seed), latency=(0.001, 0.003), loss=loss, duplicate=dup)
    if method:
        t.send = types.MethodType(transport_mod.LocalTransport.send, t)
    ring = ["a", "b", "c"]
    log: list = []
    for addr in ring:
        t.register(_Relay(addr, ring, log, clock))
    for src, dst, hops in sends:
        t.actors[src].send(dst, ServerRequest(hops))
    clock.run()
    s = t.stats
    return log, s.count[ServerRequest.TAG], s.nbytes[ServerRequest.TAG], s.dropped, s.duplicated, s.undeliverable


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32),
    st.sampled_from([0.0, 0.2]),
    st.sampled_from([0.0, 0.2]),
    st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["a", "b", "c", "gone"]), st.integers(0, 6)), min_size=1, max_size=8),
)
def test_local_transport_send_paths_deliver_the_same(seed, loss, dup, sends):
    """The send the imported transport runs (compiled method, or the interpreted
    closure), the interpreted closure and the interpreted method: the same deliveries at
    the same ticks, the same drops, duplicates and counts, for the same seed."""
    import dgdrf.runtime.clock as clock_mod
    import dgdrf.runtime.transport as transport_mod

    pure_transport, pure_clock = _source("dgdrf.runtime.transport"), _source("dgdrf.runtime.clock")
    reference = _transport_trace(transport_mod, clock_mod, False, seed, loss, dup, sends)
    assert _transport_trace(pure_transport, pure_clock, False, seed, loss, dup, sends) == reference
    assert _transport_trace(pure_transport, pure_clock, True, seed, loss, dup, sends) == reference


# -- the resource node's fit check (nodes/server.py) against numpy and the ledger -------------------
AMOUNTS = st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.25, 1 / 3, 0.5, 0.7, 1.0, 1.2, 2.0, 3.0])


@SETTINGS
@given(
    st.lists(st.sampled_from([0.5, 1.0, 1.2, 2.2, 4.0, 9.0]), min_size=2, max_size=3),
    st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.lists(AMOUNTS, min_size=3, max_size=3)), max_size=40),
)
def test_server_fit_and_usage_are_numpys_and_the_ledgers(capacity, ops):
    """Server.fits (Python floats, at every hop of a walk) is resources.fits on (demand,
    free, capacity) and the ledger's fit, and the capacity in use is the same bits, over
    any sequence of reservations and releases (eq. 3.2 with FIT_TOLERANCE)."""
    m = len(capacity)
    h = Harness()
    server = h.host(Server("s", capacity), start=False)
    ledger = AllocationLedger(m)
    ledger.add_server("s", capacity)
    held: list[tuple[str, int, int]] = []
    for task, (reserve, user, amounts) in enumerate(ops):
        demand = amounts[:m]
        uid = f"u{user}-{task}"
        if reserve or not held:
            u = ledger.add_user(uid, demand)
            expected = fits(np.asarray(demand), server.free, server.capacity)
            assert server.fits(demand) == expected == ledger.fits_on(u, 0)
            assert server.reserve(uid, task, demand) == expected == ledger.allocate(u, 0)
            if expected:
                held.append((uid, task, u))
        else:
            uid, t, u = held.pop(user % len(held))
            assert server.release(uid, t)
            ledger.release(u, 0)
        assert server.used.tolist() == ledger.used[0].tolist()


# -- the allocation ledger's DRF decisions (model/ledger.py) against plain Python ---------------------
@st.composite
def clusters(draw):
    servers = draw(st.lists(st.lists(st.integers(0, 8).map(float), min_size=2, max_size=2), min_size=1, max_size=6))
    users = draw(st.lists(st.lists(st.integers(0, 8).map(lambda k: k / 4), min_size=2, max_size=2).filter(lambda d: max(d) > 0), min_size=1, max_size=5))
    order = draw(st.permutations(range(len(servers))))
    return [(f"s-{3 * i + 1}", servers[i]) for i in order], [(f"u-{7 * i + 2}", d) for i, d in enumerate(users)]


def _reference_drf_step(servers, users, used, tasks, best: bool):
    """One DRF(H) step from the definitions: G_i = n_i max_r D_ir / C_r (eqs. 3.3, 3.7);
    among users whose task fits somewhere (eq. 3.2), the lowest G_i, ties (relative
    SHARE_TIE_TOLERANCE) to the lower id; first fit in id order, or best fit by
    H(i, l) = || D_i / D_i1 - cbar_l / cbar_l1 ||_1 (thesis 2.1.4; normalised by the
    largest component where the first is 0)."""
    total = [sum(c[r] for _, c in servers) for r in range(2)]
    ids = sorted(range(len(servers)), key=lambda s: natural_key(servers[s][0]))

    def fits_on(i, s):
        cap = servers[s][1]
        return all(users[i][1][r] <= (cap[r] - used[s][r]) + FIT_TOLERANCE * max(cap[r], 1.0) for r in range(2))

    share = [tasks[i] * max((users[i][1][r] / total[r] if total[r] > 0 else 0.0) for r in range(2)) for i in range(len(users))]
    eligible = [i for i in range(len(users)) if any(fits_on(i, s) for s in ids)]
    if not eligible:
        return None
    low = min(share[i] for i in eligible)
    tied = [i for i in eligible if share[i] <= low + SHARE_TIE_TOLERANCE * max(low, 1e-300)]
    user = min(tied, key=lambda i: natural_key(users[i][0]))
    candidates = [s for s in ids if fits_on(user, s)]
    if not best:
        return user, candidates[0]
    d = users[user][1]
    d_norm = [x / d[0] for x in d] if d[0] > 0 else [x / max(d) for x in d]
    best_s, best_h = None, None
    for s in candidates:
        rem = [max(servers[s][1][r] - used[s][r], 0.0) for r in range(2)]
        scale = rem[0] if rem[0] > 0 else max(rem)
        scale = scale if scale > 0 else 1.0
        h = 0.0
        for r in range(2):
            h += abs(d_norm[r] - rem[r] / scale)
        if best_h is None or h < best_h:
            best_s, best_h = s, h
    return user, best_s


@SETTINGS
@given(clusters(), st.booleans())
def test_ledger_drf_steps_are_the_definitions(cluster, best):
    """Progressive filling to saturation: at every step the ledger's pick (the numpy
    fit matrix kept incrementally, lowest_share_user, first_fit / best_fit) is the one
    the definitions give, computed in plain Python from capacities, demands and counts."""
    servers, users = cluster
    ledger = AllocationLedger(2)
    for sid, cap in servers:
        ledger.add_server(sid, cap)
    for uid, d in users:
        ledger.add_user(uid, d)
    used = [[0.0, 0.0] for _ in servers]
    tasks = [0] * len(users)
    for _ in range(1000):
        ref = _reference_drf_step(servers, users, used, tasks, best)
        eligible = ledger.fits_anywhere()
        user = ledger.lowest_share_user(eligible)
        if ref is None:
            assert user is None
            return
        server = ledger.best_fit(user) if best else ledger.first_fit(user)
        assert (user, server) == ref
        assert ledger.allocate(user, server)
        tasks[user] += 1
        for r in range(2):
            used[server][r] += users[user][1][r]
    pytest.fail("not saturated after 1000 steps")


# -- the fairness notions' kept per-user sums (model/notions.py RowSums) against a recount ------------
def _recount_shares(name: str, ledger: AllocationLedger) -> np.ndarray:
    """A notion's shares from the whole users x servers matrices, as the definitions read:
    h_i, M_i (Wang et al. §V-B, App. B-C) and K_n (Kesidis et al. eq. 13), over the
    servers still there (a server that left counts for nobody)."""
    elig = ledger.eligibility() & ledger.live()[None, :]
    if name == "psdsf":
        d, c = ledger.demand[:, None, :], ledger.capacity[None, :, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(d > 0, d / np.where(c > 0, c, 1.0), 0.0)
            ratio = np.where((d > 0) & (c <= 0), np.inf, ratio)
        per = np.where(elig, ratio.max(axis=-1), 0.0)
        return ledger.tasks * np.where(np.isfinite(per), per, 0.0).sum(axis=1) / ledger.weight
    per = tasks_per_server(ledger.capacity, ledger.demand) * ledger.live()[None, :]
    units = (per * elig if name == "cdrf" else per).sum(axis=1) * ledger.weight
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(units > 0, ledger.tasks / np.where(units > 0, units, 1.0), np.where(ledger.tasks > 0, np.inf, 0.0))


NOTION_CONSTRAINTS = [UNCONSTRAINED, Constraint(requires=(("ssd", (True,)),)), Constraint(eligible=frozenset({"s-1", "s-4"})), Constraint(requires=(("class", ("a", "b")),))]
DEMANDS = st.lists(st.integers(0, 8).map(lambda k: k / 4), min_size=2, max_size=2).filter(lambda d: max(d) > 0)


@SETTINGS
@given(clusters(), st.lists(st.tuples(st.sampled_from(["task", "constrain", "idle", "allocate", "allocate", "release", "user", "server", "retire", "exclude", "weight"]),
                                      st.integers(0, 9), st.integers(0, 9), DEMANDS, st.integers(0, 3)), max_size=40))
def test_notion_shares_kept_row_by_row_are_a_recount(cluster, ops):
    """TSF's, CDRF's and PS-DSF's shares, whose per-user sums over the servers are kept and
    recomputed only for users whose next task changed, equal a recount from the whole
    matrices after every change a run makes: next tasks (demand, constraint alone, none),
    placements and ends, users and servers joining, servers leaving, declines, weights."""
    servers, users = cluster
    ledger = AllocationLedger(2)
    for k, (sid, cap) in enumerate(servers):
        ledger.add_server(sid, cap, {"ssd": k % 2 == 0, "class": "abc"[k % 3]})
    for uid, d in users:
        ledger.add_user(uid, d)
    kept = {name: notion(name) for name in ("tsf", "cdrf", "psdsf")}
    placed: list[tuple[int, int]] = []
    for u in range(len(users)):  # shares of users with no task are 0 whatever their sums
        s = ledger.first_fit(u)
        if s is not None:
            ledger.allocate(u, s)
            placed.append((u, s))
    for op, a, b, demand, c in ops:
        u, s = a % len(ledger.user_ids), b % len(ledger.server_ids)
        if op == "task":
            ledger.set_task(u, demand, NOTION_CONSTRAINTS[c])
        elif op == "constrain":  # the same demand, another constraint
            ledger.set_task(u, ledger.demand[u].tolist(), NOTION_CONSTRAINTS[c])
        elif op == "idle":
            ledger.set_task(u, None)
        elif op == "allocate" and ledger.fits_on(u, s):
            ledger.allocate(u, s)
            placed.append((u, s))
        elif op == "release" and placed:
            ledger.release(*placed.pop(a % len(placed)))
        elif op == "user":
            ledger.add_user(f"u-{100 + len(ledger.user_ids)}", demand, constraint=NOTION_CONSTRAINTS[c])
        elif op == "server":
            ledger.add_server(f"s-{100 + len(ledger.server_ids)}", [float(8 - b % 8), float(c + 1)], {"ssd": c % 2 == 0, "class": "abc"[c % 3]})
        elif op == "retire":
            ledger.retire(s)
        elif op == "exclude":
            ledger.exclude(u, s)
        elif op == "weight":
            ledger.set_weight(u, 1.0 + c)
        for name, n in kept.items():
            np.testing.assert_array_equal(n.shares(ledger), _recount_shares(name, ledger), err_msg=f"{name} after {op}")


def test_a_server_that_leaves_full_leaves_the_kept_sums_too():
    """A server that leaves while full keeps its capacity (it shrinks to what it holds):
    only its liveness changes, and the kept sums must see it (hypothesis's example)."""
    ledger = AllocationLedger(2)
    ledger.add_server("s-1", [0.0, 1.0])
    ledger.add_user("u-2", [0.0, 1.0])
    kept = {name: notion(name) for name in ("tsf", "psdsf")}
    ledger.allocate(0, 0)
    ledger.set_task(0, [0.0, 1.25], NOTION_CONSTRAINTS[0])
    for n in kept.values():
        n.shares(ledger)
    ledger.retire(0)
    assert ledger.capacity.tolist() == [[0.0, 1.0]]  # full: unchanged
    for name, n in kept.items():
        np.testing.assert_array_equal(n.shares(ledger), _recount_shares(name, ledger), err_msg=name)


# -- the home users' cached minimum (policies/local.py) ----------------------------------------------
@pytest.mark.parametrize("mod", variants("dgdrf.policies.local"))
@SETTINGS
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(0, 4), st.sampled_from([0.0, 0.1, 0.2, 0.25, 0.5])), max_size=40))
def test_home_users_cached_lowest_is_a_recount(mod, ops):
    """HomeUsers.lowest (cached, asked many times a tick) is the lowest (share, id hash)
    among users not stuck, and utility() is eq. 4.2 with the tie-break, after any mix of
    submitted tasks (repeats included) and users getting stuck."""
    home = mod.HomeUsers()
    for submit, user, task, share in ops:
        uid = f"u{user}"
        if submit or uid not in home.users:
            home.submit(TaskRequest(uid, task, [1.0, 1.0], share))
        else:
            home.mark_stuck(home.users[uid])
        placeable = [(u.share, mod.tie_break(a), a) for a, u in home.users.items() if not u.stuck]
        low = home.lowest()
        if not placeable:
            assert low is None and home.utility() == -math.inf and home.min_share() == math.inf
            continue
        share_, tb, addr = min(placeable)
        assert low is not None and low[0] == addr and low[1] is home.users[addr]
        assert home.utility() == -(share_ + mod.TIE_SCALE * tb) and home.min_share() == share_


# -- metrics (model/metrics.py) and push-sum's estimate (overlay/pushsum.py) -----------------------
FLOATS = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, 1e-12, 0.1, 0.3, 0.5])


@pytest.mark.parametrize("mod", variants("dgdrf.model.metrics"))
@SETTINGS
@given(st.lists(FLOATS, min_size=0, max_size=300))
def test_gini_in_python_floats_is_numpys_at_any_size(mod, xs):
    """gini switches from Python floats to numpy above SMALL_GINI values; the two are the
    same bits at every size, so the switch changes no result."""
    assert mod._gini_small(list(xs)) == mod._gini_numpy(xs) == mod.gini(xs)


NEIGHBOUR_UTILITIES = FLOATS.map(lambda x: -x) | st.sampled_from([-math.inf, math.inf, math.nan, -0.0])


@pytest.mark.parametrize("mod", variants("dgdrf.model.metrics"))
@SETTINGS
@given(FLOATS, FLOATS, st.lists(NEIGHBOUR_UTILITIES, max_size=80))
def test_gini_falls_is_the_two_ginis_of_alg_6(mod, share, step, utilities):
    """PDGDRF's test (alg. 6) on scratch arrays gives what the two Gini coefficients of
    the lists give, at every size (past SMALL_GINI, against numpy's): the neighbours'
    shares are minus their finite utilities."""
    others = [-u for u in utilities if math.isfinite(u)]
    expected = mod.gini([share + step, *others]) < mod.gini([share, *others])
    assert mod.gini_falls(share, step, array("d", utilities), len(utilities)) is expected


MAGNITUDES = st.sampled_from([0.0, 1.0, 0.3, 2.0**40, 2.0**61, 2.0**62.5, 2.0**62.99, 2.0**63, 2.0**64, 2.0**70])


@SETTINGS
@given(
    st.lists(st.tuples(MAGNITUDES, st.booleans()), min_size=4, max_size=4),
    st.lists(st.sampled_from(["a", "b", "frames", "messages"]), max_size=40),
)
def test_pushsum_masses_are_the_same_ints_in_c_integers_and_in_python_past_128_bits(values, steps):
    """Compiled, a node keeps its masses as 128-bit C integers while they fit and moves
    to Python ints for good before a sum would pass 128 bits (pushsum.pxd): every mass,
    counter and share's bytes are those of the source, whether shares arrive as frames
    (on_frame) or as messages, and the mass is conserved."""
    from dgdrf.overlay.cyclon import Cyclon
    from dgdrf.runtime.addresses import BOOK
    from dgdrf.runtime.messages import encode

    x = [(-v if neg else v) for v, neg in values]
    traces, bigs = [], []
    for mod in [p.values[0] for p in variants("dgdrf.overlay.pushsum")]:
        h = Harness()
        ca, cb = Cyclon(2, 1, 1.0, bootstrap=None), Cyclon(2, 1, 1.0, bootstrap=None)
        pa, pb = mod.PushSum(x[:2], 1.0, ca), mod.PushSum(x[2:], 0.0, cb)
        h.host("a", ca, pa)
        h.host("b", cb, pb)
        h.deliver("a", Peers(["b"]), src="bootstrap")
        h.deliver("b", Peers(["a"]), src="bootstrap")
        roles = {"a": pa, "b": pb}
        initial = [u + v for u, v in zip(pa.s + [pa.w], pb.s + [pb.w])]
        trace, done = [], len(h.sent)

        def state():
            return [(p.mass(), p.sent_mass, p.received_mass) for p in (pa, pb)]

        for step in steps:
            if step in roles:
                roles[step].round()
            else:
                for sent in h.sent[done:]:
                    if step == "frames":
                        roles[sent.dst].on_frame(BOOK.id_of(sent.src), encode(sent.msg))
                    else:
                        h.actors[sent.dst].receive(sent.src, sent.msg)
                done = len(h.sent)
            trace.append(state())
        in_flight = h.sent[done:]
        trace.append([(m.s, m.w) for m in h.sent_messages(PushSumShare)])
        flying = [sum(bytes_to_int(b) for sent in in_flight for b in sent.msg.s[j:j + 1]) for j in range(2)] + [sum(bytes_to_int(sent.msg.w) for sent in in_flight)]
        assert [u + v + f for u, v, f in zip(pa.s + [pa.w], pb.s + [pb.w], flying)] == initial
        traces.append(trace)
        bigs.append(tuple(getattr(p, "_big", True) for p in (pa, pb)))
        if not any(bigs[-1]) and steps:
            for masses, sent, received in trace[-2]:
                assert all(-(2**127) <= m < 2**127 for m in [*masses[0], masses[1], *sent, *received])
    assert all(t == traces[0] for t in traces)
    if len(bigs) == 2 and any(abs(v) >= 2.0**63 for v in x):  # compiled: a mass of 2**127 or more is a Python int
        assert bigs[0] != (False, False)


@pytest.mark.parametrize("mod", variants("dgdrf.overlay.pushsum"))
@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 2**90), st.integers(0, 2**90)), min_size=1, max_size=6), st.integers(1, 2**90))
def test_pushsum_estimate_is_correctly_rounded_and_shares_round_trip(mod, shares, w):
    """A received share's mass (signed big-endian bytes, beyond msgpack's 64 bits) adds
    exactly, and the estimate s / w is the exact quotient rounded once."""
    h = Harness()
    ps = mod.PushSum([0.0, 0.0], 0.0, None)
    h.host("me", ps)
    total = [0, 0]
    for a, b in shares:
        h.deliver("me", PushSumShare([int_to_bytes(a), int_to_bytes(b)], int_to_bytes(w)), src="peer")
        total = [total[0] + a, total[1] + b]
    weight = w * len(shares)
    assert ps.mass() == (total, weight)
    assert ps.estimate() == [float(Fraction(x, weight)) for x in total]
    for x in (*total, weight, -weight):
        assert mod.bytes_to_int(mod.int_to_bytes(x)) == x


# -- the compiled gradients against their interpreted build, state for state --------------------
def _both(name: str) -> tuple[Any, Any] | None:
    """(compiled, source) modules of ``name``, or None where it imported as its source."""
    imported = importlib.import_module(name)
    return None if str(imported.__file__).endswith(".py") else (imported, _source(name))


#: more nodes than a node of utility -inf remembers at P = 1 (gradient.default_memory: 20)
MANY = [f"n{i}" for i in range(26)]
exchanges = st.lists(
    st.tuples(
        st.sampled_from(MANY),
        UTILITIES,
        st.integers(0, 12),
        st.lists(st.tuples(st.sampled_from(MANY + ["me"]), UTILITIES, st.integers(-1, 12)), max_size=6),
        st.sampled_from([NEG_INF, -0.5, -0.3, -0.2, 0.0]),  # the node's own utility from then on
        st.booleans(),  # as a frame (the compiled build's own reader) or a decoded message
        st.booleans(),  # a shuffle or a reply
    ),
    max_size=30,
)


def _exchanged(grads: list, own: list, steps: list, replies: bool):
    """Hand each step's exchange to every gradient of ``grads`` (hosted apart, each as
    "me"), own utility (``own[0]``) set first; after each, yield the gradients. As a
    frame, through the compiled reader, or as a decoded message; a reply only where
    ``replies`` (else every exchange is a shuffle)."""
    from dgdrf.overlay.gradient import exchange_frame
    from dgdrf.runtime.addresses import BOOK

    for src, u, s, entries, mine, as_frame, shuffle in steps:
        own[0] = mine
        shuffle = shuffle or not replies
        msg = (GradientShuffle if shuffle else GradientReply)(u, s, [list(e) for e in entries])
        for g in grads:
            if as_frame:
                g.on_frame(BOOK.id_of(src), exchange_frame(msg.TAG, u, s, {a: (x, t) for a, x, t in entries}))
            elif shuffle:
                g.on_GradientShuffle(src, msg)
            else:
                g.on_GradientReply(src, msg)
        yield grads


def _hosted(name: str, make) -> list:
    """``make(module)`` for module ``name`` compiled and its source, each hosted as "me"."""
    pair = _both(name)
    assert pair is not None
    grads = []
    for mod in pair:
        g = make(mod)
        Harness().host("me", g)
        grads.append(g)
    return grads


@pytest.mark.skipif(_both("dgdrf.overlay.gradient") is None, reason="the compiled core is not installed")
@settings(SETTINGS, max_examples=200)
@given(exchanges, st.integers(1, 5), st.sampled_from([None, 0, 2, 6]))
def test_the_compiled_stamped_gradient_keeps_the_interpreted_ones_view_and_memory(steps, P, memory):
    """The compiled Gradient (view and memory in arrays, slots with a refresh count, two
    sorted indexes) holds what the interpreted one (dictionaries, _ranked, _reselect)
    holds after every exchange: the same view in the same order, the same memory in the
    same least-recently-refreshed order, the same stale-news stamps; own utility changing
    between exchanges (-inf included: the idle selection and the idle memory bound)."""
    own = [0.0]

    def make(mod):
        return mod.Gradient(lambda: own[0], P, memory=memory)

    for a, b in _exchanged(_hosted("dgdrf.overlay.gradient", make), own, steps, replies=True):
        assert list(a.view.items()) == list(b.view.items())
        assert list(a.remembered.items()) == list(b.remembered.items())
        assert a._gone == b._gone and a._suspects == b._suspects


@pytest.mark.skipif(_both("dgdrf.overlay.toolbox_gradient") is None, reason="the compiled core is not installed")
@settings(SETTINGS, max_examples=200)
@given(exchanges, st.integers(1, 5), st.integers(1, 12))
def test_the_compiled_toolbox_gradient_keeps_the_interpreted_ones_view(steps, P, threshold):
    """The compiled ToolboxGradient (view in arrays, merged and ranked in C) holds the
    interpreted one's view, in its order, after every exchange, own utility changing."""
    own = [0.0]

    def make(mod):
        return mod.ToolboxGradient(lambda: own[0], P, old_threshold=threshold)

    for a, b in _exchanged(_hosted("dgdrf.overlay.toolbox_gradient", make), own, steps, replies=False):
        assert list(a.view.items()) == list(b.view.items())
        assert a.clock == b.clock


# -- Cyclon's typed samples (compiled only: overlay/cyclon.py's sample_numbers, published_numbers) ----
PROFILES = st.one_of(st.none(), st.floats(-1.0, 1.0), st.just(-math.inf), st.integers(-3, 3), st.booleans(), st.just("x"), st.just(np.float64(0.25)))


@pytest.mark.skipif(_both("dgdrf.overlay.cyclon") is None, reason="the compiled core is not installed")
@SETTINGS
@given(st.lists(st.lists(st.tuples(st.sampled_from(ADDRS), st.integers(0, 5), PROFILES), min_size=1, max_size=12), min_size=1, max_size=3), st.integers(1, 8), st.integers(0, 2**32))
def test_cyclons_typed_samples_are_its_descriptors_numbers(shuffles, k, seed):
    """The numbers a gradient's round takes from Cyclon typed (its sample and the view it
    publishes) are those of the profile objects the descriptors carry, after merges that
    replace entries and close the gaps: the same
    draws as sample_descriptors, ids -1 for what is not an int or a float, bools left out
    of the published view."""
    from dgdrf.overlay.messages import CyclonShuffle
    from dgdrf.runtime.addresses import BOOK

    compiled = _both("dgdrf.overlay.cyclon")[0]
    cyclon = compiled.Cyclon(view_size=8, shuffle_length=8, bootstrap=None)
    Harness().host("me", cyclon)
    for i, entries in enumerate(shuffles):  # merges that replace what they answered with (gaps closed)
        cyclon.on_CyclonShuffle(f"n{i}", CyclonShuffle([[a, age, prof] for a, age, prof in entries]))
    cyclon.rnd = random.Random(seed)
    expected = cyclon.sample_descriptors(k)
    cyclon.rnd = random.Random(seed)
    ids, values = array("q", [0]) * k, array("d", [0.0]) * k
    m = cyclon.sample_numbers(k, ids, values)
    assert m == len(expected)
    for j, (addr, prof) in enumerate(expected):
        if isinstance(prof, (int, float)):
            assert ids[j] == BOOK.id_of(addr) and values[j] == float(prof)
        else:
            assert ids[j] == -1
    n = len(cyclon.neighbours())
    ids, ages, values = array("q", [0]) * n, array("q", [0]) * n, array("d", [0.0]) * n
    m = cyclon.published_numbers(ids, ages, values)
    published = [(BOOK.id_of(a), float(p)) for a, p in cyclon.view_profiles() if isinstance(p, (int, float)) and not isinstance(p, bool)]
    assert [(ids[j], values[j]) for j in range(m)] == published
