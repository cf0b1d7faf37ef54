"""The typed path of Cyclon's frames (issue 34): node ids (dgdrf/runtime/addresses.py) and
descriptor lists written to and read from msgpack frames without message objects
(dgdrf/overlay/descriptors.py). Compiled, the frames come from C code: they must be
msgpack's bytes exactly, both ways, and fall back to msgpack for what that code does not
handle. The same assertions hold interpreted (tests/test_compiled_core.py runs the
overlays both ways)."""

from __future__ import annotations

import math

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from dgdrf.overlay.descriptors import MAX_AGE, Descriptors
from dgdrf.overlay.messages import CyclonReply, CyclonShuffle, Peers
from dgdrf.runtime.addresses import BOOK, AddressBook
from dgdrf.runtime.messages import decode, encode

addresses = st.one_of(
    st.sampled_from(["s1", "s17", "u3", "bootstrap", "gateway"]),
    st.text(min_size=1, max_size=40),  # any Unicode: fixstr and str8 headers, multi-byte UTF-8
    st.text(min_size=256, max_size=300),  # str16
)
#: what the C writer handles (None, floats incl. infinities), and what it hands to msgpack
profiles = st.one_of(
    st.none(),
    st.floats(allow_nan=False),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.booleans(),
    st.text(max_size=5),
    st.lists(st.floats(allow_nan=False), max_size=2),
)
ages = st.one_of(st.integers(0, 200), st.integers(0, MAX_AGE - 1))
entries = st.lists(st.tuples(addresses, ages, profiles), max_size=40)  # > 15: the array16 header


def _packed(tag: int, es: list) -> bytes:
    return msgpack.packb((tag, [list(e) for e in es]), use_bin_type=True)


@settings(max_examples=300, deadline=None)
@given(entries, st.sampled_from([CyclonShuffle.TAG, CyclonReply.TAG]))
def test_a_frame_is_msgpacks_bytes_and_reads_back(es: list, tag: int) -> None:
    d = Descriptors(2)  # grows
    for address, age, profile in es:
        d.add(BOOK.id_of(address), age, profile)
    frame = d.frame(tag)
    assert frame == _packed(tag, es)
    msg_type = CyclonShuffle if tag == CyclonShuffle.TAG else CyclonReply
    assert frame == encode(msg_type([list(e) for e in es]))  # what the message type encodes
    back = Descriptors(1)
    back.read(frame)
    assert back.entries() == [tuple(e) for e in es]
    decoded = decode(frame)
    assert isinstance(decoded, msg_type) and decoded.entries == [list(e) for e in es]


@settings(max_examples=200, deadline=None)
@given(st.lists(addresses, max_size=40))
def test_a_peers_frame_reads_to_the_ids_of_its_addresses(peers: list) -> None:
    """The bootstrap's Peers frame (what the message type encodes) reads into the ids of
    its addresses, in order, at age 0 with no profile, as its decoded list does (the
    compiled reader in C, the general path of msgpack interpreted)."""
    frame = encode(Peers(list(peers)))
    d = Descriptors(1)
    d.read_addresses(frame)
    assert d.entries() == [(a, 0, None) for a in peers]
    general = Descriptors(1)
    decoded = decode(frame)
    assert isinstance(decoded, Peers)
    general.read_address_list(decoded.peers + [7, None])  # not addresses: left out
    assert general.entries() == d.entries()


def test_frames_of_addresses_the_book_has_not_met_read_to_new_ids() -> None:
    fresh = [f"never-seen-{i}-ü" for i in range(3)]
    frame = _packed(CyclonShuffle.TAG, [(a, 1, 0.5) for a in fresh])
    d = Descriptors()
    d.read(frame)
    assert [BOOK.name(d.ids[k]) for k in range(d.n)] == fresh
    assert d.entries() == [(a, 1, 0.5) for a in fresh]


def test_malformed_descriptors_are_left_out_not_turned_into_old_ones() -> None:
    d = Descriptors()
    d.read_entries([["s1", -1, None], ["s2", MAX_AGE, None], ["s3", 1.5, None], [7, 1, None], ["s4", 2, None]])
    assert d.entries() == [("s4", 2, None)]
    frame = msgpack.packb((CyclonShuffle.TAG, [["s5", 2**63, None], ["s6", 3, 1.0]]), use_bin_type=True)
    d.read(frame)  # an age beyond 2**62: the general path, which leaves it out
    assert d.entries() == [("s6", 3, 1.0)]


def test_float32_and_infinite_profiles_read_as_msgpack_reads_them() -> None:
    frame = bytes([0x92, CyclonReply.TAG, 0x92, 0x93, 0xA2]) + b"s1" + bytes([0x05, 0xCA]) + bytes([0x3F, 0xC0, 0x00, 0x00])
    frame += bytes([0x93, 0xA2]) + b"s2" + bytes([0xCC, 0xC8]) + msgpack.packb(-math.inf)
    d = Descriptors()
    d.read(frame)
    assert d.entries() == [("s1", 5, 1.5), ("s2", 200, -math.inf)] == [tuple(e) for e in msgpack.unpackb(frame)[1]]


def test_the_address_book_keeps_ids_through_growth() -> None:
    book = AddressBook()
    names = [f"node-{i}" for i in range(5000)]  # past the first index's 1,024 slots, several times
    ids = [book.id_of(a) for a in names]
    assert ids == list(range(5000))
    assert [book.id_of(a) for a in reversed(names)] == ids[::-1]
    assert [book.name(i) for i in ids] == names
    assert book.wire[17] == msgpack.packb("node-17") and book.utf8[17] == b"node-17"
    assert len(book) == 5000
