"""Push-sum aggregation (Kempe et al. 2003; thesis 2.3.1, algorithm 2).

Every node holds a mass (s, w): s a vector, w a weight. Each round it sends half of its
mass to a random peer (from peer sampling) and keeps the other half (algorithm 2 sends
that half to itself; keeping it is the same without the message). Its estimate is s / w.
With w = 1 at one initiator and 0 elsewhere the estimate tends to the sum of the initial
s over all nodes; with w = 1 everywhere, to their average. So a node can learn the
cluster's total capacity vector C, or the number of users, without a central server.

Masses are exact integers in units of 2**-64 (fixed point) and are split as
``h = m // 2`` sent, ``m - h`` kept, so no mass is ever created or lost by arithmetic:
the sum over nodes plus what is in flight equals the initial total exactly at every
moment. Only a lost message loses mass (and with it, accuracy); the counters
``sent_mass`` and ``received_mass`` let an observer account for it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import msgpack

from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.messages import PushSumShare
from dgdrf.runtime.actor import Role
from dgdrf.runtime.addresses import BOOK

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

SCALE = 1 << 64  # fixed-point unit
_SHARE = PushSumShare.TAG
_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_unpackb = msgpack.unpackb


def to_fixed(x: float) -> int:
    """A float as an exact fixed-point integer (units of 2**-64)."""
    return round(x * SCALE)


def int_to_bytes(x: int) -> bytes:
    """Signed big-endian bytes: msgpack integers stop at 64 bits, masses do not."""
    return x.to_bytes(x.bit_length() // 8 + 1, "big", signed=True)


def bytes_to_int(b: bytes) -> int:
    return int.from_bytes(b, "big", signed=True)


class PushSum(Role):
    """Push-sum of a vector value over the overlay.

    The masses (``s``, ``w``) and the counters ``sent_mass``/``received_mass`` are read as
    Python ints. Interpreted they are lists of Python ints. Compiled, a node holds them as
    128-bit C integers (pushsum.pxd) while every one fits, which at 2**-64 units is any
    value below 2**63 in magnitude: no int object is made or freed a round.
    A sum that would pass 128 bits moves that node to Python ints for good, before it
    changes anything, so both builds add the same exact integers."""

    #: compiled only: the masses as 128-bit C integers (pushsum.pxd)
    _m: Any

    def __init__(self, value: Sequence[float], weight: float, sampler: Cyclon, period: float = 1.0) -> None:
        self._s = [to_fixed(x) for x in value]
        self._w = to_fixed(weight)
        self._k = len(self._s)
        self._sent = [0] * (self._k + 1)  # cumulative, s components then w
        self._received = [0] * (self._k + 1)
        self._big = True  # the masses are in the lists above
        if cython.compiled:
            _to_small(self)  # type: ignore[name-defined]  # pushsum.pxd's: into C integers, if they fit
        self.sampler = sampler
        self.period = period
        self.rounds = 0
        self.rnd = random.Random(0)

    def setup(self) -> None:
        self.rnd = random.Random(int(self.actor.rng.integers(2**62)))
        self.actor.every(self.period, self.round, first=self.rnd.uniform(0.0, self.period))

    #: shares arrive as frames and are read here, with no message object
    FRAME_TAGS = (PushSumShare.TAG,)
    ROUNDS = ("round",)

    def _to_big(self) -> None:
        """Compiled: the masses from C integers into the lists, for good (a sum would
        pass 128 bits)."""
        if not self._big:
            self._s, self._w, self._sent, self._received = self.s, self.w, self.sent_mass, self.received_mass
            self._big = True

    @property
    def s(self) -> list[int]:
        """The vector mass s, a copy."""
        if cython.compiled and not self._big:
            return _small_list(self, 0, self._k)  # type: ignore[name-defined]
        return list(self._s)

    @property
    def w(self) -> int:
        """The weight w."""
        if cython.compiled and not self._big:
            return _small_list(self, self._k, 1)[0]  # type: ignore[name-defined]
        return self._w

    @property
    def sent_mass(self) -> list[int]:
        """Mass sent so far, s components then w (a copy)."""
        if cython.compiled and not self._big:
            return _small_list(self, self._k + 1, self._k + 1)  # type: ignore[name-defined]
        return list(self._sent)

    @property
    def received_mass(self) -> list[int]:
        """Mass received so far, s components then w (a copy)."""
        if cython.compiled and not self._big:
            return _small_list(self, 2 * self._k + 2, self._k + 1)  # type: ignore[name-defined]
        return list(self._received)

    def estimate(self) -> list[float] | None:
        """s / w per component, or None while this node holds no weight."""
        w = self.w
        if w == 0:
            return None
        return [x / w for x in self.s]  # int / int: correctly rounded

    def mass(self) -> tuple[list[int], int]:
        return self.s, self.w

    def warm(self, stage: int) -> None:
        """Compiled: the clock's hint that this node's round or a share for it is near
        (:class:`~dgdrf.runtime.clock.Warmable`): two events ahead (stage 1) the C
        masses and the peer sampler's first lines are hinted, one event ahead (stage 0)
        what the sampler's draw of a peer reads (its own stage 1)."""
        if stage:
            prefetch_span(cython.address(self._m[0]), 16 * (3 * self._k + 3))  # type: ignore[name-defined]  # prefetch.pxd's
            if self.sampler is not None:
                prefetch_span(cython.cast(cython.p_void, self.sampler), 256)  # type: ignore[name-defined]
        elif self.sampler is not None:
            self.sampler.warm(1)

    def fire_round(self, which: int) -> None:
        """Its one round (:meth:`Role.fire_round`): compiled, a C call of :meth:`round`."""
        self.round()

    def round(self) -> None:
        """Algorithm 2, PUSHSUMROUND: half to a random peer, half kept."""
        self.rounds += 1
        peer = self.sampler.random_peer_id()
        if peer < 0:
            return
        if cython.compiled and not self._big:
            self._sink.warm_to(peer, _SHARE)
            frame = _round_small(self)  # type: ignore[name-defined]  # pushsum.pxd's: None if a sum would pass 128 bits
            if frame is not None:
                Role.send_frame(self, peer, _SHARE, frame)
                return
            self._to_big()
        s, sent = self._s, self._sent
        n = len(s)
        hs = [x // 2 for x in s]
        hw = self._w // 2
        for i in range(n):  # in place: index loops, which the compiled build runs in C
            h = hs[i]
            s[i] -= h
            sent[i] += h
        self._w -= hw
        sent[n] += hw
        # the frame PushSumShare(s, w) encodes, made without the message object
        Role.send_frame(self, peer, _SHARE, _packb((_SHARE, [int_to_bytes(h) for h in hs], int_to_bytes(hw))))

    def on_frame(self, src: int, data: bytes) -> None:
        if cython.compiled and not self._big and _add_share_small(self, data):  # type: ignore[name-defined]  # read and added in C
            return
        arr = _unpackb(data)
        self._received_share(BOOK.names[src], arr[1], arr[2])

    def on_PushSumShare(self, src: str, msg: PushSumShare) -> None:
        self._received_share(src, msg.s, msg.w)

    def _received_share(self, src: str, ms: list[bytes], mw: bytes) -> None:
        if len(ms) != self._k:
            self.actor.report("bad_message", type="PushSumShare", src=src, reason=f"{len(ms)} components, expected {self._k}")
            return
        hs = [bytes_to_int(b) for b in ms]  # all decoded first: a bad one changes nothing
        self._add(hs, bytes_to_int(mw))

    def _add(self, hs: list[int], hw: int) -> None:
        """Take in a share's mass."""
        if cython.compiled and not self._big:
            if _add_small(self, hs, hw):  # type: ignore[name-defined]
                return
            self._to_big()
        s, received = self._s, self._received
        n = len(s)
        for i in range(n):
            h = hs[i]
            s[i] += h
            received[i] += h
        self._w += hw
        received[n] += hw
