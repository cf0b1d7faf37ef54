"""Envy-freeness over time: the audit's EF (model/audit.py; Wang et al. Def. 3) for
workloads whose tasks arrive and end.

The audit judges one final allocation, and with jobs that arrive and finish a run ends
with nothing allocated. What EF asks of a dynamic allocation is that a user who wants more
never prefers another user's bundle to its own. Our reading, taken at the run's samples
(``sample_every``, model/timeline.py; every 10 s by default where tasks end):

- a user *wants* while it has a next task (waiting, or being placed);
- it values a bundle by its next task: on each server its next task's constraint admits,
  the whole tasks of that demand the bundle's resources there would run,
  ⌊min_{r: d_ir > 0} A_jmr / d_ir⌋, summed over those servers (the audit's per-server
  floor; resources on different servers do not add up). Its own bundle is valued the
  same way, so its running tasks of earlier jobs, of other demands or on servers its
  next task may not use, count for what they would run of its next task; and no bundle
  is worth more to it than the tasks it has, running and waiting (of arrived jobs),
  counted one for one (a user with one task left wants one task, not another's
  hundred, so another's larger bundle is no reason for envy);
- it *envies* user j if v_i(A_j) / w_j > v_i(A_i) / w_i (Def. 3's weights; relative
  tolerance SHARE_TIE_TOLERANCE), and envies *beyond one task* if it would still envy
  with one more task of its own, (v_i(A_i) + 1) / w_i < v_i(A_j) / w_j (EF1, the audit's
  ``up_to_one_task``): with whole tasks placed one at a time, plain envy is the rule for
  a user whose next task waits behind larger bundles, and EF1 is the relation a greedy
  fair policy can keep;
- per user: the fraction of the sampled time it wanted during which it envied someone,
  and beyond one task; each sample's state counts until the next sample.

Sampled, not integrated at every event as sharing over time is
(model/sharing_over_time.py): a sample costs O(U² S R), too much for every placement of a
large run. Not measured at all (the result says so) when U² S exceeds
:data:`MAX_PAIR_CELLS`, where even the samples would cost more than the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dgdrf.model.resources import SHARE_TIE_TOLERANCE

#: slack of a floor over a ratio of floats (as model/audit.py)
FLOOR_SLACK = 1e-9
#: largest users² x servers for which envy is sampled (8 x 8 x 40 is 2,560; Wang et
#: al.'s 4,500 users on 1,000 servers would be 2e10 a sample)
MAX_PAIR_CELLS = 50_000_000


def bundle_values(held: np.ndarray, demand: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """``v[i, j]``: whole tasks of user i's next task (``demand[i]``, on the servers
    ``eligible[i]`` admits) that user j's resources per server (``held[j]``, servers x
    resources) would run, for the rows of ``demand`` and every j."""
    v = np.zeros((len(demand), held.shape[0]))
    #: held[:, :, r], contiguous, made once a call: a row's ratios are then made resource
    #: by resource, where indexing held by servers and resources copied all of it per row
    per_resource: dict[int, np.ndarray] = {}
    for row, (d, elig) in enumerate(zip(demand, eligible)):
        need = np.flatnonzero(d > 0)
        if not len(need) or not elig.any():
            continue
        every = bool(elig.all())
        q: np.ndarray | None = None  # (users, eligible servers): the least ratio so far
        for r in need.tolist():
            h = per_resource.get(r)
            if h is None:
                h = per_resource[r] = np.ascontiguousarray(held[:, :, r])
            ratio = (h if every else h[:, elig]) / d[r]
            q = ratio if q is None else np.minimum(q, ratio, out=q)
        assert q is not None
        v[row] = np.floor(q + FLOOR_SLACK).sum(axis=1)
    return v


def envy_now(held: np.ndarray, demand: np.ndarray, eligible: np.ndarray, weight: np.ndarray, wants: np.ndarray, asks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per user: whether it envies someone now, and whether beyond one task (both False
    for a user that wants nothing); ``asks``: the tasks it has, running and waiting, the
    most any bundle is worth to it."""
    n = len(weight)
    envious, beyond = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    rows = np.flatnonzero(wants)
    if not len(rows):
        return envious, beyond
    v = np.minimum(bundle_values(held, demand[rows], eligible[rows]), np.asarray(asks, dtype=np.float64)[rows][:, None])  # (wanting users, users)
    own = v[np.arange(len(rows)), rows]
    w_i = weight[rows][:, None]
    theirs = v * w_i  # v_i(A_j) w_i, against v_i(A_i) w_j
    mine = own[:, None] * weight[None, :]
    others = np.ones_like(v, dtype=bool)
    others[np.arange(len(rows)), rows] = False
    envious[rows] = (others & (theirs > mine + SHARE_TIE_TOLERANCE * np.maximum(mine, 1.0))).any(axis=1)
    plus_one = (own[:, None] + 1) * weight[None, :]
    beyond[rows] = (others & (plus_one < theirs * (1 - SHARE_TIE_TOLERANCE))).any(axis=1)
    return envious, beyond


class EnvyOverTime:
    """Accumulates, per user, the sampled time it wanted, envied, and envied beyond one
    task."""

    def __init__(self, users: list[str], servers: int) -> None:
        self.users = users
        n = len(users)
        self.measured = self.measurable(n, servers)
        self._last_t: float | None = None
        self._state = (np.zeros(n, dtype=bool),) * 3  # wants, envious, beyond one, as last sampled
        self._wanting = np.zeros(n)
        self._envious = np.zeros(n)
        self._beyond = np.zeros(n)
        self.samples = 0

    @staticmethod
    def measurable(users: int, servers: int) -> bool:
        """Whether envy is sampled for this many users and servers (:data:`MAX_PAIR_CELLS`)."""
        return users * users * servers <= MAX_PAIR_CELLS

    def _credit(self, until: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._last_t is None:
            return self._wanting, self._envious, self._beyond
        dt = max(0.0, until - self._last_t)
        wants, envious, beyond = self._state
        return self._wanting + wants * dt, self._envious + envious * dt, self._beyond + beyond * dt

    def sample(self, now: float, held: np.ndarray, demand: np.ndarray, eligible: np.ndarray, weight: np.ndarray, wants: np.ndarray, asks: np.ndarray) -> None:
        """The state at ``now`` (it counts until the next sample): every user's resources
        per server ``held``, its next task's ``demand`` and the servers ``eligible`` for
        it, its ``weight``, whether it ``wants`` (has a next task) and the tasks it
        ``asks`` for (running and waiting)."""
        if not self.measured:
            return
        self._wanting, self._envious, self._beyond = self._credit(now)
        self._last_t = now
        wants = np.asarray(wants, dtype=bool).copy()
        self._state = (wants, *envy_now(held, demand, eligible, weight, wants, asks))
        self.samples += 1

    def result(self, end: float) -> dict[str, Any]:
        """Per user that ever wanted: ``wanting_s`` (sampled seconds), ``envious`` and
        ``beyond_one`` (fractions of them); over users, ``most_envious``,
        ``most_beyond_one`` and ``users_ever_beyond_one``, and ``envious_overall`` and
        ``beyond_one_overall``, the fractions of all users' wanting time together (a
        user that wanted for one sample weighs one sample); or why it was not measured."""
        if not self.measured:
            return {"measured": False, "why": f"users² x servers above {MAX_PAIR_CELLS:,}: a sample would cost more than the run"}
        wanting, envious, beyond = self._credit(end)
        per = {u: {"wanting_s": float(wanting[i]), "envious": float(envious[i] / wanting[i]), "beyond_one": float(beyond[i] / wanting[i])}
               for i, u in enumerate(self.users) if wanting[i] > 0}
        return {
            "measured": True,
            "samples": self.samples,
            "users": per,
            "most_envious": max((v["envious"] for v in per.values()), default=0.0),
            "most_beyond_one": max((v["beyond_one"] for v in per.values()), default=0.0),
            "users_ever_beyond_one": sorted(u for u, v in per.items() if v["beyond_one"] > 0),
            "envious_overall": float(envious.sum() / wanting.sum()) if wanting.sum() > 0 else 0.0,
            "beyond_one_overall": float(beyond.sum() / wanting.sum()) if wanting.sum() > 0 else 0.0,
        }
