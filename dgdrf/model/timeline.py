"""Shares and utilisation over time: a run's time series and its time-averaged shares.

With jobs that arrive and finish, a run's final shares say little (a drained run ends
with every share 0). What the papers compare is how resources were shared while users
competed: each user's (weighted) dominant share over time, the utilisation of each
resource, and fairness indices over the time-averaged shares. :class:`Timeline`
integrates each user's share exactly (shares are constant between the collector's
events, so the integral is a sum of share x interval) and keeps samples at a fixed period
(``--sample-every``), taken at the sampling instants from the state at that instant.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Timeline:
    """Time-integrated shares since ``start``, and periodic samples."""

    def __init__(self, users: list[str], resources: list[str], start: float, every: float | None) -> None:
        self.users = users
        self.resources = resources
        self.start = start
        self.every = every
        self._area = np.zeros(len(users))
        self._last_t = start
        self._last_shares = np.zeros(len(users))
        self.times: list[float] = []
        self.share_samples: list[list[float]] = []
        self.util_samples: list[list[float]] = []
        self.running_samples: list[int] = []
        self._next_sample = start if every else float("inf")

    def changed(self, time: float, shares: np.ndarray) -> None:
        """The shares are ``shares`` from ``time`` on (after an allocation, an end)."""
        if time > self._last_t:
            self._area += self._last_shares * (time - self._last_t)
            self._last_t = time
        self._last_shares = np.array(shares, dtype=np.float64)

    def due(self, now: float) -> bool:
        return now >= self._next_sample

    def sample(self, now: float, utilization: np.ndarray, running: int) -> None:
        """Record the samples due by ``now`` (each sampling instant gets the state as it is
        now, the state having been constant since the last event)."""
        while self.every and self._next_sample <= now:
            self.times.append(self._next_sample - self.start)
            self.share_samples.append(self._last_shares.tolist())
            self.util_samples.append([float(x) for x in utilization])
            self.running_samples.append(running)
            self._next_sample += self.every

    def averages(self, end: float) -> np.ndarray:
        """Each user's share averaged over [start, end]."""
        area = self._area + self._last_shares * max(0.0, end - self._last_t)
        span = end - self.start
        return area / span if span > 0 else self._last_shares.copy()

    def series(self) -> dict[str, Any]:
        """The samples: ``every``, ``time`` (seconds from the start of allocation),
        ``utilization`` per resource, ``shares`` per user, ``running`` tasks."""
        util = np.array(self.util_samples).reshape(len(self.times), len(self.resources))
        shares = np.array(self.share_samples).reshape(len(self.times), len(self.users))
        return {
            "every": self.every,
            "time": self.times,
            "utilization": {r: util[:, j].tolist() for j, r in enumerate(self.resources)},
            "shares": {u: shares[:, i].tolist() for i, u in enumerate(self.users)},
            "running": self.running_samples,
        }
