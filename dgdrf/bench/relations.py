"""A paper's results as relations we check, and the report page that shows them.

Each paper's evaluation lives in a bench script of its own (bench/papers/*.py) that
declares, beside the paper's figures, what it checks: the paper's figure as printed (or,
apart, our derivation), ours as measured, the tolerance as a function with the
alternative it must exclude, and the reason when it does not hold or when we had to
choose a reading. The verdict is always computed from the measured figure. report.py knows none of them; this module only renders them, one
Markdown page a paper (bench/results/papers/*.md), as the thesis's relations are shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Alternative:
    """The nearest plausible outcome other than the paper's claim (another reading, another
    mechanism, a baseline's figure), and the figure it would give: a relation's tolerance
    must fail it, or the relation cannot tell the claim from it. tests/test_relations.py
    runs every relation's ``judge`` on its alternative's ``value``."""

    what: str  # "divisible TSF's 8/35", "FIFO's JCT", "no reduction"
    value: Any


@dataclass(frozen=True)
class Relation:
    """One claim of a paper, checked against our run.

    The verdict is computed, never written: ``judge(measured)``, ``judge`` being the
    tolerance as a function (``None``: not comparable, ``why`` says why). ``printed``:
    the paper prints this figure (quoted in ``paper``, with ``where``); a figure we
    derived or read into the paper (a paper that prints none, a digest's derivation) is
    ``printed=False``, shown in its own section and not counted in "N of M hold".
    ``alternative``: what the tolerance must exclude (named in the row)."""

    where: str  # "fig. 5", "§4", "Table II"
    claim: str  # what the paper says, in a few words
    paper: str  # the paper's figure, as printed ("1/2", "19.5 (mean)", "up to 22 % faster"), or our derivation
    ours: str  # our figure, formatted
    tolerance: str  # "exact", "± 0.02", "qualitative: same sign"
    measured: Any = None  # what judge reads: our figure(s), measured
    judge: Callable[[Any], bool] | None = None
    alternative: Alternative | None = None
    why: str = ""  # the reading we chose, or why it does not hold
    printed: bool = True

    @property
    def holds(self) -> bool | None:
        """The verdict: ``judge(measured)``; None when not comparable."""
        return None if self.judge is None else bool(self.judge(self.measured))

    @property
    def verdict(self) -> str:
        return {True: "holds", False: "does not hold", None: "n/a"}[self.holds]

    def excludes_its_alternative(self) -> bool | None:
        """Whether the tolerance fails the alternative (None: no alternative or no judge)."""
        if self.judge is None or self.alternative is None:
            return None
        return not self.judge(self.alternative.value)


@dataclass(frozen=True)
class Table:
    """Relations judged under one mechanism (the rule that made our figures: "server
    offers, one task per offer", "user-driven first fit"), named in the table's header:
    where a paper's figures need two mechanisms, two tables."""

    mechanism: str
    relations: Sequence[Relation]


def within(ours: float, paper: float, tol: float) -> bool:
    """|ours - paper| <= tol."""
    return abs(ours - paper) <= tol


def near(paper: float, tol: float) -> Callable[[float], bool]:
    """The judge |x - paper| <= tol."""
    return lambda x: abs(x - paper) <= tol


def equals(expected: Any) -> Callable[[Any], bool]:
    """The judge x == expected (exact figures: counts, fractions, tuples)."""
    return lambda x: x == expected


def _row(r: Relation) -> str:
    alt = f"; excludes {r.alternative.what}" if r.alternative is not None else ""
    return f"| {r.where} | {r.claim} | {r.paper} | {r.ours} | {r.tolerance}{alt} | {r.verdict} | {r.why} |"


HEADER = ("| where | the paper says | paper | ours | tolerance | verdict | why / reading |", "|---|---|---|---|---|---|---|")


def count(tables: Sequence[Table]) -> tuple[int, int]:
    """(held, checked) over the relations whose figure the paper prints."""
    printed = [r for t in tables for r in t.relations if r.printed and r.holds is not None]
    return sum(1 for r in printed if r.holds), len(printed)


def page(title: str, source: str, intro: str, tables: Sequence[Table] | Sequence[Relation], commands: Sequence[str], notes: str = "") -> str:
    """The Markdown report page of one paper: what was run, one table of the paper's
    printed claims per mechanism (counted), then our derivations and readings (not
    counted), then notes. A flat list of relations is one table of an unnamed mechanism."""
    tabs = [t if isinstance(t, Table) else Table("", [t]) for t in tables]
    if tabs and all(not t.mechanism and len(t.relations) == 1 for t in tabs):
        tabs = [Table("", [r for t in tabs for r in t.relations])]  # a flat list: one unnamed table
    held, checked = count(tabs)
    lines = [f"# {title}", "", f"*{source}*", "", intro.strip(), "", "Made by (rerun to check):", "", *[f"    {c}" for c in commands], ""]
    lines += [f"**{held} of {checked} of the paper's printed claims hold.**", ""]
    for t in tabs:
        printed = [r for r in t.relations if r.printed]
        if printed:
            lines += ([f"### {t.mechanism}", ""] if t.mechanism else []) + [*HEADER, *map(_row, printed), ""]
    derived = [(t, r) for t in tabs for r in t.relations if not r.printed]
    if derived:
        lines += ["## Our derivations and readings (not counted: the paper prints no such figure)", "", *HEADER]
        lines += [_row(r) for _, r in derived] + [""]
    if notes:
        lines += [notes.strip()]
    return "\n".join(lines).rstrip("\n") + "\n"


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

