"""A sweep report's page (``dgdrf report DIR... --html``): report.md as one
self-contained page beside it, its text and relation tables (with their verdicts) as
HTML, and each of its PNG figures replaced by the same figure, interactive (dgdrf/pages/
from_matplotlib.py): hovering a point names its series (the policy and its parameters)
and its value; a legend click hides a series.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import markdown

from dgdrf.pages.html import Block, Figure, Item, check_size, page

_IMAGE = re.compile(r'<p><img alt="([^"]*)" src="([^"]+\.png)"\s*/?></p>')


def report_page(report_md: str, interactive: Mapping[str, Sequence[dict[str, Any]]], runs: Mapping[str, Sequence[dict[str, Any]]] | None = None) -> str:
    """The page of ``report_md`` whose images are the figures ``interactive`` holds by
    file name (an image it does not hold stays out, its caption kept); ``runs``: by file
    name, the runs behind a figure's points (x, y, text, link, and its panel: which
    of the figure's axes), drawn as small marks that name their run on hover and open
    its page on a click where it has one."""
    body = markdown.markdown(report_md, extensions=["tables"])
    title_match = re.search(r"<h1>(.*?)</h1>", body)
    title = re.sub(r"<[^>]+>", "", title_match.group(1)) if title_match else "Sweep report"
    if title_match:
        body = body.replace(title_match.group(0), "", 1)
    items: list[Item] = []
    at = 0
    for m in _IMAGE.finditer(body):
        items.append(Block(body[at:m.start()]))
        for k, fig in enumerate(interactive.get(m.group(2), [])):
            points = [p for p in (runs or {}).get(m.group(2), ()) if p.get("panel", 0) == k]
            if points:
                fig = {**fig, "data": [*fig["data"], _run_marks(points)]}
            items.append(Figure(_figure_name(m.group(2)), fig, f"{m.group(2)}" + (f" [{k + 1}]" if k else "")))
        at = m.end()
    items.append(Block(body[at:]))
    intro = '<p class="note">The report of report.md, its figures interactive: hover a point for its series and value; click a legend entry to hide its series.</p>'
    text = page(title, [("", items)], intro)
    check_size(text, "dgdrf report --html")
    return text


def _run_marks(points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One trace of a mark per run: hover names it, a click opens its page (its
    ``customdata``, a relative path, where there is one: dgdrf/pages/html.py)."""
    return {
        "type": "scatter", "mode": "markers", "name": "runs (hover: which; click: its page)", "x": [p["x"] for p in points], "y": [p["y"] for p in points],
        "text": [p["text"] for p in points], "customdata": [p["link"] for p in points], "hovertemplate": "%{text}<br>%{y:.4g}<extra></extra>",
        "marker": {"size": 5, "color": "rgba(60,60,60,0.45)"},
    }  # fmt: skip


def _figure_name(png: str) -> str:
    """A figure's ``data-figure`` name from its PNG's: what it shows (``min_share``,
    ``error_curve``, ``jct``, ...), lower case with dashes."""
    stem = png.rsplit(".", 1)[0]
    for known in ("min_share", "gini", "error_ratio", "runtime_s", "error_curve", "jct", "shares", "messages", "ratio", "loss", "cost"):
        if stem.startswith(known) or known in stem:
            return known.replace("_", "-")
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")[:40] or "figure"
