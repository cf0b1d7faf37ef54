"""The Gateway actor: redirects users to a server chosen by the policy's routing
(thesis ch. 4): the central server, a server picked uniformly at random for every task
(probes, 4.2), or a fixed home server per user (DDRF, DGDRF, PDGDRF, 4.3-4.5). It learns
the servers from their RegisterServer messages (capacity and attributes), and forgets
those reported down (MemberDown), moving their users to a new home. A task picked a
random server for (probes) goes to one whose capacity can hold it and whose attributes
its constraint admits, when its ServerRequest says what it needs (a task with traits)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dgdrf.model.constraints import UNCONSTRAINED, Constraint
from dgdrf.model.fleet import runs_on
from dgdrf.nodes.protocol import HomeMoved, MemberDown, MemberUp, RegisterServer, Registered, ServerReply, ServerRequest
from dgdrf.runtime.actor import Actor


@dataclass(frozen=True)
class Need:
    """What a task needs of the server it goes to: room for ``demand`` when the server is
    empty, and a server ``constraint`` admits."""

    demand: tuple[float, ...]
    constraint: Constraint = UNCONSTRAINED

    def met_by(self, server: str, capacity: Sequence[float], attributes: Mapping[str, Any]) -> bool:
        return runs_on(self.demand, self.constraint, server, capacity, attributes)


class Routing(Protocol):
    """How a gateway picks the server a user's task goes to (the policy decides)."""

    def add_server(self, server: str, capacity: Sequence[float] = (), attributes: Mapping[str, Any] | None = None) -> None: ...

    def route(self, user: str, rng: np.random.Generator, need: Need | None = None) -> str | None: ...

    def remove_server(self, server: str) -> list[str]:
        """Forget a server that went down; the users whose home it was."""
        ...


class FixedRouting:
    """Every user goes to one server: the centralized scheduler (thesis 4.1, fig. 4.1)."""

    def __init__(self, server: str) -> None:
        self.server = server

    def add_server(self, server: str, capacity: Sequence[float] = (), attributes: Mapping[str, Any] | None = None) -> None:
        pass

    def route(self, user: str, rng: np.random.Generator, need: Need | None = None) -> str | None:
        return self.server

    def remove_server(self, server: str) -> list[str]:
        return []  # the central scheduler itself: nothing to route to instead


class RandomRouting:
    """A server uniformly at random for every task (thesis 4.2); for a task that says
    what it needs, uniformly among the servers that meet it."""

    def __init__(self) -> None:
        self.servers: list[str] = []
        self.known: dict[str, tuple[tuple[float, ...], dict[str, Any]]] = {}  # server -> (capacity, attributes)

    def add_server(self, server: str, capacity: Sequence[float] = (), attributes: Mapping[str, Any] | None = None) -> None:
        if server not in self.servers:
            self.servers.append(server)
            self.known[server] = (tuple(capacity), dict(attributes or {}))

    def route(self, user: str, rng: np.random.Generator, need: Need | None = None) -> str | None:
        servers = self.servers
        if need is not None:
            servers = [s for s in servers if need.met_by(s, *self.known[s])]
        return servers[int(rng.integers(len(servers)))] if servers else None

    def remove_server(self, server: str) -> list[str]:
        if server in self.servers:
            self.servers.remove(server)
            self.known.pop(server, None)
        return []


class HomeRouting(RandomRouting):
    """Each user gets a server at random on its first request and keeps it (thesis 4.3)."""

    def __init__(self) -> None:
        super().__init__()
        self.home: dict[str, str] = {}

    def route(self, user: str, rng: np.random.Generator, need: Need | None = None) -> str | None:
        home = self.home.get(user)
        if home is None:
            home = super().route(user, rng)  # any server: a home walks what it cannot run
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
        #: requests no known server could take, answered when one registers: (user, task)
        #: -> need, once each however often the user asks again
        self._waiting: dict[tuple[str, int], Need | None] = {}

    def on_RegisterServer(self, src: str, msg: RegisterServer) -> None:
        self.send(src, Registered())
        self._add(src, msg.capacity, msg.attributes)

    def on_MemberUp(self, src: str, msg: MemberUp) -> None:
        """A server joined (the bootstrap says so, perhaps before the newcomer registers
        here itself)."""
        self._add(msg.server, msg.capacity, msg.attributes)

    def _add(self, server: str, capacity: Sequence[float], attributes: Mapping[str, Any]) -> None:
        self.routing.add_server(server, capacity, attributes)
        waiting, self._waiting = self._waiting, {}
        for (user, task_id), need in waiting.items():
            self._answer(user, task_id, need)

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
        need = Need(tuple(msg.demand), Constraint.from_wire(msg.eligible, msg.requires)) if msg.demand else None
        self._answer(src, msg.task_id, need)

    def _answer(self, user: str, task_id: int, need: Need | None = None) -> None:
        server = self.routing.route(user, self.rng, need)
        if server is None:  # no server (that can run it) known yet: answer when one registers
            self._waiting[(user, task_id)] = need
        else:
            self.send(user, ServerReply(task_id, server))
