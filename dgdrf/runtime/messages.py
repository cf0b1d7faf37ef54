"""Typed messages and their msgpack wire format.

A message type is a slotted dataclass registered under a small integer tag with
:func:`message`. On the wire a message is the msgpack array ``[tag, field1, field2, ...]``
(fields in declaration order), so a frame costs a few bytes of framing plus its values:
the byte counts reported per type are the protocol's real cost (thesis eqs. 4.3-4.6).
Every send encodes, also in-process, so the wire format is exercised by every test.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, TypeVar

import msgpack

from dgdrf.errors import DecodeError

T = TypeVar("T")


class Message:
    """Base of all message types (a marker; concrete types are slotted dataclasses)."""

    __slots__ = ()
    TAG: int = -1
    _encode: Callable[[Any], bytes]


_BY_TAG: dict[int, type] = {}
_ARITY: dict[int, int] = {}
#: tag -> function building the message from its decoded array [tag, fields...]
_DECODERS: dict[int, Callable[[list], Any]] = {}
#: bumped on every registration, so handler tables built earlier know they are stale
registry_version = 0

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack


def message(tag: int) -> Callable[[type[T]], type[T]]:
    """Class decorator: make ``cls`` a slotted dataclass message with wire ``tag``."""

    def register(cls: type[T]) -> type[T]:
        if tag in _BY_TAG and _BY_TAG[tag].__qualname__ != cls.__qualname__:
            raise ValueError(f"message tag {tag} used by both {_BY_TAG[tag].__name__} and {cls.__name__}")
        dc = dataclasses.dataclass(slots=True)(cls)
        names = [f.name for f in dataclasses.fields(dc)]
        dc.TAG = tag
        # Per-type encoder and decoder, generated like dataclass __init__ is: one tuple
        # and one call per message instead of generic attribute fetching and splatting.
        ns: dict[str, Any] = {"_pk": _packb, "_cls": dc}
        fields_src = "".join(f", m.{n}" for n in names)
        args_src = ", ".join(f"a[{i + 1}]" for i in range(len(names)))
        exec(f"def encode(m):\n    return _pk(({tag},{fields_src[1:]}))\n", ns)
        exec(f"def decode(a):\n    return _cls({args_src})\n", ns)
        dc._encode = staticmethod(ns["encode"])
        _DECODERS[tag] = ns["decode"]
        _BY_TAG[tag] = dc
        global registry_version
        registry_version += 1
        _ARITY[tag] = len(names)
        return dc

    return register


def encode(msg: Message) -> bytes:
    """Encode a registered message to its msgpack frame."""
    return msg._encode(msg)


def decode(data: bytes) -> Message:
    """Decode a frame; a bad frame raises :class:`DecodeError` saying what is wrong."""
    try:
        arr = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several unrelated types
        raise DecodeError(f"not a msgpack frame ({len(data)} bytes): {exc}") from None
    if not isinstance(arr, list) or not arr or not isinstance(arr[0], int):
        raise DecodeError(f"frame must be an array [tag, fields...], got {type(arr).__name__}")
    tag = arr[0]
    cls = _BY_TAG.get(tag)
    if cls is None:
        raise DecodeError(f"unknown message tag {tag}")
    if len(arr) - 1 != _ARITY[tag]:
        raise DecodeError(f"{cls.__name__} frame has {len(arr) - 1} fields, expected {_ARITY[tag]}")
    try:
        return _DECODERS[tag](arr)
    except Exception as exc:  # a field of the wrong kind rejected by a __post_init__
        raise DecodeError(f"bad {cls.__name__} frame: {exc}") from None


def message_types() -> dict[int, type]:
    """All registered message types by tag."""
    return dict(_BY_TAG)
