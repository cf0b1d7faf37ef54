"""Reporting to the measuring instrument across processes.

In one process the Collector is called directly as the actors' reporter. In network mode
a node's reporter turns each event into a :class:`Report` message to the collector
actor, which feeds it to the same Collector: nodes still only write to it, and the
reports cost real messages (counted apart from the protocols' under their own type).
"""

from __future__ import annotations

from typing import Any

from dgdrf.runtime.messages import Message, message
from dgdrf.runtime.roles import MEMBER_ROLES


@message(60, senders=MEMBER_ROLES, signed=("time",))  # before the common start the cluster clock is negative
class Report(Message):
    """Any node -> collector: event ``kind`` at ``time`` (the cluster's clock) with ``fields``."""

    kind: str
    time: float
    fields: dict[str, Any]


class RemoteReporter:
    """A Reporter (see :class:`dgdrf.runtime.actor.Reporter`) that sends Report messages."""

    def __init__(self, transport: Any, collector: str) -> None:
        self.transport = transport
        self.collector = collector

    def __call__(self, kind: str, source: str, time: float, fields: dict[str, Any]) -> None:
        self.transport.send(source, self.collector, Report(kind, time, fields))
