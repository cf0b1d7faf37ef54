"""The Gateway actor: redirects users to a server chosen by the policy's routing
(thesis ch. 4): the central server, a server picked uniformly at random for every task
(probes, 4.2), or a fixed home server per user (DDRF, DGDRF, PDGDRF, 4.3-4.5). It learns
the servers from their RegisterServer messages."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dgdrf.nodes.protocol import RegisterServer, ServerReply, ServerRequest
from dgdrf.runtime.actor import Actor


class Routing(Protocol):
    """How a gateway picks the server a user's task goes to (the policy decides)."""

    def add_server(self, server: str) -> None: ...

    def route(self, user: str, rng: np.random.Generator) -> str | None: ...


class FixedRouting:
    """Every user goes to one server: the centralized scheduler (thesis 4.1, fig. 4.1)."""

    def __init__(self, server: str) -> None:
        self.server = server

    def add_server(self, server: str) -> None:
        pass

    def route(self, user: str, rng: np.random.Generator) -> str | None:
        return self.server


class RandomRouting:
    """A server uniformly at random for every task (thesis 4.2)."""

    def __init__(self) -> None:
        self.servers: list[str] = []

    def add_server(self, server: str) -> None:
        if server not in self.servers:
            self.servers.append(server)

    def route(self, user: str, rng: np.random.Generator) -> str | None:
        return self.servers[int(rng.integers(len(self.servers)))] if self.servers else None


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


class Gateway(Actor):
    """Answers ServerRequest with the address the routing picks."""

    def __init__(self, address: str, routing: Routing) -> None:
        super().__init__(address)
        self.routing = routing
        self._waiting: list[tuple[str, int]] = []

    def on_RegisterServer(self, src: str, msg: RegisterServer) -> None:
        self.routing.add_server(src)
        waiting, self._waiting = self._waiting, []
        for user, task_id in waiting:
            self._answer(user, task_id)

    def on_ServerRequest(self, src: str, msg: ServerRequest) -> None:
        self._answer(src, msg.task_id)

    def _answer(self, user: str, task_id: int) -> None:
        server = self.routing.route(user, self.rng)
        if server is None:  # no server known yet: answer when one registers
            self._waiting.append((user, task_id))
        else:
            self.send(user, ServerReply(task_id, server))
