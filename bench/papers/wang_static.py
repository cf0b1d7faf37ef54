"""Wang et al.'s static examples (figs. 2a, 2b, 3, 4) as relations: the report page
bench/results/papers/wang-static.md and its raw figures (wang-static.json).

    python bench/papers/wang_static.py --out bench/results/papers

Each example under each mechanism, one table a mechanism: offline (``dgdrf oracle``:
progressive filling by LP, divisible tasks, Wang et al. alg. 1); online server offers
(``dgdrf run``), one task per offer and ``fill``; and the user-driven first fit of
``drf`` (the ORACLES convention) for contrast. Fig. 2b by the audit's misreports (the liar
declines servers it cannot use: dgdrf/misreports.py); fig. 3's topology is the DIGEST's
reconstruction (the only one its text allows). Instances: ORACLES.md examples 6, 7 and
11. The micro-benchmarks (Table II, figs. 5-7) are on wang-microbenchmark.md.

The paper prints, for figs. 2 and 3, only constrained CDRF's allocations (and that CDRF
rewards the lie and is not envy-free), and for fig. 4 TSF's: those are the counted rows.
TSF on figs. 2 and 3 and the first fit's 4/1/4 on fig. 4 are the DIGEST's and ORACLES'
derivations, shown apart and not counted.

The page is rendered from the raw figures alone (``tables(raw)``, ``render(raw)``): every
verdict and every number in an explanation comes from them; ``main`` runs the examples
and writes both.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.bench.relations import Alternative, Relation, Table, compact_json, page, write
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.misreports import offline_misreports
from dgdrf.model.audit import envy_freeness
from dgdrf.model.lp_filling import progressive_filling_lp, units
from dgdrf.model.problem import Problem, tasks_alone
from dgdrf.model.scenario import Scenario, build_scenario
from dgdrf.world import Observer

NAME = "wang-static"
COMMAND = "python bench/papers/wang_static.py --out bench/results/papers"
FIG2 = build_scenario(
    ["cpu", "mem"], [("m1", [18, 18]), ("m2", [18, 18])], [{"id": "u1", "demand": [1, 2]}, {"id": "u2", "demand": [1, 3], "eligible": ["m2"]}], name="wang-fig2"
)
FIG3 = build_scenario(
    ["cpu"],
    [("m1", [3]), ("m2", [3]), ("m3", [3])],
    [{"id": f"u{i}", "demand": [1], "eligible": e} for i, e in ((1, ["m1"]), (2, ["m1", "m2", "m3"]), (3, ["m2"]), (4, ["m2"]), (5, ["m3"]), (6, ["m3"]), (7, ["m3"]))],
    name="wang-fig3",
)
FIG4 = build_scenario(
    ["cpu", "mem"],
    [("m1", [9, 12]), ("m2", [3, 4]), ("m3", [9, 12])],
    [{"id": "u1", "demand": [1, 2], "eligible": ["m1", "m2"]}, {"id": "u2", "demand": [3, 1], "eligible": ["m2"]}, {"id": "u3", "demand": [1, 4]}],
    name="wang-fig4",
)
#: |LP total - paper's| within which an offline (divisible) total is the paper's: the LP's
#: float noise; every alternative differs by half a task or more
LP_TOL = 1e-6

OFFLINE = "offline progressive filling by LP (`dgdrf oracle`: Wang et al. alg. 1, divisible tasks)"
ONE = "server offers, one task per offer (`dgdrf run --policy tsf|cdrf`: each server offered in id order to the eligible user of lowest share whose task fits; ties to the lower id)"
FILL = "server offers with fill (`dgdrf run --policy tsf --offer-tasks fill`: the user an offer goes to keeps it while its next task fits)"
FIRST_FIT = "user-driven first fit (`dgdrf run --policy drf`: the user of lowest dominant share first, on the first server with room)"


# -- measuring -----------------------------------------------------------------------------------------
class Placements(Observer):
    """Every placement of a run, in order: (user, server)."""

    def __init__(self) -> None:
        self.seq: list[list[str]] = []

    def allocated(self, world, allocation) -> None:
        self.seq.append([allocation.user, allocation.server])


def online(scenario: Scenario, policy: str, **options: Any) -> dict[str, Any]:
    watch = Placements()
    r = run_emulation(scenario, RunConfig(policy=policy, per_server=True, **options), observers=[watch])
    if r.stop_reason != "saturated" or r.invariant_violations:
        raise SystemExit(f"{scenario.name} {policy} {options}: ended {r.stop_reason} with {r.invariant_violations[:1]}: a bug, not a result")
    return {"tasks": r.tasks, "per_server": r.per_server, "shares": r.notion_shares or r.shares, "placements": watch.seq}


def offline(scenario: Scenario, notion: str) -> dict[str, Any]:
    r = progressive_filling_lp(Problem.from_scenario(scenario), notion)
    return {"tasks": r.display_tasks(), "shares": r.shares, "units": r.units, "rounds": r.rounds}


def lie(scenario: Scenario, notion: str, user: str) -> dict[str, float]:
    """The offline allocation when ``user`` claims every server (as dgdrf/misreports.py
    reads the lie: its unit counted with the claim, its tasks still where it can run)."""
    truth = Problem.from_scenario(scenario)
    i = truth.user_ids.index(user)
    claimed = truth.eligible.copy()
    claimed[i] = True
    weight = truth.weight.copy()
    weight[i] *= units(replace(truth, eligible=claimed), notion)[i] / units(truth, notion)[i]
    return progressive_filling_lp(replace(truth, weight=weight), notion).display_tasks()


def envy(scenario: Scenario, run: dict[str, Any]) -> list[list[Any]]:
    """Who envies whom in an online run's allocation: [user, envied, its tasks, its tasks with theirs]."""
    p = Problem.from_scenario(scenario)
    placed = np.array([[run["per_server"].get(u, {}).get(s, 0) for s in p.server_ids] for u in p.user_ids])
    return [[e.user, e.envied, e.tasks, e.tasks_with_theirs] for e in envy_freeness(p, placed).envious]


def instance(scenario: Scenario) -> dict[str, Any]:
    """What the explanations read of an instance: servers in offer order, eligibility,
    h_i and M_i (whole tasks), and each user's dominant-share unit (1 / max_r d_ir / C_r)."""
    p = Problem.from_scenario(scenario)
    dominant = 1.0 / (p.demand / p.total).max(axis=1)
    return {
        "servers": list(p.server_ids),
        "eligible": {u: [s for s, ok in zip(p.server_ids, p.eligible[i], strict=True) if ok] for i, u in enumerate(p.user_ids)},
        "h": dict(zip(p.user_ids, tasks_alone(p, constrained=False).tolist(), strict=True)),
        "M": dict(zip(p.user_ids, tasks_alone(p, constrained=True).tolist(), strict=True)),
        "dominant_unit": dict(zip(p.user_ids, [round(float(x), 9) for x in dominant], strict=True)),
    }


def measure() -> dict[str, Any]:
    """Every example under every mechanism: the raw figures the page is made of."""
    raw: dict[str, Any] = {
        "fig2": {"instance": instance(FIG2), "tsf_offline": offline(FIG2, "tsf"), "cdrf_offline": offline(FIG2, "cdrf"), "tsf_one": online(FIG2, "tsf"),
                 "tsf_fill": online(FIG2, "tsf", offer_tasks="fill"), "cdrf_one": online(FIG2, "cdrf"), "drf": online(FIG2, "drf")},
        "fig2b": {n: {"misreports": offline_misreports(FIG2, n), "u2_claims_every_server": lie(FIG2, n, "u2")} for n in ("cdrf", "tsf")},
        "fig3": {"instance": instance(FIG3), "tsf_offline": offline(FIG3, "tsf"), "cdrf_offline": offline(FIG3, "cdrf"), "cdrf_one": online(FIG3, "cdrf"),
                 "tsf_one": online(FIG3, "tsf")},
        "fig4": {"instance": instance(FIG4), "tsf_offline": offline(FIG4, "tsf"), "tsf_one": online(FIG4, "tsf"), "tsf_fill": online(FIG4, "tsf", offer_tasks="fill"),
                 "drf": online(FIG4, "drf")},
    }
    raw["fig3"]["cdrf_one_envy"] = envy(FIG3, raw["fig3"]["cdrf_one"])
    raw["fig3"]["tsf_one_envy"] = envy(FIG3, raw["fig3"]["tsf_one"])
    return raw


# -- judges and formats (on what json.loads gives back) ------------------------------------------------
def totals(expected: dict[str, float], tol: float = LP_TOL):
    """The judge: the same users, each total within ``tol`` of ``expected``'s."""
    return lambda x: set(x) == set(expected) and all(abs(float(x[u]) - expected[u]) <= tol for u in expected)


def placed(per_server: dict[str, dict[str, float]]) -> dict[str, dict[str, int]]:
    """Tasks per user per server, the zeros dropped."""
    return {u: {s: int(round(n)) for s, n in d.items() if round(n)} for u, d in per_server.items()}


def where(expected: dict[str, dict[str, int]]):
    """The judge: exactly ``expected``'s tasks on each server (whole tasks)."""
    return lambda x: placed(x) == placed(expected)


def fmt(tasks: dict[str, float]) -> str:
    return " / ".join(f"{float(v):g}" for v in tasks.values())


def fmt_where(per_server: dict[str, dict[str, float]]) -> str:
    return "; ".join(f"{u} " + " + ".join(f"{n}@{s}" for s, n in d.items()) for u, d in placed(per_server).items())


def frac(x: float, limit: int = 100) -> str:
    f = Fraction(x).limit_denominator(limit)
    return f"{f.numerator}" if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def fmt_shares(shares: dict[str, float]) -> str:
    return ", ".join(frac(s) for s in shares.values())


def share(n: int, unit: float) -> str:
    """n / unit, and its lowest terms when they differ."""
    if not n:
        return "0"
    low = frac(n / unit)
    return f"{n}/{unit:g}" + ("" if low == f"{n}/{unit:g}" else f" = {low}")


# -- explanations, from the runs -----------------------------------------------------------------------
def first_departure(run: dict[str, Any], expected: dict[str, dict[str, int]]) -> int | None:
    """The index of the first placement that puts a task where ``expected`` has none."""
    for k, (u, s) in enumerate(run["placements"]):
        if not expected.get(u, {}).get(s):
            return k
    return None


def before(run: dict[str, Any], k: int) -> dict[str, int]:
    """Each user's tasks just before placement ``k``."""
    held: dict[str, int] = {}
    for u, _ in run["placements"][:k]:
        held[u] = held.get(u, 0) + 1
    return held


def offer_round(run: dict[str, Any], k: int, servers: list[str]) -> str:
    """Which round's offer placement ``k`` was, when placements 1..k+1 follow the offers in
    server order one for one (no offer placed nothing); else its number only."""
    seq = [s for _, s in run["placements"][: k + 1]]
    if seq == [servers[i % len(servers)] for i in range(k + 1)]:
        order = ", ".join(servers)
        return (f"placements 1-{k + 1} follow the offers ({order}, {order}, ...) one for one, so placement {k + 1} is round "
                f"{k // len(servers) + 1}'s offer of {seq[-1]}")
    return f"placement {k + 1} (an offer of {seq[-1]})"


def why_offers_tie(f: dict[str, Any], run: dict[str, Any], expected: dict[str, dict[str, int]], unit_name: str, unit: dict[str, float]) -> str:
    """How one task per offer departs from ``expected``: the placement, the shares then."""
    k = first_departure(run, expected)
    if k is None:
        return "every placement is one the expected allocation has"
    u, s = run["placements"][k]
    held = before(run, k)
    rivals = [v for v, servers in f["instance"]["eligible"].items() if s in servers]
    shares = {v: held.get(v, 0) / unit[v] for v in rivals}
    low = min(shares.values())
    tied = [v for v in rivals if math.isclose(shares[v], low)]
    state = " and ".join(f"{v} ({held.get(v, 0)} tasks: {unit_name} {share(held.get(v, 0), unit[v])})" for v in rivals)
    if u not in tied:
        how = f"{u} is not the lowest"
    elif len(tied) == 1:
        how = f"{u}'s is the lowest"
    else:
        how = f"{' and '.join(tied)} tie at {frac(low)}, and the tie goes to " + ("the lower id" if u == tied[0] else f"{u}, not the lower id")
    end = fmt_where(run["per_server"])
    return (f"{offer_round(run, k, f['instance']['servers'])}: of the users {s} admits, {state}; {how}: {u} takes a slot on {s}. "
            f"Tasks never end in this static run, so it keeps it: {end} ({fmt(run['tasks'])})")


def why_first_fit(f: dict[str, Any], run: dict[str, Any], expected: dict[str, dict[str, int]]) -> str:
    """How the user-driven first fit departs from ``expected``."""
    k = first_departure(run, expected)
    if k is None:
        return "every placement is one the expected allocation has"
    u, s = run["placements"][k]
    held = before(run, k)
    unit = f["instance"]["dominant_unit"]
    state = ", ".join(f"{v} {share(held.get(v, 0), unit[v])}" for v in unit)
    servers = f["instance"]["eligible"][u]
    return (f"placement {k + 1}: {u} has the lowest dominant share (tasks / unit: {state}) and goes to {s}, the first of its servers "
            f"({', '.join(servers)}) with room; it never leaves: {fmt_where(run['per_server'])} ({fmt(run['tasks'])})")


def why_runs(f: dict[str, Any], run: dict[str, Any], unit: dict[str, float]) -> str:
    """A run's placements as runs of one user on one server, in order, each with the shares
    (tasks / ``unit``) at its start of the users its server admits."""
    runs: list[list[Any]] = []
    for k, (u, s) in enumerate(run["placements"]):
        if runs and runs[-1][:2] == [u, s]:
            runs[-1][2] += 1
        else:
            runs.append([u, s, 1, before(run, k)])
    admits = {s: [u for u, servers in f["instance"]["eligible"].items() if s in servers] for s in f["instance"]["servers"]}
    return "placements in order: " + ", then ".join(
        f"{n} x {u}@{s} (shares then of the users {s} admits: " + ", ".join(f"{v} {share(held.get(v, 0), unit[v])}" for v in admits[s]) + ")"
        for u, s, n, held in runs)


def why_first_fit_all(f: dict[str, Any], run: dict[str, Any]) -> str:
    """Where each user's tasks went under the first fit, and the order users were served."""
    where_ = placed(run["per_server"])
    eligible = f["instance"]["eligible"]
    return ("each user's tasks on the first of its servers with room: " + "; ".join(
        f"{u} (may use {', '.join(eligible[u])}) " + " + ".join(f"{n}@{s}" for s, n in where_[u].items()) for u in where_)
        + "; users served, by lowest dominant share: " + " ".join(u for u, _ in run["placements"]))


# -- the relations -------------------------------------------------------------------------------------
def tables(raw: dict[str, Any]) -> list[Table]:
    f2, f2b, f3, f4 = raw["fig2"], raw["fig2b"], raw["fig3"], raw["fig4"]
    i2, i3, i4 = f2["instance"], f3["instance"], f4["instance"]
    # the paper's figures
    cdrf2 = {"u1": 12, "u2": 4}
    cdrf2_where = {"u1": {"m1": 9, "m2": 3}, "u2": {"m2": 4}}
    cdrf3 = {"u1": 1, "u2": 3, "u3": 1, "u4": 1, "u5": 1, "u6": 1, "u7": 1}
    cdrf3_where = {"u1": {"m1": 1}, "u2": {"m1": 2, "m2": 1}, "u3": {"m2": 1}, "u4": {"m2": 1}, "u5": {"m3": 1}, "u6": {"m3": 1}, "u7": {"m3": 1}}
    tsf4 = {"u1": 6, "u2": 1, "u3": 3}
    tsf4_where = {"u1": {"m1": 6}, "u2": {"m2": 1}, "u3": {"m3": 3}}
    h4 = {"u1": 14, "u2": 7, "u3": 7}
    # the DIGEST's and ORACLES' derivations
    tsf2 = {"u1": 9, "u2": 6}
    tsf2_where = {"u1": {"m1": 9}, "u2": {"m2": 6}}
    tsf3 = {"u1": 1.5, "u2": 1.5, "u3": 1.5, "u4": 1.5, "u5": 1, "u6": 1, "u7": 1}
    ff4_where = {"u1": {"m1": 4}, "u2": {"m2": 1}, "u3": {"m1": 1, "m3": 3}}

    def lie_figures(n: str) -> dict[str, float]:
        told = next(x for x in f2b[n]["misreports"] if x["user"] == "u2" and x["lie"] == "claims every server")
        return {"u1 lying": f2b[n]["u2_claims_every_server"]["u1"], "u2 truthful": told["truthful_tasks"], "u2 lying": told["lying_tasks"]}

    lie_cdrf, lie_tsf = lie_figures("cdrf"), lie_figures("tsf")
    gains = {n: [x for x in f2b[n]["misreports"] if x["gains"]] for n in ("cdrf", "tsf")}
    cd2, ts2 = f2["cdrf_offline"], f2["tsf_offline"]
    offline_rows = [
        Relation("fig. 2a", "constrained CDRF schedules 12 tasks for u1 (9 on m1, 3 on m2) and 4 for u2 (all on m2); work slowdowns equalized to 2/3", "12 / 4 (slowdown 2/3)",
                 f"{fmt(cd2['tasks'])} (slowdowns {fmt_shares(cd2['shares'])}; M = {fmt(cd2['units'])})", f"± {LP_TOL:g} a total", measured=cd2["tasks"], judge=totals(cdrf2),
                 alternative=Alternative(f"TSF's {fmt(ts2['tasks'])} on the same instance (offline)", ts2["tasks"]),
                 why="totals only: the LP's split over machines is not unique (DIGEST 1e.4); the split is checked online below"),
        Relation("fig. 2b", "u2 claims m1 too: CDRF schedules 6 tasks of u2 (on m2) and 9 of u1 (on m1), slowdown 1/2: u2 gains two tasks (not strategy-proof)",
                 "u1 9; u2 4 → 6", f"u1 {lie_cdrf['u1 lying']:g}; u2 {lie_cdrf['u2 truthful']:g} → {lie_cdrf['u2 lying']:g}", f"± {LP_TOL:g} a total",
                 measured=lie_cdrf, judge=totals({"u1 lying": 9, "u2 truthful": 4, "u2 lying": 6}),
                 alternative=Alternative(f"TSF's outcome of the same lie: u1 {lie_tsf['u1 lying']:g}; u2 {lie_tsf['u2 truthful']:g} → {lie_tsf['u2 lying']:g}", lie_tsf),
                 why="the liar's tasks still run only on m2 (it declines m1: dgdrf/misreports.py); its claim only doubles M_2 (6 → 12)"),
        Relation("fig. 3", "constrained CDRF: each user but u2 runs one task, u2 three (two on m1, one on m2); job slowdowns 1/3", "1 / 3 / 1 / 1 / 1 / 1 / 1",
                 f"{fmt(f3['cdrf_offline']['tasks'])} (slowdowns {fmt_shares(f3['cdrf_offline']['shares'])})", f"± {LP_TOL:g} a total",
                 measured=f3["cdrf_offline"]["tasks"], judge=totals(cdrf3),
                 alternative=Alternative(f"divisible TSF's {fmt(f3['tsf_offline']['tasks'])} (the DIGEST's derivation)", f3["tsf_offline"]["tasks"]),
                 why="topology reconstructed (DIGEST 1c: m1 {u1, u2}, m2 {u2, u3, u4}, m3 {u2, u5, u6, u7}, the only one the text allows); totals only (DIGEST 1e.4)"),
        Relation("fig. 4", "h_i: u1 runs 14 tasks (6 on m1, 2 on m2, 6 on m3), u2 and u3 7 (3, 1, 3), constraints removed", "14 / 7 / 7",
                 fmt(i4["h"]), "exact (whole tasks)", measured=i4["h"], judge=totals(h4, 0),
                 alternative=Alternative(f"the tasks alone with constraints kept (CDRF's M_i): {fmt(i4['M'])}", i4["M"])),
        Relation("fig. 4", "TSF: 6 tasks of u1 on m1, 1 of u2 on m2, 3 of u3 on m3; task shares 3/7, 1/7, 3/7", "6 / 1 / 3",
                 f"{fmt(f4['tsf_offline']['tasks'])} (task shares {fmt_shares(f4['tsf_offline']['shares'])})", f"± {LP_TOL:g} a total",
                 measured=f4["tsf_offline"]["tasks"], judge=totals(tsf4),
                 alternative=Alternative(f"user-driven first fit's {fmt(f4['drf']['tasks'])}", f4["drf"]["tasks"])),
        # derivations
        Relation("fig. 2a", "(DIGEST 1c, not in the paper: fig. 2 shows CDRF only) TSF: h = 18, 12; u1 9 on m1, u2 6 on m2, task shares 1/2", "9 / 6 (derived)",
                 f"{fmt(ts2['tasks'])} (h = {fmt(ts2['units'])}; task shares {fmt_shares(ts2['shares'])})", f"± {LP_TOL:g} a total", measured=ts2["tasks"],
                 judge=totals(tsf2), alternative=Alternative(f"CDRF's {fmt(cd2['tasks'])}", cd2["tasks"]), printed=False, why="offline LP"),
        Relation("fig. 2b", "(ORACLES 11, not in the paper: fig. 2b shows CDRF only; its Thm 2 says TSF is strategy-proof) TSF: no lie gains, h ignores constraints",
                 "no lie gains (derived)", f"{len(gains['tsf'])} of {len(f2b['tsf']['misreports'])} lies gain (" + "; ".join(
                     f"{x['user']} {x['lie']}: {x['truthful_tasks']:g} → {x['lying_tasks']:g}" for x in f2b["tsf"]["misreports"]) + ")",
                 "none", measured=len(gains["tsf"]), judge=lambda n: n == 0,
                 alternative=Alternative(f"CDRF's {len(gains['cdrf'])} gaining lie(s)", len(gains["cdrf"])), printed=False, why="offline LP"),
        Relation("fig. 3", "(DIGEST 1c, not in the paper) divisible TSF, all h = 9: u1..u4 1.5, u5..u7 1", "1.5 x 4, 1 x 3 (derived)",
                 f"{fmt(f3['tsf_offline']['tasks'])} (h = {fmt(f3['tsf_offline']['units'])})", f"± {LP_TOL:g} a total", measured=f3["tsf_offline"]["tasks"],
                 judge=totals(tsf3), alternative=Alternative(f"CDRF's {fmt(f3['cdrf_offline']['tasks'])}", f3["cdrf_offline"]["tasks"]), printed=False, why="offline LP"),
        Relation("fig. 4", "(DIGEST 1c, not in the paper) progressive filling's rounds: s = 1/7 freezes u2, then s = 3/7 freezes u1 and u3", "[u2], [u1, u3] (derived)",
                 " then ".join("[" + ", ".join(r) + "]" for r in f4["tsf_offline"]["rounds"]), "exact", measured=f4["tsf_offline"]["rounds"],
                 judge=lambda r: [sorted(x) for x in r] == [["u2"], ["u1", "u3"]],
                 alternative=Alternative("one round freezing all three", [["u1", "u2", "u3"]]), printed=False, why="offline LP"),
    ]
    one2, cone2 = f2["tsf_one"], f2["cdrf_one"]
    one_rows = [
        Relation("fig. 2a", "constrained CDRF: u1 9 on m1 + 3 on m2, u2 4 on m2", "9@m1 + 3@m2; 4@m2", f"{fmt_where(cone2['per_server'])} (slowdowns {fmt_shares(cone2['shares'])})",
                 "exact, per machine", measured=cone2["per_server"], judge=where(cdrf2_where),
                 alternative=Alternative(f"TSF's {fmt_where(one2['per_server'])} under the same offers", one2["per_server"]),
                 why="the paper gives CDRF no online rule: dgdrf's offers by job slowdown n_i / M_i"),
        Relation("fig. 3", "constrained CDRF: each user but u2 one task on its machine, u2 two on m1 and one on m2", "u2 2@m1 + 1@m2; the others 1",
                 fmt_where(f3["cdrf_one"]["per_server"]), "exact, per machine", measured=f3["cdrf_one"]["per_server"], judge=where(cdrf3_where),
                 alternative=Alternative(f"TSF's {fmt_where(f3['tsf_one']['per_server'])} under the same offers", f3["tsf_one"]["per_server"]),
                 why="the paper gives CDRF no online rule: dgdrf's offers by job slowdown; topology reconstructed (DIGEST 1c)"),
        Relation("fig. 3", "CDRF is not envy-free: u1 envies u2, with whose allocation it can run 2 tasks", "u1 envies u2 (2 tasks)",
                 "; ".join(f"{u} envies {v} (runs {a}, {b} with theirs)" for u, v, a, b in f3["cdrf_one_envy"]) or "nobody envies anybody",
                 "the pair and its 2 tasks", measured=f3["cdrf_one_envy"], judge=lambda e: any(u == "u1" and v == "u2" and b == 2 for u, v, _, b in e),
                 alternative=Alternative("TSF's allocation under the same offers: " + ("; ".join(f"{u} envies {v}" for u, v, _, _ in f3["tsf_one_envy"]) or "nobody envies"),
                                         f3["tsf_one_envy"]),
                 why=f"on the whole tasks placed above (Def. 3): u1 may use {', '.join(i3['eligible']['u1'])}, where u2's bundle holds "
                     + ", ".join(f"{placed(f3['cdrf_one']['per_server'])['u2'].get(m, 0)} tasks on {m}" for m in i3["eligible"]["u1"])),
        Relation("fig. 4", "TSF: u1 6 on m1, u2 1 on m2, u3 3 on m3", "6@m1; 1@m2; 3@m3", fmt_where(f4["tsf_one"]["per_server"]), "exact, per machine",
                 measured=f4["tsf_one"]["per_server"], judge=where(tsf4_where),
                 alternative=Alternative(f"user-driven first fit's {fmt_where(f4['drf']['per_server'])}", f4["drf"]["per_server"])),
        Relation("fig. 2a", "(DIGEST 1c, not in the paper: \"the greedy gives the same\") TSF: u1 9 on m1, u2 6 on m2", "9@m1; 6@m2 (derived)",
                 fmt_where(one2["per_server"]), "exact, per machine", measured=one2["per_server"], judge=where(tsf2_where),
                 alternative=Alternative(f"CDRF's {fmt_where(cone2['per_server'])}", cone2["per_server"]), printed=False,
                 why="one task per offer: " + why_offers_tie(f2, one2, tsf2_where, "task share", i2["h"])),
    ]
    fill_rows = [
        Relation("fig. 4", "TSF: u1 6 on m1, u2 1 on m2, u3 3 on m3", "6@m1; 1@m2; 3@m3", fmt_where(f4["tsf_fill"]["per_server"]), "exact, per machine",
                 measured=f4["tsf_fill"]["per_server"], judge=where(tsf4_where),
                 alternative=Alternative(f"user-driven first fit's {fmt_where(f4['drf']['per_server'])}", f4["drf"]["per_server"])),
        Relation("fig. 2a", "(DIGEST 1c, not in the paper) TSF: u1 9 on m1, u2 6 on m2", "9@m1; 6@m2 (derived)", fmt_where(f2["tsf_fill"]["per_server"]),
                 "exact, per machine", measured=f2["tsf_fill"]["per_server"], judge=where(tsf2_where),
                 alternative=Alternative(f"one task per offer's {fmt_where(one2['per_server'])}", one2["per_server"]), printed=False,
                 why="fill: " + why_runs(f2, f2["tsf_fill"], i2["h"])),
    ]
    same = {n: all(math.isclose(i["h"][u], i["dominant_unit"][u]) for u in i["h"]) for n, i in (("fig. 2", i2), ("fig. 4", i4))}
    unit_note = "; ".join(f"{n}: dominant-share units {fmt(i['dominant_unit'])}, h = {fmt(i['h'])}" for n, i in (("fig. 2", i2), ("fig. 4", i4)))
    ff_rows = [
        Relation("fig. 4", "(ORACLES 6, not in the paper) a user-driven first fit gives u1 4 on m1, u2 1 on m2, u3 1 on m1 + 3 on m3", "4 / 1 / 4 (derived)",
                 fmt_where(f4["drf"]["per_server"]), "exact, per machine", measured=f4["drf"]["per_server"], judge=where(ff4_where),
                 alternative=Alternative(f"TSF's {fmt_where(f4['tsf_one']['per_server'])} (server offers)", f4["tsf_one"]["per_server"]), printed=False,
                 why="first fit: " + why_first_fit(f4, f4["drf"], tsf4_where) + (f". Dominant shares are task shares here ({unit_note})" if all(same.values()) else f". ({unit_note})")),
        Relation("fig. 2a", "(DIGEST 1c, not in the paper: \"the greedy gives the same\") u1 9 on m1, u2 6 on m2", "9@m1; 6@m2 (derived)",
                 fmt_where(f2["drf"]["per_server"]), "exact, per machine", measured=f2["drf"]["per_server"], judge=where(tsf2_where),
                 alternative=Alternative(f"one task per offer's {fmt_where(one2['per_server'])}", one2["per_server"]), printed=False,
                 why="first fit: " + why_first_fit_all(f2, f2["drf"])),
    ]
    return [Table(OFFLINE, offline_rows), Table(ONE, one_rows), Table(FILL, fill_rows), Table(FIRST_FIT, ff_rows)]


def render(raw: dict[str, Any]) -> str:
    intro = """Wang et al.'s worked examples with placement constraints, one table a mechanism: offline
(progressive filling by LP, divisible tasks: `dgdrf oracle`), online server offers (`dgdrf
run`: one task per offer, and fill), and the user-driven first fit of `drf`. Fig. 2b's lie is
probed as `dgdrf audit --notion cdrf --misreport 2` does. Fig. 3's topology is reconstructed
(DIGEST 1c): m1 {u1, u2}, m2 {u2, u3, u4}, m3 {u2, u5, u6, u7}. The paper prints CDRF's
allocations on figs. 2 and 3 and TSF's on fig. 4; TSF on figs. 2 and 3 and the first fit on
fig. 4 are the DIGEST's and ORACLES' derivations, apart below."""
    return page("Wang et al. (TSF): the static examples", "Wang, Li, Liang, Li: Multi-resource fair allocation with placement constraints (TSF), figs. 2-4",
                intro, tables(raw), [COMMAND])


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"))
    args = ap.parse_args()
    raw = json.loads(compact_json(measure()))  # the page is made of what the JSON gives back
    text = render(raw)
    write(args.out, NAME, raw, text)
    print(text)


if __name__ == "__main__":
    main()
