"""Headless Chromium, for the page tests (tests/browser.py) and the documentation's
screenshots (bench/page_screenshots.py): a page's DOM once its scripts ran and what it
logged to its console, a live page's through the DevTools protocol, and a screenshot.
Debian's ``chromium`` (.ci/run installs it where it can); nothing of dgdrf needs it."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

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
    """The DOM of the page at ``url`` ``wait_s`` real seconds after it loaded, and what
    it logged to its console or threw, through Chromium's DevTools protocol (for a live
    page, whose open stream of events would hold ``--virtual-time-budget`` for ever);
    ``png``: a screenshot of it too, as a window of ``size`` shows it."""
    import asyncio

    return asyncio.run(asyncio.wait_for(_live_dom(url, wait_s, png, size), timeout))


async def _live_dom(url: str, wait_s: float, png: Path | None, size: tuple[int, int]) -> tuple[str, list[str]]:
    import asyncio
    import json

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
                    target = next(t for t in await r.json() if t["type"] == "page")
                async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                    console: list[str] = []
                    ids = iter(range(1, 1_000_000))
                    answers: dict[int, asyncio.Future] = {}

                    async def call(method: str, **params: object) -> dict:
                        k = next(ids)
                        answers[k] = asyncio.get_running_loop().create_future()
                        await ws.send_str(json.dumps({"id": k, "method": method, "params": params}))
                        return await answers[k]

                    async def read() -> None:
                        async for msg in ws:
                            doc = json.loads(msg.data)
                            if "id" in doc and doc["id"] in answers:
                                answers.pop(doc["id"]).set_result(doc.get("result", {}))
                            elif doc.get("method") == "Runtime.consoleAPICalled":
                                console.append(f"{doc['params']['type']}: " + " ".join(str(a.get("value", a.get("description", ""))) for a in doc["params"]["args"]))
                            elif doc.get("method") == "Runtime.exceptionThrown":
                                console.append(f"exception: {doc['params']['exceptionDetails'].get('exception', {}).get('description', doc['params']['exceptionDetails'].get('text'))}")

                    reader = asyncio.create_task(read())
                    await call("Runtime.enable")
                    await call("Page.enable")
                    await call("Emulation.setDeviceMetricsOverride", width=size[0], height=size[1], deviceScaleFactor=1, mobile=False)
                    await call("Page.navigate", url=url)
                    await asyncio.sleep(wait_s)
                    got = await call("Runtime.evaluate", expression="document.documentElement.outerHTML", returnByValue=True)
                    if png is not None:
                        import base64

                        shot = await call("Page.captureScreenshot", format="png")
                        png.write_bytes(base64.b64decode(shot["data"]))
                    reader.cancel()
                    return got["result"]["value"], console
        finally:
            proc.kill()
            await proc.wait()
