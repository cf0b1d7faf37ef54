"""The Bootstrap actor: lets nodes find each other at start (thesis ch. 4).

It remembers who joined and answers each Join with up to ``want`` addresses drawn at
random from the nodes that joined before; it takes no part in any protocol after that.
The failure detector beside it (network mode's membership service; emulation's crash
detection, dgdrf/world.py) makes it :meth:`forget` the members it declares down, so a
node that asks again is not handed a dead peer: the last server standing learns that it
is alone (Cyclon.alone) and, alone, is the gradient's centre.
"""

from __future__ import annotations

from collections.abc import Iterable

from dgdrf.overlay.messages import Join, Peers
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.draws import distinct_draws


class Bootstrap(Actor):
    """Hands each new node a few initial peers."""

    def __init__(self, address: str = "bootstrap") -> None:
        super().__init__(address)
        self.known: list[str] = []
        self._index: dict[str, int] = {}  # address -> its place in known

    def on_Join(self, src: str, msg: Join) -> None:
        known = self.known
        place = self._index.get(src, -1)
        k = min(max(0, int(msg.want)), len(known) - (place >= 0))
        # distinct, in draw order: batches of 2 k draws, O(k) draws, not O(N)
        self.send(src, Peers([known[i] for i in distinct_draws(self.rng, len(known), k, place)]))
        if place < 0:
            self._index[src] = len(known)
            known.append(src)

    def forget(self, addresses: Iterable[str]) -> None:
        """Members declared down: never handed out again."""
        gone = self._index.keys() & set(addresses)
        if gone:
            self.known = [a for a in self.known if a not in gone]
            self._index = {a: i for i, a in enumerate(self.known)}
