"""The bootstrap node's membership service (network mode's control plane, over HTTP).

A node process starts knowing only the bootstrap's URL. It joins (``POST /join`` with
its role, its URL and how many actors it hosts; with TLS its certificate must carry that
role, and the certificate's name is bound to the URL) and is given identities and specs from
the run's scenario (servers their capacities, users their demands, in scenario order),
plus the scenario and run configuration every policy needs. ``GET /cluster`` answers
once every expected node has joined, with the directory (actor -> process URL) and the
common start time, and with it every actor's role and every process's certificate name,
against which each node checks who sends it what (:mod:`dgdrf.runtime.net`). After the start the service pings every process (``GET /health``);
one that misses :data:`MISSES_TO_DOWN` pings in a row is declared down, and the
Bootstrap actor tells the gateway, the collector and a central scheduler (MemberDown), so users
are re-homed and the collector judges saturation on the servers that remain (and, for a
user's process, withdraws what its users had not started; every server hears of it).

A server process that joins once the run has started is a server joining the run: it is
given new server ids (``s<k>``, past the run's servers), each of the kind (capacity and
attributes) of the earliest server declared down that no newcomer has replaced yet, or,
when none is, of the scenario's servers in turn (the rule of emulation's
``--churn-joins``, whose random draw a cluster has no seed for); and with them the
cluster as it is (every server that ever joined, those up), which its servers start
from. Every live process is told where the newcomer lives (``POST /members``), then the
Bootstrap actor tells every member (MemberUp): users take up a job it can run, the
collector counts it.

Actor messages never pass through here: this is only how processes find each other.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
from aiohttp import web

from dgdrf.config import RunConfig
from dgdrf.world import BOOTSTRAP, GATEWAY
from dgdrf.log import get_logger
from dgdrf.model.fleet import Replacements, fresh_server_id
from dgdrf.model.scenario import Scenario, ServerSpec
from dgdrf.nodes.protocol import MemberDown, MemberUp
from dgdrf.policies import POLICIES
from dgdrf.runtime import roles as R
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.net import TOKEN_HEADER, NetTransport

log = get_logger("dgdrf.membership")

COLLECTOR = R.COLLECTOR
ROLES = (R.SERVER, R.USER, R.GATEWAY, R.COLLECTOR)  # roles that join
PING_PERIOD_S = 0.5
MISSES_TO_DOWN = 3
START_DELAY_S = 1.0  # between the last join and the common start


def config_to_dict(config: RunConfig) -> dict[str, Any]:
    """Every option's value by name (pairs as lists): what members rebuild the run from
    with RunConfig.from_settings."""
    d = config.values()
    d["latency_ms"] = list(config.latency_ms)
    return d


class Membership:
    """Who is in the cluster, where, and who is still alive."""

    def __init__(self, scenario: Scenario, config: RunConfig, bootstrap: Actor, transport: NetTransport) -> None:
        self.scenario = scenario
        self.config = config
        self.bootstrap = bootstrap
        self.transport = transport  # whose credentials and checks the endpoints use
        self.taken = {"server": 0, "user": 0}  # scenario servers / users handed out, in order
        self.singletons: dict[str, str] = {}  # gateway / collector -> url
        self.processes: dict[str, list[str]] = {}  # url -> actor addresses
        self.directory: dict[str, str] = {}  # the bootstrap's own address is added when it listens
        self.roles: dict[str, str] = {bootstrap.address: R.BOOTSTRAP}  # actor -> role
        self.identities: dict[str, str] = {}  # process url -> the name in its certificate (its url without TLS)
        self.joined = asyncio.Event()
        self.epoch: float | None = None
        self.down: set[str] = set()
        #: servers that joined after the start, in order, and which down server each replaced
        self.joiners: list[ServerSpec] = []
        self._replacements = Replacements()
        self._down_order: list[str] = []  # actors declared down, in order
        #: process url -> what a process that joined after the start was told of the cluster
        self._late: dict[str, dict[str, Any]] = {}
        #: the session the service pings with (set by its node once it has one)
        self.session: aiohttp.ClientSession | None = None

    def listening(self, url: str, name: str | None = None) -> None:
        """The bootstrap process's URL (and certificate name): its Bootstrap actor is a
        cluster member too."""
        self.directory[self.bootstrap.address] = url
        self.identities[url] = name or url

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/join", self._join)
        app.router.add_get("/cluster", self._cluster)

    @property
    def expected(self) -> str:
        s, u = len(self.scenario.servers), len(self.scenario.users)
        return f"{self.taken['server']}/{s} servers, {self.taken['user']}/{u} users, gateway {'yes' if GATEWAY in self.singletons else 'no'}, collector {'yes' if COLLECTOR in self.singletons else 'no'}"

    def complete(self) -> bool:
        return self.taken["server"] == len(self.scenario.servers) and self.taken["user"] == len(self.scenario.users) and len(self.singletons) == 2

    async def _join(self, request: web.Request) -> web.Response:
        denied = self.transport.authorise(request, frozenset(ROLES))
        if denied is not None:
            log.warning("join refused", reason="credentials", peer=request.remote)
            return denied
        try:
            body = await request.json()
            role, url, count = body["role"], body["url"], int(body.get("count", 1))
        except Exception:
            return web.json_response({"error": "join needs JSON {role, url, count}"}, status=400)
        if role not in ROLES or not isinstance(url, str) or not url.startswith("http") or count < 1:
            return web.json_response({"error": f"bad join: role must be one of {', '.join(ROLES)}, url http://host:port, count >= 1"}, status=400)
        who = self.transport.peer_identity(request)
        if who is not None and who.role != role:
            self.transport.reject("forbidden", f"{request.remote}: certificate {who.name!r} of a {who.role} asked to join as a {role}")
            return web.json_response({"error": f"your certificate is a {who.role}'s, not a {role}'s"}, status=403)
        name = who.name if who is not None else url
        if url in self.processes:  # a retried join: same answer, if it is the same holder
            if self.identities.get(url) != name:
                self.transport.reject("forbidden", f"{request.remote}: {name!r} asked to join as {url}, which {self.identities.get(url)!r} holds")
                return web.json_response({"error": f"{url} joined already with another certificate"}, status=409)
            return web.json_response(self._assignment(role, self.processes[url]) | self._late.get(url, {}))
        if role == "server" and self.joined.is_set():
            return self._join_late(url, name, count)
        actors: list[str]
        if role in ("server", "user"):
            specs = self.scenario.servers if role == "server" else self.scenario.users
            left = len(specs) - self.taken[role]
            if left < count:
                return web.json_response({"error": f"cluster full: {len(specs)} {role}s expected, {left} places left, {count} asked"}, status=409)
            actors = [x.id for x in specs[self.taken[role] : self.taken[role] + count]]
            self.taken[role] += count
        else:
            address = GATEWAY if role == "gateway" else COLLECTOR
            if address in self.singletons:
                return web.json_response({"error": f"the cluster already has a {role} ({self.singletons[address]})"}, status=409)
            self.singletons[address] = url
            actors = [address]
        self.processes[url] = actors
        self.identities[url] = name
        for a in actors:
            self.directory[a] = url
            self.roles[a] = role
        log.info("joined", role=role, url=url, actors=len(actors), progress=self.expected)
        if self.complete() and not self.joined.is_set():
            self.epoch = time.time() + START_DELAY_S
            self.joined.set()
            log.info("started", role="bootstrap", processes=len(self.processes) + 1, start_in_s=START_DELAY_S)  # every member is there: the run starts at the epoch
        return web.json_response(self._assignment(role, actors))

    # -- servers joining the run under way --------------------------------------------
    def server_ids(self) -> list[str]:
        """Every server of the run: the scenario's, then those that joined."""
        return [*(s.id for s in self.scenario.servers), *(s.id for s in self.joiners)]

    def _newcomer(self) -> ServerSpec:
        """The next server to join: a new id, the kind of the earliest server declared
        down not yet replaced, else of the scenario's servers in turn."""
        by_id = {s.id: s for s in (*self.scenario.servers, *self.joiners)}
        servers = self.server_ids()
        new_id = fresh_server_id({*servers, *(u.id for u in self.scenario.users)}, len(servers))
        fallback = self.scenario.servers[len(self.joiners) % len(self.scenario.servers)]
        spec, _ = self._replacements.newcomer(new_id, [by_id[a] for a in self._down_order if a in by_id], fallback)
        return spec

    def _join_late(self, url: str, name: str, count: int) -> web.Response:
        specs = [self._newcomer() for _ in range(count)]
        self.joiners.extend(specs)
        actors = [s.id for s in specs]
        self.processes[url] = actors
        self.identities[url] = name
        for a in actors:
            self.directory[a] = url
            self.roles[a] = "server"
        gone = set(self._down_order)
        ever = [*self.scenario.servers, *self.joiners]
        self._late[url] = {"joining": {
            "servers": [_spec_doc(s) for s in specs],
            "ever": [_spec_doc(s) for s in ever],
            "up": [_spec_doc(s) for s in ever if s.id not in gone],
        }}  # fmt: skip
        log.warning("server joined the run", url=url, servers=actors, kinds_of=[s.attributes for s in specs])
        asyncio.get_running_loop().create_task(self._announce(url, specs))
        return web.json_response(self._assignment("server", actors) | self._late[url])

    async def _announce(self, url: str, specs: list[ServerSpec]) -> None:
        """Tell every live process where the newcomer lives, then every member that it
        joined (MemberUp)."""
        entries = {s.id: url for s in specs}
        update = {"directory": entries, "roles": {s.id: "server" for s in specs}, "identities": {url: self.identities[url]}}
        self.transport.set_directory(update["directory"], update["roles"], update["identities"])
        others = [u for u in self.processes if u != url and u not in self.down and u != self.directory.get(self.bootstrap.address)]
        if self.session is not None:
            await asyncio.gather(*(self._post(u + "/members", update) for u in others))
        users = [u.id for u in self.scenario.users]
        audience = [COLLECTOR, *POLICIES[self.config.policy].member_up_audience(self.server_ids(), users, GATEWAY)]
        for spec in specs:
            news = MemberUp.of(spec)
            for address in audience:
                if address not in entries and self.directory.get(address) not in self.down:
                    self.bootstrap.send(address, news)

    async def _post(self, url: str, body: dict[str, Any]) -> None:
        assert self.session is not None
        try:
            async with self.session.post(url, json=body, timeout=aiohttp.ClientTimeout(total=3.0)) as r:
                if r.status != 200:
                    log.warning("members update refused", url=url, status=r.status)
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
            log.warning("members update not delivered", url=url, error=f"{type(exc).__name__}: {exc}")

    def _assignment(self, role: str, actors: list[str]) -> dict[str, Any]:
        return {"role": role, "actors": actors, "scenario": self.scenario.to_dict() | {"name": self.scenario.name}, "config": config_to_dict(self.config)}

    async def _cluster(self, request: web.Request) -> web.Response:
        denied = self.transport.authorise(request)
        if denied is not None:
            return denied
        try:
            await asyncio.wait_for(self.joined.wait(), timeout=25.0)
        except asyncio.TimeoutError:
            return web.json_response({"waiting": self.expected}, status=202)
        return web.json_response({"directory": self.directory, "roles": self.roles, "identities": self.identities, "epoch": self.epoch})

    async def watch(self, session: aiohttp.ClientSession, own_url: str, collector_down: Any = None) -> None:
        """Ping every other process; declare the silent ones down (MemberDown). A dead
        collector ends the run (nobody else can): ``collector_down()`` is called."""
        misses: dict[str, int] = {}
        while True:
            await asyncio.sleep(PING_PERIOD_S)
            urls = [u for u in self.processes if u != own_url and u not in self.down]

            async def ping(url: str) -> tuple[str, bool]:
                try:
                    async with session.get(url + "/health", timeout=aiohttp.ClientTimeout(total=1.0)) as r:
                        return url, r.status == 200
                except Exception:
                    return url, False

            for url, ok in await asyncio.gather(*(ping(u) for u in urls)):
                misses[url] = 0 if ok else misses.get(url, 0) + 1
                if misses[url] >= MISSES_TO_DOWN:
                    self.down.add(url)
                    gone = self.processes[url]
                    log.warning("process down", url=url, actors=gone)
                    if COLLECTOR in gone:
                        if collector_down is not None:
                            collector_down()
                        return
                    forget = getattr(self.bootstrap, "forget", None)
                    if forget is not None:
                        forget(gone)  # never handed out to a node that joins again
                    self._down_order.extend(gone)
                    # users too: one may have accepted a placement from a server now gone
                    servers, users = self.server_ids(), [u.id for u in self.scenario.users]
                    tell = [COLLECTOR, *POLICIES[self.config.policy].member_down_audience(servers, users, set(gone), GATEWAY, self.scenario.gangs)]
                    for address in tell:
                        if self.directory.get(address) not in self.down:
                            self.bootstrap.send(address, MemberDown(list(gone)))


def _spec_doc(spec: ServerSpec) -> dict[str, Any]:
    """A server's spec as the scenario format writes it (what a newcomer is told)."""
    return {"id": spec.id, "capacity": list(spec.capacity), "attributes": spec.attribute_map}


def spec_of(doc: dict[str, Any]) -> ServerSpec:
    """A server's spec from :func:`_spec_doc`'s document (a ValueError if it is not one)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str) or not isinstance(doc.get("capacity"), list) or not isinstance(doc.get("attributes", {}), dict):
        raise ValueError(f"not a server spec: {str(doc)[:80]}")
    return ServerSpec(doc["id"], tuple(float(c) for c in doc["capacity"]), tuple(sorted(doc.get("attributes", {}).items())))


__all__ = ["BOOTSTRAP", "COLLECTOR", "Membership", "TOKEN_HEADER", "config_to_dict", "spec_of"]
