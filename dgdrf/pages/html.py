"""One self-contained HTML page: its figures drawn by the plotly.js bundle it carries
inline (dgdrf/pages/static: plotly.js's "cartesian" partial bundle, the version plotly.py
writes figures for), its tables as HTML, and no address of any network in it, so that
it opens offline, from a file, and requests nothing.

Why Plotly: its figures draw into the page's own DOM (SVG), hover and legend clicks need
no code of ours, a live page updates a figure with one call (``Plotly.react``), and its
cartesian bundle is 1.5 MB, which leaves a page of a large run under 5 MB. (Bokeh draws
into shadow roots, which a dumped DOM does not show; Vega-Lite's inline bundle comes
with a 33 MB converter package.)

Each figure sits in an element with a ``data-figure`` attribute naming what it shows
(``shares``, ``utilisation``, ``allocations``, ``messages``, ``jct``, ``jobs``,
``placements``, ``overlay``, ...), which holds the drawn ``svg`` once the page's script
has run; tests find the figures by it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import plotly.io

#: a page's size limit (bytes): the bundle is 1.5 MB, the rest is data
MAX_PAGE_BYTES = 5 * 2**20
#: the plotly.js bundle the pages carry, and the version it is (plotly.py's own)
BUNDLE = "plotly-cartesian.min.js"
PLOTLY_JS_VERSION = "4.1.1"
#: the figures' plotly.js configuration: no logo link, no request for anything
CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]}


@dataclass
class Figure:
    """A figure of a page: ``name`` is its ``data-figure``; ``figure`` a plotly figure
    (or its dict); ``label`` what distinguishes it from others of its name (a policy)."""

    name: str
    figure: Any
    label: str = ""


@dataclass
class Block:
    """Raw HTML in a page (a table, a paragraph), escaped by whoever made it."""

    html: str


Item = Figure | Block


def bundle() -> str:
    """The plotly.js bundle as it goes inline: the one place in it where an address
    follows ``href="`` (the logo's link, which the page never shows) is written with an
    escape of the same string, so that the page has no ``href="http`` anywhere."""
    js = resources.files("dgdrf.pages").joinpath("static").joinpath(BUNDLE).read_text(encoding="utf-8")
    return js.replace('href="http', 'href="\\x68ttp')


def _script_json(doc: Any) -> str:
    """JSON that may sit in a ``<script>`` element (no ``</`` closes it early)."""
    text = doc if isinstance(doc, str) else json.dumps(doc, separators=(",", ":"), allow_nan=False)
    return text.replace("</", "<\\/")


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.row { display: flex; flex-wrap: wrap; gap: 1em; }
.row > [data-figure] { flex: 1 1 520px; min-width: 420px; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.bad { color: #b00; font-weight: bold; } .good { color: #070; }
.note { color: #555; font-size: 0.9em; }
"""


def page(title: str, sections: Sequence[tuple[str, Sequence[Item]]], intro: str = "", script: str = "") -> str:
    """The page: ``title``, an ``intro`` (HTML), then each section's heading and items
    (figures of a section side by side, tables and text in order); ``script`` is more
    JavaScript, run after the figures are drawn (a live page's updates)."""
    figures: list[dict[str, Any]] = []
    body: list[str] = [f"<h1>{html.escape(title)}</h1>", intro]
    for heading, items in sections:
        if not items:
            continue
        if heading:
            body.append(f"<h2>{html.escape(heading)}</h2>")
        row: list[str] = []
        for item in items:
            if isinstance(item, Figure):
                fid = f"figure-{len(figures)}"
                label = f' data-label="{html.escape(item.label)}"' if item.label else ""
                row.append(f'<div id="{fid}" data-figure="{html.escape(item.name)}"{label}></div>')
                spec = item.figure if isinstance(item.figure, dict) else json.loads(plotly.io.to_json(item.figure, validate=False))
                figures.append({"id": fid, "name": item.name, "label": item.label, "data": spec.get("data", []), "layout": spec.get("layout", {})})
            else:
                if row:
                    body.append(f'<div class="row">{"".join(row)}</div>')
                    row = []
                body.append(item.html)
        if row:
            body.append(f'<div class="row">{"".join(row)}</div>')
    draw = (
        "const CONFIG = " + _script_json(CONFIG) + ";\n"
        "const FIGURES = " + _script_json(figures) + ";\n"
        "for (const f of FIGURES) {\n"
        "  Plotly.newPlot(f.id, f.data, f.layout, CONFIG).then((el) => el.on('plotly_click', (ev) => {\n"
        "    const target = ev.points && ev.points[0] ? ev.points[0].customdata : null;  // a point that is a run with a page\n"
        "    if (typeof target === 'string' && target) window.open(target, '_blank');\n"
        "  }));\n"
        "}\n"
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style>\n<script>{bundle()}</script>\n</head><body>\n"
        + "\n".join(body)
        + f"\n<script>\n{draw}{script}\n</script>\n</body></html>\n"
    )


def table(head: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", classes: Sequence[Sequence[str]] | None = None) -> Block:
    """An HTML table of text cells (escaped); ``classes``: a CSS class per cell, or ""."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
    for i, row in enumerate(rows):
        cells = []
        for j, cell in enumerate(row):
            cls = classes[i][j] if classes and i < len(classes) and j < len(classes[i]) else ""
            cells.append(f'<td class="{cls}">{html.escape(cell)}</td>' if cls else f"<td>{html.escape(cell)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return Block("".join(out))


def check_size(text: str, what: str) -> None:
    """Refuse a page over :data:`MAX_PAGE_BYTES` (its data would not open quickly)."""
    size = len(text.encode("utf-8"))
    if size > MAX_PAGE_BYTES:
        raise ValueError(f"{what}: the page would be {size / 2**20:.1f} MB, over the {MAX_PAGE_BYTES // 2**20} MB a page may be")
