"""Clocks: where timers and message deliveries are scheduled.

:class:`VirtualClock` is a discrete-event loop in integer microseconds: callbacks run in
order of due time, and those due at the same microsecond in the order they were
scheduled; when nothing is ready, time jumps to the next one. There is no sleeping and no
selector syscall, so a run is a pure function of its inputs. One microsecond is far below every delay the
thesis uses (ticks of 100 ms, latencies of milliseconds).

:class:`AsyncioClock` offers the same interface over a real asyncio (or uvloop) loop for
socket mode. Actors only ever see the :class:`Clock` interface.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from typing import Any, Callable, Protocol

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

#: Virtual time resolution: ticks per second.
TICKS_PER_SECOND = 1_000_000


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """What an actor may ask of time: read it and schedule callbacks."""

    def now(self) -> float: ...

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle: ...

    def schedule(self, delay: float, fn: Callable[..., Any], args: tuple) -> None: ...


class Warmable:
    """Something an event will reach whose state may be far from the cache when its turn
    comes (a node's role among 10^4: its view, its generator). The compiled clock knows
    the next events before it runs the current one, and asks what each will reach to
    ready itself a step at a time (:meth:`warm`), so that its memory arrives while
    earlier events run instead of stalling its own (``prefetch.pxd``). A hint only: it
    changes no value and no result, and the interpreted build never calls it."""

    __slots__ = ()

    def warm(self, stage: int) -> None:
        """Stage 1 (two events ahead): this object's first lines are in the cache; hint
        the rest of it and the objects its fields point to. Stage 0 (next): hint what
        those objects point to. The default does nothing."""


class Event:
    """A callback the compiled clock runs with a C call (:meth:`fire`, its arguments as a
    tuple) instead of a Python call: the runtime's own frequent events (a message's
    delivery, a timer) are Events. Anything callable can be scheduled; interpreted, an
    Event is called like any other."""

    __slots__ = ()

    def fire(self, args: tuple) -> None:
        raise NotImplementedError

    def fire_frame(self, target: Any, src: int, data: Any) -> None:
        """Compiled only: a frame's delivery scheduled by :meth:`VirtualClock.schedule_frame`,
        its three arguments passed as C values, where :meth:`fire` gets them as a tuple."""
        self.fire((target, src, data))

    def __call__(self, *args: Any) -> None:
        self.fire(args)


class _VirtualTimer(Event):
    """The handle of a callback scheduled with :meth:`VirtualClock.call_later`: scheduled
    itself (with no arguments), it runs ``fn(*args)`` unless cancelled."""

    __slots__ = ("fn", "args", "cancelled")

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        self.fn, self.args, self.cancelled = fn, args, False

    def fire(self, args: tuple) -> None:
        if not self.cancelled:
            self.fn(*self.args)

    def cancel(self) -> None:
        self.cancelled = True


#: TICKS_PER_SECOND as a float, the factor :func:`to_ticks` multiplies by (a C double
#: when compiled, as Python converts the int in ``seconds * TICKS_PER_SECOND``)
_TICKS = float(TICKS_PER_SECOND)


def to_ticks(seconds: float) -> int:
    """Seconds -> virtual ticks (microseconds), rounded, never negative. Compiled, a C
    call from the compiled modules (a timer per round converts its delay); what is not
    a 64-bit count (NaN, infinities, beyond 2**63) takes Python's ``int``, which raises."""
    x = seconds * _TICKS + 0.5
    if cython.compiled and -9.2e18 < x < 9.2e18:
        return cython.cast(cython.longlong, x) if x > 0 else 0
    return max(0, int(x))


class VirtualClock:
    """Deterministic virtual-time event loop: callbacks run in order of due tick, and
    those due at the same tick in the order they were scheduled.

    Two data structures give that order, one per build of this same source. Interpreted,
    a heap of the distinct due ticks (``heapq``, in C) and a slot per tick holding its
    callbacks in a list. Compiled (``cython.compiled``), one binary heap of C records
    (tick, scheduling sequence, payload slot) in a contiguous array, the callbacks in
    lists indexed by slot (a frame's target beside, its sender's id in a C array:
    :meth:`schedule_frame`): sifting compares integers in adjacent memory instead of
    following a pointer per comparison to a Python object (with 10^4 actors and 4 x 10^4
    events pending those pointers miss the cache), and no Python object is made per event
    but its arguments, none for a frame (docs/notes/2026-11-29-performance-history.md,
    docs/notes/2026-11-29-runtime-frames-and-lookups.md). Beside the heap, compiled, a
    queue per delay of the events scheduled again and again with it (a periodic round:
    :meth:`schedule_repeat`), each in due order by construction, so that the heap holds
    the messages in flight and not the 10^4 rounds waiting. tests/test_runtime.py and
    tests/test_compiled_core.py hold both builds to the same order."""

    #: compiled only: the heap's keys (and the block they are in), the free payload
    #: slots and what each slot holds in C (a frame's sender, a hint), C arrays (clock.pxd)
    _keys_block: Any
    _keys: Any
    _free: Any
    _held: Any
    #: compiled only: the queues of repeated events (schedule_repeat), a C array of _Fifo
    _fifos: Any

    def __init__(self) -> None:
        self._now = 0  # ticks
        self._stopped = False
        self.events = 0  # callbacks run, for benchmarks
        self._times: list[int] = []  # interpreted: heap of distinct due ticks
        self._slots: dict[int, list[tuple[Callable[..., Any], tuple]]] = {}  # interpreted
        # compiled: the heap's C arrays (allocated by _grow), and per payload slot its
        # callback and arguments; _seq numbers the events scheduled (the tie-break)
        self._seq = 0
        self._heap_n = self._heap_cap = self._nfree = 0
        #: compiled: queues of the events scheduled again and again with one delay
        #: (schedule_repeat), _nfifo of them in use, _fifo_n events in them
        self._nfifo = self._fifo_n = 0
        #: compiled: per payload slot s, three places from 3 s: its callback, its
        #: arguments (a frame's bytes) and a frame event's target (None for any other
        #: event; its sender's id in the C array _held, schedule_frame). One list, so that
        #: a slot's three are in one or two cache lines (at 10^4 actors a slot is far
        #: from the cache when its turn comes); a free slot's places hold None
        self._pay: list[Any] = []

    def __dealloc__(self) -> None:
        if cython.compiled:
            free(self._keys_block)  # type: ignore[name-defined]  # libc's, cimported in clock.pxd
            free(self._free)  # type: ignore[name-defined]
            free(self._held)  # type: ignore[name-defined]
            for f in range(self._nfifo):
                free(self._fifos[f].keys)  # type: ignore[name-defined]

    def now(self) -> float:
        return self._now / TICKS_PER_SECOND

    def now_ticks(self) -> int:
        return self._now

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle:
        """Run ``fn(*args)`` ``delay`` virtual seconds from now; returns a cancellable handle."""
        timer = _VirtualTimer(fn, args)
        if cython.compiled:
            self._push(self._now + to_ticks(delay), timer, (), None)
        else:
            self.schedule_ticks(to_ticks(delay), timer, ())
        return timer

    def schedule(self, delay: float, fn: Callable[..., Any], args: tuple) -> None:
        """Like call_later, without a handle."""
        self.schedule_ticks(to_ticks(delay), fn, args)

    def schedule_frame(self, delay_ticks: int, deliver: Event, target: Any, src: int, data: Any) -> None:
        """The hot path of message delivery: ``deliver(target, src, data)`` ``delay_ticks``
        ticks from now, in order with every other event. Compiled, with no argument tuple
        and no int object for the sender's id ``src``: the target and frame wait in the
        event's payload slot, the id in a C array, and the event gets them as C values
        (:meth:`Event.fire_frame`)."""
        if cython.compiled:
            slot = self._push(self._now + delay_ticks, deliver, data, target if isinstance(target, Warmable) else None)
            _put(self._pay, 3 * slot + 2, target)  # type: ignore[name-defined]  # clock.pxd's
            self._held[slot].src = src
            return
        self.schedule_ticks(delay_ticks, deliver, (target, src, data))

    def schedule_event(self, delay_ticks: int, event: Event, hint: Warmable | None) -> None:
        """Fire ``event`` (with no arguments) ``delay_ticks`` ticks from now, as
        :meth:`schedule_ticks` would; compiled, ``hint`` is readied ahead of it
        (:class:`Warmable`): a role's round names its role. The clock keeps no reference
        to ``hint``: ``event`` must (a Periodic holds its role)."""
        if cython.compiled:
            self._push(self._now + delay_ticks, event, (), hint)
            return
        self.schedule_ticks(delay_ticks, event, ())

    def schedule_repeat(self, delay_ticks: int, event: Event, hint: Warmable | None) -> None:
        """:meth:`schedule_event` for an event scheduled again and again with the same
        delay (a periodic round, ``Actor.every``). Compiled, such events wait in a queue
        per delay instead of the heap: since the clock's time only grows, each queue is
        in the order its events are due, ties in the order they were scheduled, so the
        next event is the earliest of the heap's first and the queues' first, the order
        the heap alone would give. At 10^4 nodes nearly every pending event is a round:
        the heap keeps the messages in flight, and a round waits without sifting."""
        if not cython.compiled:
            self.schedule_ticks(delay_ticks, event, ())
            return
        f = 0
        while f < self._nfifo and self._fifos[f].delay != delay_ticks:
            f += 1
        if f == self._nfifo:
            if f == _FIFOS:  # type: ignore[name-defined]  # clock.pxd's
                self._push(self._now + delay_ticks, event, (), hint)
                return
            self._fifos[f].delay = delay_ticks
            self._fifos[f].keys = cython.NULL
            self._fifos[f].cap = self._fifos[f].head = self._fifos[f].n = 0
            self._nfifo += 1
        q = cython.address(self._fifos[f])
        if q.n == q.cap:  # a ring twice as large, its keys from its start
            cap = 2 * q.cap if q.cap else 1024
            keys = cython.cast(cython.pointer(_Key), malloc(cap * cython.sizeof(_Key)))  # type: ignore[name-defined]  # clock.pxd's
            if keys == cython.NULL:
                raise MemoryError(f"virtual clock: no memory for {cap} repeated events")
            for j in range(q.n):
                keys[j] = q.keys[(q.head + j) & (q.cap - 1)]
            free(q.keys)  # type: ignore[name-defined]
            q.keys, q.cap, q.head = keys, cap, 0
        k = (q.head + q.n) & (q.cap - 1)
        q.keys[k].order = self._take_slot(event, (), hint)
        q.keys[k].t = self._now + delay_ticks
        q.n += 1
        self._fifo_n += 1

    def schedule_ticks(self, delay_ticks: int, fn: Callable[..., Any], args: tuple) -> None:
        """Run ``fn(*args)`` ``delay_ticks`` ticks from now."""
        t = self._now + delay_ticks
        if cython.compiled:
            self._push(t, fn, args, None)
            return
        slot = self._slots.get(t)
        if slot is None:
            self._slots[t] = [(fn, args)]
            heapq.heappush(self._times, t)
        else:
            slot.append((fn, args))

    # -- the compiled heap ---------------------------------------------------------------
    def _grow(self) -> None:
        """Double the heap's capacity (compiled build only); the new payload slots are free.

        The keys are 16 bytes from position 1 of a block aligned to a cache line (position
        0 is a sentinel due before every event), so that the two children of a position,
        2 i and 2 i + 1, share one line: sifting down reads one line a level."""
        old = self._heap_cap
        cap = max(1024, 2 * old)
        if cap > _SLOT_MASK + 1:  # type: ignore[name-defined]  # clock.pxd's
            raise MemoryError(f"virtual clock: more than {_SLOT_MASK + 1:,} events pending")  # type: ignore[name-defined]
        block = cython.NULL
        if posix_memalign(cython.address(block), 64, (cap + 1) * cython.sizeof(_Key)) != 0:  # type: ignore[name-defined]  # clock.pxd's
            raise MemoryError(f"virtual clock: no memory for {cap} pending events")
        keys = cython.cast(cython.pointer(_Key), block)  # type: ignore[name-defined]
        if old:
            memcpy(keys, self._keys, (self._heap_n + 1) * cython.sizeof(_Key))  # type: ignore[name-defined]
            free(self._keys_block)  # type: ignore[name-defined]
        else:
            keys[0].t = -(2**63)  # the sentinel: every key sifting up stops below it
            keys[0].order = 0
        self._keys_block = block
        self._keys = keys
        slots = realloc(self._free, cap * cython.sizeof(cython.Py_ssize_t))  # type: ignore[name-defined]
        if slots == cython.NULL:
            raise MemoryError(f"virtual clock: no memory for {cap} pending events")
        self._free = cython.cast(cython.pointer(cython.Py_ssize_t), slots)
        held = realloc(self._held, cap * cython.sizeof(_Held))  # type: ignore[name-defined]
        if held == cython.NULL:
            raise MemoryError(f"virtual clock: no memory for {cap} pending events")
        self._held = cython.cast(cython.pointer(_Held), held)  # type: ignore[name-defined]
        for s in range(cap - 1, old - 1, -1):  # the lowest slot on top
            self._free[self._nfree] = s
            self._nfree += 1
        self._pay.extend([None] * (3 * (cap - old)))
        self._heap_cap = cap

    def _push(self, t: int, fn: Callable[..., Any], args: Any, hint: Warmable | None) -> int:
        """Add an event (compiled build only): its payload to a free slot, its key sifted
        up from a new leaf; returns the slot. A new event's sequence exceeds every pending
        one's, so it stops below any parent due at the same tick or earlier (the
        sentinel at position 0 is due before all). ``hint``: the Warmable it will
        reach, or None (:func:`_warm_ahead`), kept alive by the event (its target, or the
        event itself)."""
        order = self._take_slot(fn, args, hint)
        keys = self._keys
        self._heap_n += 1
        i = self._heap_n
        while keys[i >> 1].t > t:
            keys[i] = keys[i >> 1]
            i >>= 1
        keys[i].t = t
        keys[i].order = order
        return order & _SLOT_MASK  # type: ignore[name-defined]  # clock.pxd's

    def _take_slot(self, fn: Any, args: Any, hint: Warmable | None) -> int:
        """A free payload slot for an event (compiled build only), holding its callback,
        arguments and ``hint``; returns its key's order word: the next scheduling sequence
        above the slot (sequences numbered afresh first if the next would not fit)."""
        if self._nfree == 0:
            self._grow()
        if self._seq == _SEQ_LIMIT:  # type: ignore[name-defined]  # clock.pxd's
            self._renumber()
        self._nfree -= 1
        slot = self._free[self._nfree]
        _put(self._pay, 3 * slot, fn)  # type: ignore[name-defined]  # clock.pxd's: a free slot holds None
        _put(self._pay, 3 * slot + 1, args)  # type: ignore[name-defined]
        self._held[slot].hint = cython.NULL if hint is None else cython.cast(cython.pointer(PyObject), hint)  # type: ignore[name-defined]
        order = (self._seq << _SLOT_BITS) | slot  # type: ignore[name-defined]
        self._seq += 1
        return order

    def _pop(self) -> int:
        """Remove the first event's key and return its payload slot (compiled build only):
        the last leaf takes the root's place and sinks to where it belongs."""
        keys = self._keys
        top = keys[1].order
        n = self._heap_n
        last = keys[n]
        n -= 1
        self._heap_n = n
        i = 1
        while True:
            child = 2 * i
            if child > n:
                break
            if child < n and _before(keys, child + 1, child):  # type: ignore[name-defined]  # clock.pxd's
                child += 1
            if _key_before(last, keys[child]):  # type: ignore[name-defined]
                break
            keys[i] = keys[child]
            i = child
        keys[i] = last
        return top & _SLOT_MASK  # type: ignore[name-defined]

    def _first_source(self) -> int:
        """Where the next event is (compiled build only): -1 the heap, f the queue f of
        repeated events, -2 nowhere (nothing is pending)."""
        best = -1 if self._heap_n else -2
        first = cython.address(self._keys[1])  # the best source's first key
        for f in range(self._nfifo):
            q = cython.address(self._fifos[f])
            if q.n and (best == -2 or _key_before(q.keys[q.head], first[0])):  # type: ignore[name-defined]  # clock.pxd's
                best = f
                first = cython.address(q.keys[q.head])
        return best

    def _due(self, source: int) -> int:
        """The due tick of the first event of ``source`` (:meth:`_first_source`)."""
        if source == -1:
            return self._keys[1].t
        return self._fifos[source].keys[self._fifos[source].head].t

    def _take_first(self, source: int) -> int:
        """Remove the first event of ``source`` and return its payload slot."""
        if source == -1:
            return self._pop()
        q = cython.address(self._fifos[source])
        k = q.keys[q.head]
        q.head = (q.head + 1) & (q.cap - 1)
        q.n -= 1
        self._fifo_n -= 1
        return k.order & _SLOT_MASK  # type: ignore[name-defined]

    def _renumber(self) -> None:
        """Number the pending events' sequences afresh from 0, in the order they run
        (compiled build only): when 2**40 events have been scheduled, the next sequence
        would not fit its bits. Every key keeps its place (the heap and the queues of
        repeated events keep their order, which is the keys' order), and the order of the
        events is what it was. Interpreted, there is nothing to number."""
        if not cython.compiled:
            return
        keys = self._keys
        n = self._heap_n
        total = n + self._fifo_n
        refs = cython.cast(_KeyRefs, malloc((total + 1) * cython.sizeof(_KeyArray)))  # type: ignore[name-defined]  # clock.pxd's
        if refs == cython.NULL:
            raise MemoryError("virtual clock: no memory to renumber the pending events")
        for i in range(n):
            refs[i] = cython.address(keys[i + 1])
        i = n
        for f in range(self._nfifo):
            q = cython.address(self._fifos[f])
            for j in range(q.n):
                refs[i] = cython.address(q.keys[(q.head + j) & (q.cap - 1)])
                i += 1
        qsort(refs, total, cython.sizeof(_KeyArray), _compare_key_refs)  # type: ignore[name-defined]
        for i in range(total):
            refs[i].order = (cython.cast(cython.ulonglong, i) << _SLOT_BITS) | (refs[i].order & _SLOT_MASK)  # type: ignore[name-defined]
        free(refs)  # type: ignore[name-defined]
        self._seq = total

    def stop(self) -> None:
        """Make :meth:`run` return after the current callback."""
        self._stopped = True

    @property
    def stopped(self) -> bool:
        """Whether the last :meth:`run` ended by :meth:`stop` (not at its limit, nor for
        want of events)."""
        return self._stopped

    def pending(self) -> int:
        if cython.compiled:
            return self._heap_n + self._fifo_n
        return sum(map(len, self._slots.values()))

    def run(self, until: float | None = None) -> float:
        """Run callbacks in time order until stopped, nothing is left, or virtual time
        would pass ``until`` seconds. Returns the virtual time reached (seconds)."""
        self._stopped = False
        limit = -1 if until is None else to_ticks(until)
        if cython.compiled:
            self._run_heap(limit)
        else:
            self._run_slots(limit)
        return self.now()

    def _run_heap(self, limit: int) -> None:
        """:meth:`run` on the compiled heap (``limit`` < 0: no limit)."""
        n = 0
        pay = self._pay
        try:
            while not self._stopped:
                source = self._first_source()
                if source == -2:
                    break
                t = self._due(source)
                if limit >= 0 and t > limit:
                    self._now = limit
                    break
                slot = self._take_first(source)
                self._now = t
                p = 3 * slot
                fn = _take(pay, p)  # type: ignore[name-defined]  # clock.pxd's: pay[p], None left there
                args = _take(pay, p + 1)  # type: ignore[name-defined]
                target = _take(pay, p + 2)  # type: ignore[name-defined]
                self._free[self._nfree] = slot
                self._nfree += 1
                n += 1
                if self._heap_n + self._fifo_n >= _WARM_FROM:  # type: ignore[name-defined]  # clock.pxd's
                    _warm_ahead(self)  # type: ignore[name-defined]
                if target is not None:  # a frame (schedule_frame)
                    cython.cast(Event, fn).fire_frame(target, self._held[slot].src, args)
                elif isinstance(fn, Event):
                    cython.cast(Event, fn).fire(args)
                else:
                    fn(*args)
        finally:
            self.events += n

    def _run_slots(self, limit: int) -> None:
        """:meth:`run` on the interpreted slots (``limit`` < 0: no limit)."""
        times, slots = self._times, self._slots
        pop = heapq.heappop
        n = 0
        try:
            while times and not self._stopped:
                t = times[0]
                if limit >= 0 and t > limit:
                    self._now = limit
                    break
                pop(times)
                self._now = t
                slot = slots.pop(t)
                i = 0
                for fn, args in slot:
                    i += 1
                    fn(*args)
                    if self._stopped:
                        rest = slot[i:]
                        if rest:  # keep what was not run, ahead of anything added since
                            later = slots.get(t)
                            if later is None:
                                heapq.heappush(times, t)
                            slots[t] = rest + (later or [])
                        break
                n += i
        finally:
            self.events += n


class AsyncioClock:
    """The same interface over a running asyncio/uvloop loop (wall-clock seconds).

    ``epoch``: a Unix time that is time 0 for every process of a cluster, so times
    reported from different processes compare (one machine, or NTP-synchronised ones);
    without it, time 0 is when the clock was made."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None, epoch: float | None = None) -> None:
        self._loop = loop or asyncio.get_event_loop()
        self._t0 = self._loop.time()
        self.epoch = epoch

    def now(self) -> float:
        if self.epoch is not None:
            return time.time() - self.epoch
        return self._loop.time() - self._t0

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> asyncio.TimerHandle:
        return self._loop.call_later(delay, fn, *args)

    def schedule(self, delay: float, fn: Callable[..., Any], args: tuple) -> None:
        self._loop.call_later(delay, fn, *args)
