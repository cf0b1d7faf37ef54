"""Behaviour fingerprints (dgdrf/bench/fingerprint.py): the committed behaviours are the
current code's, so a change to what a policy does cannot land unnoticed, and records made
by code that behaved otherwise are stale."""

from __future__ import annotations

import pytest

from dgdrf.bench.fingerprint import behaviour_name, behaviour_names, committed, measure_behaviour
from dgdrf.bench.staleness import PATH_REVISIONS, is_stale, revision_params, stale_because


@pytest.mark.parametrize("name", behaviour_names())
def test_the_committed_behaviour_is_the_current_codes(name):
    assert measure_behaviour(name) == committed().get(name), (
        f"{name} behaves differently from dgdrf/data/behaviour.json: results recorded by earlier code are stale. "
        "If the change is meant, run `python -m dgdrf.bench.fingerprint --write` and commit the file (and say so); if not, find the cause"
    )


def _record(policy: str, behaviour: str | None, **params) -> dict:
    params = {"policy": policy, **params}
    params |= revision_params(policy, params)
    return {"key": "k", "params": params, "provenance": {"behaviour": behaviour} if behaviour is not None else None}


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
    assert stale_because(_record("drf", "0000000000000000")) == ["behaviour fingerprint changed"]


def test_behaviour_names_follow_the_gradient_a_run_uses():
    assert behaviour_name({"policy": "pdgdrf"}) == "pdgdrf/toolbox"  # its default
    assert behaviour_name({"policy": "dgdrf"}) == "dgdrf/stamped"
    assert behaviour_name({"policy": "drf", "gradient": "toolbox"}) == "drf"  # no gradient at all
    assert behaviour_name({"policy": "nonesuch"}) is None
    assert set(committed()) == set(behaviour_names())


def test_a_sweep_runs_again_a_record_of_code_that_behaved_otherwise(tmp_path, capsys):
    import json

    from dgdrf.bench.sweep import RESULTS_JSONL, load_sweep, read_records, run_sweep
    from dgdrf.cli import main

    f = tmp_path / "one.toml"
    f.write_text('[sweep]\nname = "one"\npolicies = ["drf"]\nneighbors = [2]\nseeds = [1]\nservers = [5]\nusers = [3]\n')
    out = tmp_path / "out"
    assert run_sweep(load_sweep(f), out, workers=1, progress=False).done == 1
    (rec,), _ = read_records(out)
    rec["provenance"]["behaviour"] = "0000000000000000"  # as if made by code that behaved otherwise
    (out / RESULTS_JSONL).write_text(json.dumps(rec) + "\n")
    assert main(["sweep", str(f), "--out", str(out), "--dry-run"]) == 0
    assert "stale" in capsys.readouterr().out
    outcome = run_sweep(load_sweep(f), out, workers=1, progress=False)
    assert (outcome.done, outcome.skipped) == (1, 0)
    (again,), _ = read_records(out)
    assert again["provenance"]["behaviour"] == committed()["drf"] and not is_stale(again)
    assert again["provenance"]["paths"] == PATH_REVISIONS
