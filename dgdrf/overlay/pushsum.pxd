# C types of pushsum.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public. The masses stay
# Python ints (fixed point beyond 64 bits): only the bookkeeping around them is typed.

cimport cython
from dgdrf.runtime.actor cimport Role
from dgdrf.overlay.cyclon cimport Cyclon


cdef class PushSum(Role):
    cdef public list s
    cdef public object w
    cdef public Cyclon sampler
    cdef public object period
    cdef public long long rounds
    cdef public list sent_mass
    cdef public list received_mass
    cdef public object rnd

    @cython.locals(hs=list, i=Py_ssize_t, n=Py_ssize_t, s=list, x=object, h=object, peer=cython.longlong)
    cpdef round(self)
    cpdef on_share_frame(self, str src, bytes data)
