"""Every verdict of the papers' pages can fail (bench/papers/*.py, dgdrf/bench/relations.py).

For each page script: its relations are rebuilt from the committed raw figures
(bench/results/papers/NAME.json) with the script's own ``tables``; every printed claim
with a verdict names the alternative its tolerance must exclude, and the verdict function
fails on that alternative's figure; the committed page is what ``render`` makes of the raw
figures (its counts and explanations are the runs', not typed); and no script passes a
verdict as a literal."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from bench_scripts import committed_raw, load, page_names

from dgdrf.bench.relations import Alternative, Relation, Table, count, equals, near, page

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "bench" / "papers").glob("*.py"))
RESULTS = ROOT / "bench" / "results" / "papers"


def _pages() -> list[Path]:
    return [p for p in SCRIPTS if "def tables(" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_verdict_is_a_literal(script: Path) -> None:
    tree = ast.parse(script.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Relation":
            for kw in node.keywords:
                assert kw.arg != "holds", f"{script.name}:{node.lineno}: a verdict passed as holds="
                if kw.arg == "judge":
                    assert not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)), f"{script.name}:{node.lineno}: judge is a literal"
            for arg in node.args[5:]:
                assert not (isinstance(arg, ast.Constant) and isinstance(arg.value, bool)), f"{script.name}:{node.lineno}: a literal bool among the relation's figures"


@pytest.mark.parametrize("script", _pages(), ids=lambda p: p.name)
def test_every_printed_verdict_fails_on_its_alternative_and_the_page_is_the_runs(script: Path) -> None:
    module = load(script.relative_to(ROOT).as_posix())
    for name in page_names(module):
        raw = committed_raw(module, name)
        tables = module.tables(raw)
        assert tables and all(isinstance(t, Table) for t in tables)
        for t in tables:
            for r in t.relations:
                if r.printed and r.judge is not None:
                    assert r.alternative is not None, f"{name}: {r.where} {r.claim!r} names no alternative"
                    assert r.excludes_its_alternative(), f"{name}: {r.where} {r.claim!r}: its tolerance passes {r.alternative.what} ({r.alternative.value!r})"
        assert module.render(raw) == (RESULTS / f"{name}.md").read_text(encoding="utf-8")


def test_only_printed_claims_count_and_mechanisms_head_their_tables() -> None:
    printed = Relation("fig. 1", "u1 gets 6", "6", "6", "exact", measured=6, judge=equals(6), alternative=Alternative("first fit's 4", 4))
    failing = Relation("fig. 2", "ratio 1/5", "1/5", "0.23", "± 0.01", measured=0.23, judge=near(0.2, 0.01), alternative=Alternative("8/35", 8 / 35))
    derived = Relation("fig. 5", "online: 56", "56 (ours)", "56", "exact", measured=56, judge=equals(56), printed=False)
    unjudged = Relation("fig. 9", "trends", "trends", "—", "—", why="not the paper's experiment")
    tables = [Table("server offers, one task per offer", [printed, failing, unjudged]), Table("offline LP", [derived])]
    assert count(tables) == (1, 2)
    text = page("t", "s", "i", tables, ["cmd"])
    assert "**1 of 2 of the paper's printed claims hold.**" in text
    assert "### server offers, one task per offer" in text and "### offline LP" not in text  # a table of derivations alone has no printed rows
    assert text.index("Our derivations and readings") < text.index("| fig. 5 |")
    assert "excludes first fit's 4" in text and "does not hold" in text and "| n/a |" in text
    assert printed.excludes_its_alternative() and not failing.holds and unjudged.holds is None and unjudged.excludes_its_alternative() is None
