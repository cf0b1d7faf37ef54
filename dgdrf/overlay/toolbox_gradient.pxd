# C types of toolbox_gradient.py for the compiled build (Cython augmenting declarations:
# the .py file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.overlay.gradient cimport GradientBase


cdef class ToolboxGradient(GradientBase):
    cdef public object old_threshold
    cdef public long long clock
    cdef public dict _published
    cdef public object _awaiting
    cdef public long long _round

    cpdef list _entries(self)
    @cython.locals(view=dict, clock=cython.longlong, birth=cython.longlong, held=tuple)
    cpdef _merge(self, entries)
