# C types of pushsum.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.
# The masses: while every one fits, a node keeps s, w, sent_mass and received_mass as
# 128-bit C integers in _m (s..., w, then sent's k + 1, then received's k + 1); a sum that
# would pass 128 bits moves it to the Python int lists for good (_big), before anything
# changes. All int128 arithmetic is in the C below, checked; Cython only passes pointers.
# _round_small and _add_share_small are the share frame's typed codec for the C integers
# (issue 34): msgpack's bytes of [28, [bin, ...], bin], each bin a mass as int_to_bytes
# writes it (minimal signed big-endian). A node on Python ints, and a frame the C codec
# declines, take msgpack's path in pushsum.py, as the interpreted build does.

cimport cython
from dgdrf.runtime.prefetch cimport prefetch_span
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from dgdrf.runtime.actor cimport Role
from dgdrf.overlay.cyclon cimport Cyclon

cdef extern from *:
    """
    /* A Python int's bit length and its big-endian bytes (for dgdrf_long_to_i128 below).
       CPython 3.13 added an argument to _PyLong_AsByteArray and made _PyLong_NumBits
       return int64_t. */
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

    /* Masses as 128-bit integers (GCC and Clang's __int128). */
    typedef __int128 dgdrf_i128;
    typedef unsigned __int128 dgdrf_u128;

    /* The bytes int_to_bytes gives x: bit_length(|x|) // 8 + 1 (at most 17). */
    static Py_ssize_t dgdrf_i128_nbytes(dgdrf_i128 x) {
        dgdrf_u128 u = x < 0 ? (dgdrf_u128)0 - (dgdrf_u128)x : (dgdrf_u128)x;
        unsigned long long hi = (unsigned long long)(u >> 64), lo = (unsigned long long)u;
        int bits = hi ? 128 - __builtin_clzll(hi) : (lo ? 64 - __builtin_clzll(lo) : 0);
        return bits / 8 + 1;
    }
    /* msgpack's bin 8 of x's n bytes (two's complement, big-endian); the end written. */
    static unsigned char *dgdrf_i128_bin(dgdrf_i128 x, Py_ssize_t n, unsigned char *q) {
        Py_ssize_t i;
        q[0] = 0xc4;
        q[1] = (unsigned char)n;
        for (i = 0; i < n; i++)
            q[1 + n - i] = i < 16 ? (unsigned char)((dgdrf_u128)x >> (8 * i)) : (x < 0 ? 0xff : 0);
        return q + 2 + n;
    }
    /* bytes_to_int of n big-endian bytes, if they fit (n <= 16). */
    static int dgdrf_i128_read(const unsigned char *b, Py_ssize_t n, dgdrf_i128 *out) {
        dgdrf_u128 u = 0;
        Py_ssize_t i;
        if (n > 16) return 0;
        for (i = 0; i < n; i++) u = (u << 8) | b[i];
        if (n > 0 && n < 16 && (b[0] & 0x80)) u |= ~(dgdrf_u128)0 << (8 * n);
        *out = (dgdrf_i128)u;
        return 1;
    }
    static PyObject *dgdrf_i128_to_long(dgdrf_i128 x) {
        unsigned char b[16];
        int i;
        for (i = 0; i < 16; i++) b[i] = (unsigned char)((dgdrf_u128)x >> (8 * i));
        return _PyLong_FromByteArray(b, 16, 1, 1);
    }
    /* A Python int as a 128-bit integer: 1, or 0 if it does not fit, -1 on error. */
    static int dgdrf_long_to_i128(PyObject *v, dgdrf_i128 *out) {
        unsigned char b[16];
        long long bits = dgdrf_long_nbits(v);
        if (bits < 0) return -1;
        if (bits > 127) return 0;
        if (dgdrf_long_to_be(v, b, 16) < 0) return -1;
        return dgdrf_i128_read(b, 16, out);
    }
    /* Algorithm 2's halving on m = [s..., w, sent..., received...] (k components): h the
       halves (floor, as //), kept m - h, sent + h. 0, and nothing changed, if a sent
       counter would pass 128 bits. */
    static int dgdrf_ps_halve(dgdrf_i128 *m, Py_ssize_t k, dgdrf_i128 *h) {
        dgdrf_i128 sent[16];
        Py_ssize_t j;
        for (j = 0; j <= k; j++) {
            h[j] = m[j] >> 1;  /* arithmetic shift: floor division by 2 */
            if (__builtin_add_overflow(m[k + 1 + j], h[j], &sent[j])) return 0;
        }
        for (j = 0; j <= k; j++) {
            m[j] -= h[j];
            m[k + 1 + j] = sent[j];
        }
        return 1;
    }
    /* A share h (k + 1 masses) taken in: masses and received + h. 0, and nothing
       changed, if a sum would pass 128 bits. */
    static int dgdrf_ps_take(dgdrf_i128 *m, Py_ssize_t k, const dgdrf_i128 *h) {
        dgdrf_i128 mass[16], received[16];
        Py_ssize_t j;
        for (j = 0; j <= k; j++)
            if (__builtin_add_overflow(m[j], h[j], &mass[j]) || __builtin_add_overflow(m[2 * k + 2 + j], h[j], &received[j])) return 0;
        for (j = 0; j <= k; j++) {
            m[j] = mass[j];
            m[2 * k + 2 + j] = received[j];
        }
        return 1;
    }
    """
    long long dgdrf_long_nbits(object v) except? -1
    int dgdrf_long_to_be(object v, unsigned char* out, size_t n) except -1
    ctypedef long long dgdrf_i128  # __int128: only passed to the functions here
    Py_ssize_t dgdrf_i128_nbytes(dgdrf_i128 x)
    unsigned char* dgdrf_i128_bin(dgdrf_i128 x, Py_ssize_t n, unsigned char* q)
    bint dgdrf_i128_read(const unsigned char* b, Py_ssize_t n, dgdrf_i128* out)
    object dgdrf_i128_to_long(dgdrf_i128 x)
    int dgdrf_long_to_i128(object v, dgdrf_i128* out) except -1
    bint dgdrf_ps_halve(dgdrf_i128* m, Py_ssize_t k, dgdrf_i128* h)
    bint dgdrf_ps_take(dgdrf_i128* m, Py_ssize_t k, const dgdrf_i128* h)


cdef long _SHARE


cdef class PushSum(Role):
    # what a round or a share reads first, at the object's start (the clock hints its
    # first lines ahead, PushSum.warm)
    cdef public Cyclon sampler
    cdef public long long rounds
    cdef Py_ssize_t _k
    cdef readonly bint _big
    cdef dgdrf_i128 _m[48]  # while not _big: s..., w, sent..., received... (3 (k + 1) <= 48)
    cdef list _s
    cdef object _w
    cdef list _sent
    cdef list _received
    cdef public object period
    cdef public object rnd

    @cython.locals(hs=list, i=Py_ssize_t, n=Py_ssize_t, s=list, sent=list, x=object, h=object, peer=cython.longlong, frame=object)
    cpdef round(self)
    cpdef on_frame(self, long long src, bytes data)
    cpdef fire_round(self, long which)
    @cython.locals(s=list, received=list, n=Py_ssize_t, i=Py_ssize_t, h=object)
    cpdef _add(self, list hs, hw)
    cpdef _to_big(self)
    cdef void warm(self, int stage) noexcept


cdef inline void _to_small(PushSum p):
    """The masses into C integers, if there are at most 15 components and every one fits
    (else they stay Python ints)."""
    cdef Py_ssize_t k = p._k, j
    cdef dgdrf_i128 m[48]
    cdef list values
    if k >= 16:
        return
    values = p._s + [p._w] + p._sent + p._received
    for j in range(3 * k + 3):
        if type(values[j]) is not int or not dgdrf_long_to_i128(values[j], &m[j]):
            return
    memcpy(p._m, m, (3 * k + 3) * sizeof(dgdrf_i128))
    p._s = p._sent = p._received = None
    p._w = None
    p._big = False


cdef inline list _small_list(PushSum p, Py_ssize_t start, Py_ssize_t n):
    """n of the C masses from ``start``, as Python ints."""
    cdef Py_ssize_t j
    return [dgdrf_i128_to_long(p._m[start + j]) for j in range(n)]


cdef inline object _round_small(PushSum p):
    """Algorithm 2's round on the C masses: the share's frame, or None (a sent counter
    would pass 128 bits; nothing changed)."""
    cdef Py_ssize_t k = p._k, j, size = 3
    cdef dgdrf_i128 h[16]
    cdef Py_ssize_t nb[16]
    cdef bytes out
    cdef unsigned char* q
    if not dgdrf_ps_halve(p._m, k, h):
        return None
    for j in range(k + 1):
        nb[j] = dgdrf_i128_nbytes(h[j])
        size += 2 + nb[j]
    out = PyBytes_FromStringAndSize(NULL, size)
    q = <unsigned char*>PyBytes_AS_STRING(out)
    q[0] = 0x93
    q[1] = <unsigned char>_SHARE
    q[2] = <unsigned char>(0x90 | k)
    q += 3
    for j in range(k + 1):
        q = dgdrf_i128_bin(h[j], nb[j], q)
    return out


cdef inline bint _add_share_small(PushSum p, bytes data):
    """A share frame read and added to the C masses; False, and nothing changed, if it has
    another shape, a mass of more than 16 bytes, or a sum would pass 128 bits."""
    cdef const unsigned char* b = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), pos = 3, j, n, k = p._k
    cdef dgdrf_i128 h[16]
    if size < 3 or b[0] != 0x93 or b[2] != (0x90 | k):
        return False
    for j in range(k + 1):
        if pos + 2 > size or b[pos] != 0xc4:
            return False
        n = b[pos + 1]
        if pos + 2 + n > size or not dgdrf_i128_read(b + pos + 2, n, &h[j]):
            return False
        pos += 2 + n
    if pos != size:
        return False
    return dgdrf_ps_take(p._m, k, h)


cdef inline bint _add_small(PushSum p, list hs, object hw):
    """A share of Python ints added to the C masses; False, and nothing changed, if one
    does not fit or a sum would pass 128 bits."""
    cdef Py_ssize_t k = p._k, j
    cdef dgdrf_i128 h[16]
    cdef object x
    if len(hs) != k:
        return False
    for j in range(k + 1):
        x = hs[j] if j < k else hw
        if type(x) is not int or not dgdrf_long_to_i128(x, &h[j]):
            return False
    return dgdrf_ps_take(p._m, k, h)
