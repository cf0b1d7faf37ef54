# C types of draws.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). numpy's bit generator interface (numpy/random/bitgen.h, stable
# since numpy 1.17), declared here so that no numpy header is needed to build.

cimport cython
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid

cdef extern from *:
    """
    #include <stdint.h>
    typedef struct dgdrf_bitgen {
        void *state;
        uint64_t (*next_uint64)(void *st);
        uint32_t (*next_uint32)(void *st);
        double (*next_double)(void *st);
        uint64_t (*next_raw)(void *st);
    } dgdrf_bitgen_t;
    """
    ctypedef struct dgdrf_bitgen_t:
        void* state
        unsigned int (*next_uint32)(void* st) nogil

ctypedef dgdrf_bitgen_t* _BitgenPtr

cdef long long _BATCH[8192]  # a batch of 2 k draws (k <= MAX_WANTED)
cdef long long _PICKED[4096]  # the distinct positions picked so far


cdef inline _BitgenPtr _bitgen_of(object rng):
    """The bit generator behind a numpy ``Generator``, or NULL (anything else)."""
    cdef object capsule
    try:
        capsule = rng.bit_generator.capsule
    except AttributeError:
        return NULL
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        return NULL
    return <_BitgenPtr>PyCapsule_GetPointer(capsule, "BitGenerator")


cdef inline long long _bounded(_BitgenPtr bitgen, unsigned long long r) noexcept:
    """A number in [0, r] (r < 2**32) as ``Generator.integers(0, r + 1)`` draws it:
    none drawn for r = 0, a 32-bit word as it is for r = 2**32 - 1, else Lemire's
    multiply-and-reject on 32-bit words."""
    cdef unsigned long long rng_excl, m, leftover, threshold
    if r == 0:
        return 0
    if r == 0xFFFFFFFF:
        return bitgen.next_uint32(bitgen.state)
    rng_excl = r + 1
    m = <unsigned long long>bitgen.next_uint32(bitgen.state) * rng_excl
    leftover = m & 0xFFFFFFFF
    if leftover < rng_excl:
        threshold = (0xFFFFFFFF - r) % rng_excl
        while leftover < threshold:
            m = <unsigned long long>bitgen.next_uint32(bitgen.state) * rng_excl
            leftover = m & 0xFFFFFFFF
    return <long long>(m >> 32)


@cython.locals(bitgen=_BitgenPtr)
cpdef list distinct_draws(object rng, Py_ssize_t n, Py_ssize_t k, Py_ssize_t exclude=*)
@cython.locals(m=Py_ssize_t, r=cython.ulonglong, got=Py_ssize_t, x=Py_ssize_t, y=Py_ssize_t, i=cython.longlong, new=bint, picks=list)
cdef list _distinct_draws_c(_BitgenPtr bitgen, Py_ssize_t n, Py_ssize_t k, Py_ssize_t exclude)
@cython.locals(bitgen=_BitgenPtr)
cpdef bint _c_draws_agree() except -1
