"""The Gateway actor: redirects users to a server chosen by the policy's routing
(thesis ch. 4: a single central server, a server picked uniformly at random, ...)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dgdrf.nodes.protocol import ServerReply, ServerRequest
from dgdrf.runtime.actor import Actor


class Routing(Protocol):
    """How a gateway picks the server a user's task goes to (the policy decides)."""

    def route(self, user: str, rng: np.random.Generator) -> str: ...


class FixedRouting:
    """Every user goes to one server: the centralized scheduler (thesis 4.1, fig. 4.1)."""

    def __init__(self, server: str) -> None:
        self.server = server

    def route(self, user: str, rng: np.random.Generator) -> str:
        return self.server


class Gateway(Actor):
    """Answers ServerRequest with the address the routing picks."""

    def __init__(self, address: str, routing: Routing) -> None:
        super().__init__(address)
        self.routing = routing

    def on_ServerRequest(self, src: str, msg: ServerRequest) -> None:
        self.send(src, ServerReply(msg.task_id, self.routing.route(src, self.rng)))
