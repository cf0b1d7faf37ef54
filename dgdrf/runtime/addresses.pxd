# C types of addresses.py for the compiled build (Cython augmenting declarations: the .py
# file is the source), and the compiled hash index over the addresses' UTF-8 bytes that
# typed decoders use to find an id without making a string (FNV-1a, linear probing), with
# the first 16 bytes of each address in its slot; and the arena of msgpack encodings
# typed encoders copy from (32 bytes an id). Both exist to keep a message's lookups in a
# few contiguous arrays rather than in one Python object per address (issue 34).

cimport cython
from libc.string cimport memcmp, memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE


cdef class AddressBook:
    cdef public list names
    cdef public list utf8
    cdef public list wire
    cdef dict _ids
    cdef long long[::1] _slots
    cdef Py_ssize_t _mask
    cdef long long[::1] _arena

    cpdef long long id_of(self, str address) except -1
    cpdef object id_object(self, str address)
    cpdef str name(self, Py_ssize_t i)
    @cython.locals(i=Py_ssize_t)
    cdef long long _add(self, address) except -1


cdef inline unsigned long long _fnv1a(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef unsigned long long h = 14695981039346656037ULL
    cdef Py_ssize_t k
    for k in range(n):
        h = (h ^ p[k]) * 1099511628211ULL
    return h


cdef inline void _prefix(const unsigned char* p, Py_ssize_t n, long long* out) noexcept nogil:
    """The first 16 bytes of p[0:n], zero-padded, as two words."""
    out[0] = 0
    out[1] = 0
    memcpy(out, p, n if n < 16 else 16)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline void _index(AddressBook book, Py_ssize_t i) noexcept:
    """Put id ``i`` into the hash index (there is room: the index is at most 3/4 full)."""
    cdef bytes b = <bytes>book.utf8[i]
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(b)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(b)
    cdef Py_ssize_t s = <Py_ssize_t>(_fnv1a(p, n) & <unsigned long long>book._mask)
    cdef long long* slot
    while book._slots[4 * s] >= 0:
        s = (s + 1) & book._mask
    slot = &book._slots[4 * s]
    slot[0] = i
    slot[1] = n
    _prefix(p, n, slot + 2)


cdef inline int _grow(AddressBook book) except -1:
    """Double the index and put every id back into it."""
    from array import array
    cdef Py_ssize_t size = 2 * (book._mask + 1), i
    book._slots = array("q", [-1, 0, 0, 0]) * size
    book._mask = size - 1
    for i in range(len(book.names)):
        _index(book, i)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline void _put_wire(AddressBook book, Py_ssize_t i) noexcept:
    """Copy id ``i``'s msgpack encoding into the arena, if it fits."""
    cdef bytes w = <bytes>book.wire[i]
    cdef Py_ssize_t n = PyBytes_GET_SIZE(w)
    cdef unsigned char* a = <unsigned char*>&book._arena[4 * i]
    memset(a, 0, 32)
    if n <= 31:
        a[0] = <unsigned char>n
        memcpy(a + 1, PyBytes_AS_STRING(w), n)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline long long find_utf8(AddressBook book, const unsigned char* p, Py_ssize_t n) noexcept:
    """The id of the address whose UTF-8 bytes are p[0:n], or -1 if the book has none."""
    cdef Py_ssize_t s = <Py_ssize_t>(_fnv1a(p, n) & <unsigned long long>book._mask)
    cdef long long want[2]
    cdef long long* slot
    cdef bytes b
    _prefix(p, n, want)
    while True:
        slot = &book._slots[4 * s]
        if slot[0] < 0:
            return -1
        if slot[1] == n and slot[2] == want[0] and slot[3] == want[1]:
            if n <= 16:
                return slot[0]
            b = <bytes>book.utf8[slot[0]]
            if memcmp(PyBytes_AS_STRING(b) + 16, p + 16, n - 16) == 0:
                return slot[0]
        s = (s + 1) & book._mask


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline const unsigned char* wire_of(AddressBook book, long long i, Py_ssize_t* n) noexcept:
    """Id ``i``'s msgpack encoding and (in ``n``) its length: from the arena if it is
    there, else from the book's bytes object."""
    cdef const unsigned char* a = <const unsigned char*>&book._arena[4 * i]
    cdef bytes w
    if a[0]:
        n[0] = a[0]
        return a + 1
    w = <bytes>book.wire[i]
    n[0] = PyBytes_GET_SIZE(w)
    return <const unsigned char*>PyBytes_AS_STRING(w)
