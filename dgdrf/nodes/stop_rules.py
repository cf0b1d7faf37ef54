"""Why a run ends: the stop rules, written once for emulation and network mode.

The collector (nodes/collector.py) keeps the global truth; these rules read it:

- **drained**: every task of every job has finished, but for the jobs no server up can
  run (given up by their users: model/fleet.py) and those of users that crashed
  (withdrawn) (a workload of finite jobs only);
- **saturated**: nothing can ever be placed again: no finite job has work left, no job is
  yet to arrive, no running task will end (so no room comes back) and no pending task
  fits anywhere (thesis 1.5.5: the first moment no user's next task fits on any server;
  a mixed workload: its finite jobs done and its endless ones saturated);
- **stranded**: no allocation can ever happen again although tasks fit: each user whose
  next task fits somewhere has it held only by servers where it does not fit (probes,
  thesis 4.2), and no room can come back on them (nothing running will end, nothing is
  to arrive);
- **stalled**: something fits now, where it may run (on a server holding it, for a task
  whose copies are held), and nothing has been placed for ``stall_time`` seconds since it
  began to fit: a bug to find. Waiting for a running task to end is not a stall: while
  nothing pending fits, the stall clock does not run. Also stalled: work of finite jobs
  is left that nothing can bring about for ``stall_time`` seconds (nothing fits, nothing
  running will end, nothing is to arrive): a job no server up can run is given up by its
  user (model/fleet.py) and is no work left, so what remains is a bug too. So is a run
  whose clock runs out of events with work left (dgdrf/world.py);
- **max_time**: the run's time limit (an endless workload whose tasks end never stops
  by itself), and only when it is reached.

drained and saturated are decided at the collector's events (an allocation, a task
ending), so a run ends at the exact moment; the others by a watch every so often. A
network's reports may arrive out of order (from different processes), so there a run is
taken for stranded only once it has looked stranded for ``stranded_patience`` seconds;
in emulation reports arrive in order and once is enough.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

#: every reason a run ends (a network run may also end because a member it needs died:
#: cluster/node.py FATAL_STOPS)
STOP_REASONS = ("saturated", "drained", "stranded", "stalled", "max_time")


class RunState(Protocol):
    """What the rules read of the collector."""

    last_allocation_at: float

    def finite_work_left(self, now: float) -> bool:
        """A finite job has a task that has not finished (or a job is yet to arrive)."""
        ...

    def endless(self) -> bool:
        """Some job is endless."""
        ...

    def room_may_return(self, now: float) -> bool:
        """A running task will end, or a job is yet to arrive."""
        ...

    def fits_now(self) -> bool:
        """Some user's next task fits now on some server (saturation's test)."""
        ...

    def stranded(self) -> list[str]:
        """The users whose next task fits somewhere but is held only by servers where it
        does not (probes), when every user whose next task fits is so; else []."""
        ...


def final_reason(state: RunState, now: float) -> str | None:
    """``drained`` or ``saturated`` when the run is over by itself, else None."""
    if state.finite_work_left(now):
        return None
    if not state.endless():
        return "drained"
    if state.room_may_return(now) or state.fits_now():
        return None
    return "saturated"


@dataclass
class StopRules:
    """The watch of one run: :meth:`check` every so often says whether it must end."""

    stall_time: float
    max_time: float
    #: seconds a run must look stranded before it is taken for stranded (network mode)
    stranded_patience: float = 0.0
    _stranded_since: float | None = field(default=None, init=False)
    #: since when something pending has fitted at every check, or work has been left that
    #: nothing will bring about (None: neither, at the last check)
    fits_since: float | None = field(default=None, init=False)

    def check(self, state: RunState, now: float) -> str | None:
        """Why the run must end now, if it must."""
        final = final_reason(state, now)
        if final is not None:
            return final
        stranded = bool(state.stranded())
        if stranded and not state.room_may_return(now):
            if self._stranded_since is None:
                self._stranded_since = now
            if now - self._stranded_since >= self.stranded_patience:
                return "stranded"
        else:
            self._stranded_since = None
        # the stall clock runs while a task fits where it may run: somewhere, and, for a
        # task whose copies are held (probes), on a server holding it (not stranded); and
        # while finite work is left that nothing will bring about
        fits = not stranded and state.fits_now()
        if not fits and (stranded or not state.finite_work_left(now) or state.room_may_return(now)):
            self.fits_since = None
        elif self.fits_since is None:
            self.fits_since = now
        if self.fits_since is not None and now - max(state.last_allocation_at, self.fits_since) >= self.stall_time:
            return "stalled"
        if now >= self.max_time:
            return "max_time"
        return None
