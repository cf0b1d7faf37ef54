"""A matplotlib figure of the sweep report (dgdrf/bench/report.py) as interactive
figures for its page: one plotly figure per axes, with its lines (``plot``, ``step``,
``axhline``), its bands (``fill_between``), its titles, labels, limits, log scales and
percent axes. The report draws with nothing else; what this does not know (an image,
bars, text) it leaves out, and says so in the figure's title.

The PNGs stay what report.md shows; the page shows the same data, so hovering a point
names its series (the policy and its parameters) and its value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: matplotlib's line styles in plotly's words
_DASH = {"-": "solid", "--": "dash", ":": "dot", "-.": "dashdot", "solid": "solid", "dashed": "dash", "dotted": "dot", "dashdot": "dashdot"}
#: matplotlib's markers in plotly's words (others: a circle)
_MARKER = {"o": "circle", "s": "square", "^": "triangle-up", "v": "triangle-down", "D": "diamond", "x": "x", "+": "cross", "*": "star"}


def _colour(c: Any) -> str:
    from matplotlib.colors import to_rgba

    r, g, b, a = to_rgba(c)
    return f"rgba({round(r * 255)},{round(g * 255)},{round(b * 255)},{a:.3g})"


def _floats(values: Any) -> list[float | None]:
    out: list[float | None] = []
    for v in np.asarray(values, dtype=float).ravel():
        out.append(float(v) if np.isfinite(v) else None)
    return out


def axes_figures(fig: Any) -> list[dict[str, Any]]:
    """Each axes of the matplotlib ``fig`` that draws something, as a plotly figure dict
    ({"data": [...], "layout": {...}})."""
    from matplotlib.collections import PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.ticker import PercentFormatter

    out = []
    for ax in fig.get_axes():
        if not ax.get_visible() or not (ax.lines or ax.collections):
            continue
        data: list[dict[str, Any]] = []
        left_out = 0
        for coll in ax.collections:
            if not isinstance(coll, PolyCollection):
                left_out += 1
                continue
            colour = _colour(coll.get_facecolor()[0]) if len(coll.get_facecolor()) else "rgba(0,0,0,0.1)"
            for path in coll.get_paths():
                xy = np.asarray(path.vertices, dtype=float)
                data.append({"type": "scatter", "x": _floats(xy[:, 0]), "y": _floats(xy[:, 1]), "mode": "lines", "fill": "toself", "fillcolor": colour, "line": {"width": 0}, "hoverinfo": "skip", "showlegend": False})
        for line in ax.lines:
            if not isinstance(line, Line2D):
                continue
            label = str(line.get_label())
            x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
            trace: dict[str, Any] = {
                "type": "scatter", "x": _floats(x), "y": _floats(y), "name": label if not label.startswith("_") else "",
                "showlegend": not label.startswith("_"), "line": {"color": _colour(line.get_color()), "width": float(line.get_linewidth()), "dash": _DASH.get(str(line.get_linestyle()), "solid")},
            }  # fmt: skip
            style = str(line.get_drawstyle())
            if style.startswith("steps"):
                trace["line"]["shape"] = {"steps-post": "hv", "steps-pre": "vh", "steps-mid": "hvh", "steps": "vh"}.get(style, "hv")
            marker = line.get_marker()
            trace["mode"] = "lines+markers" if marker not in (None, "None", "", " ") else "lines"
            if trace["mode"] == "lines+markers":
                trace["marker"] = {"symbol": _MARKER.get(str(marker), "circle"), "size": 6}
            if line.get_transform() != ax.transData:  # an axhline / axvline: in axes coordinates along one axis
                xs = ax.get_xlim() if list(x) == [0, 1] else x
                ys = ax.get_ylim() if list(y) == [0, 1] else y
                trace["x"], trace["y"] = _floats(xs), _floats(ys)
                trace["hoverinfo"] = "skip"
            data.append(trace)
        title = ax.get_title() or (fig._suptitle.get_text() if getattr(fig, "_suptitle", None) else "")
        if left_out:
            title += f" ({left_out} element(s) only in the PNG)"
        layout: dict[str, Any] = {
            "title": {"text": title.replace("\n", "<br>"), "font": {"size": 12}}, "height": 380, "margin": {"l": 60, "r": 20, "t": 70, "b": 50}, "hovermode": "closest",
            "xaxis": {"title": {"text": ax.get_xlabel()}, "type": "log" if ax.get_xscale() == "log" else "linear"},
            "yaxis": {"title": {"text": ax.get_ylabel()}, "type": "log" if ax.get_yscale() == "log" else "linear"},
            "legend": {"font": {"size": 10}},
        }  # fmt: skip
        if isinstance(ax.yaxis.get_major_formatter(), PercentFormatter):
            layout["yaxis"]["tickformat"] = ".0%"
        if isinstance(ax.xaxis.get_major_formatter(), PercentFormatter):
            layout["xaxis"]["tickformat"] = ".0%"
        for name, lim, scale in (("xaxis", ax.get_xlim(), ax.get_xscale()), ("yaxis", ax.get_ylim(), ax.get_yscale())):
            if scale == "log":
                if lim[0] > 0 and lim[1] > 0:
                    layout[name]["range"] = [float(np.log10(lim[0])), float(np.log10(lim[1]))]
            else:
                layout[name]["range"] = [float(lim[0]), float(lim[1])]
        out.append({"data": data, "layout": layout})
    return out
