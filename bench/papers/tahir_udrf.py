"""Tahir et al. (UDRF) §II-A, §III-B and Thm. 1 as relations: the report page
bench/results/papers/tahir-udrf.md and its raw figures (tahir-udrf.json).

    python bench/papers/tahir_udrf.py --out bench/results/papers

The paper's figures print no numbers; its text does (§II-A's 8, 8 and 28, 8 jobs and
"around 12 %", §III-B's shares). The instance is ORACLES.md example 12, the DIGEST's
reconstruction (4c) that agrees with every share §III-B prints. Offline UDRF (fig. 3 as
DIGEST 4a reads it) and the DRF baseline (fig. 2) are dgdrf/model/udrf.py, exact in
rationals; the online rule (fig. 5, pseudo-code that prints no figure) is ``dgdrf run
--policy udrf`` on configs/tahir-example12.toml. Thm. 1 (Pareto efficiency, in the
paper's terms of §II-D: no user's job count can rise without another's falling) is
decided by a linear programme over the classes' capacities (``pareto_gain``, scipy's
linprog): the most job runs that can be added to an allocation with no job of any user
running fewer; the allocation is Pareto-efficient iff that gain is 0. ``dgdrf audit``'s
Pareto test does not apply: it counts one task type per user on servers, and u2's job is a
pair of tasks on two classes that run together or not at all.

``tables(raw)`` builds every relation from the raw figures alone; the page is
``render(raw)``. The evaluation's trends (fig. 10) are on their own page,
tahir-trends.md (bench/papers/tahir_trends.py).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import linprog

from dgdrf.bench.relations import Alternative, Relation, Table, compact_json, equals, page, write
from dgdrf.config import load_scenario
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.udrf import UdrfInstance, UdrfJob, UdrfUser, udrf_drf_baseline, udrf_offline

NAME = "tahir-udrf"
COMMAND = "python bench/papers/tahir_udrf.py --out bench/results/papers"
CLASSES = {"standard": (16, 40), "hadoop": (56, 64), "public-IP": (24, 48), "high-mem": (8, 256)}
INSTANCE = UdrfInstance(
    ("cpu", "memory"),
    CLASSES,
    (
        UdrfUser("u1", (UdrfJob("job1", {"hadoop": (1, 1)}), UdrfJob("job2", {"standard": (1, 2)}))),
        UdrfUser("u2", (UdrfJob("job", {"standard": (1, 1), "public-IP": (1, 1)}),)),  # its task pair, all or nothing
        UdrfUser("u3", (UdrfJob("job", {"public-IP": (1, 4)}),)),
        UdrfUser("u4", (UdrfJob("job", {"high-mem": (1, 25)}),)),
    ),
)
#: the online run's scenario users (configs/tahir-example12.toml) as the paper's jobs: u1's
#: two jobs are its job streams (tenant u1); u2's task pair is one job of two parts, whose
#: runs are its instances
STREAMS = {"u1-job1": ("u1", "job1"), "u1-job2": ("u1", "job2"), "u2": ("u2", "job"), "u3": ("u3", "job"), "u4": ("u4", "job")}
#: the paper's figures, as printed
PAPER_RDUCS = [["u1", "u2", "u3"], ["u4"]]  # §III-B: C1 = {u1, u2, u3}, C2 = {u4}
PAPER_UDRF_U1 = {"job1": 28, "job2": 8}  # §II-A: "28 jobs of job1 and 8 jobs of job2"
PAPER_DRF_U1 = {"job1": 8, "job2": 8}  # §II-A: "8 jobs of job2 in the standard class and 8 jobs of job1 in the hadoop class"
#: §III-B's final shares (fig. 4), user and class -> <cpu, memory> of the class
PAPER_SHARES = {"u1 standard": "<1/2, 2/5>", "u2 standard": "<1/2, 1/5>", "u1 hadoop": "<1/2, 7/16>", "u2 public-IP": "<1/3, 1/6>",
                "u3 public-IP": "<5/12, 5/6>", "u4 high-mem": "<1, 25/32>"}
#: §II-A: "job1 consumes only around %12 of the resources available in the hadoop class"
PAPER_HADOOP = 0.12
#: "around": each of job1's hadoop shares (CPU, memory) within this of 12 % (1/7 = 14.3 % and
#: 1/8 = 12.5 % both read as "around 12 %"; UDRF's 1/2 and 7/16 are 30 points away)
HADOOP_TOL = 0.025
#: a gain of the Pareto programme below this many job runs is the solver's rounding
PARETO_TOL = 1e-6
#: the levels (eq. 12) that eq. 12 gives on §III-B's printed final shares
DERIVED_LEVELS = ["1/2", "1/2", "5/6", "1"]


# -- the figures ----------------------------------------------------------------------------------
def instance_raw(instance: UdrfInstance) -> dict[str, Any]:
    """The instance as JSON: classes' capacities and each user's jobs' demands per class."""
    return {"resources": list(instance.resources), "classes": {m: [float(c) for c in cap] for m, cap in instance.classes.items()},
            "users": {u.id: {j.id: {m: [float(d) for d in vec] for m, vec in j.demand.items()} for j in u.jobs} for u in instance.users}}


def frac(x: float) -> str:
    return str(Fraction(x).limit_denominator(1000))


def share(classes: Mapping[str, list[float]], use: Mapping[str, list[float]], cls: str) -> str:
    """A user's use of a class as fractions of its capacity, <cpu, memory>."""
    return "<" + ", ".join(frac(a / c) for a, c in zip(use[cls], classes[cls])) + ">"


def shares(raw: Mapping[str, Any], use: Mapping[str, Mapping[str, list[float]]]) -> dict[str, str]:
    """The shares §III-B prints, of an allocation's use."""
    classes = raw["instance"]["classes"]
    return {key: share(classes, use[key.split(" ")[0]], key.split(" ")[1]) for key in PAPER_SHARES}


def pareto_gain(instance: Mapping[str, Any], jobs: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The most job runs that can be added to ``jobs`` (user -> job -> runs) with no job of
    any user running fewer, every (class, resource) within its capacity: the linear
    programme max Σ x_j s.t. Σ_j x_j R^j_mk <= c_mk, x_j >= jobs_j (each class one
    divisible pool, as in the paper). ``gain`` = its optimum - Σ jobs_j (0: Pareto-
    efficient in §II-D's terms), ``best`` its optimal allocation."""
    keys = [(u, j) for u, js in instance["users"].items() for j in js]
    pairs = [(m, k) for m in instance["classes"] for k in range(len(instance["resources"]))]
    a = np.array([[instance["users"][u][j].get(m, [0.0] * len(instance["resources"]))[k] for u, j in keys] for m, k in pairs])
    cap = np.array([instance["classes"][m][k] for m, k in pairs])
    low = np.array([float(jobs[u][j]) for u, j in keys])
    res = linprog(-np.ones(len(keys)), A_ub=a, b_ub=cap * (1 + 1e-12), bounds=list(zip(low, [None] * len(keys))), method="highs")
    if res.status != 0:
        raise ValueError(f"the Pareto programme on {dict(jobs)}: {res.message}")
    best: dict[str, dict[str, float]] = {}
    for (u, j), x in zip(keys, res.x):
        best.setdefault(u, {})[j] = round(float(x), 6)
    return {"gain": round(float(-res.fun - low.sum()), 6), "best": best}


def online_jobs(tasks: Mapping[str, int], instances: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, float]]:
    """The online run's allocation as the paper's jobs: a stream's tasks, or a job of
    parts' instances that ran whole."""
    out: dict[str, dict[str, float]] = {}
    for stream, (u, j) in STREAMS.items():
        runs = sum(instances[stream].values()) if stream in instances else tasks[stream]
        out.setdefault(u, {})[j] = float(runs)
    return out


def job_name(jobs: Mapping[str, Mapping[str, float]], u: str, j: str) -> str:
    return f"{u} {j}" if len(jobs[u]) > 1 else u


def jobs_txt(jobs: Mapping[str, Mapping[str, float]]) -> str:
    return ", ".join(f"{job_name(jobs, u, j)} {x:g}" for u, js in jobs.items() for j, x in js.items())


def rducs_txt(groups: list[list[str]]) -> str:
    return ", ".join(f"C{i + 1} = {{{', '.join(g)}}}" for i, g in enumerate(groups))


def gain_txt(instance: Mapping[str, Any], jobs: Mapping[str, Mapping[str, float]]) -> str:
    """What the Pareto programme adds to ``jobs``: which jobs gain, and by how much."""
    best = pareto_gain(instance, jobs)["best"]
    grown = [f"{job_name(jobs, u, j)} {jobs[u][j]:g} → {best[u][j]:g}" for u in jobs for j in jobs[u] if best[u][j] > jobs[u][j] + PARETO_TOL]
    return ", ".join(grown) or "nothing"


def measure() -> dict[str, Any]:
    udrf, drf = udrf_offline(INSTANCE), udrf_drf_baseline(INSTANCE)
    run = run_emulation(load_scenario("configs/tahir-example12.toml"), RunConfig(policy="udrf"))
    online = {"tasks": run.tasks, "instances": run.instances, "stop_reason": run.stop_reason, "error_ratio": run.error_ratio, "class_shares": run.notion_shares,
              "invariant_violations": len(run.invariant_violations)}
    return {"instance": instance_raw(INSTANCE), "online": online, "udrf": {"jobs": udrf.jobs, "levels": udrf.levels, "use": udrf.use, "rducs": udrf.rducs},
            "drf_baseline": {"jobs": drf.jobs, "levels": drf.levels, "use": drf.use}}


# -- the relations --------------------------------------------------------------------------------
def tables(raw: dict[str, Any]) -> list[Table]:
    inst, udrf, drf, online = raw["instance"], raw["udrf"], raw["drf_baseline"], raw["online"]
    classes = inst["classes"]

    def efficient(jobs: Mapping[str, Mapping[str, float]]) -> bool:
        return pareto_gain(inst, jobs)["gain"] <= PARETO_TOL

    def hadoop_share(use: Mapping[str, Mapping[str, list[float]]]) -> list[float]:
        return [a / c for a, c in zip(use["u1"]["hadoop"], classes["hadoop"])]

    def around_12(x: list[float]) -> bool:
        return all(abs(v - PAPER_HADOOP) <= HADOOP_TOL for v in x)

    u_gain, d_gain = pareto_gain(inst, udrf["jobs"]), pareto_gain(inst, drf["jobs"])
    on_jobs = online_jobs(online["tasks"], online["instances"])
    on_gain = pareto_gain(inst, on_jobs)
    levels = [frac(v) for v in udrf["levels"].values()]
    hadoop_idle = [1 - a / c for a, c in zip(udrf["use"]["u1"]["hadoop"], classes["hadoop"])]
    offline = Table("offline UDRF (fig. 3 as DIGEST 4a reads it; dgdrf/model/udrf.py udrf_offline, exact rationals)", [
        Relation("§III-B", "findRDUCs returns two RDUCs, C1 with u1, u2 and u3, C2 with u4 alone", rducs_txt(PAPER_RDUCS), rducs_txt(udrf["rducs"]), "exact",
                 measured=udrf["rducs"], judge=equals(PAPER_RDUCS), alternative=Alternative("one cluster of all four users (no RDUC split)", [["u1", "u2", "u3", "u4"]])),
        Relation("§II-A", "UDRF's allocation lets u1 run 28 jobs of job1 and 8 of job2", "28, 8", f"{udrf['jobs']['u1']['job1']:g}, {udrf['jobs']['u1']['job2']:g}", "exact",
                 measured=udrf["jobs"]["u1"], judge=equals(PAPER_UDRF_U1),
                 alternative=Alternative(f"fig. 2's DRF bundle's {drf['jobs']['u1']['job1']:g}, {drf['jobs']['u1']['job2']:g}", drf["jobs"]["u1"])),
        Relation("§III-B, fig. 4", "the final shares: u1, u2 on standard; u1 on hadoop; u2, u3 on public-IP; u4 on high-mem", ", ".join(PAPER_SHARES.values()),
                 ", ".join(shares(raw, udrf["use"]).values()), "exact", measured=shares(raw, udrf["use"]), judge=equals(PAPER_SHARES),
                 alternative=Alternative(f"fig. 2's DRF bundle's (u1 on hadoop {shares(raw, drf['use'])['u1 hadoop']})", shares(raw, drf["use"]))),
        Relation("fig. 4, eq. 12", "the users' levels (shares, eq. 12) u1, u2, u3, u4", ", ".join(DERIVED_LEVELS) + " (our derivation from §III-B's shares)", ", ".join(levels),
                 "exact", measured=levels, judge=equals(DERIVED_LEVELS),
                 alternative=Alternative("u3 frozen with u1 and u2 when standard's CPU fills (the whole RDUC frozen)", ["1/2", "1/2", "1/2", "1"]),
                 why="the paper prints d^max = 1/2 for u1, u2, u3 after round 1 only; the final levels are eq. 12 on its final shares", printed=False),
        Relation("Thm. 1", "UDRF is Pareto-efficient: no user's job count can rise without another's falling (§II-D)", "Pareto-efficient",
                 f"{jobs_txt(udrf['jobs'])}: the programme adds {u_gain['gain']:g} runs ({gain_txt(inst, udrf['jobs'])}), no job running fewer",
                 f"the Pareto programme's gain ≤ {PARETO_TOL:g} runs", measured=udrf["jobs"], judge=efficient,
                 alternative=Alternative(f"fig. 2's DRF bundle's allocation, which the paper calls wasteful (gain {d_gain['gain']:g})", drf["jobs"]),
                 why=(f"hadoop is {frac(hadoop_idle[0])} idle in CPU and {frac(hadoop_idle[1])} in memory: line 25 freezes every user of a saturated (class, resource) "
                      f"pair, even with a job that could grow elsewhere, so u1 froze when standard's CPU filled (DIGEST 4e.2). A Pareto-efficient allocation, the "
                      f"programme's: {jobs_txt(u_gain['best'])}. The proof goes from Lemma 1 (each user has a saturated pair) to \"x_u cannot rise\", which holds only for the "
                      "user's jobs on that pair: u1's job1 uses none of standard")),
    ])
    baseline = Table("the paper's DRF baseline (fig. 2: the (class, resource) pairs as resources, each user one bundle of its jobs in equal counts; "
                     "dgdrf/model/udrf.py udrf_drf_baseline)", [
        Relation("§II-A, fig. 2", "DRF lets u1 run 8 jobs of job2 on standard and 8 of job1 on hadoop", "8, 8",
                 f"{drf['jobs']['u1']['job2']:g}, {drf['jobs']['u1']['job1']:g}", "exact", measured=drf["jobs"]["u1"], judge=equals(PAPER_DRF_U1),
                 alternative=Alternative(f"UDRF's {udrf['jobs']['u1']['job1']:g}, {udrf['jobs']['u1']['job2']:g}", udrf["jobs"]["u1"])),
        Relation("§II-A", "under DRF, u1's job1 uses only around 12 % of hadoop's resources", "around 12 %",
                 f"CPU {100 * hadoop_share(drf['use'])[0]:.1f} %, memory {100 * hadoop_share(drf['use'])[1]:.1f} % ({share(classes, drf['use']['u1'], 'hadoop')})",
                 f"each within ± {100 * HADOOP_TOL:g} points of 12", measured=hadoop_share(drf["use"]), judge=around_12,
                 alternative=Alternative(f"UDRF's {share(classes, udrf['use']['u1'], 'hadoop')}", hadoop_share(udrf["use"])),
                 why="the paper's \"around\": 1/7 of the CPU and 1/8 of the memory both read as 12 % (DIGEST 4c reads 1/8)"),
    ])
    online_t = Table("online UDRF (fig. 5: `dgdrf run --policy udrf` on configs/tahir-example12.toml; u2's task pair one job of two parts, placed whole)", [
        Relation("fig. 5", "online UDRF gives freed resources to the lowest user and so is work-conserving: u1's job1 grows to all of hadoop (DIGEST 4c)",
                 "56 (our derivation: hadoop's 56 CPUs, 1 a run)", f"{online['tasks']['u1-job1']} ({online['stop_reason']}, error ratio {online['error_ratio']:g})", "exact",
                 measured={"u1-job1": online["tasks"]["u1-job1"], "stop_reason": online["stop_reason"]}, judge=equals({"u1-job1": 56, "stop_reason": "saturated"}),
                 alternative=Alternative(f"offline UDRF's {udrf['jobs']['u1']['job1']:g}", {"u1-job1": udrf["jobs"]["u1"]["job1"], "stop_reason": "saturated"}),
                 why="fig. 5 is pseudo-code and prints no figure: the 56 is the DIGEST's reading of it", printed=False),
        Relation("fig. 5", "online UDRF's allocation is Pareto-efficient in §II-D's terms (a job of u2 runs both its tasks)", "Pareto-efficient (our reading)",
                 f"{jobs_txt(on_jobs)}: the programme adds {on_gain['gain']:g} runs ({gain_txt(inst, on_jobs)})", f"the Pareto programme's gain ≤ {PARETO_TOL:g} runs",
                 measured=on_jobs, judge=efficient, alternative=Alternative(f"offline UDRF's allocation (gain {u_gain['gain']:g})", udrf["jobs"]),
                 why=(f"u2's job ran {on_jobs['u2']['job']:g} instances, {online['tasks']['u2']} tasks: each instance one task on standard and one on public-IP, "
                      f"placed whole ({online['invariant_violations']} invariant violations: no instance ran with a part missing)"), printed=False),
        Relation("fig. 10", "the JCT reduction over DRF grows with the repetitions (10b) and the classes per job (10c)", "trends (no numbers)", "see tahir-trends.md", "—",
                 why="judged on tahir-trends.md, against the paper's DRF online (drf-bundle: classes as resources, each tenant's jobs in equal counts), whole multi-class jobs"),
    ])
    return [offline, baseline, online_t]


def render(raw: dict[str, Any]) -> str:
    intro = """Tahir et al.'s users with several jobs over machine classes (each class one divisible pool),
offline (`dgdrf oracle --notion udrf` reads the same instance from
configs/tahir-example12.toml, u2's task pair a job of two parts; this page builds it in
Python) and online. The
instance is the DIGEST's reconstruction (the figures print no numbers; the text prints the
shares and job counts quoted below). Pareto efficiency (Thm. 1) is decided by a linear
programme over the classes' capacities: the most job runs that can be added to an
allocation with no job of any user running fewer (0: Pareto-efficient)."""
    return page("Tahir et al. (UDRF): §II-A, §III-B and Thm. 1", "Tahir, Yang, Koliousis, McCann: UDRF: multi-resource fairness for complex jobs", intro,
                tables(raw), [COMMAND])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"))
    args = ap.parse_args()
    raw = json.loads(compact_json(measure()))  # what the page's test reads back
    write(args.out, NAME, raw, render(raw))
    print((args.out / f"{NAME}.md").read_text())


if __name__ == "__main__":
    main()
