# C types of clock.py for the compiled build (Cython augmenting declarations: the .py
# file is the source; this file only says which classes are extension types and what
# their fields hold). Fields read from Python code are public.

cimport cython
from libc.stdlib cimport realloc, free


cdef struct _Key:
    long long t  # due tick
    long long seq  # scheduling order: the tie-break among events due at the same tick
    Py_ssize_t slot  # where the callback and its arguments are

ctypedef _Key* _KeyArray


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
    cdef list _fns
    cdef list _args
    cdef list _targets
    cdef long long* _src

    cpdef schedule_frame(self, long long delay_ticks, Event deliver, object target, long long src, object data)

    cpdef double now(self)
    cpdef long long now_ticks(self)
    cpdef schedule_ticks(self, long long delay_ticks, fn, tuple args)
    @cython.locals(old=Py_ssize_t, cap=Py_ssize_t, s=Py_ssize_t, keys=cython.p_void, slots=cython.p_void, srcs=cython.p_void)
    cdef int _grow(self) except -1
    @cython.locals(keys=_KeyArray, i=Py_ssize_t, parent=Py_ssize_t, slot=Py_ssize_t)
    cdef Py_ssize_t _push(self, long long t, fn, object args) except -1
    @cython.locals(keys=_KeyArray, last=_Key, top=Py_ssize_t, i=Py_ssize_t, n=Py_ssize_t, child=Py_ssize_t)
    cdef Py_ssize_t _pop(self)
    @cython.locals(n=Py_ssize_t, t=cython.longlong, slot=Py_ssize_t, fns=list, argss=list, targets=list, target=object)
    cdef void _run_heap(self, long long limit) except *
    cdef void _run_slots(self, long long limit) except *
