# C types of dgdrf.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). A tick's questions to the home users and the gradient are C calls,
# and PDGDRF's Gini test takes the gradient's array of utilities in C.

cimport cython
from dgdrf.overlay.gradient cimport GradientBase
from dgdrf.model.metrics cimport gini_falls
from dgdrf.policies.local cimport HomeUsers


cdef class TickState:
    cdef public HomeUsers home
    cdef public bint parallel
    cdef public bint announce
    cdef public double utility_then
    cdef public object gradient
    cdef public bint validating


@cython.locals(u=double, low=tuple)
cdef _tick(TickState t, object sched)
@cython.locals(us=cython.double[::1])
cdef bint _sample_gini_falls(object gradient, double share, double step) except -1
cdef object _lowest(HomeUsers home)
cdef bint _is_centre(object gradient) except -1
