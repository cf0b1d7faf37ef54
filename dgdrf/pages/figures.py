"""The figures of a run's page, as Plotly figures (plotly.py builds them; the page draws
them with the plotly.js bundle it carries, dgdrf/pages/html.py).

Each function takes what a run recorded (dgdrf/pages/recorder.py: :class:`RunRecord`)
or its result, and returns a figure, or None when the run has nothing to draw there (no
finite jobs: no JCT). Hovering a point shows its values; a click on a legend entry hides
its series (plotly's own behaviour).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from dgdrf.pages.recorder import RunRecord

#: the most jobs a Gantt strip draws (evenly spread over the jobs in arrival order)
MAX_GANTT_JOBS = 200
#: message types drawn one by one; the rest are summed as "other"
MAX_MESSAGE_TYPES = 10
#: figure height in pixels
HEIGHT = 340


def _layout(fig: go.Figure, title: str, x: str, y: str, height: int = HEIGHT, **extra: Any) -> go.Figure:
    extra.setdefault("legend", {"itemclick": "toggle"})
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y, height=height, margin={"l": 60, "r": 20, "t": 50, "b": 50}, hovermode="closest", **extra)
    return fig


def shares(record: RunRecord, levels: Mapping[str, float] | None = None) -> go.Figure:
    """Each user's share under the policy's notion over time (a step: shares hold between
    events), and the oracle's level of each user as a dashed line where one exists."""
    fig = go.Figure()
    palette = _palette(len(record.users))
    for i, user in enumerate(record.users):
        colour = palette[i]
        fig.add_trace(go.Scatter(x=record.times, y=[row[i] for row in record.shares], name=user, mode="lines", line={"shape": "hv", "color": colour}, legendgroup=user, hovertemplate=f"{user}<br>t=%{{x:.3f}} s<br>share=%{{y:.4f}}<extra></extra>"))
        if levels and user in levels and record.times:
            fig.add_trace(go.Scatter(x=[record.times[0], record.times[-1]], y=[levels[user]] * 2, name=f"{user} (oracle)", mode="lines", line={"dash": "dash", "color": colour, "width": 1}, legendgroup=user, showlegend=False, hovertemplate=f"{user}: oracle level %{{y:.4f}}<extra></extra>"))
    return _layout(fig, f"{record.policy}: {record.share_name} over time" + (" (dashed: the oracle's level)" if levels else ""), "virtual time (s)", record.share_name)


def utilisation(record: RunRecord) -> go.Figure:
    """The cluster's utilisation of each resource over time."""
    fig = go.Figure()
    for j, resource in enumerate(record.resources):
        fig.add_trace(go.Scatter(x=record.times, y=[row[j] for row in record.utilisation], name=resource, mode="lines", line={"shape": "hv"}, hovertemplate=f"{resource}<br>t=%{{x:.3f}} s<br>%{{y:.1%}}<extra></extra>"))
    return _layout(fig, f"{record.policy}: utilisation", "virtual time (s)", "used / capacity", yaxis={"tickformat": ".0%", "range": [0, 1.05]})


def _per_tick(times: Sequence[float], totals: Sequence[float], tick: float) -> tuple[list[float], list[float]]:
    """Counts per allocation tick over each sampling interval, from running totals."""
    xs, ys = [], []
    for k in range(1, len(times)):
        dt = times[k] - times[k - 1]
        if dt > 0:
            xs.append(times[k])
            ys.append((totals[k] - totals[k - 1]) * tick / dt)
    return xs, ys


def allocations(record: RunRecord) -> go.Figure:
    """Allocations per allocation tick, averaged over each sampling interval."""
    xs, ys = _per_tick(record.times, record.allocations, record.tick_s)
    fig = go.Figure(go.Scatter(x=xs, y=ys, name="allocations", mode="lines", line={"shape": "vh"}, hovertemplate="t=%{x:.3f} s<br>%{y:.3g} a tick<extra></extra>"))
    return _layout(fig, f"{record.policy}: allocations per tick ({record.tick_s:g} s)", "virtual time (s)", "allocations a tick")


def messages(record: RunRecord) -> go.Figure:
    """Messages per allocation tick by type (stacked), the most sent types one by one."""
    last = record.messages[-1] if record.messages else {}
    kinds = sorted(last, key=lambda k: -last[k])
    shown, rest = kinds[:MAX_MESSAGE_TYPES], kinds[MAX_MESSAGE_TYPES:]
    fig = go.Figure()
    series = [(k, [m.get(k, 0) for m in record.messages]) for k in shown]
    if rest:
        series.append(("other", [sum(m.get(k, 0) for k in rest) for m in record.messages]))
    for name, totals in series:
        xs, ys = _per_tick(record.times, totals, record.tick_s)
        fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines", stackgroup="messages", line={"shape": "vh", "width": 0.5}, hovertemplate=f"{name}<br>t=%{{x:.3f}} s<br>%{{y:.3g}} a tick<extra></extra>"))
    return _layout(fig, f"{record.policy}: messages per tick by type", "virtual time (s)", "messages a tick")


def jct(results: Sequence[Any]) -> go.Figure | None:
    """The distribution (CDF) of job completion times, one line a policy; None when no
    run has finished jobs."""
    fig = go.Figure()
    for r in results:
        times = sorted(j["jct"] for j in (r.jobs or []) if j.get("jct") is not None)
        if times:
            n = len(times)
            fig.add_trace(go.Scatter(x=times, y=[(k + 1) / n for k in range(n)], name=r.policy, mode="lines", line={"shape": "hv"}, hovertemplate=f"{r.policy}<br>JCT %{{x:.2f}} s<br>%{{y:.1%}} of jobs<extra></extra>"))
    if not fig.data:
        return None
    return _layout(fig, "job completion times (CDF)", "job completion time (s)", "fraction of jobs", yaxis={"tickformat": ".0%", "range": [0, 1.02]})


def jobs(result: Any) -> go.Figure | None:
    """Each finite job from its arrival (a mark) through its first task's start to its
    end (a bar), in arrival order; at most :data:`MAX_GANTT_JOBS`, evenly spread."""
    done = [j for j in (result.jobs or []) if j.get("first_start") is not None]
    if not done:
        return None
    done.sort(key=lambda j: (j["arrival"], j["user"], j["job"]))
    shown = done if len(done) <= MAX_GANTT_JOBS else [done[round(k * (len(done) - 1) / (MAX_GANTT_JOBS - 1))] for k in range(MAX_GANTT_JOBS)]
    labels = [f"{j['user']}/{j['job']}" for j in shown]
    ends = [j["finish"] if j.get("finish") is not None else j["first_start"] for j in shown]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=labels, x=[e - j["first_start"] for e, j in zip(ends, shown, strict=True)], base=[j["first_start"] for j in shown], orientation="h", name="run (first start to end)",
                         customdata=[[j["arrival"], j["first_start"], e, j.get("jct")] for e, j in zip(ends, shown, strict=True)],
                         hovertemplate="%{y}<br>arrived %{customdata[0]:.1f} s<br>started %{customdata[1]:.1f} s<br>ended %{customdata[2]:.1f} s<br>JCT %{customdata[3]:.1f} s<extra></extra>"))
    fig.add_trace(go.Scatter(y=labels, x=[j["arrival"] for j in shown], mode="markers", name="arrival", marker={"symbol": "line-ns-open", "size": 8}, hovertemplate="%{y} arrived %{x:.1f} s<extra></extra>"))
    note = f" ({len(shown)} of {len(done)} jobs, evenly spread)" if len(shown) < len(done) else ""
    return _layout(fig, f"{result.policy}: jobs from arrival to end{note}", "virtual time (s)", "job", yaxis={"autorange": "reversed", "showticklabels": len(shown) <= 40}, height=max(HEIGHT, min(900, 12 * len(shown) + 120)))


def placements(record: RunRecord) -> go.Figure:
    """Allocations made over the run, by user (rows) and server (columns)."""
    users = record.users
    servers = record.servers + sorted({s for row in record.placements.values() for s in row} - set(record.servers))
    z = [[record.placements.get(u, {}).get(s, 0) for s in servers] for u in users]
    fig = go.Figure(go.Heatmap(z=z, x=servers, y=users, colorscale="Blues", hovertemplate="%{y} on %{x}: %{z} allocations<extra></extra>", colorbar={"title": "allocations"}))
    return _layout(fig, f"{record.policy}: allocations by user and server", "server", "user", yaxis={"autorange": "reversed"})


def _palette(n: int) -> list[str]:
    """``n`` distinct colours (plotly's qualitative sets, then repeated)."""
    from plotly.colors import qualitative

    base = qualitative.Plotly + qualitative.D3 + qualitative.Set3
    return [base[i % len(base)] for i in range(n)]


#: the spiral's winding: rank k at angle SPIRAL * sqrt(k), distance sqrt(k / n), so
#: successive ranks sit one step apart along its arm, and the arms as far apart
SPIRAL = 3.545


def overlay_graph(utilities: Mapping[str, float], views: Mapping[str, Sequence[str]], centres: Sequence[str] = (), title: str = "overlay") -> go.Figure:
    """The overlay as a graph: the nodes on a spiral by utility's rank (the highest in
    the middle, :data:`SPIRAL`), so that nodes of close utilities sit close; an edge from
    each node to each entry of its view; a star on each node that believes itself the
    centre. Entries of nodes not drawn (gone, or not yet known) get no edge."""
    import math

    order = sorted(utilities, key=lambda a: (-utilities[a], a))
    n = max(1, len(order))
    pos = {}
    for rank, node in enumerate(order):
        r, angle = math.sqrt((rank + 0.5) / n), SPIRAL * math.sqrt(rank)
        pos[node] = (r * math.cos(angle), r * math.sin(angle))
    ex: list[float | None] = []
    ey: list[float | None] = []
    for node in order:
        for entry in views.get(node, ()):
            if entry in pos and entry != node:
                ex += [pos[node][0], pos[entry][0], None]
                ey += [pos[node][1], pos[entry][1], None]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", name="view entries", line={"width": 0.6, "color": "rgba(90,90,140,0.35)"}, hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=[pos[a][0] for a in order], y=[pos[a][1] for a in order], mode="markers", name="nodes",
        marker={"size": 7, "color": [utilities[a] for a in order], "colorscale": "Viridis", "showscale": True, "colorbar": {"title": "utility"}},
        text=[f"{a}<br>utility {utilities[a]:.4g}<br>view: {', '.join(list(views.get(a, ()))[:8])}" for a in order], hovertemplate="%{text}<extra></extra>",
    ))
    marked = [a for a in centres if a in pos]
    if marked:
        fig.add_trace(go.Scatter(x=[pos[a][0] for a in marked], y=[pos[a][1] for a in marked], mode="markers", name="believed centre", marker={"symbol": "star", "size": 16, "color": "crimson"},
                                 text=marked, hovertemplate="%{text} believes itself the centre<extra></extra>"))
    fig.update_xaxes(visible=False, range=[-1.1, 1.1])
    fig.update_yaxes(visible=False, range=[-1.1, 1.1], scaleanchor="x")
    return _layout(fig, title, "", "", height=480, legend={"orientation": "h", "y": -0.05, "itemclick": "toggle"})


def convergence(per_cycle: Sequence[Mapping[str, Any]], protocol: str) -> go.Figure | None:
    """An overlay run's figures per cycle: the gradient's converged fraction and centres,
    Cyclon's in-degree and clustering, push-sum's errors."""
    if not per_cycle:
        return None
    keys = {"gradient": ("converged_fraction", "centres"), "cyclon": ("indegree_mean", "indegree_std", "clustering"), "pushsum": ("max_relative_error", "mean_relative_error")}.get(protocol, ())
    cycles = [row["cycle"] for row in per_cycle]
    fig = go.Figure()
    for key in keys:
        ys = [row.get(key) for row in per_cycle]
        if any(isinstance(y, (int, float)) and not isinstance(y, bool) for y in ys):
            fig.add_trace(go.Scatter(x=cycles, y=[y if isinstance(y, (int, float)) and y != float("inf") else None for y in ys], name=key.replace("_", " "), mode="lines+markers"))
    if not fig.data:
        return None
    return _layout(fig, f"{protocol}: convergence per cycle", "cycle", "", yaxis={"type": "log"} if protocol == "pushsum" else {})
