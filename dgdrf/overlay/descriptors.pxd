# C types of descriptors.py for the compiled build (Cython augmenting declarations: the .py
# file is the source), and the typed codec: _write makes the msgpack frame of a
# Descriptors in C, _read fills one from a frame; each returns "not handled" (None, False)
# for what only msgpack's general path does, and descriptors.py then takes that path.

cimport cython
from libc.string cimport memcpy
from libc.stdint cimport uint64_t, uint32_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from dgdrf.runtime.addresses cimport AddressBook, find_utf8, wire_of


cdef class Descriptors:
    cdef public Py_ssize_t capacity
    cdef public long long[::1] ids
    cdef public long long[::1] ages
    cdef public list profiles
    cdef public Py_ssize_t n
    cdef AddressBook _book

    cpdef clear(self)
    @cython.locals(n=Py_ssize_t)
    cpdef add(self, long long i, long long age, profile)
    cpdef frame(self, long tag)
    cpdef read(self, bytes data)
    cpdef read_addresses(self, bytes data)


cdef inline int put(Descriptors d, long long i, long long age, object profile) except -1:
    """Descriptors.add inlined where the compiled core appends (a frame read, a shuffle's
    entries written): the same steps without a method call."""
    cdef Py_ssize_t n = d.n
    if n == d.capacity:
        d._grow()
    d.ids[n] = i
    d.ages[n] = age
    d.profiles[n] = profile
    d.n = n + 1
    return 0


cdef inline Py_ssize_t _uint_bytes(unsigned long long v) noexcept nogil:
    """The bytes after the marker of msgpack's smallest uint8/16/32/64 for ``v`` >= 128."""
    if v < 256:
        return 1
    if v < 65536:
        return 2
    if v < 4294967296ULL:
        return 4
    return 8


cdef inline Py_ssize_t _uint_size(unsigned long long v) noexcept nogil:
    """The bytes of msgpack's encoding of the non-negative integer ``v``."""
    return 1 if v < 128 else 1 + _uint_bytes(v)


cdef inline void _put_be(unsigned char* q, unsigned long long v, Py_ssize_t n) noexcept nogil:
    """The low ``n`` bytes of ``v``, big-endian (msgpack's byte order)."""
    cdef Py_ssize_t k
    for k in range(n):
        q[k] = <unsigned char>(v >> (8 * (n - 1 - k)))


cdef inline unsigned long long _get_be(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """``n`` big-endian bytes as an unsigned integer."""
    cdef unsigned long long v = 0
    cdef Py_ssize_t k
    for k in range(n):
        v = (v << 8) | p[k]
    return v


cdef inline unsigned char* _put_uint(unsigned char* q, unsigned long long v) noexcept nogil:
    """msgpack's encoding of the non-negative integer ``v``: positive fixint, or the
    uint8/16/32/64 marker (0xcc-0xcf) and its bytes."""
    cdef Py_ssize_t n
    if v < 128:
        q[0] = <unsigned char>v
        return q + 1
    n = _uint_bytes(v)
    q[0] = <unsigned char>(0xcc if n == 1 else 0xcd if n == 2 else 0xce if n == 4 else 0xcf)
    _put_be(q + 1, v, n)
    return q + 1 + n


cdef inline Py_ssize_t _get_array_header(const unsigned char* p, Py_ssize_t size, Py_ssize_t pos, Py_ssize_t* n) noexcept nogil:
    """A msgpack array header at ``pos`` (fixarray or array16): the position after it,
    its length in ``n``; -1 for anything else."""
    cdef unsigned char b
    if pos >= size:
        return -1
    b = p[pos]
    if b & 0xf0 == 0x90:
        n[0] = b & 0x0f
        return pos + 1
    if b == 0xdc and pos + 3 <= size:
        n[0] = <Py_ssize_t>_get_be(p + pos + 1, 2)
        return pos + 3
    return -1


cdef inline Py_ssize_t _frame_list(const unsigned char* p, Py_ssize_t size, Py_ssize_t* n) noexcept nogil:
    """A frame ``[tag, [...]]`` (tag below 128): the position of its list's first item,
    the list's length in ``n``; -1 for anything else."""
    if size < 3 or p[0] != 0x92 or p[1] >= 0x80:
        return -1
    return _get_array_header(p, size, 2, n)


cdef inline Py_ssize_t _get_str_header(const unsigned char* p, Py_ssize_t size, Py_ssize_t pos, Py_ssize_t* ln) noexcept nogil:
    """A msgpack str header at ``pos`` (fixstr, str8, str16) whose bytes are all in the
    frame: the position of the bytes, their length in ``ln``; -1 for anything else."""
    cdef unsigned char b
    if pos >= size:
        return -1
    b = p[pos]
    if b & 0xe0 == 0xa0:
        ln[0] = b & 0x1f
        pos += 1
    elif b == 0xd9 and pos + 2 <= size:
        ln[0] = p[pos + 1]
        pos += 2
    elif b == 0xda and pos + 3 <= size:
        ln[0] = <Py_ssize_t>_get_be(p + pos + 1, 2)
        pos += 3
    else:
        return -1
    return pos if pos + ln[0] <= size else -1


cdef inline long long _address_id(AddressBook book, const unsigned char* p, Py_ssize_t ln) except -2:
    """The id of the address whose UTF-8 bytes are p[0:ln], added to the book if it has
    none; -1 if the bytes are not UTF-8."""
    cdef long long i = find_utf8(book, p, ln)
    if i < 0:
        try:
            i = book.id_of((<bytes>p[:ln]).decode("utf-8"))
        except UnicodeDecodeError:
            return -1
    return i


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline object _write(Descriptors d, long tag):
    """The frame of ``d`` as msgpack's packer writes it, or None where it must write it."""
    cdef AddressBook book = d._book
    cdef Py_ssize_t n = d.n, k, size, w
    cdef object prof
    cdef bytes out
    cdef const unsigned char* wp
    cdef unsigned char* q
    cdef double x
    cdef uint64_t bits
    if tag < 0 or tag >= 128 or n >= 65536:
        return None
    size = 2 + (1 if n < 16 else 3)
    for k in range(n):
        if d.ages[k] < 0:
            return None
        prof = d.profiles[k]
        if prof is None:
            size += 1
        elif type(prof) is float:
            size += 9
        else:
            return None
        wire_of(book, d.ids[k], &w)
        size += 1 + w + _uint_size(<unsigned long long>d.ages[k])
    out = PyBytes_FromStringAndSize(NULL, size)
    q = <unsigned char*>PyBytes_AS_STRING(out)
    q[0] = 0x92
    q[1] = <unsigned char>tag
    if n < 16:
        q[2] = <unsigned char>(0x90 | n)
        q += 3
    else:
        q[2] = 0xdc
        q[3] = <unsigned char>(n >> 8)
        q[4] = <unsigned char>n
        q += 5
    for k in range(n):
        q[0] = 0x93
        q += 1
        wp = wire_of(book, d.ids[k], &w)
        memcpy(q, wp, w)
        q += w
        q = _put_uint(q, <unsigned long long>d.ages[k])
        prof = d.profiles[k]
        if prof is None:
            q[0] = 0xc0
            q += 1
        else:
            x = <double>prof
            memcpy(&bits, &x, 8)
            q[0] = 0xcb
            _put_be(q + 1, bits, 8)
            q += 9
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline bint _read_addresses(Descriptors d, bytes data) except -1:
    """Fill ``d`` from the frame ``[tag, [address, ...]]``, each at age 0 with no
    profile; False (``d`` then undefined) for a frame only msgpack's general path reads."""
    cdef AddressBook book = d._book
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), pos, n, k, ln
    cdef long long i
    pos = _frame_list(p, size, &n)
    if pos < 0:
        return False
    d.n = 0
    for k in range(n):
        pos = _get_str_header(p, size, pos, &ln)
        if pos < 0:
            return False
        i = _address_id(book, p + pos, ln)
        if i < 0:
            return False
        pos += ln
        put(d, i, 0, None)
    return pos == size


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline bint _read(Descriptors d, bytes data) except -1:
    """Fill ``d`` from the frame ``data``; False (``d`` then undefined) for a frame only
    msgpack's general path reads."""
    cdef AddressBook book = d._book
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), pos, n, k, ln
    cdef unsigned char b
    cdef unsigned long long age
    cdef long long i
    cdef uint64_t bits
    cdef uint32_t bits32
    cdef double x
    cdef float x32
    cdef object prof
    pos = _frame_list(p, size, &n)
    if pos < 0:
        return False
    d.n = 0
    for k in range(n):
        if pos >= size or p[pos] != 0x93:
            return False
        pos = _get_str_header(p, size, pos + 1, &ln)
        if pos < 0 or pos + ln >= size:  # an age follows the address
            return False
        i = _address_id(book, p + pos, ln)
        if i < 0:
            return False
        pos += ln
        b = p[pos]
        if b < 0x80:
            age = b
            pos += 1
        elif b >= 0xcc and b <= 0xcf:
            ln = 1 << (b - 0xcc)
            if pos + 1 + ln > size:
                return False
            age = _get_be(p + pos + 1, ln)
            pos += 1 + ln
            if age >= (1ULL << 62):
                return False
        else:
            return False
        if pos >= size:
            return False
        b = p[pos]
        if b == 0xc0:
            prof = None
            pos += 1
        elif b == 0xcb and pos + 9 <= size:
            bits = _get_be(p + pos + 1, 8)
            memcpy(&x, &bits, 8)
            prof = x
            pos += 9
        elif b == 0xca and pos + 5 <= size:
            bits32 = <uint32_t>_get_be(p + pos + 1, 4)
            memcpy(&x32, &bits32, 4)
            prof = <double>x32
            pos += 5
        else:
            return False
        put(d, i, <long long>age, prof)
    return pos == size
