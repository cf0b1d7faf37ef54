"""Every committed artefact under bench/results/, the command that makes it again, and
what that costs (issue 18 item 4: one command regenerates every committed artefact).

    python bench/regenerate.py --list                  # the table
    python bench/regenerate.py                         # every `report` artefact, in place
    python bench/regenerate.py --dry-run               # ... only print what would run
    python bench/regenerate.py --out /tmp/regen --compare
    python bench/regenerate.py --kind run --only bench/results/quick --out /tmp/regen
    python bench/regenerate.py --only bench/results/kill-survey.txt

Kinds:

- ``report``: re-derived from committed records (``dgdrf report DIR`` -> report.md and
  its figures, scripts that read results.jsonl.gz); seconds. The default.
- ``run``: re-runs emulations; minutes to hours (the table gives a rough cost from the
  recorded wall times). ``dgdrf sweep`` resumes: in place it runs only what its
  directory lacks, which for a complete sweep is nothing but rewriting results.csv and
  sweep.json; into ``--out`` (no records copied) it runs every run again.
- ``machine``: timings of this machine or another tool's output (PeerSim, valgrind, a
  real cluster): regenerated only when asked for (``--kind machine`` or ``--only``).
- ``frozen``: no command of this checkout makes it again: written by hand, composed by
  hand from runs of two checkouts, or records of code that has changed since (their
  ``params`` say which revision). Listed with how it was made; never run.

Commands are run from the repository root, or with ``--out DIR`` from DIR, into which
every input a command reads (scripts, sweep and scenario files, the records a report is
drawn from) is first copied unless DIR already holds it; every path in a command is
relative, so a report drawn in DIR names the same directories as the committed one.
``dgdrf`` and ``python`` are this interpreter's (``sys.executable -m dgdrf``), and its
bin directory leads PATH for the shell scripts.

After an in-place ``report``, figures of its directory that the run did not write
again are removed (a figure no longer drawn does not linger). ``--compare`` (with
``--out``) compares every regenerated file with the committed one and exits 1 if any
differs.
"""

from __future__ import annotations

import argparse
import fnmatch
import filecmp
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from dgdrf.cli import OneLineErrorParser

ROOT = Path(__file__).resolve().parents[1]
RESULTS = "bench/results"
KINDS = ("report", "run", "machine", "frozen")
#: order of execution: records before what is drawn from them
ORDER = {"run": 0, "machine": 1, "report": 2, "frozen": 3}
PROG = "regenerate.py"


class RegenerateError(Exception):
    """A one-line error for the user."""


@dataclass(frozen=True)
class Artefact:
    """What one command sequence makes. ``paths`` are files, directories or glob patterns
    relative to the repository root (the first names the artefact); ``commands`` are
    shell-like lines (``VAR=value`` prefixes and a final ``> FILE`` / ``>> FILE`` are
    understood, nothing else of a shell); ``inputs`` are what the commands read beyond
    the scripts and files their words name (copied by ``--out``)."""

    paths: tuple[str, ...]
    kind: str
    commands: tuple[str, ...] = ()
    cost: str = ""
    inputs: tuple[str, ...] = ()
    note: str = ""
    #: figures removed after an in-place run when not written again (globs of ``paths``)
    owned: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return self.paths[0]

    def covers(self, rel: str) -> bool:
        """Whether the file ``rel`` (relative to the root) belongs to this artefact."""
        return any(_matches(p, rel) for p in self.paths)

    def files(self, root: Path = ROOT) -> list[str]:
        """The files of this artefact that exist under ``root``."""
        return sorted(rel for rel in _all_files(root) if self.covers(rel))


def _matches(pattern: str, rel: str) -> bool:
    pattern = pattern.rstrip("/")
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(rel, pattern)
    return rel == pattern or rel.startswith(pattern + "/")


def _all_files(root: Path) -> list[str]:
    base = root / RESULTS
    if not base.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file())


# -- the table -------------------------------------------------------------------------------
R = RESULTS
SWEEP_RECORDS = ("results.jsonl.gz", "results.csv", "sweep.json")  # what `dgdrf sweep` writes (dgdrf/bench/store.py)
FROZEN_STALE = "records of code that has changed since, moved aside by `dgdrf sweep FILE --out DIR --prune-stale` (bench/README.md); read by bench/rerun_compare.py"


def _sweep(directory: str, commands: tuple[str, ...], cost: str, inputs: tuple[str, ...] = (), note: str = "") -> Artefact:
    return Artefact(tuple(f"{R}/{directory}/{f}" for f in SWEEP_RECORDS), "run", commands, cost, inputs, note)


def _report(directory: str, command: str, sources: tuple[str, ...], note: str = "") -> Artefact:
    """report.md and the figures of ``dgdrf report`` in ``directory``, drawn from the
    records (results.jsonl.gz, sweep.json) of the sweep directories ``sources``."""
    inputs = tuple(f"{R}/{s}/{f}" for s in sources for f in ("results.jsonl.gz", "sweep.json"))
    return Artefact((f"{R}/{directory}/report.md", f"{R}/{directory}/*.png"), "report", (command,), "seconds", inputs, note, owned=(f"{R}/{directory}/*.png",))


def _stale(directory: str) -> Artefact:
    return Artefact((f"{R}/{directory}/stale.jsonl.gz",), "frozen", (), "", (), FROZEN_STALE)


def _policy_run(name: str, flags: str, wall: str) -> Artefact:
    # bench/README.md, "Policies": each file is the --json of the command next to it
    return Artefact((f"{R}/policies/{name}",), "run", (f"dgdrf run {flags} --quiet --json {R}/policies/{name}",), wall)


TABLE: tuple[Artefact, ...] = (
    # ---- sweeps: records (bench/README.md, the sweep files' headers) ------------------------
    _sweep("quick", ("dgdrf sweep bench/quick.toml --out bench/results/quick",), "~1 min on 2 cores (24 runs, 0.5 min summed)"),
    _stale("quick"),
    _report("quick", "dgdrf report bench/results/quick", ("quick",)),
    # bench/README.md "What message loss costs": one directory per sweep file (split on 2026-11-26;
    # both used to share loss-100x20/), one report of both
    _sweep("loss-100x20", ("dgdrf sweep bench/loss-100x20.toml --out bench/results/loss-100x20",), "~11 min on 2 cores (21 runs, 18.3 min summed)", ("configs/thesis-100x20.toml",)),
    _stale("loss-100x20"),
    _sweep("loss-dup-100x20", ("dgdrf sweep bench/loss-dup-100x20.toml --out bench/results/loss-dup-100x20",), "~4 min on 2 cores (7 runs, 5.8 min summed)", ("configs/thesis-100x20.toml",)),
    _stale("loss-dup-100x20"),
    _report("loss-100x20", "dgdrf report bench/results/loss-100x20 bench/results/loss-dup-100x20 --out bench/results/loss-100x20", ("loss-100x20", "loss-dup-100x20")),
    _sweep("gossip-rate-100", ("dgdrf sweep bench/gossip-rate-100.toml --out bench/results/gossip-rate-100",), "~3 min on 2 cores (8 runs, 4.9 min summed)"),
    _stale("gossip-rate-100"),
    _report("gossip-rate-100", "dgdrf report bench/results/gossip-rate-100", ("gossip-rate-100",)),
    # the command is the sweep file's header (bench/README.md lists it without --workers 2)
    _sweep("dgdrf-memory-200x40", ("dgdrf sweep bench/dgdrf-memory-200x40.toml --out bench/results/dgdrf-memory-200x40 --workers 2",),
           "~6 min on 2 cores (2 runs, 11.1 min summed)", ("configs/thesis-200x40.toml",)),
    _stale("dgdrf-memory-200x40"),
    # not in bench/README.md: the command the report states in its own header (report.py writes it)
    _report("dgdrf-memory-200x40", "dgdrf report bench/results/dgdrf-memory-200x40", ("dgdrf-memory-200x40",)),
    _sweep("pdgdrf-users-100", ("dgdrf sweep bench/pdgdrf-users-100.toml --out bench/results/pdgdrf-users-100",), "~10 min on 2 cores (40 runs, 18.3 min summed)"),
    _stale("pdgdrf-users-100"),
    _sweep("pdgdrf-users-200", ("dgdrf sweep bench/pdgdrf-users-200.toml --out bench/results/pdgdrf-users-200",), "~40 min on 2 cores (40 runs, 76.6 min summed; bench/README.md: 38 min on 2 workers)"),
    _stale("pdgdrf-users-200"),
    _report("pdgdrf-users-report", "dgdrf report bench/results/pdgdrf-users-100 bench/results/pdgdrf-users-200 --out bench/results/pdgdrf-users-report", ("pdgdrf-users-100", "pdgdrf-users-200")),
    _sweep("thesis-grid-100x20", ("dgdrf sweep bench/thesis-grid-100x20.toml --out bench/results/thesis-grid-100x20",),
           "~70 min on 2 cores (141 runs, 137 min summed, 2.2 core-h)", ("configs/thesis-100x20.toml",)),
    _stale("thesis-grid-100x20"),
    # bench/README.md lists the half's parts (-light-policies, -gradient-seed1, -gradient-p2-4); the whole-half file runs them all
    # and is the one its manifest names (docs/explanation/performance.md, "The thesis grid")
    _sweep("thesis-grid-200x40", ("dgdrf sweep bench/thesis-grid-200x40.toml --out bench/results/thesis-grid-200x40 --workers 2",),
           "~6-7 h on 2 cores (141 runs, 758 min summed wall, 10.8 core-h)", ("configs/thesis-200x40.toml",)),
    _stale("thesis-grid-200x40"),
    _report("thesis-report", "dgdrf report bench/results/thesis-grid-100x20 bench/results/thesis-grid-200x40 --out bench/results/thesis-report", ("thesis-grid-100x20", "thesis-grid-200x40")),
    _sweep("scaling", ("dgdrf sweep bench/scaling.toml --workers 1 --out bench/results/scaling",), "~12 min, one run at a time (18 runs, 11.6 min as recorded)",
           note="every record here is of the code before protocol_revision 2 (bench/README.md, “The emulator's own cost”): the current code's keys differ, so even in place the sweep runs all 18 again, appending"),
    Artefact((f"{R}/scaling-report",), "frozen", ("dgdrf report bench/results/scaling --out bench/results/scaling-report",),
             note="kept as it was drawn (bench/README.md): every record of bench/results/scaling is stale now and `dgdrf report` refuses them; after the scaling sweep is run again, this command draws it from the new records"),
    # bench/README.md "Finite jobs": every policy on an hour of Google-like jobs
    _sweep("google-finite-100x20", ("dgdrf sweep bench/google-finite-100x20.toml --out bench/results/google-finite-100x20",),
           "~11 min on 2 cores (8 runs, 21 min summed: dgdrf 8, pdgdrf 7)", ("configs/google-finite-100x20.toml",)),
    _report("google-finite-100x20", "dgdrf report bench/results/google-finite-100x20", ("google-finite-100x20",)),
    # ---- scripts that read committed records ---------------------------------------------
    Artefact((f"{R}/google-finite-100x20.txt",), "report", ("python bench/finite_summary.py bench/results/google-finite-100x20 > bench/results/google-finite-100x20.txt",), "seconds",
             (f"{R}/google-finite-100x20/results.jsonl.gz",)),
    Artefact((f"{R}/google-finite-100x20-placements.txt",), "run",
             ("python bench/placements_per_tick.py configs/google-finite-100x20-load3.toml 1500 drf fifo dgdrf pdgdrf ddrf-random ddrf-gradient probes > bench/results/google-finite-100x20-placements.txt",),
             "~6 min (7 runs of 1,500 simulated seconds)", note="virtual time, fixed seed: byte-identical when the code's behaviour is unchanged"),
    Artefact((f"{R}/grid-time.txt",), "report", ("python bench/grid_time.py > bench/results/grid-time.txt",), "seconds",
             ("bench/results/thesis-grid-100x20/results.jsonl.gz", "bench/results/thesis-grid-200x40/results.jsonl.gz", "bench/results/runtime.json")),
    Artefact((f"{R}/rerun-compare.txt",), "report",
             ("python bench/rerun_compare.py bench/results/thesis-grid-100x20 --before gradient-preference > bench/results/rerun-compare.txt",
              "python bench/rerun_compare.py bench/results/thesis-grid-200x40 --before protocol >> bench/results/rerun-compare.txt"), "seconds",
             tuple(f"{R}/{d}/{f}" for d in ("thesis-grid-100x20", "thesis-grid-200x40") for f in ("results.jsonl.gz", "stale.jsonl.gz"))),
    # ---- single runs ------------------------------------------------------------------------
    Artefact((f"{R}/allocation-gaps-100x20.txt",), "run", ("python bench/allocation_gaps.py --policy dgdrf --neighbors 10 --seeds 1 2 3 > bench/results/allocation-gaps-100x20.txt",),
             "~6 min (3 dgdrf runs on thesis-100x20: 165, 115, 83 s in the grid's records)", ("configs/thesis-100x20.toml",)),
    Artefact((f"{R}/dgdrf-wrong-allocations-200x40.txt",), "run",
             ("python bench/dgdrf_wrong_allocations.py --seed 1 --neighbors 2 --max-time 2000 --gradient-memory 24 > bench/results/dgdrf-wrong-allocations-200x40.txt",),
             "~2 min (a quarter of a 340 s run of dgdrf-memory-200x40)", ("configs/thesis-200x40.toml",)),
    Artefact((f"{R}/dgdrf-wrong-allocations-200x40-p10-s3.txt",), "run",
             ("python bench/dgdrf_wrong_allocations.py --seed 3 --neighbors 10 --max-time 8000 > bench/results/dgdrf-wrong-allocations-200x40-p10-s3.txt",),
             "~20-30 min (its grid record: 1,082 CPU s)", ("configs/thesis-200x40.toml",),
             note="the docstring gives no redirect; the file's 6 '#' header lines were written by hand and a rerun writes the body only"),
    _policy_run("dgdrf-default-exact-capacity.json", "--policy dgdrf", "~20 s"),
    _policy_run("dgdrf-default-pushsum-capacity.json", "--policy dgdrf --capacity-knowledge pushsum", "~25 s"),
    _policy_run("dgdrf-default-no-idle-gossip.json", "--policy dgdrf --no-idle-gossip", "~10 s"),
    _policy_run("dgdrf-default-gradient-period-0.033.json", "--policy dgdrf --gradient-period 0.0333333", "~30 s"),
    _policy_run("dgdrf-default-toolbox-p2-seed1.json", "--policy dgdrf --gradient toolbox --neighbors 2 --seed 1", "~10 s"),
    _policy_run("dgdrf-default-toolbox-p2-seed2.json", "--policy dgdrf --gradient toolbox --neighbors 2 --seed 2", "~10 s"),
    _policy_run("dgdrf-default-toolbox-p2-seed3.json", "--policy dgdrf --gradient toolbox --neighbors 2 --seed 3", "~10 s"),
    _policy_run("dgdrf-default-toolbox-p4-seed1.json", "--policy dgdrf --gradient toolbox --neighbors 4 --seed 1", "~15 s"),
    # bench/README.md gives `[--scenario configs/thesis-100x20.toml]` without a seed: the record says seed 1 (the default)
    _policy_run("dgdrf-thesis-100x20-toolbox-p2.json", "--scenario configs/thesis-100x20.toml --policy dgdrf --gradient toolbox --neighbors 2 --seed 1", "~2 min"),
    # docs/notes/2026-11-25-why-runs-stalled.md "Every run ends for the right reason" and "The 200x40 half": `--json OUT`, here the committed name
    Artefact((f"{R}/controls-survey.txt",), "run", ("python bench/controls_survey.py > bench/results/controls-survey.txt",), "~1.5 min (87 s recorded)",
             note="virtual time, fixed seeds: byte-identical when the code's behaviour is unchanged"),
    Artefact((f"{R}/stall-checks/dgdrf-100x20-p4-s1-loss1.json",), "run",
             ("dgdrf run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --seed 1 --loss 0.01 --json bench/results/stall-checks/dgdrf-100x20-p4-s1-loss1.json",), "~3-5 min (288 s recorded on 2026-11-25, 158 s in pure Python on 2026-11-26)"),
    Artefact((f"{R}/stall-checks/dgdrf-200x40-p7-s1.json",), "run",
             ("dgdrf run --scenario configs/thesis-200x40.toml --policy dgdrf --neighbors 7 --seed 1 --json bench/results/stall-checks/dgdrf-200x40-p7-s1.json",), "~20 min (1,140 s recorded)"),
    Artefact((f"{R}/stall-checks/dgdrf-200x40-p9-s1.json",), "run",
             ("dgdrf run --scenario configs/thesis-200x40.toml --policy dgdrf --neighbors 9 --seed 1 --json bench/results/stall-checks/dgdrf-200x40-p9-s1.json",), "~20 min (1,169 s recorded)"),
    Artefact((f"{R}/stall-checks/dgdrf-100x20-p6-s3-gone-stamps-only.json",), "frozen",
             ("dgdrf run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 6 --seed 3 --json bench/results/stall-checks/dgdrf-100x20-p6-s3-gone-stamps-only.json",),
             note="made with the code of commit 1cb6c0b (the gone-stamps fix alone, bench/README.md): this command in that checkout"),
    # bench/results/google-cell/README.md's table (it timed them under /usr/bin/time -v); the paths are relative to that directory there
    Artefact((f"{R}/google-cell/drf.json",), "run", ("dgdrf run --servers 12583 --users 1000 --policy drf --json bench/results/google-cell/drf.json",), "~5 min, 1.3 GB (5 min 8 s recorded)"),
    Artefact((f"{R}/google-cell/pdgdrf-60s.json",), "run",
             ("dgdrf run --servers 12583 --users 1000 --policy pdgdrf --neighbors 4 --max-time 60 --json bench/results/google-cell/pdgdrf-60s.json",), "~7 min, 0.7 GB (6 min 52 s recorded)"),
    Artefact((f"{R}/google-cell/dgdrf-60s.json",), "run",
             ("dgdrf run --servers 12583 --users 1000 --policy dgdrf --neighbors 4 --max-time 60 --json bench/results/google-cell/dgdrf-60s.json",), "~10 min, 1 GB (10 min 23 s recorded)"),
    # ---- this machine, another tool --------------------------------------------------------------
    Artefact((f"{R}/runtime.json",), "machine", ("dgdrf bench runtime --actors 1000,10000 --messages 1000000 --repeat 3 --json bench/results/runtime.json",), "~1-2 min"),
    Artefact((f"{R}/overlay.json",), "machine", ("dgdrf bench overlay --json bench/results/overlay.json",), "~15 min (55 + 405 + 322 s recorded)"),
    Artefact((f"{R}/net.json",), "machine", ("dgdrf bench net --json bench/results/net.json",), "~1 min"),
    Artefact((f"{R}/cost-scaling",), "machine", ("python bench/cost_scaling.py --out bench/results/cost-scaling",), "~25-30 min (21 runs, 23.6 min summed)",
             note="CPU time per simulated second; the paragraph under the title of the committed report.md was added by hand and a rerun drops it"),
    Artefact((f"{R}/instructions-per-message.txt",), "machine", ("bench/instructions_per_message.sh > bench/results/instructions-per-message.txt",), "~1 min",
             note="needs valgrind and the compiled core"),
    # the header line the script prints says `--freeze 1.5` (its default)
    Artefact((f"{R}/cluster-finite/google-finite-8x4-drf.json",), "machine",
             ("dgdrf cluster up --scenario configs/google-finite-8x4.toml --policy drf --time-scale 240 --tick 0.05 --json bench/results/cluster-finite/google-finite-8x4-drf.json --quiet",),
             "~2 min (15 processes, wall-clock time)"),
    Artefact((f"{R}/cluster-finite/google-finite-8x4-dgdrf.json",), "machine",
             ("dgdrf cluster up --scenario configs/google-finite-8x4.toml --policy dgdrf --time-scale 240 --tick 0.05 --warmup 2 --json bench/results/cluster-finite/google-finite-8x4-dgdrf.json --quiet",),
             "~2 min (15 processes, wall-clock time)"),
    Artefact((f"{R}/cluster-finite/google-finite-8x4-dg-tsf.json",), "machine",
             ("dgdrf cluster up --scenario configs/google-finite-8x4.toml --policy dg-tsf --time-scale 240 --tick 0.05 --warmup 2 --json bench/results/cluster-finite/google-finite-8x4-dg-tsf.json --quiet",),
             "~2 min (15 processes, wall-clock time)"),
    Artefact((f"{R}/cluster-finite/google-finite-8x4-d-psdsf.json",), "machine",
             ("dgdrf cluster up --scenario configs/google-finite-8x4.toml --policy d-psdsf --time-scale 240 --tick 0.05 --warmup 2 --json bench/results/cluster-finite/google-finite-8x4-d-psdsf.json --quiet",),
             "~2 min (15 processes, wall-clock time)"),
    Artefact((f"{R}/cluster-finite/google-finite-8x4-dg-tsf-pushsum.json",), "machine",
             ("dgdrf cluster up --scenario configs/google-finite-8x4.toml --policy dg-tsf --time-scale 240 --tick 0.05 --warmup 10 --capacity-knowledge pushsum --json bench/results/cluster-finite/google-finite-8x4-dg-tsf-pushsum.json --quiet",),
             "~2 min (15 processes, wall-clock time)"),
    Artefact((f"{R}/papers/kesidis-psdsf.md", f"{R}/papers/kesidis-psdsf.json"), "run", ("python bench/papers/kesidis_psdsf.py --out bench/results/papers",), "~15-45 s on one core (1,000 emulated runs, 3,600 offer-loop runs)"),
    Artefact((f"{R}/papers/ru-3d-drf.md", f"{R}/papers/ru-3d-drf.json"), "run", ("python bench/papers/ru_3d_drf.py --out bench/results/papers",), "~35-50 s on one core"),
    Artefact((f"{R}/papers/wang-microbenchmark.md", f"{R}/papers/wang-microbenchmark.json"), "run", ("python bench/papers/wang_microbenchmark.py --out bench/results/papers",), "~1-2 min on one core (72 emulated runs, 0.2-5 s each)"),
    Artefact((f"{R}/papers/wang-static.md", f"{R}/papers/wang-static.json"), "run", ("python bench/papers/wang_static.py --out bench/results/papers",), "~5 s"),
    Artefact((f"{R}/lp-oracle-scale.txt",), "machine",
             ("python bench/lp_oracle_scale.py > bench/results/lp-oracle-scale.txt",
              "python bench/lp_oracle_scale.py --instance scattered >> bench/results/lp-oracle-scale.txt"), "~10 min (424 + 21 + 156 + 4 s recorded)"),
    Artefact((f"{R}/papers/tahir-udrf.md", f"{R}/papers/tahir-udrf.json"), "run", ("python bench/papers/tahir_udrf.py --out bench/results/papers",), "~1 s"),
    Artefact((f"{R}/papers/tahir-trends.md", f"{R}/papers/tahir-trends.json"), "run", ("python bench/papers/tahir_trends.py --out bench/results/papers",),
             "~4 min on two cores (100 emulated runs, 2-10 s each)"),
    Artefact((f"{R}/papers/wang-trace.md", f"{R}/papers/wang-trace.json", f"{R}/papers/wang-trace-jct.png"), "machine",
             ("python bench/papers/wang_trace.py --out bench/results/papers --seeds 3 --jobs 2",),
             "~1 h on two cores (15 runs of 4,500 jobs on 1,000 servers, 260-480 CPU s each)",
             note="records each run's wall and CPU time: they vary with the machine's load"),
    Artefact((f"{R}/papers/wang-trace-contended.md", f"{R}/papers/wang-trace-contended.json", f"{R}/papers/wang-trace-contended-jct.png"), "machine",
             ("python bench/papers/wang_trace.py --experiment wang-trace-contended --out bench/results/papers --seeds 10 --jobs 2",),
             "~45 min on two cores (60 runs of 2,300 jobs on 100 servers, 65-99 CPU s each)",
             note="records each run's wall and CPU time: they vary with the machine's load"),
    Artefact((f"{R}/distributed-tsf-100x20.txt",), "run", ("python bench/distributed_tsf.py --census > bench/results/distributed-tsf-100x20.txt",),
             "~17 min on two cores (17 runs of an hour of Google-like jobs on 100 servers, ~100-130 s each)"),
    Artefact((f"{R}/distributed-tsf-100x20-no-announce.txt",), "run", ("python bench/distributed_tsf.py --census --no-gradient-announce > bench/results/distributed-tsf-100x20-no-announce.txt",),
             "~17 min on two cores (as distributed-tsf-100x20.txt, dg-tsf without announcing utility rises)"),
    Artefact((f"{R}/dpsdsf-design.txt",), "run", ("python bench/dpsdsf_design.py > bench/results/dpsdsf-design.txt",),
             "~2.5 min on two cores (12 quarter-hour runs of d-psdsf, 24 tiny ones, 3 runs of the hour)"),
    Artefact((f"{R}/distributed-psdsf.txt",), "run", ("python bench/distributed_psdsf.py > bench/results/distributed-psdsf.txt",),
             "~12 min on two cores (12 runs: 6 of an hour of Google-like jobs on 100 servers, 6 of a quarter hour on 40; d-psdsf 60-200 s each)"),
    # issue 35's acceptance sweep: the seed-1 part first, then the whole (it resumes), then the summary
    _sweep("overlay-fairness-40x8", ("dgdrf sweep bench/overlay-fairness-40x8-seed1.toml --out bench/results/overlay-fairness-40x8",
                                     "dgdrf sweep bench/overlay-fairness-40x8.toml --out bench/results/overlay-fairness-40x8"),
           "~2 h on 2 cores (300 runs, 100 a seed, ~40 min a seed on 2 cores)", ("configs/google-finite-40x8.toml",)),
    _stale("overlay-fairness-40x8"),
    Artefact((f"{R}/central-loss-errors-40x8.txt",), "run", ("python bench/central_loss_errors.py > bench/results/central-loss-errors-40x8.txt",), "~15 s on one core"),
    Artefact((f"{R}/churn-knowledge-40x8.txt",), "run", ("python bench/churn_knowledge.py > bench/results/churn-knowledge-40x8.txt",), "~8 min on two cores (12 quarter-hour runs)"),
    Artefact((f"{R}/envy-over-time-40x8.txt",), "run", ("python bench/envy_over_time.py > bench/results/envy-over-time-40x8.txt",), "~6 min on two cores (11 quarter-hour runs)"),
    Artefact((f"{R}/sharing-below-40x8.txt",), "run", ("python bench/sharing_below.py > bench/results/sharing-below-40x8.txt",), "~1.5 min on one core (2 runs of dg-tsf)"),
    Artefact((f"{R}/overlay-fairness-40x8.txt",), "report", ("python bench/overlay_fairness.py bench/results/overlay-fairness-40x8 > bench/results/overlay-fairness-40x8.txt",),
             "seconds", (*(f"{R}/overlay-fairness-40x8/{f}" for f in ("results.jsonl.gz", "sweep.json")), "bench/overlay-fairness-40x8.toml", "configs/google-finite-40x8.toml")),
    Artefact((f"{R}/google-finite-100x20-room-notices.txt",), "run",
             ("dgdrf run --scenario configs/google-finite-100x20.toml --policy dgdrf,pdgdrf,ddrf-random --room-notices > bench/results/google-finite-100x20-room-notices.txt",),
             "~5 min on one core (3 runs of an hour of Google-like jobs)", note="the run table; its wall-time row varies with the machine's load"),
    Artefact((f"{R}/error-causes-100x20.txt",), "run", ("python bench/error_causes.py dg-tsf > bench/results/error-causes-100x20.txt",
                                                       "python bench/error_causes.py dgdrf >> bench/results/error-causes-100x20.txt"),
             "~4 min on one core (2 runs of an hour of Google-like jobs)"),
    Artefact((f"{R}/census-convergence-1000.txt",), "run", ("python bench/census_convergence.py > bench/results/census-convergence-1000.txt",), "~25 s"),
    Artefact((f"{R}/google-finite-100x20-workload.txt",), "run", ("python bench/describe_workload.py configs/google-finite-100x20.toml > bench/results/google-finite-100x20-workload.txt",), "~1 s"),
    Artefact((f"{R}/walk-length-1000.txt",), "run", ("python bench/walk_length.py --policy ddrf-random > bench/results/walk-length-1000.txt",
                                                    "python bench/walk_length.py --policy dgdrf >> bench/results/walk-length-1000.txt"),
             "~4 min on two cores (28 runs on 1,000 servers)"),
    Artefact((f"{R}/dask-vs-pool.txt",), "machine", ("python bench/dask_vs_pool.py --sweep bench/quick.toml --workers 2 --repeat 2 > bench/results/dask-vs-pool.txt",),
             "~5 min (96 runs)", note="wall times: they vary with the machine's load"),
    Artefact((f"{R}/cluster-churn-survey.txt",), "machine", ("python bench/cluster_churn_survey.py > bench/results/cluster-churn-survey.txt",), "~14 min (8 clusters of 15-16 processes, 774 s of wall recorded)",
             note="real processes on loopback, killed and started on the wall clock: counts and wall times vary between reruns"),
    Artefact((f"{R}/suite-time.txt",), "machine", ("python bench/suite_time.py --workers 2,3 > bench/results/suite-time.txt",), "~10 min (the default suite twice)",
             note="wall times of this machine: they vary with its load"),
    Artefact((f"{R}/gang-reservations.md",), "machine", ("python bench/gang_reservations.py > bench/results/gang-reservations.md",), "~40 min on two cores (18 runs of an hour of jobs on 100 servers)",
             note="virtual time: every column but the wall times is the same on a rerun"),
    Artefact((f"{R}/profile-google-finite-1000x200-dgdrf.txt",), "machine", ("python bench/profile_run.py -- --scenario configs/google-finite-1000x200.toml --policy dgdrf --max-time 600 > bench/results/profile-google-finite-1000x200-dgdrf.txt",), "~2 min",
             note="sampled (py-spy --native, pip install py-spy; needs ptrace): the shares move a little between reruns"),
    Artefact((f"{R}/install-time.txt",), "machine", ("bench/install_time.sh > bench/results/install-time.txt",), "~3 min (a fresh clone, a build)",
             note="wall times of this machine: they vary with its load and pip's cache"),
    Artefact((f"{R}/page-cost.txt",), "machine", ("python bench/page_cost.py > bench/results/page-cost.txt",), "~30 s (6 runs, 6 page loads in Chromium)",
             note="wall times of this machine: they vary with its load; needs Debian's chromium"),
    Artefact((f"{R}/cluster-example12-gangs.txt",), "machine", ("python bench/cluster_example12_gangs.py --runs 10 --late > bench/results/cluster-example12-gangs.txt",), "~4 min (10 clusters of 12 processes)",
             note="real processes on loopback: the counts vary between reruns"),
    Artefact((f"{R}/gang-stress.txt",), "machine", ("python bench/gang_stress.py > bench/results/gang-stress.txt",), "~1 min (3,000 small runs)",
             note="virtual time: every line but the wall times is the same on a rerun"),
    Artefact((f"{R}/gang-reservations-crash.md",), "machine", ("python bench/gang_reservations.py --policies drf,dgdrf --loss 0 --crash s7@1800 > bench/results/gang-reservations-crash.md",), "~5 min (2 runs)",
             note="virtual time: every column but the wall times is the same on a rerun"),
    Artefact((f"{R}/finite-churn-8x4.txt",), "machine", ("python bench/finite_churn.py > bench/results/finite-churn-8x4.txt",), "~1 min (16 runs, 60 s of wall recorded)",
             note="virtual time: every column but the wall times is the same on a rerun"),
    Artefact((f"{R}/finite-churn-8x4-before.txt",), "frozen", ("python bench/finite_churn.py --max-time 20000 > bench/results/finite-churn-8x4-before.txt",),
             note="made with the code of commit f507a6f (before jobs nobody can run were given up): this command in that checkout, with this bench/finite_churn.py copied in"),
    Artefact((f"{R}/kill-survey.txt",), "machine", ("python bench/kill_survey.py --freeze 1.5 > bench/results/kill-survey.txt",), "~3 min (8 clusters, 147 s of wall recorded)",
             note="real processes on loopback, stopped and killed on the wall clock: counts and wall times vary between reruns"),
    Artefact((f"{R}/peersim-compare.txt",), "machine", ("bench/peersim_compare.sh > bench/results/peersim-compare.txt",), "~15 min (PeerSim and dgdrf at 1k, 10k, 100k nodes)",
             note="needs java and the anchor kit (../shared/anchors/peersim, or ANCHOR=...); with --out set ANCHOR, the script looks beside itself"),
    Artefact((f"{R}/message-floor.txt",), "machine", ("python bench/message_floor.py > bench/results/message-floor.txt", "PENDING=4000 NODES=1000 python bench/message_floor.py >> bench/results/message-floor.txt"), "~2 min",
             note="wall times of this machine: they vary with its load; needs a C compiler"),
    Artefact((f"{R}/peersim-compare-1k-10k.txt",), "machine", ('SIZES="1000 10000" REPEAT=3 bench/peersim_compare.sh > bench/results/peersim-compare-1k-10k.txt',), "~4 min",
             note="needs java and the anchor kit (../shared/anchors/peersim, or ANCHOR=...); wall times of this machine, both sides"),
    Artefact((f"{R}/instructions-per-message-thesis-100x20.txt",), "machine",
             ('ARGS="run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh > bench/results/instructions-per-message-thesis-100x20.txt',
              'ARGS="run --scenario configs/thesis-100x20.toml --policy pdgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh >> bench/results/instructions-per-message-thesis-100x20.txt'),
             "~3 min", note="needs valgrind and the compiled core; instruction counts do not depend on the machine's load"),
    Artefact((f"{R}/callgrind-profile-dgdrf-100x20.txt",), "machine", ("bench/callgrind_profile.sh > bench/results/callgrind-profile-dgdrf-100x20.txt",), "~2 min",
             note="needs valgrind and the compiled core; instruction counts do not depend on the machine's load"),
    Artefact((f"{R}/instructions-per-message-before-allocation-path.txt",), "frozen",
             ('ARGS="run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh',
              'ARGS="run --scenario configs/thesis-100x20.toml --policy pdgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh',
              "bench/instructions_per_message.sh",
              'ARGS="overlay --protocol pushsum --nodes 1000 --cycles 30 --seed 1" bench/instructions_per_message.sh'),
             note="composed by hand: these commands' output in a checkout of 2a47727 (its own venv on PATH), then the last one at 5b7ef1b (its header says how)"),
    Artefact((f"{R}/ab-allocation-path-batches.txt",), "frozen",
             ('A=/tmp/ab-old REPEAT=3 CORES=compiled RUNS="google1000dgdrf grid100dgdrf grid100pdgdrf cyclon10000 pushsum10000" bench/ab_checkouts.sh',),
             note="composed by hand: this command's output at cf1d5fc and at 0b19de2, A a checkout of 2a47727 (its header)"),
    Artefact((f"{R}/ab-allocation-path.txt",), "machine",
             ('A=/tmp/ab-old REPEAT=3 CORES=compiled RUNS="google1000dgdrf grid100dgdrf grid100pdgdrf cyclon10000 pushsum10000" bench/ab_checkouts.sh > bench/results/ab-allocation-path.txt',), "~15 min",
             note="A = 2a47727 (before the allocation path's second step), checked out and built in /tmp/ab-old first: git worktree add /tmp/ab-old 2a47727 && cd /tmp/ab-old && python3 -m venv .venv && .venv/bin/pip install -e ."),
    Artefact((f"{R}/ab-runtime-frames.txt",), "machine",
             ('A=/tmp/ab-old REPEAT=3 CORES=compiled RUNS="google1000dgdrf grid100dgdrf grid100pdgdrf cyclon10000 pushsum10000" bench/ab_checkouts.sh > bench/results/ab-runtime-frames.txt',), "~15 min",
             note="A = 3245c45 (before the runtime's frames without objects and the gradient's lookups by node id), checked out and built in /tmp/ab-old first: git worktree add /tmp/ab-old 3245c45 && cd /tmp/ab-old && python3 -m venv .venv && .venv/bin/pip install -e ."),
    Artefact((f"{R}/instructions-per-message-before-runtime-frames.txt",), "frozen",
             ('ARGS="run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh',
              'ARGS="run --scenario configs/thesis-100x20.toml --policy pdgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh',
              "bench/instructions_per_message.sh"),
             note="composed by hand: instructions-per-message-thesis-100x20.txt and instructions-per-message.txt as committed at fac19a3 (these commands' output at 5b7ef1b), one after the other"),
    Artefact((f"{R}/instructions-per-message-google-1000x200.txt",), "frozen",
             ('ARGS="run --scenario configs/google-finite-1000x200.toml --policy dgdrf --max-time 20 --seed 1" bench/instructions_per_message.sh',),
             note="composed by hand: this command's output in a worktree of 3245c45 (its own build, on PYTHONPATH) and at bff0639, run side by side (its header)"),
    Artefact((f"{R}/message-floor-before-runtime-frames.txt",), "frozen",
             ("python bench/message_floor.py", "PENDING=4000 NODES=1000 python bench/message_floor.py"),
             note="message-floor.txt as committed at fac19a3 (these commands at 5b7ef1b's code), kept as the floor before the runtime's frames without objects"),
    Artefact((f"{R}/peersim-compare-runtime-frames.txt",), "frozen", ('SIZES="1000 10000" REPEAT=3 bench/peersim_compare.sh',),
             note="composed by hand: this command's output at bff0639 and at 6adb837, about twenty minutes apart (its header); needs java and the anchor kit"),
    Artefact((f"{R}/ab-prefetch.txt",), "machine",
             ('A=/tmp/ab-old REPEAT=3 CORES=compiled RUNS="google1000dgdrf grid100dgdrf grid100pdgdrf cyclon10000 pushsum10000" bench/ab_checkouts.sh > bench/results/ab-prefetch.txt',), "~15 min",
             note="A = e864eb7 (before the clock readied the next events' state), checked out and built in /tmp/ab-old first: git worktree add /tmp/ab-old e864eb7 && cd /tmp/ab-old && python3 -m venv .venv && .venv/bin/pip install -e ."),
    Artefact((f"{R}/ab-utility-calls.txt",), "machine",
             ('A=/tmp/ab-old REPEAT=3 CORES=compiled RUNS="google1000dgdrf grid100dgdrf grid100pdgdrf" bench/ab_checkouts.sh > bench/results/ab-utility-calls.txt',), "~12 min",
             note="A = 2192d0a (before the node's utility and PDGDRF's Gini test went to C), checked out and built in /tmp/ab-old first: git worktree add /tmp/ab-old 2192d0a && cd /tmp/ab-old && python3 -m venv .venv && .venv/bin/pip install -e ."),
    Artefact((f"{R}/ab-first-period.txt",), "machine",
             ('A=/tmp/ab-old REPEAT=3 CORES=compiled RUNS="google1000dgdrf grid100dgdrf grid100pdgdrf cyclon10000 pushsum10000" bench/ab_checkouts.sh > bench/results/ab-first-period.txt',), "~15 min",
             note="A = f6a54e7 (before the collector's freeze, the 16-byte heap keys, the bootstrap's draws in C and the Peers frame), checked out and built in /tmp/ab-old first: git worktree add /tmp/ab-old f6a54e7 && cd /tmp/ab-old && python3 -m venv .venv && .venv/bin/pip install -e ."),
    Artefact((f"{R}/overlay-periods-10k.txt",), "machine", ("python bench/overlay_periods.py > bench/results/overlay-periods-10k.txt",), "~1 min",
             note="wall times of this machine: they vary with its load"),
    Artefact((f"{R}/overlay-periods-10k-before.txt",), "frozen", ("python bench/overlay_periods.py",),
             note="made with the code of f6a54e7 (before the collector's freeze and the bootstrap's draws in C): git worktree add /tmp/ab-old f6a54e7, built, then cd /tmp/ab-old && PYTHONPATH=/tmp/ab-old python /path/to/this/checkout/bench/overlay_periods.py"),
    Artefact((f"{R}/perf-cyclon-10k.txt",), "machine",
             ('ARGS="overlay --protocol cyclon --nodes 10000 --cycles 100 --view-size 20 --shuffle-length 8 --metrics-every 100 --seed 1" TOP=25 ANNOTATE="__pyx_f_5dgdrf_7overlay_6cyclon_6Cyclon_warm" bench/perf_profile.sh > bench/results/perf-cyclon-10k.txt',), "~1 min",
             note="needs perf and the compiled core; samples of the whole process (start-up and the end's figures too), shares that move with the machine's load"),
    Artefact((f"{R}/instructions-per-message-before-prefetch.txt",), "frozen",
             ('ARGS="run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh',
              'ARGS="run --scenario configs/thesis-100x20.toml --policy pdgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh',
              "bench/instructions_per_message.sh"),
             note="composed by hand: instructions-per-message-thesis-100x20.txt and instructions-per-message.txt as committed at e864eb7 (these commands' output at 6adb837), one after the other, kept as the figures before the clock readied the next events' state"),
    Artefact((f"{R}/message-floor-before-prefetch.txt",), "frozen",
             ("python bench/message_floor.py", "PENDING=4000 NODES=1000 python bench/message_floor.py"),
             note="message-floor.txt as committed at e864eb7, kept as the floor before the clock readied the next events' state"),
    Artefact((f"{R}/peersim-compare-before-prefetch.txt",), "frozen", ('SIZES="1000 10000" REPEAT=3 bench/peersim_compare.sh',),
             note="peersim-compare-1k-10k.txt as committed at e864eb7 (this command's output at 6adb837); needs java and the anchor kit"),
    Artefact((f"{R}/ab-partition-check.txt",), "machine", ("A=/tmp/ab-old REPEAT=7 bench/ab_checkouts.sh > bench/results/ab-partition-check.txt",), "~10 min",
             note="A = ce2869e (before the partition check on the send path and the shared proposal handshake), checked out and built in /tmp/ab-old first: git worktree add /tmp/ab-old ce2869e && cd /tmp/ab-old && python3 -m venv .venv && .venv/bin/pip install -e ."),
    Artefact((f"{R}/pure-vs-compiled.txt",), "machine", ("bench/pure_vs_compiled.sh > bench/results/pure-vs-compiled.txt",), "~1 min",
             note="its first line, `$ bench/pure_vs_compiled.sh`, was written by hand; the script prints the rest"),
    # ---- written or composed by hand ----------------------------------------------------------------
    Artefact((f"{R}/PERFORMANCE.md",), "frozen", note="written by hand; quotes the machine artefacts above with their commands"),
    Artefact((f"{R}/google-cell/README.md",), "frozen",
             note="written by hand from the three google-cell runs above, each timed with /usr/bin/time -v (wall, peak RSS)"),
    Artefact((f"{R}/before-after-100x20.txt",), "frozen",
             ("dgdrf run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 9 --seed 1 --json after.json --quiet",),
             note="timings composed by hand: this command under /usr/bin/time in a checkout of c459fa8 and in this one, one right after the other (its header)"),
    Artefact((f"{R}/peersim-compare-before-after.txt",), "frozen", ("SIZES='1000 10000' bench/peersim_compare.sh",),
             note="composed by hand from this command in a checkout of c459fa8 and in the checkout after issue 16's changes, plus alternating reruns (its header)"),
    Artefact((f"{R}/google-finite-1000x200-dgdrf-before-after.txt",), "frozen",
             ("dgdrf run --scenario configs/google-finite-1000x200.toml --policy dgdrf --max-time 600 --quiet --json new.json",),
             note="composed by hand from this command in a checkout of 3b63a74 and in efef454, started together (its header); again with 68319d9 (its second section) and 96be96c (its third)"),
    Artefact((f"{R}/peersim-compare-issue34.txt",), "frozen", ("SIZES='1000 10000' bench/peersim_compare.sh", "SIZES=10000 REPEAT=5 bench/peersim_compare.sh"),
             note="composed by hand from these commands in a checkout of 3b63a74 and in the commits its sections name, one right after the other (its headers)"),
    Artefact((f"{R}/instructions-per-message-issue34.txt",), "frozen",
             ("bench/instructions_per_message.sh",
              'ARGS="run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh',
              'ARGS="run --scenario configs/thesis-100x20.toml --policy pdgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh'),
             note="issue 34's figures (instructions-per-message.txt is issue 16's): these commands' output at the commits its sections name, appended one after the other (the fifth session's: the ARGS commands in a checkout of 3b63a74, the script copied beside it, and at 23318eb); needs valgrind and the compiled core"),
    Artefact((f"{R}/callgrind-dgdrf-100x20.txt",), "frozen", ("bench/callgrind_profile.sh", 'ARGS="run --scenario configs/thesis-100x20.toml --policy pdgdrf --neighbors 4 --max-time 30 --seed 1" bench/callgrind_profile.sh'),
             note="this command's output at the commits its sections name, appended; needs valgrind and the compiled core"),
    Artefact((f"{R}/callgrind-pushsum-1k-10k.txt",), "frozen",
             ('ARGS="overlay --protocol pushsum --nodes 1000 --cycles 30 --metrics-every 30 --seed 1" bench/callgrind_profile.sh',
              'ARGS="overlay --protocol pushsum --nodes 10000 --cycles 30 --metrics-every 30 --seed 1" bench/callgrind_profile.sh'),
             note="both commands' output at 0986911, one after the other (its header); the fourth session's sections the first command's at 2e3b3db and c4ba0c6"),
    Artefact((f"{R}/perf-pushsum-10k.txt",), "frozen",
             ('ANNOTATE="__pyx_f_5dgdrf_7runtime_5actor_8Periodic_fire __pyx_f_5dgdrf_7runtime_5actor_5Actor_send_frame __pyx_f_5dgdrf_7runtime_9transport_14LocalTransport_send_frame" bench/perf_profile.sh',
              'ANNOTATE="__pyx_f_5dgdrf_7runtime_5actor_4Role_send_frame __pyx_f_5dgdrf_7runtime_9transport_14LocalTransport_send_frame" bench/perf_profile.sh'),
             note="the first command in a checkout of 4defaba, the second in 150ab3f, one right after the other (its header); needs perf and the compiled core"),
    Artefact((f"{R}/cache-misses-cyclon-10k.txt",), "frozen", ("bench/cache_misses.sh",),
             note="this command's output in a checkout of 0986911 and at 016e2e1, side by side, then at bff0639 (its header); needs valgrind and the compiled core, ~5 min each"),
    Artefact((f"{R}/distributed-tsf-100x20-no-room-notices.txt",), "frozen", ("python bench/distributed_tsf.py --census",),
             note="this command at 925cb09, before room notices existed; `--no-room-notices` takes the same code path now"),
    Artefact((f"{R}/ab-issue34.txt",), "frozen",
             ("A=/work/ab-old REPEAT=3 bench/ab_checkouts.sh",
              'A=/tmp/wt-head RUNS="cyclon10000 pushsum10000" CORES=compiled bench/ab_checkouts.sh',
              'A=/work/ab-old RUNS="dgdrf1000 grid100dgdrf grid100pdgdrf" CORES=compiled REPEAT=2 bench/ab_checkouts.sh',
              'A=/work/ab-old RUNS="pushsum5000 pushsum10000" CORES="compiled pure" REPEAT=3 bench/ab_checkouts.sh',
              'A=/work/ab-head RUNS="pushsum10000 cyclon10000" CORES=compiled REPEAT=3 bench/ab_checkouts.sh',
              'A=/work/ab-old B=/work/ab-head RUNS="grid100dgdrf grid100pdgdrf" CORES=compiled REPEAT=2 bench/ab_checkouts.sh',
              'A=/work/ab-old B=/work/ab-head RUNS="grid200dgdrf grid200pdgdrf" CORES=compiled REPEAT=1 bench/ab_checkouts.sh',
              'A=/work/ab-old RUNS=dgdrf1000 CORES=pure REPEAT=3 bench/ab_checkouts.sh'),
             note="sections appended, each this script's output against the checkout its header names (3b63a74: before issue 34; 0986911: the second session's start; 4defaba: before the fourth session's cold-object change; in the fifth session B too a checkout, at the commit its header names), built first: git worktree add DIR REV && cd DIR && python3 -m venv .venv && .venv/bin/pip install -e ."),
    Artefact((f"{R}/peersim-compare-pushsum-compiled.txt",), "frozen", ("SIZES='1000 10000' bench/peersim_compare.sh",),
             note="composed by hand from this command in checkouts of 915b97c and 01809df (its header)"),
)


# -- commands ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    env: dict[str, str]
    words: list[str]  # as written: words[0] is dgdrf, python or a script path
    stdout: str | None = None
    append: bool = False

    def argv(self) -> list[str]:
        head, rest = self.words[0], self.words[1:]
        if head == "dgdrf":
            return [sys.executable, "-m", "dgdrf", *rest]
        if head in ("python", "python3"):
            return [sys.executable, *rest]
        if head.endswith(".sh"):
            return ["bash", head, *rest]
        raise RegenerateError(f"cannot run {head!r}: a command starts with dgdrf, python or a bench/*.sh script")

    def script(self) -> str | None:
        """The repository file a command runs (python SCRIPT, bench/x.sh), if any."""
        if self.words[0] in ("python", "python3"):
            return self.words[1] if len(self.words) > 1 else None
        return self.words[0] if self.words[0].endswith(".sh") else None


def parse_command(line: str) -> Command:
    """``VAR=value ... program words [> FILE | >> FILE]``."""
    words = shlex.split(line)
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith(("-", "/", ".")) and words[0].split("=", 1)[0].isidentifier():
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    stdout, append = None, False
    if len(words) >= 2 and words[-2] in (">", ">>"):
        stdout, append = words[-1], words[-2] == ">>"
        words = words[:-2]
    if not words or any(w in ("|", "&&", ";", "<", ">", ">>") for w in words):
        raise RegenerateError(f"cannot parse command {line!r}: only VAR=value, words and a final > or >> FILE")
    return Command(env, words, stdout, append)


def _inputs(a: Artefact) -> list[str]:
    """What ``--out`` copies for ``a``: its declared inputs and every command word naming
    a file of the checkout that is not one of its own outputs."""
    found = list(a.inputs)
    for line in a.commands:
        c = parse_command(line)
        for w in c.words[1:]:
            if (ROOT / w).is_file() and not a.covers(w) and w not in found:
                found.append(w)
    return found


def _copy_inputs(a: Artefact, out: Path, dry: bool, copied: set[str]) -> None:
    for rel in _inputs(a):
        src, dst = ROOT / rel, out / rel
        if dst.exists() or rel in copied:
            continue
        if not src.exists():
            raise RegenerateError(f"{a.name}: input {rel} is missing from the checkout")
        print(f"copy {rel} -> {dst}")
        copied.add(rel)
        if dry:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra)
    return env


def _run(a: Artefact, cwd: Path, dry: bool) -> None:
    """Run ``a``'s commands in ``cwd``. What they print into a file goes to a staging
    file beside it, moved over the file once every command has succeeded: a failed
    command leaves the committed file as it was."""
    staged: dict[Path, Path] = {}
    if not dry:
        for p in a.paths:  # where the commands write (a copy starts with only the inputs)
            (cwd / p).parent.mkdir(parents=True, exist_ok=True)
    try:
        for line in a.commands:
            c = parse_command(line)
            print(f"$ {'cd ' + shlex.quote(str(cwd)) + ' && ' if cwd != ROOT else ''}{line}", flush=True)
            if dry:
                continue
            argv = c.argv()
            if c.stdout:
                target = cwd / c.stdout
                target.parent.mkdir(parents=True, exist_ok=True)
                if target not in staged:
                    staged[target] = target.with_name(f".{target.name}.regenerating")
                    if c.append and target.exists():
                        shutil.copyfile(target, staged[target])
                    else:
                        staged[target].write_bytes(b"")
                elif not c.append:
                    staged[target].write_bytes(b"")
                with staged[target].open("a", encoding="utf-8") as sink:
                    proc = subprocess.run(argv, cwd=cwd, env=_environment(c.env), stdout=sink)
            else:
                proc = subprocess.run(argv, cwd=cwd, env=_environment(c.env))
            if proc.returncode != 0:
                raise RegenerateError(f"{a.name}: `{line}` exited with status {proc.returncode}")
        for target, tmp in staged.items():
            os.replace(tmp, target)
    finally:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)


def _remove_leftovers(a: Artefact, since: float) -> None:
    """In place: figures the run did not write again are no longer drawn."""
    for rel in a.files(ROOT):
        if any(fnmatch.fnmatchcase(rel, g) for g in a.owned) and (ROOT / rel).stat().st_mtime < since:
            (ROOT / rel).unlink()
            print(f"removed {rel} (not drawn by this run)")


def compare(a: Artefact, out: Path) -> list[tuple[str, str]]:
    """(file, verdict) for every file of ``a`` in the checkout or in ``out``:
    identical, differs, missing (not made again) or new (not committed)."""
    rows = []
    for rel in sorted(set(a.files(ROOT)) | set(a.files(out))):
        here, there = ROOT / rel, out / rel
        if not there.exists():
            rows.append((rel, "missing"))
        elif not here.exists():
            rows.append((rel, "new"))
        else:
            rows.append((rel, "identical" if filecmp.cmp(here, there, shallow=False) else "differs"))
    return rows


# -- selection and listing ---------------------------------------------------------------------------
def _relative(path: str) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            raise RegenerateError(f"{path}: not inside the repository {ROOT}") from None
    here = (Path.cwd() / p).resolve()
    if here.exists() and here.is_relative_to(ROOT):
        return here.relative_to(ROOT).as_posix()
    return p.as_posix().rstrip("/")


def select(kinds: set[str] | None, only: list[str]) -> list[Artefact]:
    """The artefacts of ``kinds`` (None: report, or every kind when ``only`` is given)
    under or at the paths ``only``, in the order they are made (records first)."""
    chosen = list(TABLE)
    if only:
        wanted = [_relative(p) for p in only]
        picked = []
        for w in wanted:
            hit = [a for a in TABLE if any(_matches(w, p.rstrip("/")) or _matches(p, w) for p in a.paths) or any(_matches(w, f) for f in a.files(ROOT))]
            if not hit:
                raise RegenerateError(f"{w}: no artefact of the table is at or under this path (see --list)")
            picked += [a for a in hit if a not in picked]
        chosen = picked
    if kinds is None:
        kinds = set(KINDS) if only else {"report"}
    chosen = [a for a in chosen if a.kind in kinds]
    return sorted(chosen, key=lambda a: ORDER[a.kind])


def render_table() -> str:
    lines = []
    for kind in KINDS:
        items = [a for a in TABLE if a.kind == kind]
        lines.append(f"## {kind} ({len(items)})")
        for a in items:
            n = len(a.files(ROOT))
            lines.append(f"{a.name}  [{n} file{'s' if n != 1 else ''}{', ' + a.cost if a.cost else ''}]")
            for extra in a.paths[1:]:
                lines.append(f"  also {extra}")
            for line in a.commands:
                lines.append(f"  $ {line}")
            if a.note:
                lines.append(f"  # {a.note}")
        lines.append("")
    counts = ", ".join(f"{sum(a.kind == k for a in TABLE)} {k}" for k in KINDS)
    lines.append(f"{len(TABLE)} artefacts ({counts}) covering {len(_all_files(ROOT))} files under {RESULTS}/")
    return "\n".join(lines)


def uncovered(root: Path = ROOT) -> list[str]:
    """Files under bench/results/ no artefact of the table covers."""
    return [rel for rel in _all_files(root) if not any(a.covers(rel) for a in TABLE)]


# -- main ------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = OneLineErrorParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the table and exit")
    ap.add_argument("--kind", action="append", metavar="KIND", help=f"regenerate the artefacts of this kind ({', '.join(KINDS[:3])} or all; repeatable or comma-separated; default report, or every kind with --only)")
    ap.add_argument("--only", action="append", metavar="PATH", default=[], help="only the artefacts at or under PATH (repeatable)")
    ap.add_argument("--dry-run", action="store_true", help="print the copies and commands, run nothing")
    ap.add_argument("--out", type=Path, metavar="DIR", help="write into DIR (a copy of the inputs it needs) instead of in place")
    ap.add_argument("--compare", action="store_true", help="with --out: compare what was made with the committed files (exit 1 if any differs)")
    args = ap.parse_args(argv)
    try:
        if args.list:
            print(render_table())
            return 0
        kinds = None
        if args.kind:
            kinds = {k.strip() for spec in args.kind for k in spec.split(",") if k.strip()}
            if "all" in kinds:
                kinds = set(KINDS)
            bad = sorted(kinds - set(KINDS))
            if bad:
                raise RegenerateError(f"unknown kind {', '.join(bad)} (choose from {', '.join(KINDS[:3])} or all)")
        if args.compare and not args.out:
            raise RegenerateError("--compare needs --out (in place there is nothing to compare with)")
        chosen = select(kinds, args.only)
        if not chosen:
            raise RegenerateError("nothing selected (see --list)")
        cwd = ROOT
        if args.out:
            cwd = args.out.resolve()
            if cwd == ROOT or cwd.is_relative_to(ROOT / RESULTS):
                raise RegenerateError(f"--out {args.out}: give a directory other than the checkout and outside {RESULTS}/ (the copy is laid out as the repository)")
            if not args.dry_run:
                cwd.mkdir(parents=True, exist_ok=True)
        failed = 0
        copied: set[str] = set()
        verdicts: list[tuple[str, str]] = []
        for a in chosen:
            if a.kind == "frozen":
                print(f"# {a.name}: frozen, nothing to run ({a.note})")
                continue
            try:
                if args.out:
                    _copy_inputs(a, cwd, args.dry_run, copied)
                since = time.time() - 0.001
                _run(a, cwd, args.dry_run)
                if not args.out and not args.dry_run and a.owned:
                    _remove_leftovers(a, since)
                if args.compare and not args.dry_run:
                    verdicts += compare(a, cwd)
            except RegenerateError as exc:
                print(f"{PROG}: error: {exc}", file=sys.stderr)
                failed += 1
        for rel, verdict in verdicts:
            print(f"{verdict:9s} {rel}")
        if failed:
            print(f"{PROG}: error: {failed} of {len(chosen)} artefacts failed", file=sys.stderr)
            return 1
        return 1 if any(v != "identical" for _, v in verdicts) else 0
    except RegenerateError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
