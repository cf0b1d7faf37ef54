# C types of transport.py for the compiled build (Cython augmenting declarations: the
# .py file is the source). Fields read from Python code are public.

cimport cython
from cpython.list cimport PyList_GET_ITEM
from dgdrf.runtime.prefetch cimport prefetch
from dgdrf.runtime.actor cimport Actor, FrameSink, Role
from dgdrf.runtime.clock cimport Event, VirtualClock
from dgdrf.runtime.addresses cimport AddressBook

# the process's address book, typed: its lookups are C calls
cdef AddressBook BOOK


cdef class UniformLatency:
    cdef public double low
    cdef public double high
    cdef object _rng
    cdef object _lo
    cdef object _hi
    cpdef list refill(self)


cdef class _Coin:
    cdef public double p
    cdef object _rng
    cdef list _block
    cdef Py_ssize_t _i
    cpdef bint draw(self) except -1


cdef class LocalTransport(FrameSink):
    cdef public VirtualClock clock
    cdef public object stats
    cdef public dict actors
    cdef list _by_id
    cdef list _readers
    cdef public object reporter
    cdef object _rng
    cdef UniformLatency _latency
    cdef _Coin _loss
    cdef _Coin _dup
    cdef object _actor_seeds
    cdef long long[::1] _count
    cdef long long[::1] _nbytes
    cdef long long[::1] _block
    cdef Py_ssize_t _pos
    cdef dict _groups
    cdef dict __dict__

    cpdef send(self, src, dst, msg)
    @cython.locals(clock=VirtualClock, by_id=list, table=list, deliver=Event, to=object)
    cpdef send_frame(self, long long src, long long dst, long tag, bytes data)
    cdef void warm_to(self, long long dst, long tag) noexcept
    cdef long long _next_latency(self) except? -1


cdef class _Delivery(Event):
    cpdef fire(self, tuple args)
    cdef int fire_frame(self, object target, long long src, object data) except -1


@cython.locals(node=Actor, reader=object)
cdef _deliver(actor, src, bytes data)

cdef class _FrameDelivery(Event):
    cpdef fire(self, tuple args)
    cdef int fire_frame(self, object target, long long src, object data) except -1


cdef _Delivery _DELIVERY
cdef _FrameDelivery _FRAME_DELIVERY
