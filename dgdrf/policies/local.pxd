# C types of local.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.overlay.gradient cimport UtilitySource
from dgdrf.model.resources cimport task_dominant_share


cdef class HomeUsers(UtilitySource):
    cdef public dict users
    cdef public object _lowest
    cdef public double _utility
    cdef public double _min
    cdef public bint _stale
    cdef public object meter
    cdef public object _meter_version

    cpdef object lowest(self)
    @cython.final
    cdef inline void _refresh(self) except *
    @cython.locals(best=object, key=tuple, meter=object, version=object)
    @cython.final
    cdef void _recompute(self) except *
    cpdef double utility(self) except? -1.0
