"""The compiled core (setup.py, dgdrf/build_info.py) computes what the .py sources do:
the same runs, pure and compiled, give the same JSON but for the wall time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dgdrf.build_info import COMPILED_MODULES, compiled_modules, core

ROOT = Path(__file__).resolve().parents[1]
POLICIES = "drf,fifo,probes,ddrf-random,ddrf-gradient,dgdrf,pdgdrf"
#: every policy on a small generated cluster, with loss and duplication (every resend
#: path), and push-sum capacity estimates (floating-point sums in gossip order)
RUNS = [
    ["--servers", "12", "--users", "5", "--seed", "3", "--loss", "0.05", "--duplicate", "0.01"],
    ["--servers", "16", "--users", "6", "--seed", "2", "--policy", "dgdrf,pdgdrf", "--capacity-knowledge", "pushsum", "--neighbors", "3"],
]


def _pure_copy(dest: Path) -> None:
    """The package's sources alone (no extension modules) under ``dest``."""
    shutil.copytree(ROOT / "dgdrf", dest / "dgdrf", ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))


def _run(cwd: Path, args: list[str], out: Path) -> list[dict]:
    argv = [sys.executable, "-m", "dgdrf.cli", "run", *args, "--json", str(out), "--quiet"]
    if "--policy" not in args:
        argv[4:4] = ["--policy", POLICIES]
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    runs = doc if isinstance(doc, list) else [doc]
    for r in runs:
        r.pop("wall_s")
    return runs


def _core(cwd: Path) -> str:
    proc = subprocess.run([sys.executable, "-c", "from dgdrf.build_info import core; print(core())"], cwd=cwd, capture_output=True, text=True, timeout=60)
    return proc.stdout.strip()


@pytest.mark.skipif(not compiled_modules(), reason="no module is compiled (DGDRF_PURE=1 or no C compiler at install)")
def test_compiled_and_pure_runs_are_identical(tmp_path):
    pure, compiled = tmp_path / "pure", tmp_path / "compiled"
    pure.mkdir()
    compiled.mkdir()
    _pure_copy(pure)
    assert _core(pure) == "pure" and _core(compiled) == core()
    for i, args in enumerate(RUNS):
        assert _run(compiled, args, tmp_path / f"c{i}.json") == _run(pure, args, tmp_path / f"p{i}.json")


@pytest.mark.skipif(os.environ.get("DGDRF_PURE", "") not in ("", "0"), reason="installed with DGDRF_PURE=1")
@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler: the core stays pure Python")
def test_every_hot_module_is_compiled_where_a_compiler_is():
    """pip install -e . compiled them (else they silently ran ~1.5x slower)."""
    assert compiled_modules() == list(COMPILED_MODULES), core()


@pytest.mark.skipif(not compiled_modules(), reason="no module is compiled (DGDRF_PURE=1 or no C compiler at install)")
def test_an_edited_module_makes_the_whole_core_run_from_its_sources(tmp_path):
    """A compiled module whose .py or .pxd file changed since pip install -e . is stale:
    then every compiled module imports from its source, with a warning (a compiled
    gradient beside a pure actor fails: 'Role size changed'). DGDRF_PURE=1 when running
    imports every source."""
    shutil.copytree(ROOT / "dgdrf", tmp_path / "dgdrf", ignore=shutil.ignore_patterns("*.c", "__pycache__"))
    probe = "import dgdrf.runtime.actor as a, dgdrf.overlay.gradient as g; print(a.__file__.endswith('.py'), g.__file__.endswith('.py'))"

    def run(env_extra: dict) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "DGDRF_PURE"} | env_extra
        return subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)

    assert run({}).stdout.split() == ["False", "False"]  # both compiled, up to date
    assert run({"DGDRF_PURE": "1"}).stdout.split() == ["True", "True"]
    for suffix in (".py", ".pxd"):  # the code, or its C types, changed
        source = tmp_path / "dgdrf" / "runtime" / f"actor{suffix}"
        original = source.read_bytes()
        source.write_bytes(original + b"\n# edited\n")
        edited = run({})
        assert edited.returncode == 0, edited.stderr[-2000:]
        assert edited.stdout.split() == ["True", "True"]
        assert "actor.py (or .pxd) changed since compiled" in edited.stderr
        source.write_bytes(original)
        assert run({}).stdout.split() == ["False", "False"]


@pytest.mark.skipif(not compiled_modules(), reason="no module is compiled (DGDRF_PURE=1 or no C compiler at install)")
def test_sources_newer_than_their_extensions_but_unchanged_stay_compiled(tmp_path):
    """A wheel's install writes its files in zip order, so a .py file can be newer than its
    extension: that is no edit (the compose image ran its core half pure and failed to
    import). The build's digests decide; only a build without them is judged by times."""
    shutil.copytree(ROOT / "dgdrf", tmp_path / "dgdrf", ignore=shutil.ignore_patterns("*.c", "__pycache__"))
    package = tmp_path / "dgdrf"
    newest = max(f.stat().st_mtime for f in package.rglob("*") if f.suffix in (".so", ".pyd"))
    for name in COMPILED_MODULES:
        for suffix in (".py", ".pxd"):
            path = package.joinpath(*name.split(".")[1:]).with_suffix(suffix)
            if path.exists():
                os.utime(path, (newest + 10, newest + 10))
    env = {k: v for k, v in os.environ.items() if k != "DGDRF_PURE"}
    probe = subprocess.run([sys.executable, "-c", "from dgdrf.build_info import core; print(core())"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert (probe.stdout.strip(), probe.stderr) == ("compiled", "")
    (package / "compiled_sources.json").unlink()  # a build from before the record: times decide
    probe = subprocess.run([sys.executable, "-c", "from dgdrf.build_info import core; print(core())"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert probe.stdout.strip() == "pure" and "changed since compiled" in probe.stderr


#: the oracle, determinism and invariant tests, run a second time on the pure build: they
#: must pass on both. The default suite reruns the quick ones; the overlay and saturation
#: tests (about 55 s pure, on one core) only with -m slow, as the runs above already
#: compare every policy pure and compiled, field by field
PURE_TESTS = [
    "tests/test_oracles.py",
    "tests/test_runtime.py",
    "tests/test_metrics.py",
    "tests/test_emulation.py::test_json_is_identical_for_the_same_seed_apart_from_wall_time",
    "tests/test_cli.py::test_run_is_deterministic",
]
#: the pdgdrf centre test (12 s pure) is left to the compiled run
PURE_TESTS_SLOW = ["tests/test_overlay.py", "tests/test_saturation.py", "--deselect", "tests/test_saturation.py::test_pdgdrf_bottom_servers_do_not_take_themselves_for_the_centre"]


def _pass_on_the_pure_build(tests: list[str]) -> None:
    env = os.environ | {"DGDRF_PURE": "1"}
    probe = subprocess.run([sys.executable, "-c", "from dgdrf.build_info import core; print(core())"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "pure", probe.stderr
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow and not compose", *tests]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout


@pytest.mark.skipif(not compiled_modules(), reason="no module is compiled: the other tests already run the pure build")
def test_oracle_determinism_and_invariant_tests_pass_on_the_pure_build():
    _pass_on_the_pure_build(PURE_TESTS)


@pytest.mark.slow
@pytest.mark.skipif(not compiled_modules(), reason="no module is compiled: the other tests already run the pure build")
def test_overlay_and_saturation_tests_pass_on_the_pure_build():
    _pass_on_the_pure_build(PURE_TESTS_SLOW)


#: overlay runs large enough that the compiled clock readies the next events' state
#: (clock.pxd's _WARM_FROM, 2,048 pending events): Cyclon, and push-sum over Cyclon
OVERLAY_RUNS = [
    ["--protocol", "cyclon", "--nodes", "2500", "--cycles", "3", "--view-size", "20", "--shuffle-length", "8", "--seed", "4"],
    ["--protocol", "pushsum", "--nodes", "1300", "--cycles", "3", "--seed", "5"],
]
_OVERLAY_TIMES = ("wall_s", "start_wall_s", "metrics_wall_s", "node_cycles_per_s", "messages_per_s")


def _overlay(cwd: Path, args: list[str], out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "dgdrf.cli", "overlay", *args, "--json", str(out), "--quiet"], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    for key in _OVERLAY_TIMES:
        doc.pop(key)
    return doc


@pytest.mark.skipif(not compiled_modules(), reason="no module is compiled (DGDRF_PURE=1 or no C compiler at install)")
def test_readying_the_next_events_changes_no_result(tmp_path):
    """Past 2,048 pending events the compiled clock has each next event's role hint its
    state to the cache (clock.Warmable): the runs must stay those of the pure build."""
    from dgdrf.overlay_run import OverlayConfig, OverlayRun

    probe = OverlayRun(OverlayConfig(protocol="cyclon", nodes=2500, cycles=3, cyclon_view=20, cyclon_shuffle=8))
    probe.run_cycles(1)
    assert probe.clock.pending() >= 2048  # the readying runs in these runs
    pure = tmp_path / "pure"
    pure.mkdir()
    _pure_copy(pure)
    assert _core(pure) == "pure"
    for i, args in enumerate(OVERLAY_RUNS):
        assert _overlay(tmp_path, args, tmp_path / f"c{i}.json") == _overlay(pure, args, tmp_path / f"p{i}.json")
