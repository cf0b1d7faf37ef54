"""Task durations: a fixed number of seconds or a distribution drawn per task.

A job's ``duration`` in a scenario is either a positive number of seconds or a table
``{"dist": NAME, ...parameters}``. Each task of the job draws its own duration from the
run's seed (dgdrf/model/workload.py gives every job a random stream of its own, so the
draws do not depend on the policy, on message timing or on the other jobs). The names
and parameters are those of numpy's generators, which draw them:

============  =====================================  =========================================
``dist``      parameters                              what it is
============  =====================================  =========================================
``fixed``     ``seconds``                             the same for every task
``exp``       ``mean``                                exponential (memoryless)
``lognormal`` ``median``, ``sigma``                   log-normal: ln X ~ N(ln median, sigma^2)
``pareto``    ``scale``, ``shape``                    Pareto (type I): X >= scale, P(X > x) = (scale/x)^shape
``uniform``   ``min``, ``max``                        uniform on [min, max]
``weibull``   ``scale``, ``shape``                    Weibull
``empirical`` ``values``                              one of the listed values, uniformly (a trace's durations)
============  =====================================  =========================================

Any of them may carry ``min`` / ``max`` clip bounds besides (``uniform`` uses them as its
range): a heavy tail cut at a trace's longest task, say. Every parameter is checked where
the scenario is read, and a bad one is a :class:`~dgdrf.errors.ScenarioError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the longest duration a task may have (virtual time is integer microseconds)
MAX_DURATION_S = 1e9

#: dist name -> (required parameters, optional parameters)
DISTRIBUTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fixed": (("seconds",), ()),
    "exp": (("mean",), ("min", "max")),
    "lognormal": (("median", "sigma"), ("min", "max")),
    "pareto": (("scale", "shape"), ("min", "max")),
    "uniform": (("min", "max"), ()),
    "weibull": (("scale", "shape"), ("min", "max")),
    "empirical": (("values",), ("min", "max")),
}


class DistributionError(ValueError):
    """A distribution's table is wrong; the message says which parameter and why."""


@dataclass(frozen=True)
class Duration:
    """How long the tasks of a job run: ``dist`` and its parameters (see the module)."""

    dist: str
    params: tuple[tuple[str, Any], ...]

    @property
    def fixed(self) -> float | None:
        """The seconds every task runs, when they are all the same; else None."""
        return float(dict(self.params)["seconds"]) if self.dist == "fixed" else None

    def to_json(self) -> float | dict[str, Any]:
        """What a scenario file says: a number for a fixed duration, else the table."""
        if self.dist == "fixed":
            return dict(self.params)["seconds"]
        return {"dist": self.dist, **{k: (list(v) if isinstance(v, tuple) else v) for k, v in self.params}}

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` durations in seconds, each positive."""
        p = dict(self.params)
        if self.dist == "fixed":
            x = np.full(n, float(p["seconds"]))
        elif self.dist == "exp":
            x = rng.exponential(float(p["mean"]), n)
        elif self.dist == "lognormal":
            x = rng.lognormal(math.log(float(p["median"])), float(p["sigma"]), n)
        elif self.dist == "pareto":
            x = float(p["scale"]) * (1.0 + rng.pareto(float(p["shape"]), n))
        elif self.dist == "uniform":
            x = rng.uniform(float(p["min"]), float(p["max"]), n)
        elif self.dist == "weibull":
            x = float(p["scale"]) * rng.weibull(float(p["shape"]), n)
        elif self.dist == "empirical":
            values = np.asarray(p["values"], dtype=np.float64)
            x = values[rng.integers(len(values), size=n)]
        else:  # pragma: no cover - parse_duration admits only the names above
            raise AssertionError(self.dist)
        lo = float(p.get("min", 0.0)) if self.dist != "uniform" else 0.0
        hi = float(p.get("max", MAX_DURATION_S)) if self.dist != "uniform" else MAX_DURATION_S
        # a draw of exactly 0 (an exponential can) would be a task that never ran: the
        # shortest duration is one microsecond, the virtual clock's resolution
        return np.clip(x, max(lo, 1e-6), min(hi, MAX_DURATION_S))

    def mean(self) -> float:
        """The mean duration (before clipping; for a fixed one, the duration)."""
        p = dict(self.params)
        if self.dist == "fixed":
            return float(p["seconds"])
        if self.dist == "exp":
            return float(p["mean"])
        if self.dist == "lognormal":
            return float(p["median"]) * math.exp(float(p["sigma"]) ** 2 / 2)
        if self.dist == "pareto":
            a = float(p["shape"])
            return math.inf if a <= 1 else a * float(p["scale"]) / (a - 1)
        if self.dist == "uniform":
            return (float(p["min"]) + float(p["max"])) / 2
        if self.dist == "weibull":
            return float(p["scale"]) * math.gamma(1 + 1 / float(p["shape"]))
        return float(np.mean(p["values"]))


def fixed(seconds: float) -> Duration:
    """A duration of ``seconds`` for every task."""
    return parse_duration(seconds)


def _positive(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DistributionError(f"{name}: must be a number, got {v!r}"[:120])
    try:
        ok = math.isfinite(v) and v > 0
    except OverflowError:
        ok = False
    if not ok:
        raise DistributionError(f"{name}: must be a positive finite number, got {str(v)[:40]}")
    if v > MAX_DURATION_S:
        raise DistributionError(f"{name}: must be at most {MAX_DURATION_S:g} seconds, got {v!r}")
    return float(v)


def parse_duration(value: Any) -> Duration:
    """A scenario's ``duration``: positive seconds, or ``{"dist": NAME, ...}``.
    Raises :class:`DistributionError` naming the parameter that is wrong."""
    if not isinstance(value, Mapping):
        return Duration("fixed", (("seconds", _positive("duration", value)),))
    name = value.get("dist")
    if name not in DISTRIBUTIONS:
        raise DistributionError(f"dist: unknown distribution {name!r}; known: {', '.join(DISTRIBUTIONS)}")
    required, optional = DISTRIBUTIONS[name]
    for k in value:
        if k != "dist" and k not in required and k not in optional:
            raise DistributionError(f"{k}: not a parameter of {name!r} (it takes {', '.join(required + optional)})")
    params: dict[str, Any] = {}
    for k in required + optional:
        if k not in value:
            if k in required:
                raise DistributionError(f"{k}: missing (a {name!r} duration needs {', '.join(required)})")
            continue
        if k == "values":
            vs = value[k]
            if not isinstance(vs, (list, tuple)) or not vs:
                raise DistributionError(f"values: must be a non-empty list of positive seconds, got {vs!r}"[:120])
            params[k] = tuple(_positive(f"values[{i}]", v) for i, v in enumerate(vs))
        elif k == "sigma":
            v = value[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise DistributionError(f"sigma: must be a finite number >= 0, got {v!r}"[:120])
            params[k] = float(v)
        else:
            params[k] = _positive(k, value[k])
    if "min" in params and "max" in params and params["min"] > params["max"]:
        raise DistributionError(f"min: {params['min']:g} is above max {params['max']:g}")
    return Duration(name, tuple((k, params[k]) for k in required + optional if k in params))
