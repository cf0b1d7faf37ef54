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
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from dgdrf.overlay.messages import CyclonReply, CyclonShuffle, Join, Peers
from dgdrf.runtime.actor import Role


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
        if view_size < 1 or not 1 <= shuffle_length <= view_size:
            raise ValueError(f"Cyclon needs view_size >= 1 and 1 <= shuffle_length <= view_size, got c={view_size}, l={shuffle_length}")
        self.c = view_size
        self.l = shuffle_length
        self.period = period
        self.bootstrap = bootstrap
        self.profile = profile
        self.view: dict[str, int] = {}  # address -> birth cycle (age = cycle - birth)
        self.profiles: dict[str, Any] = {}  # address -> the profile its descriptor carried
        self._profile_born: dict[str, int] = {}  # address -> birth cycle of the descriptor its profile came with
        self.cycle = 0
        self._sent: dict[str, list[str]] = {}  # peer -> addresses sent to it in my last shuffle
        #: the bootstrap answered that no other node has joined, and none has been heard of
        #: since: this node is alone (a one-server cluster), not just not yet connected
        self.alone = False
        self._last_peer: str | None = None  # the last node shuffled with, either way round
        self.rnd = random.Random(0)
        #: called at the start of every round with the whole view as (address, age,
        #: profile): the samples Kompics's Croupier publishes to the protocols above it
        self.listeners: list[Callable[[list[tuple[str, int, Any]]], None]] = []

    def setup(self) -> None:
        self.me = self.actor.address
        self.rnd = random.Random(int(self.actor.rng.integers(2**62)))
        if self.bootstrap is not None:
            self.actor.send(self.bootstrap, Join(self.c))
        self.actor.every(self.period, self.shuffle, first=self.rnd.uniform(0.0, self.period))

    # -- the service ------------------------------------------------------------------
    def neighbours(self) -> list[str]:
        return list(self.view)

    def sample(self, k: int) -> list[str]:
        """Up to ``k`` distinct random neighbours."""
        return _sample(list(self.view), k, self.rnd.random)

    def random_peer(self) -> str | None:  # type: ignore[return]  # the loop returns: k < len(view)
        """One random neighbour; while the view is empty, the last node this one shuffled
        with (on two nodes each one's only neighbour leaves its view at every shuffle it
        starts and comes back only with the other's, so the view is empty half the time,
        and a random walk must not take that for "nowhere to go"); None when there is
        neither (a node alone, or not yet connected)."""
        view = self.view
        if not view:
            return self._last_peer
        k = int(self.rnd.random() * len(view))
        for addr in view:  # the k-th in view order, without copying the view
            if k == 0:
                return addr
            k -= 1

    def sample_descriptors(self, k: int) -> list[tuple[str, Any]]:
        """Up to ``k`` random (address, profile) pairs."""
        return [(a, self.profiles.get(a)) for a in self.sample(k)]

    # -- the protocol -------------------------------------------------------------------
    def on_Peers(self, src: str, msg: Peers) -> None:
        view, me = self.view, self.me
        # the bootstrap knows no other node (it forgets those declared down), and none is
        # in the view: a shuffle still unanswered does not count (its peer may be dead)
        self.alone = not view and not any(a != me for a in msg.peers)
        for addr in msg.peers:
            if len(view) >= self.c:
                break
            if addr != me and addr not in view:
                view[addr] = self.cycle

    def shuffle(self) -> None:
        """One Cyclon round, initiated by this node."""
        self.cycle += 1
        view = self.view
        if self.listeners and view:
            cycle, prof = self.cycle, self.profiles
            published = [(a, cycle - birth, prof.get(a)) for a, birth in view.items()]
            for listener in self.listeners:
                listener(published)
        if not view:
            if self.bootstrap is not None:
                self.actor.send(self.bootstrap, Join(self.c))
            return
        oldest = _oldest(view)
        del view[oldest]
        self.profiles.pop(oldest, None)
        self._profile_born.pop(oldest, None)
        others = _sample(list(view), self.l - 1, self.rnd.random)
        cycle, prof = self.cycle, self.profiles
        entries = [(a, cycle - view[a], prof.get(a)) for a in others]  # tuples: the same msgpack arrays, cheaper to build
        entries.append((self.me, 0, self.profile() if self.profile is not None else None))
        self._sent[oldest] = others
        self._last_peer = oldest
        self.actor.send(oldest, CyclonShuffle(entries))  # type: ignore[arg-type]  # tuples for the list[list] field: the same msgpack arrays

    def on_CyclonShuffle(self, src: str, msg: CyclonShuffle) -> None:
        self.alone = False
        self._last_peer = src
        view, cycle, prof = self.view, self.cycle, self.profiles
        picks = _sample(list(view), self.l, self.rnd.random)
        self.actor.send(src, CyclonReply([(a, cycle - view[a], prof.get(a)) for a in picks]))  # type: ignore[misc]  # tuples: as in shuffle
        self._merge(msg.entries, picks)

    def on_CyclonReply(self, src: str, msg: CyclonReply) -> None:
        self._merge(msg.entries, self._sent.pop(src, []))

    def _merge(self, entries: list[list], sent: list[str]) -> None:
        view, prof, born, me, cycle, c = self.view, self.profiles, self._profile_born, self.me, self.cycle, self.c
        replaceable = [a for a in sent if a in view]
        for entry in entries:
            addr, age, profile = entry
            if addr == me:
                continue
            held = view.get(addr)
            if held is not None:
                # Cyclon keeps the entry it holds; only its profile is refreshed from a younger
                # copy. Else, where views hold every other node from the start (clusters of
                # up to c + 1 nodes), no entry is ever replaced, profiles stay those of the
                # bootstrap (none), and the gradient never hears a utility from peer sampling
                if profile is not None and cycle - age > born.get(addr, held):
                    prof[addr] = profile
                    born[addr] = cycle - age
                continue
            if len(view) >= c:
                if not replaceable:
                    break
                gone = replaceable.pop()
                del view[gone]
                prof.pop(gone, None)
                born.pop(gone, None)
            view[addr] = cycle - age
            if profile is not None:
                prof[addr] = profile


def _oldest(view: dict[str, int]) -> str:
    """The address of the smallest birth cycle (the oldest entry), the first in view
    order among equals: ``min(view, key=view.get)``, as a loop the compiled build runs
    in C."""
    oldest = None
    first = 0
    for addr, birth in view.items():
        if oldest is None or birth < first:
            oldest, first = addr, birth
    return oldest  # type: ignore[return-value]  # not None: callers pass a view that is not empty


def _sample(items: list[str], k: int, random: Callable[[], float]) -> list[str]:
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
