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
import errno
import json
import math
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
from dgdrf.cluster.membership import COLLECTOR, Membership, spec_of
from dgdrf.config import RunConfig
from dgdrf.measurement import measure
from dgdrf.world import BOOTSTRAP, GATEWAY, deploy
from dgdrf.errors import ConfigError
from dgdrf.log import get_logger
from dgdrf.model.scenario import Scenario
from dgdrf.model.scenario_file import parse_document
from dgdrf.nodes.bootstrap import Bootstrap
from dgdrf.nodes.collector import REPORT_KINDS, Collector
from dgdrf.nodes.protocol import MemberDown, MemberUp
from dgdrf.nodes.stop_rules import StopRules
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import AsyncioClock
from dgdrf.runtime.net import SHUTDOWN_ROLES, STATS_ROLES, NetTransport
from dgdrf.runtime.roles import BOOTSTRAP as BOOTSTRAP_ROLE, MEMBER_ROLES
from dgdrf.runtime.process import die_with_parent
from dgdrf.runtime.reporting import RemoteReporter, Report
from dgdrf.runtime.stats import MessageStats

log = get_logger("dgdrf.node")
JOIN_PATIENCE_S = 120.0
JOIN_PROGRESS_S = 5.0  # while joining, a line on stderr this often
#: a node pings the bootstrap this often once the run started, and ends when it has not
#: answered for BOOTSTRAP_PATIENCE_S (the cluster has lost its failure detector and, if
#: the collector went with it, anyone to end the run)
HEARTBEAT_S = 1.0
BOOTSTRAP_PATIENCE_S = 5.0
#: wall seconds past the run's max_time after which a node ends whatever happened
DEADLINE_GRACE_S = 60.0
#: stop reasons of a run that could not go on: the collector exits non-zero with them
FATAL_STOPS = ("gateway_down", "scheduler_down", "bootstrap_down", "deadline")
#: wall seconds between two of the collector's status lines in its log
STATUS_S = 10.0
#: seconds the collector is given, once stopped, to gather and write its result
RESULT_GRACE_S = 30.0
#: seconds a run must look stranded before the collector takes it for stranded
STRANDED_PATIENCE_S = 2.0


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
    dashboard: str | None = None  # collector: HOST:PORT of its live page (dgdrf/pages/dashboard.py)
    die_with_parent: bool = False
    # bootstrap only
    scenario: Scenario | None = None
    config: RunConfig | None = None


class CollectorActor(Actor):
    """Receives every node's reports for the Collector; hears of members going down.

    Servers that go down are retired (saturation is judged on the rest); the gateway or
    the central scheduler going down ends the run (``fatal``): nothing can be placed."""

    def __init__(self, collector: Collector, reject: Any = None, roles: dict[str, str] | None = None, scheduler: str | None = None) -> None:
        super().__init__(COLLECTOR)
        self.collector = collector
        self.reject = reject  # the transport's rejection counter, for reports of unknown kinds
        self.member_roles = roles if roles is not None else {}  # actor -> role (the transport's, filled at the start)
        self.scheduler = scheduler  # the central scheduler's address (centralized policies)
        self.members_down: dict[str, int] = {}  # role -> actors declared down
        self.members_up = 0  # servers that joined the run
        self.dead_servers: set[str] = set()
        #: for the dashboard: each member's last report (time, kind), and when members went down
        self.last_report: dict[str, tuple[float, str]] = {}
        self.down_at: dict[str, float] = {}
        self.fatal: str | None = None
        self.fatal_at = float("inf")

    def on_Report(self, src: str, msg: Report) -> None:
        self.last_report[src] = (self.now(), msg.kind if msg.kind in REPORT_KINDS else "?")
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
        gone = list(msg.addresses)
        for a in gone:
            self.down_at.setdefault(a, self.now())
            role = self.member_roles.get(a, "unknown")
            self.members_down[role] = self.members_down.get(role, 0) + 1
        if self.fatal is None and GATEWAY in gone:
            self.fatal, self.fatal_at = "gateway_down", self.now()
        elif self.fatal is None and self.scheduler is not None and self.scheduler in gone:
            self.fatal, self.fatal_at = "scheduler_down", self.now()
        servers = [a for a in gone if self.member_roles.get(a) == "server"]
        self.dead_servers.update(servers)
        if servers:
            self.collector.retire_servers(servers, self.now())
        users = [a for a in gone if self.member_roles.get(a) == "user"]
        if users:
            self.collector.retire_users(users, self.now())

    def on_MemberUp(self, src: str, msg: MemberUp) -> None:
        """A server joined the run: the collector counts it."""
        self.members_up += 1
        self.collector.admit_servers([msg.spec()], self.now())


def host_port(listen: str, flag: str = "--listen") -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"{flag} must be HOST:PORT, got {listen!r}")
    return host, int(port)


def loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback (where a node, or the dashboard, may
    listen without keys)."""
    return host in ("localhost", "::1", "[::1]") or host.startswith("127.")


def check_dashboard(opts: NodeOptions) -> tuple[str, int] | None:
    """Where the collector's dashboard listens, or None; refuses beyond loopback without
    keys (it would show the run to anyone who reaches it), and on a node that is not the
    collector. Raises :class:`ConfigError` before anything is started."""
    if opts.dashboard is None:
        return None
    if opts.role != "collector":
        raise ConfigError(f"--dashboard: only the collector serves the dashboard; this node is a {opts.role}")
    host, port = host_port(opts.dashboard, "--dashboard")
    if not loopback(host) and opts.keys is None:
        raise ConfigError(f"--dashboard: refusing to serve the dashboard on {opts.dashboard} without TLS: beyond loopback it needs the cluster's keys (--keys DIR), and then serves HTTPS to certificates of the cluster's CA")
    return host, port


def overlay_state(actors: Any) -> dict[str, dict[str, Any]]:
    """The overlay of the servers this process hosts, for the dashboard: each one's
    utility, view (its gradient view, else its Cyclon view) and whether it believes it is
    the centre (eq. 3.11). Read between events; it changes nothing."""
    from dgdrf.nodes.server import Server
    from dgdrf.overlay.cyclon import Cyclon
    from dgdrf.overlay.gradient import GradientBase

    out: dict[str, dict[str, Any]] = {}
    for actor in actors:
        if not isinstance(actor, Server):
            continue
        gradient = next((r for r in actor.roles if isinstance(r, GradientBase)), None)
        cyclon = next((r for r in actor.roles if isinstance(r, Cyclon)), None)
        if gradient is not None:
            u = float(gradient.utility())
            out[actor.address] = {"utility": u if math.isfinite(u) else -1.0, "view": list(gradient.view), "centre": bool(gradient.is_centre()), "kind": "gradient view"}
        else:
            out[actor.address] = {"utility": 1.0 - actor.load(), "view": list(cyclon.view) if cyclon is not None else [], "centre": False, "kind": "Cyclon view" if cyclon is not None else "no overlay (utility: free CPU)"}
    return out


def node_tls(opts: NodeOptions) -> tuple[Any, str | None]:
    """The node's (server, client) TLS contexts from ``--keys`` and its certificate's
    name, or (None, None); refuses to listen beyond loopback without them unless
    ``--insecure`` (anyone who reaches the port could then act as any member). Raises
    :class:`ConfigError` saying what is wrong, before anything is started."""
    host, _ = host_port(opts.listen)
    if opts.keys is None:
        if not loopback(host) and not opts.insecure:
            raise ConfigError(
                f"refusing to listen on {opts.listen} without credentials: anyone who reaches it could act as any cluster member"
                f"{' (a shared --token does not say which member is which)' if opts.token else ''}. "
                "Make keys with `dgdrf cluster keys DIR` and give every node --keys DIR, or pass --insecure on a trusted network"
            )
        return None, None
    creds = Credentials.from_dir(opts.keys, opts.key_name or opts.role)
    who = creds.identity
    if who.role != opts.role:
        raise ConfigError(f"{creds.cert} is a {who.role}'s certificate; this node is a {opts.role} (--key-name names its certificate)")
    return (creds.server_context(), creds.client_context()), who.name


async def run_node(opts: NodeOptions) -> int:
    """Run one node process until the cluster shuts down (or a signal); exit status."""
    if opts.die_with_parent:
        die_with_parent(signal.SIGTERM)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    host, port = host_port(opts.listen)
    tls, name = node_tls(opts)
    dashboard_at = check_dashboard(opts)
    clock = AsyncioClock(loop)
    transport = NetTransport("", clock, token=opts.token, batching=opts.batching, tls=tls)

    async def shutdown(request: web.Request) -> web.Response:
        denied = transport.authorise(request, SHUTDOWN_ROLES)
        if denied is not None:
            return denied
        loop.call_later(0.2, stop.set)  # answer first
        return web.json_response({"ok": True})

    transport.app.router.add_post("/shutdown", shutdown)

    async def members(request: web.Request) -> web.Response:
        """The bootstrap tells where a server that joined the run lives."""
        denied = transport.authorise(request, frozenset({BOOTSTRAP_ROLE}))
        if denied is not None:
            return denied
        try:
            body = await request.json()
            directory, roles, identities = body["directory"], body["roles"], body["identities"]
            if not all(isinstance(d, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in d.items()) for d in (directory, roles, identities)):
                raise ValueError("directory, roles and identities must map strings to strings")
            if any(r not in MEMBER_ROLES for r in roles.values()) or set(roles) != set(directory):
                raise ValueError("every actor needs one of the member roles")
        except (ValueError, KeyError, TypeError) as exc:
            return web.json_response({"error": f"bad members update: {exc}"}, status=400)
        transport.set_directory(directory, roles, identities)
        return web.json_response({"ok": True})

    transport.app.router.add_post("/members", members)

    async def overlay(request: web.Request) -> web.Response:
        """The overlay of the servers hosted here, for the collector's dashboard."""
        denied = transport.authorise(request, STATS_ROLES)
        return denied or web.json_response(overlay_state(transport.actors.values()))

    transport.app.router.add_get("/overlay", overlay)
    membership: Membership | None = None
    if opts.role == "bootstrap":
        assert opts.scenario is not None and opts.config is not None
        boot = Bootstrap(BOOTSTRAP)
        membership = Membership(opts.scenario, opts.config, boot, transport)
        membership.routes(transport.app)
    try:
        await transport.start(host, port)
    except OSError as exc:
        await transport.close()
        raise ConfigError(f"cannot listen on {opts.listen}: {exc.strerror or exc}" + (" (another process has that port; pick another, or port 0 for any free one)" if exc.errno == errno.EADDRINUSE else "")) from None
    transport.url = f"{transport.scheme}://{opts.advertise or host}:{transport.bound_port}"
    log.info("listening", role=opts.role, url=transport.url, tls=tls is not None)
    session = transport.client_session(total_timeout=60.0)
    if membership is not None:
        membership.session = session
    result_task: asyncio.Task | None = None
    dashboard: Any = None
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
            assert membership.epoch is not None  # set before joined
            _start_at(clock, transport, membership.epoch)
            collector_lost = asyncio.Event()

            def on_collector_down() -> None:
                collector_lost.set()
                stop.set()

            watcher = loop.create_task(membership.watch(session, transport.url, on_collector_down))
            await stop.wait()
            watcher.cancel()
            if collector_lost.is_set():  # nobody else can end the run: end it here
                print("dgdrf node: error: the collector stopped answering; the run has no result; shutting every node down", file=sys.stderr)
                log.error("collector down, ending the run")
                await asyncio.gather(*(_post(session, u + "/shutdown") for u in membership.processes if u not in membership.down))
                return 1
            return 0
        assignment = await _join(session, opts, transport.url, stop)
        if assignment is None:
            return 0 if stop.is_set() else 1
        scenario = parse_document(assignment["scenario"], source="bootstrap")
        config = RunConfig.from_settings({}, **assignment["config"])
        deployment = deploy(scenario, config)  # the same members as in emulation (dgdrf/world.py)
        policy = deployment.policy
        collector = collector_actor = None
        if opts.role == "collector":
            collector = Collector(scenario, on_saturated=None, start=policy.allocation_start, time_scale=config.time_scale, user_start=policy.user_start, sample_every=config.sample_every, notion=policy.fairness(), offers=policy.offers, placeable=policy.placeable())
            transport.reporter = collector
            scheduler = None if policy.distributed else scenario.servers[0].id
            collector_actor = CollectorActor(collector, transport.reject, transport.roles, scheduler)
            transport.register(collector_actor)
        else:
            transport.reporter = RemoteReporter(transport, COLLECTOR)
            joining = assignment.get("joining")
            if joining is not None:  # servers joining the run under way, given the cluster as it is
                try:
                    ever, up = [spec_of(d) for d in joining["ever"]], [spec_of(d) for d in joining["up"]]
                    newcomers = [spec_of(d) for d in joining["servers"]]
                except (KeyError, TypeError, ValueError) as exc:
                    print(f"dgdrf node: error: the bootstrap's answer to a server joining the run is not understood: {exc}", file=sys.stderr)
                    return 1
                for spec in newcomers:
                    transport.register(deployment.joiner(spec, ever, up))
                log.warning("joining the run", servers=[s.id for s in newcomers])
            else:
                for actor in deployment.members(opts.role, set(assignment["actors"])):
                    transport.register(actor)
        cluster = await _wait_cluster(session, opts.bootstrap, stop)
        if cluster is None:
            return 0 if stop.is_set() else 1
        transport.set_directory(cluster["directory"], cluster["roles"], cluster["identities"])
        _start_at(clock, transport, cluster["epoch"])
        log.info("started", role=opts.role, actors=len(transport.actors), processes=len(set(cluster["directory"].values())))
        ending: list[str] = []  # why this node must end: the bootstrap gone, or the deadline
        heartbeat = loop.create_task(_watch_bootstrap(session, opts.bootstrap, ending, None if collector is not None else stop))

        def on_deadline() -> None:
            ending.append("deadline")
            stop.set()

        deadline = loop.call_later(max(0.0, cluster["epoch"] - time.time()) + config.max_time + DEADLINE_GRACE_S, on_deadline)
        if collector is not None:
            assert collector_actor is not None  # made with the collector
            if dashboard_at is not None:
                dashboard = await _start_dashboard(dashboard_at, collector, collector_actor, scenario, config, policy.allocation_start, clock, transport, session, opts)
            result_task = loop.create_task(_collect(collector, collector_actor, scenario, config, policy.allocation_start, clock, transport, session, opts, stop, ending))
        await stop.wait()
        heartbeat.cancel()
        deadline.cancel()
        if result_task is not None:
            # the collector writes its result whatever stopped it (the run's end, a signal,
            # a bootstrap that took it for dead while it was busy): its loop sees the stop,
            # and the gathering and writing that follow are given their time
            try:
                status = await asyncio.wait_for(asyncio.shield(result_task), RESULT_GRACE_S)
            except asyncio.TimeoutError:
                print(f"dgdrf node: error: no result within {RESULT_GRACE_S:g} s of the stop", file=sys.stderr)
                status = 1
        elif ending:
            status = 1
            print(f"dgdrf node: error: {opts.role} ending: {ending[0].replace('_', ' ')}", file=sys.stderr)
    finally:
        if result_task is not None and not result_task.done():
            result_task.cancel()
        if dashboard is not None:
            await dashboard.close()
        await session.close()
        await transport.close()
    return status


async def _start_dashboard(at: tuple[str, int], collector: Collector, actor: CollectorActor, scenario: Scenario, config: RunConfig, start: float, clock: AsyncioClock, transport: NetTransport, session: aiohttp.ClientSession, opts: NodeOptions) -> Any:
    """Serve the collector's live dashboard (dgdrf/pages/dashboard.py) at ``at``: plain
    HTTP on loopback, HTTPS with the collector's certificate beyond it (mutual TLS: the
    browser shows a certificate of the cluster's CA)."""
    from dgdrf.pages.dashboard import Dashboard

    async def poll() -> dict[str, Any]:
        """Every process's message counts and overlay (the instrument's requests)."""
        urls = sorted(set(transport.directory.values()))
        stats = await asyncio.gather(*(_get_json(session, u + "/stats", quiet=True) for u in urls))
        overlays = await asyncio.gather(*(_get_json(session, u + "/overlay", quiet=True) for u in urls))
        merged: dict[str, Any] = {}
        for doc in overlays:
            merged.update(doc or {})
        return {"messages": {k: v["count"] for k, v in _summed_messages(stats).by_type().items()}, "overlay": merged}

    host, port = at
    tls = None
    if not loopback(host):
        assert opts.keys is not None  # check_dashboard refused it otherwise
        tls = Credentials.from_dir(opts.keys, opts.key_name or opts.role).server_context()
    dashboard = Dashboard(collector, actor, scenario, config, clock.now, start, poll)
    try:
        url = await dashboard.start(host, port, tls)
    except OSError as exc:
        raise ConfigError(f"--dashboard: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    print(f"dgdrf node: dashboard at {url}", file=sys.stderr, flush=True)
    log.info("dashboard", url=url)
    return dashboard


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
    said = time.monotonic()
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
        now = time.monotonic()
        if now - said >= JOIN_PROGRESS_S:  # say why we are still waiting (a wrong URL or CA looks just like a slow bootstrap)
            print(f"dgdrf node: waiting for the bootstrap at {opts.bootstrap} ({deadline - now:.0f} s left): {last[:200]}", file=sys.stderr)
            said = now
        await asyncio.sleep(0.2)
    if not stop.is_set():
        print(f"dgdrf node: error: no bootstrap at {opts.bootstrap} within {JOIN_PATIENCE_S:.0f} s ({last})", file=sys.stderr)
    return None


async def _watch_bootstrap(session: aiohttp.ClientSession, bootstrap: str, ending: list[str], stop: asyncio.Event | None) -> None:
    """Ping the bootstrap every HEARTBEAT_S; after BOOTSTRAP_PATIENCE_S of silence add
    ``bootstrap_down`` to ``ending`` (and set ``stop``, for nodes other than the collector,
    which ends the run itself and writes its result)."""
    silent_since: float | None = None
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        try:
            async with session.get(bootstrap + "/health", timeout=aiohttp.ClientTimeout(total=HEARTBEAT_S)) as r:
                ok = r.status == 200
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError):
            ok = False
        now = time.monotonic()
        if ok:
            silent_since = None
            continue
        silent_since = silent_since or now
        if now - silent_since >= BOOTSTRAP_PATIENCE_S:
            log.error("bootstrap down", silent_s=round(now - silent_since, 1))
            ending.append("bootstrap_down")
            if stop is not None:
                stop.set()
            return


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


def run_status(collector: Collector, actor: CollectorActor, now: float) -> dict[str, Any]:
    """Where the run stands, for the collector's log every :data:`STATUS_S`: what it has
    done, and what it waits for before it can end (tasks left and running, jobs still to
    arrive, the members down), so a log shows why a run goes on."""
    jobs = collector.jobs
    left = jobs.unfinished(owed_only=True)
    status: dict[str, Any] = {
        "t": round(now, 1), "allocations": len(collector.allocations), "running": len(jobs.running),
        "since_last_allocation_s": round(now - collector.last_allocation_at, 1) if collector.last_allocation_at is not None else None,
    }  # fmt: skip
    if jobs.work:
        status |= {"tasks_left": sum(left.values()), "users_with_tasks_left": sorted(u for u, n in left.items() if n), "jobs_to_arrive": jobs.arrivals_left()}
    if actor.members_down:
        status["members_down"] = dict(actor.members_down)
    return status


def _summed_messages(docs: list[dict[str, Any] | None]) -> MessageStats:
    """The cluster's message counters: the sum of the processes' ``/stats`` answers (a
    process that did not answer, None, counts nothing)."""
    stats = MessageStats()
    for doc in docs:
        if doc is None:
            continue
        m = doc["messages"]
        for tag in range(256):
            stats.count[tag] += m["count"][tag]
            stats.nbytes[tag] += m["nbytes"][tag]
        stats.undeliverable += m.get("undeliverable", 0)
    return stats


class _GatheredStats:
    """What ``measure`` reads from a transport: the cluster's summed message counters."""

    def __init__(self, stats: MessageStats) -> None:
        self.stats = stats


async def _collect(collector: Collector, actor: CollectorActor, scenario: Scenario, config: RunConfig, start: float, clock: AsyncioClock, transport: NetTransport, session: aiohttp.ClientSession, opts: NodeOptions, stop: asyncio.Event, ending: list[str]) -> int:
    """Watch the run to its end, then gather, write and print the result, and shut the
    cluster down. Returns the node's exit status: 1 on invariant violations, or when the
    run could not go on (:data:`FATAL_STOPS`: a member it needs went down)."""
    await asyncio.sleep(max(0.0, -clock.now()))  # until the common start
    collector.last_allocation_at = start
    collector.check_initial_saturation()
    # the stop rules of emulation (nodes/stop_rules.py); stranded (probes, thesis 4.2)
    # once it has lasted 2 s: reports from different processes can arrive out of order,
    # so one look could see a copy not yet held
    rules = StopRules(config.stall_time, config.max_time, stranded_patience=STRANDED_PATIENCE_S)
    reason = ""
    t0 = time.perf_counter()
    next_status = t0 + STATUS_S
    while collector.ended_at is None and not stop.is_set():
        await asyncio.sleep(0.05)
        now = clock.now()
        collector.sample(now)
        if time.perf_counter() >= next_status:
            next_status += STATUS_S
            log.info("run status", **run_status(collector, actor, now))
        verdict = rules.check(collector, now)
        if verdict in ("drained", "saturated"):
            collector.end(verdict, now)  # over by itself without an event (the last arrival time passed)
        elif verdict is not None:
            reason = verdict
            break
        if actor.fatal is not None or ending:
            reason = actor.fatal or ending[0]
            break
    wall = time.perf_counter() - t0
    if collector.ended_at is not None and not reason:
        reason = collector.end_reason or "saturated"
    if stop.is_set() and collector.ended_at is None:
        reason = "interrupted"
    if actor.fatal is not None and (collector.ended_at is None or collector.ended_at >= actor.fatal_at):
        reason = actor.fatal  # retiring the dead servers may "saturate" the rest, but nothing can be placed any more
    await asyncio.sleep(0.3)  # reports still in flight
    urls = sorted(set(transport.directory.values()))  # those that joined the run too
    docs = await asyncio.gather(*(_get_json(session, u + "/stats") for u in urls))
    stats = _summed_messages(docs)
    handler_errors = sum(doc.get("handler_errors", 0) for doc in docs if doc is not None)
    connections_lost = sum(doc.get("connections_lost", 0) for doc in docs if doc is not None)
    collector.finish()
    result = measure(scenario, config, collector, _GatheredStats(stats), wall, reason, start, None, now=clock.now()).to_dict()
    result["mode"] = "network"
    result["tls"] = transport.tls is not None  # every node of a cluster runs with keys or none does
    result["processes"] = len(urls)
    result["rejected_frames"] = {u: d["rejected"] for u, d in zip(urls, docs) if d and d["rejected"]}
    result["handler_errors"] = handler_errors
    result["members_down"] = dict(actor.members_down)
    result["members_up"] = actor.members_up
    result["connections_lost"] = connections_lost
    result["tasks_lost_on_dead_servers"] = collector.accepted_not_allocated_on(actor.dead_servers)
    result["unreachable_processes"] = [u for u, d in zip(urls, docs) if d is None]
    if opts.json_out is not None:
        opts.json_out.write_text(json.dumps(result, indent=1) + "\n")
    if not opts.quiet:
        from dgdrf.report_table import print_results
        from dgdrf.measurement import RunResult

        print_results(scenario, [RunResult.from_dict(result)])
    log.warning("run finished", stop=reason, allocations=result["allocations"], runtime_s=round(result["runtime_s"], 3), violations=len(result["invariant_violations"]))
    if reason in FATAL_STOPS:
        print(f"dgdrf node: error: the run ended early: {reason.replace('_', ' ')} (its partial result is written)", file=sys.stderr)
    await asyncio.gather(*(_post(session, u + "/shutdown") for u in urls if u != transport.url))
    stop.set()
    return 1 if result["invariant_violations"] or reason in FATAL_STOPS else 0


async def _get_json(session: aiohttp.ClientSession, url: str, quiet: bool = False) -> dict[str, Any] | None:
    """A node's JSON answer, or None (logged: a process gone, or one that refused us;
    ``quiet``: at info level, the dashboard's polls)."""
    warn = log.info if quiet else log.warning
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=3.0)) as r:
            if r.status == 200:
                return await r.json()
            warn("no answer", url=url, status=r.status)
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError, json.JSONDecodeError) as exc:
        warn("no answer", url=url, error=f"{type(exc).__name__}: {exc}")
    return None


async def _post(session: aiohttp.ClientSession, url: str) -> None:
    """POST to a node (shutdown); a node already gone is logged, not an error."""
    try:
        async with session.post(url, timeout=aiohttp.ClientTimeout(total=3.0)) as r:
            await r.read()
            if r.status != 200:
                log.warning("refused", url=url, status=r.status)
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
        log.info("not reached", url=url, error=f"{type(exc).__name__}: {exc}")


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
