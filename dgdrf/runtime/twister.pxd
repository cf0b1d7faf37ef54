# C types of twister.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). MT19937 on 32-bit words, as Modules/_randommodule.c computes it.

cimport cython

cdef Py_ssize_t _N
cdef Py_ssize_t _M
cdef unsigned int _MATRIX_A
cdef unsigned int _UPPER
cdef unsigned int _LOWER
cdef unsigned int _TEMPER_B
cdef unsigned int _TEMPER_C
cdef unsigned int _WORD


cdef class Twister:
    cdef unsigned int[::1] _mt
    cdef Py_ssize_t _index
    cdef object _gauss

    @cython.locals(i=Py_ssize_t, j=Py_ssize_t, n=Py_ssize_t, mt=cython.uint[::1])
    cpdef _init_by_array(self, unsigned int[::1] key)
    @cython.locals(k=Py_ssize_t, y=cython.uint)
    cdef int _refill(self) except -1
    @cython.locals(y=cython.uint)
    cdef unsigned int _next(self) except? 0
    @cython.locals(a=cython.uint, b=cython.uint)
    cpdef double random(self) except? -1.0
    @cython.locals(out=object, shift=Py_ssize_t, w=cython.uint)
    cpdef object getrandbits(self, Py_ssize_t k)
    @cython.locals(k=Py_ssize_t, m=Py_ssize_t, r=cython.ulonglong)
    cpdef Py_ssize_t randbelow(self, Py_ssize_t n) except -1
