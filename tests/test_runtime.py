"""The actor runtime: codec, virtual clock, timers, local transport and its hooks."""

from __future__ import annotations

import gc
import weakref

import msgpack
import numpy as np
import pytest

from dgdrf.bench.runtime import run_runtime_bench
from dgdrf.errors import ConfigError, DecodeError
from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay_run import OverlayConfig, OverlayRun
from dgdrf.nodes.protocol import Allocate, ServerReply, TaskRequest
from dgdrf.runtime.actor import Actor, Role
from dgdrf.runtime.clock import Event, VirtualClock
from dgdrf.runtime.frozen import objects_frozen
from dgdrf.runtime.messages import decode, encode, message, message_types
from dgdrf.runtime.transport import LocalTransport


@message(240)
class Note:
    """A test message."""

    n: int
    text: str


def test_codec_round_trips_every_registered_type():
    samples = {
        TaskRequest: TaskRequest("u1", 3, [0.5, 0.25], 0.125),
        Allocate: Allocate("u1", 3, [0.5, 0.25], 0.125),
        ServerReply: ServerReply(7, "s1"),
        Note: Note(1, "x"),
    }
    for cls, msg in samples.items():
        frame = encode(msg)
        assert msgpack.unpackb(frame)[0] == cls.TAG  # a plain msgpack array [tag, ...]
        assert decode(frame) == msg
    assert len(set(message_types())) == len(message_types())


@pytest.mark.parametrize(
    "frame, needle",
    [
        (b"\xc1", "not a msgpack frame"),
        (msgpack.packb({"a": 1}), "array"),
        (msgpack.packb([9999, 1]), "unknown message tag 9999"),
        (msgpack.packb([240, 1]), "has 1 fields, expected 2"),
    ],
)
def test_bad_frames_raise_decode_error_naming_the_problem(frame, needle):
    with pytest.raises(DecodeError, match=needle):
        decode(frame)


def test_duplicate_tag_is_refused():
    with pytest.raises(ValueError, match="tag 240"):

        @message(240)
        class Other:
            x: int


def test_virtual_clock_orders_by_time_then_insertion_and_jumps():
    clock = VirtualClock()
    seen = []
    clock.call_later(2.0, seen.append, "c")
    clock.call_later(1.0, seen.append, "a")
    clock.call_later(1.0, seen.append, "b")
    handle = clock.call_later(1.5, seen.append, "cancelled")
    handle.cancel()
    assert clock.run() == 2.0
    assert seen == ["a", "b", "c"]


def test_stop_mid_slot_keeps_the_rest_in_order():
    clock = VirtualClock()
    seen = []
    clock.call_later(1.0, seen.append, 1)
    clock.call_later(1.0, clock.stop)
    clock.call_later(1.0, seen.append, 2)
    clock.call_later(1.0, seen.append, 3)
    clock.run()
    assert seen == [1] and clock.now() == 1.0
    clock.run()
    assert seen == [1, 2, 3]


def test_run_until_stops_at_the_limit():
    clock = VirtualClock()
    seen = []
    clock.call_later(5.0, seen.append, "late")
    assert clock.run(until=3.0) == 3.0 and seen == []


class Echo(Actor):
    def __init__(self, address):
        super().__init__(address)
        self.got = []

    def on_Note(self, src, msg):
        self.got.append((self.now(), src, msg.n))


class Ticker(Role):
    def __init__(self):
        self.ticks = []

    def setup(self):
        self.actor.every(0.1, lambda: self.ticks.append(round(self.actor.now(), 6)))


def make(seed=1, **kw):
    clock = VirtualClock()
    transport = LocalTransport(clock, np.random.default_rng(seed), **kw)
    return clock, transport


def test_messages_are_delivered_encoded_with_latency_in_range_and_counted():
    clock, transport = make(latency=(0.001, 0.005))
    a, b = transport.register(Echo("a")), transport.register(Echo("b"))
    for i in range(200):
        a.send("b", Note(i, "hello"))
    clock.run()
    assert [n for _, _, n in b.got] == sorted(n for _, _, n in b.got) or len(b.got) == 200
    assert sorted(n for _, _, n in b.got) == list(range(200))
    assert all(0.001 <= t <= 0.005 for t, _, _ in b.got)
    assert {src for _, src, _ in b.got} == {"a"}
    st = transport.stats.by_type()["Note"]
    assert st["count"] == 200
    assert st["bytes"] == sum(len(encode(Note(i, "hello"))) for i in range(200))


def test_roles_timers_and_handler_conflicts():
    clock, transport = make()
    actor = Echo("a")
    ticker = actor.add_role(Ticker())
    transport.register(actor)
    transport.start_all()
    clock.run(until=0.35)
    assert ticker.ticks == [0.1, 0.2, 0.3]

    class Dup(Role):
        def on_Note(self, src, msg):
            pass

    with pytest.raises(ValueError, match="two handlers for Note"):
        actor.add_role(Dup())


def test_loss_and_duplication_hooks():
    clock, transport = make(seed=3, loss=0.1)
    a, b = transport.register(Echo("a")), transport.register(Echo("b"))
    for i in range(5000):
        a.send("b", Note(i, ""))
    clock.run()
    assert transport.stats.dropped + len(b.got) == 5000
    assert 350 < transport.stats.dropped < 650

    clock, transport = make(seed=3, duplicate=0.2)
    a, b = transport.register(Echo("a")), transport.register(Echo("b"))
    for i in range(1000):
        a.send("b", Note(i, ""))
    clock.run()
    assert len(b.got) == 1000 + transport.stats.duplicated and transport.stats.duplicated > 100


def test_unknown_destination_and_bad_config():
    clock, transport = make()
    a = transport.register(Echo("a"))
    a.send("nobody", Note(1, ""))
    clock.run()
    assert transport.stats.undeliverable == 1
    with pytest.raises(ConfigError, match="two actors"):
        transport.register(Echo("a"))
    with pytest.raises(ConfigError, match="latency"):
        make(latency=(0.005, 0.001))


def test_runtime_is_deterministic_per_seed():
    def trace(seed):
        clock, transport = make(seed=seed)
        actors = [transport.register(Echo(f"e{i}")) for i in range(5)]
        for i in range(50):
            actors[i % 5].send(f"e{(i * 3) % 5}", Note(i, ""))
        clock.run()
        return [x.got for x in actors]

    assert trace(7) == trace(7)
    assert trace(7) != trace(8)


def test_runtime_bench_counts_messages_but_asserts_no_timing():
    r = run_runtime_bench(actors=50, messages=5000, fanout=2, seed=1)
    assert r.messages >= 5000 and r.bytes > r.messages
    again = run_runtime_bench(actors=50, messages=5000, fanout=2, seed=1)
    assert (again.messages, again.bytes, again.virtual_s) == (r.messages, r.bytes, r.virtual_s)


def test_handler_for_a_message_type_registered_after_first_instance():
    clock, transport = make()

    class Late(Actor):
        def __init__(self, address):
            super().__init__(address)
            self.got = []

    Late("early")  # builds the class's handler table before LateNote exists

    @message(241)
    class LateNote:
        n: int

    def on_LateNote(self, src, msg):
        self.got.append(msg.n)

    Late.on_LateNote = on_LateNote
    a, b = transport.register(Late("a")), transport.register(Late("b"))
    a.send("b", LateNote(5))
    clock.run()
    assert b.got == [5]


def test_unhandled_messages_are_reported_not_raised():
    reports = []
    clock = VirtualClock()
    transport = LocalTransport(clock, np.random.default_rng(1), reporter=lambda kind, src, t, f: reports.append((kind, src, f)))
    a = transport.register(Actor("a"))
    transport.register(Actor("b"))
    a.send("b", Note(1, "x"))
    clock.run()
    assert reports == [("unhandled", "b", {"type": "Note", "src": "a"})]


def test_asyncio_queue_baseline_runs_the_same_workload():
    from dgdrf.bench.runtime import run_asyncio_queue_baseline

    r = run_asyncio_queue_baseline(actors=20, messages=2000, fanout=2)
    assert r.messages >= 2000 and r.bytes > r.messages


def test_a_message_without_fields_is_still_an_array():
    from dgdrf.policies.messages import ShareRequest

    frame = encode(ShareRequest())
    assert msgpack.unpackb(frame) == [ShareRequest.TAG]
    assert decode(frame) == ShareRequest()


@message(120, senders=("server",))  # below 128 to be read as a frame; below 200, so it names its senders
class FrameNote:
    n: int


class NoteReader(Role):
    """Reads FrameNote frames itself (FRAME_TAGS): what it got, as (time, sender id, n)."""

    FRAME_TAGS = (120,)  # FrameNote.TAG

    def __init__(self):
        self.got = []

    def on_frame(self, src, data):
        self.got.append((self.actor.now(), src, msgpack.unpackb(data)[1]))


def register_with(transport: LocalTransport, actor: Actor, role: Role, late: bool) -> Actor:
    """``actor`` on ``transport`` with ``role`` added before its registration, or after
    it (``late``)."""
    if not late:
        actor.add_role(role)
    transport.register(actor)
    if late:
        actor.add_role(role)
    return actor


def test_frames_reach_the_role_that_reads_them_with_the_senders_id():
    """A frame whose tag a role lists goes to its on_frame with the sender's node id
    (the transport's table, or the actor's when the role came after registration), every
    other message to its handler with the sender's address; a node taken off the
    transport (a crash) gets neither."""
    from dgdrf.runtime.addresses import BOOK

    for late in (False, True):
        clock, transport = make(seed=5)
        a, b = transport.register(Echo("fa")), Echo("fb")
        reader = NoteReader()
        register_with(transport, b, reader, late)
        for i in range(20):
            Actor.send_frame(a, BOOK.id_of("fb"), FrameNote.TAG, encode(FrameNote(i)))
        clock.run()
        assert sorted(n for _, _, n in reader.got) == list(range(20))
        assert {src for _, src, _ in reader.got} == {BOOK.id_of("fa")} and a.nid == BOOK.id_of("fa")
        a.send("fb", Note(7, "y"))  # a message no role reads: the actor's handler, by address
        clock.run()
        assert [(src, n) for _, src, n in b.got] == [("fa", 7)]
        transport.unregister("fb")
        Actor.send_frame(a, BOOK.id_of("fb"), FrameNote.TAG, encode(FrameNote(99)))
        clock.run()
        assert len(reader.got) == 20 and transport.stats.undeliverable == 1

    class Wide(Role):
        FRAME_TAGS = (Note.TAG,)  # 240: its frames' second byte is not the tag

    with pytest.raises(ValueError, match="below 128"):
        Echo("fc").add_role(Wide())


def test_a_role_sends_frames_as_its_actor_does_and_falls_silent_when_it_stops():
    """Role.send_frame goes through the sink and id its actor keeps in it: a role added
    before or after registration sends as the actor would, with the actor's id; once the
    actor stops (a crash), neither sends anything."""
    from dgdrf.runtime.addresses import BOOK

    for late in (False, True):
        clock, transport = make(seed=6)
        reader = NoteReader()
        transport.register(Echo("rb")).add_role(reader)
        a, sender = Echo("ra"), Role()
        register_with(transport, a, sender, late)
        for i in range(5):
            sender.send_frame(BOOK.id_of("rb"), FrameNote.TAG, encode(FrameNote(i)))
        Actor.send_frame(a, BOOK.id_of("rb"), FrameNote.TAG, encode(FrameNote(5)))
        clock.run()
        assert sorted((src, n) for _, src, n in reader.got) == [(BOOK.id_of("ra"), i) for i in range(6)]
        sent = transport.stats.totals()
        a.stop()
        sender.send_frame(BOOK.id_of("rb"), FrameNote.TAG, encode(FrameNote(6)))
        Actor.send_frame(a, BOOK.id_of("rb"), FrameNote.TAG, encode(FrameNote(7)))
        clock.run()
        assert len(reader.got) == 6 and transport.stats.totals() == sent


def test_objects_frozen_keeps_a_run_out_of_the_collector_and_gives_it_back():
    """A run's world is out of the collector's scans while its events run and back after
    (a discarded world's cycles are collected again); a caller's own freeze is left as
    the caller made it, and a nested freeze leaves the outer one standing."""
    assert gc.get_freeze_count() == 0
    with objects_frozen():
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with objects_frozen():
            assert gc.get_freeze_count() >= frozen
        assert gc.get_freeze_count() >= frozen  # the inner block did not unfreeze
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        with objects_frozen():
            pass
        assert gc.get_freeze_count() > 0  # the caller's freeze stands
    finally:
        gc.unfreeze()


def test_an_overlay_run_leaves_nothing_frozen_and_is_collected_when_dropped():
    """After its cycles (frozen while they ran), a dropped overlay run is garbage the
    collector reclaims: nothing of it stays in the permanent generation."""
    run = OverlayRun(OverlayConfig(protocol="pushsum", nodes=30, cycles=3, seed=2))
    run.run()
    assert gc.get_freeze_count() == 0
    ref = weakref.ref(run)
    del run
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("renumber_every", [0, 997])
def test_virtual_clock_runs_thousands_of_events_by_tick_then_scheduling_order(renumber_every):
    """Events due at few distinct ticks (many ties), some scheduling more as they run, the
    heap grown past its first capacity: they run by due tick, then in the order they
    were scheduled, as a sort of (tick, sequence) says; numbering the sequences afresh
    mid-run (what the compiled heap does when they would overflow their bits) changes
    nothing."""
    rng = np.random.default_rng(7)
    clock = VirtualClock()
    seen: list[int] = []
    expected: list[tuple[int, int, int]] = []  # (tick, sequence, label)
    counter = iter(range(10**6))

    def schedule(delay: int) -> None:
        label = next(counter)
        expected.append((clock.now_ticks() + delay, label, label))
        clock.schedule_ticks(delay, fire, (label,))

    def fire(label: int) -> None:
        seen.append(label)
        if label % 3 == 0 and label < 20_000:
            schedule(int(rng.integers(0, 4)) * 1000)
        if renumber_every and len(seen) % renumber_every == 0:
            clock._renumber()

    for _ in range(5000):
        schedule(int(rng.integers(0, 8)) * 1000)
    clock.run()
    assert len(seen) == len(expected) > 6000
    assert seen == [label for _, _, label in sorted(expected)]


class RoundRole(Role):
    """A role whose rounds are named in ROUNDS, one of them overridden below."""

    ROUNDS = ("first", "second")

    def __init__(self):
        self.seen = []

    def setup(self):
        self.actor.every(0.5, self.first)
        self.actor.every(0.25, self.second, first=0.1)

    def first(self):
        self.seen.append(("first", round(self.actor.now(), 6)))

    def second(self):
        self.seen.append(("second", round(self.actor.now(), 6)))


class LaterRound(RoundRole):
    def second(self):
        self.seen.append(("later", round(self.actor.now(), 6)))


class QuietCyclon(Cyclon):
    """Cyclon whose round a Python subclass replaces: the compiled round's C call must
    still reach the override."""

    def shuffle(self):
        self.quiet = getattr(self, "quiet", 0) + 1


def test_a_roles_rounds_run_as_its_methods_say_overrides_included():
    """Actor.every on a role's round named in ROUNDS (compiled: Role.fire_round, a C call)
    runs the method the object has, at the times and in the order a plain callback would,
    and a subclass's override (Python, of a compiled Cyclon's round too) runs instead."""
    clock, transport = make()
    plain, later = Actor("p"), Actor("q")
    a, b = plain.add_role(RoundRole()), later.add_role(LaterRound())
    c = Actor("c").add_role(QuietCyclon(view_size=4, shuffle_length=2, period=1.0, bootstrap=None))
    for actor in (plain, later, c.actor):
        transport.register(actor)
    transport.start_all()
    clock.run(until=1.0)
    assert a.seen == [("second", 0.1), ("second", 0.35), ("first", 0.5), ("second", 0.6), ("second", 0.85), ("first", 1.0)]
    assert b.seen == [(("later" if k == "second" else k), t) for k, t in a.seen]
    assert c.quiet == 1


class Repeating(Event):
    """An event that schedules itself again with one delay (as a periodic round does),
    noting each firing's label."""

    def __init__(self, clock, delay, seen, expected, counter, rounds):
        self.clock, self.delay, self.seen, self.expected, self.counter, self.rounds = clock, delay, seen, expected, counter, rounds
        self.label = -1

    def schedule(self, delay):
        self.label = next(self.counter)
        self.expected.append((self.clock.now_ticks() + delay, self.label, self.label))
        self.clock.schedule_repeat(delay, self, None)

    def fire(self, args):
        self.seen.append(self.label)
        self.rounds -= 1
        if self.rounds:
            self.schedule(self.delay)


@pytest.mark.parametrize("renumber_every", [0, 331])
def test_repeated_events_keep_the_order_of_one_heap(renumber_every):
    """Events scheduled again and again with one of a few delays (schedule_repeat: compiled,
    a queue per delay) among one-off events due at the same ticks: everything runs by due
    tick, then in the order it was scheduled, as a sort of (tick, sequence) says, with the
    sequences numbered afresh mid-run or not."""
    rng = np.random.default_rng(11)
    clock = VirtualClock()
    seen: list[int] = []
    expected: list[tuple[int, int, int]] = []
    counter = iter(range(10**6))

    def once(label: int) -> None:
        seen.append(label)
        if renumber_every and len(seen) % renumber_every == 0:
            clock._renumber()

    def schedule_once(delay: int) -> None:
        label = next(counter)
        expected.append((clock.now_ticks() + delay, label, label))
        clock.schedule_ticks(delay, once, (label,))

    repeating = [Repeating(clock, 1000 * int(rng.integers(1, 6)), seen, expected, counter, 12) for _ in range(3000)]
    for r in repeating:
        r.schedule(1000 * int(rng.integers(0, 5)))  # its first firing: any delay
    for _ in range(4000):
        schedule_once(1000 * int(rng.integers(0, 40)))
    clock.run()
    assert clock.pending() == 0
    assert len(seen) == len(expected) == 3000 * 12 + 4000
    assert seen == [label for _, _, label in sorted(expected)]
