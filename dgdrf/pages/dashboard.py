"""A live dashboard of a real cluster's run, served by its collector (``dgdrf node --role
collector --dashboard HOST:PORT``, ``dgdrf cluster up --dashboard HOST:PORT``, compose's
``DGDRF_DASHBOARD``): a page with the run page's figures so far (each user's share under
the policy's notion, utilisation, allocations and messages per tick), the members with
their last report, and the overlay as a graph (dgdrf/pages/overlay_page.py's picture:
servers by utility, an edge for each gradient-view entry, or Cyclon-view entry where the
policy has no gradient, the believed centre marked). The page updates itself from a
stream of server-sent events (``/events``), one every :data:`PUSH_S`.

It only reads: the collector's state in its own process, and each process's ``/stats``
and ``/overlay`` over the cluster's HTTP (the instrument's requests, as the result's
gathering of ``/stats`` at the end; no protocol message), so a run with it has the
result it has without it.

Where it listens: loopback by default, as plain HTTP. Beyond loopback only in a cluster
with keys (TLS), and then as HTTPS with the collector's certificate, asking the browser
for a certificate of the cluster's CA (an ``admin`` one, from ``dgdrf cluster keys``),
as every node asks of its peers; without keys it refuses to start.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from aiohttp import web

from dgdrf.pages import figures
from dgdrf.pages.html import Block, Figure, Item, page, table
from dgdrf.pages.recorder import MAX_SAMPLES, RunRecord, sample, thin

log = logging.getLogger(__name__)

#: seconds between two samples of the collector, and between two events to a page
SAMPLE_S = 0.25
PUSH_S = 1.0
#: seconds between two polls of the processes' /stats and /overlay
POLL_S = 2.0

#: what the processes' answers are gathered into: {"messages": {type: count}, "overlay":
#: {server: {"utility": u, "view": [...], "centre": bool}}}
Poll = Callable[[], Awaitable[dict[str, Any]]]


class Dashboard:
    """The live state of a run, and the aiohttp app that serves it. ``collector`` is the
    run's Collector, ``members`` the collector actor (its members' roles, last reports and
    those down), ``now`` the run's clock, ``start`` when allocation starts, ``poll`` what
    gathers the processes' counts and overlay."""

    def __init__(self, collector: Any, members: Any, scenario: Any, config: Any, now: Callable[[], float], start: float, poll: Poll) -> None:
        self.collector, self.members, self.scenario, self.now, self.t0, self.poll = collector, members, scenario, now, start, poll
        notion = collector.notion
        self.record = RunRecord(
            policy=config.policy, share_name=notion.share_name if notion is not None else "global dominant share", users=list(collector.ledger.user_ids),
            servers=[s.id for s in scenario.servers], resources=list(scenario.resources), tick_s=config.tick,
        )  # fmt: skip
        self.period = SAMPLE_S
        self.messages: dict[str, int] = {}
        self.overlay: dict[str, dict[str, Any]] = {}
        self.status = "starting"
        self.app = web.Application()
        self.app.router.add_get("/", self._page)
        self.app.router.add_get("/events", self._events)
        self.app.router.add_get("/state", self._state)
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task] = []
        self.url = ""
        self._event: bytes | None = None
        self._event_at = 0.0

    # -- sampling -----------------------------------------------------------------------
    def sample(self) -> None:
        """The collector's state now, as the run recorder's samples (thinned likewise)."""
        t = self.now() - self.t0
        if t < 0:
            return
        sample(self.record, t, self.collector, self.messages)
        if len(self.record.times) > MAX_SAMPLES:
            thin(self.record)
            self.period *= 2

    async def _sampling(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(self.period)

    async def _polling(self) -> None:
        while True:
            try:
                got = await self.poll()
                self.messages = got.get("messages", self.messages)
                self.overlay = got.get("overlay", self.overlay)
            except Exception as exc:  # a process gone or slow: the dashboard shows what it had
                log.info("dashboard poll failed: %s", exc)
            await asyncio.sleep(POLL_S)

    # -- what a page shows --------------------------------------------------------------
    def figures(self) -> dict[str, dict[str, Any]]:
        """The figures as plotly dicts, by ``data-figure`` name."""
        record = self.record
        out = {
            "shares": figures.shares(record), "utilisation": figures.utilisation(record),
            "allocations": figures.allocations(record), "messages": figures.messages(self._polled(record)),
        }  # fmt: skip
        utilities = {s: float(v.get("utility", 0.0)) for s, v in self.overlay.items()}
        views = {s: list(v.get("view", [])) for s, v in self.overlay.items()}
        centres = [s for s, v in self.overlay.items() if v.get("centre")]
        what = next((v.get("kind") for v in self.overlay.values() if v.get("kind")), "no overlay")
        out["overlay"] = figures.overlay_graph(utilities or {s: 0.0 for s in record.servers}, views, centres, f"overlay: each server's {what}, servers by utility")
        return {name: json.loads(fig.to_json()) for name, fig in out.items()}

    @staticmethod
    def _polled(record: RunRecord) -> RunRecord:
        """The samples at which the message counts changed (they come with each poll of
        the processes, every :data:`POLL_S`, not with each sample): rates over the polls'
        intervals, not spikes between flat ones."""
        keep = [k for k in range(len(record.times)) if k == 0 or record.messages[k] != record.messages[k - 1]]
        return dataclasses.replace(record, times=[record.times[k] for k in keep], messages=[record.messages[k] for k in keep])

    def members_table(self) -> str:
        """Every member with its role, whether it is up, and its last report."""
        actor = self.members
        now = self.now()
        rows = []
        for member, role in sorted(actor.member_roles.items()):
            last = actor.last_report.get(member)
            down = member in actor.down_at
            rows.append([member, role, "down" if down else "up", "-" if last is None else f"{last[1]}, {max(0.0, now - last[0]):.1f} s ago"])
        return table(["member", "role", "state", "last report"], rows).html

    def state_line(self) -> str:
        """How the run stands: its policy, running or how it ended, its time and allocations."""
        c = self.collector
        status = c.end_reason or ("running" if self.now() >= self.t0 else "starting")
        return f"{self.record.policy}: {status}, t = {max(0.0, self.now() - self.t0):.1f} s, {len(c.allocations)} allocations"

    def state(self) -> dict[str, Any]:
        """What an event carries: the status line, every figure, the members' table."""
        return {"status": self.state_line(), "figures": self.figures(), "members": self.members_table()}

    def event(self) -> bytes:
        """The event every page is sent now: :meth:`state` as a server-sent event, built
        once for all pages open (again once it is :data:`PUSH_S` old, nearly): the
        figures are the dashboard's work, which the collector's process pays."""
        now = time.monotonic()
        if self._event is None or now - self._event_at >= 0.9 * PUSH_S:
            self._event = f"data: {json.dumps(self.state(), separators=(',', ':'))}\n\n".encode()
            self._event_at = now
        return self._event

    def page(self) -> str:
        figs = self.figures()
        sections: list[tuple[str, Sequence[Item]]] = [
            ("Run", [Block(f'<p id="status" class="note">{html.escape(self.state_line())}</p>')]),
            ("Shares and utilisation", [Figure("shares", figs["shares"]), Figure("utilisation", figs["utilisation"])]),
            ("Allocations and messages per tick", [Figure("allocations", figs["allocations"]), Figure("messages", figs["messages"])]),
            ("Overlay", [Figure("overlay", figs["overlay"])]),
            ("Members", [Block(f'<div id="members">{self.members_table()}</div>')]),
        ]
        script = (
            "const BY_NAME = {}; for (const f of FIGURES) { BY_NAME[f.name] = f.id; }\n"
            "function show(s) {\n"
            "  document.getElementById('status').textContent = s.status;\n"
            "  document.getElementById('members').innerHTML = s.members;\n"
            "  for (const [name, fig] of Object.entries(s.figures)) { if (BY_NAME[name]) Plotly.react(BY_NAME[name], fig.data, fig.layout, CONFIG); }\n"
            "}\n"
            "const events = new EventSource('events');\n"
            "events.onmessage = (e) => show(JSON.parse(e.data));\n"
        )
        return page(f"dgdrf cluster: {self.scenario.name}, {self.record.policy} (live)", sections, '<p class="note">Updates itself while the run goes (read-only).</p>', script)

    # -- serving ------------------------------------------------------------------------
    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(text=self.page(), content_type="text/html")

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response(self.state())

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        try:
            while True:
                await response.write(self.event())
                await asyncio.sleep(PUSH_S)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        return response

    async def start(self, host: str, port: int, ssl_context: Any = None) -> str:
        """Serve on host:port (0: any free port) and start sampling; the page's URL."""
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context, shutdown_timeout=0.5)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"{'https' if ssl_context is not None else 'http'}://{host}:{bound}/"
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._sampling()), loop.create_task(self._polling())]
        return self.url

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
