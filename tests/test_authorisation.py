"""What network mode authorises, checked against what the emulation really sends.

Network mode rejects a message whose sender's role its type does not name, and a frame
whose fields break their declarations (runtime/messages.py). These declarations must let
every message the policies send through, or a real cluster would reject its own
traffic: every policy runs here in emulation, with loss and duplicates so the repeat
paths run too, and every send is checked as a network node would check it.
"""

from __future__ import annotations

import math

import pytest

from dgdrf.emulation import BOOTSTRAP, GATEWAY, Observer, RunConfig, run_emulation
from dgdrf.errors import DecodeError
from dgdrf.model.generators import google_2011_scenario
from dgdrf.nodes.collector import REPORT_KINDS
from dgdrf.nodes.protocol import MemberDown, TaskRequest
from dgdrf.overlay.messages import CyclonShuffle, GradientShuffle
from dgdrf.policies import POLICIES
from dgdrf.runtime import roles
from dgdrf.runtime.messages import decode_checked, encode, message_types
from dgdrf.runtime.reporting import Report

import dgdrf.overlay.messages  # noqa: F401  (registers every type)
import dgdrf.policies.messages  # noqa: F401


def test_every_protocol_message_names_its_senders():
    for tag, cls in message_types().items():
        if tag < 200:  # tests and benchmarks register theirs above
            assert cls.SENDERS, f"{cls.__name__} does not say who may send it"
            assert cls.SENDERS <= set(roles.MEMBER_ROLES)


def test_every_protocol_message_declares_its_cost_group():
    """Costs per tick are summed by the group each type declares (``@message(cost=)``):
    the thesis's cost model counts DDRF's share messages and the gradient's exchanges."""
    group = {cls.__name__: cls.COST_GROUP for tag, cls in message_types().items() if tag < 200}
    assert {group[n] for n in ("ShareRequest", "ShareReply", "LoadRequest", "LoadReply")} == {"neighbour_state"}
    assert {group[n] for n in ("GradientShuffle", "GradientReply", "CentreCheck", "CentreAck")} == {"gradient"}
    assert {group[n] for n in ("CyclonShuffle", "CyclonReply", "Join", "Peers")} == {"peer_sampling"}
    assert group["PushSumShare"] == "aggregation" and group["TaskRequest"] == "allocation" and group["Report"] == "other"
    with pytest.raises(ValueError, match="cost group"):
        from dgdrf.runtime.messages import message

        message(229, cost="misc")


def _checked_run(policy: str, **kw) -> tuple[list[str], set[str]]:
    scenario = google_2011_scenario(12, 4, 2)
    role_of = {s.id: roles.SERVER for s in scenario.servers} | {u.id: roles.USER for u in scenario.users}
    role_of |= {GATEWAY: roles.GATEWAY, BOOTSTRAP: roles.BOOTSTRAP}
    problems: list[str] = []
    kinds: set[str] = set()

    class WireCheck(Observer):
        """Checks every message and report as network mode would, before the clock runs."""

        def started(self, world):
            for actor in world.transport.actors.values():
                wrap(actor)

    def wrap(actor):
        send = actor._tsend

        def checked(src, dst, msg, send=send):
            allowed = type(msg).SENDERS
            if role_of[src] not in allowed:
                problems.append(f"{role_of[src]} {src} sent {type(msg).__name__}, allowed only from {sorted(allowed)}")
            try:
                decode_checked(encode(msg))
            except DecodeError as exc:
                problems.append(f"{src} -> {dst}: {exc}")
            send(src, dst, msg)

        actor._tsend = checked
        report = actor.ctx.reporter

        def reported(kind, source, time, fields, report=report):
            kinds.add(kind)
            try:
                decode_checked(encode(Report(kind, time, fields)))
            except DecodeError as exc:
                problems.append(f"report {kind} of {source}: {exc}")
            report(kind, source, time, fields)

        actor.ctx.reporter = reported

    result = run_emulation(scenario, RunConfig(policy=policy, tick=0.05, warmup=2.0, max_time=400.0, **kw), observers=[WireCheck()])
    assert result.stop_reason in ("saturated", "stranded"), result.stop_reason
    return problems, kinds


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_every_message_a_policy_sends_passes_the_network_checks(policy):
    problems, kinds = _checked_run(policy, loss=0.02, duplicate=0.02, seed=3)
    assert problems == []
    assert kinds <= REPORT_KINDS, f"report kinds the collector does not know: {kinds - REPORT_KINDS}"


def test_push_sum_capacity_messages_pass_the_network_checks():
    problems, _ = _checked_run("pdgdrf", capacity_knowledge="pushsum")
    assert problems == []


@pytest.mark.parametrize(
    "msg, field",
    [
        (TaskRequest("u1", 1, [-1.0, 0.5], 0.1), "demand"),
        (TaskRequest("u1", 1, [math.nan, 0.5], 0.1), "demand"),
        (TaskRequest("u1", 1, [math.inf, 0.5], 0.1), "demand"),
        (TaskRequest("u1", -3, [1.0, 0.5], 0.1), "task_id"),
        (TaskRequest("", 1, [1.0, 0.5], 0.1), "user"),
        (TaskRequest("u1", 1, [1.0] * 65, 0.1), "demand"),
        (TaskRequest("u1", 1, [1.0, 0.5], -0.1), "dominant_share"),
        (TaskRequest("u1", True, [1.0, 0.5], 0.1), "task_id"),
        (MemberDown(["s1", 7]), "addresses"),  # type: ignore[list-item]  # deliberately malformed
        (CyclonShuffle([["s1", 0, None]] * 1025), "entries"),
        (GradientShuffle(math.nan, 1, []), "utility"),
        (Report("allocated", 1.0, {"k" * 300: 1}), "fields"),
    ],
)
def test_a_field_that_breaks_its_declaration_is_named(msg, field):
    with pytest.raises(DecodeError, match=rf"{type(msg).__name__}\.{field} "):
        decode_checked(encode(msg))


def test_declared_ranges_let_legitimate_values_through():
    assert decode_checked(encode(GradientShuffle(-math.inf, -1, [["s1", -0.5, 3]]))).utility == -math.inf
    assert decode_checked(encode(TaskRequest("u1", 0, [0.0, 2.5], 0.0))).demand == [0.0, 2.5]


def test_an_oversized_frame_is_refused_before_it_is_decoded():
    big = encode(Report("allocated", 1.0, {"x": "a" * 200})) + b"\x00" * (1 << 20)
    with pytest.raises(DecodeError, match="over"):
        decode_checked(big)


def test_forged_reports_cannot_grow_the_collectors_bookkeeping():
    from dgdrf.nodes.collector import MAX_OPEN_TASKS_PER_USER, Collector

    scenario = google_2011_scenario(4, 2, 1)
    collector = Collector(scenario)
    user = scenario.users[0].id
    for i in range(10_000):
        collector("submitted", user, 1.0, {"task_id": i})
        collector("accepted", user, 1.0, {"task_id": i, "server": scenario.servers[0].id})
    assert len(collector.submitted_at) == MAX_OPEN_TASKS_PER_USER and len(collector.accepted) == MAX_OPEN_TASKS_PER_USER
    assert collector.counters["bookkeeping_overflow"] == 2 * (10_000 - MAX_OPEN_TASKS_PER_USER)
    # a task allocated frees its place
    collector("allocated", scenario.servers[0].id, 2.0, {"user": user, "task_id": 0, "demand": list(scenario.users[0].demand)})
    collector("submitted", user, 3.0, {"task_id": 10_001})
    assert (user, 10_001) in collector.submitted_at
