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

import msgpack

from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.messages import PushSumShare
from dgdrf.runtime.actor import Actor, Role
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
    """Push-sum of a vector value over the overlay."""

    def __init__(self, value: Sequence[float], weight: float, sampler: Cyclon, period: float = 1.0) -> None:
        self.s = [to_fixed(x) for x in value]
        self.w = to_fixed(weight)
        self.sampler = sampler
        self.period = period
        self.rounds = 0
        self.sent_mass = [0] * (len(self.s) + 1)  # cumulative, s components then w
        self.received_mass = [0] * (len(self.s) + 1)
        self.rnd = random.Random(0)

    def setup(self) -> None:
        self.rnd = random.Random(int(self.actor.rng.integers(2**62)))
        self.actor.every(self.period, self.round, first=self.rnd.uniform(0.0, self.period))

    #: shares arrive as frames and are read here, with no message object (issue 34)
    FRAME_TAGS = (PushSumShare.TAG,)

    def estimate(self) -> list[float] | None:
        """s / w per component, or None while this node holds no weight."""
        if self.w == 0:
            return None
        return [x / self.w for x in self.s]  # int / int: correctly rounded

    def mass(self) -> tuple[list[int], int]:
        return list(self.s), self.w

    def round(self) -> None:
        """Algorithm 2, PUSHSUMROUND: half to a random peer, half kept."""
        self.rounds += 1
        peer = self.sampler.random_peer_id()
        if peer < 0:
            return
        s, sent = self.s, self.sent_mass
        n = len(s)
        hs = [x // 2 for x in s]
        hw = self.w // 2
        for i in range(n):  # in place: index loops, which the compiled build runs in C
            h = hs[i]
            s[i] -= h
            sent[i] += h
        self.w -= hw
        sent[n] += hw
        # the frame PushSumShare(s, w) encodes, made without the message object (compiled:
        # written in C, pushsum.pxd; msgpack's packer for what that does not handle)
        frame = _share_frame(hs, hw) if cython.compiled else None  # type: ignore[name-defined]  # pushsum.pxd's
        if frame is None:
            frame = _packb((_SHARE, [int_to_bytes(h) for h in hs], int_to_bytes(hw)))
        Actor.send_frame(self.actor, peer, _SHARE, frame)

    def on_frame(self, src: int, data: bytes) -> None:
        if cython.compiled:
            hs = _read_share(data, len(self.s))  # type: ignore[name-defined]  # pushsum.pxd's: [h..., hw], or None
            if hs is not None:
                self._add(hs, hs.pop())
                return
        arr = _unpackb(data)
        self._received(BOOK.names[src], arr[1], arr[2])

    def on_PushSumShare(self, src: str, msg: PushSumShare) -> None:
        self._received(src, msg.s, msg.w)

    def _received(self, src: str, ms: list[bytes], mw: bytes) -> None:
        if len(ms) != len(self.s):
            self.actor.report("bad_message", type="PushSumShare", src=src, reason=f"{len(ms)} components, expected {len(self.s)}")
            return
        hs = [bytes_to_int(b) for b in ms]  # all decoded first: a bad one changes nothing
        self._add(hs, bytes_to_int(mw))

    def _add(self, hs: list[int], hw: int) -> None:
        """Take in a share's mass."""
        s, received = self.s, self.received_mass
        n = len(s)
        for i in range(n):
            h = hs[i]
            s[i] += h
            received[i] += h
        self.w += hw
        received[n] += hw
