# Cache prefetch hints for the compiled core (a declarations-only module: nothing to
# import at run time). At 10^4 nodes a node's state is far from the cache when its turn
# comes; the virtual clock knows the next event before it runs the current one, and the
# role it will reach warms its own lines ahead (Role.warm, Event.warm), so those misses
# overlap the current event's work instead of stalling the next one. A prefetch is only a
# hint: it changes no value and no result, only when memory arrives.

from cpython.object cimport PyObject

cdef extern from *:
    """
    #define dgdrf_prefetch(p) __builtin_prefetch((const void *)(p), 0, 3)
    #define dgdrf_prefetch_write(p) __builtin_prefetch((const void *)(p), 1, 3)
    """
    void prefetch "dgdrf_prefetch"(const void* p) noexcept nogil
    void prefetch_write "dgdrf_prefetch_write"(const void* p) noexcept nogil


cdef inline void prefetch_span(const void* p, Py_ssize_t nbytes) noexcept nogil:
    """Hint the cache lines of ``nbytes`` bytes from ``p`` (64-byte lines), for writing."""
    cdef const char* q = <const char*>p
    cdef const char* end = q + nbytes
    while q < end:
        prefetch_write(q)
        q += 64
    if nbytes > 0:
        prefetch_write(end - 1)
