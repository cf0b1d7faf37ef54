# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""Cyclon peer sampling (Voulgaris et al. 2005; thesis 2.4.1): a random overlay.

Each node keeps a view of at most ``c`` descriptors (address, age, profile). Every
period it ages its view by one, removes its oldest neighbour Q, and sends Q ``l - 1``
random entries plus a fresh descriptor of itself; Q answers with up to ``l`` random
entries of its own. Both then merge what they received: never themselves, never an
address they already hold, first into empty slots, then over the entries they sent
away. A dead neighbour is dropped when it is shuffled with and never answers, so dead
peers age out. The result is a random graph with a narrow in-degree distribution, from
which the other protocols draw peers (:meth:`Cyclon.sample`).

Ages are stored as birth cycles of the local cycle counter (age = cycle - birth), so
ageing the whole view each period costs nothing. The ``profile`` a node publishes in its
own descriptor is opaque here (the gradient uses it for utilities).

The view is kept in one integer array in view order: per entry the node's id
(:mod:`dgdrf.runtime.addresses`), its birth cycle and the birth of the descriptor its
profile came with, and the profiles in a list beside it; a shuffle's descriptors go out
and come in as typed frames (:mod:`dgdrf.overlay.descriptors`). View order is arrival
order, as a dictionary's insertion order was before: every draw picks the same entry it
picked then, and the service's answers (:meth:`neighbours`, :meth:`sample`,
:attr:`view`) are addresses. A merge marks the entries it replaces (id -1) and appends,
and closes the gaps once at its end, in order; the array has room for ``2c`` entries.

The descriptors being read and written, the positions drawn, the ids a merge may replace
and the positions of the view being merged are scratch shared by every Cyclon of the
process (``_IN``, ``_OUT``, ``_PERM``, ``_SENT``, ``_POS``, the last indexed by node id):
handlers run one at a time and never re-enter (a send only schedules), and sharing keeps
them in cache.

The interpreted build (no compiler, or ``DGDRF_PURE=1``) keeps the view in a dictionary
instead, id -> [birth, profile's birth, profile] in view order, and reads and writes
frames with msgpack's own packer (:meth:`Cyclon._received`, :meth:`Cyclon._merge_entries`):
arrays walked index by index cost the interpreter a bytecode dispatch a step, where a
dictionary's lookups, deletions and insertions run in C, and the same frames then took
2.5 times the time of the dictionaries keyed by address they replaced (the bound
is 1.5, bench/results/ab-issue34.txt). Deleting an entry and inserting one at the end
keep the order the array's gaps and appends give, and the draws are the same, so both
builds give the same views (tests/test_compiled_core.py, bench/snapshot.py).
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable
from typing import Any

import msgpack

from dgdrf.overlay.descriptors import MAX_AGE, Descriptors
from dgdrf.overlay.messages import CyclonReply, CyclonShuffle, Join, Peers
from dgdrf.runtime.actor import Role
from dgdrf.runtime.addresses import BOOK
from dgdrf.runtime.twister import Twister

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_unpackb = msgpack.unpackb
_SHUFFLE = CyclonShuffle.TAG
_REPLY = CyclonReply.TAG
_PEERS = Peers.TAG
#: fields per view entry in Cyclon._v: id (-1: a gap a merge left), birth, profile's birth
#: (compiled, cyclon.pxd's constant of the same value, which the C compiler folds)
if not cython.compiled:
    _W = 3
#: scratch shared by every Cyclon (see the module's docstring)
_IN = Descriptors(64)
_OUT = Descriptors(64)
_PERM = array("q", [0]) * 64
_SENT = array("q", [0]) * 64  # the ids a merge may replace
_POS = array("q", [0]) * 1024  # compiled merges: id -> the merge's base + position + 1 in the view being merged (_mark)
_POS_BASE = 0  # the last merge's base: every mark of an earlier merge is at most its base
_POS_PLACES = 1 << 20  # places a merge may mark: a view holds at most 2c entries and gaps
#: the largest view size c (a merge's marks need 2c places; thousands of times what gossip uses)
MAX_VIEW = _POS_PLACES // 4


class Cyclon(Role):
    """The Cyclon peer-sampling service of one node."""

    def __init__(
        self,
        view_size: int = 10,
        shuffle_length: int = 5,
        period: float = 1.0,
        bootstrap: str | None = "bootstrap",
        profile: Callable[[], Any] | None = None,
    ) -> None:
        if not 1 <= view_size <= MAX_VIEW or not 1 <= shuffle_length <= view_size:
            raise ValueError(f"Cyclon needs 1 <= view_size <= {MAX_VIEW} and 1 <= shuffle_length <= view_size, got c={view_size}, l={shuffle_length}")
        self.c = view_size
        self.l = shuffle_length
        self.period = period
        self.bootstrap = bootstrap
        self.profile = profile
        self._book = BOOK
        # the view, in view order: (id, birth cycle (age = cycle - birth), the birth of
        # the descriptor its profile came with) per entry, and the profiles (None: none heard)
        #: (compiled; after the 2c entries' places, the ids of the last shuffle while it
        #: is unanswered: _pending_at)
        self._v: Any = array("q", [0]) * (_W * 2 * view_size + shuffle_length) if cython.compiled else None
        self._vprof: list[Any] = [None] * (2 * view_size) if cython.compiled else []
        #: interpreted, the view instead: id -> [birth, profile's birth, profile], in view order
        self._d: dict[int, list[Any]] = {}
        self._vn = 0  # entries held
        self._vend = 0  # entries and gaps: _vn but during a merge
        _reserve(view_size)
        self.cycle = 0
        self._sent: dict[int, list[int]] = {}  # peer id -> ids sent to it in my last shuffle
        #: compiled: the last shuffle, while unanswered, in C (its peer's id, -1 when none,
        #: and the ids sent, in ``_v`` from ``_pending_at``); ``_sent`` then holds only
        #: the earlier ones still unanswered
        self._pending = -1
        self._pending_at = _W * 2 * view_size
        self._pending_n = 0
        #: the bootstrap answered that no other node has joined, and none has been heard of
        #: since: this node is alone (a one-server cluster), not just not yet connected
        self.alone = False
        self._last_peer = -1  # the id of the last node shuffled with, either way round
        self._rnd = random.Random(0)
        self._mt: Twister | None = None  # compiled, from setup on: the same draws, in C
        #: called at the start of every round with the whole view as (address, age,
        #: profile): the samples Kompics's Croupier publishes to the protocols above it
        #: (:meth:`add_listener`)
        self.listeners: tuple[Callable[[list[tuple[str, int, Any]]], None], ...] = ()
        #: compiled only: called at the start of every round too, after ``listeners``,
        #: with this Cyclon, whose view they read typed (:meth:`published_numbers`)
        #: instead of as a list of tuples (:meth:`add_view_listener`)
        self.view_listeners: tuple[Callable[[Cyclon], None], ...] = ()
        #: whether either has any: what a round tests, in this object's first lines
        #: (at 10^4 nodes the tuples are far from the cache)
        self._publishes = False

    def add_listener(self, listener: Callable[[list[tuple[str, int, Any]]], None]) -> None:
        """Call ``listener`` at the start of every round with the view (``listeners``)."""
        self.listeners = (*self.listeners, listener)
        self._publishes = True

    def add_view_listener(self, listener: Callable[[Cyclon], None]) -> None:
        """Compiled only: call ``listener`` at the start of every round with this Cyclon
        (``view_listeners``)."""
        self.view_listeners = (*self.view_listeners, listener)
        self._publishes = True

    def setup(self) -> None:
        self.me = self.actor.address
        self._me = self._book.id_of(self.me)
        seed = int(self.actor.rng.integers(2**62))
        if cython.compiled:
            self._mt = Twister.seeded(seed)  # random.Random(seed), without making it
            first = self._mt.uniform(0.0, self.period)
        else:
            self._rnd = random.Random(seed)
            first = self._rnd.uniform(0.0, self.period)
        if self.bootstrap is not None:
            self.actor.send(self.bootstrap, Join(self.c))
        self.actor.every(self.period, self.shuffle, first=first)

    @property
    def rnd(self) -> random.Random:
        """This node's generator (its own stream, seeded from the actor's): compiled, a
        :class:`~dgdrf.runtime.twister.Twister` draws from its state in C, and this is a
        copy of where it stands."""
        if self._mt is not None:
            return self._mt.to_random()
        return self._rnd

    @rnd.setter
    def rnd(self, rnd: random.Random) -> None:
        self._rnd = rnd
        self._mt = Twister(rnd) if cython.compiled else None

    def _random(self) -> float:
        """The next ``random()`` of this node's stream."""
        if self._mt is not None:
            return random_of(self._mt)  # type: ignore[name-defined]  # twister.pxd's, inlined here
        return self._rnd.random()

    #: shuffles and replies arrive as frames, read into typed fields (:meth:`on_frame`)
    FRAME_TAGS = (CyclonShuffle.TAG, CyclonReply.TAG, Peers.TAG)
    ROUNDS = ("shuffle",)

    # -- the view -----------------------------------------------------------------------
    @property
    def view(self) -> dict[str, int]:
        """address -> birth cycle, in view order (a copy)."""
        names, v = self._book.names, self._v
        if not cython.compiled:
            return {names[i]: e[0] for i, e in self._d.items()}
        return {names[v[_W * k]]: v[_W * k + 1] for k in range(self._vn)}

    @property
    def profiles(self) -> dict[str, Any]:
        """address -> the profile its descriptor carried, for the entries that carried one (a copy)."""
        names, v, vprof = self._book.names, self._v, self._vprof
        if not cython.compiled:
            return {names[i]: e[2] for i, e in self._d.items() if e[2] is not None}
        return {names[v[_W * k]]: vprof[k] for k in range(self._vn) if vprof[k] is not None}

    def view_profiles(self) -> list[tuple[str, Any]]:
        """(address, profile or None) of every entry, in view order."""
        names, v, vprof = self._book.names, self._v, self._vprof
        if not cython.compiled:
            return [(names[i], e[2]) for i, e in self._d.items()]
        return [(names[v[_W * k]], vprof[k]) for k in range(self._vn)]

    # -- the compiled build's view (the interpreted build keeps its dictionary, _d) ----------
    # The arrays are used through self, not bound to locals: a memoryview bound to a
    # local costs the compiled build an acquisition per call.
    def _find(self, i: int) -> int:
        """The position of id ``i`` in the view (gaps included), -1 if it is not there."""
        for k in range(self._vend):
            if self._v[_W * k] == i:
                return k
        return -1

    def warm(self, stage: int) -> None:
        """Compiled: the clock's hint that this node's round or a frame for it is near
        (:class:`~dgdrf.runtime.clock.Warmable`). At 10^4 nodes all a shuffle reads is
        cold by then: this object, its view's array and profile list, its generator's
        next words. The object's hot fields are its first lines (cyclon.pxd), which the
        clock hints three events ahead; two events ahead (stage 1) the view's array and
        the list's and generator's objects are hinted, one event ahead (stage 0) the
        list's items and the generator's next words."""
        if stage:
            prefetch(cython.cast(cython.p_void, self._vprof))  # type: ignore[name-defined]  # prefetch.pxd's
            prefetch_span(cython.cast(cython.p_void, self._mt), 64)  # type: ignore[name-defined]
            prefetch_span(cython.address(self._v[0]), 8 * _W * self._vend)  # type: ignore[name-defined]
            return
        prefetch_span(_list_slots(self._vprof), 8 * self._vend)  # type: ignore[name-defined]  # cyclon.pxd's
        if self._mt is not None and self._mt._index < 624:
            prefetch_span(cython.address(self._mt._mt[self._mt._index]), 64)  # type: ignore[name-defined]

    def _remove(self, k: int) -> None:
        """Drop the entry at position ``k``, leaving a gap (:meth:`_close` closes it)."""
        self._v[_W * k] = -1
        self._vprof[k] = None
        self._vn -= 1

    def _close(self) -> None:
        """Close the gaps: the entries held move up, in view order (compiled only).

        On the array's and the profile list's memory: an entry's profile moves by
        swapping the two list slots, for the one it moves to holds None (a gap's, or a
        moved entry's), so every reference count stays as it was."""
        if self._vend == self._vn:
            return
        v = cython.cast(cython.p_longlong, cython.address(self._v[0]))
        ob = _list_slots(self._vprof)  # type: ignore[name-defined]  # cyclon.pxd's
        w = 0
        while v[_W * w] >= 0:  # up to the first gap, nothing moves
            w += 1
        for k in range(w + 1, self._vend):
            if v[_W * k] >= 0:
                v[_W * w] = v[_W * k]
                v[_W * w + 1] = v[_W * k + 1]
                v[_W * w + 2] = v[_W * k + 2]
                p = ob[k]
                ob[k] = ob[w]
                ob[w] = p
                w += 1
        self._vend = w

    def _append(self, i: int, birth: int, profile: Any) -> None:
        if not cython.compiled:
            self._d[i] = [birth, birth, profile]  # a profile's birth is its entry's until a younger copy refreshes it
            self._vn += 1
            return
        k = self._vend
        self._v[_W * k] = i
        self._v[_W * k + 1] = birth
        self._v[_W * k + 2] = birth  # a profile's birth is its entry's until a younger copy refreshes it
        self._vprof[k] = profile
        self._vend = k + 1
        self._vn += 1

    def _draw(self, k: int) -> int:
        """Draw ``k`` distinct random positions of the view into ``_PERM[:m]``; returns m
        (all of them, in order, if the view holds no more than k). The draws are those of
        :func:`_sample` on the view's list."""
        n = self._vn
        for j in range(n):
            _PERM[j] = j
        if k >= n:
            return n
        if 3 * k > n:
            for j in range(k):  # partial Fisher-Yates, in place
                x = self._random()
                r = j + cython.cast(cython.Py_ssize_t, x * (n - j))  # int(): truncation
                t = _PERM[j]
                _PERM[j] = _PERM[r]
                _PERM[r] = t
            return k
        # _sample's rejection: the first k distinct of k + k // 2 + 2 uniform draws (all
        # of them drawn), then of k more at a time while fewer than k are distinct; the
        # distinct positions, fewer than n, fit the n places initialised above
        got = 0
        draws = k + k // 2 + 2
        while got < k:
            for d in range(draws):
                r = cython.cast(cython.Py_ssize_t, self._random() * n)
                j = 0
                while j < got and _PERM[j] != r:
                    j += 1
                if j == got:
                    _PERM[got] = r
                    got += 1
            draws = k
        return k

    # -- the service ------------------------------------------------------------------
    def neighbours(self) -> list[str]:
        names, v = self._book.names, self._v
        if not cython.compiled:
            return [names[i] for i in self._d]
        return [names[v[_W * k]] for k in range(self._vn)]

    def sample(self, k: int) -> list[str]:
        """Up to ``k`` distinct random neighbours."""
        if not cython.compiled:
            names = self._book.names
            return [names[i] for i in _sample(list(self._d), k, self._rnd.random)]
        m = self._draw(k)
        names, v, perm = self._book.names, self._v, _PERM
        return [names[v[_W * perm[j]]] for j in range(m)]

    def random_peer_id(self) -> int:
        """:meth:`random_peer` as an id, -1 for None."""
        n = self._vn
        if n == 0:
            return self._last_peer
        x = self._random() * n
        if not cython.compiled:
            return list(self._d)[int(x)]
        return self._v[_W * cython.cast(cython.Py_ssize_t, x)]

    def random_peer(self) -> str | None:
        """One random neighbour; while the view is empty, the last node this one shuffled
        with (on two nodes each one's only neighbour leaves its view at every shuffle it
        starts and comes back only with the other's, so the view is empty half the time,
        and a random walk must not take that for "nowhere to go"); None when there is
        neither (a node alone, or not yet connected)."""
        i = self.random_peer_id()
        return None if i < 0 else self._book.names[i]

    def sample_descriptors(self, k: int) -> list[tuple[str, Any]]:
        """Up to ``k`` random (address, profile) pairs."""
        if not cython.compiled:
            names, d = self._book.names, self._d
            return [(names[i], d[i][2]) for i in _sample(list(d), k, self._rnd.random)]
        m = self._draw(k)
        names, v, vprof, perm = self._book.names, self._v, self._vprof, _PERM
        return [(names[v[_W * perm[j]]], vprof[perm[j]]) for j in range(m)]

    def sample_numbers(self, k: int, ids: Any, values: Any) -> int:
        """Compiled only: :meth:`sample_descriptors` for profiles that are numbers (a
        gradient's utilities), without a tuple per entry: entry j's node id into
        ``ids[j]`` and its profile as a float into ``values[j]``, or id -1 where the
        profile is not an int or a float; returns the count (at most ``k``, which both
        arrays must hold). The same draws as :meth:`sample_descriptors`."""
        m = self._draw(k)
        vprof = self._vprof
        for j in range(m):
            p = _PERM[j]
            prof = vprof[p]
            if isinstance(prof, (int, float)):
                ids[j] = self._v[_W * p]
                values[j] = float(prof)
            else:
                ids[j] = -1
        return m

    def published_numbers(self, ids: Any, ages: Any, values: Any) -> int:
        """Compiled only: what a round publishes to ``listeners``, (address, age, profile)
        per entry in view order, for the entries whose profile is an int or a float (not
        a bool), typed: entry j's node id into ``ids[j]``, its age into ``ages[j]``, its
        profile as a float into ``values[j]``; returns the count (at most the view's
        ``_vn`` entries, which the arrays must hold)."""
        m = 0
        vprof = self._vprof
        for k in range(self._vn):
            prof = vprof[k]
            if isinstance(prof, (int, float)) and not isinstance(prof, bool):
                ids[m] = self._v[_W * k]
                ages[m] = self.cycle - self._v[_W * k + 1]
                values[m] = float(prof)
                m += 1
        return m

    # -- the protocol -------------------------------------------------------------------
    def on_Peers(self, src: str, msg: Peers) -> None:
        """The bootstrap's answer as a message object (network mode decodes and checks
        frames first)."""
        _IN.read_address_list(msg.peers)
        self._take_peers()

    def _take_peers(self) -> None:
        """The bootstrap's peers, in ``_IN``, into the view: those not in it, in their
        order, until it is full."""
        d = _IN
        me = self._me
        # the bootstrap knows no other node (it forgets those declared down), and none is
        # in the view: a shuffle still unanswered does not count (its peer may be dead)
        alone = self._vn == 0
        for j in range(d.n):
            if d.ids[j] != me:
                alone = False
                break
        self.alone = alone
        for j in range(d.n):
            if self._vn >= self.c:
                break
            i = d.ids[j]
            if i != me and ((i not in self._d) if not cython.compiled else self._find(i) < 0):
                self._append(i, self.cycle, None)

    def fire_round(self, which: int) -> None:
        """Its one round (:meth:`Role.fire_round`): compiled, a C call of :meth:`shuffle`."""
        self.shuffle()

    def shuffle(self) -> None:
        """One Cyclon round, initiated by this node."""
        self.cycle += 1
        cycle = self.cycle
        if self._publishes and self.listeners and self._vn:
            names, v, vprof = self._book.names, self._v, self._vprof
            if cython.compiled:
                published = [(names[v[_W * k]], cycle - v[_W * k + 1], vprof[k]) for k in range(self._vn)]
            else:
                published = [(names[i], cycle - e[0], e[2]) for i, e in self._d.items()]
            for listener in self.listeners:
                listener(published)
        if self._publishes and self.view_listeners and self._vn:
            for view_listener in self.view_listeners:
                view_listener(self)
        if self._vn == 0:
            if self.bootstrap is not None:
                self.actor.send(self.bootstrap, Join(self.c))
            return
        mine = self.profile() if self.profile is not None else None
        if not cython.compiled:  # interpreted: the same on the dictionary, framed by msgpack
            d = self._d
            oldest = _oldest_of(d)
            del d[oldest]
            self._vn -= 1
            sent = _sample(list(d), self.l - 1, self._rnd.random)
            entries = self._described(sent)
            entries.append((self.me, 0, mine))
            self._sent[oldest] = sent
            self._last_peer = oldest
            Role.send_frame(self, oldest, _SHUFFLE, _packb((_SHUFFLE, entries)))
            return
        o = _oldest(self._v, self._vn)
        oldest = self._v[_W * o]
        self._sink.warm_to(oldest, _SHUFFLE)
        self._remove(o)
        self._close()
        m = self._draw(self.l - 1)
        out = _OUT
        out.clear()
        if self._pending >= 0:  # the last shuffle went unanswered: kept by its peer, as every one is interpreted
            self._sent[self._pending] = [self._v[self._pending_at + j] for j in range(self._pending_n)]
        if self._sent:
            self._sent.pop(oldest, None)
        for j in range(m):
            k = _PERM[j]
            put(out, self._v[_W * k], cycle - self._v[_W * k + 1], self._vprof[k])  # type: ignore[name-defined]  # descriptors.pxd's: out.add inlined
            self._v[self._pending_at + j] = self._v[_W * k]
        put(out, self._me, 0, mine)  # type: ignore[name-defined]
        self._pending = oldest
        self._pending_n = m
        self._last_peer = oldest
        Role.send_frame(self, oldest, _SHUFFLE, out.frame(_SHUFFLE))

    def on_frame(self, src: int, data: bytes) -> None:
        """A shuffle's, a reply's or the bootstrap's Peers frame from node id ``src`` (its
        second byte is the tag)."""
        if data[1] == _PEERS:
            _IN.read_addresses(data)
            self._take_peers()
            return
        if not cython.compiled:
            self._received(data[1] == _SHUFFLE, src, _unpackb(data)[1])
            return
        _IN.read(data)
        if data[1] == _SHUFFLE:
            self._shuffled(src)
        else:
            self._replied(src)

    def on_CyclonShuffle(self, src: str, msg: CyclonShuffle) -> None:
        """A shuffle as a message object (network mode decodes and checks frames first)."""
        if not cython.compiled:
            self._received(True, self._book.id_of(src), msg.entries)
            return
        _IN.read_entries(msg.entries)
        self._shuffled(self._book.id_of(src))

    def on_CyclonReply(self, src: str, msg: CyclonReply) -> None:
        if not cython.compiled:
            self._received(False, self._book.id_of(src), msg.entries)
            return
        _IN.read_entries(msg.entries)
        self._replied(self._book.id_of(src))

    def _replied(self, src: int) -> None:
        """Merge the reply whose descriptors are in ``_IN`` over what was sent to ``src``."""
        n = 0
        if src == self._pending:
            for j in range(self._pending_n):
                _SENT[j] = self._v[self._pending_at + j]
            n = self._pending_n
            self._pending = -1
        elif self._sent:
            sent = self._sent.pop(src, None)
            if sent is not None:
                for a in sent:
                    _SENT[n] = a
                    n += 1
        self._merge(n)

    def _shuffled(self, src: int) -> None:
        """Answer the shuffle whose descriptors are in ``_IN`` and merge them."""
        self._sink.warm_to(src, _REPLY)
        self.alone = False
        self._last_peer = src
        cycle = self.cycle
        m = self._draw(self.l)
        out = _OUT
        out.clear()
        for j in range(m):
            k = _PERM[j]
            put(out, self._v[_W * k], cycle - self._v[_W * k + 1], self._vprof[k])  # type: ignore[name-defined]  # descriptors.pxd's: out.add inlined
            _SENT[j] = self._v[_W * k]
        Role.send_frame(self, src, _REPLY, out.frame(_REPLY))
        self._merge(m)

    def _merge(self, nsent: int) -> None:
        """Merge the descriptors of ``_IN``: never myself, never an address held (a held
        entry's profile is refreshed from a younger copy), first into free slots, then
        over the entries sent (``_SENT[:nsent]``) that are still held, the last sent
        first. While it runs, ``_POS`` holds each held id's position + 1 above the merge's
        base (:func:`_mark`).

        Interpreted, :meth:`_received` and :meth:`_merge_entries` do the same on a
        dictionary."""
        d = _IN
        me, cycle, c = self._me, self.cycle, self.c
        base = _mark(self)
        nrep = 0
        for j in range(nsent):
            if _POS[_SENT[j]] > base:
                _SENT[nrep] = _SENT[j]  # the replaceable ones, in order, in place
                nrep += 1
        for e in range(d.n):
            addr = d.ids[e]
            if addr == me:
                continue
            age = d.ages[e]
            profile = d.profiles[e]
            k = _POS[addr] - base - 1
            if k >= 0:
                # Cyclon keeps the entry it holds; only its profile is refreshed from a younger
                # copy. Else, where views hold every other node from the start (clusters of
                # up to c + 1 nodes), no entry is ever replaced, profiles stay those of the
                # bootstrap (none), and the gradient never hears a utility from peer sampling
                if profile is not None and cycle - age > self._v[_W * k + 2]:
                    self._vprof[k] = profile
                    self._v[_W * k + 2] = cycle - age
                continue
            if self._vn >= c:
                if nrep == 0:
                    break
                nrep -= 1
                gone = _SENT[nrep]
                self._remove(_POS[gone] - base - 1)
                _POS[gone] = 0
            self._append(addr, cycle - age, profile)
            _POS[addr] = base + self._vend
        self._close()

    # -- the interpreted build ----------------------------------------------------------
    def _received(self, shuffle: bool, src: int, entries: list) -> None:
        """Interpreted, :meth:`_shuffled` (``shuffle``) or :meth:`_replied` on the decoded
        entries of the frame from ``src``: the reply drawn and framed by msgpack from the
        dictionary view, with no Descriptors in between (whose typed arrays only pay in C)."""
        if shuffle:
            self.alone = False
            self._last_peer = src
            sent = _sample(list(self._d), self.l, self._rnd.random)
            Role.send_frame(self, src, _REPLY, _packb((_REPLY, self._described(sent))))
        else:
            sent = self._sent.pop(src, [])
        self._merge_entries(entries, sent)

    def _described(self, ids: list[int]) -> list[tuple[str, int, Any]]:
        """The interpreted view's entries of ``ids`` as a frame's descriptors (address,
        age, profile)."""
        d, names, cycle = self._d, self._book.names, self.cycle
        return [(names[i], cycle - d[i][0], d[i][2]) for i in ids]

    def _merge_entries(self, entries: list, sent: list[int]) -> None:
        """:meth:`_merge` of decoded ``[address, age, profile]`` entries, on the dictionary
        view, over the ids ``sent``. An entry that :meth:`Descriptors.read_entries` would
        leave out (not an address, not an age) is skipped; deleting an entry and inserting
        one at the end keep the order the compiled merge's gaps and appends give."""
        view, known, id_of = self._d, self._book._ids.get, self._book.id_of
        me, cycle, c = self._me, self.cycle, self.c
        replaceable = [a for a in sent if a in view]
        for address, age, profile in entries:
            if type(address) is not str or type(age) is not int or not 0 <= age < MAX_AGE:
                continue
            addr = known(address)
            if addr is None:
                addr = id_of(address)
            if addr == me:
                continue
            held = view.get(addr)
            if held is not None:
                if profile is not None and cycle - age > held[1]:  # as in _merge
                    held[1] = cycle - age
                    held[2] = profile
                continue
            if len(view) >= c:
                if not replaceable:
                    break
                del view[replaceable.pop()]
            view[addr] = [cycle - age, cycle - age, profile]
        self._vn = len(view)


def _mark(cyclon: Cyclon) -> int:
    """Mark ``_POS`` for the ids in ``cyclon``'s view (gaps aside) above a new base, and
    return it: a position p is base + p + 1, and every mark of an earlier merge is at most
    the base, so no merge clears its marks."""
    global _POS, _POS_BASE
    if len(_POS) < len(cyclon._book.names):
        _POS = array("q", [0]) * (2 * len(cyclon._book.names))
    _POS_BASE += _POS_PLACES
    base = _POS_BASE
    for k in range(cyclon._vend):
        i = cyclon._v[_W * k]
        if i >= 0:
            _POS[i] = base + k + 1
    return base


def _reserve(view_size: int) -> None:
    """Make the shared scratch large enough for views of ``view_size``."""
    global _PERM, _SENT
    if len(_PERM) < 2 * view_size:
        _PERM = array("q", [0]) * (2 * view_size)
        _SENT = array("q", [0]) * (2 * view_size)


def _oldest(v: Any, n: int) -> int:
    """The position of the smallest birth cycle (the oldest entry) of the view array
    ``v``, the first in view order among equals (``n`` > 0)."""
    oldest = 0
    first = v[1]
    for k in range(1, n):
        if v[_W * k + 1] < first:
            oldest, first = k, v[_W * k + 1]
    return oldest


def _oldest_of(view: dict[int, list[Any]]) -> int:
    """The interpreted build's :func:`_oldest`: the id of the smallest birth in the
    dictionary view ``view`` (not empty), the first in view order among equals."""
    oldest, first = -1, 0
    for i, e in view.items():
        if oldest < 0 or e[0] < first:
            oldest, first = i, e[0]
    return oldest


def _sample(items: list, k: int, random: Callable[[], float]) -> list:
    """``k`` distinct random items of ``items``, a list the caller gives away (all of
    them, in order, if there are no more than k). Rejection sampling on C-level
    ``random()``: for the small k of a shuffle several times faster than
    ``random.sample``, and just as uniform."""
    n = len(items)
    if k >= n:
        return items
    if 3 * k > n:
        for i in range(k):  # partial Fisher-Yates, in place
            j = i + int(random() * (n - i))
            items[i], items[j] = items[j], items[i]
        del items[k:]
        return items
    # the first k distinct of i.i.d. uniform draws: a uniform k-subset
    idx = list(dict.fromkeys([int(random() * n) for _ in range(k + k // 2 + 2)]))
    while len(idx) < k:
        idx = list(dict.fromkeys(idx + [int(random() * n) for _ in range(k)]))
    del idx[k:]
    return [items[i] for i in idx]
