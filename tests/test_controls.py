"""The controls that change a run in virtual time (dgdrf/world.py): a partition loses
the messages between its groups until it heals (the emulated network's hook,
LocalTransport.set_partition), and churn takes servers away one after another as
crashes. Both leave a run that ends for a right reason, and do nothing when they touch
nothing."""

from __future__ import annotations

import numpy as np
import pytest

from dgdrf.emulation import Churn, Crash, Observer, Partition, RunConfig, build, run_emulation
from dgdrf.model.generators import google_2011_scenario
from dgdrf.overlay.messages import Join
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import VirtualClock
from dgdrf.runtime.transport import LocalTransport

SCENARIO = google_2011_scenario(20, 6, 4)
SERVERS = tuple(s.id for s in SCENARIO.servers)
USERS = tuple(u.id for u in SCENARIO.users)


def _without_wall(result) -> dict:
    d = result.to_dict()
    d.pop("wall_s")
    return d


def _config(policy: str, **kw) -> RunConfig:
    return RunConfig(policy=policy, seed=1, neighbors=3, warmup=2.0, **kw)


class Allocations(Observer):
    """Every allocation's time and server."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str]] = []

    def allocated(self, world, allocation) -> None:
        self.seen.append((allocation.time, allocation.server))


# -- the emulated network's hook ------------------------------------------------------


class Inbox(Actor):
    def __init__(self, address: str) -> None:
        super().__init__(address)
        self.got: list[str] = []

    def on_Join(self, src: str, msg: Join) -> None:
        self.got.append(src)


def _send(transport: LocalTransport, path: str, src: str, dst: str) -> None:
    if path == "actor":  # the path every run takes (interpreted: the closure; compiled: the method)
        transport.actors[src].send(dst, Join(1))
    else:  # the method's own steps (the compiled build's send), called directly
        LocalTransport.send(transport, src, dst, Join(1))


@pytest.mark.parametrize("path", ["actor", "method"])
def test_a_partition_loses_what_crosses_groups_both_ways_on_every_send_path(path):
    clock = VirtualClock()
    transport = LocalTransport(clock, np.random.default_rng(1))
    a, b, c, d = (transport.register(Inbox(x)) for x in "abcd")
    _send(transport, path, "a", "c")  # on its way before the split: it arrives
    transport.set_partition([("a", "b")])  # c and d, in no group, are one group together
    assert transport.partitioned
    for src, dst in [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "d"), ("d", "b"), ("c", "d")]:
        _send(transport, path, src, dst)
    clock.run()
    assert (a.got, b.got, c.got, d.got) == (["b"], ["a"], ["a"], ["c"])
    assert transport.stats.partitioned == 4 and transport.stats.dropped == 0
    transport.heal()
    assert not transport.partitioned
    _send(transport, path, "c", "a")
    clock.run()
    assert a.got == ["b", "c"] and transport.stats.partitioned == 4
    assert transport.summary()["partitioned"] == 4


def test_a_partition_of_nobody_is_none_and_an_address_in_two_groups_is_refused():
    transport = LocalTransport(VirtualClock(), np.random.default_rng(1))
    transport.set_partition([(), ()])
    assert not transport.partitioned
    with pytest.raises(ValueError, match="'a' is in two groups"):
        transport.set_partition([("a", "b"), ("a",)])


# -- Partition -------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["drf", "ddrf-random", "dgdrf"])
def test_servers_cut_off_from_their_users_allocate_nothing_until_it_heals(policy):
    """Servers alone on one side, users, gateway and bootstrap on the other, from 3 s to
    6 s: nothing is placed once what was on its way has arrived, and after the heal the
    protocols' retransmissions carry the run on to saturation. Nobody crashed: no server
    is retired, every actor is still there."""
    world = build(SCENARIO, _config(policy))
    seen = Allocations()
    result = world.run(observers=[seen], controls=[Partition(at=3.0, until=6.0, groups=(SERVERS,))])
    assert result.stop_reason == "saturated"
    assert result.invariant_violations == []  # no server over capacity, no task placed twice
    assert not [t for t, _ in seen.seen if 3.1 <= t < 6.0]
    assert [t for t, _ in seen.seen if t >= 6.0]
    assert result.messages["partitioned"] > 0
    assert "servers_down" not in result.events
    assert len(world.transport.actors) == len(SERVERS) + len(USERS) + 2
    assert not world.transport.partitioned


@pytest.mark.parametrize("policy", ["probes", "pdgdrf"])
def test_a_partition_through_the_servers_under_loss_still_ends_for_a_right_reason(policy):
    """Half the servers with every user on one side for 12 s, with 5 % loss."""
    groups = (SERVERS[:10] + USERS,)
    result = run_emulation(SCENARIO, _config(policy, loss=0.05, duplicate=0.01), controls=[Partition(3.0, 15.0, groups)])
    assert result.stop_reason in ("saturated", "stranded"), result.stop_reason
    assert result.invariant_violations == []
    assert result.messages["partitioned"] > 0


@pytest.mark.parametrize("policy", ["drf", "dgdrf"])
@pytest.mark.parametrize(
    "partition",
    [
        Partition(3.0, 6.0, ()),  # nobody listed
        Partition(3.0, None, (SERVERS + USERS + ("gateway", "bootstrap"),)),  # everyone on one side
        Partition(1e9, None, (SERVERS,)),  # after the run has ended
    ],
    ids=["nobody", "everyone-together", "after-the-end"],
)
def test_a_partition_that_loses_nothing_changes_nothing(policy, partition):
    plain = run_emulation(SCENARIO, _config(policy))
    split = run_emulation(SCENARIO, _config(policy), controls=[partition])
    assert _without_wall(split) == _without_wall(plain)
    assert "partitioned" not in split.messages


def test_a_partition_that_never_heals_ends_stalled():
    """The central scheduler (s1) cut off from its users for good: the room it manages is
    out of reach but still counted, so the watchdog ends the run, rather than calling it
    saturated."""
    result = run_emulation(SCENARIO, _config("drf"), controls=[Partition(3.0, None, (SERVERS[:10],))])
    assert result.stop_reason == "stalled"
    assert result.invariant_violations == []


def test_partition_arguments_are_checked():
    with pytest.raises(ValueError, match=r"until \(3.0\) must be after at \(3.0\)"):
        Partition(3.0, 3.0, (SERVERS,))
    with pytest.raises(ValueError, match="at must be >= 0"):
        Partition(-1.0, None, (SERVERS,))
    with pytest.raises(ValueError, match="'s1' is in two groups"):
        Partition(1.0, 2.0, (("s1", "s2"), ("s1",)))
    with pytest.raises(ValueError, match="partition: no actor 'nobody'"):
        run_emulation(SCENARIO, RunConfig(), controls=[Partition(1.0, 2.0, (("s1", "nobody"),))])
    with pytest.raises(ValueError, match="another partition still holds"):
        run_emulation(SCENARIO, RunConfig(), controls=[Partition(1.0, 5.0, (SERVERS[:5],)), Partition(2.0, 3.0, (USERS,))])


# -- Churn -----------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["drf", "ddrf-random", "dgdrf"])
def test_a_seeded_churn_is_the_same_twice_and_retires_the_servers_it_takes(policy):
    def once():
        world = build(SCENARIO, _config(policy))
        seen = Allocations()
        churn = Churn(every=2.0, departures=5, start=3.0)
        result = world.run(observers=[seen], controls=[churn])
        return world, seen, churn, result

    world, seen, churn, result = once()
    _, _, again, result2 = once()
    assert _without_wall(result2) == _without_wall(result) and again.schedule == churn.schedule
    assert result.stop_reason in ("saturated", "stranded"), result.stop_reason
    assert result.invariant_violations == []
    times = [t for t, _ in churn.schedule]
    assert times == sorted(times) and times[0] > 3.0
    left = {a for _, a in churn.schedule}
    assert len(left) == 5 and left <= set(SERVERS)
    end = world.clock.now()
    gone = [(t, a) for t, a in churn.schedule if t <= end]
    assert result.events.get("servers_down", 0) == sum(1 for t, _ in gone if t + 1.5 <= end)
    assert all(a not in world.transport.actors for _, a in gone)
    for t, address in gone:  # nothing starts on a server after it left
        assert not [at for at, s in seen.seen if s == address and at > t]


def test_churn_draws_its_schedule_from_its_seed_or_the_runs_and_nothing_else():
    def schedule(churn: Churn, seed: int) -> list[tuple[float, str]]:
        run_emulation(SCENARIO, RunConfig(policy="drf", seed=seed, max_time=5.0), controls=[churn])
        return churn.schedule

    assert schedule(Churn(1.0, 4), 1) == schedule(Churn(1.0, 4), 1)
    assert schedule(Churn(1.0, 4), 1) != schedule(Churn(1.0, 4), 2)
    assert schedule(Churn(1.0, 4, seed=9), 1) == schedule(Churn(1.0, 4, seed=9), 2)
    assert {a for _, a in schedule(Churn(1.0, 3, among=("s2", "s4", "s6")), 1)} == {"s2", "s4", "s6"}
    # no departure: the run's own draws are untouched
    plain = run_emulation(SCENARIO, _config("ddrf-random"))
    assert _without_wall(run_emulation(SCENARIO, _config("ddrf-random"), controls=[Churn(1.0, 0)])) == _without_wall(plain)


def test_a_server_crashed_and_then_churned_is_counted_down_once():
    result = run_emulation(SCENARIO, _config("drf"), controls=[Crash(2.0, ("s3",)), Churn(1.0, 1, start=4.0, among=("s3",))])
    assert result.events["servers_down"] == 1
    assert result.stop_reason == "saturated"


def test_churn_arguments_are_checked():
    with pytest.raises(ValueError, match="every must be > 0"):
        Churn(0.0, 1)
    with pytest.raises(ValueError, match="departures must be >= 0"):
        Churn(1.0, -1)
    with pytest.raises(ValueError, match="churn: no actor 'nobody'"):
        run_emulation(SCENARIO, RunConfig(), controls=[Churn(1.0, 1, among=("s1", "nobody"))])
    with pytest.raises(ValueError, match="'u1' is not a server"):
        run_emulation(SCENARIO, RunConfig(), controls=[Churn(1.0, 1, among=("s1", "u1"))])
    with pytest.raises(ValueError, match="3 departures among 2 members that may leave"):
        run_emulation(SCENARIO, RunConfig(), controls=[Churn(1.0, 3, among=("s1", "s2"))])


# -- churn from the configuration (config.ChurnOptions: --churn-*, scenario settings, sweeps) ----
def test_churn_from_the_configuration_is_the_churn_control_and_is_recorded():
    by_config = run_emulation(SCENARIO, _config("dgdrf", churn_departures=4, churn_every=2.0, churn_start=3.0))
    churn = Churn(every=2.0, departures=4, start=3.0)
    by_control = run_emulation(SCENARIO, _config("dgdrf"), controls=[churn])
    recorded = by_config.to_dict().pop("churn")
    assert recorded == {"every": 2.0, "departures": 4, "start": 3.0, "schedule": [[t, a] for t, a in churn.schedule]}
    assert {k: v for k, v in _without_wall(by_config).items() if k != "churn"} == _without_wall(by_control)
    assert "churn" not in by_control.to_dict()  # a run without configured churn: no key, result unchanged
    assert by_config.stop_reason in ("saturated", "stranded") and by_config.invariant_violations == []


def test_configured_churn_is_refused_where_it_cannot_happen(tmp_path, capsys):
    from dgdrf.cli import main
    from dgdrf.errors import ConfigError

    with pytest.raises(ConfigError, match="churn_departures: 21 servers to leave, the scenario has 20"):
        build(SCENARIO, _config("drf", churn_departures=21))
    with pytest.raises(ConfigError, match="churn_departures: must be an integer >= 0"):
        RunConfig.from_settings({"churn_departures": -1}, None)
    assert main(["cluster", "up", "--servers", "4", "--users", "2", "--churn-departures", "1", "--insecure"]) == 2
    assert "churn is emulated" in capsys.readouterr().err
