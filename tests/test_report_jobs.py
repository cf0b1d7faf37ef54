"""`dgdrf report` on sweeps whose runs have jobs that arrive and finish (dgdrf/bench/report.py):
drained is a normal end, a Jobs section draws the JCT distribution and the shares over time
and tabulates mean and p95 JCT, makespan and fairness over time-averaged shares against
drf's (the numbers checked against the records), a run left at max_time with tasks
unfinished is a failure, and a sweep of the thesis's endless users has no Jobs section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dgdrf.bench.report import _fmt, write_report
from dgdrf.bench.store import read_records
from dgdrf.cli import main
from dgdrf.model.scenario import build_scenario

SCENARIOS = ("jobs-a", "jobs-b")
POLICIES = ("drf", "fifo", "dgdrf")


def scenario(name: str, longer: float):
    """4 servers (one with a gpu), 3 users: u1 a job of 10 tasks at 0 and one of 2 at 4,
    u2 3 tasks that require the gpu at 1, u3 6 tasks at 0.5; ``longer``: seconds added to
    the durations of u1's first job and u3's."""
    servers: list[dict[str, Any]] = [{"id": "s1", "capacity": [2, 2]}, {"id": "s2", "capacity": [2, 2]}, {"id": "s3", "capacity": [2, 4]}, {"id": "g1", "capacity": [2, 2], "attributes": {"gpu": True}}]
    return build_scenario(["cpu", "mem"], servers, [
        {"id": "u1", "jobs": [{"id": "a", "demand": [1, 1], "tasks": 10, "duration": 3 + longer, "arrival": 0},
                              {"id": "b", "demand": [1, 0.5], "tasks": 2, "duration": 2, "arrival": 4}]},
        {"id": "u2", "jobs": [{"id": "c", "demand": [1, 1], "tasks": 3, "duration": 2, "arrival": 1, "requires": {"gpu": True}}]},
        {"id": "u3", "jobs": [{"id": "d", "demand": [0.5, 1], "tasks": 6, "duration": 2 + longer, "arrival": 0.5}]},
    ], name=name)  # fmt: skip


def sweep(d: Path, name: str, body: str) -> Path:
    """Run the sweep file ``[sweep] name = name`` + ``body`` in ``d`` as `dgdrf sweep` does; its output directory."""
    f = d / f"{name}.toml"
    f.write_text(f'[sweep]\nname = "{name}"\n' + body)
    out = d / name
    assert main(["sweep", str(f), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> Path:
    """Two scenarios with jobs x drf, fifo, dgdrf x seeds 1, 2 (12 runs), sampled every 0.5 s."""
    d = tmp_path_factory.mktemp("jobs")
    for i, name in enumerate(SCENARIOS):
        scenario(name, 2.0 * i).write_json(d / f"{name}.json")
    scenarios = ", ".join(f'"{n}.json"' for n in SCENARIOS)
    policies = ", ".join(f'"{p}"' for p in POLICIES)
    return sweep(d, "jobs", f"policies = [{policies}]\nneighbors = [2]\nseeds = [1, 2]\nscenarios = [{scenarios}]\nsample_every = 0.5\n")


@pytest.fixture(scope="module")
def endless(tmp_path_factory) -> Path:
    """A sweep of the thesis's world: endless users, to saturation."""
    return sweep(tmp_path_factory.mktemp("endless"), "endless", 'policies = ["drf", "dgdrf"]\nneighbors = [2]\nseeds = [1]\nservers = [6]\nusers = [3]\n')


def section(md: str, heading: str) -> str:
    """The text from the heading that starts with ``heading`` up to the next heading of its level or above."""
    start = md.index(heading)
    level = heading.split(" ")[0]
    ends = [i for i in (md.find("\n" + "#" * n + " ", start + len(heading)) for n in range(1, len(level) + 1)) if i >= 0]
    return md[start : min(ends, default=len(md))]


def table_row(text: str, first: str) -> list[str]:
    (line,) = [x for x in text.splitlines() if x.startswith(f"| {first} |")]
    return [c.strip() for c in line.strip("|").split("|")]


def test_drained_runs_are_normal_ends_and_the_thesis_sections_leave_them_out(jobs, tmp_path):
    records, _ = read_records(jobs)
    assert len(records) == 12 and {r["result"]["stop_reason"] for r in records} == {"drained"}
    md = write_report(jobs, tmp_path / "report").read_text()
    assert "- runs with jobs that arrive and finish: 12 of 12, on jobs-a, jobs-b; the thesis's sections leave them out (see Jobs)" in md
    relations = section(md, "## Thesis relations on these results")
    for name in SCENARIOS:
        row = table_row(relations, name)
        assert row[1].startswith("every run drains") and row[3] == "6 drained" and row[5] == "holds"
    assert "Runs that did not end" not in md and "**fails**" not in md
    # no thesis figure or relation made of final shares and run-times to saturation
    headings = [x for x in md.splitlines() if x.startswith("#")]
    assert headings == ["# Sweep `jobs`", "## Thesis relations on these results", "## Jobs", "### jobs-a (4 servers, 3 users)", "### jobs-b (4 servers, 3 users)", "## Messages and bytes per allocation tick"]
    assert "dgdrf makes no errors" not in md
    assert not list((tmp_path / "report").glob("error_curve_*.png"))
    # messages per tick keep them
    assert "| jobs-a | dgdrf |" in section(md, "## Messages and bytes per allocation tick")


def test_the_jobs_section_draws_the_jct_distribution_and_the_shares_over_time(jobs, tmp_path):
    md = write_report(jobs, tmp_path / "report").read_text()
    assert "## Jobs" in md
    files = {p.name for p in (tmp_path / "report").iterdir()}
    for name in SCENARIOS:
        part = section(md, f"### {name} (4 servers, 3 users)")
        for png in (f"jct_cdf_{name}.png", f"shares_over_time_{name}.png"):
            assert png in files and f"]({png})" in part
            assert (tmp_path / "report" / png).read_bytes()[:4] == b"\x89PNG"
        assert "every job of every seed pooled per policy (seeds 1, 2)" in part
        assert "one panel per policy, its run of seed 1, the lowest, sampled every 0.5 s" in part


def test_the_jobs_table_holds_the_records_pooled_jcts_makespans_and_fairness_against_drf(jobs, tmp_path):
    records, _ = read_records(jobs)
    md = write_report(jobs, tmp_path / "report").read_text()
    for name in SCENARIOS:
        part = section(md, f"### {name} (4 servers, 3 users)")
        want = {}
        for policy in POLICIES:
            res = [r["result"] for r in records if r["params"]["dataset"] == name and r["params"]["policy"] == policy]
            jcts = [j["jct"] for r in res for j in r["jobs"]]
            assert len(res) == 2 and None not in jcts
            want[policy] = {
                "mean": float(np.mean(jcts)),
                "p95": float(np.percentile(jcts, 95)),
                "makespan": float(np.median([r["makespan"] for r in res])),
                "jain": float(np.median([r["jain_time_avg"] for r in res])),
                "gini": float(np.median([r["gini_time_avg"] for r in res])),
            }
        for policy in POLICIES:
            row = table_row(part, policy)
            assert row[1:3] == ["2", "2 drained"]
            for k, key in enumerate(("mean", "p95", "makespan", "jain", "gini")):
                value, vs = row[3 + 2 * k], row[4 + 2 * k]
                assert value == _fmt(want[policy][key]), (name, policy, key)
                assert vs == ("" if policy == "drf" else f"x{want[policy][key] / want['drf'][key]:.2f}"), (name, policy, key)
    # the scenarios differ and so do the policies: the table is not one row repeated
    assert table_row(section(md, "### jobs-a"), "fifo")[3] != table_row(section(md, "### jobs-a"), "drf")[3]


def test_a_run_left_at_max_time_with_tasks_unfinished_is_a_failure(tmp_path):
    d = tmp_path / "short"
    d.mkdir()
    scenario("jobs-a", 0.0).write_json(d / "jobs-a.json")
    out = sweep(d, "short", 'policies = ["drf", "fifo"]\nneighbors = [2]\nseeds = [1]\nscenarios = ["jobs-a.json"]\nmax_time = 4.0\n')
    (rec, *_) = [r for r in read_records(out)[0] if r["params"]["policy"] == "fifo"]
    left = sum(rec["result"]["unfinished_tasks"].values())
    unfinished_jobs = sum(j["jct"] is None for j in rec["result"]["jobs"])
    assert rec["result"]["stop_reason"] == "max_time" and left > 0 and unfinished_jobs > 0
    md = write_report(out).read_text()
    assert table_row(section(md, "## Thesis relations on these results"), "jobs-a")[5] == "**fails**"
    assert "## Runs that did not end at saturation or drain (failures)" in md
    assert f"| jobs-a | fifo | 2 | 1 | max_time ({left} tasks of finite jobs unfinished) |" in md
    assert table_row(section(md, "### jobs-a (4 servers, 3 users)"), "fifo")[2] == f"1 max_time ({unfinished_jobs} of 4 jobs unfinished)"
    finished = any(j["jct"] is not None for r in read_records(out)[0] for j in r["result"]["jobs"])
    assert ("No job finished on jobs-a: no distribution of job completion times." in md) == (not finished)
    assert (out / "jct_cdf_jobs-a.png").exists() == finished


def test_a_sweep_of_the_thesis_world_has_no_jobs_section_and_keeps_its_own(endless, jobs, tmp_path):
    md = write_report(endless, tmp_path / "thesis").read_text()
    assert "## Jobs" not in md and "with jobs" not in md and "drain" not in md
    assert "| every run ends at saturation; probes may end stranded (4.2) | runs end at saturation (1.5.5) | 2 saturated | none; excludes one run ending otherwise | holds |" in md
    assert not list((tmp_path / "thesis").glob("jct_cdf_*")) and not list((tmp_path / "thesis").glob("shares_over_time_*"))
    # merged with the sweep with jobs: each data set gets its own sections
    both = write_report([endless, jobs], tmp_path / "both").read_text()
    assert "## Jobs" in both and "### jobs-a (4 servers, 3 users)" in both and "google-2011-6x3" not in section(both, "## Jobs")
    assert "| google-2011-6x3 | dgdrf makes no errors, at every P |" in both
    assert "| google-2011-6x3 | every run ends at saturation; probes may end stranded (4.2) |" in both
    assert "The 12 runs with jobs (on jobs-a, jobs-b) have only the first row" in both


def test_a_drained_runs_table_leads_with_jobs_and_fairness_over_time_and_shows_no_empty_fairness(capsys):
    """A run of finite jobs ends with every task done, everyone holding nothing: its shares
    at the end (min 0, Gini 0, Jain 1) would read as perfectly fair. The table leads with
    what the papers compare (makespan, JCTs, shares averaged over time), and its rows of
    the end are labelled so and say "drained" instead of those numbers."""
    from test_cli import cli

    rc, out, _ = cli(capsys, "run", "--scenario", Path(__file__).parent.parent / "configs" / "google-finite-8x4.toml", "--policy", "drf,tsf")
    assert rc == 0
    names = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│") and line.split("│")[1].strip()]
    assert names.index("makespan (s)") < names.index("min share, time-averaged") < names.index("error ratio") < names.index("min share (policy's notion), at the end")
    rows = {line.split("│")[1].strip(): line.split("│")[2:4] for line in out.splitlines() if line.startswith("│")}
    for name in ("min share (policy's notion), at the end", "Gini (lower is fairer), at the end", "Jain's index, at the end", "utilisation cpu, at the end"):
        assert [c.strip() for c in rows[name]] == ["- (drained)"] * 2, (name, rows[name])
    assert all(0 < float(c) < 1 for name in ("min share, time-averaged", "Gini, time-averaged shares") for c in rows[name])
    assert "-0.0%" not in out


def test_a_saturated_runs_table_keeps_the_thesis_order(capsys):
    """Endless tasks (the thesis's users): the run ends saturated, and its shares then are
    the measure (ch. 5), first after how the run ended."""
    from test_cli import cli

    rc, out, _ = cli(capsys, "run", "--servers", "12", "--users", "4", "--policy", "drf")
    names = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│") and line.split("│")[1].strip()]
    assert rc == 0 and names[:6] == ["allocations", "run-time (simulated s)", "stopped because", "min dominant share", "Gini (lower is fairer)", "Jain's index"]
    assert "utilisation cpu" in names and not any("at the end" in n or "time-averaged" in n for n in names)
