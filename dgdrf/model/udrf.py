"""UDRF offline (Tahir et al., fig. 3): fairness for users with several jobs on machine classes.

Tahir et al. see a cluster as machine classes m, each one divisible pool of K resources
c_m. A user u has jobs j; job j needs R^j (class x resource: the sum of its tasks' demands
on the classes they run on), all of it or nothing (§II-B2), and runs x_j times. The user
holds A^u = sum_j x_j R^j (eq. 5) and its share is s_u = max_(m,k) A^u_mk / c_mk (eq. 12).
Users that share no (class, resource) pair, directly or through others, do not affect one
another: the RDUCs, connected components of the user dependency graph (Defs. 1-2), are
each filled on their own (one slave scheduler each, fig. 3 lines 01-05).

Fig. 3's listing is garbled (DIGEST 4e.1). The reading here is DIGEST 4a's, the one that
reproduces every number of §III-B (docs/ORACLES.md example 12):

- per RDUC, a level s rises for every active user together;
- within a user, job counts are max-min fair on x_j subject to every share of u being at
  most s (its jobs rise together; a job stops when a pair it uses reaches s c_mk, the
  others go on: lines 14-15, 19). These constraints are homogeneous in s, so the user's
  counts are s x̄^u, x̄^u being that allocation at s = 1 (water-filling, closed form);
- when a (class, resource) pair saturates, EVERY active user with demand on it is frozen
  (line 25), even if its other jobs could still grow elsewhere. So UDRF is not work
  conserving (DIGEST 4e.2): on example 12 hadoop stays half idle.

Every step is linear in s, so the next saturation is found in closed form, in exact
rational arithmetic (fractions.Fraction of the inputs): the example's 28, 8, 10 and levels
1/2, 5/6 come out exactly. A pair of zero capacity that a user demands is saturated from
the start, so that user is frozen at level 0.

The DRF baseline of fig. 2 (§II-A) runs on the same engine: classes become resource types
(|M| x K of them), each user one bundle of all its jobs with equal counts, divisible
progressive filling on the dominant share, a user frozen when a pair it uses saturates.

No weights: the paper has none. Scenarios (``udrf_from_scenario``) give classes as a
server attribute ``class`` and each job one class by ``requires = {class = "..."}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from dgdrf.errors import ScenarioError
from dgdrf.model.scenario import Scenario

#: an input quantity: capacities and demands (kept exact as given, as Fractions inside)
Number = int | float | Fraction
#: the server attribute that names a server's machine class
CLASS_ATTRIBUTE = "class"

Pair = tuple[str, int]  # (class, resource index)


@dataclass(frozen=True)
class UdrfJob:
    """One job: per machine class it uses, the demand vector R^j_m over the K resources
    (the sum of its tasks' demands on that class); all of it runs, or none."""

    id: str
    demand: Mapping[str, Sequence[Number]]


@dataclass(frozen=True)
class UdrfUser:
    """A user and its jobs (in order)."""

    id: str
    jobs: tuple[UdrfJob, ...]


@dataclass(frozen=True, eq=False)
class UdrfInstance:
    """Machine classes (name -> capacity over ``resources``, each class one divisible
    pool) and users with jobs. Checked on construction (ValueError names the part)."""

    resources: tuple[str, ...]
    classes: Mapping[str, Sequence[Number]]
    users: tuple[UdrfUser, ...]

    def __post_init__(self) -> None:
        k = len(self.resources)
        for name, cap in self.classes.items():
            if len(cap) != k or any(c < 0 for c in cap):
                raise ValueError(f"class {name!r}: capacity must be {k} numbers >= 0, got {list(cap)}")
        seen: set[str] = set()
        for u in self.users:
            if u.id in seen:
                raise ValueError(f"user {u.id!r} appears twice")
            seen.add(u.id)
            if not u.jobs:
                raise ValueError(f"user {u.id!r} has no job")
            if len({j.id for j in u.jobs}) != len(u.jobs):
                raise ValueError(f"user {u.id!r}: two jobs have the same id")
            for j in u.jobs:
                for cls, vec in j.demand.items():
                    if cls not in self.classes:
                        raise ValueError(f"user {u.id!r} job {j.id!r}: no class {cls!r}")
                    if len(vec) != k or any(d < 0 for d in vec):
                        raise ValueError(f"user {u.id!r} job {j.id!r}: demand on {cls!r} must be {k} numbers >= 0, got {list(vec)}")
                if not any(d > 0 for vec in j.demand.values() for d in vec):
                    raise ValueError(f"user {u.id!r} job {j.id!r} demands nothing")

    def capacity(self) -> dict[Pair, Fraction]:
        """c_mk for every (class, resource) pair, exact."""
        return {(m, k): Fraction(c) for m, cap in self.classes.items() for k, c in enumerate(cap)}


@dataclass(frozen=True)
class UdrfResult:
    """Per user: x_j per job (floats of exact rationals), the share s_u of eq. 12, the level
    at which it froze, and A^u per class it uses; the RDUCs the users were filled in."""

    jobs: dict[str, dict[str, float]]
    shares: dict[str, float]
    levels: dict[str, float]
    use: dict[str, dict[str, tuple[float, ...]]]
    rducs: list[list[str]]


def _demands(job: UdrfJob) -> dict[Pair, Fraction]:
    """R^j as exact (class, resource) -> amount, positive entries only."""
    return {(m, k): Fraction(d) for m, vec in job.demand.items() for k, d in enumerate(vec) if d > 0}


def _pairs(user: UdrfUser) -> set[Pair]:
    """P_u (eq. 2): the pairs the user demands."""
    return {p for j in user.jobs for p in _demands(j)}


def rducs(instance: UdrfInstance) -> list[list[str]]:
    """The RDUCs (Def. 2): connected components of the user dependency graph, an edge
    u-v iff P_u and P_v meet (Def. 1); users in instance order, components ordered by
    their first user."""
    parent = list(range(len(instance.users)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[Pair, int] = {}
    for i, u in enumerate(instance.users):
        for p in _pairs(u):
            if p in owner:
                a, b = root(owner[p]), root(i)
                parent[max(a, b)] = min(a, b)  # the root is the component's first user
            else:
                owner[p] = i
    groups: dict[int, list[str]] = {}
    for i, u in enumerate(instance.users):
        groups.setdefault(root(i), []).append(u.id)
    return [groups[r] for r in sorted(groups)]


def _within_user(user: UdrfUser, cap: Mapping[Pair, Fraction]) -> list[Fraction]:
    """x̄^u: the user's job counts, max-min fair on x_j subject to A^u_mk <= c_mk (its
    shares <= 1), by water-filling: all its jobs rise together, a job stops when a pair
    it uses is full, the others go on. At level s the counts are s times these."""
    need = [_demands(j) for j in user.jobs]
    x = [Fraction(0)] * len(need)
    rising = {i for i, d in enumerate(need) if all(cap[p] > 0 for p in d)}
    while rising:
        used: dict[Pair, Fraction] = {}
        slope: dict[Pair, Fraction] = {}
        for i, d in enumerate(need):
            for p, r in d.items():
                used[p] = used.get(p, Fraction(0)) + x[i] * r
                if i in rising:
                    slope[p] = slope.get(p, Fraction(0)) + r
        step = min((cap[p] - used[p]) / s for p, s in slope.items())
        full = {p for p, s in slope.items() if used[p] + step * s == cap[p]}
        for i in rising:
            x[i] += step
        rising = {i for i in rising if not full.intersection(need[i])}
    return x


def _bundle(user: UdrfUser, cap: Mapping[Pair, Fraction]) -> list[Fraction]:
    """DRF's counts at dominant share 1: every job the same count, 1 / max_(m,k) b_mk / c_mk
    over the bundle b = sum_j R^j (fig. 2); 0 if it demands a pair of no capacity."""
    b: dict[Pair, Fraction] = {}
    for j in user.jobs:
        for p, r in _demands(j).items():
            b[p] = b.get(p, Fraction(0)) + r
    if any(cap[p] == 0 for p in b):
        return [Fraction(0)] * len(user.jobs)
    y = 1 / max(r / cap[p] for p, r in b.items())
    return [y] * len(user.jobs)


Direction = Callable[[UdrfUser, Mapping[Pair, Fraction]], list[Fraction]]


def _fill(instance: UdrfInstance, direction: Direction) -> UdrfResult:
    """Progressive filling per RDUC: each active user's counts are s times its
    ``direction``; the level s rises to the next pair's saturation (closed form), and
    every active user demanding a saturated pair is frozen (fig. 3 line 25)."""
    cap = instance.capacity()
    users = {u.id: u for u in instance.users}
    counts: dict[str, list[Fraction]] = {}
    level_of: dict[str, Fraction] = {}
    groups = rducs(instance)
    for group in groups:
        unit = {uid: direction(users[uid], cap) for uid in group}
        need = {uid: [_demands(j) for j in users[uid].jobs] for uid in group}
        pairs = {uid: _pairs(users[uid]) for uid in group}
        # per unit of level, what an active user uses of each pair
        rate: dict[str, dict[Pair, Fraction]] = {}
        for uid in group:
            r: dict[Pair, Fraction] = {}
            for x, d in zip(unit[uid], need[uid]):
                for p, a in d.items():
                    r[p] = r.get(p, Fraction(0)) + x * a
            rate[uid] = r
        frozen_use: dict[Pair, Fraction] = {}
        # a pair of no capacity is saturated from the start: its users freeze at level 0
        active = [uid for uid in group if not any(cap[p] == 0 for p in pairs[uid]) and any(v > 0 for v in rate[uid].values())]
        for uid in group:
            if uid not in active:
                counts[uid], level_of[uid] = [Fraction(0)] * len(unit[uid]), Fraction(0)
        while active:
            slope: dict[Pair, Fraction] = {}
            for uid in active:
                for p, v in rate[uid].items():
                    if v > 0:
                        slope[p] = slope.get(p, Fraction(0)) + v
            level = min((cap[p] - frozen_use.get(p, Fraction(0))) / v for p, v in slope.items())
            full = {p for p, v in slope.items() if frozen_use.get(p, Fraction(0)) + level * v == cap[p]}
            stuck = [uid for uid in active if full & pairs[uid]]
            assert stuck, "a saturated pair has an active user demanding it"
            for uid in stuck:
                counts[uid] = [level * x for x in unit[uid]]
                level_of[uid] = level
                for p, v in rate[uid].items():
                    frozen_use[p] = frozen_use.get(p, Fraction(0)) + level * v
            active = [uid for uid in active if uid not in stuck]
    return _result(instance, cap, counts, level_of, groups)


def _result(instance: UdrfInstance, cap: Mapping[Pair, Fraction], counts: Mapping[str, list[Fraction]], level_of: Mapping[str, Fraction], groups: list[list[str]]) -> UdrfResult:
    jobs: dict[str, dict[str, float]] = {}
    shares: dict[str, float] = {}
    use: dict[str, dict[str, tuple[float, ...]]] = {}
    k = len(instance.resources)
    for u in instance.users:
        alloc: dict[Pair, Fraction] = {}
        for x, j in zip(counts[u.id], u.jobs):
            for p, r in _demands(j).items():
                alloc[p] = alloc.get(p, Fraction(0)) + x * r
        jobs[u.id] = {j.id: float(x) for x, j in zip(counts[u.id], u.jobs)}
        shares[u.id] = float(max((a / cap[p] for p, a in alloc.items() if cap[p] > 0), default=Fraction(0)))  # eq. 12
        classes = sorted({m for m, _ in alloc}, key=list(instance.classes).index)
        use[u.id] = {m: tuple(float(alloc.get((m, r), Fraction(0))) for r in range(k)) for m in classes}
    return UdrfResult(jobs=jobs, shares=shares, levels={u.id: float(level_of[u.id]) for u in instance.users}, use=use, rducs=groups)


def udrf_offline(instance: UdrfInstance) -> UdrfResult:
    """Offline UDRF (Tahir et al. fig. 3, DIGEST 4a's reading): per RDUC, progressive
    filling of the users' shares (eq. 12), each user's jobs max-min fair within it, a
    user frozen when any pair it demands saturates."""
    return _fill(instance, _within_user)


def udrf_drf_baseline(instance: UdrfInstance) -> UdrfResult:
    """The DRF baseline of Tahir et al. fig. 2: the |M| x K (class, resource) pairs as
    resource types, each user one bundle of all its jobs with equal counts, divisible
    progressive filling on the dominant share (RDUCs share no pair, so filling them apart
    is DRF's global filling)."""
    return _fill(instance, _bundle)


def udrf_from_scenario(scenario: Scenario, source: str | None = None) -> UdrfInstance:
    """The UDRF instance of a scenario whose servers carry the attribute ``class`` (a
    class's capacity is the sum of its servers'; servers without one belong to no class)
    and each of whose jobs requires exactly one class (``requires = {class = "hadoop"}``)
    and nothing else: each job is a one-class job with R^j = its task's demand (its task
    count, durations and arrival are not part of this static model). A job of parts
    (model/gangs.py) is a multi-class job: each part requires its one class, and R^j_m
    sums count x demand over the parts in class m (Tahir et al. §II-A's complex job).

    Scenario users with a ``tenant`` are that tenant's job streams: one UDRF user whose
    jobs are theirs (named by the stream's id, or ``stream/job``).

    ScenarioError names the user and job whose class is missing or ambiguous, that adds
    other constraints, or whose class no server has; and a user with a weight (UDRF has
    none)."""
    classes: dict[str, list[float]] = {}
    for sv in scenario.servers:
        attrs = sv.attribute_map
        if CLASS_ATTRIBUTE in attrs:
            total = classes.setdefault(str(attrs[CLASS_ATTRIBUTE]), [0.0] * len(scenario.resources))
            for k, c in enumerate(sv.capacity):
                total[k] += c

    def fail(where: str, what: str) -> ScenarioError:
        return ScenarioError(f"{source or scenario.name}: {where}: {what}")  # the file, where there is one

    users: dict[str, list[UdrfJob]] = {}  # tenant -> its jobs: a scenario user with a tenant is one of its job streams
    for i, u in enumerate(scenario.users):
        if u.weight != 1.0:
            raise fail(f"users[{i}].weight", f"user {u.id!r}: UDRF (Tahir et al.) has no weights, got {u.weight:g}")
        jobs = []
        for k, job in enumerate(u.job_list):
            where = f"users[{i}].jobs[{k}]" if u.jobs else f"users[{i}]"
            who = f"user {u.id!r} job {job.id!r}"
            demand: dict[str, tuple[float, ...]] = {}
            for p, part in enumerate(job.part_list):
                at = f"{where}.parts[{p}]" if job.parts else where
                req = dict(part.constraint.requires)
                values = req.pop(CLASS_ATTRIBUTE, ())
                if len(values) != 1:
                    what = "names no machine class" if not values else f"names {len(values)} machine classes {list(values)}"
                    raise fail(f"{at}.requires", f"{who} {what}; UDRF needs exactly one: requires = {{{CLASS_ATTRIBUTE} = \"...\"}}")
                if req or part.constraint.eligible is not None:
                    raise fail(f"{at}.requires", f"{who}: a machine class is one pool, so a job may require only its class (found {part.constraint.to_json()})")
                cls = str(values[0])
                if cls not in classes:
                    raise fail(f"{at}.requires", f"{who}: no server has {CLASS_ATTRIBUTE} = {cls!r} (classes: {', '.join(sorted(classes)) or 'none'})")
                before = demand.get(cls, (0.0,) * len(part.demand))
                demand[cls] = tuple(b + part.count * d for b, d in zip(before, part.demand, strict=True))
            name = job.id if not u.tenant else u.id if len(u.job_list) == 1 else f"{u.id}/{job.id}"
            jobs.append(UdrfJob(name, demand))
        users.setdefault(u.tenant or u.id, []).extend(jobs)
    return UdrfInstance(
        resources=tuple(scenario.resources), classes={m: tuple(c) for m, c in classes.items()}, users=tuple(UdrfUser(t, tuple(js)) for t, js in users.items())
    )
