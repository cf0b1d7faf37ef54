"""Gossip overlays (ORACLES.md example 10): Cyclon view invariants and a narrow in-degree
distribution, gradient convergence with a correct centre (eq. 3.11) and re-convergence
after a utility change, push-sum accuracy with exactly conserved mass, and 1 % loss."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, strategies as st

from harness import selection_pool
from dgdrf.model.overlay_metrics import clustering, ideal_gradient_views, indegree
from dgdrf.overlay.gradient import most_preferred
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.messages import PushSumShare
from dgdrf.overlay.pushsum import PushSum, bytes_to_int, int_to_bytes
from dgdrf.overlay_run import OverlayConfig, OverlayRun
from dgdrf.world import Churn, Crash, Partition


def test_cyclon_views_hold_no_self_no_duplicates_and_a_narrow_indegree():
    run = OverlayRun(OverlayConfig(protocol="cyclon", nodes=500, cycles=30, cyclon_view=10, cyclon_shuffle=5))
    for _ in range(30):
        run.run_cycles(1)
        for name, cyc in run.cyclon.items():
            assert name not in cyc.view
            assert len(cyc.view) <= 10
            assert len(set(cyc.view)) == len(cyc.view)
    final = run.per_cycle[-1]
    assert final["self_entries"] == 0
    assert final["view_fill"] > 9.9  # views are full
    assert final["indegree_mean"] == pytest.approx(final["view_fill"])
    assert final["indegree_std"] < 10 / 4  # std << c
    assert run.per_cycle[0]["indegree_std"] > 2 * final["indegree_std"]  # it got narrower
    assert final["clustering"] < 0.1  # random-graph-like


def test_cyclon_dead_peers_age_out():
    """Half the nodes crash at once (a Crash control, nobody told): Cyclon drops a shuffle
    partner that never answers, so the entries naming dead nodes leave the live views
    within a few tens of cycles and the views fill again with live nodes."""
    names = [f"n{i}" for i in range(300)]
    dead = tuple(names[::2])
    run = OverlayRun(OverlayConfig(protocol="cyclon", nodes=300, cycles=60, cyclon_view=8, cyclon_shuffle=4), [Crash(at=20.5, addresses=dead)])
    run.run()
    by_cycle = {c["cycle"]: c for c in run.per_cycle}
    assert "dead_entries" not in by_cycle[20] and by_cycle[21]["dead_entries"] > 300  # about half of 150 x 8
    assert by_cycle[60]["dead_entries"] == 0
    live = [c for n, c in run.cyclon.items() if n not in dead]
    assert all(a not in dead for c in live for a in c.view)
    assert by_cycle[60]["view_fill"] > 7.9 and by_cycle[60]["self_entries"] == 0
    assert by_cycle[60]["indegree_mean"] == pytest.approx(by_cycle[60]["view_fill"])  # in-degree over the 150 that remain


@pytest.mark.parametrize("gradient", ["stamped", "toolbox"])
def test_the_gradient_finds_its_centre_again_after_its_top_nodes_crash(gradient):
    """The top third of utilities crash, nobody told (no MemberDown, unlike an allocation
    run): the views re-form over the nodes that remain, and one correct centre (eq. 3.11)
    emerges again, though slowly: the dead nodes' descriptors must leave every view and
    memory first (seed 1: centre lost from cycle 21, steady again by cycle 80 to 110)."""
    config = OverlayConfig(protocol="gradient", gradient=gradient, nodes=150, cycles=120, neighbors=4)
    utilities = OverlayRun(config).utilities
    top = tuple(sorted(utilities, key=utilities.__getitem__)[-50:])
    run = OverlayRun(config, [Crash(at=20.5, addresses=top)])
    run.run()
    by_cycle = {c["cycle"]: c for c in run.per_cycle}
    assert by_cycle[20]["centre_correct"] and not by_cycle[30]["centre_correct"]
    assert all(by_cycle[c]["centre_correct"] and by_cycle[c]["centres"] == 1 for c in range(111, 121))
    assert by_cycle[120]["converged_fraction"] > 0.95


def test_an_overlay_cut_in_two_heals_and_counts_what_it_lost():
    config = OverlayConfig(protocol="cyclon", nodes=300, cycles=40)
    half = tuple(f"n{i}" for i in range(150))
    result = OverlayRun(config, [Partition(5.0, 15.0, (half,))]).run()
    assert result.messages["partitioned"] > 0
    assert result.final["self_entries"] == 0 and result.final["view_fill"] > 9.9 and result.final["indegree_std"] < 2.5


@pytest.mark.parametrize("protocol", ["cyclon", "gradient", "pushsum"])
def test_controls_that_touch_nothing_change_no_overlay_result(protocol):
    config = OverlayConfig(protocol=protocol, nodes=100, cycles=10)
    plain = OverlayRun(config).run().to_dict()
    for controls in ([Partition(2.0, 4.0, ())], [Crash(at=50.0, addresses=("n3",))], [Churn(every=1.0, departures=0)]):
        assert strip_wall(OverlayRun(config, controls).run().to_dict()) == strip_wall(plain)


def test_an_overlay_control_naming_the_bootstrap_or_nobody_is_refused():
    config = OverlayConfig(protocol="cyclon", nodes=20, cycles=2)
    with pytest.raises(ValueError, match="'bootstrap' is not an overlay node"):
        OverlayRun(config, [Crash(at=1.0, addresses=("bootstrap",))])
    with pytest.raises(ValueError, match="no actor 'n20'"):
        OverlayRun(config, [Churn(every=1.0, departures=1, among=("n20",))])


class EveryView:
    """A cycle observer that only reads: the views' sizes each cycle."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def cycle_ended(self, run, cycle, row) -> None:
        self.sizes.append(sum(len(c.view) for c in run.cyclon.values()))


def test_a_cycle_observer_adds_its_figures_and_changes_nothing_else():
    config = OverlayConfig(protocol="cyclon", nodes=200, cycles=12, metrics_every=3)
    plain = OverlayRun(config).run()
    sizes = EveryView()
    run = OverlayRun(config, observers=[sizes, DegreeOfFirst()])
    seen = run.run()
    assert [{k: v for k, v in row.items() if k != "in_degree_of_n0"} for row in seen.per_cycle] == plain.per_cycle
    assert [row["cycle"] for row in seen.per_cycle] == [3, 6, 9, 12] and len(sizes.sizes) == 4
    assert sizes.sizes[-1] == round(plain.per_cycle[-1]["view_fill"] * 200)
    assert seen.per_cycle[-1]["in_degree_of_n0"] == sum(1 for c in run.cyclon.values() if "n0" in c.view) > 0


class DegreeOfFirst:
    """A metric of one's own, in one place: how many views hold node n0."""

    def cycle_ended(self, run, cycle, row) -> None:
        row["in_degree_of_n0"] = sum(1 for c in run.cyclon.values() if "n0" in c.view)


def strip_wall(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("wall_s", "start_wall_s", "metrics_wall_s", "node_cycles_per_s", "messages_per_s")}


def test_bootstrap_hands_out_earlier_nodes():
    run = OverlayRun(OverlayConfig(protocol="cyclon", nodes=50, cycles=1))
    run.clock.run(until=0.05)  # joins answered, no shuffle yet for most
    known = run.transport.actors["bootstrap"].known
    assert sorted(known) == sorted(run.names)
    first = known[0]  # the first to join is offered to everyone after it (up to c peers each)
    views = [c.view for n, c in run.cyclon.items() if n != first]
    assert sum(1 for v in views if first in v) > 10


def test_preference_function_eq_3_9():
    inf = float("inf")
    utilities = [0.1, 0.9, 0.6, 0.45, 0.5, -inf]
    candidates = [(u, 0, f"u{u}") for u in utilities]
    ranked = most_preferred(0.5, candidates, len(candidates))
    assert ranked == ["u0.5", "u0.6", "u0.9", "u0.45", "u0.1", "u-inf"]
    assert most_preferred(0.5, candidates, 2) == ["u0.5", "u0.6"]
    # a node without users (-inf) counts every other such node as below it: it prefers
    # the nodes with users, and relays them (DGDRF's wrong centres at start otherwise)
    assert most_preferred(-inf, [(-inf, 2, "b"), (0.3, 0, "c"), (-inf, 1, "a")], 3) == ["c", "a", "b"]
    assert most_preferred(-inf, [(0.4, 0, "d"), (0.3, 0, "c"), (-inf, 1, "a")], 2) == ["c", "d"]
    # ... all of them equally: infinitely far above, so by tie-break alone, not the lowest
    # first (every node without users then held the same lowest few, see below)
    assert most_preferred(-inf, [(0.4, 0, "d"), (0.3, 5, "c"), (-0.9, 1, "e"), (-inf, 1, "a")], 2) == ["d", "e"]


@pytest.mark.parametrize("kind", ["stamped", "toolbox"])
def test_a_node_without_users_holds_nodes_with_users_by_tie_break_not_by_utility(kind):
    """Both gradients, as a server without users (utility -inf) sees eq. 3.9: every node
    with users is infinitely far above it, so which it holds does not depend on their
    utilities; the same candidates with other utilities give the same view."""
    from dgdrf.overlay.gradient import Gradient

    inf = float("inf")
    views = []
    for scale in (1.0, -1.0):  # the utility order reversed
        g = _bare(Gradient, -inf, view_size=3) if kind == "stamped" else _bare_toolbox(-inf, P=3)
        entries = [[f"s{i}", scale * i / 100 - 0.5, 5] for i in range(12)] + [[f"idle{i}", -inf, 5] for i in range(6)]
        if kind == "stamped":
            g._merge("s99", -0.3, 5, entries)
        else:
            g._merge([tuple(e[:2]) + (0,) for e in entries])
        views.append(sorted(g.view))
    assert views[0] == views[1]
    assert all(a.startswith("s") for a in views[0]) and len(views[0]) == 3


@pytest.mark.parametrize("memory", [None, 0], ids=["remembering", "toolbox"])
def test_gradient_converges_to_a_correct_centre(memory):
    run = OverlayRun(OverlayConfig(protocol="gradient", nodes=300, cycles=60, neighbors=4, gradient_memory=memory))
    run.run_cycles(40)
    ok, centres = run.centre_state()
    assert ok and centres == 1
    top = max(run.utilities, key=run.utilities.get)
    g = run.gradient[top]
    assert g.is_centre()
    assert set(g.view) == ideal_gradient_views(run.utilities, 4)[top]  # exactly the P next-highest
    verdicts = []
    g.validate_centre(verdicts.append)
    run.clock.run(until=run.clock.now() + 0.5)
    assert verdicts == [True]
    assert run.per_cycle[-1]["converged_fraction"] > run.per_cycle[5]["converged_fraction"]
    if memory == 0:  # the toolbox gradient keeps nothing beyond its view
        assert all(not gr.remembered for gr in run.gradient.values())


def test_gradient_reconverges_after_the_top_utility_drops():
    run = OverlayRun(OverlayConfig(protocol="gradient", nodes=300, cycles=200, neighbors=4))
    run.run_cycles(40)
    assert run.centre_state()[0]
    for round_ in range(5):  # as after an allocation: the top node falls to the bottom
        top = max(run.utilities, key=run.utilities.get)
        run.utilities[top] = min(run.utilities.values()) - 1.0
        new_top = max(run.utilities, key=run.utilities.get)
        for waited in range(1, 31):
            run.run_cycles(1)
            if run.centre_state()[0]:
                break
        assert run.centre_state()[0], f"no correct centre {waited} periods after drop {round_}"
        verdicts = []
        run.gradient[new_top].validate_centre(verdicts.append)
        run.clock.run(until=run.clock.now() + 0.5)
        assert verdicts == [True]


def test_toolbox_gradient_loses_the_centre_more_often_after_drops():
    """Why DGDRF's gradient remembers recently heard nodes (overlay/gradient.py): without
    that memory, relayed stale utilities keep a fallen node in views and the correct
    centre takes longer to form after each drop."""
    waits = {}
    for memory in (None, 0):
        run = OverlayRun(OverlayConfig(protocol="gradient", nodes=200, cycles=400, neighbors=2, gradient_memory=memory, seed=3))
        run.run_cycles(40)
        total = 0
        for _ in range(8):
            top = max(run.utilities, key=run.utilities.get)
            run.utilities[top] = min(run.utilities.values()) - 1.0
            for waited in range(1, 21):
                run.run_cycles(1)
                if run.centre_state()[0]:
                    break
            total += waited
        waits[memory] = total
    assert waits[None] < waits[0]


def test_validation_rejects_a_node_that_only_believes_it_is_the_centre():
    run = OverlayRun(OverlayConfig(protocol="gradient", nodes=200, cycles=40, neighbors=4))
    run.run_cycles(30)
    order = sorted(run.utilities, key=run.utilities.get)
    impostor = run.gradient[order[len(order) // 2]]
    # make it believe it is the top: its neighbours' known utilities all lower than its own
    impostor.view = {a: (-1.0, 10**9) for a in impostor.view}
    assert impostor.is_centre()
    verdicts = []
    impostor.validate_centre(verdicts.append)
    run.clock.run(until=run.clock.now() + 0.01)
    assert verdicts == [False]


def test_pushsum_sum_within_1e6_in_60_rounds_with_exact_mass():
    run = OverlayRun(OverlayConfig(protocol="pushsum", nodes=1000, cycles=60))
    run.run()
    assert all(c["mass_exact"] for c in run.per_cycle)  # at every round
    errors = [c["max_relative_error"] for c in run.per_cycle]
    assert errors[-1] <= 1e-6
    first_ok = next(i for i, e in enumerate(errors, 1) if e <= 1e-6)
    assert first_ok <= 60
    assert max(p.rounds for p in run.pushsum.values()) <= 60


def test_pushsum_fixed_point_wire_format_round_trips():
    for x in (0, 1, -1, 2**64, -(2**100) + 7, 123456789 * 2**64 + 5):
        assert bytes_to_int(int_to_bytes(x)) == x


def test_a_pushsum_share_with_a_bad_component_changes_no_mass():
    """A frame from the network whose second component is not bytes is rejected before
    any of its mass is added: the node's mass and counters stay as they were."""
    ps = PushSum([1.0, 2.0], 1.0, Cyclon())
    before = (ps.mass(), list(ps.received_mass))
    with pytest.raises(TypeError):
        ps.on_PushSumShare("n1", PushSumShare([int_to_bytes(5), 7], int_to_bytes(3)))
    assert (ps.mass(), list(ps.received_mass)) == before
    ps.on_PushSumShare("n1", PushSumShare([int_to_bytes(5), int_to_bytes(6)], int_to_bytes(3)))
    assert ps.mass() == ([before[0][0][0] + 5, before[0][0][1] + 6], before[0][1] + 3)


@pytest.mark.parametrize("protocol", ["cyclon", "gradient", "pushsum"])
def test_one_percent_loss_does_not_break_the_protocols(protocol):
    run = OverlayRun(OverlayConfig(protocol=protocol, nodes=300, cycles=60, loss=0.01))
    run.run()
    final = run.per_cycle[-1]
    assert run.transport.stats.dropped > 0
    if protocol == "cyclon":
        assert final["self_entries"] == 0 and final["indegree_std"] < 2.5 and final["view_fill"] > 9
    elif protocol == "gradient":
        assert final["centre_correct"]
    else:
        # lost halves take mass with them: the error is reported, not asserted small
        assert final["weight_at_nodes"] < 1.0
        assert final["nodes_without_estimate"] == 0 and 0 < final["max_relative_error"] < float("inf")
        assert final["mass_exact"]  # the accounting identity still holds (loss counts as in flight)


def test_overlay_run_is_deterministic():
    a = OverlayRun(OverlayConfig(protocol="gradient", nodes=100, cycles=10)).run().per_cycle
    b = OverlayRun(OverlayConfig(protocol="gradient", nodes=100, cycles=10)).run().per_cycle
    assert a == b


@pytest.mark.parametrize("protocol", ["cyclon", "pushsum", "gradient"])
def test_the_nodes_start_on_their_own_timer_and_in_the_order_of_one_run(protocol):
    """wall_s leaves out the nodes' start at time 0 (start_wall_s), as PeerSim's anchor
    leaves out its initializers; running time 0 first changes no result."""
    config = OverlayConfig(protocol=protocol, nodes=60, cycles=4)
    split = OverlayRun(config).run().to_dict()
    whole = OverlayRun(config)
    whole._started = True  # no separate start: the clock runs from time 0 with the first cycle
    assert strip_wall(whole.run().to_dict()) == strip_wall(split)
    assert split["start_wall_s"] > 0 and whole.start_wall_s == 0.0


def test_graph_metrics():
    views = {"a": ["b", "c"], "b": ["c"], "c": ["a"], "d": []}
    assert indegree(views, ["a", "b", "c", "d"]).tolist() == [1, 1, 2, 0]
    assert clustering(views, ["a"]) == 1.0  # a's neighbours b, c are linked
    assert ideal_gradient_views({"x": 1.0, "y": 2.0, "z": 3.0}, 1) == {"x": {"y"}, "y": {"z"}, "z": {"y"}}


def test_pushsum_average_mode_and_vector_values():
    """Weight 1 everywhere: every node's estimate tends to the average (thesis 2.3.1)."""
    from dgdrf.nodes.bootstrap import Bootstrap
    from dgdrf.overlay.cyclon import Cyclon
    from dgdrf.overlay.pushsum import PushSum
    from dgdrf.overlay_run import OverlayNode
    from dgdrf.runtime.clock import VirtualClock
    from dgdrf.runtime.transport import LocalTransport

    clock = VirtualClock()
    transport = LocalTransport(clock, np.random.default_rng(4))
    transport.register(Bootstrap())
    values = {f"n{i}": [float(i), 2.0 * i, 1.0] for i in range(200)}
    roles = {}
    for name, value in values.items():
        node = OverlayNode(name)
        cyc = node.add_role(Cyclon(8, 4))
        roles[name] = node.add_role(PushSum(value, 1.0, cyc))
        transport.register(node)
    transport.start_all()
    clock.run(until=50.0)
    truth = np.mean(list(values.values()), axis=0)
    for r in roles.values():
        assert np.allclose(r.estimate(), truth, rtol=1e-6)


# -- the Kompics toolbox's gradient (overlay/toolbox_gradient.py) ------------------------------
def _bare(kind: type, own: float, **options):
    """A gradient of ``kind`` outside any runtime, to check its merge rule alone."""
    import zlib

    g = kind(lambda: own, **options)
    g.me = "me"
    g._salt_crc = zlib.crc32(b"me")
    return g


def _bare_toolbox(own: float, P: int = 2, old_threshold: int = 100):
    from dgdrf.overlay.toolbox_gradient import ToolboxGradient

    return _bare(ToolboxGradient, own, view_size=P, old_threshold=old_threshold)


def test_toolbox_merge_keeps_the_younger_descriptor_and_the_p_most_preferred():
    g = _bare_toolbox(own=0.5, P=2)
    g.clock = 10
    g._merge([("a", 0.6, 3), ("b", 0.4, 1), ("me", 0.9, 0)])  # itself is never in the view
    assert g.view == {"a": (0.6, 7), "b": (0.4, 9)}
    g._merge([("a", 0.1, 5)])  # older news of a: ignored
    assert g.view["a"] == (0.6, 7)
    g._merge([("a", 0.3, 2)])  # younger news: replaces, and a is now below b
    assert g.view["a"] == (0.3, 8)
    g._merge([("c", 0.7, 0)])  # eq. 3.9: above before below, closest first -> c, then b
    assert set(g.view) == {"c", "b"}


def test_toolbox_merge_drops_the_oldest_entry_once_past_the_threshold():
    g = _bare_toolbox(own=0.5, P=4, old_threshold=20)
    g.clock = 100
    g._merge([("a", 0.6, 25), ("b", 0.7, 21), ("c", 0.8, 3)])  # a is oldest and too old
    assert set(g.view) == {"b", "c"}  # one removal per merge
    g._merge([])
    assert set(g.view) == {"c"}


def test_toolbox_gradient_converges_publishes_once_a_period_and_validates():
    run = OverlayRun(OverlayConfig(protocol="gradient", gradient="toolbox", nodes=300, cycles=60, neighbors=4))
    run.run_cycles(40)
    top = max(run.utilities, key=run.utilities.get)
    g = run.gradient[top]
    assert set(g.view) == ideal_gradient_views(run.utilities, 4)[top]
    assert g.is_centre()
    assert g.sample is not g.view and set(g.sample) == set(g.view)  # a copy, taken at the period's start
    verdicts = []
    g.validate_centre(verdicts.append)
    run.clock.run(until=run.clock.now() + 0.5)
    assert verdicts == [True]
    assert all(len(x.view) <= 4 for x in run.gradient.values())


# -- the stamped gradient's memory (overlay/gradient.py) ---------------------------------------
def test_stamped_memory_is_not_spent_on_nodes_outside_the_gradient():
    """How DGDRF erred on thesis-200x40 at P = 2 before: servers without users (utility
    -inf, eq. 4.2; 160 of 200 there) filled the memory, a higher node r was forgotten, and
    once the nodes between us and r fell below us we took ourselves for the centre."""
    inf = float("inf")
    from dgdrf.overlay.gradient import Gradient

    g = _bare(Gradient, -0.5, view_size=2, memory=3)
    g._merge("r", -0.1, 5, [])
    g._merge("a", -0.3, 5, [["b", -0.4, 5]])
    assert set(g.view) == {"a", "b"}  # the closest above (eq. 3.9); r only remembered
    for i in range(10):  # gossip from servers without users
        g._merge(f"idle{i}", -inf, 1, [[f"idle{i}-peer", -inf, 1]])
    assert set(g.remembered) == {"r", "a", "b"}
    g._merge("a", -0.6, 6, [["b", -0.7, 6]])  # a and b allocated and fell below us
    assert "r" in g.view and not g.is_centre()
    g._merge("r", -inf, 6, [])  # r lost its users: it leaves the memory, not just the view
    assert "r" not in g.remembered
    assert g.is_centre()


def test_stamped_gradient_does_not_take_back_a_node_from_news_older_than_its_minus_inf():
    """The stall of dgdrf on thesis-100x20 (P = 6, seed 3: 8,436 allocations, then nothing
    for 120 s although u2's task still fit): servers whose users' tasks fit nowhere any more
    went to utility -inf (eq. 4.2), but nodes that had not heard kept relaying their last
    finite descriptors, and a node that had dropped them took them back from that older
    news. Every server with users then saw such a phantom above itself, none claimed the
    centre (eq. 3.11), and nothing was allocated again. Here: r said -inf at stamp 7, and a
    neighbour then relays r's stamp-5 descriptor."""
    inf = float("inf")
    from dgdrf.overlay.gradient import Gradient

    g = _bare(Gradient, -0.5, view_size=2)
    g._merge("r", -0.1, 5, [])
    g._merge("a", -0.6, 5, [["b", -0.7, 5]])
    assert "r" in g.view and not g.is_centre()
    g._merge("r", -inf, 7, [])  # r's users are stuck: it leaves the gradient
    assert g.is_centre()
    g._merge("a", -0.6, 6, [["r", -0.1, 5], ["b", -0.7, 6]])  # a still relays r's old news
    assert "r" not in g.remembered and g.view.get("r", (-inf, 0))[0] == -inf
    assert g.is_centre()
    g._merge("b", -0.7, 7, [["r", -0.2, 9]])  # newer news: r has a user that fits again
    assert g.view["r"] == (-0.2, 9) and not g.is_centre()


def test_by_default_a_node_with_users_remembers_every_node_with_users_and_one_without_a_few():
    from dgdrf.overlay.gradient import Gradient, default_memory

    inf = float("inf")
    busy, idle = _bare(Gradient, -0.5, view_size=2), _bare(Gradient, -inf, view_size=2)
    for i in range(100):  # 100 servers with users heard of, among 100 without
        for g in (busy, idle):
            g._merge(f"s{i}", -i / 100, 1, [[f"idle{i}", -inf, 1]])
    assert len(busy.remembered) == 100 and not any(a.startswith("idle") for a in busy.remembered)
    assert len(idle.remembered) == default_memory(2) == 24
    assert set(idle.remembered) == {f"s{i}" for i in range(76, 100)}  # the most recently heard


def test_reused_selection_is_the_full_selection(monkeypatch):
    """``Gradient._reselect`` (the interpreted build's; the compiled one's is
    ``_reselect_arrays``, on the same conditions) skips ranking the pool again when
    nothing in it can change the chosen view. Every reuse is checked here against a full
    selection of the same pool, over a whole dgdrf run (views, their order and the
    descriptors kept), and the run's result must be the one with reuse switched off, and
    the compiled build's (which reuses by its own rules)."""
    import dgdrf.policies.distributed as distributed
    from dgdrf.emulation import RunConfig, run_emulation
    from dgdrf.model.generators import google_2011_scenario
    from harness import interpreted

    Gradient = interpreted("dgdrf.overlay.gradient").Gradient

    scenario = google_2011_scenario(20, 6, 3)
    checked = []

    class Checked(Gradient):
        def _reselect(self, extra, own, worst):
            view = Gradient._reselect(self, extra, own, worst)
            if view is not None:
                saved_view, saved_last = self.view, self._last_selection
                self._last_selection = None
                Gradient._select(self, dict(extra), own)  # the same pool, fully ranked
                full = self.view
                self.view, self._last_selection = saved_view, saved_last
                assert list(full.items()) == list(view.items())
                checked.append(1)
            return view

    class NoReuse(Gradient):
        def _reselect(self, extra, own, worst):
            return None

    def run():
        r = run_emulation(scenario, RunConfig(policy="dgdrf", neighbors=3, seed=2, gradient="stamped")).to_dict()
        r.pop("wall_s")
        return r

    as_built = run()
    monkeypatch.setattr(distributed, "Gradient", Checked)
    with_reuse = run()
    assert len(checked) > 1000  # the reuse path was taken, and each time it was right
    assert with_reuse == as_built
    monkeypatch.setattr(distributed, "Gradient", NoReuse)
    assert run() == with_reuse


@given(st.integers(0, 2**32), st.lists(st.integers(), min_size=1, max_size=300))
def test_gradient_choice_is_random_choice(seed, seq):
    """overlay/gradient.choice (compiled with the gradient) draws what Random.choice
    (interpreted) draws, and leaves the generator in the same state."""
    from dgdrf.overlay.gradient import choice

    a, b = random.Random(seed), random.Random(seed)
    for _ in range(3):
        assert choice(a, seq) == b.choice(seq)
    assert a.random() == b.random()


@given(st.lists(st.tuples(st.sampled_from([-math.inf, -0.5, -0.25, -0.1]), st.integers(1, 50)), min_size=1, max_size=40), st.integers(1, 6), st.integers(0, 1))
def test_an_idle_nodes_selection_is_the_first_p_in_idle_order(entries, P, bounded):
    """Gradient._select_idle (memory kept by tie-break, only P of it ranked) chooses
    the P first of the whole pool in idle_order, as sorting the pool would."""
    from dgdrf.overlay.gradient import Gradient, idle_order

    g = Gradient(lambda: -math.inf, P, memory=8 if bounded else None)
    g.me, g._salt_crc = "me", 7
    heard = {}
    for i, (u, s) in enumerate(entries):
        g._merge(f"n{i % 17}", u, s + i, [])  # remembered (finite) or gone (-inf)
        heard[f"m{i % 5}"] = (u, s)
    pool = selection_pool(g, heard)  # what _select ranks: memory, then view and heard if fresher
    g._select(dict(heard), -math.inf)
    expected = sorted(idle_order(d[0], g.tiebreak_of(a), a) for a, d in pool.items())[:P]
    if len(pool) <= P:  # everything is taken, in the pool's order (no ranking needed)
        assert set(g.view) == set(pool)
    else:
        assert list(g.view) == [a for _, _, a in expected]


# -- dgdrf overlay's options: the overlays' and the transport's declarations ----------------------
def test_dgdrf_overlay_takes_the_overlay_and_transport_options_from_their_one_declaration():
    """Each option of OverlayOptions and TransportOptions is either an option of the
    overlay run, declared as there (only its flag's spelling, its default's words and the
    stamped default of --gradient are the overlay command's own), or left out for a reason
    OverlayConfig's docstring gives."""
    from dataclasses import replace

    from dgdrf.options import declared
    from dgdrf.overlay.options import OverlayOptions
    from dgdrf.overlay_run import LEFT_OUT
    from dgdrf.runtime.options import TransportOptions

    ours = {d.name: d for d in declared(OverlayConfig)}
    for d in declared(OverlayOptions, TransportOptions):
        assert (d.name in ours) != (d.name in LEFT_OUT), d.name
        if d.name in ours:
            mine = ours[d.name].option
            assert replace(mine, cli=d.option.cli, none_means=d.option.none_means, nullable=d.option.nullable, label=d.option.label) == d.option
            assert ours[d.name].default == d.default or d.name == "gradient"
    assert OverlayConfig().gradient == "stamped"


def test_every_flag_dgdrf_overlay_had_keeps_its_meaning_and_default():
    from dgdrf.cli import build_parser
    from dgdrf.options import declared, given
    from dgdrf.overlay.toolbox_gradient import DEFAULT_OLD_THRESHOLD

    def config(*words: str) -> OverlayConfig:
        return OverlayConfig(**given(build_parser().parse_args(["overlay", *words]), declared(OverlayConfig)))

    assert config() == OverlayConfig(
        protocol="cyclon", nodes=1000, cycles=30, cyclon_view=10, cyclon_shuffle=5, neighbors=4, gradient_memory=None, gradient="stamped",
        gradient_old_threshold=DEFAULT_OLD_THRESHOLD, seed=1, latency_ms=(1.0, 5.0), loss=0.0, duplicate=0.0, metrics_every=1,
    )
    words = ["--protocol", "gradient", "--nodes", "50", "--cycles", "7", "--view-size", "12", "--shuffle-length", "6", "--neighbors", "3",
             "--gradient-memory", "9", "--gradient", "toolbox", "--seed", "4", "--latency-ms", "2,3", "--loss", "0.25", "--metrics-every", "2"]
    assert config(*words) == OverlayConfig(
        protocol="gradient", nodes=50, cycles=7, cyclon_view=12, cyclon_shuffle=6, neighbors=3, gradient_memory=9, gradient="toolbox", seed=4,
        latency_ms=(2.0, 3.0), loss=0.25, metrics_every=2,
    )


def test_dgdrf_overlay_sets_the_toolbox_gradients_old_threshold(monkeypatch):
    import dgdrf.overlay_run as overlay_run
    from dgdrf.cli import main
    from dgdrf.overlay.toolbox_gradient import ToolboxGradient

    runs = []

    def run_overlay(config, controls=(), observers=()):
        runs.append(OverlayRun(config, controls, observers))
        return runs[-1].run()

    monkeypatch.setattr(overlay_run, "run_overlay", run_overlay)
    flags = ["overlay", "--protocol", "gradient", "--gradient", "toolbox", "--nodes", "40", "--cycles", "6", "--quiet"]
    assert main([*flags, "--gradient-old-threshold", "2"]) == 0
    assert main(flags) == 0
    short, default = runs
    assert all(isinstance(g, ToolboxGradient) and g.old_threshold == 2 for g in short.gradient.values())
    assert all(g.old_threshold == 100 for g in default.gradient.values())
    assert short.per_cycle != default.per_cycle  # and it acts: entries leave the views sooner


@pytest.mark.parametrize("value", ["0", "2.5"])
def test_a_bad_gradient_old_threshold_is_refused_naming_the_flag(value, capsys):
    from dgdrf.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["overlay", "--gradient", "toolbox", "--gradient-old-threshold", value])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"dgdrf: error: overlay: argument --gradient-old-threshold: must be an integer >= 1, got '{value}' (see dgdrf overlay --help)"


def test_duplication_reaches_an_overlay_run_and_its_result_says_so():
    plain = OverlayRun(OverlayConfig(protocol="cyclon", nodes=100, cycles=5)).run()
    doubled = OverlayRun(OverlayConfig(protocol="cyclon", nodes=100, cycles=5, duplicate=0.1)).run()
    assert "duplicate" not in plain.config and "duplicated" not in plain.messages
    assert doubled.config["duplicate"] == 0.1 and doubled.messages["duplicated"] > 0
    assert doubled.final["self_entries"] == 0
