"""``dgdrf report``: figures and a markdown summary of a sweep's results (thesis ch. 5).

What is drawn depends on what the sweep varied: against neighbours (figs. 5.1-5.5,
5.8-5.10, tables 5.1-5.4), the error ratio over a run (figs. 5.6-5.7), a policy's
run-time relative to drf against users (fig. 5.11) or gradient exchanges per tick
(fig. 5.12), message cost per tick, and the emulator's own cost against cluster size.
Where a condition ran with several seeds, lines are medians and bands span min to max.
A "thesis relations" section checks the qualitative findings the distributed-policies
work must reproduce, on these results, and says which hold.

Runs with jobs that arrive and finish (the result's ``jobs``: dgdrf/model/workload.py)
end drained, not saturated, with every final share 0: the thesis's figures and relations
leave them out, and a "Jobs" section compares their policies instead: the distribution of
job completion times, each user's share and the cluster's utilisation over time, and per
scenario mean and p95 JCT, makespan and fairness over time-averaged shares against drf's.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from dgdrf.bench import thesis
from dgdrf.bench.relations import Alternative
from dgdrf.config import variant_labels
from dgdrf.bench.staleness import REVISION_KEYS, is_stale, stale_because
from dgdrf.bench.store import SWEEP_JSON, flat_row, read_records
from dgdrf.bench.sweep import PAGES
from dgdrf.errors import ConfigError
from dgdrf.model.resources import natural_key
from dgdrf.policies import POLICIES
from dgdrf.report_table import NORMAL_ENDS

REPORT_MD = "report.md"
#: parameters that identify a condition besides the data set, policy, neighbours and seed
_IDENTITY = ("dataset", "servers", "users", "data_seed", "scenario_digest", "policy", "neighbors", "seed", *REVISION_KEYS)
POLICY_ORDER = tuple(POLICIES)  # the registry's order: centralized, distributed, the papers'
#: samples a run needs for its panel of shares over time (the default, one every 10 s, may give one or two)
MIN_SAMPLES = 5
TOLERANCES = (("exact", "exact"), ("0.01", "1 %"), ("0.05", "5 %"), ("0.10", "10 %"), ("0.15", "15 %"))


def _variant(r: dict) -> str:
    """The policy of a row, with the variant options it ran with (those declared ``label``,
    when not their default: figure series, relation checks)."""
    extras = variant_labels(r)
    return r["policy"] + (f" ({', '.join(extras)})" if extras else "")


@dataclass(frozen=True)
class Check:
    """One of the thesis's findings held against ours (a row of the report's table).

    The verdict is computed, never written: ``judge(measured)``, ``judge`` being the
    tolerance as a function (None: not checked, ``why`` says why). ``alternative``: the
    nearest plausible outcome other than the thesis's (another policy's figure, the other
    data set's table), which the tolerance must fail; it is named in the row, and a
    tolerance that admits it cannot tell the claim from it (verdict "cannot tell", not
    counted). ``printed``: the thesis prints the figure, or states the finding, for this
    data set; a row it does not (a table of another data set, our summary of a table) is
    shown apart and not counted."""

    scope: str  # the data set, or the cluster size for a sweep over users
    relation: str
    thesis: str  # the thesis's figure or range, and where it is
    ours: str
    tolerance: str
    measured: Any = None  # what judge reads: our figure(s), from the records
    judge: Callable[[Any], bool] | None = None
    alternative: Alternative | None = None
    why: str = ""
    printed: bool = True

    @property
    def holds(self) -> bool | None:
        """``judge(measured)``; None when not checked."""
        return None if self.judge is None else bool(self.judge(self.measured))

    def excludes_its_alternative(self) -> bool | None:
        """Whether the tolerance fails the alternative (None: no alternative or no judge)."""
        if self.judge is None or self.alternative is None:
            return None
        return not self.judge(self.alternative.value)

    def tells(self) -> bool:
        """A printed claim's tolerance tells it from its alternative: names one, and fails it
        (a reading, not counted, may name none)."""
        return not self.printed or self.excludes_its_alternative() is True

    @property
    def counted(self) -> bool:
        """In "N of M hold": a printed claim, checked, by a tolerance that fails its alternative."""
        return self.printed and self.holds is not None and self.tells()

    @property
    def verdict(self) -> str:
        if self.holds is None:
            return "**not checked**" if self.printed else "n/a"
        if not self.tells():
            return "**cannot tell**"
        return "holds" if self.holds else "**fails**"

    def row(self) -> str:
        alt = self.alternative
        named = "" if alt is None else f"; {'excludes' if self.excludes_its_alternative() else 'cannot tell from'} {alt.what}"
        return f"| {self.scope} | {self.relation} | {self.thesis} | {self.ours} | {self.tolerance}{named} | {self.verdict} | {self.why} |"


#: How far our figure may be from the thesis's at each neighbour count, in points of a
#: fraction (min share as a fraction of drf's, error ratio), unless a row says why more
POINTS = 0.05
#: float slack of a tolerance: a figure exactly at the bound is within it
_EPS = 1e-9

#: table 5.1's relations: the policy, its tolerance in points of drf's minimum share, and
#: the policy whose figures are the nearest plausible alternative, which it must fail:
#: drf's 100 % for the policies that approximate it (table 5.1 has them 1.2-3.2 points
#: below it, so ± 2); fifo for ddrf-random (the thesis: "it can almost be compared to a
#: fifo-queue implementation with less neighbors"); ddrf-random, the other policy that
#: places at random, for probes; and ddrf-random, the one the thesis likens to it, for fifo
MIN_SHARE_CHECKS = (
    ("dgdrf", 0.02, "drf"),
    ("pdgdrf", 0.02, "drf"),
    ("ddrf-gradient", 0.02, "drf"),
    ("ddrf-random", POINTS, "fifo"),
    ("probes", POINTS, "ddrf-random"),
    ("fifo", POINTS, "ddrf-random"),
)


def near_at_each(published: dict[int, float], tol: float) -> Callable[[dict[int, float]], bool]:
    """The judge of a per-P figure: at every neighbour count P the thesis prints and we
    ran (at least one), |ours - the thesis's| <= ``tol``."""

    def judge(ours: dict[int, float]) -> bool:
        common = [nb for nb in ours if nb in published]
        return bool(common) and all(abs(ours[nb] - published[nb]) <= tol + _EPS for nb in common)

    return judge


def at_most(bound: float) -> Callable[[float], bool]:
    """The judge x <= ``bound``."""
    return lambda x: x <= bound


def within_ratio(want: float, rel: float) -> Callable[[float], bool]:
    """The judge |x / ``want`` - 1| <= ``rel``."""
    return lambda x: abs(x / want - 1) <= rel


def _pct_range(values: Iterable[float]) -> str:
    """Fractions as 'lo-hi' in per cent ('x' when they are all one)."""
    vals = list(values)
    lo, hi = _pct(min(vals)), _pct(max(vals))
    return lo if lo == hi else f"{lo}-{hi}"


def _off(off: list[int], common: list[int], ours: dict[int, float], published: dict[int, float]) -> str:
    """The neighbour counts P at which ours is beyond the tolerance, with both figures
    (at every P of four or more, ours the same at each: said once)."""
    if not off:
        return ""
    if len(off) == len(common) >= 4 and len({round(ours[nb], 3) for nb in off}) == 1:
        return f"; off at all {len(off)} P"
    return f"; off: {'; '.join(f'P={nb}: {_pct(ours[nb])} vs {_pct(published[nb])}' for nb in off)}"


def _points(lo: float, hi: float, signed: bool = False) -> str:
    """A range of differences of fractions, in points."""
    f = "+.1f" if signed else ".1f"
    a, b = format(100 * lo, f), format(100 * hi, f)
    return a if a == b else f"{a} to {b}"


#: How far PDGDRF's run-time relative to DRF's must fall from the fewest users to the most
#: for fig. 5.11's relation to hold: the thesis's halves and more; a ratio that ends where
#: it started, a few per cent lower, is no fall.
USERS_FALL = 0.25


def falls_as_users_grow(ratios: list[float]) -> bool:
    """Fig. 5.11's relation on PDGDRF / DRF run-time ratios ordered by users: the ratio
    at the most users is at most (1 - USERS_FALL) times the ratio at the fewest."""
    return len(ratios) >= 2 and ratios[-1] <= (1 - USERS_FALL) * ratios[0]


def _has_jobs(rec: dict) -> bool:
    """A run with finite jobs (its result has ``jobs``): it ends drained, when every task
    of every job has ended, and its final shares are those of an empty cluster."""
    return (rec.get("result") or {}).get("jobs") is not None


def _unreliable(row: dict) -> bool:
    """A run with message loss or duplication (``--loss``, ``--duplicate``)."""
    return bool(row.get("loss") or row.get("duplicate"))


def _span(by_p: dict[int, float]) -> str:
    """Ratios by neighbour count as 'lo-hi over P' (one value: just it)."""
    vals = list(by_p.values())
    if len(vals) == 1:
        return f"{vals[0]:.2f}"
    return f"{min(vals):.2f}-{max(vals):.2f} over P"


def _policy_rank(p: str) -> tuple[int, str]:
    return (POLICY_ORDER.index(p) if p in POLICY_ORDER else len(POLICY_ORDER), p)


def _fmt(v: float | None, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    # large values as grouped integers: 4 significant digits would switch to e-notation
    return f"{v:.{digits}g}" if abs(v) < 10 ** digits else f"{v:,.0f}"


def _pct(v: float | None) -> str:
    """A ratio as a percentage; one decimal, except that a small non-zero ratio keeps two
    significant digits (a few wrong allocations in 10,000 are not "0.0 %")."""
    if v is None:
        return "–"
    return f"{100 * v:.2g} %" if 0 < abs(v) < 0.001 else f"{100 * v:.1f} %"


class Runs:
    """The successful runs of a sweep, as flat rows with their full records."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = [r for r in records if r.get("status") == "ok" and r.get("result")]
        rows = [flat_row(r) | {"_rec": r} for r in self.records]
        self.all_rows = _at_every_neighbour_count(rows)
        #: runs with jobs, one row each (not repeated at every neighbour count): the Jobs section's
        self.job_rows = [r for r in rows if _has_jobs(r["_rec"])]
        #: runs cut short by max_time (the scaling benchmark's) say nothing of fairness or
        #: run-time; nor, of the thesis's, do runs with jobs (final shares 0, time to drain)
        self.rows = [r for r in self.all_rows if r.get("stop_reason") != "max_time" and not _has_jobs(r["_rec"])]
        self.extra = sorted({k for r in self.records for k in r["params"]} - set(_IDENTITY))

    def values(self, key: str, rows: Iterable[dict] | None = None) -> list[Any]:
        rows = self.rows if rows is None else rows
        order: Callable[[Any], Any]
        if key == "policy":
            order = _policy_rank
        elif key == "dataset":
            order = natural_key  # 30x5 before 30x10
        else:
            order = lambda v: (0, v)  # noqa: E731
        return sorted({r[key] for r in rows if r.get(key) is not None}, key=order)

    def varying_extra(self, rows: list[dict]) -> list[str]:
        return [k for k in self.extra if len({json.dumps(r.get(k)) for r in rows}) > 1]

    def by(self, rows: list[dict], keys: Iterable[str]) -> dict[tuple, list[dict]]:
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for r in rows:
            groups[tuple(json.dumps(r.get(k)) if isinstance(r.get(k), (list, dict)) else r.get(k) for k in keys)].append(r)
        return groups


def _at_every_neighbour_count(rows: list[dict]) -> list[dict]:
    """A centralized policy's run stands for every neighbour count of its data set (a
    sweep runs it once): the figures and tables against neighbours show it as a flat line,
    as the thesis's do. Counts at which the same condition already ran are not added."""
    from dgdrf.bench.grid import uses_neighbors

    counts: dict[Any, set] = defaultdict(set)
    for r in rows:
        if uses_neighbors(r["policy"]):
            counts[r.get("dataset")].add(r["neighbors"])

    def condition(r: dict) -> str:
        return json.dumps({k: v for k, v in r["_rec"]["params"].items() if k != "neighbors"}, sort_keys=True)

    ran: dict[str, set] = defaultdict(set)
    for r in rows:
        if not uses_neighbors(r["policy"]):
            ran[condition(r)].add(r["neighbors"])
    out = list(rows)
    for r in rows:
        if not uses_neighbors(r["policy"]):
            key = condition(r)
            missing = sorted(counts[r.get("dataset")] - ran[key])
            ran[key].update(missing)
            out += [r | {"neighbors": nb} for nb in missing]
    return out


def _stats(values: list[float]) -> tuple[float, float, float]:
    a = np.asarray([v for v in values if v is not None], dtype=float)
    if a.size == 0:
        return (float("nan"),) * 3
    return float(np.median(a)), float(a.min()), float(a.max())


def _figure(width: float = 6.4, height: float = 4.0, ncols: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def _median(values: list[Any]) -> float | None:
    """The median of the values that are not None (None if none is)."""
    got = [float(v) for v in values if v is not None]
    return float(np.median(got)) if got else None


def _grid(n: int, ncols: int, width: float, height: float):
    """A figure of ``n`` panels, ``ncols`` to a row (small multiples)."""
    from matplotlib.figure import Figure

    nrows = -(-n // ncols)
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, [fig.add_subplot(nrows, ncols, i + 1) for i in range(n)]


def _series_label(policy: str, extra: dict[str, Any]) -> str:
    return policy + "".join(f", {k}={v}" for k, v in extra.items())


class Report:
    def __init__(self, results_dirs: list[Path], out: Path, html: bool = False) -> None:
        self.dirs, self.out = results_dirs, out
        #: also report.html: the figures drawn as PNGs, as interactive figures (by file name)
        self.html = html
        self.interactive: dict[str, list[dict[str, Any]]] = {}
        #: per figure (file name), each run behind its points: where it lies, what names it
        #: on hover, and its page if the sweep made one (``dgdrf sweep --html``)
        self.run_points: dict[str, list[dict[str, Any]]] = {}
        self._page_links: dict[str, str] = {}
        by_key: dict[str, dict[str, Any]] = {}
        self.unreadable = 0
        self.manifests: list[dict[str, Any]] = []
        for d in results_dirs:
            records, bad = read_records(d)
            self.unreadable += bad
            by_key.update((r["key"], r) for r in records)
            try:
                self.manifests.append(json.loads((d / SWEEP_JSON).read_text(encoding="utf-8")) | {"_dir": str(d)})
            except (OSError, ValueError):
                self.manifests.append({"_dir": str(d), "name": d.name})
        if not by_key:
            raise ConfigError(f"{', '.join(map(str, results_dirs))}: no results found (results.jsonl.gz missing or empty); run `dgdrf sweep` first")
        #: runs recorded with code that has changed since (staleness.is_stale): left out
        self.stale: list[dict[str, Any]] = []
        self.all: list[dict[str, Any]] = []
        for r in by_key.values():
            (self.stale if is_stale(r) else self.all).append(r)
        if not self.all:
            raise ConfigError(f"{', '.join(map(str, results_dirs))}: every recorded run used code that has changed since ({len(self.stale)} runs); run the sweep again")
        self.stale_rows = [flat_row(r) for r in self.stale]
        self.failed = [r for r in self.all if r.get("status") != "ok"]
        self.runs = Runs(self.all)
        self.md: list[str] = []
        self.figures: list[str] = []

    # -- helpers ------------------------------------------------------------------------
    def save(self, fig, name: str, caption: str) -> None:
        fig.savefig(self.out / name, dpi=110)
        if self.html:  # the same figure, interactive, for report.html (dgdrf/pages/report_page.py)
            from dgdrf.pages.from_matplotlib import axes_figures

            self.interactive[name] = axes_figures(fig)
        self.figures.append(name)
        self.md.append(f"![{caption}]({name})\n\n*{caption}*\n")

    def note_runs(self, figure: str, points: Iterable[tuple[dict, Any, Any]], panel: int = 0) -> None:
        """The runs behind a figure's points, for its page: each (row, x, y) in the
        figure's ``panel`` (its axes, in order), named by its policy, neighbours, seed,
        loss and data set, with the relative path of its page where one was made
        (``dgdrf sweep --html``: DIR/pages/KEY.html). Only with ``html``."""
        if not self.html:
            return
        marks = self.run_points.setdefault(figure, [])
        for r, x, y in points:
            key = r["_rec"]["key"]
            link = self._page_link(key)
            params = r["_rec"]["params"]
            name = ", ".join(f"{k} {params[k]}" for k in ("policy", "neighbors", "seed", "loss", "dataset") if k in params)
            marks.append({"x": x, "y": y, "panel": panel, "text": f"{name}<br>{key}" + ("<br>click: its page" if link else ""), "link": link})

    def _page_link(self, key: str) -> str:
        """The path of run ``key``'s page relative to the report, or "" (looked for once
        per run, in the sweeps' directories)."""
        link = self._page_links.get(key)
        if link is None:
            page = next((d / PAGES / f"{key}.html" for d in self.dirs if (d / PAGES / f"{key}.html").exists()), None)
            link = self._page_links[key] = os.path.relpath(page, self.out) if page is not None else ""
        return link

    def seeds_note(self, rows: list[dict]) -> str:
        seeds = self.runs.values("seed", rows)
        if len(seeds) <= 1:
            return f"seed {seeds[0]}" if seeds else ""
        # a partly run grid: say which points rest on fewer seeds than the others
        per_point: dict[tuple[str, Any], set] = {}
        for r in rows:
            per_point.setdefault((_variant(r), r.get("neighbors")), set()).add(r["seed"])
        fewer: dict[tuple[str, int], list] = {}
        for (variant, nb), got in sorted(per_point.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
            if len(got) < len(seeds):
                fewer.setdefault((variant, len(got)), []).append(nb)
        note = f"median of {'up to ' if fewer else ''}{len(seeds)} seeds ({', '.join(map(str, seeds))}); band: min–max"
        if fewer:
            note += "; " + ", ".join(f"{v} at P={'/'.join(map(str, nbs))}: {k} seed{'s' if k > 1 else ''}" for (v, k), nbs in fewer.items())
        return note

    # -- sections -------------------------------------------------------------------------
    def header(self) -> None:
        names = [m.get("name") or Path(m["_dir"]).name for m in self.manifests]
        self.md.append(f"# Sweep{'s' if len(names) > 1 else ''} {', '.join(f'`{n}`' for n in names)}\n")
        every = self.runs.all_rows  # the header describes every run, also those cut by max_time

        def listed(key: str) -> str:
            return ", ".join(map(str, self.runs.values(key, every)))

        grid = sum(m.get("runs", 0) for m in self.manifests)
        lines = [
            f"- runs: {len(self.runs.records)} succeeded, {len(self.failed)} failed" + (f", {self.unreadable} unreadable lines skipped" if self.unreadable else "") + (f" (grid: {grid})" if grid else ""),
        ]
        if self.stale:
            changed = sorted({f"{r['params'].get('policy')}: {why}" for r in self.stale for why in stale_because(r)})
            lines.append(f"- left out: {len(self.stale)} runs recorded with code that has changed since ({'; '.join(changed)}); `dgdrf sweep` runs each again with the current code")
        lines += [
            f"- policies: {listed('policy')}; neighbours: {listed('neighbors')}; seeds: {listed('seed')}",
            f"- data sets: {', '.join(f'{d} ' + self._size(d) for d in self.runs.values('dataset', every))}",
        ]
        if self.runs.extra:
            lines.append("- other parameters: " + "; ".join(f"{k} = {listed(k)}" for k in self.runs.extra))
        if self.runs.job_rows:
            jobs = self.runs.job_rows
            lines.append(f"- runs with jobs that arrive and finish: {len(jobs)} of {len(self.runs.records)}, on {', '.join(self.runs.values('dataset', jobs))}; the thesis's sections leave them out (see Jobs)")
        for m in self.manifests:
            if m.get("sessions"):
                cpus = m.get("machine", {}).get("cpus")
                lines.append(f"- `{m.get('name')}`: {m.get('runs', '?')} runs, sweep wall time {m['wall_s'] / 60:.1f} min over {len(m['sessions'])} session(s), {m['sessions'][-1].get('workers')} worker{'s' if m['sessions'][-1].get('workers') != 1 else ''} on {cpus} cores (last session)")
            if m.get("source"):
                lines.append(f"  - rerun: `dgdrf sweep {m['source']} --out {m['_dir']}`")
        lines.append(f"- summed wall time of the runs: {sum(r.get('wall_s') or 0 for r in self.all) / 60:.1f} min")
        lines.append(f"- report: `dgdrf report {' '.join(m['_dir'] for m in self.manifests)}" + (f" --out {self.out}`" if len(self.manifests) > 1 or str(self.out) != self.manifests[0]['_dir'] else "`"))
        self.md.append("\n".join(lines) + "\n")
        if self.failed:
            self.md.append("## Failed runs\n")
            self.md.append("| key | parameters | error |\n|---|---|---|")
            for r in self.failed[:20]:
                self.md.append(f"| {r['key']} | {', '.join(f'{k}={v}' for k, v in r['params'].items() if k != 'scenario_digest')} | {str(r.get('error')).replace('|', '/')} |")
            if len(self.failed) > 20:
                self.md.append(f"| … | {len(self.failed) - 20} more | |")
            self.md.append("")

    def _size(self, dataset: str) -> str:
        rows = [r for r in self.runs.all_rows if r["dataset"] == dataset]
        return f"({rows[0]['servers']} servers, {rows[0]['users']} users)" if rows else ""

    def neighbour_figures(self) -> None:
        """Figs. 5.1-5.5 and 5.8-5.10, tables 5.1-5.4: measures against neighbours."""
        measures = (
            ("min_share", "minimum global dominant share", "min share (higher is fairer)", "thesis figs. 5.1/5.4"),
            ("gini", "Gini coefficient of dominant shares", "Gini (lower is fairer)", "thesis figs. 5.2-5.3/5.5"),
            ("error_ratio", "error ratio (allocations DRF would not have made)", "error ratio", "thesis tables 5.3/5.4"),
            ("runtime_s", "run-time to saturation", "simulated seconds", "thesis figs. 5.8-5.10"),
        )
        for dataset in self.runs.values("dataset"):
            rows = [r for r in self.runs.rows if r["dataset"] == dataset]
            if len(self.runs.values("neighbors", rows)) < 2:
                continue
            extra = self.runs.varying_extra(rows)
            if set(extra) - {"gradient_period"} and len(extra) > 1:
                continue  # too many dimensions for one plot; other figures cover them
            self.md.append(f"## {dataset} {self._size(dataset)}: against neighbours\n")
            for key, title, ylabel, ref in measures:
                fig, (ax,) = _figure()
                groups = self.runs.by(rows, ["policy", *extra])
                for gk in sorted(groups, key=lambda g: (_policy_rank(g[0]), g[1:])):
                    grp = groups[gk]
                    xs = self.runs.values("neighbors", grp)
                    st = [_stats([r[key] for r in grp if r["neighbors"] == x]) for x in xs]
                    med = [s[0] for s in st]
                    line = ax.plot(xs, med, marker="o", label=_series_label(gk[0], dict(zip(extra, gk[1:]))))[0]
                    self.note_runs(f"{key}_vs_neighbors_{dataset}.png", [(r, r["neighbors"], r[key]) for r in grp])
                    if len(self.runs.values("seed", grp)) > 1:
                        ax.fill_between(xs, [s[1] for s in st], [s[2] for s in st], alpha=0.15, color=line.get_color())
                ax.set_xlabel("neighbours per server (gradient / overlay view size P)")
                ax.xaxis.set_major_locator(_integer_locator())
                ax.set_ylabel(ylabel)
                if key == "error_ratio":
                    ax.yaxis.set_major_formatter(_percent_formatter())
                note = f"{dataset}, {self.seeds_note(rows)}"
                ax.set_title("\n".join([title, *textwrap.wrap(note, 72)]), fontsize=9)
                ax.grid(alpha=0.3)
                ax.legend(fontsize=7, ncols=2)
                self.save(fig, f"{key}_vs_neighbors_{dataset}.png", f"{title} against neighbours, {note} ({ref})")
                self.table(rows, key, extra, title, percent=key == "error_ratio")

    def table(self, rows: list[dict], key: str, extra: list[str], title: str, percent: bool = False) -> None:
        groups = self.runs.by(rows, ["policy", *extra])
        cols = sorted(groups, key=lambda g: (_policy_rank(g[0]), g[1:]))
        nbs = self.runs.values("neighbors", rows)
        spread = len(self.runs.values("seed", rows)) > 1
        self.md.append(f"{title}" + (" (median [min, max] over seeds)" if spread else "") + ":\n")
        self.md.append("| neighbours | " + " | ".join(_series_label(c[0], dict(zip(extra, c[1:]))) for c in cols) + " |")
        self.md.append("|---" * (len(cols) + 1) + "|")
        f = _pct if percent else _fmt
        for nb in nbs:
            cells = []
            for c in cols:
                vals = [r[key] for r in groups[c] if r["neighbors"] == nb]
                if not vals:
                    cells.append("–")
                    continue
                med, lo, hi = _stats(vals)
                cells.append(f(med) + (f" [{f(lo)}, {f(hi)}]" if spread and lo != hi else ""))
            self.md.append(f"| {nb} | " + " | ".join(cells) + " |")
        self.md.append("")

    def error_curves(self) -> None:
        """Figs. 5.6-5.7: cumulative error ratio over the allocations of one run per
        erring policy (its smallest neighbour count, first seed), at each tolerance."""
        for dataset in self.runs.values("dataset"):
            rows = [r for r in self.runs.rows if r["dataset"] == dataset and (r["error_ratio"] or 0) > 0]
            policies = [p for p in self.runs.values("policy", rows) if p not in ("fifo",)]
            if not policies:
                continue
            fig, axes = _figure(4.2, 3.6, len(policies))
            notes = []
            for ax, policy in zip(axes, policies):
                grp = [r for r in rows if r["policy"] == policy]
                nb = min(r["neighbors"] for r in grp)
                run = min((r for r in grp if r["neighbors"] == nb), key=lambda r: r["seed"])
                curve = run["_rec"]["result"].get("error_curve", {})
                for key, label in TOLERANCES:
                    if curve.get(key):
                        ax.plot(curve["allocations"], curve[key], label=label if key == "exact" else f"within {label} counted correct")
                ax.set_title(f"{policy}, P={nb}, seed {run['seed']}", fontsize=9)
                ax.set_xlabel("allocations made")
                ax.set_ylabel("cumulative error ratio")
                ax.yaxis.set_major_formatter(_percent_formatter())
                ax.set_ylim(0, 1)
                ax.grid(alpha=0.3)
                notes.append(f"{policy} P={nb}")
            axes[0].legend(fontsize=7)
            self.md.append(f"## {dataset}: error ratio over a run\n")
            self.save(fig, f"error_curve_{dataset}.png", f"error ratio over the allocations, {dataset}: {', '.join(notes)}; tolerance = how far above the minimum dominant share a user may be and not count as an error (thesis figs. 5.6-5.7)")

    def ratio_to_drf(self, x_key: str, x_label: str, fig_ref: str, transform: Callable[[dict], float] | None = None) -> None:
        """A policy's run-time divided by drf's on the same data set, seed and neighbours,
        against ``x_key`` (fig. 5.11: users; fig. 5.12: gradient exchanges per tick)."""
        rows = self.runs.rows
        xval = transform or (lambda r: r[x_key])
        base: dict[tuple, float] = {}
        for r in rows:
            if r["policy"] == "drf" and r["runtime_s"]:
                base[(r["dataset"], r["seed"], r.get("tick"))] = r["runtime_s"]
        pairs = []
        for r in rows:
            k = (r["dataset"], r["seed"], r.get("tick"))
            if r["policy"] == "drf" or k not in base or not r["runtime_s"]:
                continue
            try:
                x = xval(r)
            except (TypeError, KeyError, ZeroDivisionError):
                continue
            if x is not None and (x_key != "users" or r.get("data_seed") is not None):
                pairs.append((r, r["runtime_s"] / base[k], x))
        gradient = [p for p in pairs if p[0]["policy"] in ("pdgdrf", "dgdrf")]
        pairs = gradient or pairs  # the thesis draws PDGDRF (and we add DGDRF); others only if alone
        if len({x for _, _, x in pairs}) < 2:
            return
        pk = "servers" if x_key == "users" else "users"
        panels = self.runs.values(pk, [r for r, _, _ in pairs])
        fig, axes = _figure(5.0, 3.8, len(panels))
        table = []
        slug = "users" if x_key == "users" else "gradient_rate"
        for n, (ax, panel) in enumerate(zip(axes, panels)):
            sel = [(r, q, x) for r, q, x in pairs if r[pk] == panel]
            self.note_runs(f"runtime_ratio_vs_{slug}.png", [(r, x, q) for r, q, x in sel], panel=n)
            series: dict[tuple, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
            for r, q, x in sel:
                series[(_variant(r), r["neighbors"])][x].append(q)
            for (policy, nb), pts in sorted(series.items(), key=lambda kv: (_policy_rank(kv[0][0].split(" ")[0]), kv[0])):
                xs = sorted(pts)
                st = [_stats(pts[x]) for x in xs]
                line = ax.plot(xs, [s[0] for s in st], marker="o", label=f"{policy} / drf, P={nb}")[0]
                if any(len(pts[x]) > 1 for x in xs):
                    ax.fill_between(xs, [s[1] for s in st], [s[2] for s in st], alpha=0.15, color=line.get_color())
                table += [(panel, policy, nb, x, s[0], len(pts[x])) for x, s in zip(xs, st)]
            ax.axhline(1.0, ls="--", color="grey", lw=1)
            ax.set_xlabel(x_label)
            if x_key == "users":
                ax.xaxis.set_major_locator(_integer_locator())
            ax.set_ylabel("run-time / drf's run-time (lower is faster)")
            ax.set_title("\n".join(textwrap.wrap(f"{panel} {pk}, {self.seeds_note([r for r, _, _ in sel])}", 70)), fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        self.md.append(f"## Run-time relative to drf against {x_label}\n")
        self.save(fig, f"runtime_ratio_vs_{slug}.png", f"run-time relative to centralized drf against {x_label} ({fig_ref}); dashed: equal to drf")
        self.md.append(f"| {pk} | policy | P | {x_label} | median ratio | seeds |\n|---|---|---|---|---|---|")
        for panel, policy, nb, x, med, n in table:
            self.md.append(f"| {panel} | {policy} | {nb} | {_fmt(x)} | {med:.2f} | {n} |")
        self.md.append("")

    # -- jobs that arrive and finish ------------------------------------------------------
    def jobs(self) -> None:
        """Runs with jobs (the result's ``jobs``, ``samples``, time-averaged shares): per
        scenario, the JCT distribution per policy, each user's share and the cluster's
        utilisation over time, and a table of JCT, makespan and fairness against drf's."""
        rows = self.runs.job_rows
        if not rows:
            return
        self.md.append("## Jobs\n")
        scale = sorted({r["_rec"]["result"]["time_scale"] for r in rows if r["_rec"]["result"].get("time_scale")})
        scaled = f" Times are run seconds: the workload's divided by the run's time scale ({', '.join(f'{x:g}' for x in scale)})." if scale else ""
        self.md.append(
            f"{len(rows)} runs whose users have jobs that arrive and finish; a run ends drained when every task of every job has ended. "
            "A job's completion time (JCT) is its last task's end less its arrival, in seconds from the start of allocation; the makespan is when the last task ended. "
            "Fairness is over each user's (weighted) dominant share averaged over the time it competed, that is had a task pending (Jain's index: 1 is even; Gini: 0 is even): the final shares of a drained cluster are all 0, "
            "and averaged over the whole run a user's share is its work divided by the run's length, the same under every policy that drains the same jobs. "
            "The thesis's sections leave these runs out (figures against neighbours, error ratio over a run, run-time relative to drf, what loss costs, the emulator's cost, and every thesis relation but how runs ended), "
            f"since they are of endless users measured at saturation; the endings and the messages per tick include them.{scaled}\n"
        )
        for dataset in self.runs.values("dataset", rows):
            series = self._job_series([r for r in rows if r["dataset"] == dataset])
            self.md.append(f"### {dataset} {self._size(dataset)}\n")
            self._jct_cdf(dataset, series)
            self._shares_over_time(dataset, series)
            self._jobs_table(dataset, series)

    def _job_series(self, rows: list[dict]) -> list[tuple[str, list[dict], list[dict] | None]]:
        """The runs of one scenario by series: the policy and its variant, the neighbour
        count where a distributed policy ran at several, and the other parameters that
        vary; each with its drf runs under the same other parameters (None if there are none)."""
        from dgdrf.bench.grid import uses_neighbors
        from dgdrf.config import RunConfig

        labelled = {d.name for d in RunConfig.options() if d.option.label}  # already in the variant's name
        extra = [k for k in self.runs.varying_extra(rows) if k not in labelled]
        several_p = len(self.runs.values("neighbors", [r for r in rows if uses_neighbors(r["policy"])])) > 1
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for r in rows:
            nb = r["neighbors"] if several_p and uses_neighbors(r["policy"]) else None
            groups[(_variant(r), nb, tuple(json.dumps(r.get(k)) for k in extra))].append(r)
        drf = {others: grp for (variant, nb, others), grp in groups.items() if variant == "drf"}
        out = []
        for (variant, nb, others), grp in sorted(groups.items(), key=lambda kv: (_policy_rank(kv[0][0].split(" ")[0]), kv[0][0], kv[0][1] or 0, kv[0][2])):
            label = _series_label(variant + (f", P={nb}" if nb is not None else ""), {k: json.loads(v) for k, v in zip(extra, others)})
            out.append((label, grp, drf.get(others)))
        return out

    @staticmethod
    def _jcts(rows: list[dict]) -> tuple[list[float], int]:
        """The JCTs of the jobs that finished in ``rows``, pooled, and how many jobs there were."""
        jobs = [j for r in rows for j in r["_rec"]["result"]["jobs"]]
        return sorted(float(j["jct"]) for j in jobs if j.get("jct") is not None), len(jobs)

    def _jct_cdf(self, dataset: str, series: list[tuple[str, list[dict], list[dict] | None]]) -> None:
        if not any(self._jcts(grp)[0] for _, grp, _ in series):
            self.md.append(f"No job finished on {dataset}: no distribution of job completion times.\n")
            return
        fig, (ax,) = _figure()
        if len(series) > 10:  # the default cycle has 10 colours
            from matplotlib import colormaps

            ax.set_prop_cycle(color=[colormaps["tab20"](i % 20) for i in range(len(series))])
        lo, hi, unfinished = float("inf"), 0.0, 0
        for label, grp, _ in series:
            jcts, n = self._jcts(grp)
            unfinished += n - len(jcts)
            if not jcts:
                continue
            ys = np.arange(1, len(jcts) + 1) / n
            ax.step([jcts[0], *jcts], [0.0, *ys], where="post", label=label)
            positive = [x for x in jcts if x > 0]
            lo, hi = min([lo, *positive[:1]]), max(hi, jcts[-1])
        log = 0 < lo < float("inf") and hi / lo > 100
        if log:
            ax.set_xscale("log")
        ax.set_xlabel("job completion time (s)" + (", log scale" if log else ""))
        ax.set_ylabel("fraction of jobs finished within")
        ax.yaxis.set_major_formatter(_percent_formatter())
        ax.set_ylim(0, 1.02)
        seeds = self.runs.values("seed", [r for _, grp, _ in series for r in grp])
        note = f"{dataset}, every job of every seed pooled per policy (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})"
        ax.set_title("\n".join(["job completion times (CDF)", *textwrap.wrap(note, 72)]), fontsize=9)
        ax.grid(alpha=0.3, which="both" if log else "major")
        ax.legend(fontsize=7)
        left = f"; {unfinished} jobs did not finish: their policies' lines end below 100 %" if unfinished else ""
        self.save(fig, f"jct_cdf_{dataset}.png", f"distribution of job completion times (finish − arrival), {note}{left}")

    def _shares_over_time(self, dataset: str, series: list[tuple[str, list[dict], list[dict] | None]]) -> None:
        """Small multiples, one panel per series: each user's share over time, from the
        samples of the series' run of lowest seed, and dashed the cluster's utilisation."""
        panels: list[tuple[str, dict, dict]] = []  # label, the run, its samples
        sparse: list[tuple[str, dict, dict]] = []
        for label, grp, _ in series:
            run = min(grp, key=lambda r: r["seed"])
            samples = run["_rec"]["result"].get("samples") or {}
            (panels if len(samples.get("time") or []) >= MIN_SAMPLES else sparse).append((label, run, samples))
        if not panels:
            every = sorted({float(s["every"]) for _, _, s in sparse if s.get("every") is not None})
            self.md.append(f"No shares over time: each policy's run has fewer than {MIN_SAMPLES} samples (one every {', '.join(f'{x:g}' for x in every) or '–'} s); a sweep's run parameter sample_every, a fraction of the makespan, gives them.\n")
            return
        ncols = min(3, len(panels))
        nrows = -(-len(panels) // ncols)
        fig, axes = _grid(len(panels), ncols, 4.2, 3.0)
        end = max(s["time"][-1] for _, _, s in panels)
        top = max([1.0, *(max(v, default=0.0) for _, _, s in panels for v in s["shares"].values())])
        styles = ("--", ":", "-.")
        users = max(len(s["shares"]) for _, _, s in panels)
        for ax, (label, run, s) in zip(axes, panels):
            for u, ys in s["shares"].items():
                ax.step(s["time"], ys, where="post", lw=1.0, label=u)
            for k, (res, ys) in enumerate(s["utilization"].items()):
                ax.step(s["time"], ys, where="post", lw=0.7, ls=styles[k % len(styles)], color="0.3", label=f"{res} utilisation")
            ax.set_title(f"{label}, seed {run['seed']}", fontsize=9)
            ax.set_xlim(0, end)
            ax.set_ylim(0, top * 1.03)
            ax.grid(alpha=0.3)
        for i, ax in enumerate(axes):
            if i // ncols == nrows - 1 or i + ncols >= len(axes):
                ax.set_xlabel("seconds from the start of allocation")
            if i % ncols == 0:
                ax.set_ylabel("dominant share / utilisation")
        handles, names = axes[0].get_legend_handles_labels()
        if users > 12:  # a legend of every user would be taller than the figure
            handles, names = handles[users:], names[users:]
        fig.legend(handles, names, loc="outside right upper", fontsize=7)
        seeds = sorted({run["seed"] for _, run, _ in panels})
        every = sorted({float(s["every"]) for _, _, s in panels if s.get("every") is not None})
        which = f"seed {seeds[0]}, the lowest" if len(seeds) == 1 else "the lowest seed of each (in its title)"
        weighted = any(r["_rec"]["result"].get("weights") for _, grp, _ in series for r in grp)
        missing = f"; not drawn, fewer than {MIN_SAMPLES} samples: {', '.join(label for label, _, _ in sparse)}" if sparse else ""
        self.save(fig, f"shares_over_time_{dataset}.png", f"each user's {'weighted ' if weighted else ''}dominant share over time and, grey dashed and dotted, the cluster's utilisation of each resource, {dataset}: one panel per policy, its run of {which}, sampled every {', '.join(f'{x:g}' for x in every)} s{missing}")

    def _jobs_table(self, dataset: str, series: list[tuple[str, list[dict], list[dict] | None]]) -> None:
        def measures(grp: list[dict]) -> dict[str, float | None]:
            jcts, _ = self._jcts(grp)
            res = [r["_rec"]["result"] for r in grp]
            return {
                "mean": float(np.mean(jcts)) if jcts else None,
                "p95": float(np.percentile(jcts, 95)) if jcts else None,
                "makespan": _median([x.get("makespan") for x in res]),
                "jain": _median([x.get("jain_time_avg") for x in res]),
                "gini": _median([x.get("gini_time_avg") for x in res]),
            }

        def vs(v: float | None, base: float | None) -> str:
            return f"x{v / base:.2f}" if v is not None and base else "–"

        spread = len(self.runs.values("seed", [r for _, grp, _ in series for r in grp])) > 1
        per_run = (
            "medians over seeds of the makespan (of the runs that drained), of Jain's index and of the Gini coefficient over time-averaged shares"
            if spread
            else "the makespan (if the run drained), Jain's index and the Gini coefficient over time-averaged shares"
        )
        self.md.append(
            f"Per policy on {dataset}: mean and p95 JCT over every job of every run pooled; {per_run}. "
            "*vs drf*: the ratio to drf's under the same parameters (JCT and makespan: below 1 is faster; Jain's index: above 1 is fairer; Gini: below 1 is fairer).\n"
        )
        self.md.append("| policy | runs | ended | mean JCT (s) | vs drf | p95 JCT (s) | vs drf | makespan (s) | vs drf | Jain, time-avg | vs drf | Gini, time-avg | vs drf |")
        self.md.append("|---" * 13 + "|")
        for label, grp, drf in series:
            m = measures(grp)
            base = measures(drf) if drf is not None and drf is not grp else None
            stops = self._count(r["stop_reason"] for r in grp)
            ended = ", ".join(f"{n} {k}" for k, n in sorted(stops.items()))
            jcts, n = self._jcts(grp)
            if len(jcts) < n:
                ended += f" ({n - len(jcts)} of {n} jobs unfinished)"
            cells = [label, str(len(grp)), ended]
            for key in ("mean", "p95", "makespan", "jain", "gini"):
                cells += [_fmt(m[key]), "" if base is None else vs(m[key], base[key])]
            self.md.append("| " + " | ".join(cells) + " |")
        self.md.append("")

    def loss_costs(self) -> None:
        """What message loss and duplication cost each policy: min share, error ratio and
        run-time against the same runs without loss (medians over neighbours and seeds)."""
        recs = [r for r in self.runs.records if ("loss" in r["params"] or "duplicate" in r["params"]) and not _has_jobs(r)]
        conditions = {(r["params"].get("loss", 0.0), r["params"].get("duplicate", 0.0)) for r in recs}
        if len(conditions) < 2:
            return
        self.md.append("## What message loss costs\n")
        self.md.append("Each protocol step that waits for an answer is sent again every 0.25 s until it comes (nodes/protocol.py), so every run still ends as without loss; what it costs is time, and for the distributed policies a different order of allocations. *same tasks*: every user holds as many tasks as without loss.\n")
        self.md.append("| data set | policy | loss | duplicate | ended | min share | vs no loss | error ratio | run-time (s) | vs no loss | same tasks |\n|---|---|---|---|---|---|---|---|---|---|---|")
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for r in recs:
            p = r["params"]
            groups[(p.get("dataset"), p.get("policy"), p.get("loss", 0.0), p.get("duplicate", 0.0))].append(r)

        def base_of(key: tuple) -> list[dict]:
            return groups.get((key[0], key[1], 0.0, 0.0), [])

        for key in sorted(groups, key=lambda k: (str(k[0]), _policy_rank(k[1]), k[2], k[3])):
            rs = groups[key]
            ms = _stats([r["result"]["min_share"] for r in rs])[0]
            er = _stats([r["result"]["error_ratio"] for r in rs])[0]
            rt = _stats([r["result"]["runtime_s"] for r in rs])[0]
            ended = ", ".join(f"{n} {k}" for k, n in sorted(self._count(r["result"].get("stop_reason") for r in rs).items()))
            base = base_of(key)
            if base and key[2:] != (0.0, 0.0):
                bms = _stats([r["result"]["min_share"] for r in base])[0]
                brt = _stats([r["result"]["runtime_s"] for r in base])[0]
                by_run = {(b["params"].get("neighbors"), b["params"].get("seed")): b["result"]["tasks"] for b in base}
                same = all(by_run.get((r["params"].get("neighbors"), r["params"].get("seed"))) == r["result"]["tasks"] for r in rs)
                vs_ms, vs_rt, same_s = f"{ms / bms - 1:+.1%}" if bms else "–", f"x{rt / brt:.2f}" if brt else "–", "yes" if same else "no"
            else:
                vs_ms = vs_rt = same_s = ""
            self.md.append(f"| {key[0]} | {key[1]} | {key[2]:g} | {key[3]:g} | {ended} | {ms:.4g} | {vs_ms} | {_pct(er)} | {rt:.1f} | {vs_rt} | {same_s} |")
        self.md.append("")

    @staticmethod
    def _count(items: Iterable[Any]) -> dict[Any, int]:
        out: dict[Any, int] = defaultdict(int)
        for x in items:
            out[x] += 1
        return dict(out)

    def message_costs(self) -> None:
        """Messages and bytes per allocation tick per policy, by protocol part (eqs. 4.3-4.6)."""
        rows = self.runs.rows + self.runs.job_rows  # a tick costs messages with jobs too
        groups = self.runs.by(rows, ["dataset", "policy"])
        parts = sorted({g for r in rows for g in r["_rec"]["result"].get("cost_per_tick", {}).get("by_group", {})})
        if not parts or not groups:
            return
        self.md.append("## Messages and bytes per allocation tick\n")
        drained = " (with jobs: until they drained)" if self.runs.job_rows else ""
        self.md.append(f"Median over neighbours and seeds, during the allocation phase{drained}; the thesis's worst-case models are eq. 4.3 (2|S|P for DDRF's share requests) and eq. 4.6 (2x|S| gradient messages for x exchanges per tick).\n")
        self.md.append("| data set | policy | messages/tick | bytes/tick | " + " | ".join(f"{p} msgs/tick" for p in parts) + " |")
        self.md.append("|---" * (4 + len(parts)) + "|")
        for (dataset, policy), grp in sorted(groups.items(), key=lambda kv: (kv[0][0], _policy_rank(kv[0][1]))):
            by = [r["_rec"]["result"].get("cost_per_tick", {}).get("by_group", {}) for r in grp]
            cells = [_fmt(_stats([b.get(p, {}).get("messages", 0.0) for b in by])[0]) for p in parts]
            self.md.append(f"| {dataset} | {policy} | {_fmt(_stats([r['messages_per_tick'] for r in grp])[0])} | {_fmt(_stats([r['bytes_per_tick'] for r in grp])[0])} | " + " | ".join(cells) + " |")
        self.md.append("")

    def emulator_cost(self) -> None:
        """The emulator's own cost against cluster size (bench/scaling.toml)."""
        rows = [r for r in self.runs.all_rows if r.get("data_seed") is not None and not _has_jobs(r["_rec"])]
        if len(self.runs.values("servers", rows)) < 2:
            return
        measures = (("wall_s", "wall seconds per run"), ("sim_per_wall", "simulated s per wall s"), ("messages_per_wall_s", "messages per wall second"), ("peak_rss_mb", "peak memory (MiB RSS)"))
        fig, axes = _figure(4.0, 3.4, len(measures))
        groups = self.runs.by(rows, ["policy", "users"])
        for k, (ax, (key, label)) in enumerate(zip(axes, measures)):
            self.note_runs("emulator_cost.png", [(r, r["servers"], r[key]) for r in rows], panel=k)
            for (policy, users), grp in sorted(groups.items(), key=lambda kv: (_policy_rank(kv[0][0]), kv[0][1])):
                xs = self.runs.values("servers", grp)
                ax.plot(xs, [_stats([r[key] for r in grp if r["servers"] == x])[0] for x in xs], marker="o", label=f"{policy}, {users} users")
            ax.set_xscale("log")
            if key != "peak_rss_mb":
                ax.set_yscale("log")
            ax.set_xlabel("servers")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3, which="both")
        axes[0].legend(fontsize=6)
        self.md.append("## The emulator's own cost\n")
        self.save(fig, "emulator_cost.png", "cost of emulating one run (to saturation, or its first max_time simulated seconds) against cluster size: wall time, simulated seconds per wall second, messages per wall second, peak memory of the run's process")
        self.md.append("| policy | servers | users | allocations | simulated s | wall s | sim s / wall s | msgs / wall s | peak MiB |\n|---|---|---|---|---|---|---|---|---|")
        for r in sorted(rows, key=lambda r: (_policy_rank(r["policy"]), r["servers"], r["users"], r["seed"])):
            sim = (r["runtime_s"] or 0) + (r["warmup_s"] or 0)
            self.md.append(f"| {r['policy']} | {r['servers']} | {r['users']} | {r['allocations']} | {sim:,.0f} | {r['wall_s']:.1f} | {_fmt(r['sim_per_wall'], 3)} | {_fmt(r['messages_per_wall_s'], 3)} | {_fmt(r['peak_rss_mb'], 3)} |")
        self.md.append("")

    def checks(self) -> list[Check]:
        """Every thesis relation on these results, each with its judge and alternative."""
        checks: list[Check] = []
        for dataset in self.runs.values("dataset", self.runs.all_rows):
            checks += self._dataset_checks(dataset)
        return checks + self._users_checks() + self._exchange_checks()

    def relations(self) -> None:
        """The thesis's findings held against ours: for every check the thesis's figure or
        range, ours, the tolerance with the alternative it excludes, and the verdict
        computed from the records (bench/thesis.py has the thesis's figures). The count
        covers the thesis's printed claims; our readings are listed apart. Runs that did
        not end at saturation are listed, and fail their data set's check."""
        checks = self.checks()
        if not checks:
            return
        self.md.append("## Thesis relations on these results\n")
        n_lossy = sum(_unreliable(r["params"]) for r in self.runs.records if not _has_jobs(r))
        lossy = f" The {n_lossy} runs with message loss or duplication are left out of every row but the first: the thesis's figures are of reliable delivery; what loss costs is in its own section below." if n_lossy else ""
        jobs = self.runs.job_rows
        with_jobs = f" The {len(jobs)} runs with jobs (on {', '.join(self.runs.values('dataset', jobs))}) have only the first row, how they ended: the thesis's relations are of its endless users, and a drained cluster's final shares are all 0; the Jobs section compares their policies." if jobs else ""
        self.md.append(
            "Each row: what the thesis reports (table, figure or text), our figure on these runs (medians over seeds at each neighbour count P), "
            "how far apart they may be and the nearest plausible other outcome that tolerance must fail (a tolerance that admits it cannot tell the thesis's claim from it: **cannot tell**), "
            "and the verdict, computed from the records. Our data sets are stand-ins, so shares are compared as fractions of drf's on the same data set, "
            "and each data set against the thesis's figures of the same data set: a figure the thesis prints only for another data set, or our summary of its tables, is a reading of ours, "
            f"listed apart and not counted. Where a relation fails, bench/README.md says why.{lossy}{with_jobs}\n"
        )
        header = "| data set | relation | thesis | ours | tolerance | verdict | why |\n|---|---|---|---|---|---|---|"
        counted = [c for c in checks if c.counted]
        scopes = list(dict.fromkeys(c.scope for c in counted))
        per_scope = "; ".join(f"{sc}: {sum(bool(c.holds) for c in counted if c.scope == sc)} of {sum(c.scope == sc for c in counted)}" for sc in scopes)
        held = f"{sum(bool(c.holds) for c in counted)} of {len(counted)} of the thesis's printed claims hold"
        self.md.append((f"**{held}** ({per_scope}).\n" if len(scopes) > 1 else f"**{held}.**\n"))
        printed = [c for c in checks if c.printed]
        if printed:
            self.md.append(header)
            self.md += [c.row() for c in printed]
            self.md.append("")
        readings = [c for c in checks if not c.printed]
        if readings:
            self.md.append("### Our readings (not counted: the thesis prints no such figure for the data set)\n")
            self.md.append(header)
            self.md += [c.row() for c in readings]
            self.md.append("")
        self._endings_table()

    def _unexpected_end(self, rec: dict) -> bool:
        """A run that did not end as its policy should: at saturation, with jobs drained
        (every task of every finite job ended), or for probes stranded (thesis 4.2); a
        max_time the sweep asked for (the scaling benchmark's) is intended, unless tasks
        of finite jobs were left unfinished (they were meant to drain)."""
        stop = rec["result"].get("stop_reason")
        if stop in NORMAL_ENDS or (stop == "stranded" and rec["params"].get("policy") == "probes"):
            return False
        if stop == "max_time" and "max_time" in rec["params"]:
            return bool(rec["result"].get("unfinished_tasks"))
        return True

    def _endings_table(self) -> None:
        bad = [r for r in self.runs.records if self._unexpected_end(r)]
        if not bad:
            return
        jobs = bool(self.runs.job_rows)
        self.md.append(f"## Runs that did not end at saturation{' or drain' if jobs else ''} (failures)\n")
        self.md.append("| data set | policy | P | seed | stop reason | allocations | parameters |\n|---|---|---|---|---|---|---|")
        for r in sorted(bad, key=lambda r: (str(r["params"].get("dataset")), _policy_rank(r["params"].get("policy", "")), r["params"].get("neighbors") or 0, r["params"].get("seed") or 0)):
            p, res = r["params"], r["result"]
            other = ", ".join(f"{k}={v}" for k, v in p.items() if k not in _IDENTITY)
            left = sum((res.get("unfinished_tasks") or {}).values())
            stop = f"{res.get('stop_reason')}" + (f" ({left} task{'s' if left != 1 else ''} of finite jobs unfinished)" if left else "")
            self.md.append(f"| {p.get('dataset')} | {p.get('policy')} | {p.get('neighbors')} | {p.get('seed')} | {stop} | {res.get('allocations')} | {other} |")
        self.md.append("")

    def _dataset_checks(self, dataset: str) -> list[Check]:
        # the thesis's figures are of reliable delivery (alg. 3 assumes it): runs with loss
        # or duplication are held against their own runs without, in loss_costs
        rows = [r for r in self.runs.rows if r["dataset"] == dataset and not _unreliable(r)]
        every = [r for r in self.runs.records if r["params"].get("dataset") == dataset]
        # runs with jobs are not in rows (their final shares are 0): only how they ended is checked
        jobs = any(_has_jobs(r) for r in every)
        if not rows and not jobs:
            return []

        checks: list[Check] = []
        # every run ends at saturation (thesis 1.5.5), with jobs drained; probes strands by construction (4.2)
        stops: dict[str, int] = defaultdict(int)
        for r in every:
            stops[r["result"].get("stop_reason")] += 1
        bad = sum(self._unexpected_end(r) for r in every)
        if jobs:
            relation, ref = "every run drains (every task of every job ends) or ends at saturation; probes may end stranded (4.2)", "runs end at saturation (1.5.5); jobs, which drain, are ours"
        else:
            relation, ref = "every run ends at saturation; probes may end stranded (4.2)", "runs end at saturation (1.5.5)"
        none = lambda n: n == 0  # noqa: E731
        checks.append(Check(dataset, relation, ref, ", ".join(f"{n} {k}" for k, n in sorted(stops.items())), "none", bad, none, Alternative("one run ending otherwise", 1)))
        if not rows:
            return checks
        size = (rows[0]["servers"], rows[0]["users"])
        is_thesis = size in thesis.ERROR_RATIO
        # each row's policy with its variant options, worked out once (variant_labels is slow)
        of: dict[str, list[dict]] = defaultdict(list)
        for r in rows:
            of[_variant(r)].append(r)
        have = set(of)
        nbs = self.runs.values("neighbors", rows)

        def med(p: str, key: str, nb: int | None = None) -> float:
            return _stats([r[key] for r in of[p] if (nb is None or r["neighbors"] == nb) and r.get(key) is not None])[0]

        def at_each(p: str) -> list[int]:
            return [nb for nb in nbs if any(r["neighbors"] == nb for r in of[p])]

        def seed_span(p: str, key: str, scale: float = 1.0) -> str:
            """How far our seeds lie apart at one P at most (empty for one seed)."""
            spans = {nb: _stats([r[key] * scale for r in of[p] if r["neighbors"] == nb and r.get(key) is not None]) for nb in at_each(p)}
            seeds = self.runs.values("seed", of[p])
            if len(seeds) < 2 or not spans:
                return ""
            nb = max(spans, key=lambda n: spans[n][2] - spans[n][1])
            if spans[nb][2] == spans[nb][1]:
                return f"our {len(seeds)} seeds agree at every P"
            return f"our {len(seeds)} seeds span up to {100 * (spans[nb][2] - spans[nb][1]):.1f} points at one P (P={nb}); the thesis ran once"

        # a policy whose every run here was made by code that has changed since would
        # otherwise drop out of the table unnoticed, with all the relations that name it
        waiting: dict[str, int] = defaultdict(int)
        for r in self.stale_rows:
            if r.get("dataset") == dataset and not _unreliable(r) and _variant(r) not in have:
                waiting[_variant(r)] += 1
        for p in sorted(waiting, key=_policy_rank):
            checks.append(Check(dataset, f"every relation of {p}", "see the rows of the other data sets", f"no run with the current code: its {waiting[p]} recorded runs here were made by code that has changed since (left out)", "none"))
        ref = "tables 5.3/5.4" if is_thesis else "tables 5.3/5.4, other sizes"
        if "dgdrf" in have:
            runs = of["dgdrf"]
            # counted, not as a rounded percentage: a few wrong allocations in 10,000 read as "0.0 %"
            wrong = sum(round(r["error_ratio"] * r["allocations"]) for r in runs)
            total = sum(r["allocations"] for r in runs)
            checks.append(Check(dataset, "dgdrf makes no errors, at every P", f"0.00 % at every P ({ref})", f"{wrong:,} wrong of {total:,} allocations in {len(runs)} runs", "none", wrong, none, Alternative("one wrong allocation", 1)))
        drf = med("drf", "min_share") if "drf" in have else None
        if drf:
            checks += self._min_share_checks(dataset, size, have, med, at_each, seed_span, drf)
            for pd in sorted(v for v in have if v.split(" ")[0] == "pdgdrf"):
                g, gd = med(pd, "gini"), med("drf", "gini")
                # the nearest Gini of the policies figs. 5.2-5.5 find less fair
                unfair = sorted((med(q, "gini"), q) for q in ("probes", "ddrf-random", "fifo") if q in have)
                alt = Alternative(f"{unfair[0][1]}'s {unfair[0][0]:.3g} (ours: the nearest of the policies figs. 5.2-5.5 find less fair)", unfair[0][0]) if unfair else None
                none_ran = "" if unfair else "no policy figs. 5.2-5.5 find less fair (probes, ddrf-random, fifo) ran here: nothing to tell the claim from"
                checks.append(Check(dataset, f"{pd}'s Gini stays close to drf's", "low Gini, near DRF's (figs. 5.2-5.5)", f"{g:.3g} vs drf {gd:.3g}", "+0.02", g, at_most(gd + 0.02), alt, none_ran))
        if is_thesis:
            checks += self._error_ratio_checks(dataset, size, have, med, at_each, seed_span)
        if {"ddrf-gradient", "ddrf-random", "dgdrf"} <= have:
            # our summaries of tables 5.1 and 5.3/5.4 (medians over P), which the per-P rows check
            lo, mid, hi = med("ddrf-random", "min_share"), med("ddrf-gradient", "min_share"), med("dgdrf", "min_share")
            checks.append(Check(dataset, "ddrf-gradient's min share between ddrf-random's and dgdrf's", "between (our reading of table 5.1's, of 100x20)", f"{lo:.4g} <= {mid:.4g} <= {hi:.4g}", "+2 % above dgdrf", (lo, mid, hi), lambda m: m[0] <= m[1] <= m[2] * 1.02, printed=False))
            elo, emid, ehi = med("dgdrf", "error_ratio"), med("ddrf-gradient", "error_ratio"), med("ddrf-random", "error_ratio")
            checks.append(Check(dataset, "ddrf-gradient's error ratio between dgdrf's and ddrf-random's", "between (our reading of tables 5.3/5.4, medians over P)", f"{_pct(elo)} <= {_pct(emid)} <= {_pct(ehi)}", "none", (elo, emid, ehi), lambda m: m[0] <= m[1] <= m[2], printed=False))
        checks += self._runtime_checks(dataset, rows, size, have, med, at_each)
        return checks

    def _min_share_checks(self, dataset, size, have, med, at_each, seed_span, drf: float) -> list[Check]:
        """Table 5.1: each policy's minimum share at each P as a fraction of drf's, against
        the thesis's of the same data set (it prints 100x20's only: of 200x40 it draws fig.
        5.4), within a tolerance that fails the alternative MIN_SHARE_CHECKS names."""
        checks: list[Check] = []

        def fractions(p: str) -> dict[int, float]:
            return {nb: med(p, "min_share", nb) / drf for nb in at_each(p)}

        for p, tol, alt_p in MIN_SHARE_CHECKS:
            if p not in have:
                continue
            ours = fractions(p)
            relation = f"{p}'s min share / drf's at each P"
            published = thesis.min_share_vs_drf(size, p)
            common = [nb for nb in ours if published and nb in published]
            if published is None or not common:
                where = "fig. 5.4 draws it, no table prints it" if size == (200, 40) else "the thesis ran no data set of this size" if published is None else f"no run at the P of table 5.1 ({', '.join(map(str, thesis.NEIGHBOURS))})"
                checks.append(Check(dataset, relation, f"not printed ({where})", f"{_pct_range(ours.values())} over P", "–", why="table 5.1 is of 100 servers and 20 users: no other data set's figures stand in for it" if published is None else "", printed=False))
                continue
            if alt_p == "drf":
                alt_vals, alt_src = {nb: 1.0 for nb in published}, ""
            else:
                measured = {nb: v for nb, v in fractions(alt_p).items() if nb in published} if alt_p in have else {}
                alt_vals, alt_src = (measured, "ours") if measured else (thesis.min_share_vs_drf(size, alt_p) or {}, "table 5.1")
            gaps = [abs(alt_vals[nb] - published[nb]) for nb in alt_vals]
            alt = Alternative(f"{alt_p}'s {_pct_range(alt_vals.values())} ({alt_src + ': ' if alt_src else ''}{_points(min(gaps), max(gaps))} points from table 5.1's)", alt_vals)
            off = [nb for nb in common if abs(ours[nb] - published[nb]) > tol + _EPS]
            measured_text = f"{_pct_range(ours.values())} over P" + _off(off, common, ours, published)
            diffs = [ours[nb] - published[nb] for nb in common]
            why = [f"ours − table 5.1's: {_points(min(diffs), max(diffs), signed=True)} points at {len(common)} P"]
            if alt_p == "drf":
                nearer = sum(abs(ours[nb] - 1.0) < abs(ours[nb] - published[nb]) for nb in common)
                why.append(f"ours is nearer drf's 100 % than table 5.1's at {nearer} of {len(common)} P")
            why.append(seed_span(p, "min_share", 1 / drf))
            checks.append(Check(dataset, relation, f"{_pct_range(published.values())} at every P (table 5.1)" if len(set(published.values())) == 1 else f"{_pct_range(published.values())} (table 5.1, per P)", measured_text, f"± {100 * tol:.0f} points at each P", ours, near_at_each(published, tol), alt, "; ".join(w for w in why if w)))
        return checks

    def _error_ratio_checks(self, dataset, size, have, med, at_each, seed_span) -> list[Check]:
        """Tables 5.3 (100x20) and 5.4 (200x40): each policy's error ratio at each P,
        within POINTS, which fails the other data set's table."""
        checks: list[Check] = []
        table, other_table = ("5.3", "5.4") if size == (100, 20) else ("5.4", "5.3")
        other_size = next(s for s in thesis.ERROR_RATIO if s != size)
        for p in ("probes", "ddrf-random", "ddrf-gradient", "pdgdrf"):
            if p not in have:
                continue
            published = dict(zip(thesis.NEIGHBOURS, thesis.ERROR_RATIO[size][p]))
            other = dict(zip(thesis.NEIGHBOURS, thesis.ERROR_RATIO[other_size][p]))
            ours = {nb: med(p, "error_ratio", nb) for nb in at_each(p) if nb in published}
            if not ours:
                continue
            gaps = [abs(other[nb] - published[nb]) for nb in published]
            alt = Alternative(f"table {other_table}'s, of the other data set ({_points(min(gaps), max(gaps))} points from table {table}'s)", other)
            off = [nb for nb in ours if abs(ours[nb] - published[nb]) > POINTS + _EPS]
            measured = f"{_pct_range(ours.values())} over P" + _off(off, list(ours), ours, published)
            diffs = [ours[nb] - published[nb] for nb in ours]
            why = "; ".join(w for w in (f"ours − table {table}'s: {_points(min(diffs), max(diffs), signed=True)} points at {len(ours)} P", seed_span(p, "error_ratio")) if w)
            checks.append(Check(dataset, f"{p}'s error ratio at each P", f"{_pct_range(published.values())} (table {table}, per P)", measured, f"± {100 * POINTS:.0f} points at each P", ours, near_at_each(published, POINTS), alt, why))
        return checks

    def _runtime_checks(self, dataset, rows, size, have, med, at_each) -> list[Check]:
        """Figs. 5.8-5.10 and the run-times of 5.4's text, as ratios to drf's run-time."""
        checks: list[Check] = []
        drf = med("drf", "runtime_s") if "drf" in have else None
        if not drf:
            return checks

        def ratios(p: str) -> dict[int, float]:
            return {nb: med(p, "runtime_s", nb) / drf for nb in at_each(p)}

        def as_drf(r: dict[int, float]) -> Alternative:
            return Alternative("as fast as drf (1.00 at every P)", {nb: 1.0 for nb in r})

        above = lambda r: min(r.values()) > 1  # noqa: E731
        below = lambda r: max(r.values()) < 1  # noqa: E731
        fig = "fig. 5.8" if size == (100, 20) else "figs. 5.9-5.10" if size == (200, 40) else "figs. 5.8-5.10"
        if "dgdrf" in have:
            r = ratios("dgdrf")
            checks.append(Check(dataset, "dgdrf / drf run-time", f"above 1 at every P ({fig}: one task per tick at best)", _span(r), "> 1", r, above, as_drf(r)))
        if {"dgdrf", "pdgdrf"} <= have and size == (100, 20):
            d, p = ratios("dgdrf"), ratios("pdgdrf")
            q = {nb: p[nb] / d[nb] for nb in p if nb in d}
            slower = [nb for nb in q if q[nb] >= 1]
            checks.append(Check(dataset, "dgdrf slowest, pdgdrf next (pdgdrf / dgdrf run-time)", "below 1 at every P (fig. 5.8)", _span(q) + (f"; pdgdrf as slow or slower at P={','.join(map(str, slower))}" if slower else ""), "< 1", q, below, Alternative("pdgdrf as slow as dgdrf (1.00 at every P)", {nb: 1.0 for nb in q})))
        for pol in ("dgdrf", "pdgdrf"):
            r = ratios(pol) if pol in have else {}
            if len(r) >= 2:
                lo, hi = min(r), max(r)
                checks.append(Check(dataset, f"{pol}'s run-time grows with P (P={hi} / P={lo})", f"above 1 ({fig}: fewer neighbours, faster)", f"{r[hi] / r[lo]:.2f}", "> 1", r[hi] / r[lo], lambda x: x > 1, Alternative("no growth (1.00)", 1.0)))
        if "pdgdrf" in have and size in thesis.PDGDRF_P2_RUNTIME and 2 in ratios("pdgdrf"):
            t_pd, t_drf = thesis.PDGDRF_P2_RUNTIME[size]
            want, ours = t_pd / t_drf, ratios("pdgdrf")[2]
            o_pd, o_drf = next(v for s, v in thesis.PDGDRF_P2_RUNTIME.items() if s != size)
            other = f"{'200x40' if size == (100, 20) else '100x20'}'s {o_pd / o_drf:.2f}"
            checks.append(Check(dataset, "pdgdrf / drf run-time at P=2", f"{want:.2f} ({t_pd:.0f} s / {t_drf:.0f} s, 5.4)", f"{ours:.2f}", "±25 %", ours, within_ratio(want, 0.25), Alternative(f"the other data set's figure ({other}, 5.4)", o_pd / o_drf)))
        if size == (100, 20):
            for pol in ("probes", "ddrf-random"):
                r = ratios(pol) if pol in have else {}
                if r:
                    checks.append(Check(dataset, f"{pol} / drf run-time", "below 1 (fig. 5.8)", _span(r), "< 1", r, below, as_drf(r)))
            r = {nb: v for nb, v in (ratios("ddrf-gradient") if "ddrf-gradient" in have else {}).items() if nb >= 6}
            if r:
                checks.append(Check(dataset, "ddrf-gradient / drf run-time at P ≥ 6", "slightly above 1 (fig. 5.8)", _span(r), "above 1.0, at most 1.5", r, lambda r: all(1.0 < v <= 1.5 for v in r.values()), as_drf(r)))
        if size == (200, 40) and "ddrf-gradient" in have:
            r = ratios("ddrf-gradient")
            checks.append(Check(dataset, "ddrf-gradient / drf run-time", "below 1 at every P (fig. 5.9)", _span(r), "< 1", r, below, as_drf(r)))
        return checks

    def _pdgdrf_ratio(self, rows: list[dict], variant: str) -> float | None:
        d = _stats([r["runtime_s"] for r in rows if r["policy"] == "drf"])[0]
        p = _stats([r["runtime_s"] for r in rows if _variant(r) == variant])[0]
        return p / d if d and np.isfinite(d) and np.isfinite(p) else None

    def _users_checks(self) -> list[Check]:
        """Fig. 5.11: PDGDRF's run-time relative to DRF's against users."""
        checks: list[Check] = []
        gen = [r for r in self.runs.rows if r.get("data_seed") is not None]
        for servers in self.runs.values("servers", gen):
            sel = [r for r in gen if r["servers"] == servers]
            users = self.runs.values("users", sel)
            if len(users) < 2 or not {"drf", "pdgdrf"} <= set(self.runs.values("policy", sel)):
                continue
            for variant in sorted({_variant(r) for r in sel if r["policy"] == "pdgdrf"}):
                raw = {u: self._pdgdrf_ratio([r for r in sel if r["users"] == u], variant) for u in users}
                ratio = {u: q for u, q in raw.items() if q is not None}
                if len(ratio) < 2:
                    continue
                us = sorted(ratio)
                scope = f"{servers} servers"
                listed = ", ".join(f"{u} users: {ratio[u]:.2f}" for u in us)
                series = [ratio[u] for u in us]
                flat = Alternative(f"no fall ({series[0]:.2f}, the ratio at {us[0]} users, at every user count)", [series[0]] * len(us))
                checks.append(Check(scope, f"{variant} / drf run-time falls as users grow", "falls (fig. 5.11: from about 2 at 20 users to below 1 from 80)", listed, f"at the most users at most {1 - USERS_FALL:.2f}x the ratio at the fewest", series, falls_as_users_grow, flat))
                even = thesis.PDGDRF_EVEN_USERS
                if even in ratio:
                    checks.append(Check(scope, f"{variant} / drf run-time at {even} users", "1.0 (fig. 5.11: even with drf at 40 users)", f"{ratio[even]:.2f}", "±0.25", ratio[even], lambda x: abs(x - 1) <= 0.25, Alternative("twice drf's run-time (2.0: fig. 5.11's at 20 users)", 2.0)))
                below = [u for u in us if u < even]
                if below:
                    slower = [ratio[u] for u in below]
                    checks.append(Check(scope, f"{variant} slower than drf below {even} users", "above 1 (fig. 5.11)", ", ".join(f"{u}: {ratio[u]:.2f}" for u in below), "> 1", slower, lambda xs: all(x > 1 for x in xs), Alternative("as fast as drf (1.00)", [1.0] * len(below))))
        return checks

    def _exchange_checks(self) -> list[Check]:
        """Fig. 5.12: PDGDRF's run-time relative to DRF's against gradient exchanges per tick."""
        checks: list[Check] = []
        if len(self.runs.values("gradient_period")) < 2:
            return checks
        for dataset in self.runs.values("dataset"):
            rows = [r for r in self.runs.rows if r["dataset"] == dataset]
            periods = self.runs.values("gradient_period", [r for r in rows if r["policy"] == "pdgdrf"])
            if len(periods) < 2 or not any(r["policy"] == "drf" for r in rows):
                continue
            tick = rows[0].get("tick") or 0.1
            raw = {tick / p: self._pdgdrf_ratio([r for r in rows if r["policy"] == "drf" or r.get("gradient_period") == p], "pdgdrf") for p in periods}
            ratio = {x: q for x, q in raw.items() if q is not None}
            if len(ratio) < 2:
                continue
            xs = sorted(ratio)
            listed = ", ".join(f"{x:.3g}/tick: {ratio[x]:.2f}" for x in xs)
            series = [ratio[x] for x in xs]
            checks.append(Check(dataset, "pdgdrf / drf run-time falls with more gradient exchanges per tick", "falls (fig. 5.12)", listed, "none", series, lambda s: s[-1] < s[0], Alternative(f"no fall ({series[0]:.2f} at every rate)", [series[0]] * len(series))))
            even = thesis.PDGDRF_EVEN_EXCHANGES.get(rows[0]["users"])
            near = min(xs, key=lambda x: abs(x - even)) if even is not None else None
            if near is not None and even is not None and abs(near - even) <= 0.05 * even:
                checks.append(Check(dataset, f"pdgdrf / drf run-time at {even:g} exchanges per tick", f"1.0 (fig. 5.12, {rows[0]['users']} users)", f"{ratio[near]:.2f}", "±0.25", ratio[near], lambda x: abs(x - 1) <= 0.25, Alternative("twice drf's run-time (2.0)", 2.0)))
        return checks

    def write(self) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        self.header()
        self.relations()
        self.jobs()
        self.neighbour_figures()
        self.error_curves()
        if len(self.runs.values("users", [r for r in self.runs.rows if r.get("data_seed") is not None])) >= 2:
            self.ratio_to_drf("users", "users", "thesis fig. 5.11")
        if len(self.runs.values("gradient_period")) >= 2:
            self.ratio_to_drf("gradient_period", "gradient exchanges per allocation tick", "thesis fig. 5.12", transform=lambda r: round(r["_rec"]["params"].get("tick", r["_rec"]["result"]["tick"]) / r["gradient_period"], 3))
        self.loss_costs()
        self.message_costs()
        self.emulator_cost()
        path = self.out / REPORT_MD
        text = "\n".join(self.md) + "\n"
        path.write_text(text, encoding="utf-8")
        if self.html:
            from dgdrf.pages.report_page import report_page

            (self.out / REPORT_HTML).write_text(report_page(text, self.interactive, self.run_points), encoding="utf-8")
        return path


def _integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _percent_formatter():
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(1.0)


#: the report's page beside report.md (``dgdrf report --html``)
REPORT_HTML = "report.html"


def write_report(results_dirs: Path | list[Path], out: Path | None = None, html: bool = False) -> Path:
    """Write report.md and its PNG figures for the sweep results in ``results_dirs``
    (several sweeps' results are merged; ``out`` defaults to the first directory); with
    ``html``, report.html too: the same report as a page, its figures interactive."""
    dirs = [Path(d) for d in (results_dirs if isinstance(results_dirs, list) else [results_dirs])]
    for d in dirs:
        if not d.is_dir():
            raise ConfigError(f"{d}: not a directory (give the --out directory of a dgdrf sweep)")
    return Report(dirs, Path(out) if out else dirs[0], html=html).write()
