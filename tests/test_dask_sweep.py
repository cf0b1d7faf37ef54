"""Sweeps on a Dask cluster (dgdrf/bench/executors.py DaskExecutor): a real `dask scheduler`
and two `dask worker` processes on loopback, started here and always torn down.

- the records of a sweep run through them are the records of the same sweep run by the
  local process pool, but for what the machine measures (wall and CPU time, memory, host,
  when);
- a worker killed (SIGKILL) while runs are in flight loses none: every run is recorded
  exactly once, and ok;
- a scheduler that is not there is one `dgdrf: error:` line, exit status 2, within
  seconds, and nothing written; workers with other code are refused.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from dgdrf.bench.executors import check_identities, identity, run_isolated  # noqa: E402
from dgdrf.bench.grid import parse_sweep  # noqa: E402
from dgdrf.bench.store import iter_records, read_records  # noqa: E402
from dgdrf.bench.sweep import run_sweep  # noqa: E402
from dgdrf.errors import ConfigError  # noqa: E402

DASK = Path(sys.executable).with_name("dask")
#: what the machine measures: it differs between two runs of the same run (and the result's wall_s)
MEASURED = ("wall_s", "cpu_s", "peak_rss_mb", "host", "finished_at")
#: bounds of the whole cluster's life in a test
START_S = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and workers as subprocesses (their own process groups, killed at the end)."""

    def __init__(self, workers: int, log: Path) -> None:
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.log = log
        self.procs: list[subprocess.Popen] = []
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"], "scheduler")
        self.workers = [
            # no nanny: a killed worker stays dead (a nanny would start another at once)
            self._start([str(DASK), "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", f"w{i}"], f"worker{i}")
            for i in range(workers)
        ]
        self._wait_ready(workers)

    def _start(self, argv: list[str], name: str) -> subprocess.Popen:
        out = (self.log / f"{name}.log").open("w")
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.log)
        self.procs.append(proc)
        return proc

    def _wait_ready(self, n: int) -> None:
        from distributed import Client

        deadline = time.monotonic() + START_S
        while True:
            try:
                with Client(self.address, timeout=5) as c:
                    c.wait_for_workers(n, timeout=max(1.0, deadline - time.monotonic()))
                    return
            except (OSError, TimeoutError):
                if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                    raise RuntimeError(f"the Dask cluster did not start: {self.logs()}") from None
                time.sleep(0.5)

    def logs(self) -> str:
        return "\n".join(f"--- {f.name}\n{f.read_text()[-1500:]}" for f in sorted(self.log.glob("*.log")))

    def kill_worker(self, i: int) -> None:
        os.killpg(self.workers[i].pid, signal.SIGKILL)
        self.workers[i].wait(10)

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        for p in self.procs:
            p.wait(10)


@pytest.fixture
def cluster(tmp_path) -> Iterator[Cluster]:
    log = tmp_path / "dask"
    log.mkdir()
    c = Cluster(2, log)
    try:
        yield c
    finally:
        c.close()


def _grid(name: str, seeds: list[int]) -> dict:
    return {"sweep": {"name": name, "policies": ["drf", "fifo", "dgdrf"], "neighbors": [2], "seeds": seeds, "servers": [12], "users": [5]}}


def _comparable(out: Path) -> dict[str, dict]:
    records, bad = read_records(out)
    assert bad == 0
    out_ = {}
    for r in records:
        rec = {k: v for k, v in r.items() if k not in MEASURED}
        rec["result"] = {k: v for k, v in rec["result"].items() if k != "wall_s"}  # the run's own wall time
        out_[r["key"]] = rec
    return out_


def test_a_sweep_on_dask_workers_records_what_the_process_pool_does(cluster, tmp_path):
    spec = parse_sweep(_grid("dask-vs-local", [1, 2]))
    local = run_sweep(spec, tmp_path / "local", workers=2, progress=False)
    remote = run_sweep(spec, tmp_path / "dask", scheduler=cluster.address, progress=False)
    assert (local.done, local.failed, remote.done, remote.failed) == (6, 0, 6, 0), cluster.logs()
    assert _comparable(tmp_path / "dask") == _comparable(tmp_path / "local")
    records, _ = read_records(tmp_path / "dask")
    assert all(r["host"] == socket.gethostname() and r["peak_rss_mb"] > 0 for r in records)
    manifest = json.loads((tmp_path / "dask" / "sweep.json").read_text())
    assert manifest["sessions"][-1] | {"executor": "dask", "scheduler": cluster.address, "workers": 2} == manifest["sessions"][-1]
    # resuming through the cluster finds everything done
    again = run_sweep(spec, tmp_path / "dask", scheduler=cluster.address, progress=False)
    assert (again.done, again.skipped) == (0, 6)


def test_a_worker_killed_mid_sweep_loses_no_run(cluster, tmp_path):
    spec = parse_sweep(_grid("dask-kill", [1, 2, 3]))
    killed: list[int] = []

    def on_record(rec: dict) -> None:
        if not killed:  # the first run is back: the others are queued or running on both workers
            cluster.kill_worker(0)
            killed.append(1)

    outcome = run_sweep(spec, tmp_path / "out", scheduler=cluster.address, progress=False, on_record=on_record)
    assert killed and cluster.workers[0].poll() is not None
    assert (outcome.done, outcome.failed) == (9, 0), cluster.logs()
    lines = list(iter_records(tmp_path / "out"))  # every record written, a run written twice too
    keys = [x["key"] for x in lines]
    assert len(keys) == len(set(keys)) == 9 == len(spec.runs())
    assert all(x["status"] == "ok" for x in lines)


def test_no_scheduler_there_is_one_error_line_and_nothing_written(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text('[sweep]\nname = "nowhere"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [4]\nusers = [2]\n')
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dgdrf.cli", "sweep", str(sweep), "--out", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:1"], capture_output=True, text=True, timeout=60)
    assert time.monotonic() - t0 < 30
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dgdrf: error: --scheduler tcp://127.0.0.1:1: cannot reach a Dask scheduler"), done.stderr
    assert not (tmp_path / "out").exists()


def test_workers_with_other_code_are_refused():
    mine = identity()
    check_identities("tcp://x:1", mine, {"tcp://a:1": dict(mine), "tcp://b:1": dict(mine)})
    with pytest.raises(ConfigError, match=r"1 of 2 worker\(s\) run other code than this client \(code differ\)"):
        check_identities("tcp://x:1", mine, {"tcp://a:1": dict(mine), "tcp://b:1": {**mine, "code": "0" * 16}})
    with pytest.raises(ConfigError, match=r"\(dgdrf, libraries differ\)"):
        check_identities("tcp://x:1", mine, {"tcp://a:1": {**mine, "dgdrf": "0.0.1", "libraries": {}}})


def test_a_run_on_a_worker_past_its_timeout_is_killed_and_recorded_failed():
    spec = parse_sweep(_grid("timeout", [1]))
    run = spec.runs()[0]
    rec = run_isolated(run, run.dataset.load(), timeout=0.05)
    assert rec["status"] == "error" and rec["error"] == "timed out after 0.05 s" and rec["result"] is None
    ok = run_isolated(run, run.dataset.load(), timeout=None)
    assert ok["status"] == "ok" and ok["result"]["stop_reason"] == "saturated" and ok["peak_rss_mb"] > 0
