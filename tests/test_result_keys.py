"""The result keys the documentation lists (dgdrf/result_keys.py, drawn into the site's
reference page) are exactly those a run writes: a key added to the result and not
documented, or documented and gone, fails here."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import dgdrf
from dgdrf.measurement import RunResult
from dgdrf.model.notions import NOTIONS, FairnessNotion, ShareLevel
from dgdrf.result_keys import NETWORK, RESULT_KEYS, documented

ROOT = Path(__file__).resolve().parents[1]


def _emulation_keys() -> set[str]:
    fields = {f.name for f in dataclasses.fields(RunResult)} - {"notion_shares"}
    notions: list[type[FairnessNotion]] = [*NOTIONS.values(), ShareLevel]
    return fields | {n.result_key for n in notions}


def test_every_key_of_an_emulation_is_documented_and_none_besides() -> None:
    listed = {k for e in RESULT_KEYS if e.where != NETWORK for k in e.keys}
    assert listed == _emulation_keys()


def test_every_key_a_network_run_adds_is_documented() -> None:
    source = (ROOT / "dgdrf" / "cluster" / "node.py").read_text(encoding="utf-8")
    added = set(re.findall(r'result\["(\w+)"\] =', source))
    assert added, "the network result's keys are no longer set as result[...] = in dgdrf/cluster/node.py"
    assert added == {k for e in RESULT_KEYS if e.where == NETWORK for k in e.keys}


def test_a_run_with_jobs_churn_and_a_notion_writes_only_documented_keys() -> None:
    result = dgdrf.run(ROOT / "configs" / "google-finite-8x4.toml", policy="tsf", churn_departures=2, churn_joins=1, per_server=True).to_dict()
    assert {"churn", "jobs", "task_shares", "per_server", "unrunnable_jobs", "samples"} <= set(result)
    assert set(result) <= set(documented())


def test_no_key_is_documented_twice() -> None:
    keys = [k for e in RESULT_KEYS for k in e.keys]
    assert len(keys) == len(set(keys))
