# C types of toolbox_gradient.py for the compiled build (Cython augmenting declarations:
# the .py file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.runtime.actor cimport Role, RoleEvent
from dgdrf.overlay.gradient cimport GradientBase, exchange_frame, preferred, _exchange_frame_ids, _read_exchange_ids, _tiebreak_id, _eq39_key, _key_before, _find, _grown, _remove, _all_below

cdef long _SHUFFLE
cdef long _REPLY
cdef double _NEG_INF
cdef long long[::1] _EID
cdef double[::1] _EU
cdef long long[::1] _EAGE
cdef long long[::1] _ORDER
cdef long long[::1] _ET
cdef long long[::1] _KG
cdef double[::1] _KV
cdef long long[::1] _KT


cdef class ToolboxGradient


cdef class _Timeout(RoleEvent):
    cdef public ToolboxGradient gradient
    cdef public str partner
    cdef public long long round
    cdef public bint pending

    cpdef fire(self, tuple args)


cdef class ToolboxGradient(GradientBase):
    cdef public object old_threshold
    cdef public long long clock
    cdef public dict _published
    cdef public object _awaiting
    cdef public long long _round
    cdef public Py_ssize_t _n
    cdef long long[::1] _ids
    cdef double[::1] _us
    cdef long long[::1] _births
    cdef long long[::1] _ts
    cdef double _hu
    cdef long long _hs
    cdef public Py_ssize_t _pn
    cdef public _Timeout _timeout_event
    cdef long long[::1] _pids
    cdef double[::1] _pus
    cdef long long[::1] _pbirths

    cpdef double[::1] sample_utilities(self)
    cpdef bint is_centre(self) except -1
    @cython.locals(k=Py_ssize_t)
    cdef _publish(self)
    cpdef on_sampler(self, sampler)
    cpdef _timeout(self, str partner, long long round_)

    cdef _send_exchange(self, long long dst, long tag)
    @cython.locals(m=Py_ssize_t)
    cpdef on_frame(self, long long src, bytes data)
    cpdef exchange(self)
    cpdef _answer(self, long long src_id, str src, utility, age, entries)
    cpdef _replied(self, str src, utility, age, entries)
    @cython.locals(view=dict, clock=cython.longlong, birth=cython.longlong, held=tuple, m=Py_ssize_t)
    cpdef _merge(self, entries)
    @cython.locals(clock=cython.longlong, j=Py_ssize_t, i=cython.longlong, birth=cython.longlong, k=Py_ssize_t, n=Py_ssize_t, oldest=Py_ssize_t)
    cdef _merge_arrays(self, Py_ssize_t m)
    @cython.locals(n=Py_ssize_t, k=Py_ssize_t, j=Py_ssize_t, b=Py_ssize_t, r=Py_ssize_t, P=Py_ssize_t, names=list)
    cdef _keep_preferred(self, double own)
    cdef _room(self, Py_ssize_t n)
    @cython.locals(k=Py_ssize_t)
    cdef _append(self, long long i, double u, long long birth)
    cdef _remove_at(self, Py_ssize_t k)


cpdef _reserve(Py_ssize_t n)
