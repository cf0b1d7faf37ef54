# C types of gradient.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.runtime.actor cimport Role
from dgdrf.overlay.cyclon cimport Cyclon

cdef double _NEG_INF


cdef class GradientBase(Role):
    cdef public object utility
    cdef public Py_ssize_t P
    cdef public object period
    cdef public Cyclon sampler
    cdef public object validation_timeout
    cdef public bint idle_quiet
    cdef public dict view
    cdef public dict _checks
    cdef public long long _check_seq
    cdef public object rnd
    cdef public object stop_after
    cdef public str me
    cdef public object _salt_crc

    @cython.locals(sample=dict, own=double)
    cpdef bint is_centre(self) except -1
    cpdef object tiebreak_of(self, addr)


cdef class Gradient(GradientBase):
    cdef public Py_ssize_t candidates
    cdef public long long stamp
    cdef public dict _fresh
    cdef public list _ranked
    cdef public dict _rank_key
    cdef public list _by_tiebreak
    cdef public object _fresh_limit
    cdef public Py_ssize_t _idle_limit
    cdef public object _awaiting
    cdef public dict _suspects
    cdef public dict _gone
    cdef public long long _ranked_version
    cdef public object _last_selection

    cpdef tuple _descriptor(self)
    cpdef list _entries(self)
    @cython.locals(fresh=dict, gone=dict, view=dict, suspects=dict, heard=dict, known=tuple)
    cpdef _merge(self, src, utility, stamp, entries)
    cpdef tuple _key(self, addr, u)
    cpdef _rank(self, addr, u)
    cpdef _unrank(self, addr)
    @cython.locals(fresh=dict, extra=dict, source=dict, above=list, below=list, ranked=list, best=list, view=dict, P=Py_ssize_t, start=Py_ssize_t, taken=Py_ssize_t, i=Py_ssize_t, need=Py_ssize_t)
    cpdef _select(self, dict heard=*, own=*)
    @cython.locals(fresh=dict, view=dict, key=tuple, keys=list, P=Py_ssize_t, taken=Py_ssize_t)
    cpdef _select_idle(self, dict extra)
    cpdef _remember(self, addr, u)
    @cython.locals(by_tiebreak=list)
    cpdef _drop(self, addr)
    @cython.locals(view=dict, fresh=dict, out=dict)
    cpdef _reselect(self, dict extra, own, worst)


cpdef Py_ssize_t _count_missing(dict keys, dict of) except -1
cpdef bint _shadows(dict extra, dict fresh, dict view) except -1

@cython.locals(n=Py_ssize_t, k=Py_ssize_t, r=Py_ssize_t)
cpdef object choice(rnd, list seq)
@cython.locals(u=double, t=cython.longlong, own=double)
cpdef tuple _preference(u, t, addr, own)
