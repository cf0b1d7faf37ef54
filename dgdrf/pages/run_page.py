"""A run's page (``dgdrf run ... --html FILE``): one policy's run, or several side by
side on one scenario. Per policy: each user's share under the policy's own notion over
time, with the oracle's level where the scenario has one (an endless workload whose
notion has an offline oracle: drf and its distributed kin through DRFH, tsf, cdrf), the
utilisation, allocations and messages per tick; for finite jobs the JCT distribution
and each job's span; the allocations by user and server; then the result table and the
fairness audit's verdicts (dgdrf/auditing.py) where the run has them.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Sequence
from typing import Any

from dgdrf.model.scenario import Scenario
from dgdrf.pages import figures
from dgdrf.pages.html import Block, Figure, Item, check_size, page, table
from dgdrf.pages.recorder import RunRecord
from dgdrf.report_table import NORMAL_ENDS, result_rows, results_title

log = logging.getLogger(__name__)

#: the offline oracle of each notion a page draws levels from (dgdrf oracle --notion)
ORACLE_OF = {"drf": "drfh", "tsf": "tsf", "cdrf": "cdrf"}

#: the audit's verdicts, in the order the page lists them
VERDICTS = (
    ("sharing_incentive", "sharing incentive"),
    ("sharing_incentive_up_to_one_task", "sharing incentive, up to one task"),
    ("envy_free", "envy-free"),
    ("envy_free_up_to_one_task", "envy-free, up to one task"),
    ("pareto_efficient", "Pareto efficient"),
    ("pareto_efficient_in_place", "Pareto efficient in place"),
)


def oracle_levels(scenario: Scenario, notion: str | None) -> dict[str, float] | None:
    """Each user's share in the offline allocation of ``notion`` (None: DRF's dominant
    share), for an endless scenario whose notion has an oracle; None otherwise (finite
    jobs: shares come and go, and no level is the policy's aim)."""
    name = ORACLE_OF.get(notion or "drf")
    if name is None or scenario.finishing:
        return None
    from dgdrf.model.lp_filling import progressive_filling_lp
    from dgdrf.model.problem import Problem

    try:
        return dict(progressive_filling_lp(Problem.from_scenario(scenario), name).shares)
    except (ValueError, RuntimeError) as exc:  # a scenario the oracle does not take (several demands a user)
        log.info("no oracle level on the page: %s", exc)
        return None


def run_page(scenario: Scenario, records: Sequence[RunRecord], command: str = "") -> str:
    """The page of ``records`` (one per policy, each with its result) on ``scenario``."""
    results = [r.result for r in records if r.result is not None]
    if len(results) != len(records):
        raise ValueError("a record without its result: the run did not finish")
    title = results_title(scenario, results)
    levels: dict[str | None, dict[str, float] | None] = {}
    shares, util, allocs, msgs, spans, heat = [], [], [], [], [], []
    for record, result in zip(records, results, strict=True):
        notion = result.fairness
        if notion not in levels:
            levels[notion] = oracle_levels(scenario, notion)
        label = record.policy
        shares.append(Figure("shares", figures.shares(record, levels[notion]), label))
        util.append(Figure("utilisation", figures.utilisation(record), label))
        allocs.append(Figure("allocations", figures.allocations(record), label))
        msgs.append(Figure("messages", figures.messages(record), label))
        span = figures.jobs(result)
        if span is not None:
            spans.append(Figure("jobs", span, label))
        heat.append(Figure("placements", figures.placements(record), label))
    jct = figures.jct(results)
    sections: list[tuple[str, Sequence[Item]]] = [
        ("Result", [_result_table(scenario, results)]),
        ("Shares over time", shares),
        ("Utilisation", util),
        ("Allocations per tick", allocs),
        ("Messages per tick, by type", msgs),
        ("Job completion times", [Figure("jct", jct)] if jct is not None else []),
        ("Jobs", spans),
        ("Placements", heat),
        ("Fairness audit", _audit_table(results)),
    ]
    intro = f'<p class="note">{len(records)} run(s) of {scenario.name}' + (f": <code>{html.escape(command)}</code>" if command else "") + ". Hover a point for its values; click a legend entry to hide its series.</p>"
    text = page(title, sections, intro)
    check_size(text, "--html")
    return text


def _result_table(scenario: Scenario, results: Sequence[Any]) -> Block:
    rows = result_rows(scenario, results)
    classes = [[""] + [("bad" if c not in NORMAL_ENDS else "good") if name == "stopped because" else "" for c in cells] for name, cells in rows]
    return table(["measure", *[r.policy for r in results]], [[name, *cells] for name, cells in rows], classes=classes)


def _audit_table(results: Sequence[Any]) -> list[Item]:
    audited = [r for r in results if r.audit]
    if not audited:
        return []
    rows, classes = [], []
    for key, name in VERDICTS:
        cells = ["-" if r.audit.get(key) is None else ("yes" if r.audit[key] else "no") for r in audited]
        rows.append([name, *cells])
        classes.append(["", *["good" if c == "yes" else "bad" if c == "no" else "" for c in cells]])
    notes = []
    for r in audited:
        pareto = (r.audit.get("pareto") or {}).get("reason")
        envious = r.audit.get("envious") or []
        if pareto:
            notes.append(f"{r.policy}: {pareto}")
        if envious:
            e = envious[0]
            notes.append(f"{r.policy}: {e['user']} envies {e['envies']} ({e['tasks']} tasks, {e['tasks_with_theirs']} with theirs)" + (f", and {len(envious) - 1} more" if len(envious) > 1 else ""))
    note = "".join(f'<p class="note">{html.escape(n)}</p>' for n in notes)
    return [table(["property of the final allocation", *[r.policy for r in audited]], rows, classes=classes), Block(note)]

