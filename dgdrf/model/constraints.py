"""Placement constraints: on which servers a task may run.

A job (or a short-form user) may name the servers its tasks may use (``eligible``: a
list of server ids) and the attributes a server must have (``requires``: name -> value,
or name -> list of values meaning any of them; strings, numbers and booleans compared for
equality). A server's attributes are its scenario's ``attributes`` table. Both may be
given, and then both hold. Wang et al. (TSF, §II, §V) restrict tasks to machine sets;
Tahir et al. (UDRF) to machine classes; Google's trace by machine attributes (its
task_constraints table), which ``requires`` models.

A :class:`Constraint` travels with its task (on the wire: ``eligible`` a list of ids,
``requires`` a map), so a server decides for itself whether a task may run on it; a
scheduler that knows servers' attributes (from their registration) decides for them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: what an attribute's value may be
Scalar = str | int | float | bool
#: largest number of attributes a server or a constraint may name (a wire map's bound)
MAX_ATTRIBUTES = 32
#: largest number of values one ``requires`` entry may list (a wire list's bound)
MAX_VALUES = 64


class ConstraintError(ValueError):
    """A constraint or an attribute table is malformed (the message names the part)."""


def _same(a: Scalar, b: Scalar) -> bool:
    """Equality as a scenario means it: a boolean equals only a boolean (True is not 1)."""
    return (type(a) is bool) == (type(b) is bool) and a == b


@dataclass(frozen=True)
class Constraint:
    """Where a task may run: ``eligible`` server ids (None: any server) and attribute
    requirements (name -> the values any of which will do)."""

    eligible: frozenset[str] | None = None
    requires: tuple[tuple[str, tuple[Scalar, ...]], ...] = ()

    @property
    def unconstrained(self) -> bool:
        return self.eligible is None and not self.requires

    def admits(self, server: str, attributes: Mapping[str, Scalar]) -> bool:
        """Whether a task with this constraint may run on ``server`` with ``attributes``."""
        if self.eligible is not None and server not in self.eligible:
            return False
        for name, values in self.requires:
            if name not in attributes:
                return False
            have = attributes[name]
            if not any(_same(have, v) for v in values):
                return False
        return True

    # -- the wire (a task's optional fields) -------------------------------------------
    def wire_eligible(self) -> list[str]:
        """``eligible`` as a message field: the ids, sorted (empty: any server)."""
        return sorted(self.eligible) if self.eligible is not None else []

    def wire_requires(self) -> dict[str, Any]:
        """``requires`` as a message field: name -> value, or a list of values."""
        return {name: (values[0] if len(values) == 1 else list(values)) for name, values in self.requires}

    @classmethod
    def from_wire(cls, eligible: list[str], requires: Mapping[str, Any]) -> Constraint:
        """The constraint of a task's message fields (:meth:`wire_eligible`, :meth:`wire_requires`)."""
        if not eligible and not requires:
            return UNCONSTRAINED
        return cls(frozenset(eligible) if eligible else None, _requirements(requires))

    def to_json(self) -> dict[str, Any]:
        """The scenario fields (``eligible``, ``requires``) this constraint gives, if any."""
        out: dict[str, Any] = {}
        if self.eligible is not None:
            out["eligible"] = sorted(self.eligible)
        if self.requires:
            out["requires"] = self.wire_requires()
        return out


UNCONSTRAINED = Constraint()


def _requirements(requires: Mapping[str, Any]) -> tuple[tuple[str, tuple[Scalar, ...]], ...]:
    out = []
    for name in sorted(requires):
        value = requires[name]
        values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        out.append((str(name), values))
    return tuple(out)


def _check_scalar(where: str, v: Any) -> Scalar:
    if isinstance(v, bool) or isinstance(v, str):
        if isinstance(v, str) and not 0 < len(v) <= 256:
            raise ConstraintError(f"{where}: a string value must have 1-256 characters")
        return v
    if isinstance(v, (int, float)):
        try:
            finite = math.isfinite(v)
        except OverflowError:
            finite = False
        if not finite:
            raise ConstraintError(f"{where}: must be a finite number, got {str(v)[:40]}")
        return v
    raise ConstraintError(f"{where}: must be a string, number or boolean, got {v!r}"[:160])


def parse_attributes(value: Any) -> tuple[tuple[str, Scalar], ...]:
    """A server's ``attributes`` table, checked: name -> string, number or boolean."""
    if not isinstance(value, Mapping):
        raise ConstraintError(f"must be a table of name = value, got {value!r}"[:160])
    if len(value) > MAX_ATTRIBUTES:
        raise ConstraintError(f"at most {MAX_ATTRIBUTES} attributes, got {len(value)}")
    out = []
    for name in sorted(value):
        if not isinstance(name, str) or not 0 < len(name) <= 256:
            raise ConstraintError(f"attribute names must be strings of 1-256 characters, got {name!r}"[:160])
        out.append((name, _check_scalar(name, value[name])))
    return tuple(out)


def parse_constraint(eligible: Any, requires: Any, servers: Iterable[str]) -> Constraint:
    """``eligible`` (None, or a non-empty list of existing server ids) and ``requires``
    (None, or name -> value or list of values), checked; a :class:`ConstraintError` says
    which field is wrong (its message starts with the field's name)."""
    known = set(servers)
    ids: frozenset[str] | None = None
    if eligible is not None:
        if not isinstance(eligible, (list, tuple)):
            raise ConstraintError(f"eligible: must be a list of server ids, got {eligible!r}"[:160])
        if not eligible:
            raise ConstraintError("eligible: is empty (a task that may run nowhere); leave it out to allow every server")
        for i, s in enumerate(eligible):
            if not isinstance(s, (str, int)) or isinstance(s, bool) or str(s) not in known:
                raise ConstraintError(f"eligible[{i}]: no server {s!r} in the scenario"[:160])
        ids = frozenset(str(s) for s in eligible)
    req: tuple[tuple[str, tuple[Scalar, ...]], ...] = ()
    if requires is not None:
        if not isinstance(requires, Mapping):
            raise ConstraintError(f"requires: must be a table of attribute = value, got {requires!r}"[:160])
        if not requires:
            raise ConstraintError("requires: is empty; leave it out to allow every server")
        if len(requires) > MAX_ATTRIBUTES:
            raise ConstraintError(f"requires: at most {MAX_ATTRIBUTES} attributes, got {len(requires)}")
        checked: dict[str, Any] = {}
        for name, value in requires.items():
            if not isinstance(name, str) or not 0 < len(name) <= 256:
                raise ConstraintError(f"requires: attribute names must be strings of 1-256 characters, got {name!r}"[:160])
            if isinstance(value, (list, tuple)):
                if not value:
                    raise ConstraintError(f"requires.{name}: an empty list of values matches no server")
                if len(value) > MAX_VALUES:
                    raise ConstraintError(f"requires.{name}: at most {MAX_VALUES} values, got {len(value)}")
                checked[name] = [_check_scalar(f"requires.{name}[{i}]", v) for i, v in enumerate(value)]
            else:
                checked[name] = _check_scalar(f"requires.{name}", value)
        req = _requirements(checked)
    if ids is None and not req:
        return UNCONSTRAINED
    return Constraint(ids, req)
