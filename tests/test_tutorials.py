"""The tutorials (docs/tutorials/*.md) run as they are written, and say what they print.

The convention the pages follow, and this file reads:

- A command you type is in a ```console block, on a line that starts with ``$ ``; a line
  that ends with `` \\`` goes on on the next. Only ```console blocks are run (```toml,
  ```python and ```text blocks are shown, never run).
- The lines after a command, up to the next command or the end of the block, are what it
  printed, trimmed: any of its lines may be left out, and a line ``...`` marks a cut.
- A page's commands run in order in one bash (``set -e -o pipefail``: a command that
  fails fails the test), from a fresh directory that stands for the repository root (a
  symlink to each of ``configs``, ``examples``, ``bench`` and ``pyproject.toml``), so that
  the paths a page names resolve as in a clone and whatever a command writes stays under
  ``tmp_path``. ``dgdrf`` and ``python`` are this interpreter's. A command that ends with
  ``&`` runs in the background (the page sends its output to files); the whole process
  group is killed when the page is done or times out.
- Every output line a page shows must be a line of what the command printed (stdout and
  stderr; runs of whitespace, and of a table's rule characters, collapsed), except the
  lines that differ from run to run (wall times, a real cluster's counts): each of those
  matches one of the page's ``varies`` patterns, and some printed line must match the
  same pattern. A command run in the background shows no output.
- A ```python block with a ``title="PATH"`` shows the file PATH whole: it must be that
  file, byte for byte.

Each test then checks the facts its page states in words (a figure drawn, a stop reason,
who was killed). Budget: the default suite runs three pages in about 40 s on one core;
the cluster page, whose real cluster runs about 20 s of wall-clock time, is marked slow
(``pytest -m slow tests/test_tutorials.py``). It runs under pytest-xdist as the others:
its bootstrap listens on a free port (the page's 7000 is replaced), and its nodes are
killed with the page's process group.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import dgdrf

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "tutorials"
#: what a tutorial's working directory holds of the repository
MIRRORED = ("configs", "examples", "bench", "pyproject.toml")
#: rich tables are as wide as their content up to the terminal's width: the pages were made at this one
COLUMNS = "100"

CONSOLE = re.compile(r"^```console[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
FILE_BLOCK = re.compile(r'^```(\w+)[ \t]+title="([^"]+)"[^\n]*\n(.*?)^```[ \t]*$', re.M | re.S)


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)

    @property
    def background(self) -> bool:
        return bool(re.search(r"(?<!&)&\s*$", self.command))


def steps(page: str) -> list[Step]:
    """The commands of ``page`` (a file name in docs/tutorials) with the output it shows."""
    out: list[Step] = []
    for block in CONSOLE.findall((PAGES / page).read_text(encoding="utf-8")):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ "):
                command = line[2:]
                while command.endswith("\\"):
                    i += 1
                    command += "\n" + lines[i]
                out.append(Step(command))
            elif line.strip():
                assert out, f"{page}: output before any command: {line!r}"
                out[-1].shown.append(line)
            i += 1
    return out


def _normal(line: str) -> str:
    """``line`` with whitespace runs collapsed, and runs of a table's rule characters too
    (a rich table's columns are as wide as what they hold)."""
    return re.sub(r"([━─])\1+", r"\1", " ".join(line.split()))


@dataclass
class Ran:
    """A page's commands after they ran: each one's output, and the directory they ran in."""

    steps: list[Step]
    outputs: list[str]
    cwd: Path

    def output(self, needle: str) -> str:
        """What the command containing ``needle`` printed (the first such command)."""
        return next(o for s, o in zip(self.steps, self.outputs) if needle in s.command)


def _shims(where: Path) -> Path:
    """A directory whose ``dgdrf`` and ``python`` are this interpreter's."""
    where.mkdir()
    for name, run in (("dgdrf", f'exec "{sys.executable}" -m dgdrf "$@"'), ("python", f'exec "{sys.executable}" "$@"')):
        (where / name).write_text(f"#!/bin/sh\n{run}\n")
        (where / name).chmod(0o755)
    return where


def run_page(page: str, tmp_path: Path, *, timeout: float, varies: tuple[str, ...] = (), substitute: dict[str, str] | None = None) -> Ran:
    """Run every command of ``page`` in order (see the module's docstring) and check that
    each printed what the page shows."""
    todo = steps(page)
    assert todo, f"{page} has no commands"
    cwd = tmp_path / "repo"
    cwd.mkdir()
    for name in MIRRORED:
        (cwd / name).symlink_to(ROOT / name)
    logs = tmp_path / "outputs"
    logs.mkdir()
    script = ["set -e -o pipefail"]
    for i, step in enumerate(todo):
        command = step.command
        for old, new in (substitute or {}).items():
            command = command.replace(old, new)
        script.append(f"echo {i} > {logs}/current")
        script.append(command if step.background else f"{{ {command}\n}} > {logs}/{i}.out 2>&1")
    script.append(f"echo done > {logs}/current")
    env = {**os.environ, "PATH": f"{_shims(tmp_path / 'bin')}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": COLUMNS}
    with open(logs / "bash.log", "w") as log:
        proc = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # background nodes the page started, if any are left
            except ProcessLookupError:
                pass
            proc.wait()
    outputs = [(logs / f"{i}.out").read_text(errors="replace") if (logs / f"{i}.out").exists() else "" for i in range(len(todo))]
    where = (logs / "current").read_text().strip() if (logs / "current").exists() else "0"
    if code != 0 or where != "done":
        i = int(where) if where.isdigit() else len(todo) - 1
        raise AssertionError(
            f"{page}: command {i + 1} of {len(todo)} {'timed out' if code is None else f'exited {code}'}:\n$ {todo[i].command}\n"
            + textwrap.indent(outputs[i][-4000:] + (logs / "bash.log").read_text(errors="replace")[-2000:], "    ")
        )
    patterns = [re.compile(p) for p in varies]
    for step, printed in zip(todo, outputs):
        assert not (step.background and step.shown), f"{page}: `{step.command}` runs in the background: its output goes to files, not under it"
        lines = [_normal(x) for x in printed.splitlines()]
        for shown in step.shown:
            want = _normal(shown)
            if want == "...":
                continue
            pattern = next((p for p in patterns if p.fullmatch(want)), None)
            if pattern is None:
                ok = want in lines
            else:
                ok = any(pattern.fullmatch(x) for x in lines)
            assert ok, f"{page}: `{step.command}` did not print the line the page shows:\n    {shown}\nit printed:\n{textwrap.indent(printed[-4000:], '    ')}"
    return Ran(todo, outputs, cwd)


def file_blocks(page: str) -> dict[str, str]:
    """The files ``page`` shows whole (```LANG title="PATH"), by path."""
    return {path: body for _, path, body in FILE_BLOCK.findall((PAGES / page).read_text(encoding="utf-8"))}


# -- the pages ---------------------------------------------------------------------------------
@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """A directory for a page's run, removed afterwards whatever happened (the cluster's
    keys with it); a failure's message holds the outputs that matter."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_the_index_links_every_tutorial():
    index = (PAGES / "index.md").read_text(encoding="utf-8")
    for page in ("thesis-figure.md", "tsf-vs-drf.md", "own-policy.md", "cluster.md"):
        assert f"]({page})" in index, page
        assert steps(page), page


def test_thesis_figure(work):
    """Thesis fig. 5.1, reduced: the sweep runs its six runs, the report draws the figure
    and checks the thesis's relations, and the full grid is 141 runs."""
    ran = run_page(
        "thesis-figure.md", work, timeout=600,
        varies=(r"fig-5-1: 6 runs done in [\d.]+ s \(0 failed, 2 stranded\), 0 already recorded, 6 in the grid; results in results/fig-5-1",
                r"fig-5-1: 0 runs done in [\d.]+ s \(0 failed\), 6 already recorded, 6 in the grid; results in results/fig-5-1"),
    )  # fmt: skip
    out = ran.cwd / "results" / "fig-5-1"
    assert (out / "min_share_vs_neighbors_thesis-100x20.png").stat().st_size > 10_000
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 6
    report = (out / "report.md").read_text()
    assert "| thesis-100x20 | ddrf-random's min share / drf's at each P | 17.5 %-90.2 % (table 5.1, per P) | 26.4 %-99.1 % over P; off: P=10: 99.1 % vs 90.2 % |" in report
    assert "| 10 | 0.0493 | 0.01203 | 0.02437 | 0.04884 |" in report


def test_tsf_against_drf(work):
    """TSF and DRF drain the same constrained quarter hour of job arrivals; the user whose
    job only one machine can run waits under DRF; the audit of fig. 4 gives 6/1/3 and 4/1/4, both
    sharing-incentive, envy-free and Pareto-efficient, and the oracle's TSF is 6/1/3."""
    ran = run_page("tsf-vs-drf.md", work, timeout=600)
    tsf, drf = json.loads((ran.cwd / "tsf-drf.json").read_text())
    assert (tsf["policy"], drf["policy"]) == ("tsf", "drf")
    assert tsf["stop_reason"] == drf["stop_reason"] == "drained"
    assert tsf["allocations"] == drf["allocations"] == 3854
    assert tsf["jct_s"]["mean"] < drf["jct_s"]["mean"]
    # the page's words: u4's job j57 is 14 tasks that one machine of the 40 can run
    scenario = dgdrf.load_scenario(ROOT / "configs" / "google-finite-40x8.toml")
    job = next(j for u in scenario.users if u.id == "u4" for j in u.jobs if j.id == "j57")
    assert job.tasks == 14 and len(scenario.servers) == 40
    runs_it = [s.id for s in scenario.servers if all(dict(s.attributes).get(k) in v for k, v in job.constraint.requires)]
    assert len(runs_it) == 1 and job.constraint.eligible is None


def test_own_policy(work):
    """The page shows the policy and its tests whole, runs the policy next to drf and
    runs its tests."""
    shown = file_blocks("own-policy.md")
    assert set(shown) == {"examples/tutorials/fewest_tasks.py", "examples/tutorials/test_fewest_tasks.py"}
    for path, body in shown.items():
        assert body == (ROOT / path).read_text(encoding="utf-8"), f"own-policy.md shows {path} other than it is"
    ran = run_page("own-policy.md", work, timeout=300, varies=(r"4 passed in [\d.]+s",))
    assert "fewest-tasks" in ran.output("--policy drf,fewest-tasks")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # about 20 s of wall time, most of it the run itself: over the default suite's budget
def test_cluster(work):
    """Nodes started one by one with the cluster's keys: every connection mutual TLS; one
    of the two server processes is killed mid-run and the run drains on the other, its
    two servers counted down and the tasks lost with them placed again."""
    port = _free_port()
    ran = run_page(
        "cluster.md", work, timeout=300, substitute={"127.0.0.1:7000": f"127.0.0.1:{port}"},
        varies=(r"drained True \{'server': 2\} \d+", r"│ allocations │ \d+ │", r"│ run-time \(simulated s\) │ [\d.]+ │"),
    )  # fmt: skip
    result = json.loads((ran.cwd / "result.json").read_text())
    assert result["mode"] == "network" and result["tls"] is True and result["processes"] == 6
    assert result["stop_reason"] == "drained" and result["invariant_violations"] == []
    assert result["members_down"] == {"server": 2} and result["events"]["servers_down"] == 2
    # the tasks running or accepted on the dead servers: lost, and placed again elsewhere
    assert result["events"]["task_lost"] >= max(1, result["tasks_lost_on_dead_servers"])
    assert result["allocations"] == 40 + result["events"]["task_lost"]
    assert sorted(p.name for p in (ran.cwd / "keys").iterdir()) == sorted(
        f"{n}.{x}" for n in ("ca", "admin", "bootstrap", "collector", "gateway", "server", "user") for x in ("crt", "key")
    )
