"""Behaviour fingerprints (dgdrf/bench/fingerprint.py): the committed behaviours are the
current code's, so a change to what a policy does cannot land unnoticed, and records made
by code that behaved otherwise are stale; what is digested is what the policy did (its
allocations, messages, events, end), not the result document, so a key added to results
changes no fingerprint."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from dgdrf.bench.fingerprint import SCHEME, behaviour_name, behaviour_names, committed, committed_scheme, measure_behaviour, replaced, trace_behaviour
from dgdrf.bench.staleness import PATH_REVISIONS, is_stale, revision_params, stale_because


@pytest.mark.parametrize("name", behaviour_names())
def test_the_committed_behaviour_is_the_current_codes(name):
    assert measure_behaviour(name) == committed().get(name), (
        f"{name} behaves differently from dgdrf/data/behaviour.json: results recorded by earlier code are stale. "
        "If the change is meant, run `python -m dgdrf.bench.fingerprint --write` and commit the file (and say so); if not, find the cause"
    )


def test_the_committed_file_is_of_this_codes_scheme_and_its_frozen_digests_stand_for_its_behaviours():
    """The committed digests are of :data:`SCHEME`; a frozen digest of an earlier scheme
    names the committed behaviour that replaced it (``--write`` drops it when that
    behaviour changes)."""
    assert committed_scheme() == SCHEME
    for scheme, table in replaced().items():
        assert scheme < SCHEME
        for name, frozen in table.items():
            assert frozen["by"] == committed()[name], f"{name}: frozen scheme-{scheme} digest stands for another behaviour"


def _whole_result_digest(result: dict) -> str:
    """Scheme 1's fingerprint: the whole result document but its wall time."""
    doc = {k: v for k, v in result.items() if k != "wall_s"}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def test_a_key_added_to_the_result_changes_no_fingerprint(monkeypatch):
    """A new metric (say a makespan and per-job records, in the result document and on
    the RunResult) leaves every fingerprint as it was, so no record goes stale for it;
    under scheme 1 (the whole result digested) it changed them all."""
    from dgdrf import world
    from dgdrf.bench import fingerprint
    from dgdrf.emulation import RunConfig, run_emulation
    from dgdrf.measurement import RunResult
    from dgdrf.model.generators import google_2011_scenario

    def run() -> dict:
        return run_emulation(google_2011_scenario(*fingerprint.SCENARIO), RunConfig(policy="fifo", **fingerprint.CONFIG)).to_dict()

    before, plain = measure_behaviour("fifo"), run()
    to_dict, measure = RunResult.to_dict, world.measure

    def grown_measure(*args, **kwargs) -> RunResult:
        result = measure(*args, **kwargs)
        result.makespan = result.runtime_s  # an attribute the dataclass does not declare
        return result

    monkeypatch.setattr(world, "measure", grown_measure)
    monkeypatch.setattr(RunResult, "to_dict", lambda self: {**to_dict(self), "makespan": self.makespan, "jobs": [{"id": 1, "done_s": 2.0}]})
    grown = run()
    assert grown["makespan"] == grown["runtime_s"] and set(grown) - set(plain) == {"makespan", "jobs"}  # the result did grow
    assert _whole_result_digest(grown) != _whole_result_digest(plain)  # which would have staled every record
    assert measure_behaviour("fifo") == before == committed()["fifo"]


def test_what_the_policy_did_changes_the_fingerprint():
    """Any allocation (where, when, which task, in which order), the messages sent, the
    events counted and why the run ended are each part of the behaviour."""
    b = trace_behaviour("fifo")
    assert b.digest() == committed()["fifo"] and len(b.allocations) > 100
    assert b.stop_reason == "saturated" and b.messages and b.events

    def changed(edit) -> str:
        other = copy.deepcopy(b)
        edit(other)
        return other.digest()

    assert changed(lambda c: None) == b.digest()
    servers = sorted({a[3] for a in b.allocations})
    kind = next(iter(b.messages))
    variants = {
        "another server": lambda c: c.allocations[10].__setitem__(3, next(s for s in servers if s != c.allocations[10][3])),
        "another time": lambda c: c.allocations[10].__setitem__(0, c.allocations[10][0] + 1e-6),
        "another task": lambda c: c.allocations[10].__setitem__(2, c.allocations[10][2] + 1),
        "another order": lambda c: c.allocations.__setitem__(slice(10, 12), c.allocations[10:12][::-1]),
        "one allocation fewer": lambda c: c.allocations.pop(),
        "one message more": lambda c: c.messages[kind].__setitem__(0, c.messages[kind][0] + 1),
        "one event more": lambda c: c.events.__setitem__("retransmitted", c.events.get("retransmitted", 0) + 1),
        "another stop reason": lambda c: setattr(c, "stop_reason", "stalled"),
        "another end": lambda c: setattr(c, "end_s", c.end_s + 0.1),
    }
    digests = {what: changed(edit) for what, edit in variants.items()}
    assert b.digest() not in digests.values() and len(set(digests.values())) == len(digests), digests


def _record(policy: str, behaviour: str | None, **params) -> dict:
    params = {"policy": policy, **params}
    params |= revision_params(policy, params)
    return {"key": "k", "params": params, "provenance": {"behaviour": behaviour, "behaviour_scheme": SCHEME} if behaviour is not None else None}


def test_a_record_is_stale_when_its_behaviour_differs_from_the_committed():
    now = committed()
    assert not is_stale(_record("drf", now["drf"]))
    assert is_stale(_record("drf", "0000000000000000"))
    assert not is_stale(_record("dgdrf", now["dgdrf/stamped"]))
    assert is_stale(_record("dgdrf", now["dgdrf/stamped"], gradient="toolbox"))  # the toolbox behaves otherwise
    assert not is_stale(_record("fifo", None))  # made before fingerprints: its revisions decide
    assert is_stale({"key": "k", "params": {"policy": "fifo", "protocol_revision": 1}})


def test_a_record_that_took_a_changed_path_is_stale_and_no_other():
    """PATH_REVISIONS: task_overdue 2 (an overdue task makes its user stuck since). A
    record that counted no overdue task is as good as before; one that did is stale
    unless its provenance names the current revision of that path."""
    now = committed()["dgdrf/stamped"]

    def made(events: dict, paths: dict | None) -> dict:
        rec = _record("dgdrf", now)
        rec["result"] = {"events": events}
        if paths is not None:
            rec["provenance"]["paths"] = paths
        return rec

    assert PATH_REVISIONS["task_overdue"] == 2
    assert not is_stale(made({"declined": 3}, None))
    assert not is_stale(made({"task_overdue": 0}, None))
    assert is_stale(made({"task_overdue": 1}, None))  # made before the change
    assert is_stale(made({"task_overdue": 1}, {"task_overdue": 1}))
    assert not is_stale(made({"task_overdue": 1}, dict(PATH_REVISIONS)))
    old = _record("fifo", None)  # made before fingerprints and path revisions
    assert not is_stale(old | {"result": {"events": {}}}) and is_stale(old | {"result": {"events": {"task_overdue": 4}}})
    assert stale_because(made({"task_overdue": 1}, None)) == ["task_overdue path now 2"]  # what a report says


def test_a_path_only_some_policies_changed_makes_only_their_records_stale():
    """POLICY_PATH_REVISIONS: servers_down 2 for dg-tsf and pdg-tsf (a server reported
    down leaves their census). A dgdrf record that counted departures stays current; a
    dg-tsf one is stale unless it names revision 2, as a new record's marks do."""
    from dgdrf.bench.staleness import marks

    def made(policy: str, variant: str, paths: dict) -> dict:
        rec = _record(policy, committed()[f"{policy}/{variant}"])
        rec["result"] = {"events": {"servers_down": 4}}
        rec["provenance"]["paths"] = paths
        return rec

    assert not is_stale(made("dgdrf", "stamped", dict(PATH_REVISIONS)))
    assert stale_because(made("dg-tsf", "stamped", dict(PATH_REVISIONS))) == ["servers_down path now 2"]
    assert not is_stale(made("dg-tsf", "stamped", marks({"policy": "dg-tsf"})["paths"]))
    assert not is_stale(made("pdg-tsf", "toolbox", marks({"policy": "pdg-tsf"})["paths"]))
    no_departures = made("dg-tsf", "stamped", dict(PATH_REVISIONS))
    no_departures["result"] = {"events": {}}
    assert not is_stale(no_departures)
    assert stale_because(_record("drf", "0000000000000000")) == ["behaviour fingerprint changed"]


def test_behaviour_names_follow_the_gradient_a_run_uses():
    assert behaviour_name({"policy": "pdgdrf"}) == "pdgdrf/toolbox"  # its default
    assert behaviour_name({"policy": "dgdrf"}) == "dgdrf/stamped"
    assert behaviour_name({"policy": "drf", "gradient": "toolbox"}) == "drf"  # no gradient at all
    assert behaviour_name({"policy": "nonesuch"}) is None
    assert set(committed()) == set(behaviour_names())


def test_a_sweep_runs_again_a_record_of_code_that_behaved_otherwise(tmp_path, capsys):
    import json

    from dgdrf.bench.grid import load_sweep

    from dgdrf.bench.store import RESULTS_JSONL, gzip_member, read_records

    from dgdrf.bench.sweep import run_sweep
    from dgdrf.cli import main

    f = tmp_path / "one.toml"
    f.write_text('[sweep]\nname = "one"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [5]\nusers = [3]\n')
    out = tmp_path / "out"
    assert run_sweep(load_sweep(f), out, workers=1, progress=False).done == 1
    (rec,), _ = read_records(out)
    rec["provenance"]["behaviour"] = "0000000000000000"  # as if made by code that behaved otherwise
    (out / RESULTS_JSONL).write_bytes(gzip_member(json.dumps(rec)))
    assert main(["sweep", str(f), "--out", str(out), "--dry-run"]) == 0
    assert "stale" in capsys.readouterr().out
    outcome = run_sweep(load_sweep(f), out, workers=1, progress=False)
    assert (outcome.done, outcome.skipped) == (1, 0)
    (again,), _ = read_records(out)
    assert again["provenance"]["behaviour"] == committed()["drf"] and again["provenance"]["behaviour_scheme"] == SCHEME and not is_stale(again)
    assert again["provenance"]["paths"] == PATH_REVISIONS
