"""A harness for unit tests of one role (or one actor) without a transport or a clock.

An actor reaches the world only through its :class:`~dgdrf.runtime.actor.Context`
(clock, transport, reporter, generator), so a role is tested by hosting it on an
ordinary actor whose context holds fakes:

- :class:`ManualClock`: time stands still until the test calls :meth:`ManualClock.advance`,
  which runs the timers that fall due, in order of due time (those due at the same
  microsecond in the order they were scheduled, as :class:`~dgdrf.runtime.clock.VirtualClock`
  runs them), including timers they schedule themselves inside the window.
- a recording transport: every ``send`` is kept as a :class:`Sent` (source, destination,
  message). The message is encoded and decoded as the real transports do, so what the
  test sees is what a receiver would get, and a message that cannot be encoded fails here.
- a recording reporter: every ``report`` is kept as a :class:`Reported`; with ``strict``
  (the default, as the emulation's collector) an unknown kind, or a message no role of
  the receiver handles, raises.

Everything goes through the public constructor API (``Actor(address)``, ``add_role``,
``Context(clock, transport, reporter, rng)``, ``attach``, ``start``, ``receive``), so the
same harness works whether :mod:`dgdrf.runtime.actor` runs compiled or as pure Python
(``DGDRF_PURE=1``)::

    h = Harness()
    server = h.host(Server("s1", [4, 8]), AnnounceCapacity("central", retry=0.25))
    assert h.sent_messages(RegisterServer) == [RegisterServer([4.0, 8.0])]
    h.advance(0.25)                       # the retry timer fires
    h.deliver("s1", Registered(), src="central")

Messages between actors hosted on the same harness are only recorded, never delivered by
themselves: :meth:`Harness.pump` delivers them (instantly, in send order) when a test
wants two roles to talk.
"""

from __future__ import annotations

import heapq
import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

import dgdrf

from dgdrf.nodes.collector import REPORT_KINDS
from dgdrf.runtime.actor import Actor, Context, Role
from dgdrf.runtime.clock import TICKS_PER_SECOND, to_ticks
from dgdrf.runtime.messages import Message, decode, encode


# -- time ------------------------------------------------------------------------------
class _Timer:
    """The handle :meth:`ManualClock.call_later` returns."""

    __slots__ = ("due", "fn", "args", "cancelled")

    def __init__(self, due: int, fn: Callable[..., Any], args: tuple) -> None:
        self.due, self.fn, self.args, self.cancelled = due, fn, args, False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock whose timers run only when the test advances it.

    Time is kept in integer microseconds (:data:`~dgdrf.runtime.clock.TICKS_PER_SECOND`)
    as the virtual clock keeps it, so 0.1 + 0.1 + 0.1 seconds of timers fall due exactly
    at 0.3 and a test never fights float rounding."""

    def __init__(self) -> None:
        self._now = 0
        self._seq = 0
        self._heap: list[tuple[int, int, _Timer]] = []
        self.fired = 0  # callbacks run so far

    # the Clock interface (dgdrf.runtime.clock.Clock) ----------------------------------
    def now(self) -> float:
        return self._now / TICKS_PER_SECOND

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> _Timer:
        timer = _Timer(self._now + to_ticks(delay), fn, args)
        heapq.heappush(self._heap, (timer.due, self._seq, timer))
        self._seq += 1
        return timer

    def schedule(self, delay: float, fn: Callable[..., Any], args: tuple) -> None:
        self.call_later(delay, fn, *args)

    # what a test does with it -----------------------------------------------------------
    def pending(self) -> list[float]:
        """Due times (seconds) of the timers not yet run nor cancelled, in order."""
        return [t.due / TICKS_PER_SECOND for _, _, t in sorted(self._heap) if not t.cancelled]

    def next_due(self) -> float | None:
        due = self.pending()
        return due[0] if due else None

    def advance(self, seconds: float) -> int:
        """Move time ``seconds`` forward, running every timer due by then in order (time
        reads as each timer's due time while it runs); returns how many ran."""
        if seconds < 0:
            raise ValueError(f"time only moves forward, got {seconds}")
        return self.advance_to(self.now() + seconds)

    def advance_to(self, time: float) -> int:
        """:meth:`advance` to the absolute ``time`` (seconds)."""
        limit = max(self._now, to_ticks(time))
        ran = 0
        heap = self._heap
        while heap and heap[0][0] <= limit:
            due, _, timer = heapq.heappop(heap)
            if timer.cancelled:
                continue
            self._now = due
            ran += 1
            self.fired += 1
            timer.fn(*timer.args)
        self._now = limit
        return ran

    def run_next(self) -> bool:
        """Jump to the next pending timer and run it (and any due at the same tick
        before it); False when none is pending."""
        due = self.next_due()
        if due is None:
            return False
        self.advance_to(due)
        return True


# -- what the fakes record -------------------------------------------------------------
@dataclass(frozen=True)
class Sent:
    """One message an actor sent: from ``src`` to ``dst`` at ``time``; ``msg`` is the
    decoded frame (what the receiver would get), ``nbytes`` the frame's size."""

    time: float
    src: str
    dst: str
    msg: Message
    nbytes: int


@dataclass(frozen=True)
class Reported:
    """One report an actor made to the measuring instrument."""

    time: float
    source: str
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)


class FakeHost(Actor):
    """A bare actor to host roles on, with any extra attributes a role reads from its
    host given as keywords (e.g. ``capacity=np.array([4.0, 8.0])``)."""

    def __init__(self, address: str, **attributes: Any) -> None:
        super().__init__(address)
        for name, value in attributes.items():
            setattr(self, name, value)


class Harness:
    """Actors on a :class:`ManualClock`, their sends and reports recorded.

    ``strict``: an unknown report kind or an ``unhandled`` report (a message none of the
    receiver's roles handles) raises AssertionError, as the emulation's strict collector
    raises ProtocolError."""

    def __init__(self, seed: int = 0, strict: bool = True) -> None:
        self.clock = ManualClock()
        self.strict = strict
        self.sent: list[Sent] = []
        self.reports: list[Reported] = []
        self.actors: dict[str, Actor] = {}
        self._seeds = np.random.default_rng(seed)
        self._undelivered: list[Sent] = []

    # the Transport interface (dgdrf.runtime.actor.Transport) ------------------------------
    def send(self, src: str, dst: str, msg: Message) -> None:
        frame = encode(msg)
        sent = Sent(self.clock.now(), src, dst, decode(frame), len(frame))
        self.sent.append(sent)
        self._undelivered.append(sent)

    # the Reporter interface ---------------------------------------------------------------
    def _report(self, kind: str, source: str, time: float, fields: dict[str, Any]) -> None:
        if self.strict:
            assert kind in REPORT_KINDS, f"{source} reported an unknown kind {kind!r}"
            assert kind != "unhandled", f"{source} got a {fields.get('type')} from {fields.get('src')} that none of its roles handles"
        self.reports.append(Reported(time, source, kind, dict(fields)))

    # composing ------------------------------------------------------------------------
    def host(self, actor: Actor | str, *roles: Role, start: bool = True, rng: np.random.Generator | None = None) -> Actor:
        """Attach ``actor`` (or a :class:`FakeHost` of that address) to the fakes with
        ``roles`` added, and start it (its ``on_start``, then every role's ``setup``)
        unless ``start`` is False."""
        if isinstance(actor, str):
            actor = FakeHost(actor)
        if actor.address in self.actors:
            raise ValueError(f"two actors with address {actor.address!r}")
        for role in roles:
            actor.add_role(role)
        actor.attach(Context(self.clock, self, self._report, rng if rng is not None else self._seeds.spawn(1)[0]))
        self.actors[actor.address] = actor
        if start:
            actor.start()
        return actor

    # driving ----------------------------------------------------------------------------
    def deliver(self, dst: Actor | str, msg: Message, src: str) -> None:
        """Hand ``msg`` from ``src`` to the actor ``dst`` now, through the wire format."""
        actor = dst if isinstance(dst, Actor) else self.actors[dst]
        actor.receive(src, decode(encode(msg)))

    def pump(self, limit: int = 10_000) -> int:
        """Deliver the recorded messages addressed to hosted actors (and those their
        handlers send in turn), in send order, without time passing; messages to other
        addresses stay only recorded. Returns how many were delivered."""
        n = 0
        while self._undelivered:
            batch, self._undelivered = self._undelivered, []
            for s in batch:
                actor = self.actors.get(s.dst)
                if actor is None:
                    continue
                n += 1
                if n > limit:
                    raise AssertionError(f"more than {limit} messages delivered: a loop?")
                actor.receive(s.src, s.msg)
        return n

    def advance(self, seconds: float) -> int:
        return self.clock.advance(seconds)

    def now(self) -> float:
        return self.clock.now()

    # reading ----------------------------------------------------------------------------
    def sent_by(self, src: str | None = None, dst: str | None = None, kind: type | None = None, since: int = 0) -> list[Sent]:
        """The recorded sends (from index ``since`` on) matching every filter given."""
        return [s for s in self.sent[since:] if (src is None or s.src == src) and (dst is None or s.dst == dst) and (kind is None or isinstance(s.msg, kind))]

    def sent_messages(self, kind: type | None = None, dst: str | None = None, src: str | None = None, since: int = 0) -> list[Message]:
        """Just the messages of :meth:`sent_by`."""
        return [s.msg for s in self.sent_by(src, dst, kind, since)]

    def mark(self) -> int:
        """A position in the send log, for ``since=`` (what was sent after this point)."""
        return len(self.sent)

    def reports_of(self, kind: str, source: str | None = None) -> list[Reported]:
        return [r for r in self.reports if r.kind == kind and (source is None or r.source == source)]


def selection_pool(gradient: Any, heard: dict) -> dict:
    """What a stamped Gradient's ``_select`` chooses from: the remembered nodes, the view
    and ``heard``, each with its freshest descriptor (the earlier source kept on equal
    stamps): the reference the selection tests rank themselves."""
    remembered = gradient.remembered
    pool = dict(remembered)
    extra: dict = {}
    for source in (gradient.view, heard):
        for addr, desc in source.items():
            held = extra.get(addr) or remembered.get(addr)
            if held is None or desc[1] > held[1]:
                extra[addr] = desc
    pool.update(extra)
    return pool


#: where the package's sources are (beside its extension modules when compiled)
SOURCES = Path(dgdrf.__file__).resolve().parents[1]
_SOURCES: dict[str, types.ModuleType] = {}


def source_module(name: str) -> types.ModuleType:
    """Module ``name`` loaded from its .py file under another name (the pure build of a
    module that imported compiled), once."""
    if name not in _SOURCES:
        alias = "_pure_source_" + name.replace(".", "_")
        spec = importlib.util.spec_from_file_location(alias, SOURCES / (name.replace(".", "/") + ".py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
        _SOURCES[name] = module
    return _SOURCES[name]


def interpreted(name: str) -> types.ModuleType:
    """Module ``name`` as the interpreted build runs it: as imported if that is its .py
    file, else its source loaded apart (:func:`source_module`)."""
    imported = importlib.import_module(name)
    return imported if str(imported.__file__).endswith(".py") else source_module(name)
