"""Where a sweep's runs execute: one interface, two implementations.

:class:`Executor` takes the runs not yet done (longest first) and yields each run with its
record as it finishes; the sweep (dgdrf/bench/sweep.py) keeps the results store, the
progress bar, resuming and the report, whichever executes.

- :class:`ProcessPool` (the default): one process per run on this machine, forked from a
  preloaded server, at most ``workers`` at once; a run past ``timeout`` is killed.
- :class:`DaskExecutor` (``--scheduler tcp://HOST:PORT`` or ``local[:N]``): every run one
  task of a Dask distributed cluster (``Client.submit``, ``as_completed``). Runs go as
  data: the client loads each data set once and scatters the scenario itself, so a
  worker needs no file of the client's, only the same dgdrf (its version, code and the
  libraries that change results: refused otherwise, before anything runs). On the worker
  each run is a subprocess of its own (:func:`run_isolated`), so that its peak memory is
  its own, as locally, and a run past ``timeout`` is killed there. A worker that dies
  loses no run: the scheduler gives its tasks to another (a task whose workers died
  ``distributed.scheduler.allowed-failures`` times is recorded as failed), and the client
  receives each task's result once.

Every record holds the run's wall and CPU time, peak memory, the core (compiled or pure)
and the host that ran it.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import re
import json
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Generator
from multiprocessing.connection import wait
from typing import Any, Protocol

from dgdrf.bench.grid import RunSpec, run_parameters
from dgdrf.build_info import core
from dgdrf.errors import ConfigError, DgdrfError
from dgdrf.runtime.process import die_with_parent

#: seconds to reach a Dask scheduler, and to wait for its first worker
CONNECT_TIMEOUT_S = 10.0


def execute(run: RunSpec, scenario: Any = None) -> dict[str, Any]:
    """One run in this process: its record's status, result or error, and what it cost.
    ``scenario``: the data set, loaded (default: ``run.dataset.load()``)."""
    t0 = time.perf_counter()
    try:
        from dgdrf.emulation import RunConfig, run_emulation

        scenario = run.dataset.load() if scenario is None else scenario
        p = run.params
        extra = {k: v for k, v in p.items() if k in run_parameters()}
        config = RunConfig.from_settings(scenario.settings, policy=p["policy"], neighbors=p["neighbors"], seed=p["seed"], **extra)
        recorders = []
        if run.page:
            from dgdrf.pages.recorder import RunRecorder

            recorders.append(RunRecorder())
        result = run_emulation(scenario, config, observers=recorders).to_dict()
        rec: dict[str, Any] = {"status": "ok", "result": result, "error": None}
        if recorders and recorders[0].record is not None:
            from dgdrf.pages.run_page import run_page

            rec["page"] = run_page(scenario, [recorders[0].record], command=f"a run of a sweep: {run.key}, {json.dumps(p, sort_keys=True)}")
    except DgdrfError as exc:
        rec = {"status": "error", "result": None, "error": str(exc)}
    except Exception as exc:  # a bug: record it and let the sweep go on
        rec = {"status": "error", "result": None, "error": f"{type(exc).__name__}: {exc}"}
    rec["wall_s"] = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rec["peak_rss_mb"] = usage.ru_maxrss / 1024.0  # KiB on Linux
    rec["cpu_s"] = usage.ru_utime + usage.ru_stime  # unlike wall_s, not stretched by a shared core
    rec["core"] = core()  # compiled or pure Python: the same result, another wall time
    rec["host"] = socket.gethostname()
    return rec


def failed(error: str, wall_s: float) -> dict[str, Any]:
    """The record of a run that gave none of its own (killed, timed out, lost)."""
    return {"status": "error", "result": None, "error": error, "wall_s": wall_s, "peak_rss_mb": None, "host": socket.gethostname()}


class Executor(Protocol):
    """Runs a sweep's runs somewhere."""

    #: how many runs go at once (the manifest records it)
    workers: int

    def run(self, todo: list[RunSpec], timeout: float | None) -> Generator[tuple[RunSpec, dict[str, Any]], None, None]:
        """Start ``todo`` in this order as room allows; yield each run with its record as
        it ends. Closing the iterator (Ctrl-C) stops the runs still going."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the manifest says of it."""
        ...

    def close(self) -> None:
        """Give back what it holds (a local cluster, a connection)."""
        ...


# -- this machine's processes ----------------------------------------------------------------------
def _child(run: RunSpec, conn) -> None:
    """Worker process: one run; sends its record down ``conn``. Ctrl-C is the parent's
    business (it stops the children), so it is ignored here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(signal.SIGKILL)  # no orphan keeps a core busy for a result nobody reads
    conn.send(execute(run))
    conn.close()


def _context():
    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["dgdrf.emulation", "dgdrf.bench.executors"])
    return ctx


class ProcessPool:
    """One process per run on this machine, ``workers`` at once (default: every core)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or os.cpu_count() or 1

    def describe(self) -> dict[str, Any]:
        return {"executor": "processes", "workers": self.workers}

    def close(self) -> None:
        pass

    def run(self, todo: list[RunSpec], timeout: float | None) -> Generator[tuple[RunSpec, dict[str, Any]], None, None]:
        ctx = _context()
        running: dict[Any, tuple[RunSpec, Any, float]] = {}  # conn -> (run, process, started)
        pending = list(todo)
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    run = pending.pop(0)
                    recv, send = ctx.Pipe(duplex=False)
                    proc = ctx.Process(target=_child, args=(run, send), name=f"dgdrf-sweep-{run.key}")
                    proc.start()
                    send.close()
                    running[recv] = (run, proc, time.perf_counter())
                wait_for = None
                if timeout is not None:
                    wait_for = max(0.0, min(start + timeout for _, _, start in running.values()) - time.perf_counter())
                ready = wait([*running, *(p.sentinel for _, p, _ in running.values())], timeout=wait_for)
                now = time.perf_counter()
                for conn, (run, proc, start) in list(running.items()):
                    rec = None
                    if conn in ready or proc.sentinel in ready:
                        try:
                            rec = conn.recv()
                        except (EOFError, OSError):
                            proc.join(5)
                            rec = failed(f"worker process died (exit code {proc.exitcode}; killed or out of memory?)", now - start)
                    elif timeout is not None and now - start >= timeout:
                        proc.kill()
                        rec = failed(f"timed out after {timeout:g} s", now - start)
                    if rec is None:
                        continue
                    proc.join(5)
                    conn.close()
                    del running[conn]
                    yield run, rec
        finally:
            for _, proc, _ in running.values():
                proc.kill()
                proc.join(5)
            for conn in running:
                conn.close()


# -- a Dask cluster -------------------------------------------------------------------------------------
def identity() -> dict[str, Any]:
    """What must be the same on a worker as on the client for its runs to be this code's:
    the dgdrf version, its code's digest, and the versions of the libraries that change
    results (numpy: numbers; msgpack: message sizes)."""
    from dgdrf import __version__
    from dgdrf.provenance import provenance, source_digest

    return {"dgdrf": __version__, "code": source_digest(), "libraries": provenance()["libraries"]}


def check_identities(scheduler: str, mine: dict[str, Any], theirs: dict[str, dict[str, Any]]) -> None:
    """Refuse workers whose :func:`identity` is not the client's (``theirs``: worker
    address -> identity): their runs would not be this code's."""
    other = {w: i for w, i in theirs.items() if i != mine}
    if other:
        w, i = next(iter(sorted(other.items())))
        differ = ", ".join(k for k in mine if i.get(k) != mine[k])
        raise ConfigError(f"--scheduler {scheduler}: {len(other)} of {len(theirs)} worker(s) run other code than this client ({differ} differ), e.g. {w}: {i}; here: {mine}; install the same dgdrf on them")


def run_isolated(run: RunSpec, scenario: Any, timeout: float | None) -> dict[str, Any]:
    """On a worker: one run in a subprocess of its own (its own peak memory; killed past
    ``timeout``), fed the run and its scenario on stdin; its record."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "dgdrf.bench.executors"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(pickle.dumps((run, scenario), protocol=pickle.HIGHEST_PROTOCOL), timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return failed(f"timed out after {timeout:g} s", time.perf_counter() - t0)
    if proc.returncode != 0 or not out:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return failed(f"run process died (exit code {proc.returncode}; killed or out of memory?) {tail[0]}".strip(), time.perf_counter() - t0)
    return pickle.loads(out)


def _isolated_main() -> int:
    """``python -m dgdrf.bench.executors``: :func:`run_isolated`'s subprocess."""
    die_with_parent(signal.SIGKILL)  # its worker killed: no orphan run
    run, scenario = pickle.load(sys.stdin.buffer)
    rec = execute(run, scenario)
    sys.stdout.buffer.write(pickle.dumps(rec, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
    return 0


_LOCAL = re.compile(r"local(?::(\d+))?")
_TCP = re.compile(r"(?:tcp|tls)://\[?([^\]\s]+?)\]?:(\d+)")


def _probe(address: str, timeout: float) -> None:
    """A TCP connection to a tcp:// or tls:// scheduler: refused or unreachable is known in
    a moment, where Dask's client retries until its timeout."""
    m = _TCP.fullmatch(address)
    if m is None:
        return
    with socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout):
        pass
_ADDRESS = re.compile(r"(tcp|tls|ws|wss|inproc|ucx)://[^\s]+")


class DaskExecutor:
    """Every run one task of a Dask distributed cluster: ``tcp://HOST:PORT`` (a running
    scheduler) or ``local[:N]`` (a LocalCluster of N single-threaded worker processes,
    default one per core). Connects, and checks every worker's :func:`identity`, when made:
    a bad address, no scheduler there, no worker, or a worker with other code is a
    :class:`~dgdrf.errors.ConfigError` before anything runs."""

    def __init__(self, scheduler: str, connect_timeout: float = CONNECT_TIMEOUT_S) -> None:
        local = _LOCAL.fullmatch(scheduler)
        if not local and not _ADDRESS.fullmatch(scheduler):
            raise ConfigError(f"--scheduler {scheduler!r}: give a Dask scheduler's address (tcp://HOST:PORT) or local[:N]")
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ConfigError("--scheduler needs Dask: pip install 'dgdrf[cluster]'") from None
        self.scheduler = scheduler
        self._cluster = None
        try:
            if local:
                n = int(local.group(1) or os.cpu_count() or 1)
                if n < 1:
                    raise ConfigError(f"--scheduler {scheduler!r}: local:N needs N >= 1")
                self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
                self.client = Client(self._cluster, timeout=connect_timeout)
            else:
                _probe(scheduler, connect_timeout)
                self.client = Client(scheduler, timeout=connect_timeout)
        except ConfigError:
            raise
        except (OSError, TimeoutError) as exc:
            self.close()
            raise ConfigError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({type(exc).__name__}: {exc})") from None
        try:
            self.client.wait_for_workers(1, timeout=connect_timeout)
        except (OSError, TimeoutError):
            self.close()
            raise ConfigError(f"--scheduler {scheduler}: the scheduler has no worker (waited {connect_timeout:g} s); start some: dask worker {scheduler}") from None
        try:
            check_identities(scheduler, identity(), self.client.run(identity))
        except ConfigError:
            self.close()
            raise
        self.workers = sum(self.client.nthreads().values())

    def describe(self) -> dict[str, Any]:
        return {"executor": "dask", "scheduler": self.scheduler, "workers": self.workers}

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        if self._cluster is not None:
            self._cluster.close()

    def run(self, todo: list[RunSpec], timeout: float | None) -> Generator[tuple[RunSpec, dict[str, Any]], None, None]:
        from distributed import as_completed

        scenarios: dict[Any, Any] = {}  # data set -> its scenario, scattered once
        futures = {}
        try:
            for i, run in enumerate(todo):
                if run.dataset not in scenarios:
                    scenarios[run.dataset] = self.client.scatter(run.dataset.load(), hash=False)
                # priority: higher first, so the order given (longest first) is kept
                f = self.client.submit(run_isolated, run, scenarios[run.dataset], timeout, key=f"dgdrf-run-{run.key}", priority=len(todo) - i, pure=False)
                futures[f] = run
            for f in as_completed(futures):
                run = futures.pop(f)
                try:
                    rec = f.result()
                except Exception as exc:  # lost on too many workers (KilledWorker), or a bug
                    rec = failed(f"{type(exc).__name__}: {exc}", 0.0)
                yield run, rec
        finally:
            if futures:
                self.client.cancel(list(futures))


def executor(workers: int | None = None, scheduler: str | None = None) -> Executor:
    """The executor a sweep asks for: a Dask cluster's with ``scheduler``, else this
    machine's processes."""
    if scheduler is None:
        return ProcessPool(workers)
    if workers is not None:
        raise ConfigError("--workers is for this machine's processes; with --scheduler the cluster's workers run the runs")
    return DaskExecutor(scheduler)


if __name__ == "__main__":
    sys.exit(_isolated_main())
