"""bench/regenerate.py (issue 18 item 4): its table accounts for every file under
bench/results/, every command in it names a real script or a real ``dgdrf`` subcommand
with flags that parse, and a report regenerated into a copy equals the committed one
byte for byte."""

from __future__ import annotations

import argparse
import importlib.util
import runpy
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from dgdrf.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "regenerate.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_regenerate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


regenerate = _load()
TABLE = regenerate.TABLE


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# -- (a) every committed artefact is in the table ----------------------------------------------------
def test_every_file_under_bench_results_is_in_the_table():
    assert regenerate.uncovered() == [], "files under bench/results/ that bench/regenerate.py's TABLE does not account for"


def test_every_entry_names_files_that_exist_and_no_file_twice():
    assert [a.name for a in TABLE if not a.files()] == [], "entries of the table that match no file (renamed or deleted artefacts?)"
    twice = [f for f, n in Counter(f for a in TABLE for f in a.files()).items() if n > 1]
    assert twice == []
    assert {a.kind for a in TABLE} <= set(regenerate.KINDS)
    assert [a.name for a in TABLE if not a.commands and a.kind != "frozen"] == [], "only frozen artefacts may have no command"
    assert [a.name for a in TABLE if a.kind in ("run", "machine") and not a.cost] == [], "runs and machine artefacts say what they cost"


# -- (b) every command names an existing script or a real dgdrf subcommand ------------------------------
class _Parsed(Exception):
    pass


def _parse_script_args(script: Path, words: list[str], monkeypatch) -> None:
    """Run the script as __main__ up to its argparse: its words must parse."""
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [str(script), *words])
    with pytest.raises(_Parsed):
        runpy.run_path(str(script), run_name="__main__")


def _commands():
    return [(a, line) for a in TABLE for line in a.commands]


@pytest.mark.parametrize("artefact,line", _commands(), ids=[f"{a.name}:{i}" for i, (a, _) in enumerate(_commands())])
def test_every_command_names_a_script_or_a_dgdrf_subcommand(artefact, line, monkeypatch, capsys):
    cmd = regenerate.parse_command(line)
    head = cmd.words[0]
    if head == "dgdrf":
        try:
            args = build_parser().parse_args(cmd.words[1:])
        except SystemExit:
            pytest.fail(f"{line!r}: dgdrf does not accept it: {capsys.readouterr().err.strip()}")
        assert args.command == cmd.words[1]
    else:
        script = cmd.script()
        assert script is not None, f"{line!r}: neither dgdrf nor a script"
        assert script.startswith("bench/") and (ROOT / script).is_file(), f"{line!r}: no script {script}"
        if script.endswith(".sh"):
            assert subprocess.run(["bash", "-n", str(ROOT / script)]).returncode == 0
            assert len(cmd.words) == 1, f"{line!r}: the shell scripts take their settings from the environment"
        elif "argparse" in (ROOT / script).read_text(encoding="utf-8"):
            _parse_script_args(ROOT / script, cmd.words[2:], monkeypatch)
        else:
            assert cmd.words[2:] == [], f"{line!r}: {script} takes no arguments"
    # the files it reads exist (a sweep file, a scenario, a results directory); outputs are its own
    for w in cmd.words[1:]:
        if w.startswith(("bench/", "configs/")) and not artefact.covers(w) and not any(p.startswith(w.rstrip("/") + "/") and "*" not in p for p in artefact.paths):
            assert (ROOT / w).exists(), f"{line!r}: {w} does not exist"
    if cmd.stdout:
        assert artefact.covers(cmd.stdout), f"{line!r} writes {cmd.stdout}, which is not this artefact"


# -- (c) a report regenerated into a copy is the committed one ------------------------------------------
def _smallest_sweep_report():
    """The report drawn by `dgdrf report` from one sweep directory whose records are smallest."""
    one_dir = [a for a in TABLE if a.kind == "report" and a.commands[0].startswith("dgdrf report") and len({Path(i).parent for i in a.inputs}) == 1]
    return min(one_dir, key=lambda a: sum((ROOT / i).stat().st_size for i in a.inputs))


def test_a_report_regenerated_into_a_copy_is_byte_identical(tmp_path):
    artefact = _smallest_sweep_report()
    report_md = artefact.paths[0]
    assert report_md.endswith("/report.md")
    proc = _cli("--only", report_md, "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    made = tmp_path / report_md
    assert made.is_file(), proc.stdout
    # the copy holds the records it was drawn from, not the committed report
    assert f"copy {report_md}" not in proc.stdout
    assert made.read_bytes() == (ROOT / report_md).read_bytes(), f"{report_md} regenerated differs from the committed one"


# -- the command line ---------------------------------------------------------------------------------
def test_list_prints_every_artefact_and_the_counts():
    proc = _cli("--list")
    assert proc.returncode == 0, proc.stderr
    for a in TABLE:
        assert a.name in proc.stdout
    assert f"{len(TABLE)} artefacts" in proc.stdout.splitlines()[-1]


def test_dry_run_prints_the_commands_and_writes_nothing(tmp_path):
    out = tmp_path / "copy"
    proc = _cli("--dry-run", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    for a in TABLE:
        if a.kind == "report":
            assert all(line in proc.stdout for line in a.commands)
        elif a.commands:
            assert a.commands[0] not in proc.stdout, "the default regenerates only the report artefacts"
    assert not out.exists()


@pytest.mark.parametrize("args,says", [
    (["--kind", "bogus"], "unknown kind bogus"),
    (["--only", "bench/results/no-such-thing"], "no artefact of the table"),
    (["--compare"], "--compare needs --out"),
    (["--out", "bench/results/x"], "outside bench/results/"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_errors_are_one_line(args, says):
    proc = _cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("regenerate.py: error:") and says in lines[0], proc.stderr
