"""The roles a cluster member plays, as the network mode's authorisation knows them.

Every actor of a run is one of these. A message type names the roles allowed to send it
(:func:`dgdrf.runtime.messages.message`), a certificate names the role of the process
that holds it (:mod:`dgdrf.cluster.keys`), and a node checks the one against the other
on receipt (:mod:`dgdrf.runtime.net`). ``admin`` is not an actor: it is the operator's
(or ``dgdrf cluster up``'s) identity for the HTTP endpoints that stop a node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BOOTSTRAP = "bootstrap"
COLLECTOR = "collector"
GATEWAY = "gateway"
SERVER = "server"
USER = "user"
ADMIN = "admin"

#: roles whose processes host actors
MEMBER_ROLES = (BOOTSTRAP, COLLECTOR, GATEWAY, SERVER, USER)
#: every role a certificate can carry
ROLES = (*MEMBER_ROLES, ADMIN)


@dataclass(frozen=True)
class Identity:
    """Who is at the other end of a connection, from its verified certificate."""

    name: str
    role: str


def identity_of(peercert: dict[str, Any] | None) -> Identity | None:
    """The identity in a certificate verified by the TLS handshake (``getpeercert()``)."""
    if not peercert:
        return None
    fields = {k: v for rdn in peercert.get("subject", ()) for k, v in rdn}
    name, role = fields.get("commonName"), fields.get("organizationalUnitName")
    if not name or role not in ROLES:
        return None
    return Identity(name, role)
