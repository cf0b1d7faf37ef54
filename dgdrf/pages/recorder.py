"""What a run's page draws, recorded while the run goes: an observer (dgdrf/world.py)
that reads the collector and the transport at a period and at each allocation, and
changes nothing the actors do.

The period starts fine and doubles whenever the samples would pass ``max_samples``
(every other sample is dropped then), so a run of a second and a run of five hours
both end with a few hundred to ``max_samples`` samples, without knowing their length
in advance. Counts (allocations, messages by type) are kept as totals at each sample, so
dropping a sample merges two intervals and loses nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dgdrf.world import Observer

if TYPE_CHECKING:
    from dgdrf.measurement import RunResult
    from dgdrf.nodes.collector import AllocationRecord
    from dgdrf.world import World

#: the first sampling period (virtual seconds), doubled as samples pile up
FIRST_PERIOD_S = 0.01
#: the most samples kept of a run
MAX_SAMPLES = 1000


@dataclass
class RunRecord:
    """A run's series for its page: at each sample time (seconds from the start of
    allocation), every user's share under the policy's notion, the utilisation of each
    resource, and the totals so far of allocations and of messages by type; and the
    allocations made on each server by each user over the run."""

    policy: str
    share_name: str
    users: list[str]
    servers: list[str]
    resources: list[str]
    tick_s: float
    times: list[float] = field(default_factory=list)
    shares: list[list[float]] = field(default_factory=list)
    utilisation: list[list[float]] = field(default_factory=list)
    allocations: list[int] = field(default_factory=list)
    messages: list[dict[str, int]] = field(default_factory=list)
    placements: dict[str, dict[str, int]] = field(default_factory=dict)
    result: RunResult | None = None


class RunRecorder(Observer):
    """Records a :class:`RunRecord` of the run it observes (``record``, complete once the
    run has finished)."""

    def __init__(self, max_samples: int = MAX_SAMPLES, first_period: float = FIRST_PERIOD_S) -> None:
        if max_samples < 4:
            raise ValueError(f"max_samples: at least 4, got {max_samples}")
        self.max_samples = max_samples
        self.period = first_period
        self.record: RunRecord | None = None
        self._placements: Counter[tuple[str, str]] = Counter()

    def started(self, world: World) -> None:
        collector = world.collector
        notion = collector.notion
        self.record = RunRecord(
            policy=world.config.policy,
            share_name=notion.share_name if notion is not None else "global dominant share",
            users=list(collector.ledger.user_ids),
            servers=[s.id for s in world.scenario.servers],
            resources=list(world.scenario.resources),
            tick_s=world.config.tick,
        )
        world.clock.call_later(max(world.start, 0.0), self._sample, world)

    def _sample(self, world: World) -> None:
        self._sample_now(world)
        assert self.record is not None  # started
        if len(self.record.times) > self.max_samples:
            self._thin()
        world.clock.call_later(self.period, self._sample, world)

    def _thin(self) -> None:
        assert self.record is not None
        thin(self.record)
        self.period *= 2

    def allocated(self, world: World, allocation: AllocationRecord) -> None:
        self._placements[(allocation.user, allocation.server)] += 1

    def finished(self, world: World, result: RunResult) -> None:
        record = self.record
        if record is None:
            return
        self._sample_last(world)
        placements: dict[str, dict[str, int]] = {}
        for (user, server), n in sorted(self._placements.items()):
            placements.setdefault(user, {})[server] = n
        record.placements = placements
        record.result = result

    def _sample_last(self, world: World) -> None:
        """The state at the run's end, as the last sample (unless one was just taken)."""
        record = self.record
        assert record is not None
        if not record.times or record.times[-1] < world.clock.now() - world.start:
            self._sample_now(world)

    def _sample_now(self, world: World) -> None:
        assert self.record is not None
        sample(self.record, world.clock.now() - world.start, world.collector, {k: v["count"] for k, v in world.transport.stats.by_type().items()})


def sample(record: RunRecord, t: float, collector: Any, messages: dict[str, int]) -> None:
    """Append to ``record`` the collector's state at ``t`` (seconds from the start of
    allocation): shares under its notion, utilisation, allocations so far, and the
    message totals by type (``messages``: the transport's here; a cluster's, gathered)."""
    ledger = collector.ledger
    record.times.append(t)
    record.shares.append([float(x) for x in collector.shares()])
    cap, used = ledger.capacity.sum(axis=0), ledger.used.sum(axis=0)
    record.utilisation.append([float(x) for x in np.where(cap > 0, used / np.where(cap > 0, cap, 1.0), 0.0)])
    record.allocations.append(len(collector.allocations))
    record.messages.append(dict(messages))


def thin(record: RunRecord) -> None:
    """Keep every other sample (the first and the newest kept): the caller doubles its
    period. Counts are running totals, so nothing is lost but resolution."""
    keep = list(range(0, len(record.times) - 1, 2)) + [len(record.times) - 1]
    for name in ("times", "shares", "utilisation", "allocations", "messages"):
        series = getattr(record, name)
        setattr(record, name, [series[i] for i in keep])
