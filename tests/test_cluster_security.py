"""A real cluster under attack from an insider and from outsiders (issue 17).

The cluster runs `drf` on loopback with the keys `cluster up` makes (mutual TLS, one
certificate per process). The attacker holds one user process's certificate (a member
gone bad) and tries what an earlier version let anyone do: a MemberDown "from the
bootstrap" (ended the run at once), a TaskRequest with a negative demand (over-committed
the central scheduler), an Allocate for a user that does not exist (a server started
it), POST /shutdown, and a flood of reports of made-up kinds (grew the result's
events), joining the run as a server, and telling a node where a server lives (POST
/members, the bootstrap's to say). Outsiders, without a certificate or with one of another CA, try to join and
to send. Every attempt must be refused and counted, and the run must end as the
undisturbed one does.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import time
from pathlib import Path

import aiohttp
import pytest

from dgdrf.cluster.keys import Credentials, make_keys
from dgdrf.cluster.launcher import Cluster
from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.model.generators import google_2011_scenario
from dgdrf.config import load_scenario
from dgdrf.model.scenario import build_scenario
from dgdrf.nodes.protocol import Allocate, MemberDown, TaskRequest
from dgdrf.runtime.messages import encode
from dgdrf.runtime.reporting import Report
from dgdrf.runtime.wire import encode_batch

TIMEOUT = 240.0


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory) -> Path:
    """4 servers, 3 users: a drf run of 356 allocations, about 18 s at a tick of 0.05 s,
    long enough for the attack (a few seconds) to happen while it runs."""
    base = google_2011_scenario(4, 3, 5)
    sc = build_scenario(base.resources, list(base.servers), [(u.id, list(u.demand)) for u in base.users], name="attack-4x3")
    path = tmp_path_factory.mktemp("attack") / "attack-4x3.json"
    sc.write_json(path)
    return path


def _wait_started(cluster: Cluster) -> None:
    log = cluster.logs / "collector.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and '"started"' not in log.read_text(errors="replace"):
        time.sleep(0.05)


async def _attack(cluster: Cluster, boot: str, other_ca: Credentials) -> dict[str, object]:
    """Everything the attacker tries; returns what it saw."""
    seen: dict[str, object] = {}
    insider = Credentials.from_dir(cluster.keys, "user-1")
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=insider.client_context())) as s:
        async with s.get(boot + "/cluster") as r:
            doc = await r.json()
        directory, roles = doc["directory"], doc["roles"]
        me = next(url for url, name in doc["identities"].items() if name == "user-1")
        my_user = next(a for a, url in directory.items() if url == me)
        scheduler = next(a for a, role in roles.items() if role == "server")  # the central scheduler: the first server
        collector_url, scheduler_url = directory["collector"], directory[scheduler]

        async def send(url: str, sender: str, items: list[tuple[str, str, bytes]]) -> None:
            async with s.ws_connect(url + "/ws") as ws:
                await ws.send_bytes(encode_batch(None, sender, items))
                await asyncio.sleep(0.05)

        everyone = sorted(a for a, role in roles.items() if role == "server")
        down = encode(MemberDown(everyone))
        await send(collector_url, me, [("bootstrap", "collector", down)])  # as the bootstrap, from my process
        await send(collector_url, directory["bootstrap"], [("bootstrap", "collector", down)])  # as the bootstrap's process
        await send(collector_url, me, [(my_user, "collector", down)])  # as myself: a user may not
        await send(scheduler_url, me, [(my_user, scheduler, encode(TaskRequest(my_user, 99, [-50.0, -50.0], 0.0)))])
        await send(directory[everyone[-1]], me, [(my_user, everyone[-1], encode(Allocate("nobody", 1, [0.1, 0.1], 0.0)))])
        junk = [(my_user, "collector", encode(Report(f"junk-{i}", 1.0, {"x": i}))) for i in range(2000)]
        for i in range(0, len(junk), 500):
            await send(collector_url, me, junk[i : i + 500])
        async with s.post(scheduler_url + "/shutdown") as r:
            seen["shutdown_by_user"] = r.status
        async with s.get(scheduler_url + "/stats") as r:
            seen["stats_by_user"] = r.status
        async with s.post(boot + "/join", json={"role": "collector", "url": me, "count": 1}) as r:
            seen["join_as_collector"] = r.status
        async with s.post(boot + "/join", json={"role": "server", "url": "https://127.0.0.1:2", "count": 1}) as r:
            seen["join_as_server"] = r.status  # once the run started, a server joins the run: not with a user's certificate
        async with s.post(scheduler_url + "/members", json={"directory": {"s9": me}, "roles": {"s9": "server"}, "identities": {me: "user-1"}}) as r:
            seen["members_by_user"] = r.status  # only the bootstrap says where a newcomer lives

    outsiders = {"no certificate": ssl.create_default_context(cafile=str(cluster.keys / "ca.crt")), "another CA": other_ca.client_context()}
    outsiders["no certificate"].check_hostname = False
    for who, ctx in outsiders.items():
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as s:
            for what, call in (("join", lambda: s.post(boot + "/join", json={"role": "server", "url": "https://127.0.0.1:1", "count": 1})),
                               ("send", lambda: s.ws_connect(collector_url + "/ws")), ("shutdown", lambda: s.post(scheduler_url + "/shutdown"))):
                try:
                    async with call() as reached:  # a response or a WebSocket
                        seen[f"{what} with {who}"] = getattr(reached, "status", "connected")
                except (aiohttp.ClientError, ssl.SSLError, OSError) as exc:
                    seen[f"{what} with {who}"] = type(exc).__name__
    return seen


def test_forged_messages_and_outsiders_are_refused_and_the_run_ends_as_undisturbed(scenario_file, tmp_path):
    other = tmp_path / "other-ca"
    make_keys(other)
    cluster = Cluster(["--scenario", str(scenario_file), "--policy", "drf", "--tick", "0.05"], 4, 3, verbose=True)
    out = cluster.logs / "result.json"
    try:
        boot = cluster.start(out)
        _wait_started(cluster)
        seen = asyncio.run(_attack(cluster, boot, Credentials.from_dir(other, "server")))
        assert cluster.wait_collector(TIMEOUT) == 0, cluster.tail("collector", 20)
        result = json.loads(out.read_text())
    finally:
        cluster.stop()
    assert seen["shutdown_by_user"] == 403 and seen["stats_by_user"] == 403 and seen["join_as_collector"] == 403
    assert seen["join_as_server"] == 403 and seen["members_by_user"] == 403
    for what in ("join", "send", "shutdown"):
        for who in ("no certificate", "another CA"):
            assert seen[f"{what} with {who}"] not in (200, 202, 403, "connected"), (what, who, seen)  # the TLS handshake fails
    rejected: dict[str, int] = {}
    for counts in result["rejected_frames"].values():
        for reason, n in counts.items():
            rejected[reason] = rejected.get(reason, 0) + n
    assert rejected["impersonation"] == 2 and rejected["not_allowed"] == 2 and rejected["bad_message"] == 1
    assert rejected["unknown_report_kind"] == 2000 and rejected["forbidden"] >= 5
    assert result["stop_reason"] == "saturated" and result["invariant_violations"] == [] and result["tls"] is True
    assert "servers_down" not in result["events"] and not any(k.startswith("junk") for k in result["events"])
    emulated = run_emulation(load_scenario(scenario_file), RunConfig(policy="drf", tick=0.05)).to_dict()
    assert result["allocations"] == emulated["allocations"]
    assert result["min_share"] == pytest.approx(emulated["min_share"], rel=1e-9)


def _dgdrf(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "dgdrf", *args], capture_output=True, text=True, timeout=timeout)


def test_a_node_beyond_loopback_without_keys_refuses_to_start_and_says_why(tmp_path):
    r = _dgdrf("node", "--role", "server", "--bootstrap", "https://10.9.9.9:7000", "--listen", "0.0.0.0:0")
    assert r.returncode == 2 and r.stderr.startswith("dgdrf: error: refusing to listen on 0.0.0.0:0 without credentials") and "--insecure" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_keys_and_their_errors(tmp_path):
    keys = tmp_path / "keys"
    r = _dgdrf("cluster", "keys", str(keys), "--servers", "2")
    assert r.returncode == 0, r.stderr
    assert {p.name for p in keys.iterdir()} >= {"ca.crt", "ca.key", "server-1.crt", "server-2.key", "admin.crt", "user.key"}
    assert oct((keys / "server-1.key").stat().st_mode & 0o777) == "0o600" and oct((keys / "ca.key").stat().st_mode & 0o777) == "0o600"
    assert Credentials.from_dir(keys, "server-2").identity.role == "server"
    again = _dgdrf("cluster", "keys", str(keys))
    assert again.returncode == 2 and "exists" in again.stderr and "--force" in again.stderr
    wrong = _dgdrf("node", "--role", "server", "--bootstrap", "https://10.9.9.9:7000", "--keys", str(keys), "--key-name", "user")
    assert wrong.returncode == 2 and "is a user's certificate; this node is a server" in wrong.stderr
    missing = _dgdrf("node", "--role", "gateway", "--bootstrap", "https://10.9.9.9:7000", "--keys", str(tmp_path / "none"))
    assert missing.returncode == 2 and "dgdrf cluster keys" in missing.stderr


def test_a_port_in_use_is_one_clear_line():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = _dgdrf("node", "--role", "gateway", "--bootstrap", "http://127.0.0.1:1", "--listen", f"127.0.0.1:{port}")
    assert r.returncode == 2 and r.stderr.startswith(f"dgdrf: error: cannot listen on 127.0.0.1:{port}") and "another process has that port" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_node_waiting_for_an_unreachable_bootstrap_says_so():
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "dgdrf", "node", "--role", "gateway", "--bootstrap", "http://127.0.0.1:1"], stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()  # the first progress line comes after JOIN_PROGRESS_S
        while line.startswith("{"):  # the node's log lines (JSON) before it
            line = p.stderr.readline()
    finally:
        p.kill()
        p.wait()
    assert line.startswith("dgdrf node: waiting for the bootstrap at http://127.0.0.1:1") and "s left" in line
