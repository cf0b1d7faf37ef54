# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""The gradient as the thesis ran it: the Kompics toolbox's (thesis 4.4, its ref. [16]).

Östman built DGDRF and PDGDRF on the gradient component of the Kompics toolbox
(KompicsToolbox, ``se.sics.ktoolbox.gradient``: GradientComp, GradientView). This role
keeps a view the way that component does, so the emulated policies see the views the
thesis's policies saw, staleness included:

- Descriptors carry an *age*, not a stamp: every entry of the view ages by one when the
  node starts a round and when it answers a request; a node describes itself at age 0. A
  descriptor replaces the one held only if it is strictly younger.
- Each period the node publishes its view to the application (the scheduler decides on
  that copy until the next period), picks a partner uniformly at random from its view
  (the toolbox's soft-max at temperature 500 is uniform to within 2 %), and sends it its
  own descriptor and its view; the partner answers in kind. Both merge what they got:
  the entries, then the sender's own descriptor, each merge dropping the single oldest
  entry if its age reached ``old_threshold`` and then the least preferred by eq. 3.9
  until P remain. A partner that does not answer within half a period is dropped.
- Peer sampling (Croupier there, Cyclon here) hands the gradient its whole view at every
  round, with Cyclon's ages and the utilities those descriptors carried when they were
  made; they are merged like any other entries. Cyclon ages count Cyclon rounds and
  gradient ages count exchanges, yet the toolbox compares them directly, so a sampled
  descriptor often looks younger than the gradient's own although its utility is older.

Against :class:`~dgdrf.overlay.gradient.Gradient` (stamps that order descriptors by how
recent they really are, and a memory of recently heard nodes) this view is staler and
churns: entries past ``old_threshold`` leave it, and random sampled nodes take their
place until better ones are heard of again.

The compiled build keeps the view in arrays, in view order: per entry the
node's id, its utility as a C double, its birth and its eq. 3.9 tie-break (computed once,
when the entry comes in); exchange frames are read into arrays of the same kinds and
written from them, and :meth:`ToolboxGradient._merge_arrays` merges and ranks in C, with
no descriptor, dictionary or tuple per entry. Updating an entry in place, dropping one
and appending keep the order a dictionary's insertion order gave, and the ranking is
:func:`~dgdrf.overlay.gradient.preferred`'s (tests/test_differential.py), so both builds
give the same views. The interpreted build keeps the dictionary (address -> (utility,
birth)) and merges as before. Utilities are floats in every run (eq. 4.2's -share, or
-inf); an int utility would be kept as a float by the compiled build only.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable
from typing import Any

from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.gradient import GradientBase, _grown, _load_entries, choice, exchange_frame, preferred
from dgdrf.overlay.messages import GradientReply, GradientShuffle
from dgdrf.runtime.actor import Role, RoleEvent

try:
    import cython
except ImportError:  # interpreted without Cython installed
    from dgdrf import cython_shadow as cython

_SHUFFLE = GradientShuffle.TAG
_REPLY = GradientReply.TAG
_NEG_INF = -math.inf

#: the toolbox's reference configuration (overlay-mngr example reference.conf)
DEFAULT_OLD_THRESHOLD = 100

#: compiled: the entries being merged (node id, utility, age), scratch shared by every
#: toolbox gradient of the process (handlers run one at a time and never re-enter)
_EID = array("q", [0]) * 64
_EU = array("d", [0.0]) * 64
_EAGE = array("q", [0]) * 64
#: compiled: positions of the view in the order of eq. 3.9, and the tie-breaks of the
#: entries kept (scratch, as above)
_ORDER = array("q", [0]) * 64
_ET = array("q", [0]) * 64
#: compiled: eq. 3.9's key (g, v, t) of each entry of the view (gradient._eq39_key;
#: :func:`~dgdrf.overlay.gradient._key_before` compares two; scratch, as above)
_KG = array("q", [0]) * 64
_KV = array("d", [0.0]) * 64
_KT = array("q", [0]) * 64


class ToolboxGradient(GradientBase):
    """The Kompics toolbox gradient of one node (``stamp`` fields on the wire are ages)."""

    def __init__(
        self,
        utility: Callable[[], float],
        view_size: int = 4,
        period: float = 1.0,
        sampler: Cyclon | None = None,
        old_threshold: int = DEFAULT_OLD_THRESHOLD,
        validation_timeout: float = 1.0,
        idle_quiet: bool = False,
    ) -> None:
        if old_threshold < 1:
            raise ValueError(f"gradient old threshold must be at least 1, got {old_threshold}")
        super().__init__(utility, view_size, period, sampler, validation_timeout, idle_quiet)
        self.old_threshold = old_threshold
        # view values: (utility, birth); an entry's age is ``self.clock - birth``
        self.clock = 0  # ageing events so far (own rounds and requests answered)
        self._published: dict[str, tuple[float, int]] | None = {}
        self._awaiting: tuple[str, int] | None = None  # (partner, round) until it answers
        #: the reply timeout's event, scheduled again each round (:class:`_Timeout`)
        self._timeout_event: _Timeout | None = None
        self._round = 0
        #: compiled, the view (see the module's docstring): entries held, and per entry
        #: the node's id, utility, birth and tie-break, in view order
        self._n = 0
        room = 2 * view_size + 8 if cython.compiled else 0
        self._ids: Any = array("q", [0]) * room
        self._us: Any = array("d", [0.0]) * room
        self._births: Any = array("q", [0]) * room
        self._ts: Any = array("q", [0]) * room
        self._hu = 0.0  # compiled: the sender's utility and age of the frame being read
        self._hs = 0
        #: compiled: the view as last published, in arrays (ids, utilities, births; ``_pn``
        #: entries), its dictionary (``_published``) made only when asked for
        self._pn = 0
        self._pids: Any = array("q", [0]) * room
        self._pus: Any = array("d", [0.0]) * room
        self._pbirths: Any = array("q", [0]) * room

    def setup(self) -> None:
        super().setup()
        if self.sampler is not None:
            if cython.compiled:  # the same view, read from Cyclon's arrays
                self.sampler.add_view_listener(self.on_sampler)
            else:
                self.sampler.add_listener(self.on_sample)

    @property
    def view(self) -> dict[str, tuple[float, int]]:
        """The view: address -> (utility, birth), in view order (compiled: a copy)."""
        if cython.compiled:
            names = self._book.names
            return {names[self._ids[k]]: (self._us[k], self._births[k]) for k in range(self._n)}
        return self._view

    @view.setter
    def view(self, view: dict[str, tuple[float, int]]) -> None:
        if not cython.compiled:
            self._view = view
            return
        self._n = 0
        self._room(len(view))
        for addr, (u, birth) in view.items():
            self._append(self._book.id_of(addr), u, birth)

    @property
    def sample(self) -> dict[str, tuple[float, int]]:
        """The view as last published to the application (once per period)."""
        if self._published is None:  # compiled: published as arrays, not yet asked for
            names = self._book.names
            self._published = {names[self._pids[k]]: (self._pus[k], self._pbirths[k]) for k in range(self._pn)}
        return self._published

    def sample_utilities(self) -> Any:
        """:meth:`GradientBase.sample_utilities`; compiled, the published array of
        utilities."""
        if cython.compiled:
            return self._pus[: self._pn]
        return GradientBase.sample_utilities(self)

    def is_centre(self) -> bool:
        """:meth:`GradientBase.is_centre` (eq. 3.11) on the published view; compiled, on
        its arrays (no dictionary made for it)."""
        if not cython.compiled:
            return GradientBase.is_centre(self)
        if self._pn == 0:
            return self._alone()
        return _all_below(self._pus, self._pn, self._own_utility())  # type: ignore[name-defined]  # gradient.pxd's

    def _publish(self) -> None:
        """Compiled: the view as published now, copied into the published arrays."""
        if self._n > len(self._pids):
            self._pids = _grown(self._pids, "q", 2 * self._n)
            self._pus = _grown(self._pus, "d", 2 * self._n)
            self._pbirths = _grown(self._pbirths, "q", 2 * self._n)
        for k in range(self._n):
            self._pids[k] = self._ids[k]
            self._pus[k] = self._us[k]
            self._pbirths[k] = self._births[k]
        self._pn = self._n
        self._published = None

    # -- the exchange (GradientComp's shuffle cycle, request and response) ----------------
    def exchange(self) -> None:
        """One round: publish the view, age it, and send it to a random neighbour."""
        if cython.compiled:
            self._publish()
        else:
            self._published = dict(self._view)
        if self.idle_quiet and self._own_utility() == _NEG_INF:
            return
        n = self._n if cython.compiled else len(self._view)
        if not n:
            return  # disconnected until peer sampling offers nodes
        if cython.compiled:
            dst = self._ids[self._draw_index(n)]
            partner = self._book.names[dst]
        else:
            partner = choice(self._rnd, list(self._view))
            dst = self._book.id_of(partner)
        self.clock += 1
        self._round += 1
        self._awaiting = (partner, self._round)
        self._send_exchange(dst, _SHUFFLE)
        timeout = self._timeout_event
        if timeout is None or timeout.pending:  # the first round's, or one still pending: a new one
            timeout = self._timeout_event = _Timeout(self)
        timeout.partner, timeout.round, timeout.pending = partner, self._round, True
        self.actor._later(self.period / 2, timeout)

    def _send_exchange(self, dst: int, tag: int) -> None:
        """Send node id ``dst`` this node's utility and its view with ages, the frame of
        GradientShuffle(utility, 0, entries) or GradientReply (``tag``) written without
        the message object (:func:`~dgdrf.overlay.gradient.exchange_frame`; compiled,
        from the arrays)."""
        u = self._own_utility()
        frame = None
        if cython.compiled and type(u) is float:
            frame = _exchange_frame_ids(tag, u, 0, self._book, self._ids, self._us, self._births, self._n, True, self.clock)  # type: ignore[name-defined]  # gradient.pxd's
        if frame is None:
            frame = exchange_frame(tag, u, 0, self.view, self.clock)
        Role.send_frame(self, dst, tag, frame)

    def _timeout(self, partner: str, round_: int) -> None:
        if self._awaiting == (partner, round_):
            self._awaiting = None
            if not cython.compiled:
                self._view.pop(partner, None)
                return
            k = _find(self._ids, self._n, self._book.id_of(partner))  # type: ignore[name-defined]  # gradient.pxd's
            if k >= 0:
                self._remove_at(k)

    def on_frame(self, src: int, data: bytes) -> None:
        """A GradientShuffle's or GradientReply's frame from node id ``src``: compiled,
        read into the scratch arrays and merged from them; else as every gradient reads
        it (:meth:`GradientBase.on_frame`)."""
        if cython.compiled:
            m = _read_exchange_ids(self._book, data, cython.address(self._hu), cython.address(self._hs), _EID, _EU, _EAGE, 0)  # type: ignore[name-defined]  # gradient.pxd's
            if m < -1:
                _reserve(-2 - m)
                m = _read_exchange_ids(self._book, data, cython.address(self._hu), cython.address(self._hs), _EID, _EU, _EAGE, 0)  # type: ignore[name-defined]
            if m >= 0:
                if data[1] == _SHUFFLE:
                    self.clock += 1
                    self._send_exchange(src, _REPLY)
                elif self._awaiting is None or self._awaiting[0] != self._book.names[src]:
                    return  # late: the request timed out
                else:
                    self._awaiting = None
                self._merge_arrays(m)
                _EID[0] = src
                _EU[0] = self._hu
                _EAGE[0] = self._hs
                self._merge_arrays(1)
                return
        GradientBase.on_frame(self, src, data)

    def _answer(self, src_id: int, src: str, utility: float, age: int, entries: list) -> None:
        """Age the view, answer with it, then merge the request's entries and its sender."""
        self.clock += 1
        self._send_exchange(src_id, _REPLY)
        self._merge(entries)
        self._merge(((src, utility, age),))

    def _replied(self, src: str, utility: float, age: int, entries: list) -> None:
        if self._awaiting is None or self._awaiting[0] != src:
            return  # late: the request timed out
        self._awaiting = None
        self._merge(entries)
        self._merge(((src, utility, age),))

    def on_sample(self, published: list[tuple[str, int, Any]]) -> None:
        """Peer sampling's view, merged with its own ages (Croupier samples)."""
        self._merge([(a, u, age) for a, age, u in published if isinstance(u, (int, float)) and not isinstance(u, bool)])

    def on_sampler(self, sampler: Cyclon) -> None:
        """Compiled: :meth:`on_sample` read from the peer-sampling view's arrays (the
        entries whose profile is an int or a float, not a bool), without a tuple per
        entry."""
        assert self.sampler is not None  # registered with it (setup)
        _reserve(self.sampler._vn)
        self._merge_arrays(self.sampler.published_numbers(_EID, _EAGE, _EU))

    # -- GradientView.merge ----------------------------------------------------------------
    def _merge(self, entries: Iterable[tuple[str, float, int] | list]) -> None:
        """Merge (address, utility, age) entries: a strictly younger descriptor replaces
        the one held; the single oldest entry leaves once its age reached
        ``old_threshold``; then the P most preferred (eq. 3.9) stay, in that order."""
        if cython.compiled:
            entries = list(entries)
            _reserve(len(entries))
            self._merge_arrays(_load_entries(entries, self.me, self._book, _EID, _EU, _EAGE))
            return
        view, me, clock = self._view, self.me, self.clock
        for entry in entries:
            addr, u, age = entry
            if addr == me:
                continue
            birth = clock - age
            held = view.get(addr)
            if held is None or held[1] < birth:  # strictly younger replaces
                view[addr] = (u, birth)
        if not view:
            return
        oldest = None  # the oldest entry, the first in view order among equals
        first_birth = 0
        for addr, held in view.items():
            if oldest is None or held[1] < first_birth:
                oldest, first_birth = addr, held[1]
        if clock - first_birth >= self.old_threshold:  # the oldest leaves
            del view[oldest]  # type: ignore[arg-type]  # not None: the view is not empty
        if len(view) > self.P:
            candidates = []
            for addr, held in view.items():
                candidates.append((held[0], self.tiebreak_of(addr), addr))
            keep = preferred(self._own_utility(), candidates, self.P)  # most_preferred, eq. 3.9
            self._view = {a: view[a] for a in keep}

    # -- the compiled build's view (the interpreted build keeps its dictionary, _view) --------
    def _merge_arrays(self, m: int) -> None:
        """:meth:`_merge` of the ``m`` entries in the scratch arrays (id, utility, age),
        on the view's arrays."""
        clock = self.clock
        self._room(self._n + m)
        for j in range(m):
            i = _EID[j]
            if i == self._me_id:
                continue
            birth = clock - _EAGE[j]
            k = _find(self._ids, self._n, i)  # type: ignore[name-defined]  # gradient.pxd's
            if k < 0:
                self._append(i, _EU[j], birth)
            elif self._births[k] < birth:  # strictly younger replaces, in place
                self._us[k] = _EU[j]
                self._births[k] = birth
        n = self._n
        if not n:
            return
        oldest = 0  # the oldest entry, the first in view order among equals
        for k in range(1, n):
            if self._births[k] < self._births[oldest]:
                oldest = k
        if clock - self._births[oldest] >= self.old_threshold:  # the oldest leaves
            self._remove_at(oldest)
            n -= 1
        if n > self.P:
            self._keep_preferred(self._own_utility())

    def _keep_preferred(self, own: float) -> None:
        """Keep the P entries eq. 3.9 prefers, in its order (as :func:`preferred` ranks
        (utility, tie-break, address)): by insertion into ``_ORDER`` of the best P so far
        (eq. 3.9's order is strict: addresses differ), the view being a few entries more
        than P."""
        n = self._n
        _reserve(n)
        names = self._book.names
        for k in range(n):  # eq. 3.9's key of each entry, once
            _KG[k], _KV[k], _KT[k] = _eq39_key(self._us[k], self._ts[k], own)  # type: ignore[name-defined]  # gradient.pxd's
        P = self.P
        r = 0  # the best so far, at most P, in _ORDER: an entry after the P-th is not kept
        for k in range(n):
            if r == P:
                b = _ORDER[P - 1]
                if not _key_before(_KG[k], _KV[k], _KT[k], self._ids[k], _KG[b], _KV[b], _KT[b], self._ids[b], names):  # type: ignore[name-defined]  # gradient.pxd's
                    continue
                r -= 1
            j = r
            while j > 0:
                b = _ORDER[j - 1]
                if not _key_before(_KG[k], _KV[k], _KT[k], self._ids[k], _KG[b], _KV[b], _KT[b], self._ids[b], names):  # type: ignore[name-defined]
                    break
                _ORDER[j] = b
                j -= 1
            _ORDER[j] = k
            r += 1
        for j in range(P):  # the kept entries, moved to the front in order
            k = _ORDER[j]
            _EID[j] = self._ids[k]
            _EU[j] = self._us[k]
            _EAGE[j] = self._births[k]
            _ET[j] = self._ts[k]
        for j in range(P):
            self._ids[j] = _EID[j]
            self._us[j] = _EU[j]
            self._births[j] = _EAGE[j]
            self._ts[j] = _ET[j]
        self._n = P

    def _room(self, n: int) -> None:
        """Make the view's arrays hold at least ``n`` entries."""
        if n <= len(self._ids):
            return
        room = 2 * n
        self._ids = _grown(self._ids, "q", room)
        self._us = _grown(self._us, "d", room)
        self._births = _grown(self._births, "q", room)
        self._ts = _grown(self._ts, "q", room)
        _reserve(room)

    def _append(self, i: int, u: float, birth: int) -> None:
        """Add node id ``i`` at the end of the view, its tie-break computed once."""
        k = self._n
        self._ids[k] = i
        self._us[k] = u
        self._births[k] = birth
        self._ts[k] = _tiebreak_id(self._book, i, self._salt_crc)  # type: ignore[name-defined]  # gradient.pxd's
        self._n = k + 1

    def _remove_at(self, k: int) -> None:
        """Drop the entry at position ``k``; those after it move up, in order."""
        _remove(self._ids, self._us, self._births, self._ts, self._n, k)  # type: ignore[name-defined]  # gradient.pxd's
        self._n -= 1


class _Timeout(RoleEvent):
    """A toolbox gradient's reply timeout: half a period after a round's shuffle,
    :meth:`ToolboxGradient._timeout` of its partner and round. One object per gradient,
    scheduled again each round (:meth:`Actor.later`) once it has fired, where a timer
    object, a bound method and an argument tuple were made per round."""

    __slots__ = ("gradient", "partner", "round", "pending")

    def __init__(self, gradient: ToolboxGradient) -> None:
        self.gradient = gradient
        self.partner = ""
        self.round = 0
        self.pending = False

    def fire(self, args: tuple) -> None:
        self.pending = False
        self.gradient._timeout(self.partner, self.round)


def _reserve(n: int) -> None:
    """Make the shared scratch hold at least ``n`` entries, keeping what it holds (a
    merge may make room for a view while its entries are in the scratch)."""
    global _EID, _EU, _EAGE, _ORDER, _ET, _KG, _KV, _KT
    if len(_EID) < n:
        _EID = _grown(_EID, "q", 2 * n)
        _EU = _grown(_EU, "d", 2 * n)
        _EAGE = _grown(_EAGE, "q", 2 * n)
        _ORDER = _grown(_ORDER, "q", 2 * n)
        _ET = _grown(_ET, "q", 2 * n)
        _KG = _grown(_KG, "q", 2 * n)
        _KV = _grown(_KV, "d", 2 * n)
        _KT = _grown(_KT, "q", 2 * n)
