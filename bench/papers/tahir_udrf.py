"""Tahir et al. (UDRF) §II-A and §III-B as relations: the report page
bench/results/papers/tahir-udrf.md and its raw figures (tahir-udrf.json).

    python bench/papers/tahir_udrf.py --out bench/results/papers

The paper's figures print no numbers; the instance is ORACLES.md example 12, the DIGEST's
reconstruction (4c) that agrees with every share §III-B prints. Offline UDRF (fig. 3 as
DIGEST 4a reads it) and the DRF baseline (fig. 2) are dgdrf/model/udrf.py, exact in
rationals; the online rule (fig. 5) is ``dgdrf run --policy udrf`` on
configs/tahir-example12.toml. The evaluation's trends (fig. 10) are on their own page,
tahir-trends.md (bench/papers/tahir_trends.py).
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from pathlib import Path

from dgdrf.bench.relations import Relation, page, write
from dgdrf.config import load_scenario
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.udrf import UdrfInstance, UdrfJob, UdrfUser, rducs, udrf_drf_baseline, udrf_offline

NAME = "tahir-udrf"
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


def share(use: dict[str, tuple[float, ...]], cls: str) -> str:
    """A user's use of a class as fractions of its capacity, <cpu, memory>."""
    return "<" + ", ".join(str(Fraction(a / c).limit_denominator(1000)) for a, c in zip(use[cls], CLASSES[cls])) + ">"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"))
    args = ap.parse_args()
    udrf, drf = udrf_offline(INSTANCE), udrf_drf_baseline(INSTANCE)
    groups = rducs(INSTANCE)
    run = run_emulation(load_scenario("configs/tahir-example12.toml"), RunConfig(policy="udrf"))
    online = {"tasks": run.tasks, "stop_reason": run.stop_reason, "error_ratio": run.error_ratio, "class_shares": run.notion_shares}
    u = udrf.use
    rel = [
        Relation("§II-A, Def. 2", "RDUCs {u1, u2, u3} and {u4}", "2 RDUCs", str(groups), "exact", groups == [["u1", "u2", "u3"], ["u4"]]),
        Relation("fig. 2", "DRF, each user one bundle of its jobs: u1's job1 uses about 12 % of hadoop", "≈ 12 %", f"job1 = job2 = {drf.jobs['u1']['job1']:g}; hadoop {share(drf.use['u1'], 'hadoop')}",
                 "1/8 of memory", drf.jobs["u1"] == {"job1": 8, "job2": 8} and share(drf.use["u1"], "hadoop") == "<1/7, 1/8>", "the printed 12 % read as 1/8 of hadoop's memory (DIGEST 4c)"),
        Relation("§III-B", "u1 on standard <1/2, 2/5>, u2 on standard <1/2, 1/5>", "<1/2, 2/5>, <1/2, 1/5>", f"{share(u['u1'], 'standard')}, {share(u['u2'], 'standard')}", "exact",
                 (share(u["u1"], "standard"), share(u["u2"], "standard")) == ("<1/2, 2/5>", "<1/2, 1/5>")),
        Relation("§III-B, fig. 4", "u1's job1 grows on hadoop to <1/2, 7/16> (28 runs) while job2 stays at 8", "28 / 8", f"{udrf.jobs['u1']['job1']:g} / {udrf.jobs['u1']['job2']:g}; hadoop {share(u['u1'], 'hadoop')}",
                 "exact", udrf.jobs["u1"] == {"job1": 28, "job2": 8} and share(u["u1"], "hadoop") == "<1/2, 7/16>"),
        Relation("§III-B", "u2 on public-IP <1/3, 1/6>; u3 on public-IP <5/12, 5/6>", "<1/3, 1/6>, <5/12, 5/6>", f"{share(u['u2'], 'public-IP')}, {share(u['u3'], 'public-IP')}", "exact",
                 (share(u["u2"], "public-IP"), share(u["u3"], "public-IP")) == ("<1/3, 1/6>", "<5/12, 5/6>")),
        Relation("§III-B", "u4 on high-mem <1, 25/32>", "<1, 25/32>", share(u["u4"], "high-mem"), "exact", share(u["u4"], "high-mem") == "<1, 25/32>"),
        Relation("fig. 4", "levels (shares, eq. 12) 1/2, 1/2, 5/6, 1", "1/2, 1/2, 5/6, 1", ", ".join(str(Fraction(v).limit_denominator(1000)) for v in udrf.levels.values()), "exact",
                 [Fraction(v).limit_denominator(1000) for v in udrf.levels.values()] == [Fraction(1, 2), Fraction(1, 2), Fraction(5, 6), Fraction(1)]),
        Relation("Thm. 1", "UDRF is Pareto-efficient", "PO", f"hadoop {share(u['u1'], 'hadoop')} used: half idle", "qualitative", False,
                 "line 25 freezes every user of a saturated (class, resource) pair, even with jobs that could grow elsewhere: u1 froze when standard's CPU filled (DIGEST 4e.2)"),
        Relation("fig. 5", "online UDRF: freed resources go to the lowest user; work-conserving (DIGEST 4c: u1's job1 grows to 56, all of hadoop)", "56",
                 f"{online['tasks']['u1-job1']} ({online['stop_reason']}, error ratio {online['error_ratio']:g})", "exact", online["tasks"]["u1-job1"] == 56 and online["stop_reason"] == "saturated",
                 "dgdrf run --policy udrf on configs/tahir-example12.toml: u2's task pair as two job streams of tenant u2 (not bundled)"),
        Relation("fig. 10", "the JCT reduction over DRF grows with the repetitions (10b) and the classes per job (10c)", "trends", "see tahir-trends.md", "—", None,
                 "a synthetic workload of repeated multi-class jobs, 30 seeds: 10b holds, 10a and 10c do not (tahir-trends.md says why)"),
    ]
    raw = {"online": online, "udrf": {"jobs": udrf.jobs, "levels": udrf.levels, "use": udrf.use, "rducs": udrf.rducs}, "drf_baseline": {"jobs": drf.jobs, "use": drf.use}}
    intro = """Tahir et al.'s users with several jobs over machine classes (each class one divisible pool),
offline (`dgdrf oracle --notion udrf` for one-class jobs from a scenario file; the task pair
of u2 spans two classes, so this page builds the instance in Python). The instance is the
DIGEST's reconstruction (the figures print no numbers)."""
    write(args.out, NAME, raw, page("Tahir et al. (UDRF): §II-A and §III-B", "Tahir, Yang, Koliousis, McCann: UDRF: multi-resource fairness for complex jobs", intro, rel,
                                             ["python bench/papers/tahir_udrf.py --out bench/results/papers"]))
    print((args.out / f"{NAME}.md").read_text())


if __name__ == "__main__":
    main()
