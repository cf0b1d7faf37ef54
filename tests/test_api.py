"""The Python API (dgdrf/api.py): a run is the command line's run, exactly; bad options
are ConfigErrors naming them; a scenario built in code is the one its file gives; a
sweep's frames have one row per run (and per finite job) with the records' values; and
docs/API.md and examples/sweep-analysis.ipynb run as they are written."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import dgdrf
from dgdrf.cli import main
from dgdrf.config import RunConfig, load_scenario
from dgdrf.emulation import run_emulation
from dgdrf.errors import ConfigError, DgdrfError, ScenarioError
from dgdrf.model.generators import google_2011_jobs_scenario, google_2011_scenario

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "dgdrf" / "data" / "default.toml"

pd = pytest.importorskip("pandas")


def without_wall(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "wall_s"}


# -- the package ---------------------------------------------------------------------------
def test_import_dgdrf_is_lazy():
    """``import dgdrf`` loads nothing but the package and its build guard (setup.py imports
    it before numpy exists); the API's names come on first use."""
    code = (
        "import sys, dgdrf\n"
        "before = sorted(m for m in sys.modules if m.startswith(('dgdrf', 'numpy', 'pandas')))\n"
        "names = [callable(getattr(dgdrf, n)) for n in ('run', 'load_scenario', 'scenario', 'sweep', 'results', 'jobs')]\n"
        "print(before, names, 'pandas' in sys.modules, {'run', 'jobs'} <= set(dir(dgdrf)))\n"
        "try:\n    dgdrf.no_such_name\nexcept AttributeError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    assert out == ["['dgdrf', 'dgdrf.build_info'] [True, True, True, True, True, True] False True", "module 'dgdrf' has no attribute 'no_such_name'"]
    assert dgdrf.load_scenario is load_scenario


# -- run -----------------------------------------------------------------------------------
def test_run_is_dgdrf_run_json(capsys, tmp_path):
    """dgdrf.run() on the embedded default is ``dgdrf run --policy drf --json``'s document,
    wall time aside; so is the path of the same file."""
    out = tmp_path / "cli.json"
    assert main(["run", "--policy", "drf", "--quiet", "--json", str(out)]) == 0
    capsys.readouterr()
    cli = json.loads(out.read_text())
    api = dgdrf.run(policy="drf").to_dict()
    assert json.loads(json.dumps(without_wall(api))) == without_wall(cli)
    assert cli["allocations"] == 2820 and cli["stop_reason"] == "saturated"


def test_run_options_are_dgdrf_run_options(tmp_path):
    """Keyword options are the run options, overriding the scenario's settings; the
    scenario's policy is the default policy; a path and the Scenario it holds give the
    same run."""
    file = tmp_path / "small.toml"
    file.write_text('name = "small"\npolicy = "fifo"\ntick = 0.2\n[generate]\nkind = "google-2011"\nservers = 5\nusers = 3\nseed = 4\n')
    scenario = load_scenario(file)
    options = {"seed": 3, "latency_ms": (2, 9), "neighbors": 2}
    expected = run_emulation(scenario, RunConfig.from_settings(scenario.settings, None, policy="fifo", **options)).to_dict()
    assert expected["policy"] == "fifo" and expected["tick"] == 0.2 and expected["seed"] == 3 and expected["latency_ms"] == [2.0, 9.0]
    assert without_wall(dgdrf.run(file, **options).to_dict()) == without_wall(expected)
    assert without_wall(dgdrf.run(str(file), policy="fifo", **options).to_dict()) == without_wall(expected)
    drf = dgdrf.run(scenario, policy="drf", tick=0.05, **options)
    assert (drf.policy, drf.tick, drf.seed) == ("drf", 0.05, 3)


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        ({"tikc": 0.1}, ("tikc: unknown option", "known: policy, seed")),
        ({"tick": -1}, ("tick: must be positive seconds", "got -1")),
        ({"tick": "fast"}, ("tick: must be positive",)),
        ({"seed": 1.5}, ("seed: must be an integer",)),
        ({"latency_ms": (5, 1)}, ("latency_ms: must be [min, max]",)),
        ({"loss": 2}, ("loss:",)),
        ({"policy": "nope"}, ("unknown policy 'nope'", "known policies: drf")),
        ({"scenario": {"servers": []}}, ("scenario: must be a Scenario",)),
    ],
)
def test_run_refuses_bad_options(kwargs, fragments):
    """A bad option is a ConfigError naming it, raised before anything runs (not a
    TypeError)."""
    with pytest.raises(ConfigError) as caught:
        dgdrf.run(**kwargs)
    for f in fragments:
        assert f in str(caught.value)


def test_run_of_a_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(ScenarioError, match="nope.toml: cannot read scenario file"):
        dgdrf.run(tmp_path / "nope.toml")


# -- scenario ------------------------------------------------------------------------------
def test_scenario_in_code_is_the_file_it_would_be(tmp_path):
    """dgdrf.scenario(...) of dicts and (id, vector) pairs is the Scenario the same document
    gives as a file; a generate table is its generator's scenario; settings are checked."""
    servers = [{"id": "big", "capacity": [8, 16], "attributes": {"gpu": True}}, ("small", [4, 8])]
    users = [
        ("alice", [1, 2]),
        {"id": "bob", "weight": 2, "jobs": [{"id": "etl", "demand": [1, 1], "tasks": 20, "duration": {"dist": "exp", "mean": 20}}]},
        {"id": "carol", "jobs": [{"id": "train", "demand": [2, 4], "tasks": 4, "duration": 60, "arrival": 5, "requires": {"gpu": True}}]},
    ]
    built = dgdrf.scenario(servers, users, name="three", tick=0.1, policy="tsf")
    file = tmp_path / "three.json"
    doc = {"name": "three", "tick": 0.1, "policy": "tsf", "resources": ["cpu", "memory"], "users": [
        {"id": "alice", "demand": [1, 2]}, *users[1:]], "servers": [servers[0], {"id": "small", "capacity": [4, 8]}]}
    file.write_text(json.dumps(doc))
    assert built == load_scenario(file)
    assert built.finite_jobs and built.settings == {"tick": 0.1, "policy": "tsf"}
    assert dgdrf.run(built).policy == "tsf"

    generated = dgdrf.scenario(generate={"kind": "google-2011-jobs", "servers": 6, "users": 3, "seed": 5, "horizon": 300})
    reference = google_2011_jobs_scenario(6, 3, 5, horizon=300)
    assert (generated.servers, generated.users, generated.resources) == (reference.servers, reference.users, reference.resources)


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"servers": [("s1", [1, 1])], "users": [("u1", [0.5])]}, ScenarioError, "dgdrf.scenario(): users[0].demand: has 1 values but there are 2 resources"),
        ({"servers": [("s1", [1, -1])], "users": [("u1", [0.5, 0.5])]}, ScenarioError, "servers[0].capacity[1]: must not be negative"),
        ({"servers": [("s1", [1, 1])], "users": [{"id": "u1", "demand": [0.1, 0.1], "requires": {"gpu": True}}]}, ScenarioError, "no server matches its constraint"),
        ({"users": [("u1", [0.5, 0.5])]}, ScenarioError, "servers: must be a non-empty list"),
        ({"generate": {"kind": "google-2011", "servers": 0, "users": 2}}, ScenarioError, "generate.servers: must be a positive integer"),
        ({"servers": [("s1", [1, 1])], "users": [("u1", [0.5, 0.5])], "tikc": 1}, ConfigError, "tikc: unknown option"),
        ({"servers": [("s1", [1, 1])], "users": [("u1", [0.5, 0.5])], "tick": 0}, ConfigError, "tick: must be positive seconds"),
        ({"servers": [("s1", [1, 1])], "users": [("u1", [0.5, 0.5])], "policy": "nope"}, ConfigError, "policy: unknown policy 'nope'"),
    ],
)
def test_scenario_refuses_bad_fields(kwargs, error, fragment):
    with pytest.raises(error) as caught:
        dgdrf.scenario(**kwargs)
    assert fragment in str(caught.value)


# -- sweep, results, jobs ------------------------------------------------------------------
THESIS_WORLD = google_2011_scenario(6, 3, 11)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """One small sweep of two data sets (the thesis's world, and finite jobs) x drf, fifo
    x seeds 1, 2: eight runs."""
    base = tmp_path_factory.mktemp("api-sweep")
    THESIS_WORLD.write_json(base / "endless.json")
    (base / "finite.toml").write_text('name = "finite"\n[generate]\nkind = "google-2011-jobs"\nservers = 4\nusers = 2\nseed = 1\nhorizon = 300\n')
    spec = {"sweep": {"name": "api", "policies": ["drf", "fifo"], "neighbors": [4], "seeds": [1, 2], "scenarios": [str(base / "endless.json"), str(base / "finite.toml")]}}
    out = base / "out"
    outcome = dgdrf.sweep(spec, out, workers=2)
    return spec, out, outcome, base


def test_sweep_records_every_run_once_and_resumes(swept, tmp_path):
    """The outcome counts the grid's runs; a second call (the same grid as a file's path)
    runs nothing."""
    spec, out, outcome, _ = swept
    assert (outcome.total, outcome.done, outcome.failed, outcome.skipped, outcome.interrupted) == (8, 8, 0, 0, False)
    file = tmp_path / "api.toml"
    table = spec["sweep"]
    file.write_text("[sweep]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items()))
    again = dgdrf.sweep(file, out)
    assert (again.total, again.done, again.skipped) == (8, 0, 8)


def test_results_one_row_per_run_with_the_records_values(swept):
    """results(): one row per run, keyed as results.csv is, its parameters and figures
    the records' (and the runs dgdrf.run makes of the same parameters), numbers as numbers."""
    _, out, outcome, base = swept
    frame = dgdrf.results(out)
    assert len(frame) == outcome.total == 8 and frame["key"].is_unique
    csv = pd.read_csv(out / "results.csv")
    assert list(frame["key"]) == list(csv["key"])  # results.csv's order
    assert set(csv.columns) - set(frame.columns) == set()
    assert (frame["status"] == "ok").all() and not frame["stale"].any()
    assert set(frame["policy"]) == {"drf", "fifo"} and sorted(set(frame["seed"])) == [1, 2]
    for column in ("allocations", "min_share", "gini", "runtime_s", "messages", "seed", "neighbors", "wall_s"):
        assert pd.api.types.is_numeric_dtype(frame[column]), column
    assert str(frame["finished_at"].dtype).startswith("datetime64")
    assert frame["allocations"].tolist() == csv["allocations"].tolist()
    assert frame["min_share"].tolist() == pytest.approx(csv["min_share"].tolist(), rel=1e-12)
    row = frame[(frame["dataset"] == "endless") & (frame["policy"] == "drf") & (frame["seed"] == 2)].iloc[0]
    direct = dgdrf.run(base / "endless.json", policy="drf", seed=2, neighbors=4)
    assert (row["allocations"], row["min_share"], row["gini"], row["runtime_s"]) == (direct.allocations, direct.min_share, direct.gini, direct.runtime_s)
    finite = frame[frame["dataset"] == "finite"]
    assert finite["makespan"].notna().all() and (finite["stop_reason"] == "drained").all()
    assert frame[frame["dataset"] == "endless"]["makespan"].isna().all()
    table = frame.groupby(["dataset", "policy"])["allocations"].count()
    assert table.tolist() == [2, 2, 2, 2]


def test_jobs_one_row_per_finite_job_of_each_run(swept):
    """jobs(): every finite job of every run, with its run's key and parameters; the
    values of dgdrf.run's own records of the same run."""
    _, out, _, base = swept
    frame = dgdrf.jobs(out)
    direct = dgdrf.run(base / "finite.toml", policy="fifo", seed=1, neighbors=4)
    assert direct.jobs
    assert len(frame) == 4 * len(direct.jobs)  # the finite data set's four runs, the same jobs each
    assert list(frame.columns[:1]) == ["key"] and list(frame.columns[-7:]) == ["user", "job", "arrival", "first_start", "finish", "tasks", "jct"]
    assert set(frame["dataset"]) == {"finite"}
    mine = frame[(frame["policy"] == "fifo") & (frame["seed"] == 1)]
    assert mine[["user", "job", "arrival", "first_start", "finish", "tasks", "jct"]].to_dict("records") == direct.jobs
    assert (frame["jct"] - (frame["finish"] - frame["arrival"])).abs().max() < 1e-6
    assert frame.groupby("key").size().tolist() == [len(direct.jobs)] * 4


def test_frames_of_runs_without_jobs_and_of_no_runs(swept, tmp_path):
    """A sweep of endless users only has no job rows, an empty frame of the same columns;
    a directory without records gives empty frames; a missing one is a ConfigError."""
    _, out, _, _ = swept
    endless = tmp_path / "endless"
    endless.mkdir()
    from dgdrf.bench.store import RESULTS_JSONL, gzip_member, iter_records

    lines = [json.dumps(r) for r in iter_records(out) if r["params"]["dataset"] != "finite"]
    (endless / RESULTS_JSONL).write_bytes(b"".join(gzip_member(line) for line in lines))
    assert len(dgdrf.results(endless)) == 4 and "makespan" not in dgdrf.results(endless).columns
    none = dgdrf.jobs(endless)
    assert none.empty and list(none.columns) == list(dgdrf.jobs(out).columns)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert dgdrf.results(empty).empty and list(dgdrf.jobs(empty).columns) == ["key", "user", "job", "arrival", "first_start", "finish", "tasks", "jct"]
    with pytest.raises(ConfigError, match="no such directory"):
        dgdrf.results(tmp_path / "missing")


def test_frames_of_a_directory_of_plain_records_are_the_same(swept, tmp_path):
    """A sweep directory written before records were gzip'd (plain results.jsonl) gives the
    same frames; so does one converted from it (python -m dgdrf.bench.store)."""
    import gzip
    import shutil

    from dgdrf.bench.store import RESULTS_JSONL, compress

    _, out, _, _ = swept
    old = tmp_path / "old"
    shutil.copytree(out, old)
    (old / "results.jsonl").write_bytes(gzip.decompress((old / RESULTS_JSONL).read_bytes()))
    (old / RESULTS_JSONL).unlink()
    for _ in range(2):
        assert dgdrf.results(old).equals(dgdrf.results(out)) and dgdrf.jobs(old).equals(dgdrf.jobs(out))
        compress(old)
    assert not (old / "results.jsonl").exists()


def test_sweep_refuses_bad_arguments(tmp_path):
    good = {"sweep": {"name": "x", "policies": ["drf"], "neighbors": [4], "seeds": [1], "servers": [3], "users": [2]}}
    cases = [
        (({"name": "x"},), {}, "needs a [sweep] table"),
        (({"sweep": {**good["sweep"], "policies": ["nope"]}},), {}, "sweep.policies: unknown policy 'nope'"),
        ((tmp_path / "missing.toml",), {}, "does not exist"),
        ((42,), {}, "spec: must be a sweep file's path"),
        ((good,), {"workers": 0}, "workers: must be a positive integer"),
        ((good,), {"limit": -1}, "limit: must be a positive integer"),
        ((good,), {"timeout": 0}, "timeout: must be positive seconds"),
        ((good,), {"scheduler": ""}, "scheduler: must be a Dask scheduler's address"),
    ]
    for args, kwargs, fragment in cases:
        with pytest.raises(ConfigError) as caught:
            dgdrf.sweep(*args, tmp_path / "out", **kwargs)
        assert fragment in str(caught.value), (args, kwargs, caught.value)
    assert not (tmp_path / "out").exists()


def test_sweep_passes_the_scheduler_only_when_given(monkeypatch, tmp_path):
    """run_sweep gets ``scheduler`` only when one is given (it has the keyword since the
    Dask executor came; without, the call is the one that worked before)."""
    import dgdrf.bench.sweep as sweep_module

    calls = []
    monkeypatch.setattr(sweep_module, "run_sweep", lambda spec, out, **kw: calls.append(kw) or sweep_module.SweepOutcome(total=1, skipped=0))
    good = {"sweep": {"name": "x", "policies": ["drf"], "neighbors": [4], "seeds": [1], "servers": [3], "users": [2]}}
    dgdrf.sweep(good, tmp_path / "a")
    dgdrf.sweep(good, tmp_path / "b", scheduler="tcp://127.0.0.1:8786", limit=1)
    assert "scheduler" not in calls[0] and calls[1]["scheduler"] == "tcp://127.0.0.1:8786" and calls[1]["limit"] == 1
    assert calls[0]["progress"] is False


def test_frames_without_pandas_say_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    for frame in (dgdrf.results, dgdrf.jobs):
        with pytest.raises(DgdrfError, match=re.escape("pandas is needed: pip install 'dgdrf[analysis]'")) as caught:
            frame(tmp_path)
        assert isinstance(caught.value, ImportError)


# -- the page and the notebook ---------------------------------------------------------------
def doc_blocks(text: str) -> list[tuple[str, str | None]]:
    """docs/API.md's python blocks, each with the text block right after it (its output)."""
    fences = list(re.finditer(r"^```(\w*)\n(.*?)^```\n", text, re.S | re.M))
    out: list[tuple[str, str | None]] = []
    for i, m in enumerate(fences):
        if m.group(1) != "python":
            continue
        nxt = fences[i + 1] if i + 1 < len(fences) else None
        shown = nxt.group(2) if nxt is not None and nxt.group(1) == "text" and not text[m.end():nxt.start()].strip() else None
        out.append((m.group(2), shown))
    return out


def test_api_page_runs_as_written(monkeypatch, tmp_path):
    """Every python block of docs/API.md runs, in order, from the repository's root, and
    prints the output the page shows after it."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the page's sweep writes here
    blocks = doc_blocks((ROOT / "docs" / "API.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 6 and all(shown is not None for _, shown in blocks)
    namespace = {"__name__": "__main__"}
    for n, (code, shown) in enumerate(blocks, 1):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"docs/API.md block {n}", "exec"), namespace)
        got = [line.rstrip() for line in printed.getvalue().splitlines()]
        assert got == [line.rstrip() for line in (shown or "").splitlines()], f"docs/API.md block {n}: the output shown is not what it prints"


def test_example_notebook_runs_and_has_one_row_per_run(monkeypatch, tmp_path):
    """examples/sweep-analysis.ipynb runs top to bottom (its last cell asserts one row per
    run); its frame, asked after, has one row per run of the sweep it ran."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the kernel's tempfile: the notebook's sweep writes here
    nb = nbformat.read(ROOT / "examples" / "sweep-analysis.ipynb", as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit the notebook with its outputs cleared"
    nb.cells.append(nbformat.v4.new_code_cell('import json\nprint(json.dumps({"rows": len(df), "runs": outcome.total, "keys": df["key"].nunique(), "out": str(out)}))'))
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=180, resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = [o["text"] for o in nb.cells[-1].outputs if o.get("output_type") == "stream" and o.get("name") == "stdout"]
    seen = json.loads("".join(printed))
    assert seen["rows"] == seen["runs"] == seen["keys"] == 4
    assert Path(seen["out"]).is_relative_to(tmp_path) and (Path(seen["out"]) / "fairness.png").stat().st_size > 0
    assert len(dgdrf.results(seen["out"])) == 4


def test_the_pages_sweep_script_runs_as_a_file(tmp_path):
    """The page's sweep block is a whole script: saved as a file and run, its sweep's
    processes import it and run nothing of it, and it prints what the page shows."""
    blocks = doc_blocks((ROOT / "docs" / "API.md").read_text(encoding="utf-8"))
    code, shown = next((c, s) for c, s in blocks if "dgdrf.sweep(" in c)
    assert code.lstrip().startswith("import") and 'if __name__ == "__main__":' in code
    script = tmp_path / "sweep_script.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == (shown or "").splitlines()
