# C types of toolbox_gradient.py for the compiled build (Cython augmenting declarations:
# the .py file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.runtime.actor cimport Role
from dgdrf.overlay.gradient cimport GradientBase, exchange_frame, preferred

cdef long _SHUFFLE
cdef long _REPLY


cdef class ToolboxGradient(GradientBase):
    cdef public object old_threshold
    cdef public long long clock
    cdef public dict _published
    cdef public object _awaiting
    cdef public long long _round

    cdef _send_exchange(self, long long dst, long tag)
    cpdef _answer(self, long long src_id, str src, utility, age, entries)
    cpdef _replied(self, str src, utility, age, entries)
    @cython.locals(view=dict, clock=cython.longlong, birth=cython.longlong, held=tuple)
    cpdef _merge(self, entries)
