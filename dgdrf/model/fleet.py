"""The servers a member knows to be up, and whether a job can still run on one of them.

A scenario refuses on load a job that no server could ever run (model/scenario.py). Once
servers leave (churn, crashes, a cluster's killed processes) a job may lose every server
that could run it: its constraint admitted only servers that left, or its demand fitted
only on them. Its user would wait for it for ever, holding back its later jobs, and the
run could only go quiet with work left. A :class:`Fleet` is what a member knows of the
servers: the scenario's, less those reported down (MemberDown), plus those that joined
(MemberUp). Its :meth:`Fleet.why_not` says whether a job can run on one of them, and if
not, why, in words a result can carry.

"Can run" is the scenario's own rule (:func:`runs_on`): the server's attributes (and id)
satisfy the job's constraint and one task's demand fits on the empty server, each
resource within :data:`~dgdrf.model.resources.FIT_TOLERANCE`. Whether there is room now
is another matter: a server that can run the job will have room once its tasks end.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np

from dgdrf.model.constraints import Constraint
from dgdrf.model.gangs import packs_on
from dgdrf.model.resources import fits
from dgdrf.model.scenario import ServerSpec
from dgdrf.model.workload import JobSpec

#: how many server ids a reason names before it says "and N more"
_NAMED = 4


def runs_on(demand: Sequence[float], constraint: Constraint, server: str, capacity: Sequence[float], attributes: Mapping[str, object]) -> bool:
    """Whether a task of ``demand`` under ``constraint`` can run on the server ``server``
    with ``capacity`` and ``attributes`` when it is empty (the rule model/scenario.py
    refuses a job by)."""
    cap = np.asarray(capacity, dtype=np.float64)
    if cap.shape != (len(demand),) or not fits(np.asarray(demand, dtype=np.float64), cap, cap):
        return False
    return constraint.unconstrained or constraint.admits(server, attributes)  # type: ignore[arg-type]


def _named(ids: Iterable[str]) -> str:
    ids = sorted(ids)
    more = f" and {len(ids) - _NAMED} more" if len(ids) > _NAMED else ""
    return ", ".join(ids[:_NAMED]) + more


class Fleet:
    """The servers a member knows to be up: ``servers`` (the scenario's by id, shared and
    never changed, so that every user of an emulation holds one without a copy), less
    those that :meth:`leave`, plus those that :meth:`join`.

    While no server has left, every job the scenario accepted can run, and
    :meth:`why_not` answers at once without looking at a server."""

    def __init__(self, servers: Mapping[str, ServerSpec]) -> None:
        self._base = servers
        self.left: dict[str, ServerSpec] = {}  # servers reported down, by id
        self.joined: dict[str, ServerSpec] = {}  # servers that joined and are up, by id
        self._answers: dict[tuple[tuple[float, ...], Constraint], str | None] = {}
        self._instances: dict[tuple[object, None], str | None] = {}  # jobs of parts: whether an instance packs

    def leave(self, servers: Iterable[str]) -> list[str]:
        """Servers reported down; the ones this fleet had up."""
        gone = []
        for server in servers:
            spec = self.joined.pop(server, None) or self._base.get(server)
            if spec is not None and server not in self.left:
                self.left[server] = spec
                gone.append(server)
        if gone:
            self._answers.clear()
            self._instances.clear()
        return gone

    def join(self, spec: ServerSpec) -> bool:
        """A server that joined (MemberUp); False if it was up already."""
        if spec.id in self.joined or (spec.id in self._base and spec.id not in self.left):
            return False
        self.left.pop(spec.id, None)
        if spec.id not in self._base:  # a scenario server back again is up as it was
            self.joined[spec.id] = spec
        self._answers.clear()
        self._instances.clear()
        return True

    def up(self) -> list[ServerSpec]:
        """Every server up, the scenario's first."""
        return [s for s in self._base.values() if s.id not in self.left] + list(self.joined.values())

    def why_not(self, demand: Sequence[float], constraint: Constraint) -> str | None:
        """None if a task of ``demand`` under ``constraint`` can run on a server up, else
        why not (which servers could have run it and left)."""
        if not self.left:
            return None  # the scenario's servers, and perhaps more: it was accepted on load
        key = (tuple(float(d) for d in demand), constraint)
        if key in self._answers:
            return self._answers[key]
        why = self._why_not(key[0], constraint)
        self._answers[key] = why
        return why

    def why_not_job(self, job: JobSpec) -> str | None:
        """:meth:`why_not` of every part of ``job``, and for a job of parts whether one
        instance of it still fits the servers up at once (model/gangs.py)."""
        for part in job.part_list:
            why = self.why_not(part.demand, part.constraint)
            if why is not None:
                return why
        if not job.gang or not self.left:
            return None
        key = (job.parts, None)
        if key not in self._instances:
            self._instances[key] = None if packs_on(job.parts, [(s.id, s.capacity, s.attribute_map) for s in self.up()]) else f"its instance of {job.instance_size} tasks fits on no set of servers up at once"
        return self._instances[key]

    def _why_not(self, demand: tuple[float, ...], constraint: Constraint) -> str | None:
        up = self.up()
        if any(runs_on(demand, constraint, s.id, s.capacity, s.attribute_map) for s in up):
            return None
        could = [s.id for s in self.left.values() if runs_on(demand, constraint, s.id, s.capacity, s.attribute_map)]
        gone = f"; {_named(could)} could, and left" if could else ""
        admitted = [s for s in up if constraint.unconstrained or constraint.admits(s.id, s.attribute_map)]
        if not admitted:
            return f"no server up matches its constraint{gone}"
        return f"its demand {list(demand)} fits on none of the {len(admitted)} server(s) up that its constraint admits{gone}"


def fresh_server_id(taken: Collection[str], after: int) -> str:
    """An id for a server that joins a run of ``after`` servers: ``s<k>``, the first k
    past ``after`` that names no member (``taken``)."""
    k = after + 1
    while f"s{k}" in taken:
        k += 1
    return f"s{k}"


class Replacements:
    """The kind a server that joins takes (emulation's churn and a cluster's bootstrap
    alike): the kind (capacity and attributes) of the earliest server down that no
    newcomer has replaced yet, a machine replaced as a Google cell's are; when none is,
    the ``fallback`` the caller draws. Each server is replaced once."""

    def __init__(self) -> None:
        self._replaced: set[str] = set()

    def newcomer(self, new_id: str, down: Sequence[ServerSpec], fallback: ServerSpec) -> tuple[ServerSpec, str]:
        """Server ``new_id`` of the kind it takes, given the servers ``down`` in the
        order they went down; and the id of the server whose kind it has."""
        waiting = [s for s in down if s.id not in self._replaced]
        like = waiting[0] if waiting else fallback
        self._replaced.add(like.id)
        return ServerSpec(new_id, like.capacity, like.attributes), like.id
