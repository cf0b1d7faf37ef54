"""``dgdrf report``: figures and a markdown summary of a sweep's results (thesis ch. 5).

What is drawn depends on what the sweep varied: against neighbours (figs. 5.1-5.5,
5.8-5.10, tables 5.1-5.4), the error ratio over a run (figs. 5.6-5.7), a policy's
run-time relative to drf against users (fig. 5.11) or gradient exchanges per tick
(fig. 5.12), message cost per tick, and the emulator's own cost against cluster size.
Where a condition ran with several seeds, lines are medians and bands span min to max.
A "thesis relations" section checks the qualitative findings the distributed-policies
work must reproduce, on these results, and says which hold.
"""

from __future__ import annotations

import json
import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from dgdrf.bench.sweep import SWEEP_JSON, flat_row, is_stale, read_records, revision_params
from dgdrf.errors import ConfigError
from dgdrf.model.resources import natural_key

REPORT_MD = "report.md"
#: parameters that identify a condition besides the data set, policy, neighbours and seed
_IDENTITY = ("dataset", "servers", "users", "data_seed", "scenario_digest", "policy", "neighbors", "seed", "stamped_gradient_revision")
POLICY_ORDER = ("drf", "drf-bestfit", "fifo", "probes", "ddrf-random", "ddrf-gradient", "dgdrf", "pdgdrf")
TOLERANCES = (("exact", "exact"), ("0.01", "1 %"), ("0.05", "5 %"), ("0.10", "10 %"), ("0.15", "15 %"))


#: run parameters that make a variant of a policy (figure series, relation checks), with
#: the value that is no variant
VARIANT_PARAMS = {"gini_neighbours": "gradient", "gradient": None, "gradient_memory": None}


def _variant(r: dict) -> str:
    """The policy of a row, with the variant parameters it ran with (if not the default)."""
    extras = [f"{k}={r[k]}" for k, default in VARIANT_PARAMS.items() if r.get(k) is not None and r.get(k) != default]
    return r["policy"] + (f" ({', '.join(extras)})" if extras else "")


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
        self.all_rows = _at_every_neighbour_count([flat_row(r) | {"_rec": r} for r in self.records])
        #: runs cut short by max_time (the scaling benchmark's) say nothing of fairness or run-time
        self.rows = [r for r in self.all_rows if r.get("stop_reason") != "max_time"]
        self.extra = sorted({k for r in self.records for k in r["params"]} - set(_IDENTITY))

    def values(self, key: str, rows: Iterable[dict] | None = None) -> list[Any]:
        rows = self.rows if rows is None else rows
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
    from dgdrf.bench.sweep import uses_neighbors

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


def _series_label(policy: str, extra: dict[str, Any]) -> str:
    return policy + "".join(f", {k}={v}" for k, v in extra.items())


class Report:
    def __init__(self, results_dirs: list[Path], out: Path) -> None:
        self.dirs, self.out = results_dirs, out
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
            raise ConfigError(f"{', '.join(map(str, results_dirs))}: no results found (results.jsonl missing or empty); run `dgdrf sweep` first")
        #: runs recorded with code that has changed since (sweep.revision_params): left out
        self.stale, self.all = [], []
        for r in by_key.values():
            (self.stale if is_stale(r) else self.all).append(r)
        if not self.all:
            raise ConfigError(f"{', '.join(map(str, results_dirs))}: every recorded run used code that has changed since ({len(self.stale)} runs); run the sweep again")
        self.failed = [r for r in self.all if r.get("status") != "ok"]
        self.runs = Runs(self.all)
        self.md: list[str] = []
        self.figures: list[str] = []

    # -- helpers ------------------------------------------------------------------------
    def save(self, fig, name: str, caption: str) -> None:
        fig.savefig(self.out / name, dpi=110)
        self.figures.append(name)
        self.md.append(f"![{caption}]({name})\n\n*{caption}*\n")

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
            changed = sorted({f"{r['params'].get('policy')}: {k} now {v}" for r in self.stale for k, v in revision_params(r["params"].get("policy", ""), r["params"]).items() if r["params"].get(k) != v})
            lines.append(f"- left out: {len(self.stale)} runs recorded with code that has changed since ({'; '.join(changed)}); `dgdrf sweep` runs each again with the current code")
        lines += [
            f"- policies: {listed('policy')}; neighbours: {listed('neighbors')}; seeds: {listed('seed')}",
            f"- data sets: {', '.join(f'{d} ' + self._size(d) for d in self.runs.values('dataset', every))}",
        ]
        if self.runs.extra:
            lines.append("- other parameters: " + "; ".join(f"{k} = {listed(k)}" for k in self.runs.extra))
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
        for ax, panel in zip(axes, panels):
            sel = [(r, q, x) for r, q, x in pairs if r[pk] == panel]
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
        slug = "users" if x_key == "users" else "gradient_rate"
        self.md.append(f"## Run-time relative to drf against {x_label}\n")
        self.save(fig, f"runtime_ratio_vs_{slug}.png", f"run-time relative to centralized drf against {x_label} ({fig_ref}); dashed: equal to drf")
        self.md.append(f"| {pk} | policy | P | {x_label} | median ratio | seeds |\n|---|---|---|---|---|---|")
        for panel, policy, nb, x, med, n in table:
            self.md.append(f"| {panel} | {policy} | {nb} | {_fmt(x)} | {med:.2f} | {n} |")
        self.md.append("")

    def message_costs(self) -> None:
        """Messages and bytes per allocation tick per policy, by protocol part (eqs. 4.3-4.6)."""
        groups = self.runs.by(self.runs.rows, ["dataset", "policy"])
        parts = sorted({g for r in self.runs.rows for g in r["_rec"]["result"].get("cost_per_tick", {}).get("by_group", {})})
        if not parts or not groups:
            return
        self.md.append("## Messages and bytes per allocation tick\n")
        self.md.append("Median over neighbours and seeds, during the allocation phase; the thesis's worst-case models are eq. 4.3 (2|S|P for DDRF's share requests) and eq. 4.6 (2x|S| gradient messages for x exchanges per tick).\n")
        self.md.append("| data set | policy | messages/tick | bytes/tick | " + " | ".join(f"{p} msgs/tick" for p in parts) + " |")
        self.md.append("|---" * (4 + len(parts)) + "|")
        for (dataset, policy), grp in sorted(groups.items(), key=lambda kv: (kv[0][0], _policy_rank(kv[0][1]))):
            by = [r["_rec"]["result"].get("cost_per_tick", {}).get("by_group", {}) for r in grp]
            cells = [_fmt(_stats([b.get(p, {}).get("messages", 0.0) for b in by])[0]) for p in parts]
            self.md.append(f"| {dataset} | {policy} | {_fmt(_stats([r['messages_per_tick'] for r in grp])[0])} | {_fmt(_stats([r['bytes_per_tick'] for r in grp])[0])} | " + " | ".join(cells) + " |")
        self.md.append("")

    def emulator_cost(self) -> None:
        """The emulator's own cost against cluster size (bench/scaling.toml)."""
        rows = [r for r in self.runs.all_rows if r.get("data_seed") is not None]
        if len(self.runs.values("servers", rows)) < 2:
            return
        measures = (("wall_s", "wall seconds per run"), ("sim_per_wall", "simulated s per wall s"), ("messages_per_wall_s", "messages per wall second"), ("peak_rss_mb", "peak memory (MiB RSS)"))
        fig, axes = _figure(4.0, 3.4, len(measures))
        groups = self.runs.by(rows, ["policy", "users"])
        for ax, (key, label) in zip(axes, measures):
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

    def relations(self) -> None:
        """The thesis's qualitative findings (distributed-policies issue), checked here."""
        checks: list[tuple[str, str, str, bool]] = []
        for dataset in self.runs.values("dataset"):
            rows = [r for r in self.runs.rows if r["dataset"] == dataset]
            # each policy at its defaults; a variant (e.g. pdgdrf with gini_neighbours=overlay) is another "policy" here
            med = lambda p, key, nb=None: _stats([r[key] for r in rows if _variant(r) == p and (nb is None or r["neighbors"] == nb)])[0]  # noqa: E731
            have = {_variant(r) for r in rows}
            nbs = self.runs.values("neighbors", rows)
            tag = f"{dataset}"
            if {"dgdrf"} <= have:
                runs = [r for r in rows if _variant(r) == "dgdrf"]
                # counted, not as a rounded percentage: a few wrong allocations in 10,000 read as "0.0 %"
                wrong = sum(round(r["error_ratio"] * r["allocations"]) for r in runs)
                total = sum(r["allocations"] for r in runs)
                checks.append((tag, "dgdrf makes no errors, at every neighbour count", f"{wrong:,} wrong of {total:,} allocations in {len(runs)} runs", wrong == 0))
            if {"dgdrf", "drf"} <= have:
                worst = min(med("dgdrf", "min_share", nb) for nb in nbs if any(_variant(r) == "dgdrf" and r["neighbors"] == nb for r in rows))
                drf = med("drf", "min_share")
                checks.append((tag, "dgdrf's min share within a few percent of drf's", f"lowest median {worst:.4g} vs drf {drf:.4g} ({worst / drf - 1:+.1%})", worst >= 0.95 * drf))
            for pd in sorted(v for v in have if v.split(" ")[0] == "pdgdrf") if "drf" in have else []:
                e = med(pd, "error_ratio")
                checks.append((tag, f"{pd} makes errors (thesis: 5-64 %)", f"median error ratio {_pct(e)}", e > 0))
                m, d = med(pd, "min_share"), med("drf", "min_share")
                g, gd = med(pd, "gini"), med("drf", "gini")
                checks.append((tag, f"{pd}'s min share and Gini stay close to drf's", f"min share {m:.4g} vs {d:.4g}; Gini {g:.3g} vs {gd:.3g}", m >= 0.9 * d and g <= gd + 0.02))
            for p in ("ddrf-random", "probes"):
                if p in have:
                    e = med(p, "error_ratio")
                    checks.append((tag, f"{p} errs often (thesis: 74-96 %)", f"median error ratio {_pct(e)}", e >= 0.5))
                    if "dgdrf" in have:
                        checks.append((tag, f"{p}'s min share clearly below dgdrf's", f"{med(p, 'min_share'):.4g} vs {med('dgdrf', 'min_share'):.4g}", med(p, "min_share") < 0.9 * med("dgdrf", "min_share")))
            if {"ddrf-gradient", "ddrf-random", "dgdrf"} <= have:
                lo, mid, hi = med("ddrf-random", "min_share"), med("ddrf-gradient", "min_share"), med("dgdrf", "min_share")
                checks.append((tag, "ddrf-gradient's min share between ddrf-random's and dgdrf's (2 % slack)", f"{lo:.4g} <= {mid:.4g} <= {hi:.4g}", lo <= mid <= hi * 1.02))
                elo, emid, ehi = med("dgdrf", "error_ratio"), med("ddrf-gradient", "error_ratio"), med("ddrf-random", "error_ratio")
                checks.append((tag, "ddrf-gradient's error ratio between dgdrf's and ddrf-random's", f"{_pct(elo)} <= {_pct(emid)} <= {_pct(ehi)}", elo <= emid <= ehi))
        # fig. 5.11: pdgdrf's run-time relative to drf falls as users grow
        gen = [r for r in self.runs.rows if r.get("data_seed") is not None]
        for servers in self.runs.values("servers", gen):
            sel = [r for r in gen if r["servers"] == servers]
            users = self.runs.values("users", sel)
            if len(users) < 2 or not {"drf", "pdgdrf"} <= set(self.runs.values("policy", sel)):
                continue
            for variant in sorted({_variant(r) for r in sel if r["policy"] == "pdgdrf"}):
                ratio = {}
                for u in users:
                    d = _stats([r["runtime_s"] for r in sel if r["users"] == u and r["policy"] == "drf"])[0]
                    p = _stats([r["runtime_s"] for r in sel if r["users"] == u and _variant(r) == variant])[0]
                    ratio[u] = p / d if d else float("nan")
                first, last = ratio[users[0]], ratio[users[-1]]
                checks.append((f"{servers} servers", f"{variant} / drf run-time falls as users grow (fig. 5.11)", ", ".join(f"{u} users: {ratio[u]:.2f}" for u in users), last < first))
        # fig. 5.12: more gradient exchanges per tick, shorter run-time relative to drf
        if len(self.runs.values("gradient_period")) >= 2:
            for dataset in self.runs.values("dataset"):
                rows = [r for r in self.runs.rows if r["dataset"] == dataset]
                drf = _stats([r["runtime_s"] for r in rows if r["policy"] == "drf"])[0]
                periods = self.runs.values("gradient_period", [r for r in rows if r["policy"] == "pdgdrf"])
                if len(periods) < 2 or not drf:
                    continue
                ratio = {p: _stats([r["runtime_s"] for r in rows if r["policy"] == "pdgdrf" and r.get("gradient_period") == p])[0] / drf for p in periods}
                slow, fast = ratio[max(periods)], ratio[min(periods)]
                checks.append((dataset, "pdgdrf / drf run-time falls with more gradient exchanges per tick (fig. 5.12)", ", ".join(f"period {p:g} s: {ratio[p]:.2f}" for p in sorted(periods, reverse=True)), fast < slow))
        if not checks:
            return
        self.md.append("## Thesis relations on these results\n")
        self.md.append("| data set | relation (thesis) | ours | holds |\n|---|---|---|---|")
        for tag, rel, ours, ok in checks:
            self.md.append(f"| {tag} | {rel} | {ours} | {'yes' if ok else '**no**'} |")
        self.md.append("")

    def write(self) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        self.header()
        self.relations()
        self.neighbour_figures()
        self.error_curves()
        if len(self.runs.values("users", [r for r in self.runs.rows if r.get("data_seed") is not None])) >= 2:
            self.ratio_to_drf("users", "users", "thesis fig. 5.11")
        if len(self.runs.values("gradient_period")) >= 2:
            self.ratio_to_drf("gradient_period", "gradient exchanges per allocation tick", "thesis fig. 5.12", transform=lambda r: round(r["_rec"]["params"].get("tick", r["_rec"]["result"]["tick"]) / r["gradient_period"], 3))
        self.message_costs()
        self.emulator_cost()
        path = self.out / REPORT_MD
        path.write_text("\n".join(self.md) + "\n", encoding="utf-8")
        return path


def _integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _percent_formatter():
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(1.0)


def write_report(results_dirs: Path | list[Path], out: Path | None = None) -> Path:
    """Write report.md and its PNG figures for the sweep results in ``results_dirs``
    (several sweeps' results are merged; ``out`` defaults to the first directory)."""
    dirs = [Path(d) for d in (results_dirs if isinstance(results_dirs, list) else [results_dirs])]
    for d in dirs:
        if not d.is_dir():
            raise ConfigError(f"{d}: not a directory (give the --out directory of a dgdrf sweep)")
    return Report(dirs, Path(out) if out else dirs[0]).write()
