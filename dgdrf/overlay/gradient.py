# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""The gradient topology (thesis 2.4.2, 3.3, 3.3.1; Sacha et al., Terelius et al.).

Each node has a utility U supplied by its host (for scheduling: minus the lowest global
dominant share among its users, minus infinity with no users, eq. 3.12 / 4.2) and keeps
a view of P neighbours with the utility each last published. Every period it exchanges
its view with a random neighbour (thesis 4.4), adds a few fresh candidates drawn from the
peer-sampling service, and keeps the P it prefers by eq. 3.9: higher-utility nodes before
lower ones, and on the same side the closest to its own utility. Once converged, the
node with the highest utility has only lower neighbours (eq. 3.11, :meth:`is_centre`), and
those are the P next-highest nodes. :meth:`validate_centre` runs the handshake of 3.3.1.

Descriptors carry the origin's own stamp, so fresher news about a node replaces staler
news whichever neighbour relays it. Beyond the thesis's toolbox gradient (Kompics
toolbox, which keeps only the view), a node also remembers the freshest descriptor of
nodes it heard of, in view or not, and reconsiders them at every selection: without that
memory a node that dropped a neighbour after learning its utility fell would take it back
from any peer still relaying the old, higher utility; and a node that rose above us would
only be found again by chance, leaving room for a wrong centre that passes validation.

What is remembered: only nodes of finite utility (a node of utility -inf, a server
without users in eq. 4.2, is never above anyone who competes for the centre). A node of
finite utility remembers every such node it hears of, by default; a node of utility -inf,
which never allocates, the 4P + 16 it heard of most recently; ``memory=N`` bounds both to
the N most recently refreshed; ``memory=0`` is the toolbox's behaviour. Why every one:
when shares converge, the nodes with users form a tight pack whose order changes at
every allocation, and the top of the pack is the node that has not allocated for the
longest, and gossip relays it least (views are relayed, not memories, and the top is in
the views of only the few nodes just below it that know of it). A node that remembers
only the most recent can forget the true top and every node between; its lowest
neighbour, equally unaware, then confirms its claim (3.3.1 checks the view, not the
pack), and the wrong user allocates (seen with a memory of 24 on thesis-200x40 at P = 2:
docs/notes/2026-11-24-dgdrf-memory-200-servers.md). Remembering a stale descriptor is
safe: in these runs a utility only falls, so stale news overstates a node and at worst delays a
claim until fresher news arrives. The cost: a server with users holds up to one entry per
server with users (at 10,000 servers and 1,000 users, about 950); where every node has a
finite utility (``dgdrf overlay --protocol gradient``) memory grows with all the nodes a
node hears of, and ``memory=N`` bounds it.

The compiled build keeps the view and the memory in arrays: per entry a node
id, its utility as a C double, its stamp and its eq. 3.9 tie-break, computed once. The
memory's slots stay put while held; a refresh count gives its least-recently-refreshed
order, and two sorted indexes (by utility, tie-break and address; by tie-break and
address) let a selection offer only the few nodes that can be among the P best, as the
interpreted build's bisection into ``_ranked`` does. Exchange frames are read into
arrays and written from them (gradient.pxd). The interpreted build keeps its
dictionaries and reuses a selection when nothing in it can change (``_reselect``); both
give the same views (tests/test_differential.py, tests/test_overlay.py, bench/snapshot.py).
Utilities are floats in every run; an int utility would be kept as a float by the
compiled build only.
"""

from __future__ import annotations

import math
import random
import zlib
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable
from typing import Any

import msgpack

from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.messages import CentreAck, CentreCheck, GradientReply, GradientShuffle
from dgdrf.runtime.actor import Role
from dgdrf.runtime.addresses import BOOK
from dgdrf.runtime.twister import Twister

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

NO_STAMP = -1  # a utility heard second-hand from peer sampling: older than any stamped one
_NEG_INF = -math.inf
_INF = math.inf
_NO_STAMP = NO_STAMP  # compiled: a C constant
_HELD_IDLE = (_NEG_INF, NO_STAMP)
_SHUFFLE = GradientShuffle.TAG
_REPLY = GradientReply.TAG
_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack  # as the message objects' encoders
_unpackb = msgpack.unpackb


def most_preferred(own: float, candidates: Iterable[tuple[float, int, str]], P: int) -> list[str]:
    """Eq. 3.9 for a node of utility ``own``: the addresses of the ``P`` candidates
    (utility, tie-break, address) it prefers. Nodes at or above ``own`` come first, then
    those below; on each side the closer the better, equal utilities by tie-break. Only
    comparisons, so infinite utilities (nodes without users) never make a NaN.

    A node of utility -inf (eq. 4.2: no users) counts as below everyone, itself
    included: the distance between two -inf utilities is not defined, and taking it for 0
    made nodes without users prefer each other, so that they never relayed the nodes with
    users, and a node with users whose view held only nodes without users (at start, from
    stale peer-sampling profiles) stayed unaware of every other node with users and took
    itself for the centre (3.3.1 cannot refute a claim nobody around can judge). Nodes
    without users prefer the nodes with users instead, and so hold them.

    To a node of utility -inf every node with users is infinitely far above, all equally
    close, so they are ordered by the tie-break alone (:func:`idle_order`): each node
    without users holds its own random few. Taking "closest above" literally (the lowest
    utility first) made every node without users hold the same two or three lowest
    servers with users: those heard of nobody above them from most of their exchanges,
    took themselves for the centre, allocated, fell further and stayed the ones everybody
    held (PDGDRF on 200 servers x 40 users: two users took a third of the tasks, Gini
    0.75; fixed by gradient preference revision 2)."""
    candidates = list(candidates)
    if own == _NEG_INF:
        return [a for _, _, a in sorted(idle_order(u, t, a) for u, t, a in candidates)[:P]]
    higher = [c for c in candidates if c[0] >= own and c[0] != _NEG_INF]  # ascending = closest above first
    higher.sort()  # a C sort beats heapq.nsmallest at view sizes (tens of candidates)
    best = higher[:P]
    if len(best) < P:
        lower = [(-u, t, a) for u, t, a in candidates if u < own or u == _NEG_INF]  # ascending = closest below first
        lower.sort()
        best += lower[: P - len(best)]
    return [a for _, _, a in best]


def preferred(own: float, candidates: list[tuple[float, int, str]], P: int) -> list[str]:
    """:func:`most_preferred` for the hot path (the toolbox gradient's merge), the same
    result (tests/test_differential.py) for tie-breaks below 2**32, as
    :meth:`GradientBase.tiebreak_of`'s CRC-32s are: utilities compared as C doubles
    (compiled), and a node of utility -inf ranking :func:`_idle_key`'s as
    :meth:`Gradient._select_idle` does, instead of :func:`idle_order`'s triples."""
    u: float  # compiled: a C double, as _NEG_INF is
    keys: list[Any] = []  # _idle_key's for an idle node, else candidates as they are
    if own == _NEG_INF:
        for c in candidates:
            keys.append(_idle_key(c[0], c[1], c[2]))
        keys.sort()
        return [keys[i][1] for i in range(min(P, len(keys)))]
    lower = []
    for c in candidates:
        u = c[0]
        if u >= own and u != _NEG_INF:  # ascending = closest above first
            keys.append(c)
        else:
            lower.append(c)
    keys.sort()
    best = [keys[i][2] for i in range(min(P, len(keys)))]
    if len(best) < P:
        below = []
        for c in lower:
            below.append((-c[0], c[1], c[2]))  # ascending = closest below first
        below.sort()
        for i in range(min(P - len(best), len(below))):
            best.append(below[i][2])
    return best


def idle_order(u: float, t: int, addr: str) -> tuple[bool, int, str]:
    """The order of eq. 3.9 as a node of utility -inf sees (utility, tie-break, address),
    smallest preferred: every node with users first, by tie-break alone (all infinitely
    far above), then the nodes without users, by tie-break."""
    return (u == _NEG_INF, t, addr)


#: added to a node's tie-break (a CRC-32, below 2**32) to rank it as :func:`idle_order`
#: does when its utility is -inf (:func:`_idle_key`)
_IDLE_LAST = 1 << 32


def _idle_key(u: float, t: int, addr: str) -> tuple[int, str]:
    """:func:`idle_order` as a pair, for tie-breaks below 2**32 (CRC-32s): (tie-break,
    address), the tie-break raised by 2**32 for a node of utility -inf, so that every
    node with users comes first. A node's key changes only when its utility becomes or
    stops being -inf (:func:`_same_rank`)."""
    return (t + _IDLE_LAST if u == _NEG_INF else t, addr)


def _same_rank(u: float, v: float, idle: bool) -> bool:
    """Whether a node ranks alike at utility ``u`` and at ``v``, to a node of utility -inf
    (``idle``: :func:`_idle_key`, both -inf or both finite) or to one with users (eq. 3.9:
    the same utility)."""
    if idle:
        return (u == _NEG_INF) == (v == _NEG_INF)
    return u == v


#: Raised whenever the preference of eq. 3.9 changes (both gradients use it), so that
#: runs of policies that run a gradient, recorded before, are told apart (bench/staleness.py:
#: revision_params). 1: a node of utility -inf preferred the lowest nodes with users;
#: 2: all nodes with users equally (by tie-break, :func:`idle_order`).
PREFERENCE_REVISION = 2


#: Raised whenever a change alters what the stamped gradient does, so that runs recorded
#: with an older one are told apart (bench/staleness.py: revision_params). 2: no node of
#: utility -inf is remembered, and by default a node with finite utility remembers every
#: node of finite utility it hears of (1: any node, the 4P + 16 most recent). 3: a node
#: that was held and then said its utility is -inf is not taken back from older news.
REVISION = 3


def choice(rnd: random.Random, seq: list) -> Any:
    """``rnd.choice(seq)``, the same draw from the same generator state: the element at
    ``getrandbits(k)`` for the bit length k of ``len(seq)``, redrawn while out of range
    (CPython's ``Random.choice`` and ``_randbelow_with_getrandbits``, as in 3.11-3.13).
    ``random.choice`` itself is interpreted Python, once per gradient exchange; this
    one compiles with the module."""
    return seq[choice_index(rnd, len(seq))]


def choice_index(rnd: random.Random, n: int) -> int:
    """The index :func:`choice` draws from a sequence of ``n`` elements."""
    if not n:
        raise IndexError("Cannot choose from an empty sequence")
    k = n.bit_length()
    getrandbits = rnd.getrandbits
    r = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


def default_memory(view_size: int) -> int:
    """How many recently heard nodes a node of utility -inf remembers unless told
    otherwise (a node of finite utility remembers every node of finite utility)."""
    return 4 * view_size + 16


class UtilitySource:
    """What a gradient orders by, as an object: a node's utility (eq. 4.2's U, for a
    server the minus lowest share of its home users) is its ``utility()``. A gradient
    given this bound method of a compiled source calls it in C (no Python call per
    exchange); any other callable is called as it is."""

    def utility(self) -> float:
        raise NotImplementedError


class GradientBase(Role):
    """What every gradient offers its host, whatever keeps its view: the view (address ->
    (utility, freshness)), the centre test of eq. 3.11 and the validation of 3.3.1.

    ``sample`` is the view as the host application sees it: the live view here; the
    toolbox gradient publishes a copy once per period, as Kompics does."""

    ROUNDS = ("exchange",)

    def __init__(
        self,
        utility: Callable[[], float],
        view_size: int,
        period: float,
        sampler: Cyclon | None,
        validation_timeout: float,
        idle_quiet: bool,
    ) -> None:
        if view_size < 1:
            raise ValueError(f"gradient view size must be at least 1, got {view_size}")
        self.utility = utility
        owner = getattr(utility, "__self__", None)
        #: the UtilitySource whose ``utility`` is ``utility``, or None (:meth:`_own_utility`)
        self._source = owner if isinstance(owner, UtilitySource) and getattr(utility, "__name__", "") == "utility" else None
        self.P = view_size
        self.period = period
        self.sampler = sampler
        self.validation_timeout = validation_timeout
        self.idle_quiet = idle_quiet
        #: the view, address -> (utility, freshness), in view order (:attr:`view`); the
        #: compiled toolbox gradient keeps its view in arrays instead
        self._view: dict[str, tuple[float, int]] = {}
        self._me_id = -1  # this node's id in the address book, from setup on
        self._checks: dict[int, Callable[[bool], None]] = {}
        self._check_seq = 0
        self._rnd = random.Random(0)
        self._tw: Twister | None = None  # compiled, from setup on: the same draws, in C
        #: seconds after start at which the node stops exchanging (a frozen gradient, as
        #: DDRF-gradient uses it); None: run for ever
        self.stop_after: float | None = None
        self._book = BOOK

    def setup(self) -> None:
        """Publish utilities through peer sampling and start the periodic exchange (at a
        random phase, so that nodes do not all exchange at once)."""
        self.me = self.actor.address
        self._me_id = self._book.id_of(self.me)
        self._salt_crc = zlib.crc32(self.me.encode())
        seed = int(self.actor.rng.integers(2**62))
        if cython.compiled:
            self._tw = Twister.seeded(seed)  # random.Random(seed), without making it
            first = self._tw.uniform(0.0, self.period)
        else:
            self._rnd = random.Random(seed)
            first = self._rnd.uniform(0.0, self.period)
        if self.sampler is not None and self.sampler.profile is None:
            self.sampler.profile = self.utility
        timer = self.actor.every(self.period, self.exchange, first=first)
        if self.stop_after is not None:
            self.actor.after(self.stop_after, timer.cancel)

    def fire_round(self, which: int) -> None:
        """Its one round (:meth:`Role.fire_round`): compiled, a C call of :meth:`exchange`."""
        self.exchange()

    def exchange(self) -> None:
        """One gradient round (each kind of gradient has its own)."""
        raise NotImplementedError

    @property
    def rnd(self) -> random.Random:
        """This node's generator (its own stream, seeded from the actor's): compiled, a
        :class:`~dgdrf.runtime.twister.Twister` draws from its state in C, and this is a
        copy of where it stands."""
        if self._tw is not None:
            return self._tw.to_random()
        return self._rnd

    @rnd.setter
    def rnd(self, rnd: random.Random) -> None:
        self._rnd = rnd
        self._tw = Twister(rnd) if cython.compiled else None

    def _draw_index(self, n: int) -> int:
        """A random index below ``n`` (> 0), as ``choice`` draws it (:func:`choice_index`)."""
        if self._tw is not None:
            return self._tw.randbelow(n)
        return choice_index(self._rnd, n)

    def tiebreak_of(self, addr: str) -> int:
        """The fixed hash that orders nodes of equal utility (eq. 3.9's ties), salted
        with this node's address so that ties do not all point at the same nodes.
        Computed at each use, not kept: a CRC of a short address costs about what a
        dictionary lookup does, and a node hears of ever more addresses (a cache of the
        last 256 took 24 of 143 MiB on 2,000 servers, the same results)."""
        if cython.compiled:
            return _crc32_of(addr, self._salt_crc)  # type: ignore[name-defined]  # gradient.pxd's: zlib's CRC-32, in C
        return zlib.crc32(addr.encode(), self._salt_crc)

    @property
    def view(self) -> dict[str, tuple[float, int]]:
        """The view: address -> (utility, freshness), in view order."""
        return self._view

    @view.setter
    def view(self, view: dict[str, tuple[float, int]]) -> None:
        self._view = view

    @property
    def sample(self) -> dict[str, tuple[float, int]]:
        return self._view

    def sample_utilities(self) -> Any:
        """The utilities of :attr:`sample`, in its order, as doubles (PDGDRF's Gini test
        reads them; compiled gradients hand over their arrays without a dictionary)."""
        return array("d", [u for u, _ in self.sample.values()])

    def _own_utility(self) -> Any:
        """``self.utility()``; compiled, a C call where it is a UtilitySource's."""
        if cython.compiled and self._source is not None:
            return self._source.utility()
        return self.utility()

    # -- queries ---------------------------------------------------------------------
    def neighbours(self) -> list[str]:
        return list(self.sample)

    def is_centre(self) -> bool:
        """Eq. 3.11: every neighbour's (last known) utility is below mine. A node that
        knows no other node is the centre only if it is alone (the bootstrap knows no other
        node, :attr:`Cyclon.alone`): the lone server of a one-server cluster."""
        sample = self.sample
        if not sample:
            return self._alone()
        own = self._own_utility()
        for desc in sample.values():
            if not desc[0] < own:
                return False
        return True

    def _alone(self) -> bool:
        return self.sampler is not None and self.sampler.alone

    def lowest_neighbour(self) -> str | None:
        """The neighbour with the lowest known utility (ties: first in view order)."""
        sample = self.sample
        return min(sample, key=lambda a: sample[a][0]) if sample else None

    # -- centre validation (thesis 3.3.1) ---------------------------------------------------
    def validate_centre(self, done: Callable[[bool], None]) -> None:
        """Send (S \\ {p}) u {self} to the lowest neighbour p; ``done(ok)`` gets p's verdict
        (False after ``validation_timeout`` seconds without an answer). p confirms if that
        set is its own view's nodes of finite utility.

        Neighbours of utility -inf (servers without users, eq. 4.2) take no part: they
        are not in the race for the centre, and when fewer than P nodes have users the
        centre's view must hold some of them. With no finite neighbour at all, this node
        knows no other node with users: it asks its lowest neighbour (without users, so
        preferring nodes with users, :func:`most_preferred`) whether this node is the only
        one with users that it knows of. With no neighbour at all the claim passes only
        for a node that is alone (:meth:`is_centre`)."""
        finite = self._finite_view()
        if not self.sample:
            done(self._alone())
            return
        if finite:
            p = min(finite, key=finite.get)  # type: ignore[arg-type]  # every key is in finite
            nodes = sorted((set(finite) - {p}) | {self.actor.address})
        else:
            p = self.lowest_neighbour()  # type: ignore[assignment]  # not None: the sample is not empty
            nodes = [self.actor.address]
        self._check_seq += 1
        cid = self._check_seq
        self._checks[cid] = done
        self.actor.send(p, CentreCheck(nodes, cid))
        self.actor.after(self.validation_timeout, self._expire, cid)

    def _finite_view(self) -> dict[str, float]:
        return {a: u for a, (u, _) in self.sample.items() if u != _NEG_INF}

    def _expire(self, cid: int) -> None:
        done = self._checks.pop(cid, None)
        if done is not None:
            done(False)

    def on_CentreCheck(self, src: str, msg: CentreCheck) -> None:
        self.actor.send(src, CentreAck(msg.check_id, set(msg.nodes) == set(self._finite_view())))

    def on_CentreAck(self, src: str, msg: CentreAck) -> None:
        done = self._checks.pop(msg.check_id, None)
        if done is not None:
            done(bool(msg.ok))

    # -- exchanges received (each kind of gradient answers and merges in its own way) --------
    #: exchanges arrive as frames and are read here, with no message object;
    #: network mode decodes and checks them first and calls the on_<Msg> handlers
    FRAME_TAGS = (_SHUFFLE, _REPLY)

    def on_frame(self, src: int, data: bytes) -> None:
        """A GradientShuffle's or GradientReply's frame from node id ``src`` (its second
        byte is the tag), read into its fields (:func:`read_exchange`)."""
        got = read_exchange(data)
        if data[1] == _SHUFFLE:
            self._answer(src, self._book.names[src], got[0], got[1], got[2])
        else:
            self._replied(self._book.names[src], got[0], got[1], got[2])

    def on_GradientShuffle(self, src: str, msg: GradientShuffle) -> None:
        """A shuffle as a message object (network mode decodes and checks frames first)."""
        self._answer(self._book.id_of(src), src, msg.utility, msg.stamp, msg.entries)

    def on_GradientReply(self, src: str, msg: GradientReply) -> None:
        self._replied(src, msg.utility, msg.stamp, msg.entries)

    def _answer(self, src_id: int, src: str, utility: float, stamp: int, entries: list) -> None:
        """Answer a shuffle from ``src`` (node id ``src_id``), then merge what it carried.
        (cpdef when compiled, not cdef: a gradient written as a Python subclass of the
        compiled base, as tests/test_differential.py loads one, overrides it.)"""
        raise NotImplementedError

    def _replied(self, src: str, utility: float, stamp: int, entries: list) -> None:
        """Merge the answer to this node's shuffle."""
        raise NotImplementedError


class Gradient(GradientBase):
    """The gradient overlay of one node (stamped descriptors, optional memory)."""

    def __init__(
        self,
        utility: Callable[[], float],
        view_size: int = 4,
        period: float = 1.0,
        sampler: Cyclon | None = None,
        candidates: int | None = None,
        validation_timeout: float = 1.0,
        idle_quiet: bool = False,
        memory: int | None = None,
    ) -> None:
        if memory is not None and memory < 0:
            raise ValueError(f"gradient memory must be non-negative, got {memory}")
        super().__init__(utility, view_size, period, sampler, validation_timeout, idle_quiet)
        self.candidates = view_size if candidates is None else candidates
        self.stamp = 0  # view values: (utility, stamp)
        self._fresh: dict[str, tuple[float, int]] = {}  # freshest stamped descriptor heard, LRU
        #: the remembered nodes as (utility, tie-break, address), kept sorted: selection
        #: bisects at its own utility instead of scanning every remembered node
        self._ranked: list[tuple[float, int, str]] = []
        self._rank_key: dict[str, tuple[float, int, str]] = {}
        #: the remembered nodes as (tie-break, address), kept sorted: the order in which a
        #: node of utility -inf prefers them (:func:`idle_order`), whatever their utility
        self._by_tiebreak: list[tuple[int, str]] = []
        #: bound on remembered nodes; None: every node of finite utility while this node's
        #: utility is finite, else ``_idle_limit``
        self._fresh_limit = memory
        self._idle_limit = default_memory(view_size)
        self._awaiting: str | None = None  # the partner of the last exchange, until it answers
        self._suspects: dict[str, int] = {}  # silent partners -> newest stamp held of them
        #: nodes this one held (remembered or in view) that then said their utility is -inf
        #: -> the stamp that said so: older descriptors of them, still relayed by nodes that
        #: have not heard, are stale and must not bring them back (see :meth:`_merge`)
        self._gone: dict[str, int] = {}
        #: bumped whenever a key of ``_ranked`` changes (a node remembered, forgotten, or its
        #: utility changed): a selection made at the same version saw the same memory
        self._ranked_version = 0
        #: the last full selection, while it may be reused (see :meth:`_reselect`):
        #: (own utility, ``_ranked_version``, the view it made, the key of its last entry)
        self._last_selection: tuple[float, int, dict, tuple] | None = None
        #: compiled, the view and the memory in arrays instead (see :meth:`_merge_arrays`):
        #: per entry the node's id, utility, stamp and tie-break; the view in view order
        #: (``_vn`` entries); the memory (``_mn``) in slots that do not move while they
        #: are held, each with the count of refreshes (``_mq``, from ``_mseq``) when it
        #: was last refreshed: its order is theirs, least recently refreshed first
        self._vn = 0
        self._mn = 0
        self._mseq = 0
        room = 2 * view_size + 8 if cython.compiled else 0
        self._vid: Any = array("q", [0]) * room
        self._vu: Any = array("d", [0.0]) * room
        self._vs: Any = array("q", [0]) * room
        self._vt: Any = array("q", [0]) * room
        self._mid: Any = array("q", [0]) * room
        self._mu: Any = array("d", [0.0]) * room
        self._ms: Any = array("q", [0]) * room
        self._mt: Any = array("q", [0]) * room
        self._mq: Any = array("q", [0]) * room
        #: compiled: the memory's slots in two orders (see :meth:`_u_before`)
        self._mbyu: Any = array("q", [0]) * room
        self._mbyt: Any = array("q", [0]) * room
        #: compiled: the memory's index, node id -> slot (:meth:`_mslot`): open addressing
        #: on the id, linear probing, ids -1 where empty, at most half full
        self._hid: Any = array("q", [-1]) * (16 if cython.compiled else 0)
        self._hslot: Any = array("q", [0]) * (16 if cython.compiled else 0)
        self._vcache: dict[str, tuple[float, int]] | None = None  # compiled: :attr:`view` until it changes
        #: compiled: a bit per node id, set for every node ever put in ``_gone`` (a
        #: superset of its keys): a clear bit spares the dictionary's lookup
        self._gone_bits: Any = array("B", [0]) * (8 if cython.compiled else 0)
        #: compiled, :attr:`_last_selection` in fields: the ``_ranked_version`` of the last
        #: full selection while it may be reused (-1: none), its own utility, and eq. 3.9's
        #: key (g, v, t, node id) of the last node it chose (see :meth:`_reselect_arrays`)
        self._kept_version = -1
        self._kept_own = 0.0
        self._kg = 0
        self._kv = 0.0
        self._kt = 0
        self._ki = 0

    @property
    def view(self) -> dict[str, tuple[float, int]]:
        """The view: address -> (utility, stamp), in view order (compiled: made from the
        arrays when they change; not to be modified)."""
        if not cython.compiled:
            return self._view
        if self._vcache is None:
            names = self._book.names
            self._vcache = {names[self._vid[k]]: (self._vu[k], self._vs[k]) for k in range(self._vn)}
        return self._vcache

    @view.setter
    def view(self, view: dict[str, tuple[float, int]]) -> None:
        self._last_selection = None
        self._kept_version = -1
        if not cython.compiled:
            self._view = view
            return
        self._vcache = None
        self._vn = 0
        self._vroom(len(view))
        for addr, (u, s) in view.items():
            i = self._book.id_of(addr)
            self._vid[self._vn] = i
            self._vu[self._vn] = u
            self._vs[self._vn] = s
            self._vt[self._vn] = _tiebreak_id(self._book, i, self._salt_crc)  # type: ignore[name-defined]  # gradient.pxd's
            self._vn += 1

    @property
    def sample(self) -> dict[str, tuple[float, int]]:
        return self.view if cython.compiled else self._view

    def sample_utilities(self) -> Any:
        """:meth:`GradientBase.sample_utilities`; compiled, the view's array of utilities."""
        if cython.compiled:
            return self._vu[: self._vn]
        return GradientBase.sample_utilities(self)

    @property
    def remembered(self) -> dict[str, tuple[float, int]]:
        """The memory: address -> the freshest (utility, stamp) heard, least recently
        refreshed first (a copy)."""
        if not cython.compiled:
            return dict(self._fresh)
        names = self._book.names
        order = sorted(range(self._mn), key=lambda k: self._mq[k])
        return {names[self._mid[k]]: (self._mu[k], self._ms[k]) for k in order}

    def is_centre(self) -> bool:
        """:meth:`GradientBase.is_centre` (eq. 3.11); compiled, on the view's arrays (no
        dictionary of the view made for it)."""
        if not cython.compiled:
            return GradientBase.is_centre(self)
        if self._vn == 0:
            return self._alone()
        return _all_below(self._vu, self._vn, self._own_utility())

    # -- exchange (thesis 4.4) -----------------------------------------------------------
    def _descriptor(self) -> tuple[float, int]:
        self.stamp += 1
        return self._own_utility(), self.stamp

    def exchange(self) -> None:
        """One gradient round: fresh candidates from peer sampling, then swap views with
        a random neighbour (or a random peer while the view is empty).

        A node of utility -inf (eq. 4.2: a server without users) starts no rounds when
        ``idle_quiet`` is set; it still answers others' (thesis 4.3: only servers with
        users need to ask their neighbours)."""
        if self.idle_quiet and self._own_utility() == _NEG_INF:
            return
        if cython.compiled:
            self._exchange_arrays()
            return
        if self.sampler is not None:
            me = self.me
            sampled = {
                addr: (float(prof), NO_STAMP)
                for addr, prof in self.sampler.sample_descriptors(self.candidates)
                if addr != me and isinstance(prof, (int, float)) and addr not in self._suspects and addr not in self._gone
            }
            self._select(sampled)
        if self._awaiting is not None:
            self._suspect(self._awaiting)  # no answer within a whole period: presumed dead
        partner = choice(self._rnd, list(self._view)) if self._view else (self.sampler.random_peer() if self.sampler else None)
        if partner is None:
            return
        self._awaiting = partner
        u, s = self._descriptor()
        self._send_exchange(self._book.id_of(partner), _SHUFFLE, u, s)

    def warm(self, stage: int) -> None:
        """Compiled: the clock's hint that this node's round or an exchange for it is
        near (:class:`~dgdrf.runtime.clock.Warmable`). Two events ahead (stage 1): the
        rest of this object's scalar fields, the lines of its arrays' data pointers, the
        peer sampler's and the generator's first lines; one event ahead (stage 0): the
        view's arrays, the memory's first lines and what the sampler's draw reads (its
        own stage 1)."""
        if stage:
            prefetch_span(cython.cast(cython.p_void, self), 320)  # type: ignore[name-defined]  # prefetch.pxd's
            # the 13 arrays from _vid to _hslot, declared right after _mn (gradient.pxd)
            _warm_slices(cython.address(self._mn) + 1, 13)  # type: ignore[name-defined]  # gradient.pxd's
            if self.sampler is not None:
                prefetch_span(cython.cast(cython.p_void, self.sampler), 256)  # type: ignore[name-defined]
            if self._tw is not None:
                prefetch_span(cython.cast(cython.p_void, self._tw), 64)  # type: ignore[name-defined]
            return
        if self._vn:
            prefetch(cython.address(self._vid[0]))  # type: ignore[name-defined]
            prefetch(cython.address(self._vu[0]))  # type: ignore[name-defined]
            prefetch(cython.address(self._vs[0]))  # type: ignore[name-defined]
        if self._mn:
            prefetch(cython.address(self._mid[0]))  # type: ignore[name-defined]
            prefetch(cython.address(self._mu[0]))  # type: ignore[name-defined]
            prefetch(cython.address(self._ms[0]))  # type: ignore[name-defined]
            prefetch(cython.address(self._mbyu[0]))  # type: ignore[name-defined]
        if self.sampler is not None:
            self.sampler.warm(1)

    def _exchange_arrays(self) -> None:
        """Compiled only: :meth:`exchange` after its idle test, on the arrays, asking this
        node's utility once for the selection and the descriptor it sends (the round does
        not change the node's state, of which the utility is a function), and sending to
        the partner by node id."""
        u = self._own_utility()
        if self.sampler is not None:
            self._select_arrays(self._heard_sampled(), True, u)
        if self._awaiting is not None:
            self._suspect(self._awaiting)  # no answer within a whole period: presumed dead
        if self._vn:
            dst = self._vid[self._draw_index(self._vn)]
        else:
            dst = self.sampler.random_peer_id() if self.sampler is not None else -1
        if dst < 0:
            return
        self._awaiting = self._book.names[dst]
        self.stamp += 1  # :meth:`_descriptor`, with the utility asked above
        self._send_exchange(dst, _SHUFFLE, u, self.stamp)

    def _heard_sampled(self) -> int:
        """Compiled only: the interpreted round's ``sampled`` (peer sampling's utilities,
        NO_STAMP, but this node's own, suspects' and gone nodes') as heard in the scratch
        arrays, with each node's memory slot, for :meth:`_select_arrays`; returns their
        count. Cyclon's view holds a node once, so each is heard once, in draw order."""
        assert self.sampler is not None  # called only with one (exchange)
        k = self.candidates
        _reserve(k)
        m = self.sampler.sample_numbers(k, _HID, _HU)
        names, suspects, gone = self._book.names, self._suspects, self._gone
        h = 0
        for j in range(m):
            i = _HID[j]
            if i < 0 or i == self._me_id:
                continue
            if (suspects and names[i] in suspects) or (gone and self._maybe_gone(i) and names[i] in gone):
                continue
            _HID[h] = i
            _HU[h] = _HU[j]
            _HS[h] = _NO_STAMP
            _HPOS[h] = self._mslot(i)
            h += 1
        return h

    def announce(self) -> None:
        """Exchange at once with every node of finite utility this node remembers or holds
        in its view, in address order: this node's utility rose (``--gradient-announce``).
        With shares that only grow (the thesis's world) the centre moves only when it
        allocates; with tasks that end, a user's share falls anywhere, and until the old
        centre and its lowest neighbour hear of the new one, the old centre's validation
        (3.3.1) passes. A shuffle each, which they answer, as a round does."""
        targets = self.announce_targets()
        if not targets:
            return
        u, s = self._descriptor()
        for addr in targets:
            self._send_exchange(self._book.id_of(addr), _SHUFFLE, u, s)

    def announce_targets(self) -> list[str]:
        """Whom :meth:`announce` tells: the nodes of finite utility remembered or in the
        view (servers with users, eq. 4.2), in address order."""
        targets = {a for a, (u, _) in self.remembered.items() if u != _NEG_INF} | {a for a, (u, _) in self.view.items() if u != _NEG_INF}
        targets.discard(self.me)
        return sorted(targets)

    def _send_exchange(self, dst: int, tag: int, u: float, s: int) -> None:
        """Send node id ``dst`` this node's descriptor and view (GradientShuffle or
        GradientReply: ``tag``) as a frame (:func:`exchange_frame`; compiled, from the
        arrays)."""
        frame = None
        if cython.compiled and type(u) is float and type(s) is int:
            frame = _exchange_frame_ids(tag, u, s, self._book, self._vid, self._vu, self._vs, self._vn, False, 0)  # type: ignore[name-defined]  # gradient.pxd's
        if frame is None:
            frame = exchange_frame(tag, u, s, self.view)
        Role.send_frame(self, dst, tag, frame)

    def on_frame(self, src: int, data: bytes) -> None:
        """A GradientShuffle's or GradientReply's frame from node id ``src``: compiled,
        read into the scratch arrays (the sender first, then its entries) and merged from
        them; else as every gradient reads it (:meth:`GradientBase.on_frame`)."""
        if cython.compiled:
            m = _read_exchange_ids(self._book, data, cython.address(_HU[0]), cython.address(_HS[0]), _HID, _HU, _HS, 1)  # type: ignore[name-defined]  # gradient.pxd's
            if m < -1:
                _reserve(-1 - m)
                m = _read_exchange_ids(self._book, data, cython.address(_HU[0]), cython.address(_HS[0]), _HID, _HU, _HS, 1)  # type: ignore[name-defined]
            if m >= 0:
                _HID[0] = src
                if data[1] == _SHUFFLE:
                    u = self._own_utility()
                    self.stamp += 1  # :meth:`_descriptor`, without its tuple
                    self._send_exchange(src, _REPLY, u, self.stamp)
                    self._merge_arrays(m + 1, True, u)  # this node's utility, as just sent
                    return
                if self._book.names[src] == self._awaiting:
                    self._awaiting = None
                self._merge_arrays(m + 1, False, 0.0)
                return
        GradientBase.on_frame(self, src, data)

    def _answer(self, src_id: int, src: str, utility: float, stamp: int, entries: list) -> None:
        """Answer a shuffle with this node's descriptor and view, then merge it."""
        u, s = self._descriptor()
        self._send_exchange(src_id, _REPLY, u, s)
        self._merge(src, utility, stamp, entries)

    def _replied(self, src: str, utility: float, stamp: int, entries: list) -> None:
        if src == self._awaiting:
            self._awaiting = None
        self._merge(src, utility, stamp, entries)

    def _suspect(self, addr: str) -> None:
        """Drop a partner that did not answer, and ignore its descriptors until one newer
        than those we hold arrives (a dead node's last utility must not stay the
        gradient's top for ever, or no live node would see itself as the centre)."""
        self._awaiting = None
        if cython.compiled:
            i = self._book.id_of(addr)
            k = _find(self._vid, self._vn, i)
            j = self._mslot(i)
            held = ([self._vs[k]] if k >= 0 else []) + ([self._ms[j]] if j >= 0 else [])
            self._suspects[addr] = max(held, default=NO_STAMP)
            self._kept_version = -1
            if k >= 0:
                self._vcache = None
                _remove(self._vid, self._vu, self._vs, self._vt, self._vn, k)
                self._vn -= 1
            if j >= 0:
                self._forget_slot(j, 0)
            return
        held = [d[1] for d in (self._view.get(addr), self._fresh.get(addr)) if d is not None]
        self._suspects[addr] = max(held, default=NO_STAMP)
        self._view.pop(addr, None)
        self._last_selection = None
        self._forget(addr)

    def _forget(self, addr: str) -> None:
        if self._fresh.pop(addr, None) is not None:
            self._drop(addr)

    def _merge(self, src: str, utility: float, stamp: int, entries: list[list]) -> None:
        """Take the freshest descriptor of every node in the message, remember it (up to
        ``memory`` nodes), then reselect.

        A node we held that now says its utility is -inf (its users' tasks fit nowhere any
        more, eq. 4.2) leaves the memory, and the stamp that said so is kept: nodes that
        have not heard go on relaying its older, finite descriptor in their views, and
        taking that back would put a node that never allocates again above us for ever.
        Every server with users below it would then wait for it, and the run stall
        (docs/notes/2026-11-25-why-runs-stalled.md, "DGDRF's phantoms")."""
        if cython.compiled:
            _reserve(len(entries) + 1)
            self._merge_arrays(_load_entries([[src, utility, stamp], *entries], self.me, self._book, _HID, _HU, _HS), False, 0.0)
            return
        limit: float | None  # the memory's bound; None: the default, set below (_idle_limit, or inf: unbounded)
        me, fresh, limit, gone, view = self.me, self._fresh, self._fresh_limit, self._gone, self._view
        own = None  # this node's utility, asked once per merge and only when needed
        if limit is None:  # the default: unbounded while this node competes for the centre
            if len(fresh) >= self._idle_limit:
                own = self._own_utility()
            limit = self._idle_limit if own == _NEG_INF else _INF
        suspects = self._suspects
        heard: dict[str, tuple[float, int]] = {}
        for addr, u, s in [[src, utility, stamp], *entries]:
            if addr == me:
                continue
            if suspects and addr in suspects:
                if s <= suspects[addr]:
                    continue  # stale news of a node that stopped answering
                del suspects[addr]  # it is alive after all
            if gone and addr in gone:
                if s <= gone[addr]:
                    continue  # stale news of a node that left the gradient
                if u != _NEG_INF:
                    del gone[addr]  # it has users that can allocate again
            heard[addr] = (u, s)
            if not limit:
                continue
            known = fresh.get(addr)
            if known is None or s > known[1]:
                if u == _NEG_INF:
                    if known is not None or view.get(addr, _HELD_IDLE)[0] != _NEG_INF:
                        gone[addr] = s  # only nodes held as finite: an idle one has no older finite news
                    if known is not None:
                        del fresh[addr]
                        self._drop(addr)
                    continue  # outside the gradient: never above anyone, not worth a slot
                if known is None:
                    fresh[addr] = (u, s)
                    self._remember(addr, u)
                else:
                    del fresh[addr]  # re-inserted last: most recently refreshed
                    fresh[addr] = (u, s)
                    if known[0] != u:  # same utility: same rank key, _ranked unchanged
                        self._unrank(addr)
                        self._rank(addr, u)
                while len(fresh) > limit:
                    old = next(iter(fresh))
                    del fresh[old]  # forget the least recently refreshed
                    self._drop(old)
        self._select(heard, own)

    def _key(self, addr: str, u: float) -> tuple[float, int, str]:
        return (u, self.tiebreak_of(addr), addr)

    def _rank(self, addr: str, u: float) -> None:
        key = self._rank_key[addr] = self._key(addr, u)
        insort(self._ranked, key)
        self._ranked_version += 1

    def _unrank(self, addr: str) -> None:
        self._ranked_version += 1
        key = self._rank_key.pop(addr)
        ranked = self._ranked
        del ranked[bisect_left(ranked, key)]

    def _remember(self, addr: str, u: float) -> None:
        """A node joins the memory: ranked by utility (:meth:`_select`) and by tie-break
        (:meth:`_select_idle`)."""
        self._rank(addr, u)
        insort(self._by_tiebreak, (self._rank_key[addr][1], addr))

    def _drop(self, addr: str) -> None:
        """A node leaves the memory (the inverse of :meth:`_remember`)."""
        t = self._rank_key[addr][1]
        self._unrank(addr)
        by_tiebreak = self._by_tiebreak
        del by_tiebreak[bisect_left(by_tiebreak, (t, addr))]

    def _select(self, heard: dict[str, tuple[float, int]] | None = None, own: float | None = None) -> None:
        """Keep the P most preferred (eq. 3.9) of the view, the remembered nodes and
        ``heard`` (descriptors just received, or second-hand utilities from peer sampling
        with NO_STAMP), each with its freshest descriptor. Equal utilities are ordered by
        a per-node hash of the address, so ties do not all point at the same nodes.
        Reconsidering remembered nodes lets a node that rose above us be found again
        without waiting for peer sampling to offer it.

        The result is :func:`most_preferred` over that pool (the emulation's hottest
        path, so computed without building the pool): the remembered nodes are kept
        sorted, so the closest above this node's utility follow a bisection; the few
        descriptors of the view and of ``heard`` that are not remembered, or fresher
        than what is, are ranked beside them.

        Compiled, :meth:`_select_arrays` on ``heard`` copied into the scratch arrays."""
        if cython.compiled:
            h = 0
            if heard:
                _reserve(len(heard))
                for addr, desc in heard.items():
                    _HID[h] = self._book.id_of(addr)
                    _HU[h] = desc[0]
                    _HS[h] = desc[1]
                    _HPOS[h] = self._mslot(_HID[h])
                    h += 1
            self._select_arrays(h, own is not None, own if own is not None else 0.0)
            return
        fresh = self._fresh
        extra: dict[str, tuple[float, int]] = {}  # pool entries that do not come from fresh
        for addr, desc in self._view.items():  # first: none is in extra yet
            held = fresh.get(addr)
            if held is None or desc[1] > held[1]:
                extra[addr] = desc
        if heard:
            for addr, desc in heard.items():
                held = extra.get(addr)
                if held is None:
                    held = fresh.get(addr)
                if held is None or desc[1] > held[1]:
                    extra[addr] = desc
        P = self.P
        if len(fresh) <= P and len(fresh) + _count_missing(extra, fresh) <= P:
            pool = dict(fresh)
            pool.update(extra)
            self._view = pool
            self._last_selection = None
            return
        if own is None:
            own = self._own_utility()
        last = self._last_selection
        if last is not None and last[0] == own and last[1] == self._ranked_version and last[2] is self._view:
            view = self._reselect(extra, own, last[3])
            if view is not None:
                self._view = view
                self._last_selection = (own, last[1], view, last[3])
                return
        if own == _NEG_INF:
            self._select_idle(extra)
            return
        above = []
        below = []
        for addr, desc in extra.items():
            u = desc[0]
            t = self.tiebreak_of(addr)
            if u >= own and u != _NEG_INF:  # -inf is below everyone (most_preferred)
                above.append((u, t, addr))
            else:
                below.append((-u, t, addr))
        ranked = self._ranked
        start = bisect_left(ranked, (own,))  # first remembered node at or above own utility
        taken = 0
        for i in range(start, len(ranked)):
            k = ranked[i]
            if k[2] in extra:
                continue  # superseded by a fresher descriptor in extra
            above.append(k)
            taken += 1
            if taken == P:
                break
        above.sort()
        best = above[:P]
        if len(best) < P:
            need = P - len(best)
            taken = 0
            last_u = None
            for i in range(start - 1, -1, -1):  # down from just below own utility
                k = ranked[i]
                if taken >= need and k[0] != last_u:
                    break  # enough, and the group of equal utilities is complete
                if k[2] in extra:
                    continue
                below.append((-k[0], k[1], k[2]))
                taken += 1
                last_u = k[0]
            below.sort()
            best += [(-u, t, a) for u, t, a in below[:need]]
        view = {}
        for _, _, addr in best:
            view[addr] = extra[addr] if addr in extra else fresh[addr]
        self._view = view
        self._last_selection = None
        if len(view) == P and not _shadows(extra, fresh, view):
            u, t, addr = best[len(best) - 1]
            self._last_selection = (own, self._ranked_version, view, _preference(u, t, addr, own))

    def _select_idle(self, extra: dict[str, tuple[float, int]]) -> None:
        """:meth:`_select` for a node of utility -inf: the pool's P first in
        :func:`idle_order`. Utilities play no part here, and remembered nodes are all of
        finite utility, so they come in the order of ``_by_tiebreak``: only its first P
        that ``extra`` does not supersede can be chosen, and they are ranked with
        ``extra``'s few instead of the whole memory (on clusters where most servers
        have no users, this is the emulation's commonest selection)."""
        fresh, P = self._fresh, self.P
        key: tuple  # _idle_key's (tie-break, address)
        desc: tuple[float, int] | None
        keys = []
        for addr, desc in extra.items():
            keys.append(_idle_key(desc[0], self.tiebreak_of(addr), addr))
        taken = 0
        for key in self._by_tiebreak:
            if taken == P:
                break
            if key[1] in extra:
                continue  # superseded by a fresher descriptor in extra
            keys.append(key)  # remembered: of finite utility, its key as it is
            taken += 1
        keys.sort()
        view = {}
        for i in range(min(P, len(keys))):
            addr = keys[i][1]
            desc = extra.get(addr)
            view[addr] = desc if desc is not None else fresh[addr]
        self._view = view
        self._last_selection = None
        if len(view) == P and not _shadows(extra, fresh, view):
            self._last_selection = (_NEG_INF, self._ranked_version, view, keys[P - 1])

    def _reselect(self, extra: dict[str, tuple[float, int]], own: float, worst: tuple) -> dict[str, tuple[float, int]] | None:
        """The selection of :meth:`_select` without ranking the pool again, when nothing
        in it can have changed the result; None when something may have.

        Called only when the last full selection chose P nodes, with the same own
        utility and the same remembered keys (``_ranked_version``), and its view is the
        current one. The result is then the same P nodes in the same order, each with its
        freshest descriptor, if (a) every one of them still has the utility it was chosen
        with (for a node of utility -inf, whose selection is :meth:`_select_idle`'s: its
        utility is still -inf, or still finite), and (b) every other node whose
        descriptor is not the remembered one (in ``extra``) ranks below the last chosen
        (``worst``, eq. 3.9 as one total order: :func:`_preference`, or
        :func:`_idle_key`) and does not shadow a remembered descriptor (which could
        come back at another utility). Remembered nodes that were not chosen keep their
        keys, and were below ``worst``: the last full selection saw them, none shadowed
        (the selection is kept for reuse only then). In converged runs over 99 % of
        selections keep their nodes (thesis-200x40, dgdrf, P = 4), so this is the common
        case of the emulation's hottest path."""
        view, fresh = self._view, self._fresh
        desc: tuple[float, int] | None
        idle = own == _NEG_INF  # the last selection was _select_idle's: keys are _idle_key's
        for addr, desc in extra.items():
            held = view.get(addr)
            if held is not None:
                if not _same_rank(held[0], desc[0], idle):
                    return None
                continue
            if addr in fresh:
                return None  # shadows a remembered descriptor
            t = self.tiebreak_of(addr)
            if (_idle_key(desc[0], t, addr) if idle else _preference(desc[0], t, addr, own)) < worst:
                return None
        out = {}
        for addr, held in view.items():
            desc = extra.get(addr)
            if desc is None:
                desc = fresh.get(addr)
                if desc is None or not _same_rank(desc[0], held[0], idle):
                    return None
            out[addr] = desc
        return out


    # -- the compiled build's view and memory (the interpreted build keeps dictionaries) ----
    def _merge_arrays(self, m: int, own_known: bool, own: float) -> None:
        """:meth:`_merge` of the ``m`` descriptors (id, utility, stamp) in the scratch
        arrays ``_HID``, ``_HU``, ``_HS``, the sender's first, on the arrays; what
        ``heard`` holds there is left in the scratch's first places (each node once, at
        its first place, with its last descriptor, and its memory slot or -1 in
        ``_HPOS``) for :meth:`_select_arrays`. The same rules, in the same order, as the
        interpreted merge's. ``own``: this node's utility, if ``own_known`` (a merge
        asks for it at most once; the utility is a function of the node's state, which a
        merge does not change)."""
        if self._fresh_limit is not None:
            limit = self._fresh_limit
        else:  # the default: unbounded while this node competes for the centre
            limit = -1
            if self._mn >= self._idle_limit:
                if not own_known:
                    own = self._own_utility()
                    own_known = True
                if own == _NEG_INF:
                    limit = self._idle_limit
        names, suspects, gone = self._book.names, self._suspects, self._gone
        base = _id_marks(len(names))
        h = 0  # heard, each at _IDPOS[its id] - base - 1
        for j in range(m):
            i = _HID[j]
            u = _HU[j]
            s = _HS[j]
            if i == self._me_id:
                continue
            if suspects:
                addr = names[i]
                if addr in suspects:
                    if s <= suspects[addr]:
                        continue  # stale news of a node that stopped answering
                    del suspects[addr]  # it is alive after all
            if gone and self._maybe_gone(i):
                addr = names[i]
                if addr in gone:
                    if s <= gone[addr]:
                        continue  # stale news of a node that left the gradient
                    if u != _NEG_INF:
                        del gone[addr]  # it has users that can allocate again
            x = _IDPOS[i] - base - 1  # heard: first place, last descriptor
            if x < 0:
                x = h
                h += 1
                _HID[x] = i
                _IDPOS[i] = base + x + 1
            _HU[x] = u
            _HS[x] = s
            k = self._mslot(i)
            _HPOS[x] = k
            if limit == 0 or (k >= 0 and s <= self._ms[k]):
                continue
            if u == _NEG_INF:
                if k >= 0:
                    gone[names[i]] = s
                    self._note_gone(i)
                    self._forget_slot(k, h)
                else:
                    v = _find(self._vid, self._vn, i)
                    if v >= 0 and self._vu[v] != _NEG_INF:
                        gone[names[i]] = s  # only nodes held as finite
                        self._note_gone(i)
                continue  # outside the gradient: never above anyone, not worth a slot
            if k < 0:
                self._mroom(self._mn + 1)
                k = self._mn
                self._mid[k] = i
                if 2 * (k + 1) > len(self._hid):
                    self._mreindex(4 * (k + 1))  # the slots before k
                self._mindex(i, k)
                self._mu[k] = u
                self._mt[k] = _tiebreak_id(self._book, i, self._salt_crc)  # type: ignore[name-defined]  # gradient.pxd's
                self._index_add(k)
                self._mn += 1
                _HPOS[x] = k
            elif self._mu[k] != u:  # a new rank key: moved in the utility order
                self._ranked_version += 1
                _delete(self._mbyu, self._place(True, k, self._mn), self._mn)
                self._mu[k] = u
                _insert(self._mbyu, self._place(True, k, self._mn - 1), self._mn - 1, k)
            self._mseq += 1
            self._mq[k] = self._mseq  # most recently refreshed
            self._ms[k] = s
            while limit >= 0 and self._mn > limit:  # forget the least recently refreshed
                oldest = 0
                for k in range(1, self._mn):
                    if self._mq[k] < self._mq[oldest]:
                        oldest = k
                self._forget_slot(oldest, h)
        self._select_arrays(h, own_known, own)

    def _note_gone(self, i: int) -> None:
        """Set node id ``i``'s bit of ``_gone_bits`` (compiled), growing it."""
        if (i >> 3) >= len(self._gone_bits):
            self._gone_bits = _grown(self._gone_bits, "B", 2 * (i >> 3) + 8)
        self._gone_bits[i >> 3] |= 1 << (i & 7)

    def _maybe_gone(self, i: int) -> bool:
        """Whether node id ``i`` may be a key of ``_gone`` (compiled; False: it is not)."""
        return (i >> 3) < len(self._gone_bits) and (self._gone_bits[i >> 3] >> (i & 7)) & 1 == 1

    def _forget_slot(self, k: int, h: int) -> None:
        """Drop memory slot ``k``: the last slot moves into it, and the first ``h`` heard
        entries' slots (``_HPOS``) follow."""
        self._ranked_version += 1
        last = self._mn - 1
        for x in range(h):
            if _HPOS[x] == k:
                _HPOS[x] = -1
            elif _HPOS[x] == last:
                _HPOS[x] = k
        _delete(self._mbyu, self._place(True, k, self._mn), self._mn)
        _delete(self._mbyt, self._place(False, k, self._mn), self._mn)
        if k != last:  # the last slot's places in the orders now name k
            self._mbyu[self._place(True, last, last)] = k
            self._mbyt[self._place(False, last, last)] = k
        self._munindex(self._mid[k])
        if k != last:
            self._mindex(self._mid[last], k)
        self._mid[k] = self._mid[last]
        self._mu[k] = self._mu[last]
        self._ms[k] = self._ms[last]
        self._mt[k] = self._mt[last]
        self._mq[k] = self._mq[last]
        self._mn = last

    # The memory's index (compiled): node id -> slot, where a search of the memory's ids
    # took a step per slot, and the memory is unbounded while a node competes for the centre
    def _mslot(self, i: int) -> int:
        """Node id ``i``'s memory slot, -1 if it is not remembered."""
        mask = len(self._hid) - 1
        x = i & mask
        while self._hid[x] >= 0:
            if self._hid[x] == i:
                return self._hslot[x]
            x = (x + 1) & mask
        return -1

    def _mindex(self, i: int, k: int) -> None:
        """Index node id ``i`` at slot ``k`` (a new entry, or the slot of one held); the
        index has room (a new entry: :meth:`_mreindex` first if it would be half full)."""
        mask = len(self._hid) - 1
        x = i & mask
        while self._hid[x] >= 0 and self._hid[x] != i:
            x = (x + 1) & mask
        self._hid[x] = i
        self._hslot[x] = k

    def _munindex(self, i: int) -> None:
        """Take node id ``i`` out of the index: the entries after it in its run move back
        into the hole where their probe would pass it (deletion without tombstones)."""
        mask = len(self._hid) - 1
        x = i & mask
        while self._hid[x] != i:
            if self._hid[x] < 0:
                return
            x = (x + 1) & mask
        y = x
        while True:
            y = (y + 1) & mask
            if self._hid[y] < 0:
                break
            home = self._hid[y] & mask
            # the entry at y stays unless its home is cyclically outside (x, y]
            if (x < y and (home <= x or home > y)) or (x > y and home <= x and home > y):
                self._hid[x] = self._hid[y]
                self._hslot[x] = self._hslot[y]
                x = y
        self._hid[x] = -1

    def _mreindex(self, size: int) -> None:
        """A new index of at least ``size`` places (a power of two) over the memory's slots."""
        n = 16
        while n < size:
            n *= 2
        self._hid = array("q", [-1]) * n
        self._hslot = array("q", [0]) * n
        mask = n - 1
        for k in range(self._mn):
            x = self._mid[k] & mask
            while self._hid[x] >= 0:
                x = (x + 1) & mask
            self._hid[x] = self._mid[k]
            self._hslot[x] = k

    # The memory's two orders (compiled): its slots by (utility, tie-break, address), eq.
    # 3.9's order around a node of finite utility, and by (tie-break, address), the order
    # of a node of utility -inf (the memory holds only nodes of finite utility). Keys are
    # unique (addresses are), so a slot's place in either is found by bisection.
    def _u_before(self, a: int, b: int) -> bool:
        """Whether slot ``a`` comes before slot ``b`` by (utility, tie-break, address)."""
        if self._mu[a] != self._mu[b]:
            return self._mu[a] < self._mu[b]
        return self._t_before(a, b)

    def _t_before(self, a: int, b: int) -> bool:
        """Whether slot ``a`` comes before slot ``b`` by (tie-break, address)."""
        if self._mt[a] != self._mt[b]:
            return self._mt[a] < self._mt[b]
        return self._book.names[self._mid[a]] < self._book.names[self._mid[b]]

    def _first_at_or_above(self, u: float, n: int) -> int:
        """The first of the first ``n`` places of the utility order whose utility is at
        least ``u`` (``n`` if none): a bisection."""
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if self._mu[self._mbyu[mid]] < u:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _place(self, by_utility: bool, k: int, n: int) -> int:
        """Where slot ``k`` is, or goes, among the first ``n`` places of the utility order
        (``by_utility``) or of the tie-break order: a bisection."""
        order = self._mbyu if by_utility else self._mbyt
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            j = order[mid]
            if j != k and (self._u_before(j, k) if by_utility else self._t_before(j, k)):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _index_add(self, k: int) -> None:
        """Put the new slot ``k`` (not yet counted in ``_mn``) into both orders."""
        self._ranked_version += 1
        _insert(self._mbyu, self._place(True, k, self._mn), self._mn, k)
        _insert(self._mbyt, self._place(False, k, self._mn), self._mn, k)

    def _select_arrays(self, h: int, own_known: bool, own: float) -> None:
        """:meth:`_select` on the arrays, ``heard`` being the first ``h`` descriptors of
        the scratch (their memory slots, or -1, in ``_HPOS``).

        The pool is the memory, where the view or ``heard`` holds a fresher descriptor
        of a remembered node (an override, kept in ``_O*``: the memory keeps its own),
        and the nodes of the view and ``heard`` that are not remembered (``_P*``, in
        that order), each with its freshest descriptor, the earlier kept on equal stamps.
        Of P nodes or fewer, the view is all of them: the memory least recently
        refreshed first, then the others; else the P most preferred by eq. 3.9
        (:func:`_prefers`), in that order, ranked without moving the memory, unless the
        last such ranking still holds (:meth:`_reselect_arrays`)."""
        mn = self._mn
        _reserve(mn + self._vn + h)
        base = _id_marks(len(self._book.names))
        ne = 0  # the pool's nodes that are not remembered, each at _IDPOS[its id] - base - 1
        no = 0  # overrides of remembered descriptors
        for k in range(self._vn):
            j = self._mslot(self._vid[k])
            _VSLOT[k] = j if j >= 0 else -1 - ne  # where the view's entry k is in the pool
            if j < 0:
                _PID[ne] = self._vid[k]
                _PU[ne] = self._vu[k]
                _PS[ne] = self._vs[k]
                _PT[ne] = self._vt[k]
                _IDPOS[self._vid[k]] = base + ne + 1
                ne += 1
            elif self._vs[k] > self._ms[j]:
                _OPOS[no] = j
                _OU[no] = self._vu[k]
                _OS[no] = self._vs[k]
                no += 1
        nv = ne  # the first nv nodes not remembered are the view's
        for x in range(h):
            j = _HPOS[x]
            if j >= 0:
                o = _find(_OPOS, no, j)
                if o < 0:
                    if _HS[x] > self._ms[j]:
                        _OPOS[no] = j
                        _OU[no] = _HU[x]
                        _OS[no] = _HS[x]
                        no += 1
                elif _HS[x] > _OS[o]:
                    _OU[o] = _HU[x]
                    _OS[o] = _HS[x]
                continue
            e = _IDPOS[_HID[x]] - base - 1
            if e < 0:
                _PID[ne] = _HID[x]
                _PU[ne] = _HU[x]
                _PS[ne] = _HS[x]
                _PT[ne] = _tiebreak_id(self._book, _HID[x], self._salt_crc)  # type: ignore[name-defined]  # gradient.pxd's
                _IDPOS[_HID[x]] = base + ne + 1
                ne += 1
            elif _HS[x] > _PS[e]:
                _PU[e] = _HU[x]
                _PS[e] = _HS[x]
        P = self.P
        n = mn + ne
        self._vcache = None
        self._vroom(P if n > P else n)
        kept = False  # this selection may be reused
        if n <= P:
            for k in range(mn):  # the memory in its order (it holds P nodes or fewer)
                _RANK[k] = k
                j = k
                while j > 0 and self._mq[_RANK[j - 1]] > self._mq[k]:
                    _RANK[j] = _RANK[j - 1]
                    j -= 1
                _RANK[j] = k
            for k in range(ne):
                _RANK[mn + k] = mn + k
        else:
            if not own_known:
                own = self._own_utility()
            if self._kept_version == self._ranked_version and own == self._kept_own and self._vn == P and self._reselect_arrays(no, ne, nv, own):
                return
            names = self._book.names
            for o in range(no):
                _OVER[_OPOS[o]] = o + 1
            # offered: the overrides and the nodes not remembered, then of the memory only
            # what can be among the P best: the first P of the tie-break order (own
            # utility -inf), else the first P at or above own utility, and if fewer, the
            # first below (whole groups of equal utility: walking down, equal utilities
            # come by descending tie-break)
            r = 0
            for o in range(no):
                k = _OPOS[o]
                r = _rank_in(r, P, _OU[o], self._mt[k], self._mid[k], k, own, names)
            for e in range(ne):
                r = _rank_in(r, P, _PU[e], _PT[e], _PID[e], mn + e, own, names)
            if own == _NEG_INF:
                taken = 0
                for j in range(mn):
                    k = self._mbyt[j]
                    if no and _OVER[k]:
                        continue
                    r = _rank_in(r, P, self._mu[k], self._mt[k], self._mid[k], k, own, names)
                    taken += 1
                    if taken == P:
                        break
            else:
                lo = self._first_at_or_above(own, mn)
                taken = 0
                for j in range(lo, mn):
                    k = self._mbyu[j]
                    if no and _OVER[k]:
                        continue
                    r = _rank_in(r, P, self._mu[k], self._mt[k], self._mid[k], k, own, names)
                    taken += 1
                    if taken == P:
                        break
                # below own utility, closest first: the groups of equal utility walking
                # down, each from its first place up (its order is eq. 3.9's within the
                # group: tie-break, then address), until P - taken are offered; every
                # memory node after those has P nodes before it, so it cannot be among the P
                need = P - taken
                taken = 0
                j = lo - 1  # the group's last place
                while taken < need and j >= 0:
                    a = self._first_at_or_above(self._mu[self._mbyu[j]], j)  # the group's first place
                    for x in range(a, j + 1):
                        k = self._mbyu[x]
                        if no and _OVER[k]:
                            continue
                        r = _rank_in(r, P, self._mu[k], self._mt[k], self._mid[k], k, own, names)
                        taken += 1
                        if taken == need:
                            break
                    j = a - 1
            for o in range(no):
                _OVER[_OPOS[o]] = 0
            n = P
            kept = P > 0
        chosen = 0  # overrides chosen
        for j in range(n):
            k = _RANK[j]
            if k < mn:
                o = _find(_OPOS, no, k)
                chosen += o >= 0
                self._vid[j] = self._mid[k]
                self._vu[j] = self._mu[k] if o < 0 else _OU[o]
                self._vs[j] = self._ms[k] if o < 0 else _OS[o]
                self._vt[j] = self._mt[k]
            else:
                self._vid[j] = _PID[k - mn]
                self._vu[j] = _PU[k - mn]
                self._vs[j] = _PS[k - mn]
                self._vt[j] = _PT[k - mn]
        self._vn = n
        # kept for reuse when every override was chosen: one left out would shadow a
        # remembered descriptor, which can come back at another rank (_reselect)
        self._kept_version = self._ranked_version if kept and chosen == no else -1
        if kept:
            self._kept_own = own
            self._kg, self._kv, self._kt, self._ki = _RG[P - 1], _RV[P - 1], _RT[P - 1], _RI[P - 1]

    def _reselect_arrays(self, no: int, ne: int, nv: int, own: float) -> bool:
        """:meth:`_reselect` on the arrays, within :meth:`_select_arrays` (whose pool it
        reads: the overrides ``_O*``, the nodes not remembered ``_P*``, of which the
        first ``nv`` are the view's, and where each view entry is in them, ``_VSLOT``),
        when the last full selection was kept for reuse at this own utility and memory
        (``_kept_version``). The view keeps its nodes in its order, each with its
        freshest descriptor, and True is returned, if (a) each of them ranks as it was
        chosen (:func:`_same_rank`), (b) every override is of a node in the view (else
        it shadows a remembered descriptor) and (c) every node neither remembered nor in
        the view ranks after the last chosen (eq. 3.9's key ``_kg``, ``_kv``, ``_kt``,
        ``_ki``); else False, and the ranking follows (it reads the pool, not the view,
        and writes the whole view, so entries refreshed here before a check failed do not
        matter)."""
        names = self._book.names
        for e in range(nv, ne):
            g, v, t = _eq39_key(_PU[e], _PT[e], own)  # type: ignore[name-defined]  # gradient.pxd's
            if not _key_before(self._kg, self._kv, self._kt, self._ki, g, v, t, _PID[e], names):
                return False
        idle = own == _NEG_INF
        held = 0  # overrides of nodes in the view
        for k in range(self._vn):
            j = _VSLOT[k]
            if j < 0:
                u, s = _PU[-1 - j], _PS[-1 - j]
            else:
                o = _find(_OPOS, no, j)
                if o < 0:
                    u, s = self._mu[j], self._ms[j]
                else:
                    held += 1
                    u, s = _OU[o], _OS[o]
            if not _same_rank(u, self._vu[k], idle):
                return False
            self._vu[k] = u
            self._vs[k] = s
        return held == no

    def _vroom(self, n: int) -> None:
        """Make the view's arrays hold at least ``n`` entries."""
        if n > len(self._vid):
            self._vid = _grown(self._vid, "q", 2 * n)
            self._vu = _grown(self._vu, "d", 2 * n)
            self._vs = _grown(self._vs, "q", 2 * n)
            self._vt = _grown(self._vt, "q", 2 * n)

    def _mroom(self, n: int) -> None:
        """Make the memory's arrays hold at least ``n`` entries."""
        if n > len(self._mid):
            self._mid = _grown(self._mid, "q", 2 * n)
            self._mu = _grown(self._mu, "d", 2 * n)
            self._ms = _grown(self._ms, "q", 2 * n)
            self._mt = _grown(self._mt, "q", 2 * n)
            self._mq = _grown(self._mq, "q", 2 * n)
            self._mbyu = _grown(self._mbyu, "q", 2 * n)
            self._mbyt = _grown(self._mbyt, "q", 2 * n)


#: compiled: scratch shared by every gradient of the process (handlers run one at a time
#: and never re-enter): the descriptors being merged, then what was heard (id, utility,
#: stamp, memory slot); the selection's nodes that are not remembered (id, utility,
#: stamp, tie-break) and its overrides of remembered ones (slot, utility, stamp, and
#: per slot the override's place + 1, else 0); the best entries and their keys
_HID = array("q", [0]) * 64
_HU = array("d", [0.0]) * 64
_HS = array("q", [0]) * 64
_HPOS = array("q", [0]) * 64
_PID = array("q", [0]) * 64
_PU = array("d", [0.0]) * 64
_PS = array("q", [0]) * 64
_PT = array("q", [0]) * 64
_OPOS = array("q", [0]) * 64
_OU = array("d", [0.0]) * 64
_OS = array("q", [0]) * 64
_OVER = array("q", [0]) * 64
_RANK = array("q", [0]) * 64
#: where each entry of the view is in a selection's pool: its memory slot, or -1 - its
#: place among the nodes not remembered
_VSLOT = array("q", [0]) * 64
_RG = array("q", [0]) * 64
_RV = array("d", [0.0]) * 64
_RT = array("q", [0]) * 64
_RI = array("q", [0]) * 64
#: compiled: node id -> its place among what a merge heard, then among a selection's pool
#: of nodes not remembered, as marks of a generation (:func:`_id_marks`)
_IDPOS = array("q", [0]) * 1024
_IDBASE = 0
#: places a generation may mark (heard and pools are far smaller)
_ID_PLACES = 1 << 24


def _reserve(n: int) -> None:
    """Make the shared scratch hold at least ``n`` entries, keeping what it holds."""
    global _HID, _HU, _HS, _HPOS, _PID, _PU, _PS, _PT, _OPOS, _OU, _OS, _OVER, _RANK, _VSLOT, _RG, _RV, _RT, _RI
    if len(_HID) < n:
        _HID, _HU, _HS, _HPOS = _grown(_HID, "q", 2 * n), _grown(_HU, "d", 2 * n), _grown(_HS, "q", 2 * n), _grown(_HPOS, "q", 2 * n)
        _PID, _PU, _PS, _PT = _grown(_PID, "q", 2 * n), _grown(_PU, "d", 2 * n), _grown(_PS, "q", 2 * n), _grown(_PT, "q", 2 * n)
        _OPOS, _OU, _OS, _OVER = _grown(_OPOS, "q", 2 * n), _grown(_OU, "d", 2 * n), _grown(_OS, "q", 2 * n), _grown(_OVER, "q", 2 * n)
        _VSLOT = _grown(_VSLOT, "q", 2 * n)
        _RANK, _RG, _RV, _RT, _RI = _grown(_RANK, "q", 2 * n), _grown(_RG, "q", 2 * n), _grown(_RV, "d", 2 * n), _grown(_RT, "q", 2 * n), _grown(_RI, "q", 2 * n)


def _id_marks(n: int) -> int:
    """A new generation of ``_IDPOS``'s marks, for node ids below ``n``: its base (a
    place p is marked as base + p + 1; every mark of an earlier generation is at most the
    base, so nothing is ever cleared, not even by a handler that raised)."""
    global _IDPOS, _IDBASE
    if len(_IDPOS) < n:
        _IDPOS = _grown(_IDPOS, "q", 2 * n)
    _IDBASE += _ID_PLACES
    return _IDBASE


def _grown(a: Any, kind: str, n: int) -> Any:
    """A copy of the array ``a`` (of typecode ``kind``) with room for ``n``: zeros after
    what ``a`` holds."""
    out = array(kind, [0]) * n
    m = len(a)
    memoryview(out)[:m] = memoryview(a)[:m]  # one copy of the buffer, where indexing took a Python call an entry
    return out


def _all_below(us: Any, n: int, own: float) -> bool:
    """Eq. 3.11 on a view kept in arrays: whether each of the first ``n`` utilities ``us``
    is below ``own``."""
    for k in range(n):
        if not us[k] < own:
            return False
    return True


def _find(ids: Any, n: int, i: int) -> int:
    """The position of node id ``i`` among the first ``n`` of ``ids``, -1 if it is not there."""
    for k in range(n):
        if ids[k] == i:
            return k
    return -1


def _insert(order: Any, at: int, n: int, k: int) -> None:
    """Put ``k`` at place ``at`` of ``order`` (of ``n`` places); those after it move down."""
    for j in range(n, at, -1):
        order[j] = order[j - 1]
    order[at] = k


def _delete(order: Any, at: int, n: int) -> None:
    """Take place ``at`` out of ``order`` (of ``n`` places); those after it move up."""
    for j in range(at + 1, n):
        order[j - 1] = order[j]


def _load_entries(entries: Any, me: str, book: Any, ids: Any, us: Any, stamps: Any) -> int:
    """Copy decoded (address, utility, stamp) entries into the scratch arrays ``ids``,
    ``us`` and ``stamps`` (the caller makes room), leaving out this node (``me``); how
    many were copied. How the compiled gradients take entries that come as objects
    (network mode's messages, a test's)."""
    m = 0
    for entry in entries:
        addr, u, s = entry
        if addr == me:
            continue
        ids[m] = book.id_of(addr)
        us[m] = u
        stamps[m] = s
        m += 1
    return m


def _remove(ids: Any, us: Any, ss: Any, ts: Any, n: int, k: int) -> None:
    """Drop entry ``k`` of the ``n`` in the four parallel arrays; those after it move up,
    in order (the caller counts one entry less)."""
    for j in range(k + 1, n):
        ids[j - 1] = ids[j]
        us[j - 1] = us[j]
        ss[j - 1] = ss[j]
        ts[j - 1] = ts[j]


def _rank_in(r: int, P: int, u: float, t: int, i: int, code: int, own: float, names: list) -> int:
    """Offer a selection's pool's node ``i`` (utility ``u``, tie-break ``t``; ``code``: its
    memory slot, or ``_mn`` + its place in ``_P*``) to the best so far (``r`` of at
    most P, best first: keys in ``_R*``, codes in ``_RANK``); the count after."""
    g, v, t = _eq39_key(u, t, own)  # type: ignore[name-defined]  # gradient.pxd's
    if r == P:
        if not _key_before(g, v, t, i, _RG[P - 1], _RV[P - 1], _RT[P - 1], _RI[P - 1], names):
            return r
        r -= 1
    j = r
    while j > 0 and _key_before(g, v, t, i, _RG[j - 1], _RV[j - 1], _RT[j - 1], _RI[j - 1], names):
        _RG[j] = _RG[j - 1]
        _RV[j] = _RV[j - 1]
        _RT[j] = _RT[j - 1]
        _RI[j] = _RI[j - 1]
        _RANK[j] = _RANK[j - 1]
        j -= 1
    _RG[j] = g
    _RV[j] = v
    _RT[j] = t
    _RI[j] = i
    _RANK[j] = code
    return r + 1


def _key_before(g: int, v: float, t: int, i: int, g2: int, v2: float, t2: int, i2: int, names: list) -> bool:
    """Whether eq. 3.9's key (g, v, t) of node id ``i`` comes before the key (g2, v2, t2)
    of node id ``i2``: by g (0: at or above own utility, 1: below), then v (the utility
    above, minus it below: closest first), then the tie-break t (raised by 2**32 for a
    node of utility -inf when own utility is -inf, whose keys are (0, 0, t)), then the
    address (``names``). :func:`_prefers` as keys computed once an entry."""
    if g != g2:
        return g < g2
    if v != v2:
        return v < v2
    if t != t2:
        return t < t2
    return names[i] < names[i2]


def _prefers(ua: float, ta: int, a: int, ub: float, tb: int, b: int, own: float, names: list) -> bool:
    """Whether eq. 3.9 prefers node id ``a`` (utility ``ua``, tie-break ``ta``) to node
    id ``b`` for a node of utility ``own``, in :func:`preferred`'s order (the compiled
    views'): nodes at or above ``own`` first, closest first, then those below (and every
    -inf), closest first; to a node of utility -inf, by tie-break alone, every node with
    users first (:func:`_idle_key`); equal keys by address (``names``)."""
    if own == _NEG_INF:
        if ua == _NEG_INF:
            ta += _IDLE_LAST
        if ub == _NEG_INF:
            tb += _IDLE_LAST
    else:
        above_a = ua >= own and ua != _NEG_INF
        above_b = ub >= own and ub != _NEG_INF
        if above_a != above_b:
            return above_a
        if ua != ub:
            return ua < ub if above_a else ua > ub
    if ta != tb:
        return ta < tb
    return names[a] < names[b]


def exchange_frame(tag: int, u: float, s: int, view: dict[str, tuple[float, int]], clock: int | None = None) -> bytes:
    """The frame of GradientShuffle(u, s, entries) or GradientReply (``tag``), the
    entries [address, utility, stamp] of ``view`` (address -> (utility, stamp)) in its
    order; with ``clock``, the view holds births and the entries carry ages, ``clock`` -
    birth (the toolbox gradient's). The message object's bytes exactly, written without
    it. Compiled, in C (gradient.pxd); msgpack's packer for what that does not
    handle (a utility that is not a float, say)."""
    frame = _exchange_frame(tag, u, s, view, clock is not None, 0 if clock is None else clock) if cython.compiled else None  # type: ignore[name-defined]  # gradient.pxd's
    if frame is None:
        if clock is None:
            frame = _packb((tag, u, s, [(a, d[0], d[1]) for a, d in view.items()]))
        else:
            frame = _packb((tag, u, s, [(a, d[0], clock - d[1]) for a, d in view.items()]))
    return frame


def read_exchange(data: bytes) -> tuple[float, int, list]:
    """(utility, stamp, entries) of an exchange frame, as decoding its message object
    gives them (entries in C as tuples, whose addresses are the address book's own
    strings, so that lookups find them by identity; msgpack's lists otherwise)."""
    got = _read_exchange(BOOK, data) if cython.compiled else None  # type: ignore[name-defined]  # gradient.pxd's
    if got is None:
        arr = _unpackb(data)
        got = (arr[1], arr[2], arr[3])
    return got


def _count_missing(keys: dict, of: dict) -> int:
    """How many keys of ``keys`` are not in ``of``."""
    n = 0
    for a in keys:
        if a not in of:
            n += 1
    return n


def _shadows(extra: dict, fresh: dict, view: dict) -> bool:
    """Whether a node of ``extra`` is remembered (in ``fresh``) but not in ``view``."""
    for a in extra:
        if a in fresh and a not in view:
            return True
    return False


def _preference(u: float, t: int, addr: str, own: float) -> tuple:
    """Eq. 3.9's order as one sort key, smallest preferred (what :func:`most_preferred`
    and :meth:`Gradient._select` compute in two halves): nodes at or above ``own`` first,
    closest first, then those below (and every -inf), closest first; ties by the hash
    ``t``, then the address. For a finite ``own`` only (a node of utility -inf ranks by
    :func:`idle_order` and keeps no selection for reuse)."""
    if u >= own and u != _NEG_INF:
        return (0, u, t, addr)
    return (1, -u, t, addr)
