"""A paper's results as relations we check, and the report page that shows them.

Each paper's evaluation lives in a bench script of its own (bench/papers/*.py) that
declares, beside the paper's figures, what it checks: the paper's figure as printed, ours,
the tolerance, and the verdict, with the reason when it does not hold or when we had to
choose a reading. report.py knows none of them; this module only renders them, one
Markdown page a paper (bench/results/papers/*.md), as the thesis's relations are shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Relation:
    """One claim of a paper, checked against our run."""

    where: str  # "fig. 5", "§4", "Table II"
    claim: str  # what the paper says, in a few words
    paper: str  # the paper's figure, as printed ("1/2", "19.5 (mean)", "up to 22 % faster")
    ours: str  # our figure, formatted
    tolerance: str  # "exact", "± 0.02", "qualitative: same sign"
    holds: bool | None  # None: not comparable (said why)
    why: str = ""  # the reading we chose, or why it does not hold

    @property
    def verdict(self) -> str:
        return {True: "holds", False: "does not hold", None: "n/a"}[self.holds]


def within(ours: float, paper: float, tol: float) -> bool:
    """|ours - paper| <= tol."""
    return abs(ours - paper) <= tol


def page(title: str, source: str, intro: str, relations: Sequence[Relation], commands: Sequence[str], notes: str = "") -> str:
    """The Markdown report page of one paper: what was run, the relations table, notes."""
    held = sum(1 for r in relations if r.holds)
    checked = sum(1 for r in relations if r.holds is not None)
    lines = [
        f"# {title}",
        "",
        f"*{source}*",
        "",
        intro.strip(),
        "",
        "Made by (rerun to check):",
        "",
        *[f"    {c}" for c in commands],
        "",
        f"**{held} of {checked} relations hold.**",
        "",
        "| where | the paper says | paper | ours | tolerance | verdict | why / reading |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in relations:
        lines.append(f"| {r.where} | {r.claim} | {r.paper} | {r.ours} | {r.tolerance} | {r.verdict} | {r.why} |")
    if notes:
        lines += ["", notes.strip()]
    return "\n".join(lines) + "\n"


def compact_json(doc: Any) -> str:
    """``doc`` as indented JSON with every innermost list on one line (the raw figures of a
    page: long lists of numbers stay readable). No string of a page's figures holds two
    spaces in a row, so joining a list's whitespace changes no value."""
    return re.sub(r"\[[^\[\]{}]*\]", lambda m: " ".join(m.group(0).split()), json.dumps(doc, indent=1)) + "\n"


def write(out: Path, name: str, figures: Any, text: str) -> None:
    """A paper's page ``out/name.md`` and its raw figures ``out/name.json``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(compact_json(figures))
    (out / f"{name}.md").write_text(text)


def drain_problems(result: Any) -> list[str]:
    """What is wrong with a run of finite jobs that should have drained (a bug to find,
    never a figure to record): its stop reason, with its unfinished tasks and events, and
    its first invariant violations; empty when it drained cleanly."""
    problems = []
    if result.stop_reason != "drained":
        problems.append(f"stop_reason {result.stop_reason} (unfinished tasks {result.unfinished_tasks}, events {result.events})")
    if result.invariant_violations:
        problems.append(f"invariant violations {result.invariant_violations[:5]}")
    return problems

