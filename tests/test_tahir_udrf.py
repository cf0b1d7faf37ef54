"""bench/papers/tahir_udrf.py's Pareto programme (Thm. 1 in the paper's terms): offline UDRF's
allocation of example 12 leaves half of hadoop to u1's job1, the paper's DRF bundle 48
runs of it, the programme's own optimum nothing; the online run's streams count as the
paper's jobs by their least-run task; and the committed page's verdicts are the raw
figures', each printed one failing on its alternative."""

from __future__ import annotations

from pathlib import Path

from bench_scripts import committed_raw, load

from dgdrf.bench.relations import count
from dgdrf.model.udrf import udrf_drf_baseline, udrf_offline

ROOT = Path(__file__).resolve().parents[1]

udrf_page = load("bench/papers/tahir_udrf.py")
INSTANCE = udrf_page.instance_raw(udrf_page.INSTANCE)


def test_offline_udrf_is_not_pareto_efficient_and_the_programme_says_where():
    jobs = udrf_offline(udrf_page.INSTANCE).jobs
    got = udrf_page.pareto_gain(INSTANCE, jobs)
    assert got["gain"] == 28 and got["best"]["u1"]["job1"] == 56  # hadoop's other half
    assert all(got["best"][u][j] == x for u, js in jobs.items() for j, x in js.items() if (u, j) != ("u1", "job1"))  # nobody else moves
    assert udrf_page.pareto_gain(INSTANCE, got["best"])["gain"] == 0  # the programme's optimum is Pareto-efficient


def test_the_drf_bundle_wastes_hadoop():
    assert udrf_page.pareto_gain(INSTANCE, udrf_drf_baseline(udrf_page.INSTANCE).jobs)["gain"] == 48  # 56 - 8 runs of job1


def test_a_job_of_parts_runs_as_often_as_its_whole_instances():
    tasks = {"u1-job1": 56, "u1-job2": 8, "u2": 16, "u3": 8, "u4": 8}
    jobs = udrf_page.online_jobs(tasks, {"u2": {"job": 8}})
    assert jobs == {"u1": {"job1": 56, "job2": 8}, "u2": {"job": 8}, "u3": {"job": 8}, "u4": {"job": 8}}
    assert udrf_page.pareto_gain(INSTANCE, jobs)["gain"] == 2  # u3 could run twice more in public-IP


def test_the_committed_page_judges_thm1_from_the_allocation():
    raw = committed_raw(udrf_page)
    tables = udrf_page.tables(raw)
    rows = {r.where: r for t in tables for r in t.relations if r.printed}
    thm1 = rows["Thm. 1"]
    assert thm1.holds is False and thm1.excludes_its_alternative()
    assert thm1.judge(udrf_page.pareto_gain(raw["instance"], raw["udrf"]["jobs"])["best"])  # a Pareto-efficient allocation passes
    assert all(r.excludes_its_alternative() for r in rows.values() if r.judge is not None)
    assert count(tables) == (5, 6)
    derived = [r for t in tables for r in t.relations if not r.printed]
    assert any("56" in r.paper and r.where == "fig. 5" for r in derived)  # fig. 5 prints no figure: the 56 is ours
