"""The staleness rules (dgdrf/bench/staleness.py) across a change of fingerprint scheme:
records made under an earlier scheme stay current while their policy behaves as it did
when the scheme changed, and become stale when it changes (``--write`` drops their frozen
digest); records of the current scheme are compared with the committed behaviour."""

from __future__ import annotations

from typing import Any

import pytest

from dgdrf.bench import fingerprint
from dgdrf.bench.fingerprint import updated_document
from dgdrf.bench.staleness import PATH_REVISIONS, behaviour_changed, is_stale, marks, revision_params, stale_because

#: a committed file after a scheme change from 1 to 2 (digests made up)
DOC: dict[str, Any] = {
    "scheme": 2,
    "behaviours": {"drf": "drf-2", "fifo": "fifo-2"},
    "replaced": {"1": {"drf": {"digest": "drf-1", "by": "drf-2"}, "fifo": {"digest": "fifo-1", "by": "fifo-2"}}},
}


@pytest.fixture
def committed_file(monkeypatch):
    """Make the committed file the document given (a copy of DOC by default)."""

    def use(doc: dict[str, Any] = DOC) -> None:
        monkeypatch.setattr(fingerprint, "_document", lambda: doc)

    use()
    return use


def _record(policy: str, behaviour: str | None, scheme: int | None = None) -> dict[str, Any]:
    """A record of ``policy`` with the current revisions; provenance as sweeps wrote it:
    no ``behaviour_scheme`` before scheme 2 (the records in bench/results)."""
    params = {"policy": policy} | revision_params(policy, {})
    prov: dict[str, Any] = {"commit": "0" * 40, "behaviour": behaviour, "paths": dict(PATH_REVISIONS)}
    if scheme is not None:
        prov["behaviour_scheme"] = scheme
    return {"key": "k", "params": params, "status": "ok", "result": {"events": {}}, "provenance": prov}


def test_a_record_of_an_earlier_scheme_is_current_while_its_digest_is_the_frozen_one(committed_file):
    assert not is_stale(_record("drf", "drf-1"))  # no scheme: 1
    assert not is_stale(_record("drf", "drf-1", scheme=1))
    assert not is_stale(_record("fifo", "fifo-1"))
    assert stale_because(_record("drf", "0000000000000000")) == ["behaviour fingerprint changed"]
    assert is_stale(_record("drf", "fifo-1"))  # another policy's
    assert is_stale(_record("drf", "drf-2"))  # a digest is compared with its own scheme's only
    assert is_stale(_record("probes", "probes-1"))  # nothing frozen for it


def test_a_record_of_the_committed_scheme_must_have_the_committed_behaviour(committed_file):
    assert not is_stale(_record("drf", "drf-2", scheme=2))
    assert is_stale(_record("drf", "drf-1", scheme=2))
    assert is_stale(_record("drf", "drf-2", scheme=3))  # of a scheme this code does not know
    assert not is_stale(_record("drf", None))  # made before fingerprints: its revisions decide
    assert not behaviour_changed({"policy": "drf"}, {})
    assert behaviour_changed({"policy": "nonesuch"}, {"behaviour": "drf-2", "behaviour_scheme": 2})


def test_when_a_behaviour_changes_its_earlier_scheme_records_become_stale_and_no_others(committed_file, monkeypatch):
    """``--write`` after drf's behaviour changed: drf's frozen digest goes, fifo's stays."""
    monkeypatch.setattr(fingerprint, "SCHEME", 2)  # DOC's: a write of the same scheme
    after = updated_document(DOC, {"drf": "drf-3", "fifo": "fifo-2"})
    assert after["scheme"] == 2 and after["behaviours"] == {"drf": "drf-3", "fifo": "fifo-2"}
    assert after["replaced"] == {"1": {"fifo": {"digest": "fifo-1", "by": "fifo-2"}}}
    committed_file(after)
    assert is_stale(_record("drf", "drf-1")) and is_stale(_record("drf", "drf-2", scheme=2))
    assert not is_stale(_record("drf", "drf-3", scheme=2))
    assert not is_stale(_record("fifo", "fifo-1")) and not is_stale(_record("fifo", "fifo-2", scheme=2))
    # every behaviour changed: nothing frozen is left
    assert updated_document(after, {"drf": "drf-4", "fifo": "fifo-4"})["replaced"] == {}


def test_a_frozen_digest_stands_only_for_the_behaviour_that_replaced_it(committed_file):
    """A file whose behaviour changed without ``--write`` dropping the frozen digest (an
    edit by hand, a merge) still makes the earlier-scheme records stale."""
    committed_file({**DOC, "behaviours": {"drf": "drf-3", "fifo": "fifo-2"}})
    assert is_stale(_record("drf", "drf-1")) and not is_stale(_record("fifo", "fifo-1"))


def test_a_change_of_scheme_freezes_the_earlier_behaviours_as_replaced_by_the_new(committed_file, monkeypatch):
    """The transition ``--write`` makes from a file of scheme 1 (no ``scheme``: the file
    before schemes), as it was done for scheme 2; writing again keeps it."""
    monkeypatch.setattr(fingerprint, "SCHEME", 2)
    old = {"about": "...", "run": {}, "behaviours": {"drf": "drf-1", "fifo": "fifo-1", "gone": "gone-1"}}
    new = updated_document(old, {"drf": "drf-2", "fifo": "fifo-2"})
    assert new["scheme"] == 2 and new["behaviours"] == DOC["behaviours"]
    assert new["replaced"] == DOC["replaced"]  # a policy no longer there has nothing frozen
    assert updated_document(new, {"drf": "drf-2", "fifo": "fifo-2"})["replaced"] == DOC["replaced"]
    committed_file(new)
    assert not is_stale(_record("drf", "drf-1")) and not is_stale(_record("drf", "drf-2", scheme=2))


def test_a_second_change_of_scheme_keeps_the_first_schemes_records_current(committed_file, monkeypatch):
    """From scheme 2 (with scheme 1 frozen) to 3, as was done when the jobs run joined the
    fingerprint: scheme-1 and scheme-2 records stay current, both now replaced by the
    scheme-3 behaviours; a later change of drf's behaviour makes both of drf's stale."""
    monkeypatch.setattr(fingerprint, "SCHEME", 3)
    new = updated_document(DOC, {"drf": "drf-3", "fifo": "fifo-3"})
    assert new["scheme"] == 3 and new["replaced"] == {
        "1": {"drf": {"digest": "drf-1", "by": "drf-3"}, "fifo": {"digest": "fifo-1", "by": "fifo-3"}},
        "2": {"drf": {"digest": "drf-2", "by": "drf-3"}, "fifo": {"digest": "fifo-2", "by": "fifo-3"}},
    }
    committed_file(new)
    assert not is_stale(_record("drf", "drf-1")) and not is_stale(_record("drf", "drf-2", scheme=2)) and not is_stale(_record("drf", "drf-3", scheme=3))
    changed = updated_document(new, {"drf": "drf-4", "fifo": "fifo-3"})
    committed_file(changed)
    assert is_stale(_record("drf", "drf-1")) and is_stale(_record("drf", "drf-2", scheme=2))
    assert not is_stale(_record("fifo", "fifo-1")) and not is_stale(_record("fifo", "fifo-2", scheme=2))


def test_a_new_record_carries_the_committed_behaviour_and_its_scheme(committed_file):
    m = marks({"policy": "drf"})
    assert m == {"behaviour": "drf-2", "behaviour_scheme": 2, "paths": PATH_REVISIONS}
    assert not is_stale(_record("drf", None) | {"provenance": m})
    assert marks({"policy": "nonesuch"})["behaviour"] is None


def test_the_committed_files_earlier_scheme_records_are_current():
    """Records as sweeps wrote them before scheme 2 (provenance ``behaviour`` without a
    scheme: three in bench/results) are current for every behaviour whose scheme-1 digest
    is frozen in the committed file; the current scheme's digests are not mistaken for them."""
    for scheme, table in fingerprint.replaced().items():
        for name, frozen in table.items():
            policy, _, kind = name.partition("/")
            params = {"policy": policy, **({"gradient": kind} if kind else {})}
            rec = {"key": "k", "params": params | revision_params(policy, params), "provenance": {"behaviour": frozen["digest"]}}
            if scheme != 1:
                rec["provenance"]["behaviour_scheme"] = scheme
            assert not is_stale(rec), name
            rec["provenance"]["behaviour"] = frozen["by"]
            assert is_stale(rec), name
