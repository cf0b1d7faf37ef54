"""The Gateway actor: redirects users to a server chosen by the policy's routing
(thesis ch. 4): the central server, a server picked uniformly at random for every task
(probes, 4.2), or a fixed home server per user (DDRF, DGDRF, PDGDRF, 4.3-4.5). It learns
the servers from their RegisterServer messages, and forgets those reported down
(MemberDown), moving their users to a new home."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dgdrf.nodes.protocol import HomeMoved, MemberDown, RegisterServer, Registered, ServerReply, ServerRequest
from dgdrf.runtime.actor import Actor


class Routing(Protocol):
    """How a gateway picks the server a user's task goes to (the policy decides)."""

    def add_server(self, server: str) -> None: ...

    def route(self, user: str, rng: np.random.Generator) -> str | None: ...

    def remove_server(self, server: str) -> list[str]:
        """Forget a server that went down; the users whose home it was."""
        ...


class FixedRouting:
    """Every user goes to one server: the centralized scheduler (thesis 4.1, fig. 4.1)."""

    def __init__(self, server: str) -> None:
        self.server = server

    def add_server(self, server: str) -> None:
        pass

    def route(self, user: str, rng: np.random.Generator) -> str | None:
        return self.server

    def remove_server(self, server: str) -> list[str]:
        return []  # the central scheduler itself: nothing to route to instead


class RandomRouting:
    """A server uniformly at random for every task (thesis 4.2)."""

    def __init__(self) -> None:
        self.servers: list[str] = []

    def add_server(self, server: str) -> None:
        if server not in self.servers:
            self.servers.append(server)

    def route(self, user: str, rng: np.random.Generator) -> str | None:
        return self.servers[int(rng.integers(len(self.servers)))] if self.servers else None

    def remove_server(self, server: str) -> list[str]:
        if server in self.servers:
            self.servers.remove(server)
        return []


class HomeRouting(RandomRouting):
    """Each user gets a server at random on its first request and keeps it (thesis 4.3)."""

    def __init__(self) -> None:
        super().__init__()
        self.home: dict[str, str] = {}

    def route(self, user: str, rng: np.random.Generator) -> str | None:
        home = self.home.get(user)
        if home is None:
            home = super().route(user, rng)
            if home is not None:
                self.home[user] = home
        return home

    def remove_server(self, server: str) -> list[str]:
        super().remove_server(server)
        moved = [u for u, h in self.home.items() if h == server]
        for u in moved:
            del self.home[u]
        return moved


class Gateway(Actor):
    """Answers ServerRequest with the address the routing picks."""

    def __init__(self, address: str, routing: Routing) -> None:
        super().__init__(address)
        self.routing = routing
        self._waiting: list[tuple[str, int]] = []

    def on_RegisterServer(self, src: str, msg: RegisterServer) -> None:
        self.send(src, Registered())
        self.routing.add_server(src)
        waiting, self._waiting = self._waiting, []
        for user, task_id in waiting:
            self._answer(user, task_id)

    def on_MemberDown(self, src: str, msg: MemberDown) -> None:
        """Re-home the users of servers that went down (network mode, thesis 6: churn).
        Every server of the message is forgotten before any user is re-homed: a process
        hosting several servers dies with all of them, and a user moved from one to
        another of them would be sent to a dead home (and, if the two HomeMoved were
        handled out of order, stay there for ever)."""
        moved = [(server, user) for server in msg.addresses for user in self.routing.remove_server(server)]
        for server, user in moved:
            new = self.routing.route(user, self.rng)
            if new is not None:
                self.send(user, HomeMoved(server, new))

    def on_ServerRequest(self, src: str, msg: ServerRequest) -> None:
        self._answer(src, msg.task_id)

    def _answer(self, user: str, task_id: int) -> None:
        server = self.routing.route(user, self.rng)
        if server is None:  # no server known yet: answer when one registers
            self._waiting.append((user, task_id))
        else:
            self.send(user, ServerReply(task_id, server))
