"""Per-message-type counters: the thesis prices protocols in messages and bytes (eqs. 4.3-4.6)."""

from __future__ import annotations

from array import array

from dgdrf.runtime.messages import message_types


class MessageStats:
    """Messages and bytes sent per type tag, plus transport-level drops and duplicates:
    ``dropped`` by the loss model, ``partitioned`` between the groups of a partition
    (emulation's ``Partition`` control), ``undeliverable`` to an address nobody has."""

    __slots__ = ("count", "nbytes", "dropped", "partitioned", "duplicated", "undeliverable")

    def __init__(self) -> None:
        # 64-bit counters in arrays (Python ints when read): the compiled local transport
        # counts in them in C
        self.count = array("q", [0]) * 256
        self.nbytes = array("q", [0]) * 256
        self.dropped = 0
        self.partitioned = 0
        self.duplicated = 0
        self.undeliverable = 0

    def totals(self) -> tuple[int, int]:
        return sum(self.count), sum(self.nbytes)

    def by_type(self) -> dict[str, dict[str, int]]:
        """{type name: {"count": n, "bytes": b}} for every type sent at least once."""
        names = {tag: cls.__name__ for tag, cls in message_types().items()}
        return {
            names.get(tag, f"tag{tag}"): {"count": self.count[tag], "bytes": self.nbytes[tag]}
            for tag in sorted(range(256), key=lambda t: names.get(t, f"tag{t}"))
            if self.count[tag]
        }

    def summary(self) -> dict:
        total, nbytes = self.totals()
        return {
            "total": total,
            "bytes": nbytes,
            "dropped": self.dropped,
            "partitioned": self.partitioned,
            "duplicated": self.duplicated,
            "undeliverable": self.undeliverable,
            "by_type": self.by_type(),
        }
