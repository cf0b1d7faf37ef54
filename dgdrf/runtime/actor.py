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

from types import MethodType
from typing import Any, Callable, Protocol, TypeVar

import numpy as np

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

from dgdrf.runtime.clock import Clock, Event, TimerHandle, VirtualClock, Warmable, to_ticks
from dgdrf.runtime import messages
from dgdrf.runtime.addresses import BOOK
from dgdrf.runtime.messages import Message, message_types


class Transport(Protocol):
    def send(self, src: str, dst: str, msg: Message) -> None: ...


class FrameSink:
    """A transport that also takes frames a role encoded itself, from and to node ids
    (:mod:`dgdrf.runtime.addresses`): the hot messages' typed path. Compiled,
    an actor reaches a FrameSink (the local transport) by a C call. ``src`` is the
    sender's id as the book's own int object (:attr:`Actor.nid`): it travels with the
    frame, so that the receiving role needs no lookup of an address string."""

    def send_frame(self, src: int, dst: int, tag: int, data: bytes) -> None:
        raise NotImplementedError

    def warm_to(self, dst: int, tag: int) -> None:
        """Compiled only, a hint: a frame of tag ``tag`` will soon go to node id ``dst``;
        what :meth:`send_frame` will touch of it may be brought toward the cache while
        the sender builds the frame. It changes nothing; the default does nothing."""


class Reporter(Protocol):
    """Write-only sink for measurement events (the Collector); never read by nodes."""

    def __call__(self, kind: str, source: str, time: float, fields: dict[str, Any]) -> None: ...


def _no_report(kind: str, source: str, time: float, fields: dict[str, Any]) -> None:
    return None


class Context:
    """What the runtime hands an actor: its clock, transport, reporter and generator."""

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


_NO_ROLES: dict[type, Callable[[str, Any], None]] = {}


class Role(Warmable):
    """One responsibility of an actor: handlers ``on_<Msg>``, ``setup`` and ``on_stop``.

    A role whose messages are hot may also receive them as frames, undecoded: the tags
    in ``FRAME_TAGS`` go to :meth:`on_frame`, which decodes them itself into typed fields
    (Cyclon: :mod:`dgdrf.overlay.descriptors`). It keeps ``on_<Msg>`` for the same
    messages as objects (network mode checks frames from outside by decoding them first).
    """

    #: the message tags whose frames this role reads itself (:meth:`on_frame`)
    FRAME_TAGS: tuple[int, ...] = ()
    #: the names of the methods :meth:`Actor.every` may run as this role's rounds by
    #: :meth:`fire_round` (their place here is its argument)
    ROUNDS: tuple[str, ...] = ()

    actor: Actor
    _sink: FrameSink  # the actor's sink and id, kept here by the actor (send_frame)
    _nid: int

    def setup(self) -> None:
        """Called when the hosting actor starts (schedule timers here)."""

    def on_stop(self) -> None:
        """Called when the hosting actor stops."""

    def on_frame(self, src: int, data: bytes) -> None:
        """A frame of one of ``FRAME_TAGS`` from node id ``src``, undecoded."""
        raise NotImplementedError(f"{type(self).__name__} lists FRAME_TAGS but reads no frame")

    def fire_round(self, which: int) -> None:
        """Run the round ``ROUNDS[which]``. A compiled role overrides it with a C call of
        the method (a periodic round is then no Python call: at 10^4 nodes the method's
        call through Python read an object per node far from the cache)."""
        getattr(self, self.ROUNDS[which])()

    def send_frame(self, dst: int, tag: int, data: bytes) -> None:
        """Send a frame this role encoded itself (tag ``tag``) to node id ``dst``: what
        :meth:`Actor.send_frame` of its actor does, through the actor's sink and id, which
        the actor keeps in each of its roles (:meth:`Actor.add_role`, ``attach``,
        ``stop``). Compiled roles call it as ``Role.send_frame(self, ...)``, a C call that
        touches the role, not the actor, whose object a role's round or frame does not
        otherwise need (at 10^4 nodes it is far from the cache)."""
        self._sink.send_frame(self._nid, dst, tag, data)


R = TypeVar("R", bound=Role)


class RoleEvent(Event):
    """An event a role makes once and schedules again and again with :meth:`Actor.later`
    (a timeout per round): the base a role's own events take, so that the role knows its
    actor's interface and not the clock's."""

    __slots__ = ()


class Periodic(Event):
    """A repeating timer started by :meth:`Actor.every`; ``cancel()`` stops it.

    On the virtual clock it is its own event (:class:`~dgdrf.runtime.clock.Event`): each
    firing schedules the next one by a C call, as ``call_later`` did, at the same tick and
    in the same order (``VirtualClock.schedule_repeat``: compiled, in the queue of its
    period, not the heap); on any other clock it goes through ``call_later``."""

    def __init__(self, actor: Actor, period: float, fn: Callable[[], Any], first: float) -> None:
        clock = actor.ctx.clock
        self._clock, self._period, self._active = clock, period, True
        self._fn: Callable[..., Any] = fn
        # a bound method (a role's round) is called as its function with its object: the
        # method object, one per timer, is then never touched (at 10^4 nodes it is far
        # from the cache at every firing; the function is shared by all nodes)
        self._args: tuple = ()
        self._role: Role | None = None
        self._round = -1  # compiled: a role's round named in its ROUNDS, run by Role.fire_round
        if isinstance(fn, MethodType):
            self._fn, self._args = fn.__func__, (fn.__self__,)
            if isinstance(fn.__self__, Role):
                self._role = fn.__self__
                rounds = type(fn.__self__).ROUNDS
                if cython.compiled and fn.__name__ in rounds and getattr(type(fn.__self__), fn.__name__) is fn.__func__:
                    self._round = rounds.index(fn.__name__)
        self._handle: TimerHandle | None = None
        self._virtual: VirtualClock | None = None
        if isinstance(clock, VirtualClock):
            self._virtual = clock
            self._ticks = to_ticks(period)
            clock.schedule_event(to_ticks(first), self, self._role)
        else:
            self._fire_cb = self._fire  # bound once, not at every period
            self._handle = clock.call_later(first, self._fire_cb)

    def fire(self, args: tuple) -> None:
        """The virtual clock's event: schedule the next period, then run."""
        if not self._active:
            return
        assert self._virtual is not None  # fire: the virtual clock's event
        self._virtual.schedule_repeat(self._ticks, self, self._role)
        if self._round >= 0:  # compiled only: a role's round, by a C call
            cython.cast(Role, self._role).fire_round(self._round)
            return
        self._fn(*self._args)

    def _fire(self) -> None:
        if not self._active:
            return
        self._handle = self._clock.call_later(self._period, self._fire_cb)
        self._fn(*self._args)

    def cancel(self) -> None:
        self._active = False
        if self._handle is not None:
            self._handle.cancel()


#: per actor class: (message registry version it was built at, message class ->
#: function(actor, src, msg) for the class's own on_<Msg> methods), built on the first
#: instance and again when message types registered since
_CLASS_HANDLERS: dict[type, tuple[int, dict[type, Callable[..., None]]]] = {}


def _silenced(src: str, dst: str, msg: Message) -> None:
    """What a stopped actor's sends become: nothing leaves it."""


class _FramesAsMessages(FrameSink):
    """A transport that takes only message objects (a test's), as a FrameSink: each frame
    is decoded back into its message."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    def send_frame(self, src: int, dst: int, tag: int, data: bytes) -> None:
        self.transport.send(BOOK.names[src], BOOK.names[dst], messages.decode(data))


class _Silenced(FrameSink):
    """What a stopped actor's frames go to: nowhere."""

    def send_frame(self, src: int, dst: int, tag: int, data: bytes) -> None:
        return None


_SILENCED = _Silenced()


_NO_FRAMES: dict[int, Role] = {}


class Actor:
    """Base of every node: address, typed handlers, roles, timers, send and report.

    Handlers ``on_<Msg>`` of the actor's class are looked up once per class (a shared
    table of plain functions, hot in cache however many actors there are); handlers of
    hosted roles are bound per instance. Compiled, an actor is an extension type
    (actor.pxd) whose fields the transport reads in C; subclasses are ordinary classes.
    """

    def __init__(self, address: str) -> None:
        self.address = address
        #: this node's id (:mod:`dgdrf.runtime.addresses`), the book's own int object
        self.nid: int = BOOK.id_object(address)
        self.ctx: Context = None  # type: ignore[assignment]  # set by attach()
        self.roles: list[Role] = []
        self._role_handlers: dict[type, Callable[[str, Any], None]] = _NO_ROLES
        self._frame_handlers: dict[int, Role] = _NO_FRAMES  # tag -> the role that reads its frames
        self._sink: FrameSink = _SILENCED  # where send_frame goes: the transport, once attached
        self._timers: list[TimerHandle | Periodic] = []
        cls = type(self)
        built = _CLASS_HANDLERS.get(cls)
        if built is None or built[0] != messages.registry_version:  # message types may register late
            built = _CLASS_HANDLERS[cls] = (messages.registry_version, {msg: getattr(cls, name) for msg, name in _handler_table(self).items()})
        self._own_handlers: dict[type, Callable[..., None]] = built[1]

    # -- composition ---------------------------------------------------------------
    def add_role(self, role: R) -> R:
        """Host ``role``: its ``on_<Msg>`` handlers join the actor's. Two handlers for one
        message type is a wiring bug and raises."""
        role.actor = self
        role._sink, role._nid = self._sink, self.nid
        if self._role_handlers is _NO_ROLES:
            self._role_handlers = {}
        for cls, name in _handler_table(role).items():
            if cls in self._role_handlers or cls in self._own_handlers:
                raise ValueError(f"{self.address}: two handlers for {cls.__name__}")
            self._role_handlers[cls] = getattr(role, name)
        for tag in role.FRAME_TAGS:
            if not 0 <= tag < 128:  # a frame's second byte is its tag only for msgpack's fixints
                raise ValueError(f"{self.address}: {type(role).__name__} reads the frames of tag {tag}, but roles read frames only for tags below 128")
            if self._frame_handlers is _NO_FRAMES:
                self._frame_handlers = {}
            if tag in self._frame_handlers:
                raise ValueError(f"{self.address}: two roles read the frames of tag {tag}")
            self._frame_handlers[tag] = role
        self.roles.append(role)
        return role

    def attach(self, ctx: Context) -> None:
        """Bind the actor to a runtime (done by the transport on registration)."""
        self.ctx = ctx
        self._tsend = ctx.transport.send
        self._sink = ctx.transport if isinstance(ctx.transport, FrameSink) else _FramesAsMessages(ctx.transport)
        self._give_roles_the_sink()

    def _give_roles_the_sink(self) -> None:
        """Every role sends through the actor's sink (:meth:`Role.send_frame`)."""
        for role in self.roles:
            role._sink = self._sink

    # -- lifecycle -----------------------------------------------------------------
    def start(self) -> None:
        """Start the actor: ``on_start`` then every role's ``setup``."""
        self.on_start()
        for role in self.roles:
            role.setup()

    def on_start(self) -> None:
        """Override: what the actor does when it starts."""

    def stop(self) -> None:
        """Stop for good, as a crashed process does: periodic timers are cancelled, and
        whatever still runs (a pending ``after`` timer, a retransmission) can neither send
        nor report any more."""
        for t in self._timers:
            t.cancel()
        self._timers.clear()
        for role in self.roles:
            role.on_stop()
        self._tsend = _silenced
        self._sink = _SILENCED
        self._give_roles_the_sink()
        if self.ctx is not None:
            self.ctx = Context(self.ctx.clock, self.ctx.transport, _no_report, self.ctx.rng)

    # -- messaging -----------------------------------------------------------------
    def send(self, dst: str, msg: Message) -> None:
        """Send ``msg`` to the actor at ``dst``."""
        self._tsend(self.address, dst, msg)

    def send_frame(self, dst: int, tag: int, data: bytes) -> None:
        """Send a frame this actor's role encoded itself (tag ``tag``) to node id ``dst``.

        Compiled roles send by :meth:`Role.send_frame` instead, which takes the same
        sink and id from the role itself."""
        self._sink.send_frame(self.nid, dst, tag, data)

    def receive(self, src: str, msg: Message) -> None:
        """Dispatch ``msg`` to its handler (the transport's fast path does the same)."""
        own = self._own_handlers.get(msg.__class__)
        if own is not None:
            own(self, src, msg)
            return
        handler = self._role_handlers.get(msg.__class__)
        if handler is None:
            self.report("unhandled", type=msg.__class__.__name__, src=src)
            return
        handler(src, msg)

    # -- time ----------------------------------------------------------------------
    def now(self) -> float:
        return self.ctx.clock.now()

    def after(self, delay: float, fn: Callable[..., Any], *args: Any) -> TimerHandle:
        """Run ``fn(*args)`` after ``delay`` seconds of the running clock."""
        return self.ctx.clock.call_later(delay, fn, *args)

    def later(self, delay: float, event: RoleEvent) -> None:
        """Fire ``event`` after ``delay`` seconds of the running clock, with no handle: a
        role's own :class:`~dgdrf.runtime.clock.Event`, scheduled again and again (a
        timeout per round), where :meth:`after` makes a timer object each time. On the
        virtual clock it is scheduled by a C call (``VirtualClock.schedule_repeat``: the
        queue of its delay) and fired by one, at the tick and in the order :meth:`after`
        would give it."""
        self._later(delay, event)

    def _later(self, delay: float, event: RoleEvent) -> None:
        """:meth:`later`, a C call from compiled roles (a cpdef method of an object with
        an instance dictionary looks its name up there first, for an override)."""
        clock = self.ctx.clock
        if isinstance(clock, VirtualClock):
            virtual = clock  # compiled: a C reference (actor.pxd), for a C call
            virtual.schedule_repeat(to_ticks(delay), event, None)  # scheduled again and again: a queue of its delay
        else:
            clock.schedule(delay, event, ())

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
