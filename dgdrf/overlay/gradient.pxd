# C types of gradient.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.
# _exchange_frame and _read_exchange are the exchange frames' typed codec (issue 34):
# msgpack's bytes of [tag, utility, stamp, [[address, utility, stamp], ...]] (a
# GradientShuffle or GradientReply), written from the view and read into descriptors whose
# addresses are the address book's own strings; None where only msgpack's general path
# goes (gradient.py then takes it).

cimport cython
from libc.string cimport memcpy
from libc.math cimport INFINITY
from libc.stdint cimport uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from dgdrf.runtime.actor cimport Role
from dgdrf.runtime.addresses cimport AddressBook, wire_of
from dgdrf.overlay.cyclon cimport Cyclon
from dgdrf.runtime.twister cimport Twister
from dgdrf.runtime.prefetch cimport prefetch, prefetch_span
from dgdrf.overlay.descriptors cimport _put_uint, _uint_size, _put_be, _get_be, _get_array_header, _get_str_header, _address_id

cdef extern from *:
    """
    /* zlib's crc32(crc, buf, len) (CRC-32 of ISO 3309, reflected polynomial 0xEDB88320),
       by a table of 256 words made on first use: eq. 3.9's tie-break hashes an address at
       every ranking, and calling zlib.crc32 made a bytes object and a Python call each time. */
    static unsigned int dgdrf_crc_table[256];
    static int dgdrf_crc_ready = 0;
    static unsigned int dgdrf_crc32(unsigned int crc, const unsigned char *p, Py_ssize_t n) {
        if (!dgdrf_crc_ready) {
            for (unsigned int i = 0; i < 256; i++) {
                unsigned int c = i;
                for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
                dgdrf_crc_table[i] = c;
            }
            dgdrf_crc_ready = 1;
        }
        crc = ~crc;
        while (n-- > 0) crc = dgdrf_crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
        return ~crc;
    }
    """
    unsigned int dgdrf_crc32(unsigned int crc, const unsigned char* p, Py_ssize_t n) noexcept nogil

cdef double _NEG_INF
cdef double _INF
cdef long long _NO_STAMP
cdef AddressBook BOOK
cdef long _SHUFFLE
cdef long _REPLY
cdef long long _IDLE_LAST
cdef long long[::1] _HID
cdef double[::1] _HU
cdef long long[::1] _HS
cdef long long[::1] _HPOS
cdef long long[::1] _OPOS
cdef double[::1] _OU
cdef long long[::1] _OS
cdef long long[::1] _OVER
cdef long long[::1] _PID
cdef double[::1] _PU
cdef long long[::1] _PS
cdef long long[::1] _PT
cdef long long[::1] _RANK
cdef long long[::1] _VSLOT
cdef long long[::1] _RG
cdef double[::1] _RV
cdef long long[::1] _RT
cdef long long[::1] _RI
cdef long long[::1] _IDPOS
cdef long long _IDBASE
cdef long long _ID_PLACES


cdef class UtilitySource:
    cpdef double utility(self) except? -1.0


cdef class GradientBase(Role):
    cdef readonly object utility
    cdef UtilitySource _source
    cdef public Py_ssize_t P
    cdef public object period
    cdef public Cyclon sampler
    cdef public object validation_timeout
    cdef public bint idle_quiet
    cdef public dict _view
    cdef public long long _me_id
    cdef public dict _checks
    cdef public long long _check_seq
    cdef public object _rnd
    cdef public Twister _tw
    cdef public object stop_after
    cdef public str me
    cdef public unsigned int _salt_crc
    cdef public AddressBook _book

    @cython.locals(sample=dict, own=double)
    cpdef bint is_centre(self) except -1
    cpdef object tiebreak_of(self, addr)
    cpdef object _own_utility(self)
    cpdef double[::1] sample_utilities(self)
    cdef Py_ssize_t _draw_index(self, Py_ssize_t n) except -1
    @cython.locals(got=tuple)
    cpdef on_frame(self, long long src, bytes data)
    cpdef _answer(self, long long src_id, str src, utility, stamp, entries)
    cpdef _replied(self, str src, utility, stamp, entries)
    cpdef fire_round(self, long which)
    cpdef exchange(self)


cdef class Gradient(GradientBase):
    cdef public Py_ssize_t candidates
    cdef public long long stamp
    cdef public dict _fresh
    cdef public list _ranked
    cdef public dict _rank_key
    cdef public list _by_tiebreak
    cdef public object _fresh_limit
    cdef public Py_ssize_t _idle_limit
    cdef public object _awaiting
    cdef public dict _suspects
    cdef public dict _gone
    cdef public long long _ranked_version
    cdef public object _last_selection

    cdef public Py_ssize_t _vn
    cdef public Py_ssize_t _mn
    # the 13 arrays from _vid to _hslot stay right after _mn, in this order: Gradient.warm
    # hints their data pointers by position (_warm_slices)
    cdef long long[::1] _vid
    cdef double[::1] _vu
    cdef long long[::1] _vs
    cdef long long[::1] _vt
    cdef long long[::1] _mid
    cdef double[::1] _mu
    cdef long long[::1] _ms
    cdef long long[::1] _mt
    cdef long long[::1] _mq
    cdef long long[::1] _mbyu
    cdef long long[::1] _mbyt
    cdef long long[::1] _hid
    cdef long long[::1] _hslot
    cdef public long long _mseq
    cdef dict _vcache
    cdef unsigned char[::1] _gone_bits
    cdef public long long _kept_version
    cdef public double _kept_own
    cdef long long _kg
    cdef double _kv
    cdef long long _kt
    cdef long long _ki

    cpdef double[::1] sample_utilities(self)
    cpdef bint is_centre(self) except -1
    cdef void warm(self, int stage) noexcept
    cpdef tuple _descriptor(self)
    @cython.locals(k=Py_ssize_t, m=Py_ssize_t, h=Py_ssize_t, j=Py_ssize_t, i=cython.longlong, names=list, suspects=dict, gone=dict)
    cdef Py_ssize_t _heard_sampled(self) except -1
    @cython.locals(dst=cython.longlong)
    cdef _exchange_arrays(self)
    cdef _send_exchange(self, long long dst, long tag, u, s)
    cpdef exchange(self)
    @cython.locals(m=Py_ssize_t)
    cpdef on_frame(self, long long src, bytes data)
    @cython.locals(own=double, own_known=bint, limit=Py_ssize_t, h=Py_ssize_t, j=Py_ssize_t, x=Py_ssize_t, i=cython.longlong, u=double, s=cython.longlong, k=Py_ssize_t, v=Py_ssize_t, oldest=Py_ssize_t, base=cython.longlong, names=list, suspects=dict, gone=dict)
    cdef _merge_arrays(self, Py_ssize_t m, bint own_known, double own)
    cdef int _note_gone(self, long long i) except -1
    cdef bint _maybe_gone(self, long long i) noexcept
    @cython.locals(last=Py_ssize_t, x=Py_ssize_t)
    cdef _forget_slot(self, Py_ssize_t k, Py_ssize_t h)
    @cython.locals(mn=Py_ssize_t, ne=Py_ssize_t, no=Py_ssize_t, n=Py_ssize_t, k=Py_ssize_t, j=Py_ssize_t, x=Py_ssize_t, o=Py_ssize_t, e=Py_ssize_t, P=Py_ssize_t, r=Py_ssize_t, taken=Py_ssize_t, need=Py_ssize_t, lo=Py_ssize_t, a=Py_ssize_t, nv=Py_ssize_t, chosen=Py_ssize_t, kept=bint, base=cython.longlong, names=list)
    cdef _select_arrays(self, Py_ssize_t h, bint own_known, double own)
    @cython.locals(e=Py_ssize_t, k=Py_ssize_t, j=Py_ssize_t, o=Py_ssize_t, held=Py_ssize_t, g=cython.longlong, v=double, t=cython.longlong, u=double, s=cython.longlong, idle=bint, names=list)
    cdef bint _reselect_arrays(self, Py_ssize_t no, Py_ssize_t ne, Py_ssize_t nv, double own) except -1
    @cython.locals(mask=Py_ssize_t, x=Py_ssize_t)
    cdef Py_ssize_t _mslot(self, long long i) noexcept
    @cython.locals(mask=Py_ssize_t, x=Py_ssize_t)
    cdef void _mindex(self, long long i, Py_ssize_t k) noexcept
    @cython.locals(mask=Py_ssize_t, x=Py_ssize_t, y=Py_ssize_t, home=Py_ssize_t)
    cdef void _munindex(self, long long i) noexcept
    @cython.locals(n=Py_ssize_t, mask=Py_ssize_t, k=Py_ssize_t, x=Py_ssize_t)
    cdef int _mreindex(self, Py_ssize_t size) except -1
    cdef bint _u_before(self, Py_ssize_t a, Py_ssize_t b) except -1
    cdef bint _t_before(self, Py_ssize_t a, Py_ssize_t b) except -1
    @cython.locals(lo=Py_ssize_t, hi=Py_ssize_t, mid=Py_ssize_t)
    cdef Py_ssize_t _first_at_or_above(self, double u, Py_ssize_t n) noexcept
    @cython.locals(lo=Py_ssize_t, hi=Py_ssize_t, mid=Py_ssize_t, j=Py_ssize_t, order=cython.longlong[::1])
    cdef Py_ssize_t _place(self, bint by_utility, Py_ssize_t k, Py_ssize_t n) except -1
    cdef _index_add(self, Py_ssize_t k)
    cdef int _vroom(self, Py_ssize_t n) except -1
    cdef int _mroom(self, Py_ssize_t n) except -1
    cpdef _answer(self, long long src_id, str src, utility, stamp, entries)
    cpdef _replied(self, str src, utility, stamp, entries)
    @cython.locals(fresh=dict, gone=dict, view=dict, suspects=dict, heard=dict, known=tuple, m=Py_ssize_t)
    cpdef _merge(self, src, utility, stamp, entries)
    cpdef tuple _key(self, addr, u)
    cpdef _rank(self, addr, u)
    cpdef _unrank(self, addr)
    @cython.locals(fresh=dict, extra=dict, source=dict, above=list, below=list, ranked=list, best=list, view=dict, P=Py_ssize_t, start=Py_ssize_t, taken=Py_ssize_t, i=Py_ssize_t, need=Py_ssize_t, desc=tuple, held=tuple, k=tuple, h=Py_ssize_t)
    cpdef _select(self, dict heard=*, own=*)
    @cython.locals(fresh=dict, view=dict, key=tuple, keys=list, P=Py_ssize_t, taken=Py_ssize_t, desc=tuple, i=Py_ssize_t)
    cpdef _select_idle(self, dict extra)
    cpdef _remember(self, addr, u)
    @cython.locals(by_tiebreak=list)
    cpdef _drop(self, addr)
    @cython.locals(view=dict, fresh=dict, out=dict, desc=tuple, held=tuple, idle=bint)
    cpdef _reselect(self, dict extra, own, worst)


@cython.locals(keys=list, lower=list, best=list, below=list, c=tuple, u=double, i=Py_ssize_t)
cpdef list preferred(double own, list candidates, Py_ssize_t P)
cpdef bytes exchange_frame(long tag, u, s, dict view, clock=*)
cpdef tuple read_exchange(bytes data)
cpdef tuple _idle_key(double u, t, addr)
cpdef bint _same_rank(double u, double v, bint idle) except -1
cpdef Py_ssize_t _count_missing(dict keys, dict of) except -1
cpdef bint _shadows(dict extra, dict fresh, dict view) except -1

cpdef object choice(rnd, list seq)
@cython.locals(k=Py_ssize_t, r=Py_ssize_t)
cpdef Py_ssize_t choice_index(rnd, Py_ssize_t n) except -1
@cython.locals(u=double, t=cython.longlong, own=double)
cpdef tuple _preference(u, t, addr, own)
cdef int _reserve(Py_ssize_t n) except -1
cpdef long long _id_marks(Py_ssize_t n) except -1
@cython.locals(m=Py_ssize_t)
cpdef object _grown(a, str kind, Py_ssize_t n)
@cython.locals(k=Py_ssize_t)
cdef bint _all_below(double[::1] us, Py_ssize_t n, double own) noexcept
@cython.locals(k=Py_ssize_t)
cdef Py_ssize_t _find(long long[::1] ids, Py_ssize_t n, long long i) noexcept
@cython.locals(j=Py_ssize_t)
cdef void _insert(long long[::1] order, Py_ssize_t at, Py_ssize_t n, long long k) noexcept
@cython.locals(j=Py_ssize_t)
cdef void _delete(long long[::1] order, Py_ssize_t at, Py_ssize_t n) noexcept
@cython.locals(m=Py_ssize_t)
cpdef Py_ssize_t _load_entries(entries, str me, AddressBook book, long long[::1] ids, double[::1] us, long long[::1] stamps) except -1
@cython.locals(j=Py_ssize_t)
cdef void _remove(long long[::1] ids, double[::1] us, long long[::1] ss, long long[::1] ts, Py_ssize_t n, Py_ssize_t k) noexcept
@cython.locals(g=cython.longlong, v=double, j=Py_ssize_t)
cdef Py_ssize_t _rank_in(Py_ssize_t r, Py_ssize_t P, double u, long long t, long long i, Py_ssize_t code, double own, list names) except -1
cdef inline bint _key_before(long long g, double v, long long t, long long i, long long g2, double v2, long long t2, long long i2, list names) except -1
@cython.locals(above_a=bint, above_b=bint)
cdef bint _prefers(double ua, long long ta, long long a, double ub, long long tb, long long b, double own, list names) except -1


cdef inline (long long, double, long long) _eq39_key(double u, long long t, double own) noexcept nogil:
    """Eq. 3.9's order around a node of utility ``own`` as a key (g, v, t) of a node of
    utility ``u`` and tie-break ``t``, smallest preferred (as :func:`_prefers`; the
    address, last, is :func:`_key_before`'s): g 0 at or above ``own``, 1 below (every
    -inf below), v the utility above, minus it below (closest first); to a node of
    utility -inf, (0, 0.0, t), t raised by 2**32 for a node of utility -inf
    (``_IDLE_LAST``). Compiled only (the ranking on arrays), inline here so that the
    toolbox gradient's ranking inlines it too: C constants, no module names."""
    if own == -INFINITY:
        return 0, 0.0, (t + 4294967296LL if u == -INFINITY else t)
    if u >= own and u != -INFINITY:
        return 0, u, t
    return 1, -u, t


cdef inline Py_ssize_t _int_size(long long v) noexcept nogil:
    """The bytes of msgpack's encoding of the integer ``v``."""
    if v >= 0:
        return _uint_size(<unsigned long long>v)
    if v >= -32:
        return 1
    return 2 if v >= -128 else 3 if v >= -32768 else 5 if v >= -2147483648LL else 9


cdef inline unsigned char* _put_int(unsigned char* q, long long v) noexcept nogil:
    """msgpack's encoding of the integer ``v``: as :func:`_put_uint` when non-negative, else
    a negative fixint or the int8/16/32/64 marker (0xd0-0xd3) and its two's complement
    bytes (msgpack's pack_template, as its Python packer writes an int)."""
    cdef Py_ssize_t n
    if v >= 0:
        return _put_uint(q, <unsigned long long>v)
    if v >= -32:
        q[0] = <unsigned char>(v & 0xff)
        return q + 1
    n = 1 if v >= -128 else 2 if v >= -32768 else 4 if v >= -2147483648LL else 8
    q[0] = <unsigned char>(0xd0 if n == 1 else 0xd1 if n == 2 else 0xd2 if n == 4 else 0xd3)
    _put_be(q + 1, <unsigned long long>v, n)
    return q + 1 + n


cdef inline unsigned char* _put_double(unsigned char* q, double x) noexcept nogil:
    cdef uint64_t bits
    memcpy(&bits, &x, 8)
    q[0] = 0xcb
    _put_be(q + 1, bits, 8)
    return q + 9


cdef inline bint _small_int(object v, long long* out) noexcept:
    """Whether ``v`` is an int that fits a long long (then in ``out``)."""
    cdef int overflow = 0
    if type(v) is not int:
        return False
    out[0] = PyLong_AsLongLongAndOverflow(v, &overflow)
    return overflow == 0


cdef inline object _exchange_frame(long tag, object u, object s, dict view, bint ages, long long clock):
    """msgpack's frame of [tag, u, s, [[address, utility, stamp] for each entry of
    ``view``]] (address -> (utility, stamp); with ``ages``, each stamp is a birth and the
    entry carries ``clock`` - birth), or None: a utility not a float, a stamp not a 64-bit
    int, an address of 2**16 bytes or more, a view of 2**16 entries or more."""
    cdef Py_ssize_t n = len(view), size, ln
    cdef long long sv = 0, ev = 0
    cdef const char* a
    cdef object addr, d
    cdef tuple t
    cdef bytes out
    cdef unsigned char* q
    if tag < 0 or tag >= 128 or n >= 65536 or type(u) is not float or not _small_int(s, &sv):
        return None
    size = 2 + 9 + _int_size(sv) + (1 if n < 16 else 3)
    for addr, d in view.items():
        if type(addr) is not str or type(d) is not tuple or len(<tuple>d) != 2:
            return None
        t = <tuple>d
        if type(t[0]) is not float or not _small_int(t[1], &ev):
            return None
        if ages:
            if (ev < 0 and clock > ev + 9223372036854775807LL) or (ev > 0 and clock < ev - 9223372036854775807LL - 1):
                return None  # an age beyond 64 bits
            ev = clock - ev
        PyUnicode_AsUTF8AndSize(addr, &ln)
        if ln >= 65536:
            return None
        size += 1 + (1 if ln < 32 else 2 if ln < 256 else 3) + ln + 9 + _int_size(ev)
    out = PyBytes_FromStringAndSize(NULL, size)
    q = <unsigned char*>PyBytes_AS_STRING(out)
    q[0] = 0x94
    q[1] = <unsigned char>tag
    q = _put_int(_put_double(q + 2, <double>u), sv)
    if n < 16:
        q[0] = <unsigned char>(0x90 | n)
        q += 1
    else:
        q[0] = 0xdc
        _put_be(q + 1, <unsigned long long>n, 2)
        q += 3
    for addr, d in view.items():
        t = <tuple>d
        a = PyUnicode_AsUTF8AndSize(addr, &ln)
        q[0] = 0x93
        if ln < 32:
            q[1] = <unsigned char>(0xa0 | ln)
            q += 2
        elif ln < 256:
            q[1] = 0xd9
            q[2] = <unsigned char>ln
            q += 3
        else:
            q[1] = 0xda
            _put_be(q + 2, <unsigned long long>ln, 2)
            q += 4
        memcpy(q, a, ln)
        _small_int(t[1], &ev)
        if ages:
            ev = clock - ev
        q = _put_int(_put_double(q + ln, <double>t[0]), ev)
    return out


cdef inline Py_ssize_t _get_double(const unsigned char* p, Py_ssize_t size, Py_ssize_t pos, double* out) noexcept nogil:
    """A msgpack float64 at ``pos``: the position after it, or -1 for anything else."""
    cdef uint64_t bits
    if pos + 9 > size or p[pos] != 0xcb:
        return -1
    bits = _get_be(p + pos + 1, 8)
    memcpy(out, &bits, 8)
    return pos + 9


cdef inline Py_ssize_t _get_int(const unsigned char* p, Py_ssize_t size, Py_ssize_t pos, long long* out) noexcept nogil:
    """A msgpack integer that fits a long long at ``pos``: the position after it, or -1."""
    cdef unsigned char b
    cdef Py_ssize_t n
    cdef unsigned long long v
    if pos >= size:
        return -1
    b = p[pos]
    if b < 0x80 or b >= 0xe0:  # positive or negative fixint
        out[0] = <signed char>b
        return pos + 1
    if 0xcc <= b <= 0xd3:
        n = 1 << ((b - 0xcc) & 3)
        if pos + 1 + n > size:
            return -1
        v = _get_be(p + pos + 1, n)
        if b <= 0xcf:
            if v >= (1ULL << 63):
                return -1
            out[0] = <long long>v
        elif n == 1:
            out[0] = <signed char>v
        elif n == 2:
            out[0] = <short>v
        elif n == 4:
            out[0] = <int>v
        else:
            out[0] = <long long>v
        return pos + 1 + n
    return -1


cdef inline object _read_exchange(AddressBook book, bytes data):
    """(utility, stamp, entries) of an exchange frame, each entry a tuple (address,
    utility, stamp) whose address is the book's own string; or None for a frame of
    another shape (utilities not float64, for one: msgpack's general path reads it)."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), pos, n, k, ln
    cdef unsigned char b
    cdef double u, x
    cdef long long s, t, i
    cdef list entries
    if size < 3 or p[0] != 0x94 or p[1] >= 0x80:
        return None
    pos = _get_double(p, size, 2, &u)
    if pos < 0:
        return None
    pos = _get_int(p, size, pos, &s)
    if pos < 0:
        return None
    pos = _get_array_header(p, size, pos, &n)
    if pos < 0:
        return None
    entries = []
    for k in range(n):
        if pos >= size or p[pos] != 0x93:
            return None
        pos = _get_str_header(p, size, pos + 1, &ln)
        if pos < 0:
            return None
        i = _address_id(book, p + pos, ln)
        if i < 0:
            return None
        pos = _get_double(p, size, pos + ln, &x)
        if pos < 0:
            return None
        pos = _get_int(p, size, pos, &t)
        if pos < 0:
            return None
        entries.append((book.names[i], x, t))
    if pos != size:
        return None
    return (u, s, entries)


cdef inline object _crc32_of(str addr, unsigned int salt):
    """``zlib.crc32(addr.encode(), salt)``: the UTF-8 bytes are the string's own (CPython
    keeps them for ASCII strings), so no bytes object is made."""
    cdef Py_ssize_t n
    cdef const char* p = PyUnicode_AsUTF8AndSize(addr, &n)
    return dgdrf_crc32(salt, <const unsigned char*>p, n)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline object _exchange_frame_ids(long tag, double u, long long s, AddressBook book, long long[::1] ids, double[::1] us, long long[::1] stamps, Py_ssize_t n, bint ages, long long clock):
    """:func:`_exchange_frame` from a view kept in arrays (the compiled toolbox
    gradient's): entry k is node ``ids[k]`` with utility ``us[k]`` and stamp
    ``stamps[k]`` (with ``ages``, a birth: the entry carries ``clock`` - birth), each
    address written as the book's msgpack encoding of it. The same bytes as msgpack's
    packer gives for float utilities and 64-bit stamps (ages of views in arrays are
    differences of two 64-bit counters that start at 0 and only grow)."""
    cdef Py_ssize_t size, k, ln
    cdef long long ev
    cdef const unsigned char* w
    cdef bytes out
    cdef unsigned char* q
    if tag < 0 or tag >= 128 or n >= 65536:
        return None
    size = 2 + 9 + _int_size(s) + (1 if n < 16 else 3)
    for k in range(n):
        wire_of(book, ids[k], &ln)
        ev = clock - stamps[k] if ages else stamps[k]
        size += 1 + ln + 9 + _int_size(ev)
    out = PyBytes_FromStringAndSize(NULL, size)
    q = <unsigned char*>PyBytes_AS_STRING(out)
    q[0] = 0x94
    q[1] = <unsigned char>tag
    q = _put_int(_put_double(q + 2, u), s)
    if n < 16:
        q[0] = <unsigned char>(0x90 | n)
        q += 1
    else:
        q[0] = 0xdc
        _put_be(q + 1, <unsigned long long>n, 2)
        q += 3
    for k in range(n):
        w = wire_of(book, ids[k], &ln)
        q[0] = 0x93
        memcpy(q + 1, w, ln)
        ev = clock - stamps[k] if ages else stamps[k]
        q = _put_int(_put_double(q + 1 + ln, us[k]), ev)
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef inline Py_ssize_t _read_exchange_ids(AddressBook book, bytes data, double* u, long long* s, long long[::1] ids, double[::1] us, long long[::1] stamps, Py_ssize_t at) except -3:
    """:func:`_read_exchange` into arrays: the sender's utility and stamp into ``u`` and
    ``s``, entry k's node id, utility and stamp into ``ids[at + k]``, ``us[at + k]`` and
    ``stamps[at + k]``; the number of entries, or -1 for a frame of another shape
    (msgpack's general path reads it), or -2 - n when its n entries do not fit the arrays
    after ``at`` (nothing read: make room and read again). ``u`` and ``s`` may point into
    the arrays before ``at``."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data), pos, n, k, ln
    cdef long long i
    if size < 3 or p[0] != 0x94 or p[1] >= 0x80:
        return -1
    pos = _get_double(p, size, 2, u)
    if pos < 0:
        return -1
    pos = _get_int(p, size, pos, s)
    if pos < 0:
        return -1
    pos = _get_array_header(p, size, pos, &n)
    if pos < 0:
        return -1
    if at + n > ids.shape[0]:
        return -2 - n
    for k in range(at, at + n):
        if pos >= size or p[pos] != 0x93:
            return -1
        pos = _get_str_header(p, size, pos + 1, &ln)
        if pos < 0:
            return -1
        i = _address_id(book, p + pos, ln)
        if i < 0:
            return -1
        ids[k] = i
        pos = _get_double(p, size, pos + ln, &us[k])
        if pos < 0:
            return -1
        pos = _get_int(p, size, pos, &stamps[k])
        if pos < 0:
            return -1
    if pos != size:
        return -1
    return n


cdef inline long long _tiebreak_id(AddressBook book, long long i, unsigned int salt):
    """:meth:`GradientBase.tiebreak_of` of node id ``i`` (the CRC-32 of its address's
    UTF-8 bytes, salted), from the book's bytes."""
    cdef bytes b = <bytes>book.utf8[i]
    return dgdrf_crc32(salt, <const unsigned char*>PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))


cdef extern from *:
    """
    #define dgdrf_slice_size ((Py_ssize_t)sizeof(__Pyx_memviewslice))
    """
    Py_ssize_t _SLICE_SIZE "dgdrf_slice_size"


cdef inline void _warm_slices(const void* first, Py_ssize_t n) noexcept nogil:
    """Hint the lines of the data pointers of ``n`` memoryview fields declared one after
    the other from ``first`` (Cython lays an extension type's fields out in declaration
    order; a slice's data pointer is its second word)."""
    cdef const char* p = <const char*>first + sizeof(void*)
    cdef Py_ssize_t k
    for k in range(n):
        prefetch(p + k * _SLICE_SIZE)
