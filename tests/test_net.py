"""The network transport and its frame format: delivery, batching, and bad input."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import struct

import aiohttp
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgdrf.errors import DecodeError
from dgdrf.runtime.actor import Actor
from dgdrf.runtime.clock import AsyncioClock
from dgdrf.runtime.messages import message
from dgdrf.runtime.net import NetTransport
from dgdrf.runtime.wire import BadToken, decode_batch, encode_batch


@message(251)
class Ping:
    """A test message: a number."""

    n: int


class Sink(Actor):
    def __init__(self, address: str) -> None:
        super().__init__(address)
        self.got: list[tuple[str, int]] = []

    def on_Ping(self, src: str, msg: Ping) -> None:
        self.got.append((src, msg.n))


# -- the frame format ---------------------------------------------------------------------
def test_batch_round_trip_and_token():
    items = [("a", "b", Ping(1)._encode(Ping(1))), ("a", "c", b"\x92\xcc\xfb\x02")]
    data = encode_batch("secret", "http://x:1", items)
    assert decode_batch(data, "secret") == ("http://x:1", items)
    assert decode_batch(data, None)[1] == items  # no token required: any accepted
    with pytest.raises(BadToken):
        decode_batch(data, "other")
    with pytest.raises(BadToken):
        decode_batch(encode_batch(None, "http://x:1", items), "secret")
    with pytest.raises(DecodeError, match="over the 10-byte limit"):
        decode_batch(data, None, max_bytes=10)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_only_ever_raise_decode_error(data):
    try:
        decode_batch(data, None)
    except DecodeError:
        pass


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=5) | st.binary(max_size=5),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=3), c, max_size=3),
        max_leaves=12,
    ),
    st.booleans(),
)
def test_well_formed_msgpack_of_any_shape_only_ever_raises_decode_error(obj, as_items):
    try:
        decode_batch(msgpack.packb([1, None, "p", obj] if as_items else obj), None)
    except DecodeError:
        pass


# -- two transports on loopback -----------------------------------------------------------
async def _pair(batching: bool = True, token: str | None = None, max_batch_bytes: int = 1 << 20):
    clock = AsyncioClock()
    ta = NetTransport("", clock, token=token, batching=batching, max_batch_bytes=max_batch_bytes)
    tb = NetTransport("", clock, token=token, batching=batching, max_batch_bytes=max_batch_bytes)
    for t in (ta, tb):
        await t.start("127.0.0.1", 0)
        t.url = f"http://127.0.0.1:{t.bound_port}"
    a, b = Sink("a"), Sink("b")
    ta.register(a)
    tb.register(b)
    for t in (ta, tb):
        t.set_directory({"a": ta.url, "b": tb.url})
    return ta, tb, a, b


async def _until(cond, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("batching", [True, False])
async def test_messages_arrive_in_order_with_and_without_batching(batching):
    ta, tb, a, b = await _pair(batching)
    try:
        for i in range(2000):
            a.send("b", Ping(i))
        b.send("a", Ping(-1))
        await _until(lambda: len(b.got) == 2000 and a.got)
        assert [n for _, n in b.got] == list(range(2000))
        assert {s for s, _ in b.got} == {"a"} and a.got == [("b", -1)]
        assert ta.stats.count[Ping.TAG] == 2000 and ta.rejected == {} and tb.rejected == {}
    finally:
        await ta.close()
        await tb.close()


def _raw_ws_frame(payload: bytes, declared: int | None = None) -> bytes:
    """A masked binary WebSocket frame (client to server), possibly lying about its length."""
    n = len(payload) if declared is None else declared
    head = bytes([0x82])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_a_node_survives_garbage_and_keeps_serving():
    ta, tb, a, b = await _pair(token="tok", max_batch_bytes=64 * 1024)
    rng = random.Random(7)
    ping = Ping(5)._encode(Ping(5))
    try:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(tb.url + "/ws", max_msg_size=0) as ws:
                for _ in range(200):
                    await ws.send_bytes(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))))
                await ws.send_str("hello")
                await ws.send_bytes(encode_batch("tok", "x", [("mallory", "b", ping)]))  # not a member
                await ws.send_bytes(encode_batch("tok", "x", [("a", "nobody", ping)]))  # not hosted there
                await ws.send_bytes(encode_batch("tok", "x", [("a", "b", msgpack.packb([199, 1]))]))  # unknown type
                await ws.send_bytes(encode_batch("tok", "x", [("a", "b", msgpack.packb([Ping.TAG, 1, 2]))]))  # wrong arity
                await ws.send_bytes(encode_batch("wrong", "x", [("a", "b", ping)]))
                await ws.send_bytes(encode_batch(None, "x", [("a", "b", ping)]))
                await ws.send_bytes(encode_batch("tok", "x", [("a", "b", ping)]))  # the one good frame
            async with session.ws_connect(tb.url + "/ws", max_msg_size=0) as ws:
                await ws.send_bytes(b"\x00" * (64 * 1024 + 1))  # over the limit: the node drops this connection
                await ws.receive()
        # a connection that dies in the middle of a frame
        host, port = "127.0.0.1", tb.bound_port
        reader, writer = await asyncio.open_connection(host, port)
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        writer.write(f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        writer.write(_raw_ws_frame(b"\x94\x01\xa3tok", declared=1000)[:40])
        await writer.drain()
        writer.transport.abort()
        await _until(lambda: tb.connections_lost >= 1 and tb.rejected["too_large"] >= 1)  # lost, not an attack: a crash looks the same
        # still serving, and nothing bad was delivered
        a.send("b", Ping(42))
        await _until(lambda: (("a", 42) in b.got))
        assert b.got == [("a", 5), ("a", 42)]
        r = tb.rejected
        assert r["malformed"] + r["bad_token"] >= 200 and r["text_frame"] == 1 and r["bad_token"] >= 2
        assert r["unknown_sender"] == 1 and r["unknown_destination"] == 1 and r["bad_message"] == 2
        assert tb.handler_errors == 0
    finally:
        await ta.close()
        await tb.close()


async def test_messages_to_a_dead_peer_are_counted_not_fatal(monkeypatch):
    import dgdrf.runtime.net as net

    monkeypatch.setattr(net, "CONNECT_PATIENCE_S", 0.5)
    ta, tb, a, b = await _pair()
    down: list[str] = []
    ta.on_peer_down = down.append
    await tb.close()
    try:
        for i in range(10):
            a.send("b", Ping(i))
        await _until(lambda: down == [tb.url])
        assert ta.stats.undeliverable == 10
        a.send("b", Ping(99))  # a peer known down: dropped at once
        assert ta.stats.undeliverable == 11
    finally:
        await ta.close()


def test_free_port_is_bindable():
    from dgdrf.cluster.launcher import free_port, split_counts

    with socket.socket() as s:
        s.bind(("127.0.0.1", free_port()))
    assert split_counts(8, 3) == [3, 3, 2] and split_counts(2, 5) == [1, 1]
