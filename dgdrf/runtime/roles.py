"""The roles a cluster member plays, as the network mode's authorisation knows them.

Every actor of a run is one of these. A message type names the roles allowed to send it
(:func:`dgdrf.runtime.messages.message`), a certificate names the role of the process
that holds it (:mod:`dgdrf.cluster.keys`), and a node checks the one against the other
on receipt (:mod:`dgdrf.runtime.net`). ``admin`` is not an actor: it is the operator's
(or ``dgdrf cluster up``'s) identity for the HTTP endpoints that stop a node.
"""

from __future__ import annotations

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
