# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""Python's own random-number generator (MT19937, :class:`random.Random`) with its draws a C
call away for the compiled core.

Cyclon draws several ``random()`` per message (the partial Fisher-Yates of a shuffle), each
a Python method call returning a fresh float object; compiled, that was a tenth of a
Cyclon message's instructions. A :class:`Twister` takes over a ``random.Random``'s state
(``getstate``), draws exactly the numbers it would have drawn (the same MT19937 steps and
``random()``'s 53-bit construction, ``Modules/_randommodule.c``), and gives its state back
as a ``random.Random`` (:meth:`Twister.to_random`). Interpreted, the core keeps calling
``random.Random`` itself (this file runs interpreted only in tests, which hold it to
``random.Random`` draw for draw: tests/test_twister.py).
"""

from __future__ import annotations

import random
from array import array

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

_N = 624
_M = 397
_MATRIX_A = 0x9908B0DF
_UPPER = 0x80000000
_LOWER = 0x7FFFFFFF
_TEMPER_B = 0x9D2C5680
_TEMPER_C = 0xEFC60000
_WORD = 0xFFFFFFFF


class Twister:
    """MT19937 in the state of a ``random.Random``, drawing what it would draw."""

    def __init__(self, source: random.Random | None = None) -> None:
        self._mt = array("I", [0]) * _N
        self._index = _N
        self._gauss = None
        if source is not None:
            self.load(source)

    @classmethod
    def seeded(cls, seed: int) -> Twister:
        """The generator ``random.Random(seed)`` is, for an int ``seed``, seeded here
        without making that object (init_by_array on the seed's 32-bit words)."""
        tw = cls()
        n = abs(seed)
        key = array("I", [(n >> (32 * i)) & 0xFFFFFFFF for i in range(max(1, (n.bit_length() + 31) // 32))])
        tw._init_by_array(key)
        return tw

    def _init_by_array(self, key: array) -> None:
        mt = self._mt
        n = len(key)
        mt[0] = 19650218
        for i in range(1, _N):  # init_genrand(19650218)
            mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & _WORD
        i, j = 1, 0
        for _ in range(max(_N, n)):
            mt[i] = ((mt[i] ^ (((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525) & _WORD)) + key[j] + j) & _WORD
            i += 1
            j += 1
            if i >= _N:
                mt[0] = mt[_N - 1]
                i = 1
            if j >= n:
                j = 0
        for _ in range(_N - 1):
            mt[i] = ((mt[i] ^ (((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941) & _WORD)) - i) & _WORD
            i += 1
            if i >= _N:
                mt[0] = mt[_N - 1]
                i = 1
        mt[0] = 0x80000000
        self._index = _N
        self._gauss = None

    def load(self, source: random.Random) -> None:
        """Take ``source``'s state (``source`` itself is left as it is)."""
        version, internal, gauss = source.getstate()
        for k in range(_N):
            self._mt[k] = internal[k]
        self._index = internal[_N]
        self._gauss = gauss

    def to_random(self) -> random.Random:
        """A ``random.Random`` in this generator's state."""
        r = random.Random()
        r.setstate((3, tuple(self._mt[k] for k in range(_N)) + (self._index,), self._gauss))
        return r

    def _refill(self) -> None:
        """The next 624 words of state (genrand_uint32's block step)."""
        mt = self._mt
        for k in range(_N - _M):
            y = (mt[k] & _UPPER) | (mt[k + 1] & _LOWER)
            mt[k] = mt[k + _M] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
        for k in range(_N - _M, _N - 1):
            y = (mt[k] & _UPPER) | (mt[k + 1] & _LOWER)
            mt[k] = mt[k + (_M - _N)] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
        y = (mt[_N - 1] & _UPPER) | (mt[0] & _LOWER)
        mt[_N - 1] = mt[_M - 1] ^ (y >> 1) ^ (_MATRIX_A if y & 1 else 0)
        self._index = 0

    def _next(self) -> int:
        """genrand_uint32: the next tempered 32-bit word (compiled: twister.pxd's
        ``next_word``, which the compiled callers inline)."""
        if cython.compiled:
            return next_word(self)  # type: ignore[name-defined]  # twister.pxd's
        if self._index >= _N:
            self._refill()
        y = self._mt[self._index]
        self._index += 1
        y ^= y >> 11
        y ^= (y << 7) & _TEMPER_B
        y ^= (y << 15) & _TEMPER_C
        y ^= y >> 18
        return y & _WORD

    def uniform(self, a: float, b: float) -> float:
        """``random.Random.uniform``: a + (b - a) * random()."""
        return a + (b - a) * self.random()

    def random(self) -> float:
        """``random.Random.random()``: 53 random bits in [0, 1) (compiled: twister.pxd's
        ``random_of``)."""
        if cython.compiled:
            return random_of(self)  # type: ignore[name-defined]  # twister.pxd's
        a = self._next() >> 5
        b = self._next() >> 6
        return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)

    def getrandbits(self, k: int) -> int:
        """``random.Random.getrandbits(k)``: one word's top ``k`` bits for k <= 32; beyond,
        32-bit words least significant first, the last one's top bits."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        if k == 0:
            return 0
        if k <= 32:
            return self._next() >> (32 - k)
        out = 0
        shift = 0
        while k > 0:
            w = self._next()
            if k < 32:
                w >>= 32 - k
            out |= int(w) << shift  # a Python int: the shift passes the word's width
            shift += 32
            k -= 32
        return out

    def randbelow(self, n: int) -> int:
        """``random.Random._randbelow(n)`` for 0 < n < 2**63: ``getrandbits`` of n's bit length,
        drawn again while not below n (what ``choice`` draws its index with)."""
        if n <= 0:
            raise ValueError("randbelow needs n > 0")
        k = 0  # n's bit length
        m = n
        while m:
            k += 1
            m >>= 1
        if k <= 32:  # one word a draw, in C when compiled
            r = self._next() >> (32 - k)
            while r >= n:
                r = self._next() >> (32 - k)
            return r
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r
