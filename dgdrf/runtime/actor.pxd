# C types of actor.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.runtime.clock cimport Event, VirtualClock, Warmable, to_ticks

cdef class Actor

cdef class Context:
    cdef public object clock
    cdef public object transport
    cdef public object reporter
    cdef public object rng


cdef class FrameSink:
    cpdef send_frame(self, long long src, long long dst, long tag, bytes data)
    cdef void warm_to(self, long long dst, long tag) noexcept


cdef class Role(Warmable):
    # No instance dictionary: a compiled role declares its fields (its .pxd), and a role
    # written as an ordinary class gets a dictionary from Python anyway. With one, every
    # call of a cpdef method of a compiled role (on_frame: every frame delivered) looked
    # the name up in the instance's dictionary first, for an override (issue 34).
    cdef public Actor actor
    cdef public FrameSink _sink  # the actor's, kept here by the actor (send_frame)
    cdef public long long _nid  # the actor's id, as a C integer: the book's int object of a node is far from the cache at 10^4 nodes

    cpdef on_frame(self, long long src, bytes data)
    cpdef fire_round(self, long which)
    cpdef send_frame(self, long long dst, long tag, bytes data)


cdef class RoleEvent(Event):
    pass


cdef class Periodic(Event):
    cdef object _clock
    cdef VirtualClock _virtual
    cdef long long _ticks
    cdef object _fire_cb
    cdef object _period
    cdef object _fn
    cdef tuple _args  # (a bound method's object,) with _fn its function, or ()
    cdef object _handle
    cdef bint _active
    cdef Role _role  # the role whose round this is, if it is one's: the clock readies it (Warmable)
    cdef long _round  # the round's place in the role's ROUNDS (Role.fire_round), or -1

    cpdef fire(self, tuple args)


cdef class Actor:
    cdef public str address
    cdef public object nid
    cdef public Context ctx
    cdef public list roles
    cdef public object _tsend
    cdef FrameSink _sink
    cdef public dict _frame_handlers
    cdef public dict _role_handlers
    cdef public dict _own_handlers
    cdef public list _timers
    cdef dict __dict__  # subclasses (servers, users, ...) keep their own attributes

    cpdef send(self, dst, msg)
    cpdef send_frame(self, long long dst, long tag, bytes data)
    cpdef later(self, double delay, RoleEvent event)
    @cython.locals(virtual=VirtualClock)
    cdef _later(self, double delay, RoleEvent event)
    cdef _give_roles_the_sink(self)
