"""Typed messages and their msgpack wire format.

A message type is a slotted dataclass registered under a small integer tag with
:func:`message`. On the wire a message is the msgpack array ``[tag, field1, field2, ...]``
(fields in declaration order), so a frame costs a few bytes of framing plus its values:
the byte counts reported per type are the protocol's real cost (thesis eqs. 4.3-4.6).
Every send encodes, also in-process, so the wire format is exercised by every test.

Fields with a default are *optional*: they come after the others, and a frame leaves out
the trailing ones that hold their defaults. A protocol grows this way without costing
its older uses a byte: a task of the thesis's world (no weight, duration or constraint)
is the frame it always was, and one that has them carries them.

A message type also says who may send it and what its fields may hold, for what comes
from outside (network mode; :func:`decode_checked`): the roles allowed to send it
(:mod:`dgdrf.runtime.roles`), and per field a check derived from its annotation: numbers
are finite and non-negative unless the field is declared ``signed`` or ``infinite``,
strings are non-empty addresses of at most 256 characters, lists have a bounded length
and checked elements. The emulation decodes without these checks: its messages come
from its own actors.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Collection, TypeVar, dataclass_transform

import msgpack

from dgdrf.errors import DecodeError

T = TypeVar("T")


class Message:
    """Base of all message types (a marker; concrete types are slotted dataclasses)."""

    __slots__ = ()
    TAG: int = -1
    #: roles allowed to send it (None: any member; only test types leave it open)
    SENDERS: frozenset[str] | None = None
    #: the part of the system whose cost it is (COST_GROUPS; ``@message(cost=...)``)
    COST_GROUP: str = "other"
    _encode: Callable[[Any], bytes]


_BY_TAG: dict[int, type[Message]] = {}
#: tag -> (fewest fields a frame has: the required ones, most: all of them)
_ARITY: dict[int, tuple[int, int]] = {}
#: tag -> function building the message from its decoded array [tag, fields...]
_DECODERS: dict[int, Callable[[list], Any]] = {}
#: tag -> [(field index in the frame, field name, check)], for frames from outside
_CHECKS: dict[int, list[tuple[int, str, Callable[[Any], str | None]]]] = {}
#: tag -> the largest frame accepted from outside, bytes
_MAX_FRAME: dict[int, int] = {}
_largest_frame = 0
#: bumped on every registration, so handler tables built earlier know they are stale
registry_version = 0

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack


#: largest string field (an address, a report kind) and largest list, by default
MAX_STRING = 256
MAX_LIST = 4096
#: largest resource vector, largest descriptor list, largest push-sum mass (bytes)
MAX_VECTOR = 64
MAX_BYTES_FIELD = 64
#: most entries of a list of records (one list per column: d-psdsf's user digests)
MAX_RECORDS = 64
#: largest frame accepted from outside unless a type says otherwise: bounds the objects
#: one frame can decode to (a frame of nested empty arrays is one object per byte)
MAX_FRAME_BYTES = 64 * 1024


def _number(signed: bool, infinite: bool) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if type(v) not in (int, float):
            return f"must be a number, got {type(v).__name__}"
        if v != v:
            return "is NaN"
        if not infinite and math.isinf(v):
            return "must be finite"
        if not signed and v < 0:
            return f"must be non-negative, got {v!r}"
        if type(v) is int and not -(1 << 63) <= v < 1 << 64:
            return "is out of the 64-bit range"
        return None

    return check


def _integer(signed: bool) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if type(v) is not int:
            return f"must be an integer, got {type(v).__name__}"
        if not (-(1 << 63) if signed else 0) <= v < 1 << 63:
            return f"must be {'a 64-bit integer' if signed else 'a non-negative 64-bit integer'}, got {v}"
        return None

    return check


def _string(v: Any) -> str | None:
    if type(v) is not str:
        return f"must be a string, got {type(v).__name__}"
    if not 0 < len(v) <= MAX_STRING:
        return f"must be a string of 1-{MAX_STRING} characters, got {len(v)}"
    return None


def _string_or_empty(v: Any) -> str | None:
    return None if v == "" and type(v) is str else _string(v)


def _boolean(v: Any) -> str | None:
    return None if type(v) is bool else f"must be true or false, got {type(v).__name__}"


def _binary(v: Any) -> str | None:
    if type(v) is not bytes:
        return f"must be binary, got {type(v).__name__}"
    return None if len(v) <= MAX_BYTES_FIELD else f"must be at most {MAX_BYTES_FIELD} bytes, got {len(v)}"


def _scalar(v: Any) -> str | None:
    if v is None or type(v) is bool:
        return None
    if type(v) is str:
        return _string(v)
    return _any_number(v)


_any_number = _number(True, True)


def _list_of(item: Callable[[Any], str | None], longest: int) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if type(v) is not list:
            return f"must be a list, got {type(v).__name__}"
        if len(v) > longest:
            return f"must have at most {longest} elements, got {len(v)}"
        for i, x in enumerate(v):
            bad = item(x)
            if bad is not None:
                return f"element {i} {bad}"
        return None

    return check


def _mapping(v: Any) -> str | None:
    """A report's fields: at most 32 string keys, values scalars or short lists of them."""
    if type(v) is not dict:
        return f"must be a map, got {type(v).__name__}"
    if len(v) > 32:
        return f"must have at most 32 keys, got {len(v)}"
    for k, x in v.items():
        bad = _string(k) or (_list_of(_scalar, MAX_VECTOR)(x) if type(x) is list else _scalar(x))
        if bad is not None:
            return f"key {str(k)[:40]!r} {bad}"
    return None


def field_check(annotation: str, signed: bool = False, infinite: bool = False, empty: bool = False) -> Callable[[Any], str | None]:
    """The check of a field from its annotation (a string: modules use postponed
    annotations); each check returns None or what is wrong. ``empty``: a string may be ""
    (its default, on the wire when a later optional field is set)."""
    a = annotation.replace(" ", "")
    if a == "str" and empty:
        return _string_or_empty
    simple: dict[str, Callable[[Any], str | None]] = {
        "int": _integer(signed),
        "float": _number(signed, infinite),
        "str": _string,
        "bool": _boolean,
        "bytes": _binary,
        "list[float]": _list_of(_number(signed, infinite), MAX_VECTOR),
        "list[int]": _list_of(_integer(signed), MAX_VECTOR),
        "list[str]": _list_of(_string, MAX_LIST),
        "list[bytes]": _list_of(_binary, MAX_VECTOR),
        "list[list]": _list_of(_list_of(_scalar, 4), 1024),  # overlay descriptors
        "dict[str,Any]": _mapping,
        # columns of records, one element a record (policies/user_directory.py digests)
        "list[list[float]]": _list_of(_list_of(_number(signed, infinite), MAX_VECTOR), MAX_RECORDS),
        "list[list[str]]": _list_of(_list_of(_string, MAX_LIST), MAX_RECORDS),
        "list[dict[str,Any]]": _list_of(_mapping, MAX_RECORDS),
    }
    if a not in simple:
        raise TypeError(f"no wire check for a field annotated {annotation!r}")
    return simple[a]


#: the parts of the system a message's cost is counted under (``@message(cost=...)``):
#: task allocation; DDRF's and probes' neighbour state (eqs. 4.3-4.4); the gradient
#: (eqs. 4.5-4.6); peer sampling; push-sum aggregation; and anything else
COST_GROUPS = ("allocation", "neighbour_state", "gradient", "peer_sampling", "aggregation", "other")


@dataclass_transform()
def message(
    tag: int,
    senders: Collection[str] | None = None,
    signed: Collection[str] = (),
    infinite: Collection[str] = (),
    max_frame: int = MAX_FRAME_BYTES,
    cost: str = "other",
) -> Callable[[type[T]], type[T]]:
    """Class decorator: make ``cls`` a slotted dataclass message with wire ``tag``.

    ``senders``: the roles allowed to send it (checked on receipt in network mode);
    ``signed`` / ``infinite``: fields whose numbers may be negative / infinite;
    ``max_frame``: the largest frame of this type accepted from outside, bytes;
    ``cost``: the part of the system whose cost it is (:data:`COST_GROUPS`), by which a
    run's messages per tick are summed next to the thesis's cost model (eqs. 4.3-4.6).
    """
    if cost not in COST_GROUPS:
        raise ValueError(f"message cost group must be one of {', '.join(COST_GROUPS)}, got {cost!r}")

    def register(cls: type[T]) -> type[T]:
        if tag in _BY_TAG and _BY_TAG[tag].__qualname__ != cls.__qualname__:
            raise ValueError(f"message tag {tag} used by both {_BY_TAG[tag].__name__} and {cls.__name__}")
        dc: Any = dataclasses.dataclass(slots=True)(cls)
        fields_ = dataclasses.fields(dc)
        names = [f.name for f in fields_]
        required = sum(1 for f in fields_ if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
        if any(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in fields_[required:]):
            raise TypeError(f"{cls.__name__}: fields with defaults (optional on the wire) must come after the others")
        dc.TAG = tag
        # Per-type encoder and decoder, generated like dataclass __init__ is: one tuple
        # and one call per message instead of generic attribute fetching and splatting.
        ns: dict[str, Any] = {"_pk": _packb, "_cls": dc}
        fields_src = "".join(f", m.{n}" for n in names)
        if required == len(names):
            args_src = ", ".join(f"a[{i + 1}]" for i in range(len(names)))
            exec(f"def encode(m):\n    return _pk(({tag},{fields_src[1:]}))\n", ns)
            exec(f"def decode(a):\n    return _cls({args_src})\n", ns)
        else:
            # the trailing optional fields that hold their defaults stay off the wire
            ns["_defaults"] = tuple(f.default if f.default is not dataclasses.MISSING else f.default_factory() for f in fields_[required:])  # type: ignore[operator]
            exec(
                f"def encode(m):\n    t = ({tag},{fields_src[1:]})\n    n = {len(names) + 1}\n"
                f"    while n > {required + 1} and t[n - 1] == _defaults[n - {required + 2}]:\n        n -= 1\n"
                f"    return _pk(t if n == {len(names) + 1} else t[:n])\n",
                ns,
            )
            exec("def decode(a):\n    return _cls(*a[1:])\n", ns)
        dc._encode = staticmethod(ns["encode"])
        _DECODERS[tag] = ns["decode"]
        _BY_TAG[tag] = dc
        global registry_version
        registry_version += 1
        _ARITY[tag] = (required, len(names))
        dc.SENDERS = None if senders is None else frozenset(senders)
        dc.COST_GROUP = cost
        known = set(names)
        for name in (*signed, *infinite):
            if name not in known:
                raise ValueError(f"{cls.__name__} has no field {name!r}")
        # a string field whose default is "" takes "" (written when a later optional field is set)
        _CHECKS[tag] = [(i + 1, f.name, field_check(str(f.type), f.name in signed, f.name in infinite, empty=f.default == "")) for i, f in enumerate(dataclasses.fields(dc))]
        _MAX_FRAME[tag] = max_frame
        global _largest_frame
        _largest_frame = max(_MAX_FRAME.values())
        return dc

    return register


def encode(msg: Message) -> bytes:
    """Encode a registered message to its msgpack frame."""
    return msg._encode(msg)


#: msgpack's limits for frames from outside: what one frame can build while decoding
_OUTSIDE_LIMITS = dict(strict_map_key=True, max_str_len=1 << 16, max_bin_len=1 << 16, max_array_len=1 << 16, max_map_len=64, max_ext_len=0)


def _unpack(data: bytes, **limits: Any) -> tuple[int, type, list]:
    """The frame's (tag, type, array) once its shape and arity are right."""
    try:
        arr = msgpack.unpackb(data, raw=False, **limits)
    except Exception as exc:  # msgpack raises several unrelated types
        raise DecodeError(f"not a msgpack frame ({len(data)} bytes): {type(exc).__name__}: {exc}") from None
    if not isinstance(arr, list) or not arr or type(arr[0]) is not int:
        raise DecodeError(f"frame must be an array [tag, fields...], got {type(arr).__name__}")
    tag = arr[0]
    cls = _BY_TAG.get(tag)
    if cls is None:
        raise DecodeError(f"unknown message tag {tag}")
    fewest, most = _ARITY[tag]
    if not fewest <= len(arr) - 1 <= most:
        expected = str(most) if fewest == most else f"{fewest} to {most}"
        raise DecodeError(f"{cls.__name__} frame has {len(arr) - 1} fields, expected {expected}")
    return tag, cls, arr


def _build(tag: int, cls: type, arr: list) -> Message:
    try:
        return _DECODERS[tag](arr)
    except Exception as exc:  # a field of the wrong kind rejected by a __post_init__
        raise DecodeError(f"bad {cls.__name__} frame: {exc}") from None


def decode(data: bytes) -> Message:
    """Decode a frame; a bad frame raises :class:`DecodeError` saying what is wrong."""
    return _build(*_unpack(data, strict_map_key=False))


def decode_checked(data: bytes) -> Message:
    """Decode a frame that came from outside: as :func:`decode`, and every field checked
    against its declaration (type, finite, sign, length) before any handler sees it; the
    frame's size is bounded per type, and msgpack's own limits bound what is built while
    decoding. Anything wrong raises :class:`DecodeError` naming the field."""
    if len(data) > _largest_frame:
        raise DecodeError(f"a message frame of {len(data)} bytes, over every type's limit")
    tag, cls, arr = _unpack(data, **_OUTSIDE_LIMITS)
    if len(data) > _MAX_FRAME[tag]:
        raise DecodeError(f"{cls.__name__} frame of {len(data)} bytes, over its {_MAX_FRAME[tag]}-byte limit")
    for i, name, check in _CHECKS[tag]:
        if i >= len(arr):
            break  # an optional field left out (its default holds)
        bad = check(arr[i])
        if bad is not None:
            raise DecodeError(f"{cls.__name__}.{name} {bad}")
    return _build(tag, cls, arr)


def message_types() -> dict[int, type[Message]]:
    """All registered message types by tag."""
    return dict(_BY_TAG)
