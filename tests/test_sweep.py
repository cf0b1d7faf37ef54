"""The benchmark harness: sweep files, parallel runs, resume, failures, CSV/JSON, report."""

from __future__ import annotations

import csv
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dgdrf.bench.report import write_report
from dgdrf.bench.fingerprint import committed_behaviour
from dgdrf.bench.grid import load_sweep, parse_sweep
from dgdrf.bench.store import RESULT_COLUMNS, RESULTS_JSONL, STALE_JSONL, gzip_member, iter_records, read_records
from dgdrf.bench.sweep import run_sweep
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.errors import ConfigError
from dgdrf.model.generators import google_2011_scenario


def record_lines(out: Path, name: str = RESULTS_JSONL) -> list[str]:
    """The lines of ``out``/``name`` (gzip'd: its members concatenated are one stream)."""
    return gzip.decompress((out / name).read_bytes()).decode().splitlines()


def write_records(out: Path, lines: list[str], name: str = RESULTS_JSONL) -> None:
    """``lines`` as ``out``/``name``, a gzip member each, as a sweep writes them."""
    (out / name).write_bytes(b"".join(gzip_member(x) for x in lines))


def end_with_a_torn_record(out: Path, form: str, plain: str, whole: str, cut: int) -> None:
    """Leave ``out``'s records ending in one cut by an interruption: in the old ``plain``
    form (the directory converted first) the text ``plain`` appended; gzip'd, the member of
    ``whole`` less its last ``cut`` bytes."""
    if form == "plain":
        to_plain_form(out)
        with (out / "results.jsonl").open("a") as fh:
            fh.write(plain)
    else:
        with (out / RESULTS_JSONL).open("ab") as fh:
            fh.write(gzip_member(whole)[:-cut])


def to_plain_form(out: Path) -> None:
    """Make ``out`` a directory as written before records were gzip'd: results.jsonl (and
    stale.jsonl) plain."""
    for name in (RESULTS_JSONL, STALE_JSONL):
        if (out / name).exists():
            (out / name.removesuffix(".gz")).write_text("".join(x + "\n" for x in record_lines(out, name)))
            (out / name).unlink()


def sweep_file(tmp_path: Path, body: str, name: str = "t") -> Path:
    f = tmp_path / f"{name}.toml"
    f.write_text(f'[sweep]\nname = "{name}"\n' + body)
    return f


GRID = 'policies = ["drf", "fifo", "dgdrf"]\nneighbors = [2, 3]\nseeds = [1, 2]\nservers = [6]\nusers = [3, 4]\n'


@pytest.mark.parametrize(
    "body, fragment",
    [
        ('policies = ["drf", "nope"]\nneighbors = [2]\nseeds = [1]\nservers = [4]\nusers = [2]\n', "sweep.policies: unknown policy 'nope'"),
        ('policies = ["drf"]\nneighbors = [0]\nseeds = [1]\nservers = [4]\nusers = [2]\n', "sweep.neighbors: must be a list of integers >= 1, got 0"),
        ('policies = ["drf"]\nneighbors = [2]\nseeds = []\nservers = [4]\nusers = [2]\n', "sweep.seeds: must not be empty"),
        ('policies = ["drf"]\nneighbors = [2]\nseeds = [1]\nusers = [2]\n', "sweep.servers: missing"),
        ('policies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [4]\nusers = [2]\ngosip_period = [1.0]\n', "sweep.gosip_period: unknown run parameter"),
        ('policies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [4]\nusers = [2]\ntick = [0.1, -1.0]\n', "tick: must be positive"),
        ('policies = ["drf"]\nneighbors = [2, 2]\nseeds = [1]\nservers = [4]\nusers = [2]\n', "sweep.neighbors: lists a value twice"),
        ('policies = ["drf"]\nneighbors = [2]\nseeds = [1]\nscenarios = ["missing.toml"]\n', "sweep.scenarios: cannot read"),
        ('policies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [4]\nusers = [2]\n[params]\nloss = [0.1]\n', "params: unknown; a sweep file holds one [sweep] table"),
    ],
)
def test_bad_sweep_files_are_rejected_naming_the_field(tmp_path, body, fragment):
    with pytest.raises(ConfigError) as exc:
        load_sweep(sweep_file(tmp_path, body))
    assert fragment in str(exc.value)


def test_grid_expands_every_combination_with_stable_distinct_keys(tmp_path):
    spec = load_sweep(sweep_file(tmp_path, GRID + "gossip_period = [0.1, 0.05]\n"))
    runs = spec.runs()
    # dgdrf at both neighbour counts; drf and fifo (centralized) once, at the first
    assert len(runs) == (2 + 1 + 1) * 2 * 2 * 2
    assert {r.params["neighbors"] for r in runs if r.params["policy"] == "drf"} == {2}
    assert len({r.key for r in runs}) == len(runs)
    assert {r.params["gradient_period"] for r in runs} == {0.1, 0.05}  # the alias maps to the run parameter
    again = load_sweep(sweep_file(tmp_path, GRID + "gossip_period = [0.1, 0.05]\n"))
    assert sorted(r.key for r in again.runs()) == sorted(r.key for r in runs)


def test_a_changed_scenario_file_changes_the_run_keys(tmp_path):
    sc = tmp_path / "sc.toml"
    sc.write_text('name = "sc"\n[generate]\nkind = "google-2011"\nservers = 4\nusers = 2\nseed = 1\n')
    body = 'policies = ["drf"]\nneighbors = [2]\nseeds = [1]\nscenarios = ["sc.toml"]\n'
    before = {r.key for r in load_sweep(sweep_file(tmp_path, body)).runs()}
    sc.write_text(sc.read_text().replace("seed = 1", "seed = 2"))
    after = {r.key for r in load_sweep(sweep_file(tmp_path, body)).runs()}
    assert before.isdisjoint(after)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A 16-run sweep run once with two worker processes."""
    d = tmp_path_factory.mktemp("sweep")
    spec = load_sweep(sweep_file(d, GRID))
    out = d / "out"
    outcome = run_sweep(spec, out, workers=2, progress=False)
    return spec, out, outcome


def test_sweep_records_every_run_as_json_lines_and_csv(tiny):
    spec, out, outcome = tiny
    assert (outcome.done, outcome.failed, outcome.total) == (16, 0, 16)
    records, bad = read_records(out)
    assert bad == 0 and len(records) == 16
    for rec in records:
        assert set(rec) >= {"key", "sweep", "status", "params", "result", "error", "wall_s", "cpu_s", "peak_rss_mb", "finished_at"}
        assert rec["status"] == "ok" and rec["result"]["invariant_violations"] == []
        assert rec["peak_rss_mb"] > 0 and 0 < rec["cpu_s"]
        assert {rec["result"][k] for k in ("policy", "neighbors", "seed")} == {rec["params"][k] for k in ("policy", "neighbors", "seed")}
    with (out / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 16
    assert set(RESULT_COLUMNS) | {"key", "status", "policy", "neighbors", "seed", "servers", "users", "dataset", "peak_rss_mb", "cpu_s"} <= set(rows[0])
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["name"] == "t" and manifest["runs"] == 16 and manifest["sessions"][0]["runs_done"] == 16


def test_a_sweep_run_equals_the_same_run_alone(tiny):
    _, out, _ = tiny
    rec = next(r for r in read_records(out)[0] if r["params"]["policy"] == "dgdrf" and r["params"]["users"] == 4 and r["params"]["seed"] == 2 and r["params"]["neighbors"] == 3)
    alone = run_emulation(google_2011_scenario(6, 4, 2017), RunConfig(policy="dgdrf", neighbors=3, seed=2)).to_dict()
    for key in ("allocations", "runtime_s", "min_share", "gini", "error_ratio", "shares"):
        assert rec["result"][key] == alone[key]


def test_reproduce_finds_recorded_runs_identical_and_names_what_differs(tiny, tmp_path):
    """bench/reproduce.py (issue 16: faster code must compute what the recorded runs
    computed): every run of the tiny sweep again, identical; a tampered record differs,
    named by key, with exit status 1."""
    import shutil

    _, out, _ = tiny
    script = Path(__file__).resolve().parents[1] / "bench" / "reproduce.py"
    ok = subprocess.run([sys.executable, str(script), str(out), "--policy", "drf,dgdrf", "--workers", "2", "--json", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=600)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "12 of 12 identical" in ok.stdout
    doc = json.loads((tmp_path / "r.json").read_text())
    assert len(doc["runs"]) == 12 and all(r["identical"] for r in doc["runs"])
    tampered = tmp_path / "tampered"
    shutil.copytree(out, tampered)
    lines = record_lines(tampered)
    rec = json.loads(lines[0])
    rec["result"]["min_share"] += 1e-12
    lines[0] = json.dumps(rec)
    write_records(tampered, lines)
    sample = subprocess.run([sys.executable, str(script), str(tampered), "--policy", rec["params"]["policy"], "--seed", str(rec["params"]["seed"])], capture_output=True, text=True, timeout=600)
    assert sample.returncode == 1 and "DIFFERS in min_share" in sample.stdout


def test_rerunning_a_finished_sweep_does_nothing(tiny):
    spec, out, _ = tiny
    again = run_sweep(spec, out, workers=2, progress=False)
    assert (again.done, again.skipped) == (0, 16)


def test_resume_after_a_partial_sweep_and_a_record_cut_mid_write(tmp_path):
    spec = load_sweep(sweep_file(tmp_path, 'policies = ["drf", "fifo"]\nneighbors = [2]\nseeds = [1, 2, 3]\nservers = [5]\nusers = [3]\n'))
    out = tmp_path / "out"
    first = run_sweep(spec, out, workers=1, progress=False, limit=4)
    assert first.done == 4
    with (out / RESULTS_JSONL).open("ab") as fh:
        fh.write(gzip_member(record_lines(out)[0])[:-20])  # what an interruption during a write leaves
    records, bad = read_records(out)
    assert (len(records), bad) == (4, 1)
    rest = run_sweep(spec, out, workers=2, progress=False)  # appends after the cut member
    assert (rest.done, rest.skipped) == (2, 4)
    records, bad = read_records(out)
    assert bad == 1 and sorted(r["key"] for r in records) == sorted(r.key for r in spec.runs())


def test_a_sweep_resumed_on_a_directory_of_plain_records_keeps_every_record(tmp_path):
    """A directory written before records were gzip'd (results.jsonl, a torn line at its end):
    a sweep resumes from its records, appends the new ones to results.jsonl.gz and leaves
    the plain file as it was; reports and frames see every run once."""
    spec = load_sweep(sweep_file(tmp_path, 'policies = ["drf", "fifo"]\nneighbors = [2]\nseeds = [1, 2, 3]\nservers = [5]\nusers = [3]\n'))
    out = tmp_path / "out"
    assert run_sweep(spec, out, workers=1, progress=False, limit=4).done == 4
    to_plain_form(out)
    with (out / "results.jsonl").open("a") as fh:
        fh.write('{"key": "cut mid-wri')
    old = (out / "results.jsonl").read_text()
    before, bad = read_records(out)
    assert (len(before), bad) == (4, 1)
    rest = run_sweep(spec, out, workers=2, progress=False)
    assert (rest.done, rest.skipped) == (2, 4)
    assert (out / "results.jsonl").read_text() == old and len(record_lines(out)) == 2
    records, bad = read_records(out)
    assert bad == 1 and sorted(r["key"] for r in records) == sorted(r.key for r in spec.runs())
    assert all(r in records for r in before)
    md = write_report(out, tmp_path / "report").read_text()
    assert "- runs: 6 succeeded" in md


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    good = tmp_path / "good.toml"
    doomed = tmp_path / "doomed.toml"
    for f, name in ((good, "good"), (doomed, "doomed")):
        f.write_text(f'name = "{name}"\n[generate]\nkind = "google-2011"\nservers = 4\nusers = 2\nseed = 1\n')
    spec = load_sweep(sweep_file(tmp_path, 'policies = ["drf"]\nneighbors = [2]\nseeds = [1, 2]\nscenarios = ["good.toml", "doomed.toml"]\n'))
    doomed.unlink()  # gone between planning and running
    out = tmp_path / "out"
    outcome = run_sweep(spec, out, workers=2, progress=False)
    assert (outcome.done, outcome.failed) == (4, 2)
    records, _ = read_records(out)
    failed = [r for r in records if r["status"] == "error"]
    assert {r["params"]["dataset"] for r in failed} == {"doomed"}
    assert all("doomed.toml" in r["error"] and r["result"] is None for r in failed)
    with (out / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert sorted(r["status"] for r in rows) == ["error", "error", "ok", "ok"]
    # failed runs are finished runs: not redone unless asked
    assert run_sweep(spec, out, workers=2, progress=False).done == 0
    assert run_sweep(spec, out, workers=2, progress=False, retry_failed=True).done == 2


def test_a_run_over_the_time_limit_is_killed_and_recorded(tmp_path):
    # a run of well over a minute (300 servers, 100 users), not one of about a second,
    # whose end before the limit depended on the machine's speed
    spec = load_sweep(sweep_file(tmp_path, 'policies = ["dgdrf"]\nneighbors = [2]\nseeds = [1]\nservers = [300]\nusers = [100]\n'))
    outcome = run_sweep(spec, tmp_path / "out", workers=1, progress=False, timeout=1.0)
    assert (outcome.done, outcome.failed) == (1, 1)
    (rec,) = read_records(tmp_path / "out")[0]
    assert rec["error"] == "timed out after 1 s"


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_the_workers_and_a_rerun_resumes(tmp_path, sig):
    f = sweep_file(tmp_path, 'policies = ["dgdrf"]\nneighbors = [2, 3]\nseeds = [1, 2, 3]\nservers = [8]\nusers = [4]\n')
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "dgdrf", "sweep", str(f), "--out", str(out), "--workers", "1", "--quiet"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not read_records(out)[0]:
        time.sleep(0.1)
    descendants = _children(proc.pid)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    time.sleep(0.5)
    alive = [p for p in descendants if os.path.exists(f"/proc/{p}") and "dgdrf-sweep" in Path(f"/proc/{p}/cmdline").read_text(errors="replace")]
    assert alive == []
    done = len(read_records(out)[0])
    assert 1 <= done < 6
    rerun = subprocess.run(cmd[:-1], capture_output=True, text=True, timeout=300)  # without --quiet: its summary
    assert rerun.returncode == 0, rerun.stderr
    assert f"{6 - done} runs done" in rerun.stderr and f"{done} already recorded" in rerun.stderr


def test_report_writes_figures_tables_and_the_thesis_relations(tiny, tmp_path):
    _, out, _ = tiny
    path = write_report(out, tmp_path / "report")
    files = {p.name for p in (tmp_path / "report").iterdir()}
    for stem in ("min_share", "gini", "error_ratio", "runtime_s"):
        assert {f"{stem}_vs_neighbors_google-2011-6x3.png", f"{stem}_vs_neighbors_google-2011-6x4.png"} <= files
    assert "runtime_ratio_vs_users.png" in files  # fig. 5.11 needs users to vary
    md = path.read_text()
    assert "## Thesis relations on these results" in md
    dgdrf_4 = [r for r in read_records(out)[0] if r["params"]["policy"] == "dgdrf" and r["params"]["users"] == 4]
    allocations = sum(r["result"]["allocations"] for r in dgdrf_4)
    assert f"| google-2011-6x4 | dgdrf makes no errors, at every P | 0.00 % at every P (tables 5.3/5.4, other sizes) | 0 wrong of {allocations:,} allocations in 4 runs | none; excludes one wrong allocation | holds |" in md
    assert "median of 2 seeds (1, 2)" in md
    # drf ran once per seed (at 2 neighbours) and stands for every neighbour count
    table = md[md.index("| neighbours | drf |"):].split("\n\n")[0].splitlines()
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1] for line in table[2:]}
    assert set(rows) == {"2", "3"} and rows["2"] == rows["3"]
    for name in files - {"report.md"}:
        assert f"({name})" in md  # every figure is linked from the markdown
        assert (tmp_path / "report" / name).read_bytes()[:4] == b"\x89PNG"


def test_report_of_a_gossip_rate_sweep_draws_fig_5_12(tmp_path):
    spec = load_sweep(sweep_file(tmp_path, 'policies = ["drf", "pdgdrf"]\nneighbors = [2]\nseeds = [1]\nservers = [6]\nusers = [3]\ngossip_period = [0.1, 0.05]\n'))
    run_sweep(spec, tmp_path / "out", workers=2, progress=False)
    write_report(tmp_path / "out")
    md = (tmp_path / "out" / "report.md").read_text()
    assert (tmp_path / "out" / "runtime_ratio_vs_gradient_rate.png").exists()
    assert "| 3 | pdgdrf | 2 | 1 |" in md and "| 3 | pdgdrf | 2 | 2 |" in md  # users, policy, P, exchanges per tick


def test_report_and_sweep_cli_errors_are_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "dgdrf", "report", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("dgdrf: error:") and "no results found" in r.stderr
    bad = sweep_file(tmp_path, 'policies = "drf"\nneighbors = [2]\nseeds = [1]\nservers = [4]\n')
    r = subprocess.run([sys.executable, "-m", "dgdrf", "sweep", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "sweep.users: missing" in r.stderr


def test_parse_sweep_accepts_single_values_for_lists():
    spec = parse_sweep({"sweep": {"name": "one", "policies": "drf", "neighbors": 2, "seeds": 1, "servers": 4, "users": 2, "latency_ms": [1.0, 2.0]}})
    (run,) = spec.runs()
    assert run.params["latency_ms"] == [1.0, 2.0]


def test_report_counts_a_single_wrong_dgdrf_allocation_as_a_failed_relation(tiny, tmp_path):
    """One wrong allocation in thousands is still an error: the check counts them, it
    does not round a ratio to "0.0 %"."""
    _, out, _ = tiny
    records, _ = read_records(out)
    changed = tmp_path / "results"
    changed.mkdir()
    with (changed / "results.jsonl").open("w") as f:
        hit = False
        for rec in records:
            p, res = rec["params"], rec["result"]
            if not hit and p["policy"] == "dgdrf" and p["users"] == 4:
                res["error_ratio"] = 1 / res["allocations"]
                hit = True
            f.write(json.dumps(rec) + "\n")
    md = write_report(changed, tmp_path / "report").read_text()
    assert "| google-2011-6x4 | dgdrf makes no errors, at every P | 0.00 % at every P (tables 5.3/5.4, other sizes) | 1 wrong of " in md
    line = next(x for x in md.splitlines() if x.startswith("| google-2011-6x4 | dgdrf makes no errors"))
    assert "| none; excludes one wrong allocation | **fails** |" in line


def test_report_holds_the_thesis_figures_against_ours_and_lists_runs_that_did_not_saturate(tiny, tmp_path):
    """Each relation states the thesis's figure, ours, the tolerance with the alternative
    it excludes and the verdict, and fails beyond the tolerance: here runs made to look
    like thesis-100x20's, where pdgdrf errs 2 % (thesis table 5.3: 15.7-38.5 % at P = 2-10,
    38.5 % and 22.3 % at P = 2 and 3) and is slower than dgdrf at P = 3 (fig. 5.8: dgdrf is
    the slowest), and one run stalled."""
    _, out, _ = tiny
    records, _ = read_records(out)
    changed = tmp_path / "results"
    changed.mkdir()
    with (changed / "results.jsonl").open("w") as f:
        for rec in records:
            if rec["params"]["users"] != 4:
                continue
            rec["params"]["dataset"] = "thesis-100x20"
            rec["result"]["servers"], rec["result"]["users"] = 100, 20
            f.write(json.dumps(rec) + "\n")
            if rec["params"]["policy"] == "dgdrf":
                pd = json.loads(json.dumps(rec))
                pd["key"] = "pd-" + rec["key"]
                pd["params"]["policy"] = "pdgdrf"
                del pd["params"]["stamped_gradient_revision"]  # pdgdrf runs the toolbox gradient
                pd["provenance"]["behaviour"] = committed_behaviour(pd["params"])  # and behaves as pdgdrf
                pd["result"]["error_ratio"] = 0.02
                pd["result"]["runtime_s"] *= 3.0 if pd["params"]["neighbors"] == 3 else 0.5
                f.write(json.dumps(pd) + "\n")
        stalled = json.loads(json.dumps(next(r for r in records if r["params"]["policy"] == "drf" and r["params"]["users"] == 4)))
        stalled["key"] = "stalled"
        stalled["params"] |= {"dataset": "thesis-100x20", "seed": 9}
        stalled["result"] |= {"stop_reason": "stalled", "saturated": False, "servers": 100, "users": 20}
        f.write(json.dumps(stalled) + "\n")
    md = write_report(changed, tmp_path / "report").read_text()
    lines = {x.split(" | ")[1]: x for x in md.splitlines() if x.startswith("| thesis-100x20 | ")}
    err = lines["pdgdrf's error ratio at each P"]
    assert "| 15.7 %-38.5 % (table 5.3, per P) | 2.0 % over P; off: P=2: 2.0 % vs 38.5 %; P=3: 2.0 % vs 22.3 % | ± 5 points at each P; excludes table 5.4's, of the other data set (2.8 to 26.1 points from table 5.3's) | **fails** | ours − table 5.3's: -36.4 to -20.3 points at 2 P; our 2 seeds agree at every P |" in err
    slowest = lines["dgdrf slowest, pdgdrf next (pdgdrf / dgdrf run-time)"]
    assert "below 1 at every P (fig. 5.8)" in slowest and "pdgdrf as slow or slower at P=3" in slowest and "| < 1; excludes pdgdrf as slow as dgdrf (1.00 at every P) | **fails** |" in slowest
    assert "| none; excludes one run ending otherwise | **fails** |" in lines["every run ends at saturation; probes may end stranded (4.2)"]
    assert "## Runs that did not end at saturation (failures)" in md
    assert "| thesis-100x20 | drf | 2 | 9 | stalled |" in md


def test_report_percentages_keep_a_small_non_zero_ratio_visible():
    from dgdrf.bench.report import _pct

    assert _pct(0.0) == "0.0 %"
    assert _pct(5 / 12119) == "0.041 %"  # DGDRF's wrong allocations on thesis-200x40, P = 2
    assert _pct(0.1016) == "10.2 %"
    assert _pct(None) == "–"


def _write_aged_copy(out: Path, dest: Path, age) -> int:
    """Copy the records of ``out`` to ``dest``/results.jsonl, with ``age(params)`` (which
    edits them in place, True when it did) making chosen records look made by older code
    under another key; returns how many it aged. Plain, as records were before they were
    gzip'd: old records are in that form (reports and sweeps read it)."""
    from dgdrf.bench.staleness import is_stale

    dest.mkdir()
    aged = 0
    with (dest / "results.jsonl").open("w") as f:
        for rec in read_records(out)[0]:
            rec = json.loads(json.dumps(rec))
            if age(rec["params"]):
                rec["key"] = "old-" + rec["key"]
                assert is_stale(rec)
                aged += 1
            f.write(json.dumps(rec) + "\n")
    return aged


def test_runs_recorded_with_an_older_gradient_are_rerun_and_left_out_of_reports(tiny, tmp_path):
    """A change that alters a policy's results (overlay/gradient.py REVISION) must not
    mix old and new records: an old run has another key, so a sweep runs it again, and
    a report leaves it out and says so."""
    from dgdrf.bench.staleness import revision_params
    from dgdrf.nodes.protocol import PROTOCOL_REVISION
    from dgdrf.overlay.gradient import PREFERENCE_REVISION, REVISION

    spec, out, _ = tiny
    protocol = {"protocol_revision": PROTOCOL_REVISION}  # every policy's
    preference = protocol | {"gradient_preference_revision": PREFERENCE_REVISION}  # every policy with a gradient
    assert revision_params("dgdrf", {}) == preference | {"stamped_gradient_revision": REVISION}
    assert revision_params("dgdrf", {"gradient_memory": 0}) == preference  # no memory: the toolbox's behaviour
    assert revision_params("pdgdrf", {}) == revision_params("ddrf-gradient", {}) == preference  # toolbox
    assert revision_params("drf", {}) == revision_params("ddrf-random", {}) == revision_params("probes", {}) == protocol  # no gradient
    assert revision_params("pdgdrf", {"gradient": "stamped"}) == preference | {"stamped_gradient_revision": REVISION}
    def age(params: dict) -> bool:
        if not (params["policy"] == "dgdrf" and params["users"] == 3 and params["seed"] == 1):
            return False
        if params["neighbors"] == 2:
            params["stamped_gradient_revision"] = REVISION - 1
        else:  # recorded before revisions were
            del params["stamped_gradient_revision"]
        return True

    old = tmp_path / "old"
    assert _write_aged_copy(out, old, age) == 2  # P = 2 and 3
    md = write_report(old, tmp_path / "report").read_text()
    assert f"- left out: 2 runs recorded with code that has changed since (dgdrf: stamped_gradient_revision now {REVISION})" in md
    assert "- runs: 14 succeeded" in md
    outcome = run_sweep(spec, old, workers=2, progress=False)
    assert (outcome.skipped, outcome.done) == (14, 2)
    assert "left out: 2 runs" in write_report(old, tmp_path / "again").read_text()  # the old records stay, still left out
    assert "- runs: 16 succeeded" in (tmp_path / "again" / "report.md").read_text()


def test_a_policy_whose_every_run_is_stale_is_reported_as_not_checked(tiny, tmp_path):
    """A grid whose dgdrf runs all predate a change must not lose dgdrf's relations from
    the report without a word: a row says they were not checked, and why."""
    _, out, _ = tiny

    def age(params: dict) -> bool:
        if params["policy"] != "dgdrf":
            return False
        del params["gradient_preference_revision"]  # recorded before it was
        return True

    old = tmp_path / "old"
    assert _write_aged_copy(out, old, age) >= 2
    records, _ = read_records(out)
    md = write_report(old, tmp_path / "report").read_text()
    rows = [line for line in md.splitlines() if "every relation of dgdrf" in line]
    assert len(rows) == len({r["params"]["dataset"] for r in records if r["params"]["policy"] == "dgdrf"}) >= 1
    assert all("**not checked**" in row and "were made by code that has changed since" in row for row in rows)
    assert "dgdrf makes no errors" not in md  # nothing claimed on runs it left out
    fresh = write_report(out, tmp_path / "fresh").read_text()
    assert "not checked" not in fresh and "dgdrf makes no errors" in fresh


def test_fig_5_11_relation_needs_a_real_fall_not_an_end_a_few_per_cent_lower():
    """PDGDRF / DRF against users as recorded on 100 servers: alg. 6 ends 1 % below where
    it starts (no fall; the report once passed it), the overlay variant halves."""
    from dgdrf.bench.report import falls_as_users_grow

    assert not falls_as_users_grow([2.78, 3.05, 2.96, 2.81, 2.75])
    assert falls_as_users_grow([2.85, 2.82, 2.00, 1.39, 1.39])
    assert falls_as_users_grow([2.0, 1.0]) and not falls_as_users_grow([2.0, 1.6]) and not falls_as_users_grow([2.0])


def test_report_of_a_loss_sweep_shows_what_loss_costs(tmp_path):
    """A sweep over --loss: every run still saturates; the report's loss section gives
    each policy's min share, error ratio and run-time against its runs without loss, and
    whether every user holds the same tasks (drf: it does, only later)."""
    spec = load_sweep(sweep_file(tmp_path, 'policies = ["drf", "dgdrf"]\nneighbors = [2]\nseeds = [1]\nservers = [6]\nusers = [3]\nloss = [0.0, 0.05]\n'))
    outcome = run_sweep(spec, tmp_path / "out", workers=2, progress=False)
    assert outcome.failed == 0 and outcome.stops == {}  # every run saturated
    md = write_report(tmp_path / "out").read_text()
    assert "## What message loss costs" in md
    drf = next(x for x in md.splitlines() if x.startswith("| google-2011-6x3 | drf | 0.05 | 0 | 1 saturated |"))
    assert drf.endswith("| yes |")
    assert any(x.startswith("| google-2011-6x3 | dgdrf | 0.05 | 0 | 1 saturated |") for x in md.splitlines())
    # the thesis's relations are of reliable delivery: the lossy dgdrf run (which may err)
    # is left out of them, and the report says so
    assert "The 2 runs with message loss or duplication are left out of every row but the first" in md
    ok = next(x for x in md.splitlines() if "dgdrf makes no errors" in x)
    assert "in 1 runs" in ok


@pytest.mark.parametrize("form", ["gzip", "plain"])
def test_prune_stale_moves_old_records_beside_the_results(tiny, tmp_path, form):
    """Once rerun, records of changed code leave the results for stale.jsonl.gz: reports
    and sweeps read only what the current code made, the old records are kept. A
    directory of plain records (before they were gzip'd) is rewritten gzip'd; its old
    stale.jsonl stays, read before the new records set aside."""
    import shutil

    from dgdrf.bench.staleness import is_stale
    from dgdrf.bench.store import prune_stale

    _, tiny_out, _ = tiny
    out = tmp_path / "out"
    shutil.copytree(tiny_out, out)
    records, _ = read_records(out)
    lines = record_lines(out)
    old, older = json.loads(lines[0]), json.loads(lines[1])
    old["params"]["protocol_revision"] = older["params"]["protocol_revision"] = -1
    old["key"], older["key"] = "old-" + old["key"], "older-" + older["key"]
    write_records(out, [json.dumps(old), *lines])
    write_records(out, [json.dumps(older)], STALE_JSONL)  # moved aside before
    end_with_a_torn_record(out, form, '{"torn\n', '{"key": "torn"}', 10)
    assert read_records(out)[1] == 1
    assert prune_stale(out) == 1
    assert not (out / "results.jsonl").exists() and (out / RESULTS_JSONL).exists()
    kept, bad = read_records(out)
    assert bad == 0 and sorted(r["key"] for r in kept) == sorted(r["key"] for r in records)
    moved = list(iter_records(out, STALE_JSONL))
    assert [r["key"] for r in moved] == [older["key"], old["key"]] and all(is_stale(r) for r in moved)
    assert (out / "stale.jsonl").exists() == (form == "plain")
    assert prune_stale(out) == 0  # nothing left to move


@pytest.mark.parametrize("form", ["gzip", "plain"])
def test_a_torn_line_is_warned_about_once_and_moved_aside(tmp_path, form):
    """A record cut by an interruption (the end of a gzip member, or of an old
    directory's plain line) is warned about once, its text so far kept in
    torn-lines.txt, its run redone; the records before it stay."""
    f = sweep_file(tmp_path, 'policies = ["drf"]\nneighbors = [2]\nseeds = [1, 2]\nservers = [5]\nusers = [3]\n')
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "dgdrf", "sweep", str(f), "--out", str(out), "--workers", "1", "--quiet"]
    assert subprocess.run(cmd, capture_output=True, text=True, timeout=300).returncode == 0
    first_line = record_lines(out)[0]
    end_with_a_torn_record(out, form, '{"key": "cut mid-wri', first_line, 30)
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and "1 unreadable result line(s)" in first.stderr and "torn-lines.txt" in first.stderr
    torn = (out / "torn-lines.txt").read_text()
    if form == "plain":
        assert torn == '{"key": "cut mid-wri\n'
    else:
        assert torn.count("\n") == 1 and first_line.startswith(torn.rstrip("\n"))
    assert not (out / "results.jsonl").exists()  # rewritten gzip'd
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "unreadable" not in again.stderr
    records, bad = read_records(out)
    assert (len(records), bad) == (2, 0)
