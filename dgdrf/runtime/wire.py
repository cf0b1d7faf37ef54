"""The network frame: a batch of actor messages between two processes.

One WebSocket binary message carries one batch, the msgpack array
``[VERSION, token, sender, [[src, dst, frame], ...]]``: ``token`` is the cluster's shared
secret (or nil), ``sender`` the sending process's id, and each ``frame`` one message's
own msgpack encoding (:mod:`dgdrf.runtime.messages`), so a message costs the same bytes
as in-process plus its two addresses. Batching amortises the WebSocket and syscall cost
of small frames (a gradient exchange is ~100 bytes).

:func:`decode_batch` checks everything that arrives from outside before any of it is
used and raises :class:`~dgdrf.errors.DecodeError` naming the problem, so a node can
count and log a bad frame and keep serving.
"""

from __future__ import annotations

import hmac
from typing import Any

import msgpack

from dgdrf.errors import DecodeError

VERSION = 1
#: default largest accepted batch, bytes (aiohttp closes a connection that sends more)
MAX_BATCH_BYTES = 1 << 20
#: largest number of messages in one batch
MAX_BATCH_ITEMS = 10_000
_MAX_ADDRESS = 256

_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack


def encode_batch(token: str | None, sender: str, items: list[tuple[str, str, bytes]]) -> bytes:
    """The bytes of one batch of (src actor, dst actor, message frame)."""
    return _packb([VERSION, token, sender, items])


class BadToken(DecodeError):
    """A batch without the cluster's token (or with another one)."""


def decode_batch(data: bytes, token: str | None, max_bytes: int = MAX_BATCH_BYTES) -> tuple[str, list[tuple[str, str, bytes]]]:
    """(sender, items) of a batch; anything malformed raises :class:`DecodeError`."""
    if not isinstance(data, (bytes, bytearray)):
        raise DecodeError(f"batch must be binary, got {type(data).__name__}")
    if len(data) > max_bytes:
        raise DecodeError(f"batch of {len(data)} bytes over the {max_bytes}-byte limit")
    try:
        arr: Any = msgpack.unpackb(data, raw=False, strict_map_key=False, max_array_len=MAX_BATCH_ITEMS + 4, max_map_len=16)
    except Exception as exc:  # msgpack raises several unrelated types on bad input
        raise DecodeError(f"not a msgpack batch ({len(data)} bytes): {type(exc).__name__}: {exc}") from None
    if not isinstance(arr, list) or len(arr) != 4:
        raise DecodeError(f"batch must be [version, token, sender, items], got {type(arr).__name__} of length {len(arr) if isinstance(arr, list) else '-'}")
    version, their_token, sender, items = arr
    if version != VERSION:
        raise DecodeError(f"batch version {version!r}, expected {VERSION}")
    if token is not None and not (isinstance(their_token, str) and hmac.compare_digest(their_token.encode(), token.encode())):
        raise BadToken("batch without the cluster token" if their_token is None else "batch with a wrong cluster token")
    if not isinstance(sender, str) or not 0 < len(sender) <= _MAX_ADDRESS:
        raise DecodeError(f"batch sender must be a non-empty string, got {sender!r:.60}")
    if not isinstance(items, list):
        raise DecodeError(f"batch items must be a list, got {type(items).__name__}")
    out: list[tuple[str, str, bytes]] = []
    for i, item in enumerate(items):
        if not (isinstance(item, list) and len(item) == 3):
            raise DecodeError(f"batch item {i} must be [src, dst, frame]")
        src, dst, frame = item
        if not (isinstance(src, str) and isinstance(dst, str) and 0 < len(src) <= _MAX_ADDRESS and 0 < len(dst) <= _MAX_ADDRESS):
            raise DecodeError(f"batch item {i}: addresses must be non-empty strings")
        if not isinstance(frame, bytes):
            raise DecodeError(f"batch item {i}: the message frame must be binary")
        out.append((src, dst, frame))
    return sender, out
