"""What a run's page costs (``dgdrf run --html``): the run's wall time with and without
it, the page's size, and how much longer headless Chromium takes to load and draw it
than an empty page (the median of ``--repeat`` loads each). Wall times on a shared
machine: compare within one run of this script.

    python bench/page_cost.py [--scenario configs/thesis-100x20.toml] [--policy drf] > bench/results/page-cost.txt
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dgdrf.pages.browser import dump_dom

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="configs/thesis-100x20.toml")
    ap.add_argument("--policy", default="drf")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    run = [sys.executable, "-m", "dgdrf", "run", "--scenario", args.scenario, "--policy", args.policy, "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        page, empty = Path(tmp) / "run.html", Path(tmp) / "empty.html"
        empty.write_text("<!DOCTYPE html><html><body>empty</body></html>")
        plain = statistics.median(timed(run) for _ in range(args.repeat))
        with_page = statistics.median(timed([*run, "--html", str(page)]) for _ in range(args.repeat))
        loads = {}
        for name, target in (("empty", empty), ("page", page)):
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                dump_dom(target, budget_ms=10_000)
                times.append(time.perf_counter() - t0)
            loads[name] = statistics.median(times)
        print(f"# bench/page_cost.py --scenario {args.scenario} --policy {args.policy} --repeat {args.repeat} (medians)")
        print(f"run without --html: {plain:.2f} s; with --html: {with_page:.2f} s (+{with_page - plain:.2f} s)")
        print(f"page: {page.stat().st_size / 2**20:.2f} MB")
        print(f"headless Chromium, load and draw: empty page {loads['empty']:.2f} s, the run's page {loads['page']:.2f} s (+{loads['page'] - loads['empty']:.2f} s)")


if __name__ == "__main__":
    main()
