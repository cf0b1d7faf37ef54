# C types of pushsum.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public. The masses stay
# Python ints (fixed point beyond 64 bits): only the bookkeeping around them is typed.
# _share_frame and _read_share are the share frame's typed codec (issue 34): msgpack's
# bytes of [28, [bin, ...], bin], each bin a mass as int_to_bytes writes it, made and
# read with CPython's own integer <-> bytes conversions; None where only msgpack's
# general path goes (pushsum.py then takes it).

cimport cython
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from dgdrf.runtime.actor cimport Actor, Role
from dgdrf.overlay.cyclon cimport Cyclon

cdef extern from *:
    """
    /* int_to_bytes and bytes_to_int of pushsum.py in C: the minimal signed big-endian bytes
       of a Python int (bit_length // 8 + 1 of them), and back. CPython 3.13 added an
       argument to _PyLong_AsByteArray and made _PyLong_NumBits return int64_t. */
    static long long dgdrf_long_nbits(PyObject *v) {
        return (long long)_PyLong_NumBits(v);
    }
    static int dgdrf_long_to_be(PyObject *v, unsigned char *out, size_t n) {
    #if PY_VERSION_HEX >= 0x030D0000
        return _PyLong_AsByteArray((PyLongObject *)v, out, n, 0, 1, 1);
    #else
        return _PyLong_AsByteArray((PyLongObject *)v, out, n, 0, 1);
    #endif
    }
    static PyObject *dgdrf_long_from_be(const unsigned char *b, size_t n) {
        return _PyLong_FromByteArray(b, n, 0, 1);
    }
    """
    long long dgdrf_long_nbits(object v) except? -1
    int dgdrf_long_to_be(object v, unsigned char* out, size_t n) except -1
    object dgdrf_long_from_be(const unsigned char* b, size_t n)


cdef long _SHARE


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
    cpdef on_frame(self, long long src, bytes data)
    @cython.locals(s=list, received=list, n=Py_ssize_t, i=Py_ssize_t, h=object)
    cpdef _add(self, list hs, hw)


cdef inline object _share_frame(list hs, object hw):
    """The share frame [28, [h...], hw], or None (more than 15 components, a mass of more
    than 255 bytes)."""
    cdef Py_ssize_t k = len(hs), j, size = 3, n
    cdef long long bits[16]
    cdef object h
    cdef bytes out
    cdef unsigned char* q
    if k >= 16:
        return None
    for j in range(k + 1):
        h = hs[j] if j < k else hw
        if type(h) is not int:
            return None
        bits[j] = dgdrf_long_nbits(h) // 8 + 1
        if bits[j] > 255:
            return None
        size += 2 + bits[j]
    out = PyBytes_FromStringAndSize(NULL, size)
    q = <unsigned char*>PyBytes_AS_STRING(out)
    q[0] = 0x93
    q[1] = <unsigned char>_SHARE
    q[2] = <unsigned char>(0x90 | k)
    q += 3
    for j in range(k + 1):
        h = hs[j] if j < k else hw
        n = bits[j]
        q[0] = 0xc4
        q[1] = <unsigned char>n
        dgdrf_long_to_be(h, q + 2, n)
        q += 2 + n
    return out


cdef inline object _read_share(bytes data, Py_ssize_t k):
    """The masses of a share frame with ``k`` components, [h..., hw], or None (another
    shape: the general path reads it, and reports it if it is wrong)."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), pos = 3, j, n
    cdef list out = []
    if k >= 16 or size < 3 or p[0] != 0x93 or p[2] != (0x90 | k):
        return None
    for j in range(k + 1):
        if pos + 2 > size or p[pos] != 0xc4:
            return None
        n = p[pos + 1]
        if pos + 2 + n > size:
            return None
        out.append(dgdrf_long_from_be(p + pos + 2, n))
        pos += 2 + n
    if pos != size:
        return None
    return out
