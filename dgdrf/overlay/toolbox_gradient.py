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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from dgdrf.overlay.cyclon import Cyclon
from dgdrf.overlay.gradient import GradientBase, choice, exchange_frame, preferred
from dgdrf.overlay.messages import GradientReply, GradientShuffle
from dgdrf.runtime.actor import Role

_SHUFFLE = GradientShuffle.TAG
_REPLY = GradientReply.TAG

#: the toolbox's reference configuration (overlay-mngr example reference.conf)
DEFAULT_OLD_THRESHOLD = 100


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
        self._published: dict[str, tuple[float, int]] = {}
        self._awaiting: tuple[str, int] | None = None  # (partner, round) until it answers
        self._round = 0

    def setup(self) -> None:
        super().setup()
        if self.sampler is not None:
            self.sampler.listeners.append(self.on_sample)

    @property
    def sample(self) -> dict[str, tuple[float, int]]:
        """The view as last published to the application (once per period)."""
        return self._published

    # -- the exchange (GradientComp's shuffle cycle, request and response) ----------------
    def exchange(self) -> None:
        """One round: publish the view, age it, and send it to a random neighbour."""
        self._published = dict(self.view)
        if self.idle_quiet and self.utility() == -math.inf:
            return
        if not self.view:
            return  # disconnected until peer sampling offers nodes
        partner = choice(self.rnd, list(self.view))
        self.clock += 1
        self._round += 1
        self._awaiting = (partner, self._round)
        self._send_exchange(self._book.id_of(partner), _SHUFFLE)
        self.actor.after(self.period / 2, self._timeout, partner, self._round)

    def _send_exchange(self, dst: int, tag: int) -> None:
        """Send node id ``dst`` this node's utility and its view with ages, the frame of
        GradientShuffle(utility, 0, entries) or GradientReply (``tag``) written without
        the message object (:func:`~dgdrf.overlay.gradient.exchange_frame`)."""
        Role.send_frame(self, dst, tag, exchange_frame(tag, self.utility(), 0, self.view, self.clock))

    def _timeout(self, partner: str, round_: int) -> None:
        if self._awaiting == (partner, round_):
            self._awaiting = None
            self.view.pop(partner, None)

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

    # -- GradientView.merge ----------------------------------------------------------------
    def _merge(self, entries: Iterable[tuple[str, float, int] | list]) -> None:
        view, me, clock = self.view, self.me, self.clock
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
            keep = preferred(self.utility(), candidates, self.P)  # most_preferred, eq. 3.9
            self.view = {a: view[a] for a in keep}
