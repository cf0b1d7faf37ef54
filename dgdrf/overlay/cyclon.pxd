# C types of cyclon.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.runtime.actor cimport Role
from dgdrf.runtime.addresses cimport AddressBook
from dgdrf.overlay.descriptors cimport Descriptors, put
from dgdrf.runtime.twister cimport Twister, random_of
from cpython.object cimport PyObject
from dgdrf.runtime.prefetch cimport prefetch, prefetch_span

cdef long _SHUFFLE
cdef long _REPLY
cdef long _PEERS
cdef enum:
    _W = 3  # fields per view entry (cyclon.py), a constant the C compiler folds
cdef Descriptors _IN
cdef Descriptors _OUT
cdef long long[::1] _PERM
cdef long long[::1] _SENT
cdef long long[::1] _POS
cdef long long _POS_BASE
cdef long long _POS_PLACES


ctypedef void** _Refs  # a list's item pointers (Cyclon._close)


cdef class Cyclon(Role):
    # Hot fields first: a shuffle and a frame read these (with the role's own, before
    # them) and, of the view's array, its data pointer, all in the object's first three
    # cache lines, which the clock hints ahead (Cyclon.warm); the rest is read rarely.
    cdef list _vprof
    cdef Twister _mt
    cdef Py_ssize_t _vend
    cdef public Py_ssize_t _vn
    cdef public Py_ssize_t c
    cdef public Py_ssize_t l
    cdef public long long cycle
    cdef public long long _me
    cdef long long _pending
    cdef Py_ssize_t _pending_n
    cdef Py_ssize_t _pending_at
    cdef public long long _last_peer
    cdef public dict _sent
    cdef bint _publishes
    cdef public object profile
    cdef public bint alone
    cdef AddressBook _book
    cdef long long[::1] _v
    # read rarely
    cdef public object period
    cdef public object bootstrap
    cdef dict _d
    cdef object _rnd
    cdef public str me
    cdef readonly tuple listeners
    cdef readonly tuple view_listeners

    @cython.locals(k=Py_ssize_t)
    cdef Py_ssize_t _find(self, long long i) noexcept
    cdef void warm(self, int stage) noexcept
    cdef int _remove(self, Py_ssize_t k) except -1
    @cython.locals(w=Py_ssize_t, k=Py_ssize_t, v=cython.p_longlong, ob=_Refs, p=cython.p_void)
    cdef _close(self)
    @cython.locals(k=Py_ssize_t)
    cdef int _append(self, long long i, long long birth, profile) except -1
    cdef double _random(self) except? -1.0
    @cython.locals(n=Py_ssize_t, j=Py_ssize_t, r=Py_ssize_t, t=cython.longlong, x=double, got=Py_ssize_t, draws=Py_ssize_t, d=Py_ssize_t)
    cdef Py_ssize_t _draw(self, Py_ssize_t k) except -1
    @cython.locals(n=Py_ssize_t, x=double)
    cpdef long long random_peer_id(self) except? -2
    cpdef object random_peer(self)
    @cython.locals(m=Py_ssize_t, j=Py_ssize_t, names=list, vprof=list, v=cython.longlong[::1], perm=cython.longlong[::1])
    cpdef list sample_descriptors(self, Py_ssize_t k)
    @cython.locals(m=Py_ssize_t, j=Py_ssize_t, p=Py_ssize_t, vprof=list)
    cpdef Py_ssize_t sample_numbers(self, Py_ssize_t k, long long[::1] ids, double[::1] values) except -1
    @cython.locals(m=Py_ssize_t, k=Py_ssize_t, vprof=list)
    cpdef Py_ssize_t published_numbers(self, long long[::1] ids, long long[::1] ages, double[::1] values) except -1
    @cython.locals(cycle=cython.longlong, o=Py_ssize_t, oldest=cython.longlong, m=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, out=Descriptors, sent=list)
    cpdef shuffle(self)
    cpdef on_frame(self, long long src, bytes data)
    @cython.locals(d=Descriptors, me=cython.longlong, alone=bint, j=Py_ssize_t, i=cython.longlong)
    cdef _take_peers(self)
    cpdef fire_round(self, long which)
    @cython.locals(sent=list, n=Py_ssize_t, j=Py_ssize_t, a=cython.longlong)
    cdef _replied(self, long long src)
    @cython.locals(cycle=cython.longlong, m=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, out=Descriptors)
    cdef _shuffled(self, long long src)
    @cython.locals(d=Descriptors, me=cython.longlong, cycle=cython.longlong, c=Py_ssize_t, nrep=Py_ssize_t, j=Py_ssize_t, e=Py_ssize_t, addr=cython.longlong, age=cython.longlong, k=Py_ssize_t, gone=cython.longlong, base=cython.longlong)
    cdef _merge(self, Py_ssize_t nsent)


@cython.locals(k=Py_ssize_t, i=cython.longlong, base=cython.longlong)
cdef long long _mark(Cyclon cyclon) except -1


@cython.locals(oldest=Py_ssize_t, first=cython.longlong, k=Py_ssize_t)
cpdef Py_ssize_t _oldest(long long[::1] v, Py_ssize_t n)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, idx=list)
cpdef list _sample(list items, Py_ssize_t k, random)


cdef extern from *:
    """
    #define dgdrf_list_slots(o) ((void **)((PyListObject *)(o))->ob_item)
    """
    void** _list_slots "dgdrf_list_slots"(object o) noexcept nogil
