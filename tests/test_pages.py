"""Pages to look at (dgdrf/pages): a run's page written by ``dgdrf run --html``, drawn
in a real (headless) Chromium; what the recorder keeps; the page's promises (one file,
no network address, at most 5 MB) and that recording changes nothing of the run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from browser import click_point, drawn_figures, dump_dom
from dgdrf.config import RunConfig, load_scenario
from dgdrf.emulation import run_emulation
from dgdrf.pages.html import MAX_PAGE_BYTES, Figure, check_size, page
from dgdrf.pages.recorder import RunRecorder
from test_cli import assert_one_line_error, cli

ROOT = Path(__file__).parent.parent
FINITE = ROOT / "configs" / "google-finite-8x4.toml"


@pytest.fixture(scope="module")
def finite_page(tmp_path_factory) -> Path:
    """The issue's page: a finite constrained workload under drf and tsf, side by side."""
    out = tmp_path_factory.mktemp("page") / "run.html"
    from dgdrf.cli import main

    assert main(["run", "--scenario", str(FINITE), "--policy", "drf,tsf", "--html", str(out), "--quiet"]) == 0
    return out


def test_a_run_page_is_one_offline_file_under_5_mb(finite_page):
    text = finite_page.read_text(encoding="utf-8")
    assert 'src="http' not in text and 'href="http' not in text
    assert "<script src=" not in text and "<link " not in text  # everything inline
    assert len(text.encode()) <= MAX_PAGE_BYTES


def test_a_run_page_draws_every_figure_in_chromium(finite_page):
    """Each figure's element holds a drawn svg once the page's script ran, side by side
    for both policies, and the page logs nothing to its console."""
    dom, console = dump_dom(finite_page)
    drawn = drawn_figures(dom)
    for name in ("shares", "utilisation", "allocations", "messages", "jobs", "placements"):
        assert drawn.get(name) == [True, True], (name, drawn.get(name))
    assert drawn.get("jct") == [True]  # one CDF, a line a policy
    assert console == []


def test_a_run_page_shows_the_result_table_and_the_policies(finite_page):
    text = finite_page.read_text(encoding="utf-8")
    assert 'data-label="drf"' in text and 'data-label="tsf"' in text
    assert "<td>stopped because</td>" in text and 'class="good">drained<' in text


def test_recording_a_run_changes_nothing_of_it():
    """The recorder only reads: the same run with and without it has the same result
    (but for the wall time)."""
    scenario = load_scenario(FINITE)
    config = RunConfig(policy="dgdrf", seed=2)
    plain = run_emulation(scenario, config).to_dict()
    recorder = RunRecorder(max_samples=16)
    recorded = run_emulation(scenario, replace(config), observers=[recorder]).to_dict()
    for doc in (plain, recorded):
        doc.pop("wall_s")
    assert recorded == plain
    record = recorder.record
    assert record is not None and record.result is not None
    assert 8 <= len(record.times) <= 17 and record.times == sorted(record.times)
    assert record.times[-1] == pytest.approx(recorded["runtime_s"])
    assert record.allocations[-1] == recorded["allocations"]  # the totals at the end are the run's
    assert sum(record.messages[-1].values()) == recorded["messages"]["total"]
    assert sum(n for row in record.placements.values() for n in row.values()) == recorded["allocations"]


def test_the_recorder_thins_its_samples_and_keeps_the_totals():
    """Past max_samples every other sample goes and the period doubles: a long run keeps
    between half and all of max_samples, the first sample, and running totals."""
    scenario = load_scenario(FINITE)
    recorder = RunRecorder(max_samples=50, first_period=0.001)
    r = run_emulation(scenario, RunConfig(policy="drf"), observers=[recorder])
    record = recorder.record
    assert 25 <= len(record.times) <= 51 and record.times[0] == 0.0
    assert all(b >= a for a, b in zip(record.allocations, record.allocations[1:], strict=False))
    assert record.allocations[-1] == r.allocations


def test_an_endless_run_page_draws_the_oracles_levels(tmp_path):
    """On an endless scenario the shares figure carries each user's offline level
    (dashed), from the notion's oracle: DRFH's for drf, TSF's for tsf."""
    out = tmp_path / "endless.html"
    from dgdrf.cli import main

    assert main(["run", "--servers", "6", "--users", "3", "--policy", "drf,tsf", "--html", str(out), "--quiet"]) == 0
    text = out.read_text(encoding="utf-8")
    figures = json.loads(text.split("const FIGURES = ", 1)[1].split(";\n", 1)[0])
    shares = [f for f in figures if f["name"] == "shares"]
    assert [f["label"] for f in shares] == ["drf", "tsf"]
    for f in shares:
        levels = [t for t in f["data"] if t["name"].endswith("(oracle)")]
        assert levels and all(t["line"]["dash"] == "dash" for t in levels)


def test_html_to_a_missing_folder_is_a_one_line_error_before_the_run(capsys, tmp_path):
    assert_one_line_error(*cli(capsys, "run", "--policy", "drf", "--html", tmp_path / "nowhere" / "run.html")[::2], "--html", "no folder")
    assert_one_line_error(*cli(capsys, "run", "--policy", "drf", "--html", tmp_path)[::2], "--html", "is a folder")


def test_a_page_over_5_mb_is_refused():
    big = page("big", [("data", [Figure("shares", {"data": [{"type": "scatter", "x": list(range(600_000)), "y": list(range(600_000))}], "layout": {}})])])
    with pytest.raises(ValueError, match="over the 5 MB"):
        check_size(big, "--html")


def test_the_pages_carry_the_plotly_js_that_plotly_py_writes_for():
    """The inline bundle is plotly.js's cartesian bundle of the version plotly.py's
    figures are written for (a newer plotly.py needs the bundle refreshed: see
    dgdrf/pages/static/README.md)."""
    from plotly.offline._plotlyjs_version import __plotlyjs_version__

    from dgdrf.pages.html import PLOTLY_JS_VERSION, bundle

    assert PLOTLY_JS_VERSION == __plotlyjs_version__
    assert f"plotly.js (cartesian - minified) v{PLOTLY_JS_VERSION}" in bundle()[:200]


def test_an_overlay_page_draws_the_gradient_at_chosen_cycles(tmp_path):
    """``dgdrf overlay --html``: the gradient at the cycles asked, each a drawn graph, and
    its convergence; by the last cycle one node believes itself the centre (the star)."""
    out = tmp_path / "overlay.html"
    from dgdrf.cli import main

    assert main(["overlay", "--protocol", "gradient", "--nodes", "60", "--cycles", "20", "--quiet", "--html", str(out), "--html-cycles", "1,20"]) == 0
    text = out.read_text(encoding="utf-8")
    assert 'src="http' not in text and 'href="http' not in text
    figures = json.loads(text.split("const FIGURES = ", 1)[1].split(";\n", 1)[0])
    graphs = [f for f in figures if f["name"] == "overlay"]
    assert [f["label"] for f in graphs] == ["cycle 1", "cycle 20"]
    stars = [t for t in graphs[-1]["data"] if t["name"] == "believed centre"]
    assert len(stars) == 1 and len(stars[0]["x"]) == 1
    nodes = next(t for t in graphs[-1]["data"] if t["name"] == "nodes")
    assert len(nodes["x"]) == 60
    dom, console = dump_dom(out)
    drawn = drawn_figures(dom)
    assert drawn["overlay"] == [True, True] and drawn["convergence"] == [True] and console == []


@pytest.mark.parametrize(("flags", "fragment"), [(["--html-cycles", "0,5"], "cycles from 1 to 20"), (["--html-cycles", "a"], "whole numbers"), (["--html-cycles", "3", "--metrics-every", "2"], "multiples of --metrics-every")])
def test_bad_html_cycles_are_one_line_errors(capsys, tmp_path, flags, fragment):
    assert_one_line_error(*cli(capsys, "overlay", "--protocol", "cyclon", "--nodes", "20", "--cycles", "20", "--html", tmp_path / "o.html", *flags)[::2], "--html-cycles", fragment)


def test_html_cycles_without_html_is_an_error(capsys):
    assert_one_line_error(*cli(capsys, "overlay", "--protocol", "cyclon", "--nodes", "20", "--cycles", "5", "--html-cycles", "2")[::2], "--html-cycles", "--html FILE")


def test_a_sweep_reports_page_draws_its_figures_in_chromium(tmp_path):
    """``dgdrf report DIR --html`` on a committed sweep: report.html beside report.md,
    the relation tables with their verdicts as HTML, and every PNG of report.md drawn as
    an interactive figure with its series named."""
    import shutil

    sweep = tmp_path / "quick"
    shutil.copytree(ROOT / "bench" / "results" / "quick", sweep)
    from dgdrf.cli import main

    assert main(["report", str(sweep), "--html"]) == 0
    text = (sweep / "report.html").read_text(encoding="utf-8")
    md = (sweep / "report.md").read_text(encoding="utf-8")
    assert 'src="http' not in text and 'href="http' not in text and "<img" not in text
    assert "<td>holds</td>" in text and "<table>" in text
    pngs = md.count("](") - md.count("](http")
    figures = json.loads(text.split("const FIGURES = ", 1)[1].split(";\n", 1)[0])
    assert len(figures) >= pngs >= 4
    names = {t.get("name") for f in figures for t in f["data"]}
    assert {"drf", "dgdrf", "pdgdrf"} <= names  # a series a policy, named on hover and in the legend
    dom, console = dump_dom(sweep / "report.html")
    drawn = drawn_figures(dom)
    assert sum(len(v) for v in drawn.values()) == len(figures) and all(all(v) for v in drawn.values())
    assert {"min-share", "gini", "error-ratio"} <= set(drawn) and console == []


def test_a_sweeps_run_pages_open_from_its_reports_points(tmp_path):
    """``dgdrf sweep --html`` writes each run's page in OUT/pages/KEY.html (not into the
    records), and ``dgdrf report --html`` marks each run behind a figure's points: hover
    names its policy, neighbours, seed and data set, and its link (the customdata a
    click opens) is its page."""
    sweep = tmp_path / "tiny.toml"
    sweep.write_text('[sweep]\nname = "tiny"\npolicies = ["drf", "dgdrf"]\nneighbors = [2, 4]\nseeds = [1]\nservers = [12]\nusers = [4]\n')
    out = tmp_path / "out"
    from dgdrf.cli import main

    assert main(["sweep", str(sweep), "--out", str(out), "--html", "--quiet", "--workers", "2"]) == 0
    pages = sorted(p.name for p in (out / "pages").iterdir())
    records = [json.loads(line) for line in __import__("gzip").open(out / "results.jsonl.gz", "rt")]
    assert pages == sorted(f"{r['key']}.html" for r in records) and len(pages) == 3  # drf's one run stands at every P
    assert all("page" not in r for r in records)
    assert main(["report", str(out), "--html"]) == 0
    text = (out / "report.html").read_text(encoding="utf-8")
    figures = json.loads(text.split("const FIGURES = ", 1)[1].split(";\n", 1)[0])
    marks = [t for f in figures for t in f["data"] if t.get("name", "").startswith("runs")]
    assert marks and all(len(t["customdata"]) == 4 for t in marks)  # drf's run at P = 2 and 4, dgdrf's two
    assert {c for t in marks for c in t["customdata"]} == {f"pages/{p}" for p in pages}
    assert all("policy" in s and "seed 1" in s for t in marks for s in t["text"])
    dom, console = dump_dom(out / "report.html")
    assert all(all(v) for v in drawn_figures(dom).values()) and console == []
    first = next(t for f in figures for t in f["data"] if t.get("name", "").startswith("runs"))  # the min-share figure's
    for k, link in enumerate(first["customdata"]):  # a real click, with the mouse, on each mark
        opened, click_console = click_point(out / "report.html", "min-share", "runs", k)
        assert opened == [(out / link).resolve().as_uri()] and click_console == [], (k, opened, click_console)
    run_dom, run_console = dump_dom(out / "pages" / pages[0])
    assert drawn_figures(run_dom)["shares"] == [True] and run_console == []
