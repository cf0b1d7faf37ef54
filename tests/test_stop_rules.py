"""The stop rules (dgdrf/nodes/stop_rules.py), on a state made by hand: the reasons a
run ends, in the order they are judged, the same for emulation and network mode."""

from __future__ import annotations

from dataclasses import dataclass, field

from dgdrf.nodes.stop_rules import StopRules, final_reason


@dataclass
class State:
    last_allocation_at: float = 0.0
    finite_left: bool = False
    endless_: bool = True
    room: bool = False
    fits: bool = True
    stranded_users: list[str] = field(default_factory=list)

    def finite_work_left(self, now: float) -> bool:
        return self.finite_left

    def endless(self) -> bool:
        return self.endless_

    def room_may_return(self, now: float) -> bool:
        return self.room

    def fits_now(self) -> bool:
        return self.fits

    def stranded(self) -> list[str]:
        return self.stranded_users


def test_the_run_is_over_when_drained_or_saturated_and_not_before():
    assert final_reason(State(endless_=False), 5.0) == "drained"
    assert final_reason(State(endless_=False, finite_left=True), 5.0) is None
    assert final_reason(State(fits=False), 5.0) == "saturated"  # the thesis's end
    assert final_reason(State(fits=True), 5.0) is None
    assert final_reason(State(fits=False, room=True), 5.0) is None  # a task will end: room comes back
    assert final_reason(State(fits=False, finite_left=True), 5.0) is None  # a mixed workload: the finite jobs first


def test_the_stall_clock_runs_only_while_something_can_be_placed():
    rules = StopRules(stall_time=100.0, max_time=1e9)
    waiting = State(fits=True, stranded_users=["u1"], room=True)  # fits elsewhere, but its holders are full (probes), and will free

    for t in range(0, 300, 10):
        assert rules.check(waiting, float(t)) is None
    runnable = State(fits=True, room=True)
    assert rules.check(runnable, 300.0) is None  # it began to fit at 300: the clock starts there
    assert rules.check(runnable, 399.0) is None
    assert rules.check(runnable, 400.0) == "stalled"
    runnable.last_allocation_at = 350.0  # an allocation restarts it
    assert StopRules(100.0, 1e9).check(runnable, 449.0) is None


def test_stranded_needs_its_patience_and_no_room_to_come():
    rules = StopRules(stall_time=1e9, max_time=1e9, stranded_patience=2.0)
    state = State(stranded_users=["u1"])
    assert rules.check(state, 10.0) is None and rules.check(state, 11.5) is None
    assert rules.check(state, 12.0) == "stranded"
    assert StopRules(1e9, 1e9).check(State(stranded_users=["u1"], room=True), 10.0) is None  # a holder's task will end
    assert StopRules(1e9, 1e9).check(State(stranded_users=["u1"]), 10.0) == "stranded"  # emulation: once is enough


def test_max_time_comes_last():
    assert StopRules(1e9, 50.0).check(State(), 50.0) == "max_time"
    assert StopRules(1e9, 50.0).check(State(endless_=False), 50.0) == "drained"
