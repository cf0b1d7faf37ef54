"""What a peer-sampling service offers the protocols and schedulers above it.

Cyclon (overlay/cyclon.py) is the one implementation; consumers that are not compiled
hold a :class:`PeerSampling` rather than a Cyclon, so another service (Croupier, a
static random graph for a test) can take its place. The compiled gradient and push-sum
(gradient.pxd, pushsum.pxd) keep the concrete C type for their per-message calls.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol


class PeerSampling(Protocol):
    """A node's partial, changing view of the overlay (thesis 2.2: peer sampling)."""

    @property
    def view(self) -> dict[str, int]:
        """The current view: address -> the cycle its descriptor was made (a copy)."""
        ...

    @property
    def profiles(self) -> dict[str, Any]:
        """address -> the profile (e.g. a gradient utility) its descriptor carried (a copy)."""
        ...

    #: what this node's own descriptors carry (set by the gradient: its utility)
    profile: Callable[[], Any] | None
    #: called each round with the whole view as (address, age, profile) (add_listener)
    @property
    def listeners(self) -> tuple[Callable[[list[tuple[str, int, Any]]], None], ...]: ...

    def add_listener(self, listener: Callable[[list[tuple[str, int, Any]]], None]) -> None:
        """Call ``listener`` at the start of every round with the view as (address,
        age, profile)."""
        ...

    #: no other node has joined or been heard of: this node is alone
    alone: bool

    def neighbours(self) -> list[str]:
        """The addresses in the view."""
        ...

    def sample(self, k: int) -> list[str]:
        """Up to ``k`` distinct random neighbours."""
        ...

    def random_peer(self) -> str | None:
        """One random neighbour, or None when there is none."""
        ...

    def sample_descriptors(self, k: int) -> list[tuple[str, Any]]:
        """Up to ``k`` random (address, profile) pairs."""
        ...

    def view_profiles(self) -> list[tuple[str, Any]]:
        """(address, profile or None) of every entry of the view, in view order."""
        ...
