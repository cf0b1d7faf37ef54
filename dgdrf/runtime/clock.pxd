# C types of clock.py for the compiled build (Cython augmenting declarations: the .py
# file is the source; this file only says which classes are extension types and what
# their fields hold). Fields read from Python code are public.

cimport cython
from libc.stdlib cimport realloc, free
from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_ITEM, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF, Py_DECREF
from dgdrf.runtime.prefetch cimport prefetch, prefetch_span

cdef extern from "Python.h":
    ctypedef struct PyListObject:  # its items' array, read where a list call would touch counts
        PyObject** ob_item


cdef double _TICKS
@cython.locals(x=double)
cpdef long long to_ticks(double seconds) except? -1


cdef struct _Key:
    long long t  # due tick
    long long seq  # scheduling order: the tie-break among events due at the same tick
    Py_ssize_t slot  # where the callback and its arguments are
    PyObject* hint  # the Warmable the event will reach, or NULL (borrowed: the event keeps it alive)

ctypedef _Key* _KeyArray


cdef class Warmable:
    cdef void warm(self, int stage) noexcept


cdef class Event:
    cpdef fire(self, tuple args)
    cdef int fire_frame(self, object target, long long src, object data) except -1


cdef class _VirtualTimer(Event):
    cdef public object fn
    cdef public tuple args
    cdef public bint cancelled


cdef class VirtualClock:
    cdef public long long _now
    cdef public bint _stopped
    cdef public long long events
    cdef public list _times
    cdef public dict _slots
    cdef long long _seq
    cdef _Key* _keys
    cdef Py_ssize_t* _free
    cdef Py_ssize_t _heap_n
    cdef Py_ssize_t _heap_cap
    cdef Py_ssize_t _nfree
    cdef list _pay
    cdef long long* _src

    @cython.locals(slot=Py_ssize_t)
    cpdef schedule_frame(self, long long delay_ticks, Event deliver, object target, long long src, object data)
    cpdef schedule_event(self, long long delay_ticks, Event event, Warmable hint)

    cpdef double now(self)
    cpdef long long now_ticks(self)
    cpdef schedule_ticks(self, long long delay_ticks, fn, tuple args)
    @cython.locals(old=Py_ssize_t, cap=Py_ssize_t, s=Py_ssize_t, keys=cython.p_void, slots=cython.p_void, srcs=cython.p_void)
    cdef int _grow(self) except -1
    @cython.locals(keys=_KeyArray, i=Py_ssize_t, parent=Py_ssize_t, slot=Py_ssize_t)
    cdef Py_ssize_t _push(self, long long t, fn, object args, object hint) except -1
    @cython.locals(keys=_KeyArray, last=_Key, top=Py_ssize_t, i=Py_ssize_t, n=Py_ssize_t, child=Py_ssize_t)
    cdef Py_ssize_t _pop(self)
    @cython.locals(n=Py_ssize_t, t=cython.longlong, slot=Py_ssize_t, p=Py_ssize_t, pay=list, target=object)
    cdef void _run_heap(self, long long limit) except *
    cdef void _run_slots(self, long long limit) except *


cdef inline bint _before(_Key* keys, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Whether the event at heap position ``a`` runs before the one at ``b``."""
    return keys[a].t < keys[b].t or (keys[a].t == keys[b].t and keys[a].seq < keys[b].seq)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void _warm_ahead(VirtualClock clock) noexcept:
    """Before an event runs, the next three are readied, each a step further
    (:class:`Warmable`): the next one's state is hinted to the cache (its stage 0), the
    one after's objects (stage 1: its own fields are there by now) and its payload (a
    frame's bytes), and the third's object itself and its payload slot. The
    second and third are guessed from the heap (the earlier child of its root, then the
    earliest of what may follow it); a guess that an event scheduled meanwhile
    overtakes costs a few hints, nothing else. The hinted object is in each event's key
    (the top of the heap is in the cache); borrowed pointers throughout: a reference
    count's increment would touch what is cold."""
    cdef _Key* keys = clock._keys
    cdef Py_ssize_t n = clock._heap_n, s, a, b, c
    cdef PyObject* h
    cdef PyObject** pay = (<PyListObject*>clock._pay).ob_item
    if n == 0:
        return
    h = keys[0].hint
    if h != NULL:
        (<Warmable>h).warm(0)
    if n == 1:
        return
    a = 2 if n > 2 and _before(keys, 2, 1) else 1  # the second
    prefetch_span(pay[3 * keys[a].slot + 1], 128)  # its payload (a frame's bytes)
    h = keys[a].hint
    if h != NULL:
        (<Warmable>h).warm(1)
    # the third: the root's other child, or one of the second's children
    c = 3 - a
    if c >= n:
        c = -1
    b = 2 * a + 1
    if b < n and (c < 0 or _before(keys, b, c)):
        c = b
    b += 1
    if b < n and (c < 0 or _before(keys, b, c)):
        c = b
    if c < 0:
        return
    h = keys[c].hint
    if h != NULL:
        prefetch_span(h, 256)
        s = keys[c].slot
        prefetch(&pay[3 * s])
        prefetch(&clock._src[s])


cdef enum:
    # pending events from which the clock readies the next events' state (_warm_ahead):
    # fewer, and every actor's state is in the caches anyway (1,000 Cyclon nodes keep
    # about 1,000 pending, 10,000 about 10,000); the hints would only cost instructions
    _WARM_FROM = 2048


cdef inline object _take(list pay, Py_ssize_t i):
    """pay[i], with None left in its place (the list's reference moves to the caller)."""
    cdef object o = <object>PyList_GET_ITEM(pay, i)
    Py_INCREF(None)
    PyList_SET_ITEM(pay, i, None)
    Py_DECREF(o)
    return o


cdef inline void _put(list pay, Py_ssize_t i, object o):
    """pay[i] = o where pay[i] holds None (a free slot's place)."""
    Py_INCREF(o)
    PyList_SET_ITEM(pay, i, o)
    Py_DECREF(None)
