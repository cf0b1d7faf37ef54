"""A cluster across network namespaces joined by veth pairs and a bridge: nodes talk over
real interfaces with distinct addresses, and one namespace is cut off mid-run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

import pytest

from dgdrf.cluster.launcher import Cluster

SUBNET = "10.77.0"


def _ip(*args: str, ns: str | None = None) -> None:
    cmd = ["ip", "netns", "exec", ns, "ip", *args] if ns else ["ip", *args]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def _netns_allowed() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    if shutil.which("ip") is None:
        return "needs iproute2's ip"
    probe = f"dgdrf-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"ip netns add is not permitted here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


@pytest.fixture
def lab():
    """Namespaces core, s1..s4, u (one address each on 10.77.0.0/24) and a hub namespace
    holding the bridge; yields (namespace names, function cutting one off)."""
    reason = _netns_allowed()
    if reason:
        pytest.skip(reason)
    tag = os.getpid() % 100000
    hub = f"dgh{tag}"
    names = ["core", "s1", "s2", "s3", "s4", "u"]
    nss = {n: f"dg{n}{tag}" for n in names}
    made: list[str] = []
    try:
        _ip("netns", "add", hub)
        made.append(hub)
        _ip("link", "set", "lo", "up", ns=hub)
        _ip("link", "add", "br0", "type", "bridge", ns=hub)
        _ip("link", "set", "br0", "up", ns=hub)
        for i, n in enumerate(names):
            ns = nss[n]
            _ip("netns", "add", ns)
            made.append(ns)
            _ip("link", "set", "lo", "up", ns=ns)
            a, b = f"dgv{tag}{i}a", f"dgv{tag}{i}b"
            _ip("link", "add", a, "type", "veth", "peer", "name", b)
            _ip("link", "set", a, "netns", hub)
            _ip("link", "set", b, "netns", ns)
            _ip("link", "set", a, "master", "br0", ns=hub)
            _ip("link", "set", a, "up", ns=hub)
            _ip("link", "set", b, "name", "eth0", ns=ns)
            _ip("addr", "add", f"{SUBNET}.{10 + i}/24", "dev", "eth0", ns=ns)
            _ip("link", "set", "eth0", "up", ns=ns)

        def cut(n: str) -> None:
            _ip("link", "set", f"dgv{tag}{names.index(n)}a", "down", ns=hub)

        yield nss, cut
    finally:
        for ns in reversed(made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_cluster_across_namespaces_survives_a_partition(lab, tmp_path):
    from dgdrf.model.generators import google_2011_scenario
    from dgdrf.model.scenario import build_scenario

    nss, cut = lab
    base = google_2011_scenario(8, 4, 3)
    sc = build_scenario(base.resources, list(base.servers), [(u.id, [3 * x for x in u.demand]) for u in base.users], name="netns-8x4")
    path = tmp_path / "netns-8x4.json"
    sc.write_json(path)
    where = {"bootstrap": nss["core"], "collector": nss["core"], "gateway": nss["core"], "user-1": nss["u"], "user-2": nss["u"]}
    where |= {f"server-{i}": nss[f"s{i}"] for i in range(1, 5)}
    cluster = Cluster(["--scenario", str(path), "--policy", "dgdrf", "--tick", "0.05", "--warmup", "2"], 8, 4, processes=6,
                      host=f"{SUBNET}.10", listen_host="0.0.0.0", verbose=True, namespaces=where)
    out = cluster.logs / "result.json"
    try:
        cluster.start(out)
        deadline = time.monotonic() + 240
        log = cluster.logs / "collector.log"
        while time.monotonic() < deadline and '"started"' not in log.read_text(errors="replace"):
            assert cluster.first_failure() is None, cluster.tail("bootstrap", 10)
            time.sleep(0.2)
        time.sleep(5.0)
        cut("s3")  # server-3's namespace loses its link: a partition, not a crash
        assert cluster.wait_collector(240) == 0, cluster.tail("collector", 20)
        result = json.loads(out.read_text())
        boot_log = (cluster.logs / "bootstrap.log").read_text()
    finally:
        cluster.stop(grace=3.0)
    hosts = set(re.findall(r'"url": "https?://(10\.77\.0\.\d+):\d+"', boot_log))
    assert hosts == {f"{SUBNET}.{10 + i}" for i in range(6)}  # every node joined from its own interface
    assert result["stop_reason"] == "saturated" and result["invariant_violations"] == []
    assert result["events"]["servers_down"] == 2  # server-3's process hosts two servers
