"""Provenance (issue 18 item 4): sweep records and manifests say which code made them."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from pathlib import Path

import pytest

import dgdrf
from dgdrf import provenance as prov_mod
from dgdrf.bench.grid import load_sweep, parse_sweep, sweep_digest
from dgdrf.bench.store import read_records
from dgdrf.bench.sweep import run_sweep
from dgdrf.provenance import git_state, provenance

ROOT = Path(__file__).resolve().parents[1]
TINY = '[sweep]\nname = "prov"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1, 2]\nservers = [4]\nusers = [2]\n'
#: the keys every record had before provenance (their values must not change)
RECORD_KEYS = {"key", "sweep", "params", "status", "result", "error", "wall_s", "peak_rss_mb", "cpu_s", "core", "host", "finished_at"}


@pytest.fixture(autouse=True)
def fresh_provenance():
    """Every test collects again (the collection is cached per process)."""
    prov_mod.cache_clear()
    yield
    prov_mod.cache_clear()


def _head() -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


def test_a_sweep_records_and_its_manifest_name_the_commit_python_libraries_and_sweep_file(tmp_path):
    import numpy

    file = tmp_path / "prov.toml"
    file.write_text(TINY)
    spec = load_sweep(file)
    out = tmp_path / "out"
    before = _head()
    outcome = run_sweep(spec, out, workers=1, progress=False)
    after = _head()  # the other commit, should one be made meanwhile
    assert (outcome.done, outcome.failed) == (2, 0)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()[:16]
    manifest = json.loads((out / "sweep.json").read_text())
    records, bad = read_records(out)
    assert bad == 0 and len(records) == 2
    for p in [manifest["provenance"], *(r["provenance"] for r in records)]:
        if before is None:  # the package is not a git checkout here
            assert p["commit"] is None and p["dirty"] is None
        else:
            assert p["commit"] in (before, after) and len(p["commit"]) == 40
            assert isinstance(p["dirty"], bool)
        assert p["python"] == platform.python_version()
        assert p["libraries"]["numpy"] == numpy.__version__
        assert p["dgdrf"] == dgdrf.__version__
        assert p["sweep_digest"] == digest
    for rec in records:
        # one new key, last: the others keep their names, order and values
        assert list(rec)[-1] == "provenance" and set(rec) - {"provenance"} == RECORD_KEYS
        assert rec["status"] == "ok"


def test_a_rerun_that_runs_nothing_keeps_the_manifest_provenance(tmp_path, monkeypatch):
    file = tmp_path / "prov.toml"
    file.write_text(TINY.replace("seeds = [1, 2]", "seeds = [1]"))
    spec = load_sweep(file)
    run_sweep(spec, tmp_path / "out", workers=1, progress=False)
    first = json.loads((tmp_path / "out" / "sweep.json").read_text())["provenance"]
    monkeypatch.setattr(prov_mod, "_collected", lambda: {"commit": "f" * 40, "dirty": False})  # as if another commit
    again = run_sweep(spec, tmp_path / "out", workers=1, progress=False)
    assert again.done == 0
    assert json.loads((tmp_path / "out" / "sweep.json").read_text())["provenance"] == first


def test_without_a_git_checkout_or_without_git_the_commit_is_null(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    outside = tmp_path / "pkg"
    outside.mkdir()
    monkeypatch.setattr(prov_mod, "PACKAGE_DIR", outside)
    p = provenance()
    assert (p["commit"], p["dirty"]) == (None, None)
    assert p["python"] == platform.python_version()  # the rest is still there
    monkeypatch.setattr(prov_mod, "PACKAGE_DIR", ROOT / "dgdrf")
    monkeypatch.setattr(prov_mod, "GIT", str(tmp_path / "no-such-git"))
    prov_mod.cache_clear()
    p = provenance()
    assert (p["commit"], p["dirty"]) == (None, None)
    # and a sweep still records, with a null commit
    file = tmp_path / "prov.toml"
    file.write_text(TINY.replace("seeds = [1, 2]", "seeds = [1]"))
    run_sweep(load_sweep(file), tmp_path / "out", workers=1, progress=False)
    (rec,), _ = read_records(tmp_path / "out")
    assert rec["status"] == "ok" and rec["provenance"]["commit"] is None


def test_dirty_means_tracked_files_under_the_package_differ_from_the_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    repo = tmp_path / "repo"
    pkg = repo / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "mod.py").write_text("x = 1\n")
    (repo / "other.txt").write_text("a\n")
    (repo / ".gitignore").write_text("venv/\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert git_state(pkg) == (head, False)
    (pkg / "new.py").write_text("y = 2\n")  # untracked: not code of the commit, not counted
    (repo / "other.txt").write_text("b\n")  # tracked, but outside the package
    assert git_state(pkg) == (head, False)
    (pkg / "mod.py").write_text("x = 2\n")
    assert git_state(pkg) == (head, True)
    _git(repo, "add", "pkg/mod.py")  # staged still differs from the commit
    assert git_state(pkg) == (head, True)
    # a copy in an ignored directory of a checkout (a virtualenv) was not made by its HEAD
    installed = repo / "venv" / "pkg"
    installed.mkdir(parents=True)
    assert git_state(installed) == (None, None)
    # provenance() reads the package directory once per process
    monkeypatch.setattr(prov_mod, "PACKAGE_DIR", pkg)
    assert provenance()["commit"] == head
    monkeypatch.setattr(prov_mod, "GIT", str(tmp_path / "no-such-git"))
    assert provenance()["commit"] == head  # cached: git is not run again


def test_a_sweep_without_a_file_is_digested_by_its_description():
    spec = parse_sweep({"sweep": {"name": "d", "policies": ["drf"], "neighbors": [2], "seeds": [1], "servers": [4], "users": [2]}})
    text = json.dumps(spec.describe(), sort_keys=True, separators=(",", ":"))
    assert sweep_digest(spec) == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_load_sweep_digests_the_bytes_it_parsed(tmp_path):
    file = tmp_path / "prov.toml"
    file.write_bytes(TINY.replace("\n", "\r\n").encode())  # CRLF still parses, its bytes are digested
    spec = load_sweep(file)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()[:16]
    file.write_text(TINY.replace("drf", "fifo"))  # edited after loading: the grid that runs is the one loaded
    assert sweep_digest(spec) == digest and spec.policies == ["drf"]
