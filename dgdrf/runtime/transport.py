"""The local transport: in-process delivery through the virtual clock.

Every send encodes the message with msgpack and every delivery decodes it, so byte counts
are real and the wire format is exercised by every run. Latency is drawn per message from
a model (uniform [min, max] seconds, default 1-5 ms, thesis-like); loss and duplication
hooks drop or repeat a frame with a given probability. Draws come in blocks from the
run's seeded generator: deterministic and cheap on the hot path. A partition
(:meth:`LocalTransport.set_partition`, set by a run's ``Partition`` control) loses every
frame between groups of members until :meth:`LocalTransport.heal`; unset, it costs the
send path one ``is not None`` test.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from dgdrf.errors import ConfigError
from dgdrf.runtime.actor import Actor, Context, FrameSink, Reporter, Role
from dgdrf.runtime.addresses import BOOK
from dgdrf.runtime.clock import Event, VirtualClock, to_ticks
from dgdrf.runtime.messages import _DECODERS, Message
from dgdrf.runtime.stats import MessageStats

import msgpack

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

_unpackb = msgpack.unpackb
_BLOCK = 16384


class UniformLatency:
    """Per-message latency uniform in [low, high] seconds at the clock's microsecond
    resolution: :meth:`refill` draws a block of them in ticks; the send path walks it."""

    def __init__(self, low: float, high: float, rng: np.random.Generator) -> None:
        if not (0 <= low <= high):
            raise ConfigError(f"latency range must satisfy 0 <= min <= max, got [{low}, {high}] s")
        self.low, self.high, self._rng = low, high, rng
        self._lo, self._hi = to_ticks(low), to_ticks(high)

    def refill(self) -> list[int]:
        """A fresh block of latencies in ticks."""
        return self.refill_array().tolist()

    def refill_array(self) -> np.ndarray:
        """:meth:`refill` as 64-bit integers (the compiled send path reads them in C)."""
        return self._rng.integers(self._lo, self._hi + 1, _BLOCK, dtype=np.int64)


class _Coin:
    """Bernoulli(p) draws in blocks."""

    _block: list[bool]

    def __init__(self, p: float, rng: np.random.Generator) -> None:
        if not 0 <= p <= 1:
            raise ConfigError(f"probability must be in [0, 1], got {p}")
        self.p, self._rng, self._block, self._i = p, rng, [], 0

    def __call__(self) -> bool:
        return self.draw()

    def draw(self) -> bool:
        """The next draw: True with probability p."""
        i = self._i
        if i >= len(self._block):
            self._block = (self._rng.random(_BLOCK) < self.p).tolist()
            i = 0
        self._i = i + 1
        return self._block[i]


def partition_groups(groups: Iterable[Iterable[str]]) -> dict[str, int]:
    """Each address of ``groups`` -> its group's number (from 1; 0 is every address listed
    in none); ValueError for an address in two groups."""
    of: dict[str, int] = {}
    for i, group in enumerate(groups, start=1):
        for address in group:
            if of.setdefault(address, i) != i:
                raise ValueError(f"partition: {address!r} is in two groups")
    return of


class LocalTransport(FrameSink):
    """Delivers encoded frames between actors registered on one :class:`VirtualClock`."""

    def __init__(
        self,
        clock: VirtualClock,
        rng: np.random.Generator,
        latency: tuple[float, float] = (0.001, 0.005),
        loss: float = 0.0,
        duplicate: float = 0.0,
        reporter: Reporter | None = None,
    ) -> None:
        self.clock = clock
        self.stats = MessageStats()
        self.actors: dict[str, Actor] = {}
        #: node id (dgdrf.runtime.addresses) -> its actor here, or None: send_frame's table
        self._by_id: list[Actor | None] = []
        #: frame tag -> (node id -> the role of that node that reads the tag's frames,
        #: or None), or None for a tag no role reads: compiled, a frame goes straight to
        #: its role (:class:`_FrameDelivery`), without touching the actor on its way; the
        #: actor's own table (``Actor._frame_handlers``, :func:`_deliver`) stays the rule
        self._readers: list[list[Role | None] | None] = [None] * 128
        self.reporter = reporter
        self._rng = rng
        self._latency = UniformLatency(latency[0], latency[1], rng.spawn(1)[0])
        self._loss = _Coin(loss, rng.spawn(1)[0]) if loss > 0 else None
        self._dup = _Coin(duplicate, rng.spawn(1)[0]) if duplicate > 0 else None
        self._actor_seeds = rng.spawn(1)[0]
        self._count, self._nbytes = self.stats.count, self.stats.nbytes  # compiled: read and written in C
        #: a block of latencies in ticks, walked by send (compiled: the interpreted build's
        #: closures hold their own list)
        self._block: Any = np.zeros(0, dtype=np.int64)
        self._pos = 0
        #: address -> its group while partitioned (0: in none), None while whole
        self._groups: dict[str, int] | None = None
        if not cython.compiled:
            send, send_frame, self._set_send_groups = self._make_send()
            self.send = send  # type: ignore[method-assign, assignment]  # interpreted: the same steps as a closure over locals
            self.send_frame = send_frame  # type: ignore[method-assign, assignment]

    def register(self, actor: Actor, rng: np.random.Generator | None = None) -> Actor:
        """Attach ``actor`` to this transport with its own generator (split from the run's)."""
        if actor.address in self.actors:
            raise ConfigError(f"two actors with address {actor.address!r}")
        self.actors[actor.address] = actor
        i = actor.nid
        if i >= len(self._by_id):
            self._by_id.extend([None] * (i + 1 - len(self._by_id)))
        self._by_id[i] = actor
        for tag, role in actor._frame_handlers.items():
            table = self._readers[tag]
            if table is None:
                table = self._readers[tag] = []
            if i >= len(table):
                table.extend([None] * (i + 1 - len(table)))
            table[i] = role
        actor.attach(Context(self.clock, self, self.reporter, rng if rng is not None else self._actor_seeds.spawn(1)[0]))
        return actor

    def unregister(self, address: str) -> Actor | None:
        """Take the actor at ``address`` off this transport (a crash): nothing reaches it
        any more. Returns it, or None if there is none."""
        actor = self.actors.pop(address, None)
        if actor is not None:
            i = BOOK.id_of(address)
            self._by_id[i] = None
            for table in self._readers:
                if table is not None and i < len(table):
                    table[i] = None
        return actor

    def send_frame(self, src: int, dst: int, tag: int, data: bytes) -> None:
        """Count the frame ``data`` (message tag ``tag``) from node id ``src``, and
        schedule its delivery to node id ``dst`` after a drawn latency, or lose it (no such
        actor, a partition, loss); duplicate it with the duplication probability. Every
        send comes here: :meth:`send` encodes a message object first, a hot role encodes
        its own frames."""
        self._count[tag] += 1
        self._nbytes[tag] += len(data)
        # the role that reads the frame, if one does: the actor is then registered (the
        # tables are cleared with it) and is not touched, neither here nor on delivery
        # (at 10^4 nodes its object is far from the cache)
        deliver: Event = _FRAME_DELIVERY
        table = self._readers[tag] if 0 <= tag < 128 else None
        to: Any = table[dst] if table is not None and dst < len(table) else None
        if to is None:
            by_id = self._by_id
            to = by_id[dst] if dst < len(by_id) else None
            if to is None:
                self.stats.undeliverable += 1
                return
            deliver = _DELIVERY
        if self._groups is not None and self._groups.get(BOOK.names[src], 0) != self._groups.get(BOOK.names[dst], 0):
            self.stats.partitioned += 1
            return
        if self._loss is not None and self._loss.draw():
            self.stats.dropped += 1
            return
        clock = self.clock
        clock.schedule_frame(self._next_latency(), deliver, to, src, data)
        if self._dup is not None and self._dup.draw():
            self.stats.duplicated += 1
            clock.schedule_frame(self._next_latency(), deliver, to, src, data)

    def warm_to(self, dst: int, tag: int) -> None:
        """Compiled: the role that will read the frame (its object's reference count is
        the first thing of it :meth:`send_frame` touches, cold at 10^4 nodes) is hinted
        to the cache."""
        if 0 <= tag < 128:
            table = self._readers[tag]
            if table is not None and 0 <= dst < len(table):
                prefetch(PyList_GET_ITEM(table, dst))  # type: ignore[name-defined]  # transport.pxd's

    def send(self, src: str, dst: str, msg: Message) -> None:
        """Encode ``msg`` and send its frame to the actor at ``dst`` (:meth:`send_frame`).

        The compiled build runs these methods; interpreted, each transport runs the
        closures :meth:`_make_send` builds instead, which take the same steps with every
        name bound to a local (no attribute lookups per message)."""
        LocalTransport.send_frame(self, BOOK.id_object(src), BOOK.id_of(dst), msg.TAG, msg._encode(msg))  # through the class: no override check

    def _next_latency(self) -> int:
        """The next latency of the drawn block, in ticks."""
        if self._pos >= len(self._block):
            self._block, self._pos = self._latency.refill_array(), 0
        self._pos += 1
        return self._block[self._pos - 1]

    def _make_send(self) -> tuple[Callable[[str, str, Message], None], Callable[[int, int, int, bytes], None], Callable[[dict[str, int] | None], None]]:
        """The hot paths (:meth:`send`, :meth:`send_frame`) as closures over locals (no
        attribute lookups per message) that walk one block of latencies, and the setter
        of their partition (:meth:`set_partition` calls it)."""
        count, nbytes = self.stats.count, self.stats.nbytes
        stats, schedule = self.stats, self.clock.schedule_ticks
        loss, dup, refill = self._loss, self._dup, self._latency.refill
        deliver = _DELIVERY
        block: list[int] = []
        pos = 0
        groups: dict[str, int] | None = None

        by_id, names = self._by_id, BOOK.names

        def send_frame(src: int, dst: int, tag: int, data: bytes) -> None:
            nonlocal block, pos
            count[tag] += 1
            nbytes[tag] += len(data)
            actor = by_id[dst] if dst < len(by_id) else None
            if actor is None:
                stats.undeliverable += 1
                return
            if groups is not None and groups.get(names[src], 0) != groups.get(names[dst], 0):
                stats.partitioned += 1
                return
            if loss is not None and loss():
                stats.dropped += 1
                return
            if pos >= len(block):
                block, pos = refill(), 0
            pos += 1
            schedule(block[pos - 1], deliver, (actor, src, data))
            if dup is not None and dup():
                stats.duplicated += 1
                if pos >= len(block):
                    block, pos = refill(), 0
                pos += 1
                schedule(block[pos - 1], deliver, (actor, src, data))

        id_of, id_object = BOOK.id_of, BOOK.id_object

        def send(src: str, dst: str, msg: Message) -> None:
            send_frame(id_object(src), id_of(dst), msg.TAG, msg._encode(msg))

        def set_groups(new: dict[str, int] | None) -> None:
            nonlocal groups
            groups = new

        return send, send_frame, set_groups

    def set_partition(self, groups: Iterable[Iterable[str]]) -> None:
        """Lose every message sent from now on between members of different ``groups``,
        both ways, until :meth:`heal`; within a group they pass. Every address listed in
        no group is in one more group with the others listed in none. Counted in
        ``stats.partitioned`` (before loss is drawn: a partitioned frame draws nothing).
        Frames already on their way arrive. Groups with no member at all make no
        partition; an address in two groups is refused (:func:`partition_groups`)."""
        self._set_groups(partition_groups(groups) or None)

    def heal(self) -> None:
        """End the partition: every message passes again (loss aside)."""
        self._set_groups(None)

    @property
    def partitioned(self) -> bool:
        """Whether a partition is set."""
        return self._groups is not None

    def _set_groups(self, groups: dict[str, int] | None) -> None:
        self._groups = groups
        if not cython.compiled:
            self._set_send_groups(groups)

    def start_all(self, jitter: float = 0.0) -> None:
        """Schedule every registered actor's ``start`` at time 0 (+ optional jitter)."""
        for actor in self.actors.values():
            self.clock.call_later(float(self._rng.uniform(0, jitter)) if jitter else 0.0, actor.start)

    def summary(self) -> dict[str, Any]:
        return self.stats.summary()


def _deliver(actor: Actor, src: int, data: bytes) -> None:
    """Decode a frame from node id ``src`` and run its handler (the receiving side of the
    wire). A frame of a type a role reads itself (``Role.FRAME_TAGS``) goes to it
    undecoded, with the sender's id: every frame is ``[tag, ...]`` with a tag below 128
    and at most 15 fields, so its second byte is the tag. A message object's handler gets
    the sender's address."""
    node = cython.cast(Actor, actor) if cython.compiled else actor  # compiled: the handler tables are read in C
    if node._frame_handlers:
        reader = node._frame_handlers.get(data[1])
        if reader is not None:
            (cython.cast(Role, reader) if cython.compiled else reader).on_frame(src, data)
            return
    arr = _unpackb(data)
    msg = _DECODERS[arr[0]](arr)
    name = BOOK.names[src]
    own = node._own_handlers.get(msg.__class__)
    if own is not None:
        own(actor, name, msg)
        return
    role = node._role_handlers.get(msg.__class__)
    if role is not None:
        role(name, msg)
    else:
        actor.receive(name, msg)  # unhandled: reported


class _Delivery(Event):
    """A frame's delivery as a clock event: (actor, src, frame) -> :func:`_deliver`."""

    __slots__ = ()

    def fire(self, args: tuple) -> None:
        _deliver(args[0], args[1], args[2])

    def fire_frame(self, target: Any, src: int, data: Any) -> None:
        _deliver(target, src, data)


class _FrameDelivery(Event):
    """A frame's delivery straight to the role that reads it (``LocalTransport._readers``):
    (role, src, frame) -> ``role.on_frame(src, frame)``, what :func:`_deliver` does for
    it through the actor."""

    __slots__ = ()

    def fire(self, args: tuple) -> None:
        (cython.cast(Role, args[0]) if cython.compiled else args[0]).on_frame(args[1], args[2])

    def fire_frame(self, target: Any, src: int, data: Any) -> None:
        cython.cast(Role, target).on_frame(src, data)  # compiled only (VirtualClock.schedule_frame)


_DELIVERY = _Delivery()
_FRAME_DELIVERY = _FrameDelivery()
