"""Clocks: where timers and message deliveries are scheduled.

:class:`VirtualClock` is a discrete-event loop in integer microseconds. Events due at
the same microsecond share one slot (a list, run in insertion order), and a heap holds
only the distinct due times; when nothing is ready, time jumps to the next slot. There is
no sleeping and no selector syscall, and ties run in the order they were scheduled, so a
run is a pure function of its inputs. One microsecond is far below every delay the
thesis uses (ticks of 100 ms, latencies of milliseconds).

:class:`AsyncioClock` offers the same interface over a real asyncio (or uvloop) loop for
socket mode. Actors only ever see the :class:`Clock` interface.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from typing import Any, Callable, Protocol

#: Virtual time resolution: ticks per second.
TICKS_PER_SECOND = 1_000_000


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """What an actor may ask of time: read it and schedule callbacks."""

    def now(self) -> float: ...

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle: ...


class _VirtualTimer:
    __slots__ = ("fn", "args", "cancelled")

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        self.fn, self.args, self.cancelled = fn, args, False

    def fire(self) -> None:
        if not self.cancelled:
            self.fn(*self.args)

    def cancel(self) -> None:
        self.cancelled = True


def to_ticks(seconds: float) -> int:
    """Seconds -> virtual ticks (microseconds), rounded, never negative."""
    return max(0, int(seconds * TICKS_PER_SECOND + 0.5))


class VirtualClock:
    """Deterministic virtual-time event loop."""

    def __init__(self) -> None:
        self._now = 0  # ticks
        self._times: list[int] = []  # heap of distinct due ticks
        self._slots: dict[int, list[tuple[Callable[..., Any], tuple]]] = {}
        self._stopped = False
        self.events = 0  # callbacks run, for benchmarks

    def now(self) -> float:
        return self._now / TICKS_PER_SECOND

    def now_ticks(self) -> int:
        return self._now

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> _VirtualTimer:
        """Run ``fn(*args)`` ``delay`` virtual seconds from now; returns a cancellable handle."""
        timer = _VirtualTimer(fn, args)
        self.schedule_ticks(to_ticks(delay), timer.fire, ())
        return timer

    def schedule(self, delay: float, fn: Callable[..., Any], args: tuple) -> None:
        """Like call_later, without a handle."""
        self.schedule_ticks(to_ticks(delay), fn, args)

    def schedule_ticks(self, delay_ticks: int, fn: Callable[..., Any], args: tuple) -> None:
        """Hot path (message delivery): run ``fn(*args)`` ``delay_ticks`` ticks from now."""
        t = self._now + delay_ticks
        slot = self._slots.get(t)
        if slot is None:
            self._slots[t] = [(fn, args)]
            heapq.heappush(self._times, t)
        else:
            slot.append((fn, args))

    def stop(self) -> None:
        """Make :meth:`run` return after the current callback."""
        self._stopped = True

    def pending(self) -> int:
        return sum(len(s) for s in self._slots.values())

    def run(self, until: float | None = None) -> float:
        """Run callbacks in time order until stopped, nothing is left, or virtual time
        would pass ``until`` seconds. Returns the virtual time reached (seconds)."""
        self._stopped = False
        times, slots = self._times, self._slots
        pop = heapq.heappop
        limit = None if until is None else to_ticks(until)
        n = 0
        try:
            while times and not self._stopped:
                t = times[0]
                if limit is not None and t > limit:
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
        return self.now()


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
