"""``dgdrf cluster up``: a whole cluster as local processes on loopback.

Starts a bootstrap (which owns the scenario and run configuration), a collector, a
gateway, and the servers and users grouped into processes (one node per process by
default), all running ``dgdrf node``, by default with keys made for the run (one
certificate per process, so no process can speak for another; mutual TLS); waits for the collector's result, returns it in
the ``dgdrf run --json`` format, and makes sure every process is gone afterwards, also
after Ctrl-C, SIGTERM or a time-out (nodes also die with the launcher: PR_SET_PDEATHSIG);
then the collector is told to stop first, and the result so far (``interrupted``) is
returned. The node logs stay in a temporary directory the command names; the keys made
for the run are removed (:meth:`Cluster.remove_keys`) unless kept on request.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dgdrf.cluster.keys import CA_CERT, make_keys, node_names
from dgdrf.log import get_logger

log = get_logger("dgdrf.cluster")


#: seconds a collector told to stop (SIGTERM) has to write the result so far
INTERRUPT_GRACE_S = 45.0


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def split_counts(total: int, parts: int) -> list[int]:
    """``total`` nodes over ``parts`` processes, as evenly as possible."""
    parts = max(1, min(parts, total))
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


@dataclass
class Cluster:
    """The processes of one local cluster."""

    run_args: list[str]  # scenario and run flags for the bootstrap (as for `dgdrf run`)
    servers: int
    users: int
    processes: int | None = None  # server + user processes (default: one per node)
    token: str | None = None
    batching: bool = True
    tls: bool = True  # make keys for the run (in logs/keys) and give every process its own
    host: str = "127.0.0.1"  # the bootstrap's address
    listen_host: str | None = None  # where the other nodes listen (default: host)
    verbose: bool = False  # nodes log at INFO (JSON lines in their log files)
    dashboard: str | None = None  # HOST:PORT of the collector's live page (dgdrf/pages/dashboard.py)
    #: process name -> network namespace to run it in (``ip netns exec``), for tests
    #: across real interfaces; names are bootstrap, collector, gateway, server-i, user-i
    namespaces: dict[str, str] = field(default_factory=dict)
    logs: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dgdrf-cluster-")))
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def keys(self) -> Path:
        return self.logs / "keys"

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "dgdrf", "node", "--die-with-parent", *args]
        if self.tls:
            cmd += ["--keys", str(self.keys), "--key-name", name]
        elif self.namespaces:
            cmd += ["--insecure"]
        if name in self.namespaces:
            cmd = ["ip", "netns", "exec", self.namespaces[name], *cmd]
        if self.token:
            cmd += ["--token", self.token]
        if not self.batching:
            cmd += ["--no-batching"]
        if self.verbose:
            cmd += ["-v"]
        out = (self.logs / f"{name}.log").open("w")
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs[name] = p
        return p

    def start(self, result_json: Path) -> str:
        port = free_port(self.host) if "bootstrap" not in self.namespaces else 7000
        boot = f"{'https' if self.tls else 'http'}://{self.host}:{port}"
        listen = f"{self.listen_host or self.host}:0"
        self._spawn("bootstrap", ["--role", "bootstrap", "--listen", f"{self.host}:{port}", *self.run_args])
        self._spawn("collector", ["--role", "collector", "--bootstrap", boot, "--listen", listen, "--json", str(result_json), *(["--dashboard", self.dashboard] if self.dashboard else [])])
        self._spawn("gateway", ["--role", "gateway", "--bootstrap", boot, "--listen", listen])
        total = self.servers + self.users
        k = total if self.processes is None else max(2, min(self.processes, total))
        k_servers = max(1, min(self.servers, round(k * self.servers / total)))
        k_users = max(1, min(self.users, k - k_servers))
        if self.tls and not (self.keys / CA_CERT).exists():
            make_keys(self.keys, node_names(k_servers, k_users), days=2)
        for i, n in enumerate(split_counts(self.servers, k_servers)):
            self._spawn(f"server-{i + 1}", ["--role", "server", "--count", str(n), "--bootstrap", boot, "--listen", listen])
        for i, n in enumerate(split_counts(self.users, k_users)):
            self._spawn(f"user-{i + 1}", ["--role", "user", "--count", str(n), "--bootstrap", boot, "--listen", listen])
        return boot

    def wait_collector(self, timeout: float) -> int | None:
        """The collector's exit status, or None after ``timeout`` seconds."""
        try:
            return self.procs["collector"].wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def first_failure(self) -> tuple[str, int] | None:
        for name, p in self.procs.items():
            code = p.poll()
            if code not in (None, 0):
                return name, code
        return None

    def stop(self, grace: float = 5.0) -> None:
        """Let nodes finish on their own for ``grace`` s, then SIGTERM, then SIGKILL."""
        deadline = time.monotonic() + grace
        for p in self.procs.values():
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        alive = [p for p in self.procs.values() if p.poll() is None]
        for p in alive:
            p.send_signal(signal.SIGTERM)
        for p in alive:
            try:
                p.wait(3.0)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def interrupt(self, result_json: Path, grace: float = INTERRUPT_GRACE_S) -> dict[str, Any] | None:
        """Stop the run before its end: the collector is told to stop (SIGTERM) and
        writes the result so far (stop reason ``interrupted``); that result, or None."""
        collector = self.procs.get("collector")
        if collector is not None and collector.poll() is None:
            collector.send_signal(signal.SIGTERM)
            try:
                collector.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        try:
            return json.loads(result_json.read_text())
        except (OSError, ValueError):
            return None

    def remove_keys(self) -> None:
        """Remove the keys made for the run (the CA's private key among them)."""
        shutil.rmtree(self.keys, ignore_errors=True)

    def tail(self, name: str, lines: int = 5) -> str:
        try:
            return "\n".join((self.logs / f"{name}.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class _Terminated(Exception):
    """SIGTERM to the launcher: stop the run as Ctrl-C does."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise _Terminated


def cluster_up(run_args: list[str], servers: int, users: int, processes: int | None, timeout: float, token: str | None = None, batching: bool = True, tls: bool = True, dashboard: str | None = None) -> tuple[int, dict[str, Any] | None, Cluster]:
    """Run a cluster to its end: (exit status, result or None, the cluster's record);
    ``dashboard``: HOST:PORT where the collector serves the run's live page.

    Stopped before its end (Ctrl-C, SIGTERM, or ``timeout`` wall seconds) the collector
    is told to stop, and the result so far, ``interrupted``, is returned with status 130
    (a signal) or 1 (the time-out); None only if it wrote none."""
    cluster = Cluster(run_args, servers, users, processes, token, batching, tls, dashboard=dashboard)
    result_json = cluster.logs / "result.json"
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if _main_thread() else None
    try:
        cluster.start(result_json)
        deadline = time.monotonic() + timeout
        code = None
        while code is None and time.monotonic() < deadline:
            code = cluster.wait_collector(0.5)
            bad = cluster.first_failure()
            if code is None and bad is not None and bad[0] in ("bootstrap", "gateway"):
                print(f"dgdrf: error: cluster: {bad[0]} exited with status {bad[1]}: {cluster.tail(bad[0], 3)}", file=sys.stderr)
                return 1, None, cluster
        if code is None:
            print(f"dgdrf: error: cluster: no result within {timeout:g} s; stopping the run (its result so far follows; logs in {cluster.logs})", file=sys.stderr)
            return 1, cluster.interrupt(result_json), cluster
        if not result_json.exists():
            print(f"dgdrf: error: cluster: the collector exited ({code}) without a result: {cluster.tail('collector', 5)}", file=sys.stderr)
            return 1, None, cluster
        return code, json.loads(result_json.read_text()), cluster
    except (KeyboardInterrupt, _Terminated):
        print("dgdrf cluster: interrupted; stopping the run (its result so far follows)", file=sys.stderr)
        calm = signal.signal(signal.SIGINT, signal.SIG_IGN) if _main_thread() else None  # a second Ctrl-C does not cut the result short
        try:
            return 130, cluster.interrupt(result_json), cluster
        finally:
            if calm is not None:
                signal.signal(signal.SIGINT, calm)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        cluster.stop(grace=5.0)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
