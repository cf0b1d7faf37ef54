"""The network transport: actors in different processes over aiohttp WebSockets.

Same interface as :class:`~dgdrf.runtime.transport.LocalTransport` (``register``,
``send``, ``stats``), so actors and policies run unchanged; only the clock
(:class:`~dgdrf.runtime.clock.AsyncioClock`) and this transport differ.

Each process serves ``GET /ws`` and keeps one persistent outgoing WebSocket per peer
process, created on first use and re-dialled after a drop. Messages to a peer queue in
its outbox; with batching, everything queued while the loop was busy leaves as one batch
(:mod:`dgdrf.runtime.wire`), otherwise one batch per message. Per peer the order of
messages is kept.

Everything that arrives is checked before it is used: batch size (aiohttp refuses
frames over the limit and closes that connection), msgpack well-formedness, the cluster
token when one is set, that the sending actor is a cluster member, that the destination
lives here, and that the message frame decodes to a known type with the right arity. A
rejected batch or message is counted under its reason and logged (the first few times
per reason, then every 1,000th), and the node keeps serving. An exception in a handler
is logged and counted too: one bad message must not take the node down.

Once the cluster's membership is known (:meth:`NetTransport.set_directory` with roles
and identities), who sent a message is checked too. With TLS (``tls``, mutual: see
:mod:`dgdrf.cluster.keys`) a connection's certificate names the process at the other
end; a batch must come from the process whose certificate it is (``impersonation``),
each message from an actor that process hosts (``impersonation``), of a type that
actor's role may send (``not_allowed``, :mod:`dgdrf.runtime.roles`), with every field
within its declaration (``bad_message``, :func:`~dgdrf.runtime.messages.decode_checked`).
The HTTP endpoints ask the same of their callers (:meth:`NetTransport.authorise`).
Resources are bounded: incoming connections (``too_many_connections``) and each peer's
outbox (messages beyond it are dropped and counted, ``outbox_full``).
"""

from __future__ import annotations

import asyncio
import hmac
import ssl
import time
from collections import Counter
from typing import Any, Callable

import aiohttp
import numpy as np
from aiohttp import web

from dgdrf.errors import DecodeError
from dgdrf.log import get_logger
from dgdrf.runtime.actor import Actor, Context, FrameSink, Reporter
from dgdrf.runtime.clock import AsyncioClock
from dgdrf.runtime.addresses import BOOK
from dgdrf.runtime.messages import Message, decode, decode_checked, message_types
from dgdrf.runtime.reporting import Report
from dgdrf.runtime.roles import ADMIN, BOOTSTRAP, COLLECTOR, Identity, identity_of
from dgdrf.runtime.stats import MessageStats
from dgdrf.runtime.wire import MAX_BATCH_BYTES, BadToken, decode_batch, encode_batch

log = get_logger("dgdrf.net")

#: how long messages wait for a peer that cannot be reached before they are dropped
CONNECT_PATIENCE_S = 5.0
#: how long a peer found unreachable is left alone before it is dialled again
RETRY_DOWN_PEER_S = 5.0
#: most incoming WebSocket connections served at once (one per peer process is normal)
MAX_CONNECTIONS = 1024
#: most messages waiting for one peer; more are dropped and counted (the protocols send
#: again what matters), so a peer that stops reading cannot fill this node's memory
MAX_OUTBOX = 200_000
#: who may read a node's counters and who may stop it (the HTTP endpoints)
STATS_ROLES = frozenset({COLLECTOR, BOOTSTRAP, ADMIN})
SHUTDOWN_ROLES = frozenset({COLLECTOR, BOOTSTRAP, ADMIN})
TOKEN_HEADER = "X-Dgdrf-Token"
_LOG_FIRST = 5
REPORT_TAG = Report.TAG


class _Peer:
    """The outgoing side towards one process: a WebSocket and an outbox."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.outbox: list[tuple[str, str, bytes]] = []
        self.ready = asyncio.Event()
        self.task: asyncio.Task | None = None
        self.down = False
        self.retry_at = 0.0  # while down, messages are dropped until then, then it is dialled again


class NetTransport(FrameSink):
    """Delivers msgpack frames between actors over WebSockets (wall-clock time)."""

    def __init__(
        self,
        url: str,
        clock: AsyncioClock,
        token: str | None = None,
        batching: bool = True,
        max_batch_bytes: int = MAX_BATCH_BYTES,
        reporter: Reporter | None = None,
        seed: int = 0,
        tls: tuple[ssl.SSLContext, ssl.SSLContext] | None = None,
        max_connections: int = MAX_CONNECTIONS,
        max_outbox: int = MAX_OUTBOX,
    ) -> None:
        self.url = url  # how peers reach this process (also its id on the wire)
        self.clock = clock
        self.token = token
        self.tls = tls  # (server context, client context): mutual TLS, or None
        self.scheme = "https" if tls is not None else "http"
        self.max_connections = max_connections
        self.max_outbox = max_outbox
        self.strict = False  # membership known: senders, roles and fields checked
        self.roles: dict[str, str] = {}  # actor address -> its role
        self.identities: dict[str, str] = {}  # process url -> the name in its certificate
        self.dropped: Counter[str] = Counter()
        self.batching = batching
        self.max_batch_bytes = max_batch_bytes
        self.reporter = reporter
        self.stats = MessageStats()
        self.report_stats = MessageStats()
        self.actors: dict[str, Actor] = {}
        self.directory: dict[str, str] = {}  # actor address -> url of its process
        self.rejected: Counter[str] = Counter()
        self.handler_errors = 0
        self.delivered = 0
        self.peers: dict[str, _Peer] = {}
        self.on_peer_down: Callable[[str], None] | None = None
        self._seed = seed
        self._session: aiohttp.ClientSession | None = None
        self.app = web.Application()
        self.app.router.add_get("/ws", self._serve_ws)
        self.app.router.add_get("/health", self._health)
        self.app.router.add_get("/stats", self._stats)
        self._incoming: set[web.WebSocketResponse] = set()
        self._connections = 0
        self.connections_lost = 0  # incoming connections that ended without a close

    # -- membership ------------------------------------------------------------------
    def register(self, actor: Actor, rng: np.random.Generator | None = None) -> Actor:
        if actor.address in self.actors:
            raise ValueError(f"two actors with address {actor.address!r}")
        self.actors[actor.address] = actor
        self.directory[actor.address] = self.url
        seed = [self._seed, *actor.address.encode()]
        actor.attach(Context(self.clock, self, self.reporter, rng if rng is not None else np.random.default_rng(seed)))
        return actor

    def set_directory(self, directory: dict[str, str], roles: dict[str, str] | None = None, identities: dict[str, str] | None = None) -> None:
        """Where every actor of the cluster lives (from the bootstrap's membership); with
        ``roles`` (actor -> role) and ``identities`` (process url -> certificate name),
        every message from then on is checked against them."""
        self.directory.update(directory)
        for a in self.actors:
            self.directory[a] = self.url
        if roles is not None:
            self.roles.update(roles)
            self.identities.update(identities or {})
            self.strict = True

    # -- who is calling ------------------------------------------------------------------
    @staticmethod
    def peer_identity(request: web.BaseRequest) -> Identity | None:
        """The verified certificate's identity of an HTTP or WebSocket caller (TLS only)."""
        tls = request.transport.get_extra_info("ssl_object") if request.transport is not None else None
        return identity_of(tls.getpeercert()) if tls is not None else None

    def authorise(self, request: web.BaseRequest, roles: frozenset[str] | None = None) -> web.Response | None:
        """None if the caller may use this endpoint, else the 403 to answer (counted as a
        ``forbidden`` request). With TLS the caller's certificate must carry one of
        ``roles`` (None: any member or admin); with only a token, it must send the token;
        with neither (loopback or ``--insecure``) anyone may."""
        if self.tls is not None:
            who = self.peer_identity(request)
            if who is not None and (roles is None or who.role in roles):
                return None
            why = f"{who.role} {who.name!r} may not use {request.path}" if who is not None else "no client certificate"
        elif self.token is not None:
            if hmac.compare_digest(request.headers.get(TOKEN_HEADER, "").encode(), self.token.encode()):
                return None
            why = "missing or wrong cluster token"
        else:
            return None
        self.reject("forbidden", f"{request.remote}: {request.method} {request.path}: {why}")
        return web.json_response({"error": why}, status=403)

    # -- sending ---------------------------------------------------------------------
    def send(self, src: str, dst: str, msg: Message) -> None:
        self._send(src, dst, msg.TAG, msg._encode(msg))

    def send_frame(self, src: int, dst: int, tag: int, data: bytes) -> None:
        """A frame a role encoded itself (the typed path), from and to node ids."""
        self._send(BOOK.names[src], BOOK.names[dst], tag, data)

    def _send(self, src: str, dst: str, tag: int, data: bytes) -> None:
        stats = self.report_stats if tag == REPORT_TAG else self.stats  # instrument apart from protocols
        stats.count[tag] += 1
        stats.nbytes[tag] += len(data)
        local = self.actors.get(dst)
        if local is not None:
            asyncio.get_running_loop().call_soon(self._dispatch, local, src, data)
            return
        url = self.directory.get(dst)
        if url is None:
            self.stats.undeliverable += 1
            kind = message_types().get(tag)
            self.reject("unknown_destination", f"no cluster member {dst!r} to send {kind.__name__ if kind else tag} to")
            return
        peer = self.peers.get(url)
        if peer is None:
            peer = self.peers[url] = _Peer(url)
        if peer.down:
            if time.monotonic() < peer.retry_at:
                self.stats.undeliverable += 1
                return
            peer.down, peer.task = False, None  # try again: a partition may have healed
        if len(peer.outbox) >= self.max_outbox:
            self.stats.undeliverable += 1
            self.dropped["outbox_full"] += 1
            if self.dropped["outbox_full"] in (1, 1000) or self.dropped["outbox_full"] % 100_000 == 0:
                log.warning("outbox full, message dropped", peer=url, outbox=len(peer.outbox), dropped=self.dropped["outbox_full"])
            return
        peer.outbox.append((src, dst, data))
        peer.ready.set()
        if peer.task is None:
            peer.task = asyncio.get_running_loop().create_task(self._pump(peer))

    async def _pump(self, peer: _Peer) -> None:
        """Keep a WebSocket to ``peer`` and drain its outbox into it."""
        backoff = 0.02
        waiting_since: float | None = None
        while True:
            try:
                assert self._session is not None
                async with self._session.ws_connect(peer.url + "/ws", max_msg_size=self.max_batch_bytes, heartbeat=None) as ws:
                    self._check_peer_identity(peer.url, ws)
                    backoff, waiting_since = 0.02, None
                    while not ws.closed:
                        await peer.ready.wait()
                        peer.ready.clear()
                        items, peer.outbox = peer.outbox, []
                        chunks = self._chunks(items) if self.batching else [[item] for item in items]
                        for i, chunk in enumerate(chunks):
                            try:
                                await ws.send_bytes(encode_batch(self.token, self.url, chunk))
                            except Exception:
                                peer.outbox[:0] = [it for c in chunks[i:] for it in c]  # retry them
                                raise
                    raise ConnectionResetError("closed by peer")
            except asyncio.CancelledError:
                raise
            except (aiohttp.ClientError, OSError, ConnectionResetError, asyncio.TimeoutError) as exc:
                now = time.monotonic()
                waiting_since = waiting_since or now
                if now - waiting_since > CONNECT_PATIENCE_S:
                    dropped = len(peer.outbox)
                    self.stats.undeliverable += dropped
                    peer.outbox.clear()
                    peer.retry_at = now + RETRY_DOWN_PEER_S
                    if not peer.down:
                        peer.down = True
                        log.warning("peer unreachable", peer=peer.url, error=str(exc), dropped=dropped)
                        if self.on_peer_down is not None:
                            self.on_peer_down(peer.url)
                    return
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 0.5)

    def _check_peer_identity(self, url: str, ws: aiohttp.ClientWebSocketResponse) -> None:
        """The process we dialled must hold the certificate the directory names for it
        (TLS already proved the certificate is the cluster CA's)."""
        expected = self.identities.get(url)
        if self.tls is None or expected is None:
            return
        tls = ws.get_extra_info("ssl_object")
        who = identity_of(tls.getpeercert()) if tls is not None else None
        if who is None or who.name != expected:
            self.reject("wrong_peer_identity", f"{url} answered with {who.name if who else 'no'} certificate, the directory says {expected!r}")
            raise ConnectionResetError(f"{url} is not {expected}")

    def _chunks(self, items: list[tuple[str, str, bytes]]) -> list[list[tuple[str, str, bytes]]]:
        """Split a batch so no chunk goes over the size limit the peer enforces."""
        budget = self.max_batch_bytes - 1024
        chunks: list[list[tuple[str, str, bytes]]] = []
        cur: list[tuple[str, str, bytes]] = []
        size = 0
        for item in items:
            n = len(item[0]) + len(item[1]) + len(item[2]) + 16
            if cur and (size + n > budget or len(cur) >= 5000):
                chunks.append(cur)
                cur, size = [], 0
            cur.append(item)
            size += n
        if cur:
            chunks.append(cur)
        return chunks

    # -- receiving -------------------------------------------------------------------
    async def _serve_ws(self, request: web.Request) -> web.StreamResponse:
        if self._connections >= self.max_connections:
            self.reject("too_many_connections", f"{request.remote}: {self._connections} connections open")
            return web.json_response({"error": "too many connections"}, status=503)
        identity = self.peer_identity(request)
        if self.tls is not None and identity is None:
            self.reject("forbidden", f"{request.remote}: a connection without a dgdrf certificate")
            return web.json_response({"error": "no client certificate"}, status=403)
        self._connections += 1
        try:
            return await self._serve_connection(request, identity)
        finally:
            self._connections -= 1

    async def _serve_connection(self, request: web.Request, identity: Identity | None) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=self.max_batch_bytes, heartbeat=None)
        await ws.prepare(request)
        self._incoming.add(ws)
        peer = request.remote or "?"
        if identity is not None:
            peer = f"{identity.name}@{peer}"
        counted = False
        try:
            async for frame in ws:
                if frame.type == aiohttp.WSMsgType.BINARY:
                    self._receive_batch(frame.data, peer, identity)
                elif frame.type == aiohttp.WSMsgType.TEXT:
                    self.reject("text_frame", f"text frame from {peer}")
                elif frame.type == aiohttp.WSMsgType.ERROR:
                    exc = ws.exception()
                    too_large = "exceeds limit" in str(exc) or getattr(exc, "code", None) == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
                    self.reject("too_large" if too_large else "connection_error", f"{peer}: {exc}")
                    counted = True
        except Exception as exc:  # a protocol violation the parser raised
            self.reject("connection_error", f"{peer}: {type(exc).__name__}: {exc}")
            counted = True
        finally:
            self._incoming.discard(ws)
        if not counted and ws.close_code not in (aiohttp.WSCloseCode.OK, aiohttp.WSCloseCode.GOING_AWAY):
            # a peer that crashed or was cut off, not an attack: counted apart (a frame cut
            # mid-way is lost with it; the protocols send again what matters)
            self.connections_lost += 1
            log.info("connection lost", peer=peer, code=ws.close_code, lost=self.connections_lost)
        return ws

    def _receive_batch(self, data: bytes, peer: str, identity: Identity | None = None) -> None:
        try:
            sender, items = decode_batch(data, self.token, self.max_batch_bytes)
        except BadToken as exc:
            self.reject("bad_token", f"{peer}: {exc}")
            return
        except DecodeError as exc:
            self.reject("malformed", f"{peer}: {exc}")
            return
        strict = self.strict
        if strict:
            holder = self.identities.get(sender)
            if holder is None:
                self.reject("unknown_sender", f"{peer}: a batch from {sender!r}, not a cluster process")
                return
            if self.tls is not None and (identity is None or identity.name != holder):
                self.reject("impersonation", f"{peer}: a batch as process {sender} (whose certificate is {holder!r})")
                return
        directory, actors = self.directory, self.actors
        for src, dst, frame in items:
            home = directory.get(src)
            if home is None:
                self.reject("unknown_sender", f"{peer}: message from {src!r}, not a cluster member")
                continue
            if strict and home != sender:
                self.reject("impersonation", f"{peer}: process {sender} sent a message as {src!r}, which lives at {home}")
                continue
            actor = actors.get(dst)
            if actor is None:
                self.reject("unknown_destination", f"{peer}: message for {dst!r}, not hosted here")
                continue
            self._dispatch(actor, src, frame, strict)

    def _dispatch(self, actor: Actor, src: str, frame: bytes, checked: bool = False) -> None:
        """Decode and hand ``frame`` to ``actor``; ``checked``: it came from another
        process once the membership is known, so its fields and its sender's role are
        checked first."""
        try:
            msg = decode_checked(frame) if checked else decode(frame)
        except DecodeError as exc:
            self.reject("bad_message", f"from {src}: {exc}")
            return
        if checked:
            allowed = type(msg).SENDERS
            if allowed is not None and self.roles.get(src) not in allowed:
                self.reject("not_allowed", f"{src} ({self.roles.get(src)}) may not send {type(msg).__name__} (only {', '.join(sorted(allowed))})")
                return
        self.delivered += 1
        try:
            actor.receive(src, msg)
        except Exception as exc:  # a handler bug must not stop the node
            self.handler_errors += 1
            log.error("handler failed", actor=actor.address, message=type(msg).__name__, src=src, error=f"{type(exc).__name__}: {exc}", exc_info=True)

    def reject(self, reason: str, detail: str) -> None:
        """Count something refused under ``reason`` (the result's ``rejected_frames``) and
        log it, the first few times per reason and then every 1,000th."""
        self.rejected[reason] += 1
        n = self.rejected[reason]
        if n <= _LOG_FIRST or n % 1000 == 0:
            log.warning("frame rejected", reason=reason, detail=detail[:300], count=n)

    # -- HTTP endpoints -----------------------------------------------------------------
    def counters(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "actors": sorted(self.actors),
            "delivered": self.delivered,
            "rejected": dict(self.rejected),
            "dropped": dict(self.dropped),
            "connections_lost": self.connections_lost,
            "handler_errors": self.handler_errors,
            "messages": {"count": list(self.stats.count), "nbytes": list(self.stats.nbytes), "undeliverable": self.stats.undeliverable},
            "reports": {"count": sum(self.report_stats.count), "bytes": sum(self.report_stats.nbytes)},
        }

    async def _health(self, request: web.Request) -> web.Response:
        denied = self.authorise(request)
        return denied or web.json_response({"ok": True, "url": self.url, "actors": sorted(self.actors)})

    async def _stats(self, request: web.Request) -> web.Response:
        denied = self.authorise(request, STATS_ROLES)
        return denied or web.json_response(self.counters())

    def client_session(self, total_timeout: float | None = None, connect_timeout: float = 2.0) -> aiohttp.ClientSession:
        """A session that dials with this node's credentials (certificate or token)."""
        connector = aiohttp.TCPConnector(ssl=self.tls[1]) if self.tls is not None else None
        headers = {TOKEN_HEADER: self.token} if self.token else {}
        return aiohttp.ClientSession(connector=connector, headers=headers, timeout=aiohttp.ClientTimeout(total=total_timeout, connect=connect_timeout))

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self, host: str, port: int) -> web.AppRunner:
        """Serve on host:port (port 0: any free port; :attr:`bound_port` tells which)."""
        self._session = self.client_session()
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, host, port, ssl_context=self.tls[0] if self.tls is not None else None)
        await site.start()
        self.bound_port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._runner = runner
        return runner

    def start_actors(self, delay: float = 0.0) -> None:
        for actor in self.actors.values():
            self.clock.call_later(delay, actor.start)

    async def close(self) -> None:
        for actor in self.actors.values():
            actor.stop()
        for peer in self.peers.values():
            if peer.task is not None:
                peer.task.cancel()
        await asyncio.gather(*(p.task for p in self.peers.values() if p.task is not None), return_exceptions=True)
        for ws in list(self._incoming):
            await ws.close()
        if self._session is not None:
            await self._session.close()
        if getattr(self, "_runner", None) is not None:
            await self._runner.cleanup()
