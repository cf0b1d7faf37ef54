"""A fairness audit of one allocation: which of the four required properties it has, and why not.

Wang et al. (TSF, §III-A, Defs. 1-4) ask four things of a fair allocation with placement
constraints: sharing incentive (SI), strategy-proofness (SP), envy-freeness (EF) and Pareto
optimality (PO); their Table I shows per-machine DRF, DRFH and constrained CDRF each failing
some (CDRF: not SP, fig. 2b; not EF, fig. 3). The papers prove these properties for their
offline rules with divisible tasks; none of their implementations checks an allocation it
produced. This module does, for any allocation ``placed`` (users x servers, whole tasks of
user i on server m) over a :class:`~dgdrf.model.problem.Problem`, and each check returns the
verdict with its evidence (which users, by how much), so a researcher can see why.

Readings that the papers leave open, chosen here (each function says its own):

* tasks are indivisible, so every count is floored **per server**: a bundle of resources on a
  server runs the whole tasks that fit in it, and resources on different servers do not add up;
* a user's slice in SI, and the scale in EF, follow its weight (w_i / Σ w; Def. 3's w_i / w_j);
  with all weights 1 they are the unweighted 1/n and the plain comparison;
* PO allows a reallocation: tasks may move between servers (Def. 4 only asks "more tasks for a
  user without fewer for another"), so it is an integer programme, not a residual check;
* SP is probed, not proved: the policy is run again on a few lies (a scaled demand, a claim of
  every server, each user in turn) and a lie that gains is reported.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dgdrf.model.problem import Problem, tasks_per_server
from dgdrf.model.resources import FIT_TOLERANCE, SHARE_TIE_TOLERANCE

#: slack of a floor over a ratio of floats (4.5 / 1.5 must count 3 tasks, not 2), as
#: :func:`~dgdrf.model.problem.tasks_per_server` uses
FLOOR_SLACK = 1e-9

#: an allocation policy under audit: the reported problem in, tasks per (user, server) out
Allocator = Callable[[Problem], np.ndarray]


def _floor(x: np.ndarray) -> np.ndarray:
    return np.floor(x + FLOOR_SLACK)


def _as_placed(problem: Problem, placed: np.ndarray) -> np.ndarray:
    """``placed`` as an int64 users x servers array; anything else is an error, not a verdict."""
    a = np.asarray(placed)
    shape = (len(problem.user_ids), len(problem.server_ids))
    if a.shape != shape:
        raise ValueError(f"placed has shape {a.shape}, the problem is users x servers = {shape}")
    if a.size and (np.any(a < 0) or np.any(a != np.round(a))):
        raise ValueError("placed must hold whole, non-negative numbers of tasks")
    return np.round(a).astype(np.int64)


def _ratio(numer: np.ndarray, denom: np.ndarray) -> np.ndarray:
    """min over the resources r that ``denom`` demands of numer_r / denom_r, for every pair of
    rows (numer a x R, denom b x R -> b x a): how many ``denom`` tasks one ``numer`` bundle
    holds. A row of ``denom`` demanding nothing holds none (as in tasks_per_server)."""
    d = denom[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(d > 0, numer[None, :, :] / np.where(d > 0, d, 1.0), np.inf).min(axis=2)
    return np.where(np.isfinite(q), q, 0.0)


# ---------------------------------------------------------------------------------------------
# feasibility


@dataclass(frozen=True)
class Feasibility:
    """Does ``placed`` fit: no server over capacity (beyond the fit tolerance), no task
    where its user may not run? The other checks mean little when it does not."""

    feasible: bool
    over_capacity: tuple[tuple[str, int, float], ...]  # (server, resource index, excess)
    ineligible: tuple[tuple[str, str, int], ...]  # (user, server, tasks)


def feasibility(problem: Problem, placed: np.ndarray) -> Feasibility:
    """Capacity and eligibility of ``placed`` (eq. 4 of Wang et al.; p_im)."""
    n = _as_placed(problem, placed)
    used = n.T.astype(np.float64) @ problem.demand  # (S, R)
    cap = problem.capacity
    excess = used - cap
    over = np.argwhere(excess > FIT_TOLERANCE * np.maximum(cap, 1.0))
    bad = np.argwhere((n > 0) & ~problem.eligible)
    return Feasibility(
        feasible=not (len(over) or len(bad)),
        over_capacity=tuple((problem.server_ids[m], int(r), float(excess[m, r])) for m, r in over),
        ineligible=tuple((problem.user_ids[i], problem.server_ids[m], int(n[i, m])) for i, m in bad),
    )


# ---------------------------------------------------------------------------------------------
# sharing incentive


@dataclass(frozen=True)
class Shortfall:
    """A user below its guarantee: it runs ``tasks``, its slice alone would run ``guarantee``."""

    user: str
    tasks: int
    guarantee: int

    @property
    def shortfall(self) -> int:
        return self.guarantee - self.tasks


@dataclass(frozen=True)
class SharingIncentive:
    """SI (Def. 1) against the equal, weighted partition: every user runs at least what its
    slice of every server it may use would run. ``guarantee`` and ``tasks`` are per user."""

    holds: bool
    guarantee: tuple[int, ...]
    tasks: tuple[int, ...]
    below: tuple[Shortfall, ...]

    @property
    def up_to_one_task(self) -> bool:
        """No user more than one task below its guarantee (whole tasks on servers shared by
        first fit may leave a user one short of what its slice alone would run)."""
        return all(b.shortfall <= 1 for b in self.below)


def sharing_incentive(problem: Problem, placed: np.ndarray) -> SharingIncentive:
    """Each user i must run at least Σ_{m: p_im = 1} ⌊min_{r: d_ir > 0} (s_i C_mr) / d_ir⌋
    tasks, where s_i = w_i / Σ_j w_j is its slice of every server (1/n with all weights 1).

    Wang et al. allow any dedicated pool (Def. 1); this uses the classic one, an equal (here
    weighted) share of every server, cut per server as their Thm 1's pools are. Thm 1 is for
    divisible tasks; tasks are indivisible here, so the guarantee is floored per server: a
    slice too small for one whole task on a server guarantees nothing there (fig. 3's users
    with 3/7 of a 3-CPU machine are guaranteed 0 tasks)."""
    n = _as_placed(problem, placed)
    w = problem.weight
    slice_ = w / w.sum() if len(w) else w
    per = tasks_per_server(problem.capacity, problem.demand, divisible=True)  # (U, S)
    guarantee = (_floor(per * slice_[:, None]) * problem.eligible).sum(axis=1).astype(np.int64)
    tasks = (n * problem.eligible).sum(axis=1)
    below = tuple(
        Shortfall(problem.user_ids[i], int(tasks[i]), int(guarantee[i])) for i in np.flatnonzero(tasks < guarantee)
    )
    return SharingIncentive(not below, tuple(int(g) for g in guarantee), tuple(int(t) for t in tasks), below)


# ---------------------------------------------------------------------------------------------
# envy-freeness


@dataclass(frozen=True)
class Envy:
    """``user`` runs ``tasks``; with ``envied``'s resources (where they lie) it would run
    ``tasks_with_theirs``; weights ``weight`` and ``envied_weight``."""

    user: str
    envied: str
    tasks: int
    tasks_with_theirs: int
    weight: float = 1.0
    envied_weight: float = 1.0


@dataclass(frozen=True)
class EnvyFreeness:
    """EF (Def. 3): no envious pair. Whole tasks make exact envy-freeness rare (a user one
    task short of another's bundle envies it), so ``up_to_one_task`` says whether every
    envious user would still envy after gaining one task of its own: (n_i + 1) / w_i
    >= n_{i<->j} / w_j (the discrete relaxation, "envy-free up to one task")."""

    holds: bool
    envious: tuple[Envy, ...]

    @property
    def up_to_one_task(self) -> bool:
        return all((e.tasks + 1) * e.envied_weight >= e.tasks_with_theirs * e.weight * (1 - SHARE_TIE_TOLERANCE) for e in self.envious)


def envy_freeness(problem: Problem, placed: np.ndarray) -> EnvyFreeness:
    """User i envies j if n_{i<->j} / w_j > n_i / w_i (Def. 3, n_i >= (w_i/w_j) n_{i<->j};
    with weights 1, if i would run more tasks with j's bundle than with its own).

    n_{i<->j}: j's bundle stays where it is, A_jm = placed[j, m] d_j on each server m; i can use
    only the servers it may run on, and runs ⌊min_{r: d_ir > 0} A_jmr / d_ir⌋ whole tasks on
    each. Since A_jm is a multiple of d_j, that is ⌊placed[j, m] k_ij⌋ with
    k_ij = min_r d_jr / d_ir, so all pairs cost O(U² S) after an O(U² R) table.
    Compared with a relative tolerance (SHARE_TIE_TOLERANCE)."""
    n = _as_placed(problem, placed).astype(np.float64)
    users, w = problem.user_ids, problem.weight
    k = _ratio(problem.demand, problem.demand)  # k[i, j]: tasks of i in one task of j
    own = (n * problem.eligible).sum(axis=1)
    envious: list[Envy] = []
    for i in range(len(users)):
        theirs = (_floor(n * k[i][:, None]) * problem.eligible[i][None, :]).sum(axis=1)  # (U,)
        lhs, rhs = theirs * w[i], own[i] * w
        hit = lhs > rhs + SHARE_TIE_TOLERANCE * np.maximum(rhs, 1.0)
        hit[i] = False
        envious.extend(
            Envy(users[i], users[j], int(own[i]), int(theirs[j]), float(w[i]), float(w[j])) for j in np.flatnonzero(hit)
        )
    return EnvyFreeness(not envious, tuple(envious))


# ---------------------------------------------------------------------------------------------
# Pareto efficiency


@dataclass(frozen=True)
class ParetoEfficiency:
    """PO (Def. 4) with reallocation allowed. ``efficient`` is None when unknown; ``reason``
    says how the verdict was reached (or why there is none). ``gainer`` is a user that can
    gain a task while nobody loses one (with False): the first such user in order when
    ``gainer_is_first``, else the first one found before the time ran out. ``tasks`` is the
    allocation's total, ``best_tasks`` the most a reallocation was shown to run (None if no
    programme was solved), ``variables`` the integer programme's size."""

    efficient: bool | None
    reason: str
    gainer: str | None
    gainer_is_first: bool
    tasks: int
    best_tasks: int | None
    variables: int
    seconds: float
    #: no user's next task fits in what is free on a server it may use: nobody gains
    #: without moving a task (non-wastefulness; what greedy allocators guarantee at the end)
    in_place: bool = True


class _Programme:
    """The integer programme of :func:`pareto_efficiency`: one integer n_im >= 0 per eligible
    (user, server) where one task fits on the empty server; capacity rows
    Σ_i n_im d_ir / C_mr <= 1 (+ the fit tolerance; scaled, so HiGHS's absolute tolerance is
    relative to the server) and one row Σ_m n_im per user, whose lower bounds the caller sets."""

    def __init__(self, problem: Problem) -> None:
        from scipy.sparse import coo_matrix

        self.problem = problem
        U, S = problem.eligible.shape
        R = problem.capacity.shape[1]
        fit = tasks_per_server(problem.capacity, problem.demand)
        self.users, self.servers = np.nonzero(problem.eligible & (fit >= 1))
        self.size = len(self.users)
        self.upper = fit[self.users, self.servers]
        cap = problem.capacity
        scale = np.where(cap > 0, cap, 1.0)  # (S, R)
        coef = (problem.demand[self.users, :] / scale[self.servers, :]).ravel()  # (V * R,)
        rows = (self.servers[:, None] * R + np.arange(R)[None, :]).ravel()
        cols = np.repeat(np.arange(self.size), R)
        keep = coef > 0
        self.cap_rows = coo_matrix((coef[keep], (rows[keep], cols[keep])), shape=(S * R, self.size)).tocsr()
        self.cap_upper = ((cap + FIT_TOLERANCE * np.maximum(cap, 1.0)) / scale).ravel()
        self.user_rows = coo_matrix((np.ones(self.size), (self.users, np.arange(self.size))), shape=(U, self.size)).tocsr()

    def solve(self, lower: np.ndarray, maximise: bool, seconds: float, nodes: int | None = None) -> tuple[int, np.ndarray | None, float | None]:
        """HiGHS with per-user totals >= ``lower``, maximising the total or only finding a
        feasible point: (scipy's status: 0 solved, 1 time limit, 2 infeasible, or -1 when the
        solution, rounded, overfills a server beyond the fit tolerance; the per-user
        totals of the best solution, None if none; the bound on the total, None if unknown)."""
        from scipy.optimize import Bounds, LinearConstraint, milp

        res = milp(
            -np.ones(self.size) if maximise else np.zeros(self.size),
            integrality=np.ones(self.size),
            bounds=Bounds(np.zeros(self.size), self.upper),
            constraints=[
                LinearConstraint(self.cap_rows, -np.inf, self.cap_upper),
                LinearConstraint(self.user_rows, lower, np.inf),
            ],
            options={"time_limit": max(seconds, 1e-3), "mip_rel_gap": 0.0, **({"node_limit": nodes} if nodes is not None else {})},
        )
        bound = None if not maximise or res.mip_dual_bound is None else -float(res.mip_dual_bound)
        if res.x is None:
            return int(res.status), None, bound
        x = np.round(res.x).astype(np.int64)
        placed = np.zeros(self.problem.eligible.shape, dtype=np.int64)
        placed[self.users, self.servers] = x
        if not feasibility(self.problem, placed).feasible:  # HiGHS's own tolerance is 1e-6
            return -1, None, bound
        return int(res.status), placed.sum(axis=1), bound


def _fits_residual(problem: Problem, n: np.ndarray) -> np.ndarray:
    """users x servers: does one more task of i fit in what ``n`` leaves free on m, where i may run?"""
    free = problem.capacity - n.T.astype(np.float64) @ problem.demand  # (S, R)
    slack = FIT_TOLERANCE * np.maximum(problem.capacity, 1.0)
    fits = np.all(problem.demand[:, None, :] <= (free + slack)[None, :, :], axis=2)
    return fits & problem.eligible


def pareto_efficiency(
    problem: Problem, placed: np.ndarray, time_limit: float = 2.0, max_variables: int = 200_000, node_limit: int | None = None
) -> ParetoEfficiency:
    """Can some user run one more task with no user running fewer, tasks moved if need be?

    First the cheap test: a user whose next task fits in what is left on a server it may use
    can gain at once (False, no programme). Otherwise the integer programme (scipy.optimize.milp,
    HiGHS): n_im >= 0 integer where i may run on m; Σ_i n_im d_ir <= C_mr; Σ_m n_im >= n_i;
    maximise Σ n_im. The allocation is efficient iff the optimum is Σ n_i. Tasks may move
    between servers (a reallocation, Def. 4), so an allocation where nothing more fits in
    place may still be inefficient.

    None ("unknown") when the programme has more than ``max_variables`` variables, when
    HiGHS has neither proved nor refuted a gain after ``time_limit`` seconds (a better
    incumbent or a bound below Σ n_i + 1 found in time still decides), or when the
    allocation itself does not fit. ``time_limit`` bounds the whole call, the search for the
    first user that can gain included: with False, users are tried in order (the cheap test,
    the programme's solution, else a feasibility programme with n_i + 1 for that user).
    ``node_limit`` bounds each programme's branch-and-bound nodes instead: a bound on the work
    that, unlike a time limit, gives the same verdict on every machine (a run's audit)."""
    start = time.perf_counter()
    n = _as_placed(problem, placed)
    total = int(n.sum())
    tasks = n.sum(axis=1)
    users = problem.user_ids

    def verdict(efficient: bool | None, reason: str, gainer: int | None = None, first: bool = False,
                best: int | None = None, variables: int = 0) -> ParetoEfficiency:
        return ParetoEfficiency(efficient, reason, None if gainer is None else users[gainer], first,
                                total, best, variables, time.perf_counter() - start, in_place)

    in_place = True
    if not feasibility(problem, n).feasible:
        return verdict(None, "unknown: the allocation itself does not fit (see feasibility)")
    fits = _fits_residual(problem, n).any(axis=1)
    in_place = not fits.any()
    first_fit = int(np.argmax(fits)) if fits.any() else None
    fits_here = "'s next task fits in the free resources of a server it may use"
    if first_fit == 0:
        return verdict(False, users[0] + fits_here, 0, True)
    variables = int((problem.eligible & (tasks_per_server(problem.capacity, problem.demand) >= 1)).sum())
    if variables > max_variables:
        if first_fit is not None:
            return verdict(False, f"{users[first_fit]}{fits_here} (earlier users not tried: "
                           f"{variables} variables > the cap of {max_variables})", first_fit, False, variables=variables)
        return verdict(None, f"unknown: {variables} variables > the cap of {max_variables}", variables=variables)

    if variables == 0:  # no task of anyone fits on any server it may use
        return verdict(True, "nobody can run a task anywhere")
    try:
        import scipy.optimize  # noqa: F401  (HiGHS; imported where used)
    except ImportError:
        return verdict(None, "unknown: scipy is not installed (the integer programme needs its HiGHS)", variables=variables)
    prog = _Programme(problem)
    best: int | None = None
    if first_fit is not None:
        known, how = first_fit, fits_here
    else:
        status, got, bound = prog.solve(tasks.astype(np.float64), True, time_limit - (time.perf_counter() - start), node_limit)
        if got is not None:
            best = int(got.sum())
        if best is not None and best > total:
            known = int(np.argmax(got > tasks))
            how = f" gains in a reallocation running {best - total} more task(s)"
        elif status == 0 and best is not None:
            return verdict(True, "no reallocation runs more tasks (integer optimum = the current total)",
                           best=best, variables=variables)
        elif bound is not None and bound < total + 1 - 1e-6:
            return verdict(True, "no reallocation runs more tasks (HiGHS's bound when time ran out)",
                           best=best, variables=variables)
        else:
            why = {1: f"time limit of {time_limit:g} s" + (f" or node limit of {node_limit}" if node_limit is not None else "") + " reached", -1: "HiGHS's solution overfills a server beyond the fit tolerance"}.get(
                status, f"HiGHS status {status}")
            return verdict(None, f"unknown: {why}, no gain found or refuted", best=best, variables=variables)
    # users before ``known``: can each gain? one feasibility programme each (n_i + 1, others n_j)
    first = True
    for i in range(known):
        left = time_limit - (time.perf_counter() - start)
        if left <= 0:
            first = False
            break
        lower = tasks.astype(np.float64)
        lower[i] += 1
        status, got, _ = prog.solve(lower, False, left, node_limit)
        if got is not None:
            known, how = i, " can run one more task with nobody running fewer (tasks moved)"
            break
        if status != 2:  # neither found nor proved infeasible in time: i is undecided
            first = False
            break
    return verdict(False, users[known] + how, known, first, best, variables)


# ---------------------------------------------------------------------------------------------
# strategy-proofness, probed by misreports


@dataclass(frozen=True)
class MisreportGain:
    """``user`` runs ``lying_tasks`` real tasks when it reports ``lie``, ``truthful_tasks`` when honest."""

    user: str
    lie: str
    truthful_tasks: int
    lying_tasks: int


@dataclass(frozen=True)
class MisreportGains:
    """SP probed (Def. 2): ``lies`` misreports tried, those that gained. ``holds`` means no
    tried lie gained, not that no lie can."""

    holds: bool
    lies: int
    gains: tuple[MisreportGain, ...]


def _lie_name(f: np.ndarray) -> str:
    if f.ndim == 0:
        return f"demand x{float(f):g}"
    return "demand x(" + ", ".join(f"{float(x):g}" for x in f) + ")"


def _lies(problem: Problem, factors: Sequence[float | Sequence[float]], claim_servers: bool) -> Iterator[tuple[int, str, np.ndarray, Problem]]:
    """(liar, lie, per-resource factor, the reported problem), user by user; arrays copied."""
    R = problem.demand.shape[1]
    scales = []
    for f in factors:
        fa = np.asarray(f, dtype=np.float64)
        if fa.shape not in ((), (R,)) or not np.all(fa > 0) or not np.all(np.isfinite(fa)):
            raise ValueError(f"a demand factor is a positive number or one per resource ({R}), got {f!r}")
        scales.append((_lie_name(fa), np.broadcast_to(fa, (R,))))

    def reported(demand: np.ndarray, eligible: np.ndarray) -> Problem:
        return dataclasses.replace(problem, capacity=problem.capacity.copy(), demand=demand, eligible=eligible,
                                   weight=problem.weight.copy())

    for i in range(len(problem.user_ids)):
        for name, fa in scales:
            demand = problem.demand.copy()
            demand[i] = demand[i] * fa
            yield i, name, fa, reported(demand, problem.eligible.copy())
        if claim_servers and not problem.eligible[i].all():
            eligible = problem.eligible.copy()
            eligible[i] = True
            yield i, "claims every server", np.ones(R), reported(problem.demand.copy(), eligible)


def misreport_gains(
    problem: Problem,
    allocate: Allocator,
    factors: Sequence[float | Sequence[float]] = (2.0,),
    claim_servers: bool = True,
) -> MisreportGains:
    """Run ``allocate`` on the truth, then on each lie of each user in turn (everyone else
    truthful), and report the lies after which the liar runs more real tasks.

    Lies: demand f·d_i for each factor f (a number, or one per resource), and, with
    ``claim_servers``, a claim of every server (skipped for a user that may already use all).
    One lie at a time: a scaled demand with a false claim together is not tried.

    Real tasks after a lie: the liar keeps the resources it was given, placed[i, m]·f·d_i on
    each server m it may really use, and runs ⌊min_{r: d_ir > 0} placed[i, m] f_r⌋ whole tasks
    there (Leontief, resources pooled per server: half-size slots make whole tasks two by two);
    tasks placed on a server it cannot really use are lost to it. Whether a liar accepts such
    a placement or declines it (as a Mesos framework declines an offer it cannot use) is the
    policy's business: ``allocate`` sees only the reported problem, so a policy that models
    declining users closes over the true eligibility itself."""
    truth = _as_placed(problem, allocate(problem))
    honest = (truth * problem.eligible).sum(axis=1)
    demanded = problem.demand > 0
    gains: list[MisreportGain] = []
    tried = 0
    for i, name, fa, lying in _lies(problem, factors, claim_servers):
        tried += 1
        got = _as_placed(problem, allocate(lying))[i].astype(np.float64)
        per_task = float(fa[demanded[i]].min()) if demanded[i].any() else 0.0  # real tasks in one reported task
        real = int((_floor(got * per_task) * problem.eligible[i]).sum())
        if real > honest[i]:
            gains.append(MisreportGain(problem.user_ids[i], name, int(honest[i]), real))
    return MisreportGains(not gains, tried, tuple(gains))


# ---------------------------------------------------------------------------------------------
# the audit


@dataclass(frozen=True)
class Audit:
    """The four checks of one allocation (``misreports`` None when no policy was given)."""

    feasibility: Feasibility
    sharing: SharingIncentive
    envy: EnvyFreeness
    pareto: ParetoEfficiency
    misreports: MisreportGains | None

    def to_dict(self) -> dict[str, Any]:
        """Verdicts and evidence as JSON-friendly values (user and server ids, numbers)."""
        p, m = self.pareto, self.misreports
        return {
            "feasible": self.feasibility.feasible,
            "sharing_incentive": self.sharing.holds,
            "sharing_incentive_up_to_one_task": self.sharing.up_to_one_task,
            "envy_free": self.envy.holds,
            "envy_free_up_to_one_task": self.envy.up_to_one_task,
            "pareto_efficient": p.efficient,
            "pareto_efficient_in_place": p.in_place,
            "strategy_proof": None if m is None else m.holds,
            "over_capacity": [{"server": s, "resource": r, "excess": e} for s, r, e in self.feasibility.over_capacity],
            "ineligible": [{"user": u, "server": s, "tasks": t} for u, s, t in self.feasibility.ineligible],
            "below_guarantee": [
                {"user": b.user, "tasks": b.tasks, "guarantee": b.guarantee, "shortfall": b.shortfall} for b in self.sharing.below
            ],
            "envious": [
                {"user": e.user, "envies": e.envied, "tasks": e.tasks, "tasks_with_theirs": e.tasks_with_theirs,
                 "weight": e.weight, "envied_weight": e.envied_weight}
                for e in self.envy.envious
            ],
            "pareto": {
                "reason": p.reason, "gainer": p.gainer, "gainer_is_first": p.gainer_is_first, "tasks": p.tasks,
                "best_tasks": p.best_tasks, "variables": p.variables, "seconds": round(p.seconds, 6),
            },
            "misreports_tried": None if m is None else m.lies,
            "misreport_gains": [] if m is None else [
                {"user": g.user, "lie": g.lie, "truthful_tasks": g.truthful_tasks, "lying_tasks": g.lying_tasks} for g in m.gains
            ],
        }

    def evidence_lines(self) -> list[str]:
        """The witnesses behind each failed check, one a line (a CLI's detail)."""
        lines = [f"over capacity: {s} resource {r} by {e:g}" for s, r, e in self.feasibility.over_capacity]
        lines += [f"not eligible: {u} runs {t} on {s}" for u, s, t in self.feasibility.ineligible]
        lines += [f"sharing incentive: {b.user} runs {b.tasks} < {b.guarantee}, what its slice of every server it may use runs" for b in self.sharing.below]
        lines += [f"envy: {e.user} runs {e.tasks}; with {e.envied}'s bundle it would run {e.tasks_with_theirs}" for e in self.envy.envious]
        if self.pareto.efficient is not True:
            lines.append(f"Pareto: {self.pareto.reason}")
        if self.misreports is not None:
            lines += [f"strategy-proofness: {g.user} lying ({g.lie}) runs {g.lying_tasks} true tasks, {g.truthful_tasks} truthfully" for g in self.misreports.gains]
        return lines

    def summary_line(self) -> str:
        """One line for a CLI: each property ok, FAIL with its first witness, or unknown."""
        parts = []
        if not self.feasibility.feasible:
            parts.append(f"INFEASIBLE ({len(self.feasibility.over_capacity)} over capacity, "
                         f"{len(self.feasibility.ineligible)} ineligible)")
        b = self.sharing.below
        parts.append("SI ok" if not b else
                     f"SI FAIL{' (ok up to one task)' if self.sharing.up_to_one_task else ''} ({len(b)} below guarantee, e.g. {b[0].user} {b[0].tasks} < {b[0].guarantee})")
        e = self.envy.envious
        one = " (ok up to one task)" if self.envy.up_to_one_task else ""
        parts.append("EF ok" if not e else
                     f"EF FAIL{one} ({len(e)} envious pairs, e.g. {e[0].user} envies {e[0].envied}: "
                     f"{e[0].tasks_with_theirs} with theirs > {e[0].tasks})")
        p = self.pareto
        here = " (ok in place)" if p.in_place else ""
        if p.efficient is None:
            parts.append(f"PO unknown{here} ({p.reason.removeprefix('unknown: ')})")
        else:
            parts.append("PO ok" if p.efficient else f"PO FAIL{here} ({p.gainer} can gain a task)")
        m = self.misreports
        if m is None:
            parts.append("SP not probed")
        else:
            parts.append(f"SP ok ({m.lies} lies tried)" if m.holds else
                         f"SP FAIL ({m.gains[0].user} '{m.gains[0].lie}': {m.gains[0].truthful_tasks} -> "
                         f"{m.gains[0].lying_tasks} tasks)")
        return " | ".join(parts)


def audit(
    problem: Problem,
    placed: np.ndarray,
    allocate: Allocator | None = None,
    *,
    factors: Sequence[float | Sequence[float]] = (2.0,),
    claim_servers: bool = True,
    time_limit: float = 2.0,
    max_variables: int = 200_000,
    node_limit: int | None = None,
) -> Audit:
    """All checks of ``placed``; the misreports only when the policy ``allocate`` is given
    (it is run once on the truth and once per lie, so it should reproduce ``placed``)."""
    return Audit(
        feasibility=feasibility(problem, placed),
        sharing=sharing_incentive(problem, placed),
        envy=envy_freeness(problem, placed),
        pareto=pareto_efficiency(problem, placed, time_limit, max_variables, node_limit),
        misreports=None if allocate is None else misreport_gains(problem, allocate, factors, claim_servers),
    )
