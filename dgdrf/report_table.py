"""Readable summary tables of run results (rich), policies side by side."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from dgdrf.measurement import RunResult
from dgdrf.model.scenario import Scenario


def results_title(scenario: Scenario, results: Sequence[RunResult]) -> str:
    return f"{scenario.name}: {len(scenario.servers)} servers, {len(scenario.users)} users, seed {results[0].seed}, tick {results[0].tick} s"


def print_results(scenario: Scenario, results: Sequence[RunResult], console: Console | None = None) -> None:
    """One column per policy; rows are the thesis's measures (ch. 5) and the costs."""
    console = console or Console()
    table = Table(title=results_title(scenario, results))
    table.add_column("measure")
    for r in results:
        table.add_column(r.policy, justify="right")
    for name, cells in result_rows(scenario, results):
        if name == "stopped because":
            cells = [c if c in NORMAL_ENDS else f"[bold red]{c}" for c in cells]
        table.add_row(name, *cells)
    console.print(table)
    for reason in dict.fromkeys(r.stop_reason for r in results if r.stop_reason not in NORMAL_ENDS):
        console.print(f"[bold red]{reason}[/]: {STOP_EXPLAINED.get(reason, reason)}")
    for r in results:
        if r.unrunnable_jobs:
            shown = r.unrunnable_jobs[:UNRUNNABLE_SHOWN]
            more = f" (and {len(r.unrunnable_jobs) - len(shown)} more: --json has them all)" if len(r.unrunnable_jobs) > len(shown) else ""
            console.print(f"{r.policy}: {len(r.unrunnable_jobs)} job(s) given up, as no server up could run them{more}:")
            for j in shown:
                left = "endless" if j["tasks_left"] is None else f"{j['tasks_left']} task(s) left"
                console.print(f"  {j['user']} {j['job']}, {left}, since {j['since']:.1f} s: {j['why']}", markup=False, soft_wrap=True)


def result_rows(scenario: Scenario, results: Sequence[RunResult]) -> list[tuple[str, list[str]]]:
    """The summary table's rows (a measure, then its value under each result), plain
    text: the terminal's table (:func:`print_results`) and a run's page (dgdrf/pages).

    Where tasks end (finite jobs), what the papers compare leads: makespan, JCTs and
    fairness over time (the shares averaged over the run). The shares at the run's end
    follow, labelled so; a drained run holds nothing then, so its cells say so rather than
    show the 0 and 1 of a cluster that is empty, not fair."""
    finishing = scenario.finishing
    end = ", at the end" if finishing else ""

    def at_end(fmt: Callable[[RunResult], str]) -> Callable[[RunResult], str]:
        return (lambda r: "- (drained)" if r.stop_reason == "drained" else fmt(r)) if finishing else fmt

    notion = any(r.fairness is not None for r in results)  # the papers' notions: each judged on its own
    head: list[tuple[str, Callable[[RunResult], str]]] = [
        ("allocations", lambda r: f"{r.allocations}"),
        ("run-time (simulated s)", lambda r: f"{r.runtime_s:.1f}"),
        ("stopped because", lambda r: r.stop_reason),
    ]
    if notion:
        head.append(("fairness notion judged", lambda r: r.fairness or "drf"))
    jobs: list[tuple[str, Callable[[RunResult], str]]] = []
    if any(r.jobs is not None for r in results):  # jobs that arrive and finish: what the papers compare
        jobs = [
            ("makespan (s)", lambda r: "-" if r.makespan is None else f"{r.makespan:.1f}"),
            ("JCT mean / p95 (s)", lambda r: "-" if not r.jct_s else f"{r.jct_s['mean']:.1f} / {r.jct_s['p95']:.1f}"),
            ("queueing delay p50 / p95 (s)", lambda r: "-" if not r.queueing_delay_s else f"{r.queueing_delay_s['p50']:.2f} / {r.queueing_delay_s['p95']:.2f}"),
            ("unfinished tasks", lambda r: f"{sum((r.unfinished_tasks or {}).values())}"),
            ("jobs given up (no server up can run them)", lambda r: f"{len(r.unrunnable_jobs or [])}"),
        ]
    over_time: list[tuple[str, Callable[[RunResult], str]]] = []
    if any(r.time_avg_shares is not None for r in results):
        over_time = [
            ("min share, time-averaged", lambda r: "-" if r.min_time_avg_share is None else f"{r.min_time_avg_share:.4f}"),
            ("Jain's index, time-averaged shares", lambda r: "-" if r.jain_time_avg is None else f"{r.jain_time_avg:.4f}"),
            ("Gini, time-averaged shares", lambda r: "-" if r.gini_time_avg is None else f"{r.gini_time_avg:.4f}"),
        ]
    at_the_end: list[tuple[str, Callable[[RunResult], str]]] = [
        (("min share (policy's notion)" if notion else "min dominant share") + end, at_end(lambda r: f"{r.min_share:.4f}")),
        ("Gini (lower is fairer)" + end, at_end(lambda r: f"{r.gini:.4f}")),
        ("Jain's index" + end, at_end(lambda r: f"{r.jain:.4f}")),
    ]
    errors: list[tuple[str, Callable[[RunResult], str]]] = [
        ("error ratio", lambda r: f"{r.error_ratio:.2%}"),
        ("error ratio, 5 % tolerance", lambda r: f"{r.error_ratio_tol['0.05']:.2%}"),
    ]
    rows = head + jobs + over_time + errors + at_the_end if finishing else head + at_the_end + errors + jobs + over_time
    for res in scenario.resources:

        def utilisation(r: RunResult, res: str = res) -> str:
            return f"{max(0.0, r.utilization[res]):.1%}"  # a float residue of an empty cluster is no -0.0 %

        rows.append((f"utilisation {res}" + end, at_end(utilisation)))
    rows += [
        ("allocation latency p50 / p99 (s)", lambda r: f"{r.latency_s['p50']:.3f} / {r.latency_s['p99']:.3f}"),
        ("messages", lambda r: f"{r.messages['total']}"),
        ("bytes", lambda r: f"{r.bytes['total']}"),
        ("wall time (s)", lambda r: f"{r.wall_s:.2f}"),
        ("invariant violations", lambda r: f"{len(r.invariant_violations)}"),
    ]
    return [(name, [fmt(r) for r in results]) for name, fmt in rows]


#: how many jobs given up the table's note lists
UNRUNNABLE_SHOWN = 10


#: the ends a run reaches by itself: every task of every finite job done; no task fits any more
NORMAL_ENDS = ("saturated", "drained")
#: what a run's end means when it is not one of those (docs/explanation/how-runs-end.md)
STOP_EXPLAINED = {
    "stranded": "every user whose next task fits somewhere has it held only by servers where it no longer fits; probes cannot place it (thesis 4.2), so the run cannot reach saturation",
    "stalled": "nothing was placed for the stall time although tasks still fit, or work was left that nothing could bring about: the run stopped making progress (a bug; please report it)",
    "max_time": "the simulated time limit (--max-time) was reached before saturation (or, with jobs, before every task ended)",
}


def print_overlay(doc: dict, console: Console | None = None) -> None:
    """Per-cycle convergence of an overlay run, then its cost."""
    console = console or Console()
    rows = doc["per_cycle"]
    cols = [k for k in rows[0] if k != "cycle"] if rows else []
    cfg = doc["config"]
    table = Table(title=f"{doc['protocol']}: {cfg['nodes']} nodes, {cfg['cycles']} cycles, seed {cfg['seed']}")
    table.add_column("cycle", justify="right")
    for c in cols:
        table.add_column(c.replace("_", " "), justify="right")
    for r in rows:
        table.add_row(str(r["cycle"]), *[_fmt(r[c]) for c in cols])
    console.print(table)
    console.print(
        f"protocol wall time {doc['wall_s']:.2f} s ({doc['node_cycles_per_s']:,.0f} node-cycles/s, "
        f"{doc['messages_per_s']:,.0f} messages/s); {doc['messages']['total']:,} messages, {doc['bytes']:,} bytes"
    )


def _fmt(v: object) -> str:
    if v is None:
        return "inf"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e-3 and v != 0 else f"{v:.4f}"
    return str(v)
