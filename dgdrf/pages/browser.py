"""Headless Chromium, for the page tests (tests/browser.py) and the documentation's
screenshots (bench/page_screenshots.py): a page's DOM once its scripts ran and what it
logged to its console, a live page's through the DevTools protocol, and a screenshot.
Debian's ``chromium`` (.ci/run installs it where it can); nothing of dgdrf needs it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

#: flags that keep a headless Chromium off the network it cannot reach here (it would try
#: Google's hosts at every start) and out of the sandbox root cannot have
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
)  # fmt: skip


#: why there is no browser, where there is none
MISSING = "no Chromium on this machine (Debian: apt-get install chromium; .ci/run installs it as root)"


def find_chromium() -> str | None:
    """The Chromium executable, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium() -> str:
    """The Chromium executable; RuntimeError (saying what to install) without one."""
    path = find_chromium()
    if path is None:
        raise RuntimeError(MISSING)
    return path


def dump_dom(target: str | Path, budget_ms: int = 10_000, timeout: float = 120.0) -> tuple[str, list[str]]:
    """The DOM of ``target`` (a file or a URL) after its scripts ran for ``budget_ms`` of
    virtual time, and the console messages it logged."""
    url = target if isinstance(target, str) else target.resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="dgdrf-chromium-") as profile:
        done = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}", "--dump-dom", url], capture_output=True, text=True, timeout=timeout)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def screenshot(target: str | Path, out: Path, width: int = 1400, height: int = 2400, budget_ms: int = 10_000) -> None:
    """A PNG of ``target`` as a window of ``width`` x ``height`` shows it."""
    url = target if isinstance(target, str) else target.resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="dgdrf-chromium-") as profile:
        subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}", "--hide-scrollbars", f"--window-size={width},{height}", f"--screenshot={out}", url], capture_output=True, timeout=120, check=True)


_FIGURE = re.compile(r'<div id="(figure-\d+)" data-figure="([a-z-]+)"(?: data-label="([^"]*)")?')


def drawn_figures(dom: str) -> dict[str, list[bool]]:
    """Per ``data-figure`` name, for each element of it: whether it holds a drawn svg or
    canvas (what plotly.js draws into the page's DOM)."""
    marks = list(_FIGURE.finditer(dom))
    out: dict[str, list[bool]] = {}
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(dom)
        inner = dom[m.end():end]
        out.setdefault(m.group(2), []).append(bool(re.search(r"<svg[^>]*class=\"main-svg\"|<canvas", inner)))
    return out


def live_dom(url: str, wait_s: float, timeout: float = 60.0, png: Path | None = None, size: tuple[int, int] = (1400, 1400)) -> tuple[str, list[str]]:
    """The DOM of the page at ``url`` ``wait_s`` real seconds after it loaded and drew
    its figures, and what it logged to its console or threw, through Chromium's DevTools
    protocol (for a live page, whose open stream of events would hold
    ``--virtual-time-budget`` for ever); ``png``: a screenshot of it too, as a window of
    ``size`` shows it."""
    import asyncio

    async def look(tab: DevTools) -> tuple[str, list[str]]:
        await tab.open(url, 0.0, size)
        await tab.until(_DRAWN_JS, timeout / 2)  # loaded and drawn, however busy the machine
        await asyncio.sleep(wait_s)
        dom = await tab.evaluate("document.documentElement.outerHTML")
        if png is not None:
            import base64

            shot = await tab.call("Page.captureScreenshot", format="png")
            png.write_bytes(base64.b64decode(shot["data"]))
        return dom, tab.console

    return asyncio.run(asyncio.wait_for(DevTools.run(look), timeout))


def click_point(target: str | Path, figure: str, trace: str, point: int, wait_s: float = 0.5, timeout: float = 90.0) -> tuple[list[str], list[str]]:
    """Click, with the mouse as a reader would (moved onto it, pressed, released), point
    ``point`` of the first trace named ``trace...`` of the first figure whose
    ``data-figure`` is ``figure`` on the page ``target``: the addresses of the pages the
    click opened, and what the page logged to its console or threw."""
    import asyncio

    url = target if isinstance(target, str) else target.resolve().as_uri()

    async def click(tab: DevTools) -> tuple[list[str], list[str]]:
        await tab.open(url, 0.0, (1400, 1000))
        await tab.until(_DRAWN_JS, timeout / 2)
        await asyncio.sleep(wait_s)
        where = await tab.evaluate(_POINT_JS % (json.dumps(figure), json.dumps(trace), point))
        if not isinstance(where, list):
            raise RuntimeError(f"no point {point} of a trace {trace!r} in a figure {figure!r}: {where}")
        x, y = where
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await tab.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left" if kind != "mouseMoved" else "none", clickCount=1 if kind != "mouseMoved" else 0)
            await asyncio.sleep(0.3)  # a hover is drawn before the click counts
        await asyncio.sleep(1.0)
        return tab.opened, tab.console

    return asyncio.run(asyncio.wait_for(DevTools.run(click), timeout))


#: a page's figures all drawn (plotly.js keeps what it drew on the figure's element)
_DRAWN_JS = "((fs) => fs.length > 0 && fs.every((e) => e._fullData))([...document.querySelectorAll('[data-figure]')])"

#: where on the screen a point of a plotly.js figure is: the figure scrolled into view,
#: its trace's axes' pixel of the point's data, offset by the figure's place
_POINT_JS = """(() => {
  const el = [...document.querySelectorAll('[data-figure]')].find((e) => e.dataset.figure === %s);
  if (!el) return 'no such figure';
  const k = el._fullData.findIndex((t) => (t.name || '').startsWith(%s));
  if (k < 0) return 'no such trace';
  const t = el._fullData[k], i = %d, fl = el._fullLayout;
  if (i >= t.x.length) return 'no such point';
  const xa = fl[t.xaxis.replace('x', 'xaxis')], ya = fl[t.yaxis.replace('y', 'yaxis')];
  el.scrollIntoView({block: 'center'});
  const box = el.getBoundingClientRect();
  return [box.left + xa._offset + xa.d2p(t.x[i]), box.top + ya._offset + ya.d2p(t.y[i])];
})()"""


class DevTools:
    """One page of a headless Chromium driven through its DevTools protocol: commands
    (:meth:`call`), what the page logs or throws (``console``), and the pages it opens
    (``opened``, their addresses)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.console: list[str] = []
        self.opened: list[str] = []
        self._ids = iter(range(1, 1_000_000))
        self._answers: dict[int, Any] = {}
        self._page_id = ""

    @classmethod
    async def run(cls, action: Callable[[DevTools], Awaitable[T]]) -> T:
        """Start Chromium, hand ``action`` its first page, and end Chromium after."""
        import asyncio

        import aiohttp

        with tempfile.TemporaryDirectory(prefix="dgdrf-chromium-") as profile:
            proc = await asyncio.create_subprocess_exec(
                chromium(), *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )
            try:
                assert proc.stderr is not None
                endpoint = ""
                while not endpoint:
                    line = (await proc.stderr.readline()).decode()
                    if not line:
                        raise RuntimeError("Chromium ended before it listened for DevTools")
                    m = re.search(r"DevTools listening on (ws://\S+)", line)
                    endpoint = m.group(1) if m else ""
                port = re.search(r":(\d+)/", endpoint).group(1)  # type: ignore[union-attr]
                async with aiohttp.ClientSession() as session:
                    async with session.get(f"http://127.0.0.1:{port}/json/list") as r:
                        page = next(t for t in await r.json() if t["type"] == "page")
                    async with session.ws_connect(endpoint, max_msg_size=0) as ws:
                        tab = cls(ws)
                        reader = asyncio.create_task(tab._read())
                        try:
                            attached = await tab.call("Target.attachToTarget", targetId=page["id"], flatten=True)
                            tab._page_id = attached["sessionId"]
                            await tab.call("Target.setDiscoverTargets", browser=True, discover=True)
                            for domain in ("Runtime.enable", "Page.enable"):
                                await tab.call(domain)
                            return await action(tab)
                        finally:
                            reader.cancel()
            finally:
                proc.kill()
                await proc.wait()

    async def call(self, method: str, **params: object) -> dict:
        """A command; to the page, unless it is one of the browser's (``Target.``)."""
        import asyncio

        k = next(self._ids)
        self._answers[k] = asyncio.get_running_loop().create_future()
        doc: dict[str, Any] = {"id": k, "method": method, "params": params}
        if not method.startswith("Target.") and self._page_id:
            doc["sessionId"] = self._page_id
        await self.ws.send_str(json.dumps(doc))
        return await self._answers[k]

    async def open(self, url: str, wait_s: float, size: tuple[int, int]) -> None:
        """Show ``url`` in a window of ``size`` and let it run ``wait_s`` seconds."""
        import asyncio

        await self.call("Emulation.setDeviceMetricsOverride", width=size[0], height=size[1], deviceScaleFactor=1, mobile=False)
        await self.call("Page.navigate", url=url)
        await asyncio.sleep(wait_s)

    async def until(self, expression: str, timeout: float) -> None:
        """Wait until ``expression`` holds on the page (checked every 0.2 s), at most
        ``timeout`` seconds."""
        import asyncio
        import time

        deadline = time.monotonic() + timeout
        while not await self.evaluate(f"document.readyState === 'complete' && !!({expression})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page did not come to hold {expression} in {timeout:g} s")
            await asyncio.sleep(0.2)

    async def evaluate(self, expression: str) -> Any:
        got = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return got.get("result", {}).get("value")

    async def _read(self) -> None:
        async for msg in self.ws:
            doc = json.loads(msg.data)
            if "id" in doc and doc["id"] in self._answers:
                self._answers.pop(doc["id"]).set_result(doc.get("result", {}))
                continue
            method, params = doc.get("method"), doc.get("params", {})
            if method == "Runtime.consoleAPICalled":
                self.console.append(f"{params['type']}: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                self.console.append(f"exception: {params['exceptionDetails'].get('exception', {}).get('description', params['exceptionDetails'].get('text'))}")
            elif method in ("Target.targetCreated", "Target.targetInfoChanged"):
                info = params["targetInfo"]
                if info["type"] == "page" and info.get("openerId") and info["url"] not in ("", "about:blank") and info["url"] not in self.opened:
                    self.opened.append(info["url"])
