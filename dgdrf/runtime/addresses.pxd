# C types of addresses.py for the compiled build (Cython augmenting declarations: the .py
# file is the source), and the compiled hash index over the addresses' UTF-8 bytes that
# typed decoders use to find an id without making a string (FNV-1a, linear probing).

cimport cython
from libc.string cimport memcmp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE


cdef class AddressBook:
    cdef public list names
    cdef public list utf8
    cdef public list wire
    cdef dict _ids
    cdef long long[::1] _slots
    cdef Py_ssize_t _mask

    cpdef long long id_of(self, str address) except -1
    cpdef str name(self, Py_ssize_t i)
    @cython.locals(i=Py_ssize_t)
    cdef long long _add(self, address) except -1


cdef inline unsigned long long _fnv1a(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    cdef unsigned long long h = 14695981039346656037ULL
    cdef Py_ssize_t k
    for k in range(n):
        h = (h ^ p[k]) * 1099511628211ULL
    return h


cdef inline void _index(AddressBook book, Py_ssize_t i) noexcept:
    """Put id ``i`` into the hash index (there is room: the index is at most half full)."""
    cdef bytes b = <bytes>book.utf8[i]
    cdef Py_ssize_t s = <Py_ssize_t>(_fnv1a(<const unsigned char*>PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b)) & <unsigned long long>book._mask)
    while book._slots[s] >= 0:
        s = (s + 1) & book._mask
    book._slots[s] = i


cdef inline int _grow(AddressBook book) except -1:
    """Double the index and put every id back into it."""
    from array import array
    cdef Py_ssize_t size = 2 * (book._mask + 1), i
    book._slots = array("q", [-1]) * size
    book._mask = size - 1
    for i in range(len(book.names)):
        _index(book, i)
    return 0


cdef inline long long find_utf8(AddressBook book, const unsigned char* p, Py_ssize_t n) noexcept:
    """The id of the address whose UTF-8 bytes are p[0:n], or -1 if the book has none."""
    cdef Py_ssize_t s = <Py_ssize_t>(_fnv1a(p, n) & <unsigned long long>book._mask)
    cdef long long i
    cdef bytes b
    while True:
        i = book._slots[s]
        if i < 0:
            return -1
        b = <bytes>book.utf8[i]
        if PyBytes_GET_SIZE(b) == n and memcmp(PyBytes_AS_STRING(b), p, n) == 0:
            return i
        s = (s + 1) & book._mask
