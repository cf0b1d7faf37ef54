"""Actors and roles (in the manner of mango's Role and Kompics components).

An :class:`Actor` has an address, typed handlers and timers. A handler for message type
``Foo`` is a method ``on_Foo(self, src, msg)`` of the actor or of one of its
:class:`Role` objects; each responsibility of a node (peer sampling, gradient, push-sum,
the allocation policy) is one Role that subscribes to the message types it handles and
schedules its own timers through the actor. Handlers are synchronous and short: an actor
never blocks the loop.

An actor reaches the world only through its :class:`Context` (clock, transport,
reporter, random generator), so the same code runs in virtual time in one process and
on a real loop over sockets.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Protocol

import numpy as np

from dgdrf.runtime.clock import Clock, TimerHandle
from dgdrf.runtime.messages import Message, message_types


class Transport(Protocol):
    def send(self, src: str, dst: str, msg: Message) -> None: ...


class Reporter(Protocol):
    """Write-only sink for measurement events (the Collector); never read by nodes."""

    def __call__(self, kind: str, source: str, time: float, fields: dict[str, Any]) -> None: ...


def _no_report(kind: str, source: str, time: float, fields: dict[str, Any]) -> None:
    return None


class Context:
    """What the runtime hands an actor: its clock, transport, reporter and generator."""

    __slots__ = ("clock", "transport", "reporter", "rng")

    def __init__(self, clock: Clock, transport: Transport, reporter: Reporter | None = None, rng: np.random.Generator | None = None) -> None:
        self.clock = clock
        self.transport = transport
        self.reporter = reporter or _no_report
        self.rng = rng if rng is not None else np.random.default_rng(0)


def _handler_table(obj: object) -> dict[type, str]:
    """Map message classes to method names ``on_<ClassName>`` defined on ``obj``'s class."""
    by_name = {cls.__name__: cls for cls in message_types().values()}
    table = {}
    for name in dir(type(obj)):
        if name.startswith("on_") and name[3:] in by_name and callable(getattr(type(obj), name)):
            table[by_name[name[3:]]] = name
    return table


class Role:
    """One responsibility of an actor: handlers ``on_<Msg>``, ``setup`` and ``on_stop``."""

    actor: Actor

    def setup(self) -> None:
        """Called when the hosting actor starts (schedule timers here)."""

    def on_stop(self) -> None:
        """Called when the hosting actor stops."""


class Periodic:
    """A repeating timer started by :meth:`Actor.every`; ``cancel()`` stops it."""

    __slots__ = ("_actor", "_period", "_fn", "_handle", "_active")

    def __init__(self, actor: Actor, period: float, fn: Callable[[], Any], first: float) -> None:
        self._actor, self._period, self._fn, self._active = actor, period, fn, True
        self._handle = actor.ctx.clock.call_later(first, self._fire)

    def _fire(self) -> None:
        if not self._active:
            return
        self._handle = self._actor.ctx.clock.call_later(self._period, self._fire)
        self._fn()

    def cancel(self) -> None:
        self._active = False
        self._handle.cancel()


class Actor:
    """Base of every node: address, typed handlers, roles, timers, send and report."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.ctx: Context | None = None
        self.roles: list[Role] = []
        self._handlers: dict[type, Callable[[str, Any], None]] = {}
        self._timers: list[TimerHandle | Periodic] = []
        for cls, name in _handler_table(self).items():
            self._handlers[cls] = getattr(self, name)

    # -- composition ---------------------------------------------------------------
    def add_role(self, role: Role) -> Role:
        """Host ``role``: its ``on_<Msg>`` handlers join the actor's. Two handlers for one
        message type is a wiring bug and raises."""
        role.actor = self
        for cls, name in _handler_table(role).items():
            if cls in self._handlers:
                raise ValueError(f"{self.address}: two handlers for {cls.__name__}")
            self._handlers[cls] = getattr(role, name)
        self.roles.append(role)
        return role

    def attach(self, ctx: Context) -> None:
        """Bind the actor to a runtime (done by the transport on registration)."""
        self.ctx = ctx
        # send(dst, msg) bound straight to the transport: no extra frame on the hot path
        self.send = partial(ctx.transport.send, self.address)

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> None:
        """Start the actor: ``on_start`` then every role's ``setup``."""
        self.on_start()
        for role in self.roles:
            role.setup()

    def on_start(self) -> None:
        """Override: what the actor does when it starts."""

    def stop(self) -> None:
        for t in self._timers:
            t.cancel()
        self._timers.clear()
        for role in self.roles:
            role.on_stop()

    # -- messaging -----------------------------------------------------------------
    def receive(self, src: str, msg: Message) -> None:
        handler = self._handlers.get(msg.__class__)
        if handler is None:
            self.report("unhandled", type=msg.__class__.__name__, src=src)
            return
        handler(src, msg)

    def send(self, dst: str, msg: Message) -> None:
        """Send ``msg`` to the actor at ``dst`` (rebound to the transport on attach)."""
        raise RuntimeError(f"{self.address}: not attached to a transport")

    # -- time ----------------------------------------------------------------------
    def now(self) -> float:
        return self.ctx.clock.now()

    def after(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle:
        """Run ``fn(*args)`` after ``delay`` seconds of the running clock."""
        return self.ctx.clock.call_later(delay, fn, *args)

    def every(self, period: float, fn: Callable[[], Any], first: float | None = None) -> Periodic:
        """Run ``fn()`` every ``period`` seconds, first after ``first`` (default: period)."""
        p = Periodic(self, period, fn, period if first is None else first)
        self._timers.append(p)
        return p

    # -- observation ---------------------------------------------------------------
    @property
    def rng(self) -> np.random.Generator:
        return self.ctx.rng

    def report(self, kind: str, **fields: Any) -> None:
        """Tell the measuring instrument (write-only) that something happened."""
        self.ctx.reporter(kind, self.address, self.ctx.clock.now(), fields)
