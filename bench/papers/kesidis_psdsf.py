"""Kesidis et al. §4 (PS-DSF, rPS-DSF, global DRF) as relations: the report page
bench/results/papers/kesidis-psdsf.md and its raw figures (kesidis-psdsf.json).

    python bench/papers/kesidis_psdsf.py --out bench/results/papers

The instance (demands corrected, DIGEST 2c; ORACLES.md example 8): workers w1 <100, 30>,
w2 <30, 100>; processes p1 <5, 1>, p2 <1, 5>, equal weights, no constraints.

What runs, each a full emulation (``run_emulation``; a run takes a few hundredths of a
second, so every variant gets all ``--seeds`` seeds, 1..N):

- ``drf``: the thesis's user-driven DRF (lowest global dominant share, first fit). It has
  no offers, so ``--offer-order`` does not apply; the seed only moves message latencies.
- ``psdsf`` and ``rpsdsf``: server offers, one task per offer, in id order (``fixed``) and
  in a fresh seeded permutation every round (``random``, Kesidis et al.'s "workers are
  randomly permuted in each round").

And what no policy of dgdrf does: global DRF *with worker offers*, the scheme the
paper's sentence describes for DRF as well, and every notion under the other ways an
offer could be taken. Computed with dgdrf's own offer loop (``policies/offers.OfferRound``,
the notion's scores) driven directly on an ``AllocationLedger`` (no messages: the
sequence of placements is the offer loop's, as in the emulation), for the global
dominant share (``drf``), ``psdsf`` and ``rpsdsf``, each with

- ``one``: one task per offer (dgdrf's default, the emulated runs' mechanism);
- ``fill``: the user an offer goes to keeps the worker while its next task fits there
  (``--offer-tasks fill``, as a Mesos framework takes an offer);
- ``drain``: the worker is offered again, each time to the lowest-scored user, until
  nothing fits on it, then the round goes on (the DIGEST's "fill the offered worker";
  the offer loop's re-offer of a freed server, asked for after every placement);

in fixed order and over the same number of seeded permutations
(``numpy.random.default_rng(seed)``, not the emulation's stream).

Every emulated run must end ``saturated`` with no invariant violation, and its per-server
counts must add up to its allocations: a run that does not is a bug, and the script
stops with the command that shows it instead of recording it.

The page counts the paper's printed §4 figures under the paper's mechanism only: worker
offers in a random order every round, one task per offer (DRF by the offer loop, PS-DSF
and rPS-DSF emulated), each judged by a tolerance that fails a named alternative (the
PS-DSF means by about three standard errors of a mean of 200 orders, which fails both
pure endings). The same claims under every other mechanism (user-driven DRF, id order,
fill, drain) are shown in tables of their own and not counted. :func:`tables` rebuilds
every relation from the raw figures (kesidis-psdsf.json) and :func:`render` the page.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from dgdrf.bench.relations import HEADER, Alternative, Relation, Table, page, write
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.ledger import AllocationLedger
from dgdrf.model.notions import notion
from dgdrf.model.scenario import build_scenario
from dgdrf.policies.offers import OfferRound

NAME = "kesidis-psdsf"
RESOURCES = ["cpu", "mem"]
WORKERS = [("w1", [100, 30]), ("w2", [30, 100])]
PROCESSES = [("p1", [5, 1]), ("p2", [1, 5])]
#: the order of an ending's four figures: x_11, x_12, x_21, x_22 (process, worker)
CELLS = [(p, w) for p, _ in PROCESSES for w, _ in WORKERS]
#: what the paper prints (§4): means over its (unstated number of) random orders
PAPER_PSDSF = (19.5, 0.6, 0.35, 19.65)
PAPER_RPSDSF = (19, 2, 2, 19)
PAPER_DRF = (5, 5, 5, 5)

#: how an offer is taken in the offer-loop computation (the module's doc)
TAKES = ("one", "fill", "drain")

Ending = tuple[int, int, int, int]


def scenario():
    return build_scenario(RESOURCES, WORKERS, PROCESSES, name="kesidis-s4")


def command(policy: str, order: str, seed: int) -> str:
    """The dgdrf command line of one emulated run (to show a bad one)."""
    return f"dgdrf run --scenario kesidis.json --policy {policy} --offer-order {order} --seed {seed} --per-server  # kesidis.json: {WORKERS} / {PROCESSES}"


def emulate(policy: str, order: str, seed: int) -> Ending:
    """One emulated run: its ending x_11, x_12, x_21, x_22. Raises on a run that is not
    a clean saturation (a bug, not a figure)."""
    options: dict[str, Any] = {} if policy == "drf" else {"offer_order": order}
    r = run_emulation(scenario(), RunConfig(policy=policy, per_server=True, seed=seed, **options))
    per = r.per_server or {}
    ending = tuple(int(per.get(p, {}).get(w, 0)) for p, w in CELLS)
    problems = []
    if r.stop_reason != "saturated":
        problems.append(f"stop_reason {r.stop_reason}")
    if r.invariant_violations:
        problems.append(f"invariant violations {r.invariant_violations}")
    if sum(ending) != r.allocations or any(r.tasks[p] != sum(per.get(p, {}).values()) for p, _ in PROCESSES):
        problems.append(f"per-server counts {per} do not add up to allocations {r.allocations} / tasks {r.tasks}")
    if problems:
        raise RuntimeError(f"{'; '.join(problems)}: {command(policy, order, seed)}")
    return ending  # type: ignore[return-value]


def offers(notion_name: str, order: str, seed: int, tasks: str = "one") -> Ending:
    """Worker offers under ``notion_name`` taken as ``tasks`` (one, fill or drain; see the
    module's doc) with dgdrf's offer loop on a ledger, until no task fits anywhere."""
    ledger = AllocationLedger(len(RESOURCES))
    for w, cap in WORKERS:
        ledger.add_server(w, cap)
    for p, dem in PROCESSES:
        ledger.add_user(p, dem)
    rng = np.random.default_rng(seed)
    select = OfferRound(notion(notion_name), order, fill=tasks == "fill", rng=lambda: rng)
    pending: dict[str, Any] = {p: None for p, _ in PROCESSES}  # every process always has a next task
    while (pick := select(ledger, pending)) is not None:
        assert ledger.allocate(*pick)
        if tasks == "drain":
            select.freed(pick[1])  # offer the same worker again, while something fits on it
    return tuple(int(ledger.placed[ledger.user_index[p], ledger.server_index[w]]) for p, w in CELLS)  # type: ignore[return-value]


def summary(endings: list[Ending]) -> dict[str, Any]:
    """Mean of each cell and the distribution of endings (most frequent first)."""
    mean = np.mean(np.array(endings, dtype=float), axis=0) if endings else np.zeros(4)
    return {
        "runs": len(endings),
        "mean": [round(float(v), 4) for v in mean],
        "endings": [{"x": list(e), "runs": n} for e, n in Counter(endings).most_common()],
        "per_run": [list(e) for e in endings],
    }


def collect(seeds: Iterable[int], command: str = "") -> dict[str, Any]:
    """Every variant over ``seeds``: the raw figures of the page (``command``: the line that
    made them, shown on the page)."""
    seeds = list(seeds)
    doc: dict[str, Any] = {"command": command, "instance": {"workers": dict(WORKERS), "processes": dict(PROCESSES)}, "cells": [f"x_{p[1]}{w[1]}" for p, w in CELLS], "seeds": [seeds[0], seeds[-1]]}
    runs: dict[str, Any] = {"drf": summary([emulate("drf", "fixed", s) for s in seeds])}
    for policy in ("psdsf", "rpsdsf"):
        for order in ("fixed", "random"):
            runs[f"{policy} {order}"] = summary([emulate(policy, order, s) for s in seeds])
    doc["emulated"] = runs
    doc["offer_loop"] = {
        f"{name} {tasks} {order}": summary([offers(name, order, s, tasks) for s in seeds])
        for name in ("drf", "psdsf", "rpsdsf") for tasks in TAKES for order in ("fixed", "random")
    }
    return doc


# ---- the page: every verdict computed from the raw figures -------------------------------------------
def fmt(x: Iterable[float]) -> str:
    return " / ".join(f"{v:g}" for v in x)


def distribution(s: dict[str, Any]) -> str:
    return "; ".join(f"{fmt(e['x'])}: {e['runs']}" for e in s["endings"])


def count(s: dict[str, Any], ending: Iterable[float]) -> int:
    """Runs of a summary that ended at ``ending``."""
    return sum(e["runs"] for e in s["endings"] if tuple(e["x"]) == tuple(ending))


def stderr(s: dict[str, Any], k: int) -> float:
    """The standard error of the mean of cell ``k`` over a summary's runs."""
    x = np.array([e[k] for e in s["per_run"]], dtype=float)
    return float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0


def each_near(paper: float, tol: float):
    """The judge: every figure of a list within ``tol`` of ``paper``."""
    return lambda xs: all(abs(x - paper) <= tol for x in xs)


def every_run(ending: Iterable[int]):
    """The judge: every run of a list of endings is ``ending``."""
    e = list(ending)
    return lambda runs: len(runs) > 0 and all(list(r) == e for r in runs)


def rounds_to(paper: float):
    """The judge: every figure of a list nearer ``paper`` than the next whole task (|x - paper| < 0.5)."""
    return lambda xs: all(abs(x - paper) < 0.5 for x in xs)


def psdsf_bounds(runs: list[list[int]]) -> bool:
    """DIGEST 2e.7's bounds: in every run, at least 19 tasks on the matching worker and 20 a process."""
    return len(runs) > 0 and all(e[0] >= 19 and e[3] >= 19 and e[0] + e[1] >= 20 and e[2] + e[3] >= 20 for e in runs)


#: the paper's four PS-DSF means: (cell, printed figure, tolerance, what every order on the matching workers gives)
PSDSF_CELLS = ((0, 19.5, 0.1, 20), (1, 0.6, 0.2, 0), (2, 0.35, 0.2, 0), (3, 19.65, 0.1, 20))


def claims(drf: dict[str, Any] | None, psdsf: dict[str, Any] | None, rpsdsf: dict[str, Any] | None, how: dict[str, str], printed: bool, drf_note: str = "") -> list[Relation]:
    """The paper's printed §4 claims, judged on the summaries of one mechanism's runs (a
    summary ``None``: that notion has no run under the mechanism). ``how``: where each
    notion's runs come from (emulated, the offer loop on a ledger). ``printed``: False for
    a mechanism that is not the paper's (shown apart, not counted). ``drf_note``: appended
    to DRF's explanation."""
    rel: list[Relation] = []
    matching = Alternative("each process on its matching worker only, 20 / 0 / 0 / 20 (PS-DSF's ending the paper contrasts)", [20, 0, 0, 20])
    if drf is not None:
        m, n = drf["mean"], drf["runs"]
        five = count(drf, PAPER_DRF)
        rel.append(Relation(
            "§4", "global DRF: \"On average under DRF, the allocations are x_n,i ≡ 5 for all n, i\"", f"{fmt(PAPER_DRF)} (mean)",
            f"mean {fmt(m)} over {n} runs ({how['drf']}); endings {distribution(drf)}", "± 0.5 on each mean", measured=m, judge=each_near(5, 0.5), alternative=matching,
            why=f"{five} of {n} runs end 5 each" + (f"; the standard error of x_11's mean is {stderr(drf, 0):.2f}; ± 0.5 is a tenth of the paper's 5" if printed else "") + drf_note,
            printed=printed))
    if psdsf is not None:
        m, n = psdsf["mean"], psdsf["runs"]
        kinds = [e["x"] for e in psdsf["endings"]]
        symmetric = all(e[0] == e[3] and e[1] == e[2] for e in psdsf["per_run"])
        for k, paper, tol, pure in PSDSF_CELLS:
            cell = f"x_{CELLS[k][0][1]}{CELLS[k][1][1]}"
            what = "on its matching worker" if pure else "off its matching worker"
            values = " or ".join(sorted({f"{e[k]:g}" for e in kinds}, key=float))
            why = f"{n} runs end {distribution(psdsf)}: {cell} is {values} in each run"
            if printed:
                gap = abs(PAPER_RPSDSF[k] - pure)
                why += (f", so its mean is set by how many runs end each way (standard error {stderr(psdsf, k):.3f}); ± {tol:g} is about three standard errors of a mean "
                        f"of 200 runs whose {cell} is one of two figures {gap} apart (3 × {gap / 2:g} / √200 = {3 * gap / 2 / np.sqrt(200):.2f}), and fails both {pure} (no run off the matching "
                        f"workers) and rPS-DSF's {PAPER_RPSDSF[k]}")
            if symmetric and k in (2, 3):
                twin = 1 if k == 2 else 0
                why += (f"; x_{CELLS[k][0][1]}{CELLS[k][1][1]} equals x_{CELLS[twin][0][1]}{CELLS[twin][1][1]} in every one of the {n} runs, so the two means are "
                        f"both {m[k]:g}: the paper's unequal {PSDSF_CELLS[twin][1]:g} and {paper:g} cannot both come from this greedy on this symmetric instance")
            rel.append(Relation(
                "§4", f"PS-DSF: the average {cell} (process {CELLS[k][0][1]} {what}) = {paper:g}", f"{paper:g} (mean)", f"{m[k]:g} (mean of {n} runs, {how['psdsf']})",
                f"± {tol:g}", measured=m[k], judge=lambda x, p=paper, t=tol: abs(x - p) <= t,
                alternative=Alternative(f"no run off the matching workers ({cell} = {pure})", pure), why=why, printed=printed))
        totals = [m[0] + m[1], m[2] + m[3]]
        per_run_totals = [Counter(e[0] + e[1] for e in psdsf["per_run"]), Counter(e[2] + e[3] for e in psdsf["per_run"])]
        rel.append(Relation(
            "§4", "PS-DSF: \"increased total allocation x_n = x_n,1 + x_n,2 = 20 > 10\"", "20 (DRF: 10)", f"x_1 = {totals[0]:g}, x_2 = {totals[1]:g} (means, {how['psdsf']})",
            "rounds to 20: less than 0.5 from it", measured=totals, judge=rounds_to(20), alternative=Alternative("rPS-DSF's 21 a process (19 + 2), the paper's \"improved efficiency\"", [21, 21]),
            why="; ".join(f"x_{i + 1} is {', '.join(f'{t:g} in {c} runs' for t, c in sorted(totals_i.items()))}" for i, totals_i in enumerate(per_run_totals))
                + ("; the tolerance is the printed figure's rounding, and it fails DRF's 10 as well as rPS-DSF's 21" if printed else ""), printed=printed))
    if rpsdsf is not None:
        n = rpsdsf["runs"]
        rel.append(Relation(
            "§4", "rPS-DSF: \"x_1,1 = 19, x_1,2 = 2, x_2,1 = 2, x_2,2 = 19\"", fmt(PAPER_RPSDSF), f"{count(rpsdsf, PAPER_RPSDSF)} of {n} runs end {fmt(PAPER_RPSDSF)} ({how['rpsdsf']}); endings {distribution(rpsdsf)}",
            "exact, every run", measured=rpsdsf["per_run"], judge=every_run(PAPER_RPSDSF), alternative=Alternative("a run on the matching workers only, 20 / 0 / 0 / 20", [[20, 0, 0, 20]]),
            why="the paper prints no average for rPS-DSF: one ending, so every run must give it" if printed else "", printed=printed))
    return rel


def bounds(psdsf: dict[str, Any], how: str) -> Relation:
    """DIGEST 2e.7's relation for PS-DSF (ours, not the paper's: not counted)."""
    return Relation(
        "§4 (DIGEST 2e.7)", "PS-DSF: each process on its matching worker, read as bounds on every run", "≥ 19 on the matching worker, ≥ 20 a process, every run (ours)",
        f"{sum(1 for e in psdsf['per_run'] if psdsf_bounds([e]))} of {psdsf['runs']} runs within the bounds ({how})", "every run", measured=psdsf["per_run"], judge=psdsf_bounds,
        alternative=Alternative("DRF's 5 / 5 / 5 / 5", [[5, 5, 5, 5]]), why="the DIGEST's relation (\"assert bounds, never paper means\"), not a figure the paper prints", printed=False)


#: the mechanisms that are not the paper's: (header, the offer loop's key of the way an offer is taken and the order, or None for user-driven)
OTHERS = (
    ("worker offers in id order every round, one task per offer", "one fixed"),
    ("worker offers, the workers in a random order every round, fill: the process an offer goes to keeps the worker while its next task fits (`--offer-tasks fill`)", "fill random"),
    ("worker offers in id order every round, fill", "fill fixed"),
    ("worker offers, the workers in a random order every round, drain: the worker is offered again, each time to the lowest-scored process, until nothing fits on it", "drain random"),
    ("worker offers in id order every round, drain", "drain fixed"),
)
LOOP = "the offer loop on a ledger"
PAPER_MECHANISM = ("worker offers, the workers in a fresh random order every round, one task per offer: Kesidis et al.'s §4 greedy (\"workers are chosen in round-robin "
                   "fashion where workers are randomly permuted in each round\"; DIGEST 2a's reading), the paper's mechanism")
USER_DRIVEN = ("user-driven first fit: dgdrf's drf, the lowest global dominant share first, then the first worker with room (no offers: PS-DSF and rPS-DSF, "
               "whose score depends on the offered worker, cannot run so)")


def tables(raw: dict[str, Any]) -> list[Table]:
    """The paper's §4 claims under its own mechanism (counted), then under every other
    mechanism we ran (``printed=False``: not the paper's, not counted)."""
    em, off = raw["emulated"], raw["offer_loop"]
    five = {"dgdrf's user-driven drf": em["drf"], "draining the offered worker in random order": off["drf drain random"]}
    note = "; " + ", and ".join(f"{k} ends 5 each in {count(v, PAPER_DRF)} of {v['runs']} runs" for k, v in five.items()) + " (other mechanisms: their own tables, not counted)"
    out = [Table(PAPER_MECHANISM, [*claims(off["drf one random"], em["psdsf random"], em["rpsdsf random"], {"drf": LOOP, "psdsf": "emulated", "rpsdsf": "emulated"}, True, note),
                                   bounds(em["psdsf random"], "emulated")])]
    out.append(Table(USER_DRIVEN, claims(em["drf"], None, None, {"drf": "emulated"}, False)))
    for header, key in OTHERS:
        if key == "one fixed":
            out.append(Table(header, claims(off["drf one fixed"], em["psdsf fixed"], em["rpsdsf fixed"], {"drf": LOOP, "psdsf": "emulated", "rpsdsf": "emulated"}, False)))
        else:
            out.append(Table(header, claims(off[f"drf {key}"], off[f"psdsf {key}"], off[f"rpsdsf {key}"], dict.fromkeys(("drf", "psdsf", "rpsdsf"), LOOP), False)))
    return out


def row(r: Relation) -> str:
    """A relation's row, as the page's own tables show it."""
    alt = f"; excludes {r.alternative.what}" if r.alternative is not None else ""
    return f"| {r.where} | {r.claim} | {r.paper} | {r.ours} | {r.tolerance}{alt} | {r.verdict} | {r.why} |"


def render(raw: dict[str, Any]) -> str:
    em, off = raw["emulated"], raw["offer_loop"]
    paper, *others = tables(raw)
    (w1, c1), (w2, c2) = raw["instance"]["workers"].items()
    (p1, d1), (p2, d2) = raw["instance"]["processes"].items()
    intro = f"""
Kesidis et al.'s §4 example with the demands corrected (DIGEST 2c): workers {w1} <{c1[0]}, {c1[1]}>,
{w2} <{c2[0]}, {c2[1]}>; processes {p1} <{d1[0]}, {d1[1]}>, {p2} <{d2[0]}, {d2[1]}>. Every figure is x_11 / x_12 / x_21 / x_22
(process, worker). Emulated runs of `drf` (user-driven), `psdsf` and `rpsdsf` (server
offers, one task per offer, workers in id order or in a fresh seeded permutation every
round) over run seeds {raw['seeds'][0]}..{raw['seeds'][1]}; every run ended `saturated` with no invariant
violation and per-server counts adding up to its allocations. Global DRF with worker
offers is no policy of dgdrf: it is computed with dgdrf's offer loop on a ledger
(`OfferRound` ranking by the global dominant share), over as many numpy-seeded orders,
beside the other notions under three ways of taking an offer.

The paper's claims count under its own mechanism only, worker offers in a random order
with one task per offer (first table); the same claims under the other mechanisms we ran
(dgdrf's user-driven DRF among them) are shown after the endings, each in its own table,
and are not counted.
"""
    lines = ["## Endings of the emulated runs", "", "| policy | order | runs | mean | x_1 / x_2 | endings (x: runs) |", "|---|---|---|---|---|---|"]
    for key, s in em.items():
        policy, _, order = key.partition(" ")
        m = s["mean"]
        lines.append(f"| {policy} | {order or 'n/a (user-driven)'} | {s['runs']} | {fmt(m)} | {m[0] + m[1]:g} / {m[2] + m[3]:g} | {distribution(s)} |")
    lines += [
        "", "## Endings of the offer loop on a ledger", "",
        "Computed, not emulated (the module's doc): `one` task per offer, `fill` (the process keeps the worker while its next task fits: "
        "`--offer-tasks fill`), `drain` (the worker is offered again, each time to the lowest-scored process, until nothing fits on it).", "",
        "| notion | offer taken | order | runs | mean | endings (x: runs) |", "|---|---|---|---|---|---|",
    ]
    for key, s in off.items():
        name, tasks, order = key.split(" ")
        lines.append(f"| {name} | {tasks} | {order} | {s['runs']} | {fmt(s['mean'])} | {distribution(s)} |")
    lines += ["", "## The paper's claims under the other mechanisms (not the paper's: not counted)", ""]
    for t in others:
        held = sum(1 for r in t.relations if r.holds)
        lines += [f"### {t.mechanism}", "", f"{held} of {len(t.relations)} hold under this mechanism.", "", *HEADER, *map(row, t.relations), ""]
    fixed = em["psdsf fixed"]
    share = {(p, w): max(d / c for d, c in zip(dem, cap)) for p, dem in raw["instance"]["processes"].items() for w, cap in raw["instance"]["workers"].items()}
    notes = "\n".join(lines) + f"""
PS-DSF in id order ends {distribution(fixed)}: {w1} is offered first while both scores are 0,
the tie goes to {p1}, and from then on each worker's per-server dominant share ({p1} {share[(p1, w1)]:.3g} a
task on {w1} against {p2}'s {share[(p2, w1)]:.3g}, and the mirror on {w2}) keeps it for its matching process
until the worker is full. In random orders the first offers (ties at 0 go to {p1}) decide
whether a process gets a task on the other's worker early or not ({distribution(em['psdsf random'])}).

The raw figures (every run's ending) are in kesidis-psdsf.json.
"""
    return page(
        "Kesidis et al., PS-DSF and rPS-DSF (§4)",
        "G. Kesidis, Y. Shan, Y. Wang, B. Urgaonkar, J. Khamse-Ashari, I. Lambadaris: scheduling distributed resources in heterogeneous private clouds, §4 numerical example",
        intro, [paper], [raw["command"]], notes,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="kesidis_psdsf.py", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200, help="run seeds 1..N for every variant (default 200)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/papers"), help="directory of the page and its JSON")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    cmd = "python bench/papers/kesidis_psdsf.py" + ("" if args.seeds == 200 else f" --seeds {args.seeds}") + f" --out {args.out}"
    raw = collect(range(1, args.seeds + 1), cmd)
    text = render(raw)
    write(args.out, NAME, raw, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
