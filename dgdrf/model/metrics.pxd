# C types of metrics.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). PDGDRF's Gini test (eq. 4.7) runs twice per decision on a few
# values: in C doubles, whose arithmetic rounds as Python floats' does (no fused
# multiply-add on the x86-64 baseline), so both builds give the same bits.

cimport cython


@cython.locals(i=Py_ssize_t, j=Py_ssize_t, end=Py_ssize_t, half=Py_ssize_t, res=double, r0=double, r1=double, r2=double, r3=double, r4=double, r5=double, r6=double, r7=double)
cdef double _pairwise_sum(double[::1] x, Py_ssize_t lo, Py_ssize_t n) noexcept
@cython.locals(n=Py_ssize_t)
cpdef double _gini_small(list x) except? -1.0
cdef double[::1] _GX
cdef double[::1] _GT
@cython.locals(m=Py_ssize_t, k=Py_ssize_t, u=double, raised=double)
cpdef bint gini_falls(double share, double step, double[::1] utilities, Py_ssize_t n) except -1
@cython.locals(k=Py_ssize_t, j=Py_ssize_t, v=double, total=double, g=double)
cdef double _gini_of(double[::1] x, double[::1] terms, Py_ssize_t n) noexcept
