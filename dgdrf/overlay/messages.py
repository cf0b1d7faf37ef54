"""Message types of the overlay protocols (tags 20-39).

Descriptors travel as small arrays: Cyclon ``[address, age, profile]`` (profile: the
node's utility as it published it, or None), gradient ``[address, utility, stamp]``
(stamp: the origin's own counter, so fresher information about a node wins). Push-sum
masses are exact integers (fixed point, 2**-64 units) sent as signed big-endian bytes,
so the total mass is conserved exactly (thesis alg. 2, Kempe et al.).
"""

from __future__ import annotations

from dgdrf.runtime.messages import Message, message
from dgdrf.runtime.roles import BOOTSTRAP, SERVER


@message(20, senders=(SERVER,), cost="peer_sampling")
class Join(Message):
    """Node -> bootstrap: I am here; give me some peers."""

    want: int


@message(21, senders=(BOOTSTRAP,), max_frame=1 << 20, cost="peer_sampling")
class Peers(Message):
    """Bootstrap -> node: addresses of nodes that joined before you."""

    peers: list[str]


@message(22, senders=(SERVER,), cost="peer_sampling")
class CyclonShuffle(Message):
    """Cyclon initiator -> its oldest neighbour: l-1 of my entries plus myself at age 0."""

    entries: list[list]


@message(23, senders=(SERVER,), cost="peer_sampling")
class CyclonReply(Message):
    """Cyclon: up to l random entries of the receiver's view, back to the initiator."""

    entries: list[list]


@message(24, senders=(SERVER,), signed=("utility", "stamp"), infinite=("utility",), cost="gradient")
class GradientShuffle(Message):
    """Gradient: my utility (with its stamp) and my view's descriptors (thesis 4.4)."""

    utility: float
    stamp: int
    entries: list[list]


@message(25, senders=(SERVER,), signed=("utility", "stamp"), infinite=("utility",), cost="gradient")
class GradientReply(Message):
    """Gradient: the same, from the node that was asked."""

    utility: float
    stamp: int
    entries: list[list]


@message(26, senders=(SERVER,), cost="gradient")
class CentreCheck(Message):
    """Centre validation (thesis 3.3.1): (S_r minus {p}) plus {r}, sent by r to its lowest neighbour p."""

    nodes: list[str]
    check_id: int


@message(27, senders=(SERVER,), cost="gradient")
class CentreAck(Message):
    """p's answer: does the set equal p's own neighbour set?"""

    check_id: int
    ok: bool


@message(28, senders=(SERVER,), cost="aggregation")
class PushSumShare(Message):
    """Push-sum (thesis alg. 2): half of the sender's mass, s (vector) and w."""

    s: list[bytes]
    w: bytes


@message(29, senders=(SERVER,), cost="aggregation")
class CensusShare(Message):
    """Push-sum of the census of server kinds (overlay/census.py): half of the sender's
    mass of each kind it has heard of (``kinds``: each kind's key, model/census.py;
    ``s``: its mass, as PushSumShare's), and half of its weight."""

    kinds: list[bytes]
    s: list[bytes]
    w: bytes
