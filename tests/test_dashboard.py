"""The live dashboard of a real cluster (dgdrf/pages/dashboard.py): served by the
collector while the run goes, drawn in a real headless Chromium, updated by its stream of
events; a run with it ends as the same run without it; and where it may listen."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
from pathlib import Path

import pytest

from browser import drawn_figures, live_dom
from dgdrf.cluster.launcher import Cluster, free_port
from dgdrf.model.scenario import build_scenario
from test_cli import assert_one_line_error, cli

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def small_finite(tmp_path_factory) -> Path:
    """4 servers, 3 users, 90 tasks of 1 to 2 s: a run of some 15 s on a real cluster."""
    servers = [{"id": f"s{i}", "capacity": [4.0, 4.0], "attributes": {"rack": "a" if i <= 2 else "b"}} for i in range(1, 5)]
    users = [
        {"id": "u1", "jobs": [{"id": "a", "demand": [1.0, 1.0], "tasks": 40, "duration": 1.0}]},
        {"id": "u2", "jobs": [{"id": "b", "demand": [2.0, 1.0], "tasks": 30, "duration": 1.5, "requires": {"rack": "a"}}]},
        {"id": "u3", "jobs": [{"id": "c", "demand": [1.0, 2.0], "tasks": 20, "duration": 2.0, "arrival": 2.0}]},
    ]
    path = tmp_path_factory.mktemp("dash") / "small.json"
    build_scenario(["cpu", "mem"], servers, users, name="dash-4x3").write_json(path)
    return path


def _state(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url + "state", timeout=2) as r:
            return json.loads(r.read())
    except OSError:
        return None


def _run(path: Path, dashboard: str | None) -> tuple[dict, dict]:
    """The cluster's result and, with a dashboard, what it showed while the run went."""
    cluster = Cluster(["--scenario", str(path), "--policy", "dgdrf", "--tick", "0.05", "--warmup", "2"], 4, 3, dashboard=dashboard)
    out = cluster.logs / "result.json"
    seen: dict = {}
    try:
        cluster.start(out)
        if dashboard is not None:
            url = f"http://{dashboard}/"
            deadline = time.monotonic() + 60
            state = None
            while time.monotonic() < deadline and (state is None or "running" not in state["status"] or not re.search(r", [1-9]\d* allocations", state["status"])):
                time.sleep(0.3)
                state = _state(url)
            assert state is not None and "running" in state["status"], (state, cluster.tail("collector", 10))
            seen["dom"], seen["console"] = live_dom(url, 3.0)
            seen["event"] = asyncio.run(_event_with_overlay(url + "events"))
        assert cluster.wait_collector(120) == 0, cluster.tail("collector", 20)
        result = json.loads(out.read_text())
    finally:
        cluster.stop()
    return result, seen


async def _event_with_overlay(url: str) -> dict:
    """The first event whose overlay has edges (the collector polls the processes every
    2 s, each poll waiting up to 3 s for a busy one), or the last event of 30 s."""
    import aiohttp

    last: dict = {}
    async with aiohttp.ClientSession() as session, session.get(url, timeout=aiohttp.ClientTimeout(total=30)) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        try:
            async for line in r.content:
                if line.startswith(b"data: "):
                    last = json.loads(line[6:])
                    edges = next(t for t in last["figures"]["overlay"]["data"] if t["name"] == "view entries")
                    if any(x is not None for x in edges["x"]):
                        return last
        except asyncio.TimeoutError:
            pass
    assert last, "no event"
    return last


def test_the_dashboard_draws_a_running_cluster_and_changes_nothing(small_finite):
    """While a dgdrf cluster runs, its dashboard's page, in Chromium, has the shares and
    the overlay drawn (every server, gradient-view edges, the believed centre) and has
    updated itself from its events (the status line says running, allocations made), with
    nothing on its console; the run ends as the same run without the dashboard: drained,
    every task run once."""
    port = free_port("127.0.0.1")
    with_it, seen = _run(small_finite, f"127.0.0.1:{port}")
    drawn = drawn_figures(seen["dom"])
    for name in ("shares", "utilisation", "allocations", "messages", "overlay"):
        assert drawn.get(name) == [True], (name, drawn)
    status = re.search(r'id="status"[^>]*>([^<]*)', seen["dom"]).group(1)
    assert status.startswith("dgdrf: ") and re.search(r"\d+ allocations", status), status
    assert seen["console"] == []
    assert "<td>s1</td><td>server</td><td>up</td>" in seen["dom"]  # the members' table
    overlay = seen["event"]["figures"]["overlay"]["data"]
    nodes = next(t for t in overlay if t["name"] == "nodes")
    edges = next(t for t in overlay if t["name"] == "view entries")
    assert len(nodes["x"]) == 4 and any(x is not None for x in edges["x"])
    without, _ = _run(small_finite, None)
    for r in (with_it, without):
        assert r["stop_reason"] == "drained" and r["invariant_violations"] == [] and r["allocations"] == 90
        assert r["tasks"] == {"u1": 0, "u2": 0, "u3": 0}
    assert {(j["user"], j["job"], j["tasks"]) for j in with_it["jobs"]} == {(j["user"], j["job"], j["tasks"]) for j in without["jobs"]}


def test_a_dashboard_beyond_loopback_without_tls_is_refused(capsys):
    assert_one_line_error(*cli(capsys, "cluster", "up", "--servers", "2", "--users", "1", "--insecure", "--dashboard", "0.0.0.0:18080")[::2], "--dashboard", "without TLS")
    assert_one_line_error(*cli(capsys, "node", "--role", "collector", "--bootstrap", "http://127.0.0.1:1", "--dashboard", "0.0.0.0:18080")[::2], "--dashboard", "without TLS")


def test_only_the_collector_serves_a_dashboard(capsys):
    assert_one_line_error(*cli(capsys, "node", "--role", "gateway", "--bootstrap", "http://127.0.0.1:1", "--dashboard", "127.0.0.1:18080")[::2], "--dashboard", "only the collector")


def test_a_bad_dashboard_address_is_a_one_line_error(capsys):
    assert_one_line_error(*cli(capsys, "cluster", "up", "--servers", "2", "--users", "1", "--dashboard", "nowhere")[::2], "--dashboard", "HOST:PORT")


def test_beyond_loopback_the_dashboard_is_https_for_certificates_of_the_clusters_ca(tmp_path):
    """A cluster with keys serves the dashboard beyond loopback as HTTPS with the
    collector's certificate, to a client that shows a certificate of the cluster's CA
    (the admin's); without one the handshake fails, and plain HTTP gets no answer."""
    import ssl

    servers = [{"id": f"s{i}", "capacity": [4.0, 4.0]} for i in range(1, 3)]
    users = [{"id": "u1", "jobs": [{"id": "a", "demand": [1.0, 1.0], "tasks": 30, "duration": 1.0}]}]
    path = tmp_path / "tls.json"
    build_scenario(["cpu", "mem"], servers, users, name="tls-dash").write_json(path)
    port = free_port("127.0.0.1")
    cluster = Cluster(["--scenario", str(path), "--policy", "drf", "--tick", "0.05"], 2, 1, dashboard=f"0.0.0.0:{port}")
    keys = cluster.keys

    def get(cert: bool, scheme: str = "https") -> str:
        ctx = ssl.create_default_context(cafile=str(keys / "ca.crt"))
        ctx.check_hostname = False  # the cluster's certificates name members, not hosts
        if cert:
            ctx.load_cert_chain(keys / "admin.crt", keys / "admin.key")
        with urllib.request.urlopen(f"{scheme}://127.0.0.1:{port}/state", timeout=3, context=ctx if scheme == "https" else None) as r:
            return json.loads(r.read())["status"]

    try:
        cluster.start(cluster.logs / "result.json")
        deadline, status = time.monotonic() + 60, None
        while status is None and time.monotonic() < deadline:
            try:
                status = get(cert=True)
            except OSError:
                time.sleep(0.3)
        assert status is not None and status.startswith("drf: "), cluster.tail("collector", 10)
        for cert, scheme in ((False, "https"), (False, "http")):
            with pytest.raises(OSError):
                get(cert, scheme)
        assert cluster.wait_collector(60) == 0
    finally:
        cluster.stop()


def test_the_pages_open_share_one_build_of_each_event(small_finite, monkeypatch):
    """Two pages open (or one page and /state) cost the collector's process one build of
    the figures per push, not one per page: the event is built once and sent to both."""
    from types import SimpleNamespace

    from dgdrf.config import RunConfig, load_scenario
    from dgdrf.nodes.collector import Collector
    from dgdrf.pages import dashboard as dash

    scenario = load_scenario(small_finite)

    async def poll() -> dict:
        return {}

    members = SimpleNamespace(member_roles={"s1": "server"}, last_report={}, down_at={})
    board = dash.Dashboard(Collector(scenario), members, scenario, RunConfig(policy="drf"), lambda: 5.0, 0.0, poll)
    board.sample()
    builds = []
    real = board.figures
    monkeypatch.setattr(board, "figures", lambda: builds.append(1) or real())
    clock = [100.0]
    monkeypatch.setattr(dash.time, "monotonic", lambda: clock[0])
    first, second = board.event(), board.event()  # two pages, one push
    assert first is second and len(builds) == 1 and first.startswith(b"data: {")
    clock[0] += dash.PUSH_S
    assert board.event() != b"" and len(builds) == 2  # the next push builds it again
