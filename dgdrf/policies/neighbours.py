"""The fixed neighbours of probes (alg. 4) and DDRF (alg. 5).

A server draws P neighbours from a source (its Cyclon view, or its gradient view) at its
first allocation tick and keeps them: "a random graph", static out-degree. It tops them up
from the same source while it knows fewer than P: a cluster of fewer than P + 1 servers,
a view caught empty (which would otherwise leave a server without neighbours for good),
or, in network mode, neighbours that went down (MemberDown), whose last answer would
otherwise be used for ever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


class FixedNeighbours:
    """P neighbours drawn once from ``source`` and kept, topped up when fewer."""

    def __init__(self, source: Callable[[], list[str]], count: int) -> None:
        self.source = source
        self.P = count
        self.members: list[str] | None = None  # None until the first draw
        self.down: set[str] = set()  # reported down: never drawn again

    def complete(self) -> bool:
        return self.members is not None and len(self.members) >= self.P

    def draw(self) -> list[str]:
        """Draw the neighbours, or top them up from the source; the current ones."""
        if self.members is None:
            self.members = self.source()[: self.P]
        else:
            known = set(self.members)
            self.members += [n for n in self.source() if n not in known and n not in self.down][: self.P - len(self.members)]
        return self.members

    def forget(self, dead: Iterable[str]) -> None:
        """Servers that went down leave the neighbours; the next draw replaces them."""
        self.down.update(dead)
        if self.members is not None:
            self.members = [n for n in self.members if n not in self.down]
