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


def test_compose_cluster_runs_to_saturation(base_image, tmp_path):
    ctx = tmp_path / "ctx"
    files = _run(["git", "ls-files"], 60, cwd=ROOT).stdout.split()
    for f in files:
        (ctx / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, ctx / f)
    wheels = _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(ctx / "wheels"), str(ROOT)], 900)
    assert wheels.returncode == 0, wheels.stderr[-2000:]
    (ctx / "results").mkdir()
    env = {**os.environ, "DGDRF_SERVERS": "4", "DGDRF_USERS": "2", "DGDRF_POLICY": "drf", "DGDRF_SEED": "3", "PODMAN_COMPOSE_PROVIDER": "podman"}
    pc = [*_podman_compose(), "-p", PROJECT, "-f", str(ctx / "docker-compose.yml")]
    try:
        build = _run(["podman", "build", "--pull=never", "-t", "dgdrf:latest", str(ctx)], 1200)
        assert build.returncode == 0, build.stderr[-3000:]
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
