"""The page of Wang et al.'s static examples (bench/papers/wang_static.py), from its committed
raw figures (bench/results/papers/wang-static.json): one table a mechanism; only what the
paper prints is counted (figs. 2 and 3 show constrained CDRF only, so TSF there is the
DIGEST's derivation); each exact allocation fails on the allocation another mechanism gives;
and the explanation of one task per offer's 10 / 5 on fig. 2a is made of the run's
placements, not typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_scripts import committed_raw, load

from dgdrf.bench.relations import count

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def page():
    script = load("bench/papers/wang_static.py")
    raw = committed_raw(script)
    return script, raw, script.tables(raw)


def test_one_table_a_mechanism_and_only_the_papers_figures_counted(page):
    script, raw, tables = page
    assert [t.mechanism for t in tables] == [script.OFFLINE, script.ONE, script.FILL, script.FIRST_FIT]
    text = script.render(raw)
    held, checked = count(tables)
    assert f"**{held} of {checked} of the paper's printed claims hold.**" in text
    for t in tables:
        for r in t.relations:
            # TSF on figs. 2 and 3, fig. 4's PF rounds and the first fit's 4/1/4 are the DIGEST's and ORACLES'
            tsf_on_2_or_3 = r.where.startswith(("fig. 2", "fig. 3")) and "CDRF" not in r.claim
            assert r.printed == (not tsf_on_2_or_3 and "not in the paper" not in r.claim), (t.mechanism, r.where, r.claim)
    assert not [r for r in tables[3].relations if r.printed]  # the first fit is never the paper's


def test_fig4_tsf_fails_on_the_first_fits_allocation(page):
    _, raw, tables = page
    first_fit = raw["fig4"]["drf"]
    assert first_fit["tasks"] == {"u1": 4, "u2": 1, "u3": 4}
    rows = [r for t in tables for r in t.relations if r.printed and r.where == "fig. 4" and r.claim.startswith("TSF")]
    assert len(rows) == 3  # offline, one task per offer, fill
    for r in rows:
        assert r.holds and r.alternative.value in (first_fit["tasks"], first_fit["per_server"]) and r.excludes_its_alternative()


def test_the_fig2a_explanation_is_the_runs(page):
    """One task per offer on fig. 2a: placement 6 is round 3's offer of m2, where u1 (3/18)
    and u2 (2/12) tie at 1/6 and the lower id wins; the text says what the placements say."""
    script, raw, tables = page
    row = next(r for r in tables[1].relations if r.where == "fig. 2a" and not r.printed)
    assert row.holds is False and raw["fig2"]["tsf_one"]["tasks"] == {"u1": 10, "u2": 5}
    assert "placement 6 is round 3's offer of m2" in row.why and "u1 and u2 tie at 1/6, and the tie goes to the lower id" in row.why
    assert "task share 3/18 = 1/6" in row.why and "task share 2/12 = 1/6" in row.why
    # other placements, another explanation: u1 on m2 in round 2 above u2's share
    f2 = json.loads(json.dumps(raw["fig2"]))
    run = f2["tsf_one"]
    run["placements"] = [["u1", "m1"], ["u2", "m2"], ["u1", "m1"], ["u1", "m2"]] + run["placements"][4:]
    why = script.why_offers_tie(f2, run, {"u1": {"m1": 9}, "u2": {"m2": 6}}, "task share", f2["instance"]["h"])
    assert "placement 4 is round 2's offer of m2" in why and "u1 (2 tasks: task share 2/18 = 1/9)" in why and "u1 is not the lowest" in why
