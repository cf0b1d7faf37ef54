"""One output directory per sweep file: a sweep that is a part of another (``part_of``)
runs a subset of the whole's grid into the whole's directory and manifest; any other
sweep is refused a directory that holds another sweep's results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgdrf.bench.grid import load_sweep

from dgdrf.bench.store import read_records

from dgdrf.bench.sweep import run_sweep
from dgdrf.cli import main
from dgdrf.errors import ConfigError

WHOLE = '[sweep]\nname = "whole"\npolicies = ["drf", "fifo"]\nneighbors = [2]\nseeds = [1, 2]\nservers = [5]\nusers = [3]\n'
PART = '[sweep]\nname = "part"\npart_of = "whole.toml"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [5]\nusers = [3]\n'


def _files(tmp_path: Path, part: str = PART) -> tuple[Path, Path]:
    whole, piece = tmp_path / "whole.toml", tmp_path / "part.toml"
    whole.write_text(WHOLE)
    piece.write_text(part)
    return whole, piece


def test_a_part_runs_into_its_whole_sweeps_directory_which_then_resumes(tmp_path, capsys, monkeypatch):
    whole, piece = _files(tmp_path)
    part = load_sweep(piece)
    assert part.home().name == "whole" and part.parent is not None
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(piece), "--quiet", "--workers", "1"]) == 0  # default out: results/<whole>
    out = tmp_path / "results" / "whole"
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["name"] == "whole" and manifest["runs"] == 4
    assert manifest["sessions"][0]["part"] == {"name": "part", "source": str(piece), "runs": 1}
    records, _ = read_records(out)
    assert [r["sweep"] for r in records] == ["part"]  # a record says which file ran it
    outcome = run_sweep(load_sweep(whole), out, workers=1, progress=False)
    assert (outcome.skipped, outcome.done) == (1, 3)
    assert json.loads((out / "sweep.json").read_text())["name"] == "whole"


def test_a_part_with_a_run_outside_the_whole_is_refused(tmp_path):
    _, piece = _files(tmp_path, PART.replace("seeds = [1]", "seeds = [7]"))
    with pytest.raises(ConfigError, match=r"sweep\.part_of: 1 run\(s\) are not in .*whole\.toml's grid"):
        load_sweep(piece)


def test_a_part_of_a_part_is_refused(tmp_path):
    _files(tmp_path)
    nested = tmp_path / "nested.toml"
    nested.write_text(PART.replace('name = "part"', 'name = "nested"').replace("whole.toml", "part.toml"))
    with pytest.raises(ConfigError, match="is itself a part of another sweep"):
        load_sweep(nested)


def test_another_sweep_is_refused_a_directory_holding_other_results(tmp_path, capsys):
    whole, _ = _files(tmp_path)
    out = tmp_path / "out"
    run_sweep(load_sweep(whole), out, workers=1, progress=False, limit=1)
    other = tmp_path / "other.toml"
    other.write_text(WHOLE.replace('name = "whole"', 'name = "other"'))
    with pytest.raises(ConfigError, match="holds the results of sweep 'whole', not 'other': one directory per sweep file"):
        run_sweep(load_sweep(other), out, workers=1, progress=False)
    assert main(["sweep", str(other), "--out", str(out), "--dry-run"]) == 2
    assert "one directory per sweep file" in capsys.readouterr().err
