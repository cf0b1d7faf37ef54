"""One emulated run: :func:`run_emulation` builds a world and runs it (dgdrf/world.py:
composition, observers, controls); dgdrf/measurement.py turns it into a
:class:`RunResult` (the ``--json`` document).

Scripts and tests import the names of dgdrf/config.py, dgdrf/world.py and
dgdrf/measurement.py they need for one run from here (``RunConfig``, ``RunResult``,
``policy_options``, ``Crash``, ``Partition``, ``Churn``, ...).
"""

from __future__ import annotations

from typing import Callable, Iterable

from dgdrf.config import RunConfig
from dgdrf.measurement import RunResult, cost_per_tick, error_curve, measure
from dgdrf.model.scenario import Scenario
from dgdrf.world import BOOTSTRAP, GATEWAY, PROGRESS_SLICE_S, STOP_REASONS, WATCH_PERIOD_S, Churn, Control, Crash, Observer, Partition, World, build, build_server, build_user, policy_options

__all__ = [
    "BOOTSTRAP", "GATEWAY", "PROGRESS_SLICE_S", "STOP_REASONS", "WATCH_PERIOD_S", "Churn", "Control", "Crash", "Observer", "Partition", "RunConfig",
    "RunResult", "World", "build", "build_server", "build_user", "cost_per_tick", "error_curve", "measure", "policy_options", "run_emulation",
]  # fmt: skip


def run_emulation(
    scenario: Scenario,
    config: RunConfig,
    progress: Callable[[float, int], None] | None = None,
    observers: Iterable[Observer] = (),
    controls: Iterable[Control] = (),
) -> RunResult:
    """Run ``scenario`` under ``config`` in virtual time and measure it: ``build`` the
    world and run it (dgdrf/world.py) with ``observers`` and ``controls``. ``progress``,
    if given, hears the virtual time and the allocations made so far every second of
    virtual time (a progress bar; the result is the same with or without it)."""
    return build(scenario, config).run(observers=observers, controls=controls, progress=progress)
