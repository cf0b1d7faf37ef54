"""The transport's options: how the emulated network delays, loses and duplicates messages.

Declared once (dgdrf/options.py); the emulated network applies them
(runtime/transport.py), a real network has its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from dgdrf.model.scenario import MAX_LATENCY_MS
from dgdrf.options import option


@dataclass(frozen=True)
class TransportOptions:
    """Latency drawn uniformly per message; loss and duplication independent per message."""

    latency_ms: tuple[float, float] = option((1.0, 5.0), "message latency, uniform between MIN and MAX", lo=0.0, hi=MAX_LATENCY_MS, unit="milliseconds", metavar="MIN,MAX")
    loss: float = option(0.0, "probability a message is lost", lo=0.0, hi=1.0)
    duplicate: float = option(0.0, "probability a message is delivered twice", lo=0.0, hi=1.0)
