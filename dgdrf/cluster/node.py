"""``dgdrf node``: one process of a real cluster, on the real loop (uvloop if installed).

A node binds its socket, joins through the bootstrap (which hands it identities, the
scenario and the run configuration), waits for the directory and the common start time,
then runs its actors, built by the same functions the emulation uses, on an
:class:`~dgdrf.runtime.clock.AsyncioClock` and a :class:`~dgdrf.runtime.net.NetTransport`.
Only the clock and the transport differ from ``dgdrf run``.

The collector node is the measuring instrument: it feeds the Report messages of every
node to the same :class:`~dgdrf.nodes.collector.Collector` as the emulation, stops the
run at saturation (or after ``stall_time`` without a placement, or ``max_time``),
gathers every process's message counters, writes the same result record as
``dgdrf run --json``, prints it, and shuts the cluster down (``POST /shutdown`` on
every process).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from dgdrf.cluster.keys import Credentials
from dgdrf.cluster.membership import COLLECTOR, Membership
from dgdrf.emulation import BOOTSTRAP, GATEWAY, RunConfig, _result, build_server, build_user, policy_options
from dgdrf.errors import ConfigError
from dgdrf.log import get_logger
from dgdrf.model.scenario import Scenario, parse_scenario
from dgdrf.nodes.bootstrap import Bootstrap
from dgdrf.nodes.collector import REPORT_KINDS, Collector
from dgdrf.nodes.gateway import Gateway
from dgdrf.nodes.protocol import MemberDown
from dgdrf.policies import make_policy
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import AsyncioClock
from dgdrf.runtime.net import SHUTDOWN_ROLES, NetTransport
from dgdrf.runtime.process import die_with_parent
from dgdrf.runtime.reporting import RemoteReporter, Report
from dgdrf.runtime.stats import MessageStats

log = get_logger("dgdrf.node")
JOIN_PATIENCE_S = 120.0


@dataclass
class NodeOptions:
    role: str
    bootstrap: str = ""  # URL of the bootstrap (all roles but bootstrap)
    listen: str = "127.0.0.1:0"  # host:port to bind (port 0: any)
    advertise: str | None = None  # host peers use to reach us (default: the listen host)
    count: int = 1  # servers or users hosted by this process
    token: str | None = None
    keys: Path | None = None  # the cluster's keys directory (dgdrf cluster keys): mutual TLS
    key_name: str | None = None  # this node's certificate in it (default: its role)
    insecure: bool = False  # listen beyond loopback without keys
    batching: bool = True
    json_out: Path | None = None  # collector: where to write the result
    quiet: bool = False  # collector: no table on stdout
    die_with_parent: bool = False
    # bootstrap only
    scenario: Scenario | None = None
    config: RunConfig | None = None


class CollectorActor(Actor):
    """Receives every node's reports for the Collector; hears of servers going down."""

    def __init__(self, collector: Collector, reject: Any = None) -> None:
        super().__init__(COLLECTOR)
        self.collector = collector
        self.reject = reject  # the transport's rejection counter, for reports of unknown kinds

    def on_Report(self, src: str, msg: Report) -> None:
        if msg.kind not in REPORT_KINDS:  # a forged kind would add a key to the result's events
            if self.reject is not None:
                self.reject("unknown_report_kind", f"{src} reported {msg.kind[:60]!r}")
            return
        if not isinstance(msg.fields, dict):
            self.collector.counters["bad_report"] = self.collector.counters.get("bad_report", 0) + 1
            return
        try:
            self.collector(msg.kind, src, float(msg.time), msg.fields)
        except (KeyError, TypeError, ValueError) as exc:  # a report missing a field: counted, not fatal
            self.collector.counters["bad_report"] = self.collector.counters.get("bad_report", 0) + 1
            log.warning("bad report", src=src, kind=msg.kind, error=str(exc))

    def on_MemberDown(self, src: str, msg: MemberDown) -> None:
        self.collector.retire_servers(list(msg.addresses), self.now())


def _split(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--listen must be HOST:PORT, got {listen!r}")
    return host, int(port)


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1", "[::1]") or host.startswith("127.")


def node_tls(opts: NodeOptions) -> Any:
    """The node's (server, client) TLS contexts from ``--keys``, or None; refuses to
    listen beyond loopback without them unless ``--insecure`` (anyone who reaches the
    port could then act as any member). Raises :class:`ConfigError` saying what is wrong."""
    host, _ = _split(opts.listen)
    if opts.keys is None:
        if not _loopback(host) and not opts.insecure:
            raise ConfigError(
                f"refusing to listen on {opts.listen} without credentials: anyone who reaches it could act as any cluster member"
                f"{' (a shared --token does not say which member is which)' if opts.token else ''}. "
                "Make keys with `dgdrf cluster keys DIR` and give every node --keys DIR, or pass --insecure on a trusted network"
            )
        return None
    creds = Credentials.from_dir(opts.keys, opts.key_name or opts.role)
    who = creds.identity
    if who.role != opts.role:
        raise ConfigError(f"{creds.cert} is a {who.role}'s certificate; this node is a {opts.role} (--key-name names its certificate)")
    return creds.server_context(), creds.client_context()


async def run_node(opts: NodeOptions) -> int:
    """Run one node process until the cluster shuts down (or a signal); exit status."""
    if opts.die_with_parent:
        die_with_parent(signal.SIGTERM)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    host, port = _split(opts.listen)
    tls = node_tls(opts)
    name = Credentials.from_dir(opts.keys, opts.key_name or opts.role).identity.name if opts.keys is not None else None
    clock = AsyncioClock(loop)
    transport = NetTransport("", clock, token=opts.token, batching=opts.batching, tls=tls)

    async def shutdown(request: web.Request) -> web.Response:
        denied = transport.authorise(request, SHUTDOWN_ROLES)
        if denied is not None:
            return denied
        loop.call_later(0.2, stop.set)  # answer first
        return web.json_response({"ok": True})

    transport.app.router.add_post("/shutdown", shutdown)
    membership: Membership | None = None
    if opts.role == "bootstrap":
        assert opts.scenario is not None and opts.config is not None
        boot = Bootstrap(BOOTSTRAP)
        membership = Membership(opts.scenario, opts.config, boot, transport)
        membership.routes(transport.app)
    await transport.start(host, port)
    transport.url = f"{transport.scheme}://{opts.advertise or host}:{transport.bound_port}"
    log.info("listening", role=opts.role, url=transport.url, tls=tls is not None)
    session = transport.client_session(total_timeout=60.0)
    result_task: asyncio.Task | None = None
    status = 0
    try:
        if membership is not None:
            membership.listening(transport.url, name)
            transport.register(boot)
            transport.reporter = RemoteReporter(transport, COLLECTOR)
            await _wait_or_stop(membership.joined.wait(), stop)
            if stop.is_set():
                return 0
            transport.set_directory(membership.directory, membership.roles, membership.identities)
            _start_at(clock, transport, membership.epoch)
            watcher = loop.create_task(membership.watch(session, transport.url))
            await stop.wait()
            watcher.cancel()
            return 0
        assignment = await _join(session, opts, transport.url, stop)
        if assignment is None:
            return 0 if stop.is_set() else 1
        scenario = parse_scenario(assignment["scenario"], source="bootstrap")
        config = RunConfig.from_settings({}, **assignment["config"])
        policy = make_policy(config.policy, policy_options(scenario, config))
        collector = None
        if opts.role == "collector":
            collector = Collector(scenario, on_saturated=None)
            transport.reporter = collector
            transport.register(CollectorActor(collector, transport._reject))
        else:
            transport.reporter = RemoteReporter(transport, COLLECTOR)
            ids = set(assignment["actors"])
            if opts.role == "server":
                for spec in scenario.servers:
                    if spec.id in ids:
                        transport.register(build_server(spec, policy, config))
            elif opts.role == "user":
                for spec in scenario.users:
                    if spec.id in ids:
                        transport.register(build_user(spec, policy))
            elif opts.role == "gateway":
                transport.register(Gateway(GATEWAY, policy.gateway_routing()))
        cluster = await _wait_cluster(session, opts.bootstrap, stop)
        if cluster is None:
            return 0 if stop.is_set() else 1
        transport.set_directory(cluster["directory"], cluster["roles"], cluster["identities"])
        _start_at(clock, transport, cluster["epoch"])
        log.info("started", role=opts.role, actors=len(transport.actors), processes=len(set(cluster["directory"].values())))
        if collector is not None:
            result_task = loop.create_task(_collect(collector, scenario, config, policy.allocation_start, clock, transport, session, cluster["directory"], opts, stop))
        await stop.wait()
        if result_task is not None:
            status = await result_task if result_task.done() else 1
    finally:
        if result_task is not None and not result_task.done():
            result_task.cancel()
        await session.close()
        await transport.close()
    return status


async def _wait_or_stop(aw: Any, stop: asyncio.Event) -> None:
    task = asyncio.ensure_future(aw)
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    for t in (task, stopper):
        if not t.done():
            t.cancel()


def _start_at(clock: AsyncioClock, transport: NetTransport, epoch: float) -> None:
    clock.epoch = epoch
    transport.start_actors(max(0.0, epoch - time.time()))


async def _join(session: aiohttp.ClientSession, opts: NodeOptions, url: str, stop: asyncio.Event) -> dict[str, Any] | None:
    """POST /join until the bootstrap answers (it may start after us)."""
    deadline = time.monotonic() + JOIN_PATIENCE_S
    body = {"role": opts.role, "url": url, "count": opts.count}
    last = ""
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            async with session.post(opts.bootstrap + "/join", json=body) as r:
                doc = await r.json()
                if r.status == 200:
                    return doc
                log.error("join refused", status=r.status, error=doc.get("error"))
                print(f"dgdrf node: error: the bootstrap refused to let this {opts.role} join: {doc.get('error')}", file=sys.stderr)
                return None
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError, json.JSONDecodeError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        await asyncio.sleep(0.2)
    if not stop.is_set():
        print(f"dgdrf node: error: no bootstrap at {opts.bootstrap} within {JOIN_PATIENCE_S:.0f} s ({last})", file=sys.stderr)
    return None


async def _wait_cluster(session: aiohttp.ClientSession, bootstrap: str, stop: asyncio.Event) -> dict[str, Any] | None:
    """Long-poll GET /cluster until every node has joined."""
    while not stop.is_set():
        try:
            async with session.get(bootstrap + "/cluster") as r:
                doc = await r.json()
                if r.status == 200:
                    return doc
                if r.status != 202:
                    print(f"dgdrf node: error: bootstrap: {doc.get('error')}", file=sys.stderr)
                    return None
                log.info("waiting for the cluster", progress=doc.get("waiting"))
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError, json.JSONDecodeError) as exc:
            log.warning("bootstrap unreachable", error=str(exc))
            await asyncio.sleep(0.5)
    return None


class _GatheredStats:
    """What ``_result`` reads from a transport: the cluster's summed message counters."""

    def __init__(self, stats: MessageStats) -> None:
        self.stats = stats


async def _collect(collector: Collector, scenario: Scenario, config: RunConfig, start: float, clock: AsyncioClock, transport: NetTransport, session: aiohttp.ClientSession, directory: dict[str, str], opts: NodeOptions, stop: asyncio.Event) -> int:
    """Watch the run to its end, then gather, write and print the result, and shut the
    cluster down. Returns the node's exit status (1 on invariant violations)."""
    await asyncio.sleep(max(0.0, -clock.now()))  # until the common start
    collector.last_allocation_at = start
    collector.check_initial_saturation()
    reason = "saturated"
    t0 = time.perf_counter()
    stranded_since: float | None = None
    while collector.saturated_at is None and not stop.is_set():
        await asyncio.sleep(0.05)
        now = clock.now()
        # stranded (probes, thesis 4.2) once it has lasted 2 s: reports from different
        # processes can arrive out of order, so one look could see a copy not yet held
        if collector.stranded():
            stranded_since = now if stranded_since is None else stranded_since
            if now - stranded_since >= 2.0:
                reason = "stranded"
                break
        else:
            stranded_since = None
        if now - collector.last_allocation_at >= config.stall_time:
            reason = "stalled"
            break
        if now >= config.max_time:
            reason = "max_time"
            break
    wall = time.perf_counter() - t0
    if stop.is_set() and collector.saturated_at is None:
        reason = "interrupted"
    await asyncio.sleep(0.3)  # reports still in flight
    stats = MessageStats()
    urls = sorted(set(directory.values()))
    docs = await asyncio.gather(*(_get_json(session, u + "/stats") for u in urls))
    for u, doc in zip(urls, docs):
        if doc is None:
            continue
        m = doc["messages"]
        for tag in range(256):
            stats.count[tag] += m["count"][tag]
            stats.nbytes[tag] += m["nbytes"][tag]
        stats.undeliverable += m.get("undeliverable", 0)
    collector.finish()
    result = _result(scenario, config, collector, _GatheredStats(stats), wall, reason, start, None).to_dict()
    result["mode"] = "network"
    result["processes"] = len(urls)
    result["rejected_frames"] = {u: d["rejected"] for u, d in zip(urls, docs) if d and d["rejected"]}
    if opts.json_out is not None:
        opts.json_out.write_text(json.dumps(result, indent=1) + "\n")
    if not opts.quiet:
        from dgdrf.report_table import print_results
        from dgdrf.emulation import RunResult

        print_results(scenario, [RunResult.from_dict(result)])
    log.warning("run finished", stop=reason, allocations=result["allocations"], runtime_s=round(result["runtime_s"], 3), violations=len(result["invariant_violations"]))
    await asyncio.gather(*(_post(session, u + "/shutdown") for u in urls if u != transport.url))
    stop.set()
    return 1 if result["invariant_violations"] else 0


async def _get_json(session: aiohttp.ClientSession, url: str) -> dict[str, Any] | None:
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=3.0)) as r:
            return await r.json() if r.status == 200 else None
    except Exception:
        return None


async def _post(session: aiohttp.ClientSession, url: str) -> None:
    try:
        async with session.post(url, timeout=aiohttp.ClientTimeout(total=3.0)) as r:
            await r.read()
    except Exception:
        pass


def main_node(opts: NodeOptions) -> int:
    """Run a node on uvloop when available, else the standard loop."""
    try:
        import uvloop

        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        runner = asyncio.Runner()
    with runner:
        return runner.run(run_node(opts))


def env_default(name: str, default: Any = None) -> Any:
    """A node flag's default from the environment (DGDRF_<NAME>), for containers."""
    return os.environ.get(f"DGDRF_{name.upper()}", default)
