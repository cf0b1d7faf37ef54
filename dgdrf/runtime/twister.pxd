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
    cdef Py_ssize_t _index  # before the state's view: a draw reads both, in the object's first line (Cyclon.warm)
    cdef unsigned int[::1] _mt
    cdef object _gauss

    @cython.locals(i=Py_ssize_t, j=Py_ssize_t, n=Py_ssize_t, mt=cython.uint[::1])
    cpdef _init_by_array(self, unsigned int[::1] key)
    @cython.locals(k=Py_ssize_t, y=cython.uint)
    cdef void _refill(self) noexcept
    cdef unsigned int _next(self) noexcept
    @cython.locals(a=cython.uint, b=cython.uint)
    cpdef double random(self) except? -1.0
    @cython.locals(out=object, shift=Py_ssize_t, w=cython.uint)
    cpdef object getrandbits(self, Py_ssize_t k)
    @cython.locals(k=Py_ssize_t, m=Py_ssize_t, r=cython.ulonglong)
    cpdef Py_ssize_t randbelow(self, Py_ssize_t n) except -1


# The draws inlined where they are made (Cyclon's, a C call and two more a random() in
# the methods): the same steps as Twister._next and Twister.random, which call them.
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline unsigned int next_word(Twister t) noexcept:
    """genrand_uint32: the next tempered 32-bit word."""
    cdef unsigned int y
    if t._index >= 624:
        t._refill()
    y = t._mt[t._index]
    t._index += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680U
    y ^= (y << 15) & 0xEFC60000U
    y ^= y >> 18
    return y


cdef inline double random_of(Twister t) noexcept:
    """``random.Random.random()``: 53 random bits in [0, 1)."""
    cdef unsigned int a = next_word(t) >> 5
    cdef unsigned int b = next_word(t) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
