# C types of clock.py for the compiled build (Cython augmenting declarations: the .py
# file is the source; this file only says which classes are extension types and what
# their fields hold). Fields read from Python code are public.

cimport cython
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.string cimport memcpy
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


cdef enum:
    # a key's order word: the event's scheduling sequence above its payload slot's bits
    _SLOT_BITS = 24


cdef extern from *:
    """
    #define DGDRF_SLOT_MASK ((1ULL << 24) - 1)
    #define DGDRF_SEQ_LIMIT (1ULL << 40)
    """
    const unsigned long long _SLOT_MASK "DGDRF_SLOT_MASK"  # a slot below 2**24 (16,777,216 pending events)
    const unsigned long long _SEQ_LIMIT "DGDRF_SEQ_LIMIT"  # sequences below 2**40, renumbered there


cdef extern from "stdlib.h":
    int posix_memalign(void** memptr, size_t alignment, size_t size) nogil


cdef struct _Key:
    long long t  # due tick
    unsigned long long order  # scheduling sequence (the tie-break at one tick) << _SLOT_BITS | payload slot

ctypedef _Key* _KeyArray


cdef enum:
    _FIFOS = 4  # delays whose repeated events (a periodic round's) queue in order of scheduling


cdef struct _Fifo:
    # the events scheduled with one delay again and again (schedule_repeat): due in the
    # order they were scheduled, since the clock's time only grows; a ring of keys
    long long delay
    _Key* keys
    Py_ssize_t cap
    Py_ssize_t head
    Py_ssize_t n

ctypedef _Fifo* _FifoPtr
ctypedef _Key** _KeyRefs


cdef struct _Held:
    # what a payload slot holds in C: a frame's sender id (schedule_frame) and the
    # Warmable the event will reach, or NULL (borrowed: the event keeps it alive)
    long long src
    PyObject* hint


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
    cdef unsigned long long _seq
    cdef void* _keys_block
    cdef _Key* _keys
    cdef Py_ssize_t* _free
    cdef Py_ssize_t _heap_n
    cdef Py_ssize_t _heap_cap
    cdef Py_ssize_t _nfree
    cdef list _pay
    cdef _Held* _held
    cdef _Fifo _fifos[_FIFOS]
    cdef Py_ssize_t _nfifo
    cdef Py_ssize_t _fifo_n  # events in the fifos

    @cython.locals(slot=Py_ssize_t)
    cpdef schedule_frame(self, long long delay_ticks, Event deliver, object target, long long src, object data)
    cpdef schedule_event(self, long long delay_ticks, Event event, Warmable hint)
    @cython.locals(f=Py_ssize_t, q=_FifoPtr, k=Py_ssize_t, keys=_KeyArray, j=Py_ssize_t, cap=Py_ssize_t)
    cpdef schedule_repeat(self, long long delay_ticks, Event event, Warmable hint)
    @cython.locals(f=Py_ssize_t, best=Py_ssize_t, q=_FifoPtr, first=_KeyArray)
    cdef Py_ssize_t _first_source(self) noexcept
    cdef long long _due(self, Py_ssize_t source) noexcept
    @cython.locals(q=_FifoPtr, k=_Key)
    cdef Py_ssize_t _take_first(self, Py_ssize_t source) noexcept

    cpdef double now(self)
    cpdef long long now_ticks(self)
    cpdef schedule_ticks(self, long long delay_ticks, fn, tuple args)
    @cython.locals(old=Py_ssize_t, cap=Py_ssize_t, s=Py_ssize_t, block=cython.p_void, slots=cython.p_void, held=cython.p_void)
    cdef int _grow(self) except -1
    @cython.locals(keys=_KeyArray, i=Py_ssize_t, order=cython.ulonglong)
    cdef Py_ssize_t _push(self, long long t, fn, object args, object hint) except -1
    @cython.final
    @cython.locals(slot=Py_ssize_t, order=cython.ulonglong)
    cdef inline unsigned long long _take_slot(self, fn, object args, object hint) except? 0
    @cython.locals(keys=_KeyArray, last=_Key, i=Py_ssize_t, n=Py_ssize_t, child=Py_ssize_t, top=cython.ulonglong)
    cdef Py_ssize_t _pop(self)
    @cython.locals(keys=_KeyArray, i=Py_ssize_t, n=Py_ssize_t, f=Py_ssize_t, j=Py_ssize_t, q=_FifoPtr, refs=_KeyRefs, total=Py_ssize_t)
    cpdef _renumber(self)
    @cython.locals(n=Py_ssize_t, t=cython.longlong, slot=Py_ssize_t, p=Py_ssize_t, pay=list, target=object, source=Py_ssize_t)
    cdef void _run_heap(self, long long limit) except *
    cdef void _run_slots(self, long long limit) except *


cdef inline bint _key_before(_Key a, _Key b) noexcept nogil:
    """Whether key ``a`` runs before key ``b``: by due tick, then by scheduling sequence
    (the order word's high bits; no two pending events share one)."""
    return a.t < b.t or (a.t == b.t and a.order < b.order)


cdef inline bint _before(_Key* keys, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Whether the event at heap position ``a`` runs before the one at ``b``."""
    return _key_before(keys[a], keys[b])


cdef inline int _compare_key_refs(const void* a, const void* b) noexcept nogil:
    """qsort's comparison of two pointers to keys, by the keys."""
    return -1 if _key_before((<_Key**>a)[0][0], (<_Key**>b)[0][0]) else 1


cdef inline void _offer(_Key* best, Py_ssize_t* m, _Key k) noexcept nogil:
    """Keep the three earliest keys offered, earliest first, in best[0:m]."""
    cdef Py_ssize_t j = m[0]
    if j == 3:
        if not _key_before(k, best[2]):
            return
        j = 2
    else:
        m[0] = j + 1
    while j > 0 and _key_before(k, best[j - 1]):
        best[j] = best[j - 1]
        j -= 1
    best[j] = k


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void _warm_ahead(VirtualClock clock) noexcept:
    """Before an event runs, the next three are readied, each a step further
    (:class:`Warmable`): the next one's state is hinted to the cache (its stage 0), the
    one after's objects (stage 1: its own fields are there by now), its event object and
    its payload (a frame's bytes), and the third's object itself and its payload slot. They are guessed
    from the heap (its root, the earlier child of the root, then the earliest of what may
    follow it) and the first three of each queue of repeated events (schedule_repeat);
    a guess that an event scheduled meanwhile overtakes costs a few hints, nothing else.
    The hinted object is beside each event's payload slot (:c:type:`_Held`, a small
    array that stays in the cache); borrowed pointers throughout: a reference count's
    increment would touch what is cold."""
    cdef _Key* keys = clock._keys
    cdef _Held* held = clock._held
    cdef Py_ssize_t n = clock._heap_n, s, a, b, c, f, j, m = 0
    cdef _Key best[3]
    cdef _Fifo* q
    cdef PyObject* h
    cdef PyObject** pay = (<PyListObject*>clock._pay).ob_item
    if n >= 1:
        _offer(best, &m, keys[1])
    if n >= 2:
        a = 3 if n >= 3 and _before(keys, 3, 2) else 2
        _offer(best, &m, keys[a])
        # the heap's third: the root's other child, or one of the second's children
        c = 5 - a
        if c > n:
            c = -1
        b = 2 * a
        if b <= n and (c < 0 or _before(keys, b, c)):
            c = b
        b += 1
        if b <= n and (c < 0 or _before(keys, b, c)):
            c = b
        if c >= 0:
            _offer(best, &m, keys[c])
    for f in range(clock._nfifo):
        q = &clock._fifos[f]
        for j in range(3 if q.n > 3 else q.n):
            _offer(best, &m, q.keys[(q.head + j) & (q.cap - 1)])
    if m == 0:
        return
    h = held[<Py_ssize_t>(best[0].order & _SLOT_MASK)].hint
    if h != NULL:
        (<Warmable>h).warm(0)
    if m == 1:
        return
    s = <Py_ssize_t>(best[1].order & _SLOT_MASK)
    prefetch(pay[3 * s])  # its event object (a Periodic's, one a role: cold at 10^4 nodes)
    prefetch_span(pay[3 * s + 1], 128)  # its payload (a frame's bytes)
    h = held[s].hint
    if h != NULL:
        (<Warmable>h).warm(1)
    if m == 2:
        return
    s = <Py_ssize_t>(best[2].order & _SLOT_MASK)
    h = held[s].hint
    if h != NULL:
        prefetch_span(h, 256)
    prefetch(&pay[3 * s])


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
