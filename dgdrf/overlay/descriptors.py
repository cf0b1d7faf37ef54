# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""Cyclon's descriptor lists, typed: the frame ``[tag, [[address, age, profile], ...]]``
written from arrays of (id, age, profile) and read back into them.

A shuffle's descriptors used to travel as a list of tuples built per message, packed by
msgpack's general packer, unpacked into fresh lists of fresh address strings, and wrapped
in a dataclass with an interpreted ``__init__``; the receiver then hashed every string to
find it in its view. Here they live in a :class:`Descriptors` (ids and ages in integer
arrays, profiles in a list), and the frame is made straight from them and read straight
into them. The bytes are msgpack's, exactly those ``CyclonShuffle``/``CyclonReply``
encode (tests/test_descriptors.py checks both ways): network mode sends these frames, and
every frame is still encoded, counted and decoded in-process too.

Compiled, ``descriptors.pxd``'s ``_write`` and ``_read`` do it in C: an address is copied
from the book's msgpack encoding of it and found again through the book's hash index
(:mod:`dgdrf.runtime.addresses`). A frame they do not handle (a profile that is not a
float or None, an age out of range, an address the book has not met and is not valid
UTF-8) takes msgpack's general path, with the same result. Interpreted, that general path
is the only one.
"""

from __future__ import annotations

from array import array
from typing import Any

import msgpack

from dgdrf.runtime.addresses import BOOK

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_unpackb = msgpack.unpackb

#: ages are counted in cycles: a descriptor older than this is malformed, not old
MAX_AGE = 1 << 62


class Descriptors:
    """A list of (id, age, profile) descriptors in arrays, reused message after message."""

    def __init__(self, capacity: int = 8) -> None:
        self.capacity = max(1, capacity)
        self.ids = array("q", [0]) * self.capacity
        self.ages = array("q", [0]) * self.capacity
        self.profiles: list[Any] = [None] * self.capacity
        self.n = 0
        self._book = BOOK

    def clear(self) -> None:
        self.n = 0

    def add(self, i: int, age: int, profile: Any) -> None:
        """Append one descriptor (compiled: descriptors.pxd's ``put``, which the compiled
        callers inline)."""
        if cython.compiled:
            put(self, i, age, profile)  # type: ignore[name-defined]  # descriptors.pxd's
            return
        n = self.n
        if n == self.capacity:
            self._grow()
        self.ids[n] = i
        self.ages[n] = age
        self.profiles[n] = profile
        self.n = n + 1

    def _grow(self) -> None:
        extra = self.capacity
        self.ids = array("q", self.ids) + array("q", [0]) * extra
        self.ages = array("q", self.ages) + array("q", [0]) * extra
        self.profiles = list(self.profiles) + [None] * extra
        self.capacity += extra

    def entries(self) -> list[tuple[str, int, Any]]:
        """The descriptors as (address, age, profile) tuples: the frame's array."""
        names = BOOK.names
        return [(names[self.ids[k]], self.ages[k], self.profiles[k]) for k in range(self.n)]

    # -- the wire -------------------------------------------------------------------------
    def frame(self, tag: int) -> bytes:
        """The msgpack frame ``[tag, [[address, age, profile], ...]]``."""
        if cython.compiled:
            data = _write(self, tag)  # type: ignore[name-defined]  # descriptors.pxd's
            if data is not None:
                return data
        return _packb((tag, self.entries()))

    def read(self, data: bytes) -> None:
        """Replace the contents by the descriptors of the frame ``data``."""
        if cython.compiled:
            if _read(self, data):  # type: ignore[name-defined]  # descriptors.pxd's
                return
        self.read_entries(_unpackb(data)[1])

    def read_addresses(self, data: bytes) -> None:
        """Replace the contents by the addresses of the frame ``[tag, [address, ...]]``
        (the bootstrap's Peers), each at age 0 with no profile."""
        if cython.compiled:
            if _read_addresses(self, data):  # type: ignore[name-defined]  # descriptors.pxd's
                return
        self.read_address_list(_unpackb(data)[1])

    def read_address_list(self, addresses: list) -> None:
        """Replace the contents by decoded addresses (a Peers object's, in network mode),
        each at age 0 with no profile; anything that is not a string is left out."""
        self.n = 0
        for addr in addresses:
            if type(addr) is str:
                self.add(BOOK.id_of(addr), 0, None)

    def read_entries(self, entries: list) -> None:
        """Replace the contents by decoded ``[address, age, profile]`` entries (a message
        object's, in network mode). An entry whose address is not a string or whose age
        is not an integer in [0, 2**62) is left out: Cyclon's ages come from cycle
        counters, so anything else is a malformed frame, not an old descriptor."""
        self.n = 0
        for entry in entries:
            addr, age, profile = entry
            if type(addr) is str and type(age) is int and 0 <= age < MAX_AGE:
                self.add(BOOK.id_of(addr), age, profile)
