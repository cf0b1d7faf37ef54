"""The typed path of the gradient's exchanges (issue 34): GradientShuffle and GradientReply
written from a view and read back without message objects (dgdrf/overlay/gradient.py:
exchange_frame, read_exchange). Compiled, the frames come from C code: they must be the
message objects' bytes exactly, and read back to what decoding the message gives, falling
back to msgpack for what that code does not handle. The same assertions hold interpreted
(tests/test_compiled_core.py runs the overlays both ways)."""

from __future__ import annotations

from typing import Any

import math
import zlib

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from dgdrf.overlay.gradient import NO_STAMP, Gradient, exchange_frame, read_exchange
from dgdrf.overlay.messages import GradientReply, GradientShuffle
from dgdrf.runtime.addresses import BOOK
from dgdrf.runtime.messages import decode, encode

addresses = st.one_of(
    st.sampled_from(["s1", "s17", "u3", "bootstrap", "gateway"]),
    st.text(min_size=1, max_size=40),  # any Unicode: fixstr and str8 headers, multi-byte UTF-8
    st.text(min_size=256, max_size=300),  # str16
)
#: what the C writer handles (floats incl. -inf and -0.0), and what it hands to msgpack
utilities = st.one_of(st.floats(allow_nan=False), st.just(-math.inf), st.just(-0.0), st.integers(-5, 5))
#: every width of msgpack's integers, both signs, and NO_STAMP; beyond 64 bits: msgpack's
stamps = st.one_of(
    st.just(NO_STAMP),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-40, 300),
    st.sampled_from([-33, -32, -129, -128, -32769, -32768, -(2**31) - 1, -(2**31), 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32]),
    st.integers(2**63, 2**64 - 1),
)
views = st.dictionaries(addresses, st.tuples(utilities, stamps), max_size=40)  # > 15: the array16 header


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([GradientShuffle, GradientReply]), utilities, stamps, views)
def test_an_exchange_frame_is_the_message_objects_bytes_and_reads_back(msg_type: Any, u: float, s: int, view: dict) -> None:
    frame = exchange_frame(msg_type.TAG, u, s, view)
    entries = [[a, d[0], d[1]] for a, d in view.items()]
    assert frame == encode(msg_type(u, s, entries))
    assert frame == msgpack.packb((msg_type.TAG, u, s, entries), use_bin_type=True)
    got_u, got_s, got_entries = read_exchange(frame)
    decoded: Any = decode(frame)
    assert isinstance(decoded, msg_type)
    assert (got_u, got_s) == (decoded.utility, decoded.stamp)
    assert type(got_u) is type(decoded.utility) and type(got_s) is type(decoded.stamp)
    assert [list(e) for e in got_entries] == decoded.entries
    assert [math.copysign(1.0, e[1]) for e in got_entries] == [math.copysign(1.0, e[1]) for e in decoded.entries]  # -0.0 stays -0.0


def test_read_addresses_are_the_address_books_own_strings() -> None:
    """Descriptors read from a frame name their nodes with the book's string objects (the
    compiled reader; so that dictionary lookups match by identity), and an address the book
    has not met joins it."""
    fresh = "s-never-seen-before-" + "x" * 20
    frame = exchange_frame(GradientShuffle.TAG, -0.5, 3, {"s1": (-0.25, 2), fresh: (-math.inf, NO_STAMP)})
    _, _, entries = read_exchange(frame)
    assert [tuple(e) for e in entries] == [("s1", -0.25, 2), (fresh, -math.inf, NO_STAMP)]
    assert BOOK.names[BOOK.id_of(fresh)] == fresh
    from dgdrf.build_info import core

    if core() == "compiled":
        assert entries[0][0] is BOOK.names[BOOK.id_of("s1")]
        assert entries[1][0] is BOOK.names[BOOK.id_of(fresh)]


def test_frames_the_typed_reader_does_not_take_read_as_msgpack_reads_them() -> None:
    """A float32 utility, an integer utility, a map where an entry belongs, trailing bytes:
    whatever the C reader declines, msgpack's path reads (and raises where it would)."""
    float32 = msgpack.packb((GradientShuffle.TAG, -0.5, 1, [["s1", -0.25, 2]]), use_bin_type=True, use_single_float=True)
    assert read_exchange(float32) == (-0.5, 1, [["s1", -0.25, 2]])
    ints = msgpack.packb((GradientReply.TAG, 0, 1, [["s1", 1, 2]]), use_bin_type=True)
    u, s, entries = read_exchange(ints)
    assert (u, s, [list(e) for e in entries]) == (0, 1, [["s1", 1, 2]]) and type(u) is int
    padded = msgpack.packb((GradientShuffle.TAG, -0.5, 1, []), use_bin_type=True)
    try:
        read_exchange(padded + b"\x00")
    except msgpack.ExtraData:
        pass
    else:
        raise AssertionError("trailing bytes after an exchange frame were accepted")


@settings(max_examples=300, deadline=None)
@given(addresses, st.text(min_size=1, max_size=30))
def test_the_tie_break_is_zlibs_crc32_of_the_address_salted_with_the_nodes(addr: str, me: str) -> None:
    """Eq. 3.9's tie-break (compiled: a CRC-32 table in C over the string's UTF-8 bytes)
    is zlib.crc32 of the address's UTF-8, continued from the CRC of the node's own."""
    g = Gradient(lambda: 0.0)
    g._salt_crc = zlib.crc32(me.encode())
    assert g.tiebreak_of(addr) == zlib.crc32(addr.encode(), zlib.crc32(me.encode()))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([GradientShuffle, GradientReply]), utilities, st.integers(0, 10**6), st.dictionaries(addresses, st.tuples(utilities, st.integers(-(2**40), 2**40)), max_size=20))
def test_the_toolbox_gradients_frame_carries_ages(msg_type: Any, u: float, clock: int, view: dict) -> None:
    """With a clock, the view holds births and the frame carries ages, clock - birth: the
    bytes of the message the toolbox gradient sent as an object."""
    entries = [[a, d[0], clock - d[1]] for a, d in view.items()]
    assert exchange_frame(msg_type.TAG, u, 0, view, clock) == encode(msg_type(u, 0, entries))
