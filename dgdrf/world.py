"""A run as a composed object: ``world = build(scenario, config)``, then
``world.run(observers=[...], controls=[...])``.

:func:`deploy` decides what a scenario deploys under a configuration: the policy and
every member (servers hosting the policy's roles, the gateway, the bootstrap, the users),
the one composition root of both modes. :func:`build` puts all of them on one
virtual-time loop and emulated network; a cluster node (cluster/node.py) builds the
members it was assigned from the same :class:`Deployment`, on sockets. What watches a
run is an :class:`Observer` (the stall watchdog, a measurement script); what changes it
while it runs is a :class:`Control` (a crash, in virtual time). Both see the world
through its public parts (clock, transport, collector) and are started once every actor
has been scheduled to start, so adding one that only reads changes no result: PeerSim's
Controls, scheduled by the run rather than patched into the protocol. The controls here:
:class:`Crash` (servers or users), :class:`Join` (new servers), :class:`Partition` (the
network splits, then heals) and :class:`Churn` (servers leave, and join, one after
another).

A run is a pure function of (scenario, configuration, seed): one seeded numpy generator
feeds the transport (latencies, loss) and is split per actor (and each job draws its
tasks' durations from a stream of the seed of its own: dgdrf/model/workload.py). It ends
by the stop rules (nodes/stop_rules.py, the same as a cluster's): drained (every task
of every finite job that can still run has finished), saturated (the first moment no user's next task fits
on any server and none ever will, thesis 1.5.5), when ``max_time`` virtual seconds pass,
or when the watch stops it (stranded, stalled).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable, Collection, Iterable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from dgdrf.config import RunConfig
from dgdrf.errors import ConfigError
from dgdrf.log import get_logger
from dgdrf.measurement import RunResult, measure
from dgdrf.memory_budget import check_scenario
from dgdrf.model.fleet import Fleet, Replacements, fresh_server_id
from dgdrf.model.scenario import Scenario, ServerSpec, UserSpec
from dgdrf.nodes.bootstrap import Bootstrap
from dgdrf.nodes.collector import AllocationRecord, Collector
from dgdrf.nodes.gateway import Gateway
from dgdrf.nodes.protocol import MemberDown, MemberUp
from dgdrf.nodes.server import Server
from dgdrf.nodes.stop_rules import STOP_REASONS as STOP_REASONS, StopRules
from dgdrf.nodes.user import User, UserJobs
from dgdrf.model.workload import Durations
from dgdrf.options import declared
from dgdrf.policies import POLICIES, PolicyOptions, make_policy
from dgdrf.policies.base import Policy
from dgdrf.runtime import roles
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.frozen import objects_frozen
from dgdrf.runtime.transport import LocalTransport, partition_groups

GATEWAY = "gateway"
BOOTSTRAP = "bootstrap"
#: how often the run is checked for having stalled or become stranded (virtual seconds)
WATCH_PERIOD_S = 1.0
#: with a progress callback, the clock runs in slices of this many virtual seconds and
#: the callback hears the time and the allocations after each (the slices change nothing:
#: no callback runs between them)
PROGRESS_SLICE_S = 1.0
#: seconds between a crash and the members hearing of it in emulation: network mode's
#: failure detector declares a process down after 3 missed pings 0.5 s apart
CRASH_DETECTION_S = 1.5
#: the stream of the run's seed a :class:`Churn` without a seed of its own draws from
#: (apart from the transport's and the actors', so churn changes no other draw)
CHURN_STREAM = 0xC4_0211
log = get_logger("dgdrf.world")


class Stage(Protocol):
    """What a control acts on, in any emulated run: an allocation run (:class:`World`)
    or an overlay run (overlay_run.py). Its virtual clock and emulated network; the
    members whose departure the run models; what happens once one is detected."""

    clock: VirtualClock
    transport: LocalTransport

    @property
    def seed(self) -> int:
        """The run's seed (a control's own random stream is derived from it)."""
        ...

    def departable(self) -> list[str]:
        """The members that may leave (a churn's), in the run's order."""
        ...

    def crashable(self) -> list[str]:
        """The members that may crash (a :class:`Crash`'s), in the run's order."""
        ...

    @property
    def departing(self) -> str:
        """What a departable member is, for messages ("a server")."""
        ...

    @property
    def crashing(self) -> str:
        """What a member that may crash is, for messages ("a server or a user")."""
        ...

    def members_down(self, addresses: tuple[str, ...]) -> None:
        """The crash of ``addresses`` is detected (the failure detector's verdict)."""
        ...


class StageControl(Protocol):
    """A control any emulated run can take (:class:`Crash`, :class:`Churn`,
    :class:`Partition`): it needs only the run's :class:`Stage`."""

    def started(self, world: Stage) -> None:
        """Every member is scheduled to start; schedule what it does."""
        ...


class Observer:
    """Watches a run. ``started`` is called once every actor is scheduled to start and
    before the clock runs (schedule with ``world.clock.call_later``); ``allocated`` after
    each allocation the collector records; ``finished`` once the run has ended, with its
    result. An observer reads; it never changes what the actors do."""

    def started(self, world: World) -> None:
        """The run is about to run."""

    def allocated(self, world: World, allocation: AllocationRecord) -> None:
        """An allocation was recorded (the collector's typed record)."""

    def finished(self, world: World, result: RunResult) -> None:
        """The run ended; ``result`` is what it measured."""


class Control(Observer):
    """Changes a run while it runs (crashes, churn, partitions), in virtual time: the
    same hooks as an observer, with licence to act on the world."""


def policy_options(scenario: Scenario, config: RunConfig) -> PolicyOptions:
    """The options every node's policy gets (the same in emulation and on a network): the
    declared options PolicyOptions shares with the configuration, and the deployment's."""
    first = scenario.servers[0].id  # the central scheduler; the push-sum initiator
    shared = {d.name: getattr(config, d.name) for d in declared(PolicyOptions)}
    return PolicyOptions(
        **shared, central=first, gateway=GATEWAY, bootstrap=BOOTSTRAP, total_capacity=tuple(float(x) for x in scenario.total_capacity()),
        server_kinds=server_kinds(scenario.servers), server_ids=tuple(s.id for s in scenario.servers), initiator=first, extras=config.extras,
    )


def server_kinds(servers: Sequence[ServerSpec]) -> tuple[tuple[tuple[float, ...], tuple[tuple[str, Any], ...]], ...]:
    """Each server's (capacity, attributes), as PolicyOptions gives them (its census)."""
    return tuple((tuple(float(c) for c in s.capacity), tuple(sorted(s.attribute_map.items()))) for s in servers)


def build_server(spec: ServerSpec, policy: Policy, config: RunConfig, joining: bool = False) -> Server:
    """A resource node hosting the policy's roles; it allocates from the policy's start,
    or, ``joining`` a run under way, from its first tick."""
    first_tick = config.tick if joining else policy.allocation_start + config.tick
    server = Server(spec.id, spec.capacity, tick=config.tick, first_tick=first_tick, attributes=spec.attribute_map, retry=policy.options.retry)
    for role in policy.server_roles(server):
        server.add_role(role)
    return server


def build_user(spec: UserSpec, policy: Policy, config: RunConfig | None = None, index: int = 0, sequence: tuple[int, ...] = (), servers: Mapping[str, ServerSpec] | None = None) -> User:
    """A user (thesis alg. 3) that asks the gateway once the policy lets users start;
    with jobs (any user but the thesis's), the ``index``-th user of its scenario, its
    jobs numbered ``sequence`` in the scenario, knowing the scenario's ``servers`` (by
    id), of which it gives up a job none still up can run (model/fleet.py)."""
    jobs = None
    if not spec.classic:
        config = config or RunConfig()
        job_list = spec.job_list
        durations = Durations(job_list, config.seed, index, config.time_scale)
        jobs = UserJobs(job_list, spec.weight, durations, sequence or tuple(range(1, len(job_list) + 1)), policy.allocation_start, config.time_scale, spec.tenant)
    fleet = Fleet(servers) if jobs is not None and servers is not None else None
    return User(spec.id, spec.demand, GATEWAY, start_delay=policy.user_start, retry=policy.options.retry, jobs=jobs, runs_on=frozenset(spec.runs_on) if spec.runs_on else None, fleet=fleet)


def job_sequences(scenario: Scenario) -> list[tuple[int, ...]]:
    """Every user's jobs numbered 1, 2, ... over the whole scenario, in its order (the
    order FIFO breaks ties of arrival in)."""
    out, n = [], 0
    for u in scenario.users:
        k = len(u.job_list)
        out.append(tuple(range(n + 1, n + k + 1)))
        n += k
    return out


@dataclass(frozen=True)
class Deployment:
    """What ``scenario`` deploys under ``config``: its policy, and its members built on
    demand, by role (:mod:`dgdrf.runtime.roles`). Emulation builds every member
    (:func:`build`); a cluster node builds those it was assigned, so both modes run the
    same actors with the same roles and options."""

    scenario: Scenario
    config: RunConfig
    policy: Policy

    @cached_property
    def servers(self) -> dict[str, ServerSpec]:
        """The scenario's servers by id, one mapping every user's fleet shares."""
        return {s.id: s for s in self.scenario.servers}

    def members(self, role: str | None = None, only: Collection[str] | None = None) -> Iterator[Actor]:
        """The members playing ``role`` (every role when None) whose address is in
        ``only`` (all when None), built in the run's fixed order: the servers, the
        gateway, the bootstrap, the users (each actor's random stream follows from it)."""
        wanted = (lambda address: True) if only is None else only.__contains__
        if role in (None, roles.SERVER):
            for spec in self.scenario.servers:
                if wanted(spec.id):
                    yield build_server(spec, self.policy, self.config)
        if role in (None, roles.GATEWAY) and wanted(GATEWAY):
            yield Gateway(GATEWAY, self.policy.gateway_routing())
        if role in (None, roles.BOOTSTRAP) and wanted(BOOTSTRAP):
            yield Bootstrap(BOOTSTRAP)
        if role in (None, roles.USER):
            sequences = job_sequences(self.scenario)
            for i, user_spec in enumerate(self.scenario.users):
                if wanted(user_spec.id):
                    yield build_user(user_spec, self.policy, self.config, i, sequences[i], self.servers)


    def joiner(self, spec: ServerSpec, ever: Sequence[ServerSpec], up: Sequence[ServerSpec]) -> Server:
        """A server that joins the run under way, given the cluster as it is now (as a
        cluster's bootstrap tells a newcomer): the capacity C of every server that ever
        joined, those gone included (as every ledger counts them: model/ledger.py), and
        the census of the servers ``up``, this one among them."""
        capacity = np.array([s.capacity for s in ever], dtype=np.float64).sum(axis=0)
        options = replace(self.policy.options, total_capacity=tuple(float(c) for c in capacity), capacity_ids=tuple(s.id for s in ever), server_kinds=server_kinds(up), server_ids=tuple(s.id for s in up))
        return build_server(spec, make_policy(self.config.policy, options), self.config, joining=True)


def deploy(scenario: Scenario, config: RunConfig) -> Deployment:
    """The deployment of ``scenario`` under ``config`` (its policy made with the options
    every node's policy gets: :func:`policy_options`)."""
    if config.share_level is not None and config.share_level > len(scenario.resources):
        raise ConfigError(f"share_level: level {config.share_level} of {len(scenario.resources)} resources; the scenario has only {len(scenario.resources)}")
    policy = make_policy(config.policy, policy_options(scenario, config))
    problem = policy.fairness().problem(scenario.resources)
    if problem is not None:
        raise ConfigError(f"policy: {problem}")
    if scenario.gangs:
        if not policy.gangs:
            able = ", ".join(name for name, cls in POLICIES.items() if cls.gangs)
            raise ConfigError(f"policy: {config.policy} cannot place jobs of parts (gangs) whole; policies that can: {able}")
    return Deployment(scenario, config, policy)


@dataclass
class World:
    """One emulated run's parts: the scenario and configuration, the virtual clock, the
    emulated network with every actor on it, the policy, and the collector (the
    measuring instrument). Made by :func:`build`; run once by :meth:`run`."""

    scenario: Scenario
    config: RunConfig
    clock: VirtualClock
    transport: LocalTransport
    collector: Collector
    policy: Policy
    #: why the run ended (None while it runs and when it saturates)
    stop_reason: str | None = None
    observers: list[Observer] = field(default_factory=list)
    #: the churn the configuration asked for (``churn_departures``, ``churn_joins``), once
    #: the run started
    churn: Churn | None = None
    #: what the scenario deploys (a server that joins is built from it)
    deployment: Deployment | None = None
    #: the servers that joined during the run, in order
    joined: list[ServerSpec] = field(default_factory=list)
    #: the members whose crash was detected (the failure detector's verdicts so far)
    down: set[str] = field(default_factory=set)
    _ran: bool = field(default=False, init=False)

    @property
    def start(self) -> float:
        """When allocation begins (after the distributed policies' warm-up)."""
        return self.policy.allocation_start

    @property
    def seed(self) -> int:
        return self.config.seed

    @property
    def departing(self) -> str:
        return "a server"

    @property
    def crashing(self) -> str:
        return "a server or a user"

    def departable(self) -> list[str]:
        """The scenario's servers: those churn picks its departures among. The gateway
        and the bootstrap are single points whose loss ends a network run with a named
        reason, not one that goes on; users may crash (:meth:`crashable`), but a churn of
        users leaving is not modelled. A task of an instance of a job of parts lost with
        its server loses the whole instance, which runs again (nodes/user.py)."""
        return [s.id for s in self.scenario.servers]

    def crashable(self) -> list[str]:
        """The members a :class:`Crash` may take: every server (those that joined too)
        and every user. A user that crashes competes no more; what it had not started is
        withdrawn, and its tasks that run, run on (:meth:`Collector.retire_users`)."""
        return [*self.server_ids(), *(u.id for u in self.scenario.users)]

    def server_ids(self) -> list[str]:
        """Every server of the run: the scenario's, then those that joined."""
        return [*(s.id for s in self.scenario.servers), *(s.id for s in self.joined)]

    def fresh_server_id(self) -> str:
        """An id for a server that joins: ``s<k>``, the first k past the run's servers
        that names no member."""
        servers = self.server_ids()
        return fresh_server_id({*servers, *self.transport.actors, *(u.id for u in self.scenario.users)}, len(servers))

    def members_down(self, addresses: tuple[str, ...]) -> None:
        """As network mode's failure detector and bootstrap do: the collector judges
        saturation on the servers that remain (and withdraws what the users gone had
        not started), and the members that must know (:meth:`Policy.member_down_audience`)
        hear MemberDown, reliably as over the bootstrap's TCP connections (the emulated
        network's loss model is for the members' own messages; these are not counted
        among them)."""
        gone = set(addresses)
        self.down |= gone
        servers = self.server_ids()
        users = [u.id for u in self.scenario.users]
        down = [s for s in servers if s in gone]
        if down:
            self.collector.retire_servers(down, self.clock.now())
        left = [u for u in users if u in gone]
        if left:
            self.collector.retire_users(left, self.clock.now())
        bootstrap = self.transport.actors.get(BOOTSTRAP)
        if isinstance(bootstrap, Bootstrap):
            bootstrap.forget(gone)  # the failure detector's own bootstrap
        audience = type(self.policy).member_down_audience(servers, users, gone, GATEWAY, self.scenario.gangs)
        for address in audience:
            actor = self.transport.actors.get(address)  # None: gone, in this crash or an earlier one
            if actor is not None and address not in gone:
                actor.receive(BOOTSTRAP, MemberDown(sorted(gone)))

    def check_newcomer(self, spec: ServerSpec) -> None:
        """Refuse a server that cannot join: an id the run has, or another number of
        resources than the scenario's."""
        if spec.id in self.transport.actors or spec.id in self.server_ids() or spec.id in {u.id for u in self.scenario.users} or spec.id in (GATEWAY, BOOTSTRAP):
            raise ValueError(f"join: {spec.id!r} is the id of a member of the run already (a server that joins needs a new one)")
        if len(spec.capacity) != len(self.scenario.resources):
            raise ValueError(f"join: {spec.id!r} has {len(spec.capacity)} resources, the scenario {len(self.scenario.resources)}")

    def join(self, spec: ServerSpec) -> None:
        """Server ``spec`` joins now: built with the policy's roles and the cluster as it
        is (:meth:`Deployment.joiner`), it starts, announces itself and joins the overlays
        as any server does at start; the collector counts it (:meth:`Collector.admit_servers`),
        and every member hears of it (MemberUp: :meth:`Policy.member_up_audience`),
        reliably, as MemberDown. Its id must be new to the run."""
        self.check_newcomer(spec)
        assert self.deployment is not None  # made by build()
        ever = [*self.scenario.servers, *self.joined, spec]
        up = [s for s in ever if s.id not in self.down]  # as the bootstrap knows them
        server = self.deployment.joiner(spec, ever, up)
        self.joined.append(spec)
        self.transport.register(server)
        server.start()
        self.collector.admit_servers([spec], self.clock.now())
        news = MemberUp.of(spec)
        for address in type(self.policy).member_up_audience(self.server_ids(), [u.id for u in self.scenario.users], GATEWAY):
            actor = self.transport.actors.get(address)
            if actor is not None:
                actor.receive(BOOTSTRAP, news)

    def stop(self, reason: str) -> None:
        """End the run now, for ``reason`` (one of :data:`STOP_REASONS`)."""
        if self.stop_reason is None:
            self.stop_reason = reason
        self.clock.stop()

    def run(self, observers: Iterable[Observer] = (), controls: Iterable[Control] = (), progress: Callable[[float, int], None] | None = None, until: float | None = None) -> RunResult:
        """Run to the end and measure: saturation, a stop by an observer, or ``until``
        virtual seconds (default: the configuration's ``max_time``; the stop reason is
        then ``max_time``). The stall watchdog (:class:`StallWatch`) watches
        every run; ``observers`` and ``controls`` are started after it, in order.
        ``progress``, if given, is called with the virtual time and the allocations made
        so far every :data:`PROGRESS_SLICE_S` virtual seconds (a progress bar; the
        result is the same with or without it). While the events run, the world built
        before is out of the garbage collector's scans
        (:func:`~dgdrf.runtime.frozen.objects_frozen`)."""
        if self._ran:
            raise RuntimeError("a world runs once; build another")
        if until is not None and not 0 < until <= self.config.max_time:
            raise ValueError(f"until: must be positive virtual seconds, at most max_time ({self.config.max_time:g}), got {until!r}")
        self._ran = True
        clock, transport, collector, config = self.clock, self.transport, self.collector, self.config
        limit = config.max_time if until is None else until
        self.observers = [StallWatch(), *observers, *controls]
        if config.churn_departures or config.churn_joins:  # the configuration's churn (config.ChurnOptions), after the given controls
            self.churn = Churn(config.churn_every, config.churn_departures, config.churn_start, joins=config.churn_joins)
            self.observers.append(self.churn)
        at_start: list[tuple[list[int], list[int]]] = []  # message counters when allocation starts
        clock.call_later(self.start, lambda: at_start.append((list(transport.stats.count), list(transport.stats.nbytes))))
        collector.last_allocation_at = self.start  # the stall clock starts with allocation
        if collector.timeline is not None and collector.timeline.every:
            self.observers.append(Sampler())
        collector.check_initial_saturation()
        wall = 0.0
        if collector.saturated_at is None:
            transport.start_all()
            listeners = [o for o in self.observers if type(o).allocated is not Observer.allocated]
            if listeners:

                def on_allocation(record: AllocationRecord) -> None:
                    for o in listeners:
                        o.allocated(self, record)

                collector.on_allocation = on_allocation
            for o in self.observers:
                o.started(self)
            log.info("run started", policy=config.policy, scenario=self.scenario.name, servers=len(self.scenario.servers), users=len(self.scenario.users), seed=config.seed)
            t0 = time.perf_counter()
            with objects_frozen():  # the world lives for the run: no full collection scans it
                if progress is None:
                    clock.run(until=limit)
                else:
                    reached = 0.0
                    while True:
                        reached = min(reached + PROGRESS_SLICE_S, limit)
                        clock.run(until=reached)
                        progress(clock.now(), len(collector.allocations))
                        if clock.stopped or reached >= limit or not clock.pending():
                            break
            wall = time.perf_counter() - t0
        if self.stop_reason is None:
            # the limit reached, or the clock out of events before it: nobody will ever act
            # again, and a run with work left is stalled, not out of time
            self.stop_reason = collector.end_reason or ("max_time" if clock.now() >= limit else "stalled")
        collector.sample(clock.now())
        collector.finish()
        result = measure(self.scenario, config, collector, transport, wall, self.stop_reason, self.start, at_start[0] if at_start else None, now=clock.now())
        if self.churn is not None:
            result.churn = {"every": self.churn.every, "departures": self.churn.departures, "start": self.churn.start, "schedule": [[t, a] for t, a in self.churn.schedule]}
            if self.churn.joins:  # (a churn of departures alone keeps its record as it was)
                result.churn["joins"] = self.churn.joins
                result.churn["join_schedule"] = [[t, j.id, j.like] for t, j in self.churn.join_schedule]
        log.info("run finished", policy=config.policy, scenario=self.scenario.name, stop=result.stop_reason, allocations=result.allocations, runtime_s=round(result.runtime_s, 3), wall_s=round(wall, 3), messages=result.messages["total"])
        for o in self.observers:
            o.finished(self, result)
        return result


def build(scenario: Scenario, config: RunConfig) -> World:
    """Wire ``scenario`` under ``config`` into one emulated run: every member of its
    :class:`Deployment` on one virtual clock and emulated network, the collector
    measuring."""
    config.validate()
    if config.churn_departures > len(scenario.servers):
        raise ConfigError(f"churn_departures: {config.churn_departures} servers to leave, the scenario has {len(scenario.servers)}")
    check_scenario(scenario.capacity_matrix(), scenario.demand_matrix())
    rng = np.random.default_rng(config.seed)
    clock = VirtualClock()
    deployment = deploy(scenario, config)
    policy = deployment.policy
    collector = Collector(
        scenario, on_saturated=clock.stop, strict=True,  # an unhandled message is a bug here
        notion=policy.fairness(), offers=policy.offers, placeable=policy.placeable(),
        start=policy.allocation_start, time_scale=config.time_scale, user_start=policy.user_start, sample_every=config.sample_every,
    )
    transport = LocalTransport(
        clock,
        rng,
        latency=(config.latency_ms[0] / 1000.0, config.latency_ms[1] / 1000.0),
        loss=config.loss,
        duplicate=config.duplicate,
        reporter=collector,
    )
    for actor in deployment.members():
        transport.register(actor)
    return World(scenario, config, clock, transport, collector, deployment.policy, deployment=deployment)


class StallWatch(Observer):
    """Ends a run that can no longer make progress, by the stop rules a cluster's
    collector uses too (nodes/stop_rules.py): ``stranded`` when no allocation can ever
    happen again although tasks fit, ``stalled`` when something fits and nothing was
    placed for ``stall_time`` virtual seconds (a bug to find). Checked every
    :data:`WATCH_PERIOD_S`; the run's own end (drained, saturated) comes at the event."""

    def started(self, world: World) -> None:
        self.period = min(WATCH_PERIOD_S, world.config.stall_time)
        # max_time is the clock's own limit (World.run's until): not judged here
        self.rules = StopRules(world.config.stall_time, float("inf"))
        world.clock.call_later(self.period, self._check, world)

    def _check(self, world: World) -> None:
        collector = world.collector
        now = world.clock.now()
        reason = self.rules.check(collector, now) if collector.ended_at is None else None
        if reason in ("stranded", "stalled"):
            world.stop(reason)
        elif reason is not None:  # over by itself (the last job's arrival time passed, say)
            collector.end(reason, now)
        else:
            world.clock.call_later(self.period, self._check, world)


class Sampler(Observer):
    """Takes the collector's samples of shares and utilisation at their instants
    (``sample_every``; model/timeline.py). It only reads."""

    def started(self, world: World) -> None:
        every = world.collector.timeline.every if world.collector.timeline is not None else None
        if every:
            world.clock.call_later(0.0 if world.start <= 0 else world.start, self._sample, world, every)

    def _sample(self, world: World, every: float) -> None:
        world.collector.sample(world.clock.now())
        world.clock.call_later(every, self._sample, world, every)


def _check_actors(world: Stage, what: str, addresses: Iterable[str]) -> None:
    """Refuse an address no actor of the run has (a typo would silently do nothing)."""
    unknown = [a for a in addresses if a not in world.transport.actors]
    if unknown:
        raise ValueError(f"{what}: no actor {unknown[0]!r} in the run")


def _check_departable(world: Stage, what: str, addresses: Iterable[str], crash: bool = False) -> None:
    """Refuse a member whose departure (``crash``: whose crash) the run does not model
    (:meth:`Stage.departable`, :meth:`Stage.crashable`)."""
    departable = set(world.crashable() if crash else world.departable())
    others = [a for a in addresses if a not in departable]
    if others:
        what_may = world.crashing if crash else world.departing
        raise ValueError(f"{what}: {others[0]!r} is not {what_may} (the only members whose {'crash' if crash else 'departure'} this run models)")


def crash(world: Stage, addresses: Sequence[str], detected_after: float = CRASH_DETECTION_S) -> None:
    """Crash the members at ``addresses`` now (what :class:`Crash` and :class:`Churn` do at
    their times): they stop, and nothing reaches them any more (:meth:`Actor.stop`).
    ``detected_after`` seconds later the run learns of it (:meth:`Stage.members_down`:
    in an allocation run, MemberDown to the members that must know and the collector's
    servers retired, as network mode's failure detector does; an overlay run tells
    nobody)."""
    stopped = []
    for address in addresses:
        actor = world.transport.unregister(address)
        if actor is not None:  # None: crashed already (by another control), counted then
            actor.stop()
            stopped.append(address)
    if stopped:
        world.clock.call_later(detected_after, world.members_down, tuple(stopped))


@dataclass
class Crash(Control):
    """Members that crash at virtual time ``at`` (:func:`crash`): they stop, and
    ``detected_after`` seconds later the members that must know hear of it."""

    at: float
    addresses: tuple[str, ...]
    detected_after: float = CRASH_DETECTION_S

    def started(self, world: Stage) -> None:
        _check_actors(world, "crash", self.addresses)
        _check_departable(world, "crash", self.addresses, crash=True)
        world.clock.call_later(self.at, crash, world, self.addresses, self.detected_after)


@dataclass
class Join(Control):
    """Servers that join the run at virtual time ``at`` (:meth:`World.join`: each built
    with the policy's roles and the cluster as it is then, counted by the collector,
    announced to every member by MemberUp). Their ids must be new to the run."""

    at: float
    servers: tuple[ServerSpec, ...]

    def __post_init__(self) -> None:
        if self.at < 0:
            raise ValueError(f"join: at must be >= 0, got {self.at}")
        ids = [s.id for s in self.servers]
        if len(set(ids)) != len(ids):
            raise ValueError(f"join: a server id twice in {ids}")

    def started(self, world: World) -> None:
        for spec in self.servers:  # refused where it enters, not when it would join
            world.check_newcomer(spec)
        world.clock.call_later(self.at, self._join, world)

    def _join(self, world: World) -> None:
        for spec in self.servers:
            world.join(spec)


@dataclass
class Partition(Control):
    """The network splits into ``groups`` at virtual time ``at`` and heals at ``until``
    (None: never): every message between members of different groups is lost, both ways
    (:meth:`LocalTransport.set_partition`); within a group they pass. Members listed in
    no group form one more group together, so ``Partition(5, 8, (servers,))`` cuts the
    servers off from the users, the gateway and the bootstrap. Nobody crashes and nobody
    is told (no MemberDown): the protocols' own retransmissions must carry the run
    across, as over a real network. Messages on their way when it splits arrive; those
    lost are the result's ``messages["partitioned"]`` (absent when none was). One that
    never heals leaves room nobody can reach, which the collector still counts: such a
    run ends stalled. One partition at a time: a second one splitting while another holds
    is refused. PeerSim loses messages in its transport layer likewise
    (UnreliableTransport), not in the protocols."""

    at: float
    until: float | None
    groups: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        if self.at < 0:
            raise ValueError(f"partition: at must be >= 0, got {self.at}")
        if self.until is not None and self.until <= self.at:
            raise ValueError(f"partition: until ({self.until}) must be after at ({self.at})")
        partition_groups(self.groups)  # an address in two groups is refused here, where it enters

    def started(self, world: Stage) -> None:
        _check_actors(world, "partition", (a for group in self.groups for a in group))
        world.clock.call_later(self.at, self._split, world)
        if self.until is not None:
            world.clock.call_later(self.until, world.transport.heal)

    def _split(self, world: Stage) -> None:
        if world.transport.partitioned:
            raise ValueError(f"partition at t={self.at}: another partition still holds (one at a time)")
        world.transport.set_partition(self.groups)


@dataclass(frozen=True)
class Joined:
    """A server a churn brought in: its spec, and the server whose kind it has."""

    spec: ServerSpec
    like: str

    @property
    def id(self) -> str:
        return self.spec.id


@dataclass
class Churn(Control):
    """Servers leaving one after another, as crashes (:func:`crash`): ``departures`` of
    them, picked at random among ``among`` (default: every server), at the events of a
    Poisson process of mean gap ``every`` seconds from ``start`` on (memoryless sessions,
    the usual churn model; PeerSim's DynamicNetwork removes nodes for good likewise).
    And ``joins`` servers joining (:meth:`World.join`), at the events of a second such
    process: each a new server (id ``s<k>``, the first k not taken) of the kind
    (capacity and attributes) of the earliest of the churn's departed servers not yet
    replaced, a machine replaced as a Google cell's are; when none is, of a scenario
    server drawn at random. The schedule is drawn from ``seed``, or from the run's seed
    by a stream of its own, so the other draws of the run stay what they were (and the
    departures' with joins what they are without); :attr:`schedule` holds the departures
    once the run started, (time, address) in order, and :attr:`join_schedule` the joins
    as they happen, (time, :class:`Joined`).

    Users do not leave in a churn: a user crashes by a :class:`Crash`."""

    every: float
    departures: int
    start: float = 0.0
    among: tuple[str, ...] | None = None
    seed: int | None = None
    detected_after: float = CRASH_DETECTION_S
    joins: int = 0
    schedule: list[tuple[float, str]] = field(default_factory=list, init=False)
    join_schedule: list[tuple[float, Joined]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if self.every <= 0:
            raise ValueError(f"churn: every must be > 0, got {self.every}")
        if self.departures < 0:
            raise ValueError(f"churn: departures must be >= 0, got {self.departures}")
        if self.joins < 0:
            raise ValueError(f"churn: joins must be >= 0, got {self.joins}")
        if self.start < 0:
            raise ValueError(f"churn: start must be >= 0, got {self.start}")

    def started(self, world: Stage) -> None:
        servers = world.departable()
        among = list(dict.fromkeys(self.among)) if self.among is not None else servers  # each once
        _check_actors(world, "churn", among)
        _check_departable(world, "churn", among)
        if self.departures > len(among):
            raise ValueError(f"churn: {self.departures} departures among {len(among)} members that may leave")
        if self.joins and not isinstance(world, World):
            raise ValueError("churn: joins are modelled in allocation runs only")
        rng = np.random.default_rng(self.seed if self.seed is not None else [world.seed, CHURN_STREAM])
        times = self.start + np.cumsum(rng.exponential(self.every, self.departures))
        who = rng.choice(len(among), self.departures, replace=False)
        self.schedule = [(float(t), among[i]) for t, i in zip(times, who)]
        for t, address in self.schedule:
            world.clock.call_later(t, crash, world, (address,), self.detected_after)
        if self.joins:
            assert isinstance(world, World)
            join_times = self.start + np.cumsum(rng.exponential(self.every, self.joins))
            fallback = rng.integers(0, len(world.scenario.servers), self.joins)
            self._replacements = Replacements()
            for k, t in enumerate(join_times):
                world.clock.call_later(float(t), self._join, world, int(fallback[k]))

    def _join(self, world: World, fallback: int) -> None:
        now = world.clock.now()
        by_id = {s.id: s for s in world.scenario.servers}
        down = [by_id[a] for t, a in self.schedule if t <= now and a in by_id]
        spec, like = self._replacements.newcomer(world.fresh_server_id(), down, world.scenario.servers[fallback])
        self.join_schedule.append((now, Joined(spec, like)))
        world.join(spec)
