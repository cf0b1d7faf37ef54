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
are re-homed and the collector judges saturation on the servers that remain.

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
from dgdrf.model.scenario import Scenario
from dgdrf.nodes.protocol import MemberDown
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
            return web.json_response(self._assignment(role, self.processes[url]))
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
        return web.json_response(self._assignment(role, actors))

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
                    # users too: one may have accepted a placement from a server now gone
                    servers, users = [s.id for s in self.scenario.servers], [u.id for u in self.scenario.users]
                    tell = [COLLECTOR, *POLICIES[self.config.policy].member_down_audience(servers, users, set(gone), GATEWAY)]
                    for address in tell:
                        if self.directory.get(address) not in self.down:
                            self.bootstrap.send(address, MemberDown(list(gone)))


__all__ = ["BOOTSTRAP", "COLLECTOR", "Membership", "TOKEN_HEADER", "config_to_dict"]
