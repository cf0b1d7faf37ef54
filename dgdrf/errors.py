"""Exceptions a user can act on.

Every bad input (scenario file, CLI flag, network frame) is rejected where it enters with
one of these, carrying a one-line message that names what is wrong. The CLI turns them
into ``dgdrf: error: <message>`` and exit status 2, never a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class DgdrfError(Exception):
    """Base class of all errors that are the user's input, not a bug."""


class ScenarioError(DgdrfError):
    """A scenario file or scenario value is malformed (names file, field and problem)."""


class ConfigError(DgdrfError):
    """A run option is invalid: unknown policy, negative tick, bad latency range ..."""


class DecodeError(DgdrfError):
    """A message frame could not be decoded (unknown type tag, wrong arity, not msgpack)."""


class ProtocolError(RuntimeError):
    """Not the user's input but a bug: in emulation an actor received a message none of
    its roles handles, or reported a kind the collector does not know. Emulation and
    tests fail loudly on it; network mode counts and logs such events instead."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """The one or two known names nearest ``name``, for an error about an unknown one:
    " (did you mean 'policy'?)", or "" when none is near."""
    near = difflib.get_close_matches(name, list(known), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""


def unknown_policy(name: str, known: Iterable[str]) -> str:
    """The error for an unknown policy: "unknown policy 'drff' (did you mean 'drf'?);
    known policies: ..."."""
    names = list(known)
    return f"unknown policy {name!r}{did_you_mean(name, names)}; known policies: {', '.join(names)}"
