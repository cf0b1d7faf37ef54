"""Shares and utilisation over time: a run's time series and its time-averaged shares.

With jobs that arrive and finish, a run's final shares say little (a drained run ends
with every share 0). What the papers compare is how resources were shared while users
competed: each user's (weighted) dominant share over time, the utilisation of each
resource, and fairness indices over the time-averaged shares. :class:`Timeline`
integrates each user's share exactly (shares are constant between the collector's
events, so the integral is a sum of share x interval) and keeps samples at a fixed period
(``--sample-every``), taken at the sampling instants from the state at that instant.

A user's time-averaged share is its share averaged over the time it *competes*: while it
has a task pending (the time DRF's fairness is about: a user with nothing pending wants
nothing more). Averaged over the whole run instead, it would be the user's total work
over the run's length, the same under every policy that runs the same tasks (their
durations do not depend on the policy), and fairness indices over it would compare
nothing. A user that never waited is averaged over the whole run.
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
        self._area = np.zeros(len(users))  # integral of the share over the whole run
        self._competing_area = np.zeros(len(users))  # ... over the time the user competed
        self._competing_time = np.zeros(len(users))
        self._last_t = start
        self._last_shares = np.zeros(len(users))
        self._last_competing = np.zeros(len(users), dtype=bool)
        self.times: list[float] = []
        self.share_samples: list[list[float]] = []
        self.util_samples: list[list[float]] = []
        self.running_samples: list[int] = []
        self._next_sample = start if every else float("inf")

    def changed(self, time: float, shares: np.ndarray, competing: np.ndarray) -> None:
        """The shares are ``shares`` from ``time`` on (after an allocation, an end, an
        arrival), and the users ``competing`` (a mask) have a task pending."""
        if time > self._last_t:
            dt = time - self._last_t
            self._area += self._last_shares * dt
            self._competing_area += np.where(self._last_competing, self._last_shares * dt, 0.0)
            self._competing_time += np.where(self._last_competing, dt, 0.0)
            self._last_t = time
        self._last_shares = np.array(shares, dtype=np.float64)
        self._last_competing = np.array(competing, dtype=bool)

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
        """Each user's share averaged over the time it competed until ``end`` (over
        [start, end] for a user that never waited)."""
        tail = max(0.0, end - self._last_t)
        area = self._area + self._last_shares * tail
        competing_area = self._competing_area + np.where(self._last_competing, self._last_shares * tail, 0.0)
        competing_time = self._competing_time + np.where(self._last_competing, tail, 0.0)
        span = end - self.start
        whole = area / span if span > 0 else self._last_shares.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(competing_time > 0, competing_area / np.where(competing_time > 0, competing_time, 1.0), whole)

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
