# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""Integer ids of node addresses: the emulator's hot path names nodes by a small integer.

A node's address is a string (``s17``, ``u3``, a cluster member's name) in results, logs,
the wire and network mode's directory. Inside the hot path (Cyclon's view, the transport's
table of actors, the typed message codecs) a node is the integer :meth:`AddressBook.id_of`
gives it: comparing two ids is one machine instruction, where comparing or looking up a
fresh address string decoded from a frame meant hashing it first and probing a dictionary
keyed by strings (docs/notes/2026-11-29-performance-history.md).

There is one book per process (:data:`BOOK`): an address keeps its id for the life of the
process, so ids may be shared by every run a process makes. No result depends on an id's
value: what orders nodes (views in arrival order, eq. 3.9's tie-breaks on the address
string) never looks at one, and every id maps back to its string for the edges.

Compiled, the book also keeps an open-addressing hash index over the addresses' UTF-8
bytes (FNV-1a), so a typed decoder turns the address in a msgpack frame straight into its
id without making a string object (``addresses.pxd``: :func:`find_utf8`). Interpreted,
decoders use msgpack and :meth:`AddressBook.id_of` on the string.
"""

from __future__ import annotations

from array import array

import msgpack

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack


class AddressBook:
    """Address string <-> integer id, both ways, for every address this process has met."""

    def __init__(self) -> None:
        #: id -> address
        self.names: list[str] = []
        #: id -> the address's UTF-8 bytes (compared by the compiled index)
        self.utf8: list[bytes] = []
        #: id -> the address's msgpack encoding (a typed encoder copies it into a frame)
        self.wire: list[bytes] = []
        self._ids: dict[str, int] = {}
        #: the compiled hash index: 2**k slots of 4 words, (id or -1, length of the UTF-8
        #: bytes, their first 16 bytes), at most 3/4 full: a probe compares in the slot's
        #: own cache line (addresses.pxd's find_utf8)
        self._slots = array("q", [-1, 0, 0, 0]) * 1024
        self._mask = 1023
        #: the compiled encoders' copy of each id's msgpack encoding, 32 bytes an id in one
        #: array (byte 0: its length if it is at most 31, else 0: use ``wire``)
        self._arena = array("q", [0, 0, 0, 0]) * 1024

    def __len__(self) -> int:
        return len(self.names)

    def id_of(self, address: str) -> int:
        """The id of ``address``, given it now if it has none yet."""
        i = self._ids.get(address)
        if i is None:
            return self._add(address)
        return i

    def id_object(self, address: str) -> int:
        """:meth:`id_of` as the int object the book holds: compiled, handing it on (in a
        frame's delivery) makes no new int."""
        i = self._ids.get(address)
        if i is None:
            self._add(address)
            i = self._ids[address]
        return i

    def name(self, i: int) -> str:
        """The address of id ``i``."""
        return self.names[i]

    def _add(self, address: str) -> int:
        if type(address) is not str:
            raise TypeError(f"an address must be a string, got {type(address).__name__}")
        i = len(self.names)
        self.names.append(address)
        self.utf8.append(address.encode("utf-8"))
        self.wire.append(_packb(address))
        self._ids[address] = i
        if cython.compiled:
            if 4 * (i + 1) > 3 * (self._mask + 1):
                _grow(self)  # type: ignore[name-defined]  # addresses.pxd's
            else:
                _index(self, i)  # type: ignore[name-defined]  # addresses.pxd's
            if 4 * (i + 1) > len(self._arena):
                self._arena = array("q", self._arena) + array("q", [0]) * len(self._arena)
            _put_wire(self, i)  # type: ignore[name-defined]  # addresses.pxd's
        return i


#: the process's address book
BOOK = AddressBook()
