"""The ticking role: a role that a resource node's allocation tick drives.

Allocation in the thesis happens in ticks (1.5.8): every ``tick`` seconds each server
asks its scheduling roles to place what they can. A role takes part by subclassing
:class:`TickingRole` and implementing :meth:`on_tick`; the server calls the ticks of its
ticking roles in the order they were added (nodes/server.py).
"""

from __future__ import annotations

from dgdrf.runtime.actor import Role


class TickingRole(Role):
    """A role with work to do on every allocation tick of the server hosting it."""

    def on_tick(self) -> None:
        """One allocation tick (thesis 1.5.8)."""
        raise NotImplementedError(f"{type(self).__name__} is a TickingRole without on_tick")
