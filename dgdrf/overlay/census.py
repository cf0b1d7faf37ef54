"""Push-sum of the census of server kinds: every server learns how many servers of each
kind (capacity vector, attributes) the cluster has, and so every user's h_i and M_i
(model/census.py), with no central server.

It is push-sum (thesis alg. 2, Kempe et al.; overlay/pushsum.py) over a vector whose
components are named rather than numbered: a server starts with mass 1 on its own kind
and weight 1 at the initiator, 0 elsewhere, so s_k / w tends to the number of servers of
kind k. A node learns of a kind when a share names it; a kind it has not heard of is a
component of mass 0, which is what push-sum would hold for it. Masses are exact integers
in 2**-64 units halved as push-sum's are (``h = m // 2`` sent, ``m - h`` kept), so the
total of each kind is conserved exactly; only a lost share loses mass.

The frame carries every kind the sender holds mass of: 5 capacity vectors and 56 kinds
with attributes on a Google-like 100-server cluster, one key (msgpack of the capacity
and the attribute pairs) and one mass each. That is the price of knowing h_i and M_i for
any demand; a node could gossip only capacity vectors if no task is ever constrained.
"""

from __future__ import annotations

import random

from dgdrf.model.census import Census, ServerKind
from dgdrf.overlay.messages import CensusShare
from dgdrf.overlay.pushsum import SCALE, bytes_to_int, int_to_bytes, to_fixed
from dgdrf.overlay.sampling import PeerSampling
from dgdrf.runtime.actor import Role

#: the most kinds a census share may name (a frame from outside naming more is refused)
MAX_KINDS = 4096
#: the longest kind key accepted (a capacity vector and up to 32 attributes)
MAX_KEY_BYTES = 4096


class CensusSum(Role):
    """Push-sum of one-hot server kinds: :meth:`census` is the rounded estimate."""

    def __init__(self, kind: ServerKind, weight: float, sampler: PeerSampling, period: float = 1.0) -> None:
        self.kind = kind
        self._resources = len(kind.capacity)
        self._s: dict[bytes, int] = {kind.key(): SCALE}
        self._w = to_fixed(weight)
        self._kinds: dict[bytes, ServerKind] = {kind.key(): kind}
        self.sampler = sampler
        self.period = period
        self.rnd = random.Random(0)
        self._census: Census | None = None
        self._dirty = True

    def setup(self) -> None:
        self.rnd = random.Random(int(self.actor.rng.integers(2**62)))
        self.actor.every(self.period, self.round, first=self.rnd.uniform(0.0, self.period))

    @property
    def w(self) -> int:
        return self._w

    def masses(self) -> dict[bytes, int]:
        """Each kind's mass s_k (a copy)."""
        return dict(self._s)

    def estimate(self) -> dict[bytes, float] | None:
        """s_k / w per kind key: servers of each kind (None while this node holds no weight)."""
        w = self._w
        if w == 0:
            return None
        return {k: m / w for k, m in self._s.items()}  # int / int: correctly rounded

    def census(self) -> Census | None:
        """The estimate rounded to whole servers per kind; the same object while the
        rounded counts stay the same (a reader may cache what it derived from it)."""
        if self._dirty:
            self._dirty = False
            est = self.estimate()
            if est is None:
                self._census = None
            else:
                counts = {self._kinds[k]: n for k, x in est.items() if (n := int(round(x))) > 0}
                if self._census is None or dict(self._census.counts) != counts:
                    self._census = Census(counts)
        return self._census

    def round(self) -> None:
        """Algorithm 2's round: half of every kind's mass and of the weight to a random
        peer, the other half kept."""
        peer = self.sampler.random_peer()
        if peer is None:
            return
        kinds, sent = [], []
        for k, m in self._s.items():
            h = m // 2
            if h:
                self._s[k] = m - h
                kinds.append(k)
                sent.append(int_to_bytes(h))
        hw = self._w // 2
        self._w -= hw
        self._dirty = True
        self.actor.send(peer, CensusShare(kinds, sent, int_to_bytes(hw)))

    def on_CensusShare(self, src: str, msg: CensusShare) -> None:
        problem = self._check(msg)
        if problem is not None:
            self.actor.report("bad_message", type="CensusShare", src=src, reason=problem)
            return
        for k, b in zip(msg.kinds, msg.s):
            self._s[k] = self._s.get(k, 0) + bytes_to_int(b)
        self._w += bytes_to_int(msg.w)
        self._dirty = True

    def _check(self, msg: CensusShare) -> str | None:
        """What is wrong with a share, if anything; a bad share changes nothing."""
        if len(msg.kinds) != len(msg.s):
            return f"{len(msg.kinds)} kinds but {len(msg.s)} masses"
        if len(msg.kinds) > MAX_KINDS:
            return f"{len(msg.kinds)} kinds, more than {MAX_KINDS}"
        if any(len(b) > 17 for b in msg.s) or len(msg.w) > 17:
            return "a mass longer than 17 bytes"
        if any(bytes_to_int(b) < 0 for b in msg.s) or bytes_to_int(msg.w) < 0:
            return "a negative mass"
        for k in msg.kinds:
            if k in self._kinds:
                continue
            if len(k) > MAX_KEY_BYTES:
                return f"a kind key of {len(k)} bytes"
            try:
                kind = ServerKind.from_key(k)
            except ValueError as exc:
                return str(exc)
            if len(kind.capacity) != self._resources:
                return f"a kind of {len(kind.capacity)} resources, this cluster's have {self._resources}"
            self._kinds[k] = kind
        return None
