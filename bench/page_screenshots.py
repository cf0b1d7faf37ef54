"""Screenshots of every kind of page dgdrf writes, for the documentation (docs/assets/
page-*.png), drawn by headless Chromium (dgdrf/pages/browser.py):

- a run's page: configs/google-finite-8x4.toml under drf and tsf (``dgdrf run --html``);
- an overlay's page: the gradient on 200 nodes over 30 cycles (``dgdrf overlay --html``);
- a sweep report's page: bench/results/quick (``dgdrf report --html``, on a copy);
- a live cluster's dashboard: google-finite-8x4 under dgdrf at 60 times real speed,
  some 15 s into the run (``dgdrf cluster up --dashboard``).

    python bench/page_screenshots.py [--out docs/assets]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from dgdrf.cluster.launcher import free_port
from dgdrf.pages.browser import live_dom, screenshot

ROOT = Path(__file__).resolve().parent.parent


def dgdrf(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "dgdrf", *args], check=True, cwd=ROOT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "assets")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dgdrf-pages-") as tmp:
        work = Path(tmp)
        dgdrf("run", "--scenario", "configs/google-finite-8x4.toml", "--policy", "drf,tsf", "--html", str(work / "run.html"), "--quiet")
        screenshot(work / "run.html", args.out / "page-run.png", 1400, 1700)
        dgdrf("overlay", "--protocol", "gradient", "--nodes", "200", "--cycles", "30", "--html", str(work / "overlay.html"), "--html-cycles", "1,4,16,30", "--quiet")
        screenshot(work / "overlay.html", args.out / "page-overlay.png", 1400, 1150)
        shutil.copytree(ROOT / "bench" / "results" / "quick", work / "quick")
        dgdrf("report", str(work / "quick"), "--html")
        screenshot(work / "quick" / "report.html", args.out / "page-report.png", 1400, 1600)
        port = free_port("127.0.0.1")
        cluster = subprocess.Popen([sys.executable, "-m", "dgdrf", "cluster", "up", "--scenario", "configs/google-finite-8x4.toml", "--policy", "dgdrf", "--time-scale", "60", "--warmup", "2", "--dashboard", f"127.0.0.1:{port}", "--quiet"], cwd=ROOT)
        try:
            url = f"http://127.0.0.1:{port}/"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(url + "state", timeout=2).read()
                    break
                except OSError:
                    time.sleep(0.5)
            time.sleep(15)
            live_dom(url, 3.0, png=args.out / "page-dashboard.png", size=(1400, 1500))
        finally:
            cluster.terminate()
            cluster.wait(30)
    for name in ("run", "overlay", "report", "dashboard"):
        print(f"{args.out / f'page-{name}.png'}: {(args.out / f'page-{name}.png').stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
