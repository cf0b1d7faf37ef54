"""Staleness: whether a recorded run was made by code that behaves otherwise than the
current code, the rules in one place. A sweep runs a stale record again, a report leaves
it out and says why, ``dgdrf sweep --dry-run`` marks it and ``--prune-stale`` moves it
aside, the bench/ scripts skip it; all of them ask here, and a sweep marks each new
record with what these rules read (:func:`marks`).

A record is stale for any of three reasons (:func:`stale_because` names them):

- revisions (its ``params``): it used an older revision of code changed since
  (:func:`revision_params`). What records made before fingerprints have, and what a
  change visible only at scale still raises.
- paths (its result's ``events`` and its provenance's ``paths``): it took a code path
  that has changed since (:data:`PATH_REVISIONS`, :data:`POLICY_PATH_REVISIONS`).
- behaviour (its provenance's ``behaviour`` and ``behaviour_scheme``): its policy's
  behaviour fingerprint (dgdrf/bench/fingerprint.py) is not the committed one
  (:func:`behaviour_changed`). A record of an earlier fingerprint scheme is compared
  with the digest frozen for its scheme when the scheme changed, which holds only while
  its policy still behaves as it did then; a key added to results changes no
  fingerprint, so it stales nothing.
"""

from __future__ import annotations

from typing import Any

from dgdrf.bench.fingerprint import FIRST_SCHEME, behaviour_name, committed, committed_behaviour, committed_scheme, replaced

#: the parameters :func:`revision_params` adds (they identify code, not a condition)
REVISION_KEYS = ("protocol_revision", "gradient_preference_revision", "stamped_gradient_revision")

#: Code paths changed since runs were recorded that only some runs take, each named by
#: the event a run counts when it takes it, with the path's revision. A record that
#: counted the event (``result.events``) and was made by an earlier revision of the path
#: (its provenance's ``paths``; none: 1) is stale, and only such a record: a revision of
#: the whole protocol would make every run of every policy stale, and the behaviour runs
#: (dgdrf/bench/fingerprint.py) do not take these paths, so their fingerprints do not
#: change. task_overdue 2: an overdue task makes its user stuck (policies/ddrf.py,
#: HomeScheduler._overdue; it was placed again, and a dgdrf run at 20 % loss stalled).
PATH_REVISIONS: dict[str, int] = {"task_overdue": 2}
#: The same for paths only some policies take: event -> {policy: revision}, for those
#: policies' records only. servers_down 2: dg-tsf's and pdg-tsf's servers take a server
#: reported down out of their census of server kinds (policies/meters.py CensusChanges).
POLICY_PATH_REVISIONS: dict[str, dict[str, int]] = {"servers_down": {"dg-tsf": 2, "pdg-tsf": 2}}


def path_revisions(policy: str) -> dict[str, int]:
    """The revisions of the paths only some runs take, for a run of ``policy``."""
    revisions = dict(PATH_REVISIONS)
    for event, per_policy in POLICY_PATH_REVISIONS.items():
        if policy in per_policy:
            revisions[event] = per_policy[policy]
    return revisions


def revision_params(policy: str, params: dict[str, Any]) -> dict[str, Any]:
    """The revisions of changed code a run of ``policy`` with ``params`` uses, as
    parameters of the run. A change that alters a policy's results raises a revision, so
    a run recorded before it has another key: a sweep runs it again and a report leaves
    the old record out (:func:`is_stale`) instead of mixing old and new behaviour. Listed
    are only the parts that changed after runs were recorded: the allocation protocol
    (nodes/protocol.py PROTOCOL_REVISION), every policy's; the stamped gradient
    (overlay/gradient.py REVISION), when a policy runs it with a memory; eq. 3.9's
    preference (overlay/gradient.py PREFERENCE_REVISION), when a policy runs a gradient."""
    from dgdrf.nodes.protocol import PROTOCOL_REVISION
    from dgdrf.overlay.gradient import PREFERENCE_REVISION, REVISION
    from dgdrf.policies import POLICIES

    revisions: dict[str, Any] = {"protocol_revision": PROTOCOL_REVISION}
    cls = POLICIES.get(policy)
    kind = cls.gradient_kind(params.get("gradient")) if cls is not None else None
    if kind is not None:
        revisions["gradient_preference_revision"] = PREFERENCE_REVISION
    if kind == "stamped" and params.get("gradient_memory") != 0:
        revisions["stamped_gradient_revision"] = REVISION
    return revisions


def marks(params: dict[str, Any]) -> dict[str, Any]:
    """What a record of a run with ``params`` made by the current code carries in its
    provenance for these rules: its policy's committed behaviour and the scheme of that
    fingerprint, and the revisions of the paths only some runs take. (Its revisions are
    in its parameters already: :func:`revision_params`.)"""
    return {"behaviour": committed_behaviour(params), "behaviour_scheme": committed_scheme(), "paths": path_revisions(params.get("policy", ""))}


def behaviour_changed(params: dict[str, Any], provenance: dict[str, Any]) -> bool:
    """Whether the behaviour fingerprint in a record's ``provenance`` says that its run's
    policy (from ``params``) behaved otherwise than it does now. No fingerprint (made
    before they were recorded): False, the revisions decide. Of the committed scheme: it
    must be the committed behaviour. Of an earlier scheme (no ``behaviour_scheme``:
    scheme 1): it must be the digest frozen for that scheme when the scheme changed, and
    the policy's committed behaviour must still be the one that replaced it (a behaviour
    that changed since has no frozen digest, or another). Of any other scheme: changed."""
    recorded = provenance.get("behaviour")
    if recorded is None:
        return False
    name = behaviour_name(params)
    now = None if name is None else committed().get(name)
    if name is None or now is None:
        return True
    scheme = provenance.get("behaviour_scheme", FIRST_SCHEME)
    if scheme == committed_scheme():
        return bool(recorded != now)
    frozen = replaced().get(scheme, {}).get(name) if isinstance(scheme, int) else None
    return frozen is None or frozen.get("digest") != recorded or frozen.get("by") != now


def is_stale(rec: dict[str, Any]) -> bool:
    """Whether a recorded run was made by code that behaves otherwise than the current:
    its policy's behaviour fingerprint is not the current one (:func:`behaviour_changed`),
    or it used an older revision of code that has changed since (the revisions in its
    parameters), or it took a code path that has changed since (:data:`PATH_REVISIONS`)."""
    return bool(stale_because(rec))


def stale_because(rec: dict[str, Any]) -> list[str]:
    """Why a record is stale (:func:`is_stale`), one phrase a reason; empty if it is not."""
    params = rec.get("params") or {}
    why = [f"{k} now {v}" for k, v in revision_params(params.get("policy", ""), params).items() if params.get(k) != v]
    provenance = rec.get("provenance") or {}
    events = (rec.get("result") or {}).get("events") or {}
    paths = provenance.get("paths") or {}
    why += [f"{event} path now {revision}" for event, revision in path_revisions(params.get("policy", "")).items() if events.get(event) and paths.get(event, 1) < revision]
    if behaviour_changed(params, provenance):
        why.append("behaviour fingerprint changed")
    return why
