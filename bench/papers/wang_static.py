"""Wang et al.'s static examples (figs. 2a, 2b, 3, 4) as relations: the report page
bench/results/papers/wang-static.md and its raw figures (wang-static.json).

    python bench/papers/wang_static.py --out bench/results/papers

Each example offline (``dgdrf oracle``: progressive filling by LP, divisible tasks, Wang
et al. alg. 1) and online (``dgdrf run``: server offers, one task per offer and ``fill``;
and the user-driven first fit of ``drf`` for contrast); fig. 2b by the audit's misreports
(the liar declines servers it cannot use: dgdrf/misreports.py); fig. 3's topology is the
DIGEST's reconstruction (the only one its text allows). Instances: ORACLES.md examples 6,
7 and 11. The micro-benchmarks (Table II, figs. 5-7) are on wang-microbenchmark.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dgdrf.bench.relations import Relation, page, write, within
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.misreports import offline_misreports
from dgdrf.model.audit import envy_freeness
from dgdrf.model.lp_filling import progressive_filling_lp
from dgdrf.model.problem import Problem
from dgdrf.model.scenario import Scenario, build_scenario

NAME = "wang-static"
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


def online(scenario: Scenario, policy: str, **options: Any) -> dict[str, Any]:
    r = run_emulation(scenario, RunConfig(policy=policy, per_server=True, **options))
    if r.stop_reason != "saturated" or r.invariant_violations:
        raise SystemExit(f"{scenario.name} {policy} {options}: ended {r.stop_reason} with {r.invariant_violations[:1]}: a bug, not a result")
    return {"tasks": r.tasks, "per_server": r.per_server, "shares": r.notion_shares or r.shares}


def offline(scenario: Scenario, notion: str) -> dict[str, Any]:
    r = progressive_filling_lp(Problem.from_scenario(scenario), notion)
    return {"tasks": r.display_tasks(), "shares": r.shares, "units": r.units, "rounds": r.rounds}


def fmt(tasks: dict[str, float]) -> str:
    return " / ".join(f"{v:g}" for v in tasks.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"))
    args = ap.parse_args()
    raw: dict[str, Any] = {
        "fig2": {"tsf_offline": offline(FIG2, "tsf"), "cdrf_offline": offline(FIG2, "cdrf"), "tsf_one": online(FIG2, "tsf"), "tsf_fill": online(FIG2, "tsf", offer_tasks="fill"),
                 "cdrf_one": online(FIG2, "cdrf"), "drf": online(FIG2, "drf")},
        "fig2b": {n: offline_misreports(FIG2, n) for n in ("cdrf", "tsf")},
        "fig3": {"tsf_offline": offline(FIG3, "tsf"), "cdrf_offline": offline(FIG3, "cdrf"), "cdrf_one": online(FIG3, "cdrf"), "tsf_one": online(FIG3, "tsf")},
        "fig4": {"tsf_offline": offline(FIG4, "tsf"), "tsf_one": online(FIG4, "tsf"), "tsf_fill": online(FIG4, "tsf", offer_tasks="fill"), "drf": online(FIG4, "drf")},
    }
    f2, f3, f4 = raw["fig2"], raw["fig3"], raw["fig4"]
    gain = {n: [x for x in raw["fig2b"][n] if x["gains"]] for n in ("cdrf", "tsf")}
    cdrf3 = online(FIG3, "cdrf")
    problem3 = Problem.from_scenario(FIG3)
    placed3 = [[cdrf3["per_server"].get(u, {}).get(s, 0) for s in problem3.server_ids] for u in problem3.user_ids]
    envy3 = envy_freeness(problem3, placed3)  # type: ignore[arg-type]
    raw["fig3"]["cdrf_one_envy"] = [(e.user, e.envied, e.tasks, e.tasks_with_theirs) for e in envy3.envious]
    rel = [
        Relation("fig. 2a", "CDRF: M = 18, 6; u1 = 12 (9 on m1 + 3 on m2), u2 = 4", "12 / 4", f"offline {fmt(f2['cdrf_offline']['tasks'])}; online (one task per offer) {fmt(f2['cdrf_one']['tasks'])}",
                 "exact", f2["cdrf_offline"]["tasks"] == {"u1": 12, "u2": 4} and f2["cdrf_one"]["tasks"] == {"u1": 12, "u2": 4}),
        Relation("fig. 2a", "TSF: h = 18, 12; u1 = 9 on m1, u2 = 6 on m2, task shares 1/2", "9 / 6", f"offline {fmt(f2['tsf_offline']['tasks'])}; fill offers {fmt(f2['tsf_fill']['tasks'])}",
                 "exact", f2["tsf_offline"]["tasks"] == {"u1": 9, "u2": 6} and f2["tsf_fill"]["tasks"] == {"u1": 9, "u2": 6}),
        Relation("fig. 2a", "TSF online with one task per offer", "9 / 6", fmt(f2["tsf_one"]["tasks"]), "exact", f2["tsf_one"]["tasks"] == {"u1": 9, "u2": 6},
                 "alternating offers of m1 and m2 hand u1 a slot on m2 in the fourth round (4/18 < 3/12), for good: tasks are never preempted; the user-driven first fit (drf) gives "
                 + fmt(f2["drf"]["tasks"])),
        Relation("fig. 2b", "CDRF rewards u2's false claim of m1: 4 -> 6 tasks", "4 -> 6",
                 ", ".join(f"{g['user']} {g['lie']}: {g['truthful_tasks']:g} -> {g['lying_tasks']:g}" for g in gain["cdrf"]) or "no gain", "exact",
                 [(g["user"], g["lie"], round(g["truthful_tasks"]), round(g["lying_tasks"])) for g in gain["cdrf"]] == [("u2", "claims every server", 4, 6)],
                 "offline CDRF; the liar declines m1 (its tasks run only where they can)"),
        Relation("fig. 2b", "TSF: no lie gains (h ignores constraints)", "none", f"{len(gain['tsf'])} of {len(raw['fig2b']['tsf'])} lies gain", "exact", not gain["tsf"]),
        Relation("fig. 3", "CDRF: u2 = 3, every other user 1 (slowdown 1/3)", "3 / 1 x 6", f"offline {fmt(f3['cdrf_offline']['tasks'])}",
                 "± 1e-6", f3["cdrf_offline"]["tasks"] == {"u1": 1, "u2": 3, "u3": 1, "u4": 1, "u5": 1, "u6": 1, "u7": 1}),
        Relation("fig. 3", "CDRF is not envy-free: u1 envies u2", "u1 envies u2", "; ".join(f"{u} envies {v} ({a} < {b})" for u, v, a, b in raw["fig3"]["cdrf_one_envy"]) or "none",
                 "the pair", ("u1", "u2") in [(u, v) for u, v, _, _ in raw["fig3"]["cdrf_one_envy"]], "online CDRF (one task per offer), whole tasks, bundles where they lie"),
        Relation("fig. 3", "TSF, all h = 9 (derived, divisible): u1..u4 = 1.5, u5..u7 = 1", "1.5 x 4, 1 x 3", f"offline {fmt(f3['tsf_offline']['tasks'])}",
                 "± 1e-6", all(within(f3["tsf_offline"]["tasks"][u], 1.5 if u in ("u1", "u2", "u3", "u4") else 1.0, 1e-6) for u in f3["tsf_offline"]["tasks"]), "the DIGEST's derivation; not in the paper"),
        Relation("fig. 4", "TSF: h = 14, 7, 7; u1 = 6 on m1, u2 = 1 on m2, u3 = 3 on m3 (3/7, 1/7, 3/7)", "6 / 1 / 3",
                 f"offline {fmt(f4['tsf_offline']['tasks'])} (rounds {f4['tsf_offline']['rounds']}); one per offer {fmt(f4['tsf_one']['tasks'])}; fill {fmt(f4['tsf_fill']['tasks'])}", "exact",
                 all(f4[k]["tasks"] == {"u1": 6, "u2": 1, "u3": 3} for k in ("tsf_offline", "tsf_one", "tsf_fill"))),
        Relation("fig. 4", "(not TSF) user-driven first fit on the same shares", "—", fmt(f4["drf"]["tasks"]) + f" ({f4['drf']['per_server']})", "—", None,
                 "u3 takes a slot on m1 early; DIGEST 1c: name the algorithm"),
    ]
    intro = """Wang et al.'s worked examples with placement constraints: offline (progressive filling by LP,
divisible tasks: `dgdrf oracle`) and online (`dgdrf run`, server offers). Fig. 2b's lie is
probed by `dgdrf audit --notion cdrf --misreport 2`. Fig. 3's topology is reconstructed
(DIGEST 1c): m1 {u1, u2}, m2 {u2, u3, u4}, m3 {u2, u5, u6, u7}."""
    write(args.out, NAME, raw, page("Wang et al. (TSF): the static examples", "Wang, Li, Liang, Li: Multi-resource fair allocation with placement constraints (TSF), figs. 2-4", intro, rel,
                                             ["python bench/papers/wang_static.py --out bench/results/papers"]))
    print((args.out / f"{NAME}.md").read_text())


if __name__ == "__main__":
    main()
