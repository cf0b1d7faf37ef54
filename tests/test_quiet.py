"""``--quiet`` means one thing in every command that has it (all but ``schema``, whose
output is what it is for): nothing but warnings and errors is printed, and the files asked
for are still written."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from dgdrf.cli import QUIET_HELP, build_parser
from test_cli import cli

ROOT = Path(__file__).parent.parent


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every leaf command's parser, by its words."""
    out: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {prefix: parser}
    for name, sub in subs[0].choices.items():
        out |= _commands(sub, (*prefix, name))
    return out


def test_every_command_but_schema_has_quiet_with_one_meaning():
    commands = _commands(build_parser())
    assert len(commands) >= 14
    for words, parser in commands.items():
        quiet = [a for a in parser._actions if "--quiet" in a.option_strings]
        if words == ("schema",):
            assert quiet == []
            continue
        assert [a.help for a in quiet] == [QUIET_HELP], words


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--servers", "6", "--users", "3", "--policy", "drf,dgdrf"],
        ["run", "--scenario", "configs/google-finite-8x4.toml", "--policy", "drf", "--json", "{tmp}/run.json"],
        ["scenario", "--servers", "4", "--users", "2", "-o", "{tmp}/s.json"],
        ["overlay", "--protocol", "cyclon", "--nodes", "20", "--cycles", "5"],
        ["oracle", "--scenario", "configs/wang-table2.toml", "--notion", "tsf"],
        ["audit", "--servers", "4", "--users", "2", "--policy", "drf"],
        ["sweep", "{tmp}/tiny.toml", "--out", "{tmp}/out", "--workers", "1"],
        ["sweep", "{tmp}/tiny.toml", "--out", "{tmp}/out", "--dry-run"],
        ["report", "{tmp}/quick"],
        ["cluster", "keys", "{tmp}/keys"],
        ["bench", "runtime", "--actors", "10", "--messages", "2000", "--repeat", "1", "--no-baseline"],
    ],
    ids=lambda argv: " ".join(a for a in argv[:2] if not a.startswith(("{", "-"))),
)
def test_quiet_prints_nothing_and_still_writes_the_files(capsys, tmp_path, argv):
    (tmp_path / "tiny.toml").write_text('[sweep]\nname = "tiny"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [6]\nusers = [3]\n')
    shutil.copytree(ROOT / "bench" / "results" / "quick", tmp_path / "quick")
    words = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    loud = cli(capsys, *words) if argv[0] not in ("sweep", "cluster") else None  # (a sweep recorded, keys made: the quiet run would differ)
    rc, out, err = cli(capsys, *words, "--quiet")
    assert rc == 0, err
    assert out == "" and err == "", (out, err)
    if loud is not None:
        assert loud[0] == 0 and (loud[1] or loud[2]), "without --quiet it says something"
    if "--json" in words:
        assert Path(words[words.index("--json") + 1]).stat().st_size > 0
    if argv[0] == "report":
        assert (tmp_path / "quick" / "report.md").is_file()
    if argv[:2] == ["cluster", "keys"]:
        assert (tmp_path / "keys" / "ca.crt").is_file()
