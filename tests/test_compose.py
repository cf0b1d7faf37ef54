"""The compose cluster for real: the Dockerfile built offline and docker-compose.yml run
with podman (no Docker engine here). Opt-in (`pytest -m compose`, as root): `.ci/run`
installs podman, runc, debootstrap and podman-compose and runs it.

The base image `python:3.11-slim-bookworm` cannot be pulled (no registry is reachable),
so it is made locally: a minimal Debian bookworm with python3 (debootstrap), imported
under that name. The project goes into the image from wheels built here (`pip wheel`),
so the image build needs no network; the Dockerfile stays the standard one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dgdrf.bench.store import iter_records

pytestmark = pytest.mark.compose

ROOT = Path(__file__).resolve().parents[1]
BASE_IMAGE = "docker.io/library/python:3.11-slim-bookworm"
PROJECT = "dgdrfcompose"


def _podman_compose() -> list[str] | None:
    exe = shutil.which("podman-compose")
    if exe:
        return [exe]
    venv = Path(os.environ.get("DGDRF_PODMAN_COMPOSE", "/opt/podman-compose/bin/podman-compose"))
    return [str(venv)] if venv.exists() else None


def _run(cmd: list[str], timeout: float, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def base_image():
    if os.geteuid() != 0:
        pytest.skip("needs root (rootful podman)")
    if shutil.which("podman") is None or _podman_compose() is None:
        pytest.skip("needs podman and podman-compose (.ci/run installs them)")
    if _run(["podman", "image", "exists", BASE_IMAGE], 60).returncode != 0:
        if shutil.which("debootstrap") is None:
            pytest.skip("needs debootstrap to build the base image")
        subprocess.run(["bash", str(ROOT / ".ci" / "podman-setup.sh")], check=True, timeout=1800)
    return BASE_IMAGE


@pytest.fixture(scope="module")
def image(base_image, tmp_path_factory) -> Path:
    """The image built offline from this tree (its wheels and its dependencies', the
    cluster extra's included); the build context's directory."""
    ctx = tmp_path_factory.mktemp("compose") / "ctx"
    files = _run(["git", "ls-files"], 60, cwd=ROOT).stdout.split()
    for f in files:
        (ctx / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, ctx / f)
    wheels = _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(ctx / "wheels"), f"{ROOT}[cluster]"], 900)
    assert wheels.returncode == 0, wheels.stderr[-2000:]
    build = _run(["podman", "build", "--pull=never", "-t", "dgdrf:latest", str(ctx)], 1200)
    assert build.returncode == 0, build.stderr[-3000:]
    return ctx


def test_compose_cluster_runs_to_saturation(image, tmp_path):
    ctx = image
    (ctx / "results").mkdir(exist_ok=True)
    env = {**os.environ, "DGDRF_SERVERS": "4", "DGDRF_USERS": "2", "DGDRF_POLICY": "drf", "DGDRF_SEED": "3", "PODMAN_COMPOSE_PROVIDER": "podman"}
    pc = [*_podman_compose(), "-p", PROJECT, "-f", str(ctx / "docker-compose.yml")]
    try:
        up = subprocess.Popen([*pc, "up", "--no-build"], cwd=ctx, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        result_file = ctx / "results" / "result.json"
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not result_file.exists() and up.poll() is None:
            time.sleep(1.0)
        time.sleep(1.0)
        assert result_file.exists(), (up.stdout.read()[-4000:] if up.poll() is not None else "no result within 600 s")
        result = json.loads(result_file.read_text())
        try:
            up.wait(120)  # every node shuts down after the collector's result
        except subprocess.TimeoutExpired:
            up.kill()
        out = up.stdout.read() if up.stdout else ""
    finally:
        _run([*pc, "down", "-v", "-t", "2"], 300, cwd=ctx, env=env)  # -v: the keys volume too, so every run makes its keys
    assert result["mode"] == "network" and result["tls"] is True and result["processes"] == 9  # bootstrap, collector, gateway, 4 servers, 2 users
    assert result["stop_reason"] == "saturated" and result["invariant_violations"] == []
    assert result["servers"] == 4 and result["users"] == 2 and result["allocations"] > 0
    assert "min dominant share" in out  # the collector printed its table


def test_compose_sweep_profile_is_a_dask_cluster_for_dgdrf_sweep(image, tmp_path):
    """`--profile sweep up dask-scheduler dask-worker`: a scheduler on loopback and two
    workers of the image; a sweep through it from this machine records what the local
    process pool records (the workers' dgdrf is this tree's: else they are refused)."""
    ctx = image
    env = {**os.environ, "DGDRF_SWEEP_WORKERS": "2", "PODMAN_COMPOSE_PROVIDER": "podman"}
    pc = [*_podman_compose(), "-p", PROJECT + "sweep", "-f", str(ctx / "docker-compose.yml"), "--profile", "sweep"]
    sweep = tmp_path / "s.toml"
    sweep.write_text('[sweep]\nname = "compose-sweep"\npolicies = ["drf", "dgdrf"]\nneighbors = [2]\nseeds = [1, 2]\nservers = [10]\nusers = [4]\n')
    try:
        up = _run([*pc, "up", "-d", "--no-build", "dask-scheduler", "dask-worker"], 300, cwd=ctx, env=env)
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        deadline = time.monotonic() + 120
        while True:  # the scheduler's port, then its workers (the executor waits 10 s for one)
            done = _run([sys.executable, "-m", "dgdrf.cli", "sweep", str(sweep), "--out", str(tmp_path / "dask"), "--scheduler", "tcp://127.0.0.1:8786", "--quiet"], 600)
            if done.returncode == 0 or time.monotonic() > deadline or "cannot reach" not in done.stderr and "no worker" not in done.stderr:
                break
            time.sleep(2.0)
        logs = _run([*pc, "logs"], 60, cwd=ctx, env=env)
    finally:
        _run([*pc, "down", "-t", "2"], 300, cwd=ctx, env=env)
    assert done.returncode == 0, done.stderr[-3000:] + logs.stdout[-3000:]
    local = _run([sys.executable, "-m", "dgdrf.cli", "sweep", str(sweep), "--out", str(tmp_path / "local"), "--quiet", "--workers", "2"], 600)
    assert local.returncode == 0, local.stderr[-2000:]

    def records(out: Path) -> dict[str, dict]:
        lines = list(iter_records(out))  # every record written: a run written twice shows
        assert len({r["key"] for r in lines}) == len(lines) == 4
        keep = {}
        for r in lines:
            r = {k: v for k, v in r.items() if k not in ("wall_s", "cpu_s", "peak_rss_mb", "host", "finished_at")}
            r["result"].pop("wall_s")
            keep[r["key"]] = r
        return keep

    remote = records(tmp_path / "dask")
    assert remote == records(tmp_path / "local")
    assert all(r["status"] == "ok" for r in remote.values())
    hosts = {r["host"] for r in iter_records(tmp_path / "dask")}
    assert hosts and hosts.isdisjoint({os.uname().nodename})  # ran in the containers

