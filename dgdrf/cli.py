"""Command line: ``dgdrf run | scenario | overlay | sweep | report | schema | bench``.

Every bad input ends in one line ``dgdrf: error: <what is wrong>`` on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence

from dgdrf.errors import ConfigError, DgdrfError, ScenarioError, unknown_policy
from dgdrf.model.scenario import MAX_SECONDS

if TYPE_CHECKING:  # imported where used: `dgdrf --help` stays quick
    from rich.progress import Progress

    from dgdrf.emulation import RunConfig

EXIT_BAD_INPUT = 2
DEFAULT_COMPARISON = ("drf", "fifo")


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the problem (exit 2)."""

    def error(self, message: str) -> NoReturn:
        if self.prog.split()[0] != "dgdrf":  # a bench script's own parser: its own name leads
            self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        command = self.prog.removeprefix("dgdrf").strip()  # every dgdrf error line starts "dgdrf: error:"
        self.exit(EXIT_BAD_INPUT, f"dgdrf: error: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")


def _number(kind: type, lo: float, hi: float, lo_open: bool, what: str) -> Callable[[str], Any]:
    """An argparse type: ``kind`` parsed from text and checked to lie in [lo, hi]
    (or (lo, hi] with ``lo_open``); the error says ``what`` was expected."""

    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not ((v > lo) if lo_open else (v >= lo)) or not v <= hi:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return v

    return parse


_positive_int = _number(int, 1, float("inf"), False, "a positive integer")
_non_negative_int = _number(int, 0, float("inf"), False, "a non-negative integer")
_positive_float = _number(float, 0.0, MAX_SECONDS, True, f"a positive number of at most {MAX_SECONDS:g}")
_certificates = _number(int, 0, 100_000, False, "a number of certificates from 0 to 100000")
_non_negative_float = _number(float, 0.0, MAX_SECONDS, False, f"a number of seconds from 0 to {MAX_SECONDS:g}")


def _run_options() -> list[Any]:
    from dgdrf.config import RunConfig

    return RunConfig.options()


def _add_run_args(p: argparse._ActionsContainer) -> None:
    """The flags that choose a scenario and configure a run (dgdrf run, node, cluster):
    the scenario's by hand, then one per declared option (dgdrf/options.py)."""
    from dgdrf.options import add_arguments

    p.add_argument("--policy", help="policy name, or several separated by commas to compare side by side (default: drf,fifo)")
    p.add_argument("--scenario", type=Path, help="scenario file (.toml or .json)")
    p.add_argument("--servers", type=_positive_int, help="generate a Google-2011-like scenario with this many servers")
    p.add_argument("--users", type=_positive_int, help="... and this many users")
    p.add_argument("--lenient", action="store_true", help="--scenario: ignore (with a warning) top-level keys that are neither part of a scenario nor a run setting, which are errors otherwise")
    add_arguments(p, _run_options())


#: what --quiet means, for every command that has it (all but ``schema``, whose output is
#: what it is for)
QUIET_HELP = "print nothing but warnings and errors: no table, no progress bar, no summary (the files asked for are still written)"


def _add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def _say(args: argparse.Namespace, text: str) -> None:
    """What a command tells of its progress or where it wrote (standard error), unless
    ``--quiet``. Warnings and errors are printed whatever the flag."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="dgdrf", description="Peer-to-peer distributed scheduler emulator for multi-resource fair allocation.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineErrorParser)
    sub.required = True

    run = sub.add_parser("run", help="run one emulation to saturation (no arguments: drf vs fifo on the embedded default)")
    _add_run_args(run)
    run.add_argument("--json", type=Path, metavar="OUT", help="write the result(s) as JSON")
    run.add_argument("--html", type=Path, metavar="FILE", help="write a page of the run(s): shares, utilisation, messages, jobs and placements over time, side by side (self-contained, opens offline)")
    _add_quiet(run)
    run.add_argument("-v", "--verbose", action="store_true", help="log run progress to stderr")

    sc = sub.add_parser("scenario", help="write a scenario as JSON (Google-2011-like, or cut from a real Google 2011 trace)")
    sc.add_argument("--servers", type=_positive_int, required=True)
    sc.add_argument("--users", type=_positive_int, required=True)
    sc.add_argument("--seed", type=_non_negative_int, default=1)
    sc.add_argument("--machine-events", type=Path, help="Google 2011 machine_events CSV (with --task-events: cut a real trace)")
    sc.add_argument("--task-events", type=Path, help="Google 2011 task_events CSV")
    sc.add_argument("--jobs", action="store_true", help="finite jobs that arrive and finish (Google-2011-like: kind google-2011-jobs; from a trace: its own jobs) instead of one endless task per user")
    sc.add_argument("--horizon", type=float, help="--jobs, generated: seconds over which jobs arrive (default 3600)")
    sc.add_argument("--load", type=float, help="--jobs, generated: expected offered load (default 0.8)")
    sc.add_argument("--constrained", type=float, help="--jobs, generated: fraction of jobs that require machine attributes (default 0.5)")
    sc.add_argument("--task-constraints", type=Path, help="--jobs, trace: the task_constraints CSV (with --machine-attributes)")
    sc.add_argument("--machine-attributes", type=Path, help="--jobs, trace: the machine_attributes CSV")
    sc.add_argument("--window", type=float, nargs=2, metavar=("START", "END"), help="--jobs, trace: the trace seconds whose arrivals are kept")
    sc.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.json")
    _add_quiet(sc)

    ov = sub.add_parser("overlay", help="run one gossip protocol alone in virtual time and print its convergence per cycle")
    from dgdrf.options import add_arguments, declared
    from dgdrf.overlay_run import OverlayConfig

    add_arguments(ov, declared(OverlayConfig))
    ov.add_argument("--json", type=Path, metavar="OUT", help="write final figures and per-cycle figures as JSON")
    _add_quiet(ov)
    ov.add_argument("--html", type=Path, metavar="FILE", help="write a page of the overlay as a graph at some cycles (self-contained, opens offline)")
    ov.add_argument("--html-cycles", metavar="K,K,...", help="--html: the cycles to draw (default: up to 6, from the first to the last, roughly doubling)")

    from dgdrf.cluster.node import env_default

    node = sub.add_parser("node", help="run one node of a real cluster (a process talking msgpack over aiohttp WebSockets)")
    node.add_argument("--role", choices=("bootstrap", "collector", "gateway", "server", "user"), default=env_default("role"), required=env_default("role") is None, help="what this process is (env DGDRF_ROLE)")
    node.add_argument("--bootstrap", default=env_default("bootstrap"), metavar="URL", help="the bootstrap's URL, e.g. http://bootstrap:7000 (env DGDRF_BOOTSTRAP; not for the bootstrap)")
    node.add_argument("--listen", default=env_default("listen", "127.0.0.1:0"), metavar="HOST:PORT", help="where to listen (default 127.0.0.1:0, any free port; env DGDRF_LISTEN)")
    node.add_argument("--advertise", default=env_default("advertise"), metavar="HOST", help="host name or address peers reach this node at (default: the listen host, or this host's address towards the bootstrap when listening on 0.0.0.0; env DGDRF_ADVERTISE)")
    node.add_argument("--count", type=_positive_int, default=int(env_default("count", 1)), help="servers or users this process hosts (default 1; env DGDRF_COUNT)")
    node.add_argument("--keys", type=Path, default=env_default("keys"), metavar="DIR", help="the cluster's keys (dgdrf cluster keys DIR): DIR/ca.crt and this node's certificate; every connection is then mutual TLS and every message checked against its sender's certificate (env DGDRF_KEYS)")
    node.add_argument("--key-name", default=env_default("key_name"), metavar="NAME", help="this node's certificate in --keys: NAME.crt and NAME.key (default: its role; env DGDRF_KEY_NAME)")
    node.add_argument("--wait-keys", type=_non_negative_float, default=env_default("wait_keys", "0"), metavar="SECONDS", help="wait this long for --keys to appear (compose: another container makes them; env DGDRF_WAIT_KEYS)")
    node.add_argument("--insecure", action="store_true", default=env_default("insecure", "") not in ("", "0"), help="listen beyond loopback without --keys (anyone who reaches the port can act as any member; env DGDRF_INSECURE=1)")
    node.add_argument("--token", default=env_default("token"), help="shared cluster token: frames without it are rejected (env DGDRF_TOKEN); does not tell members apart, --keys does")
    node.add_argument("--no-batching", action="store_true", help="one WebSocket frame per message instead of batches")
    node.add_argument("--json", type=Path, default=env_default("json"), metavar="OUT", help="collector: write the result here (env DGDRF_JSON)")
    _add_quiet(node)
    node.add_argument("--dashboard", default=env_default("dashboard"), metavar="HOST:PORT", help="collector: serve a live page of the run there (loopback; beyond it only with --keys, as HTTPS; env DGDRF_DASHBOARD)")
    node.add_argument("--die-with-parent", action="store_true", help=argparse.SUPPRESS)
    node.add_argument("-v", "--verbose", action="store_true", help="log state changes at INFO even with --quiet, which a node does by default (JSON lines when stderr is not a terminal)")
    nrun = node.add_argument_group("bootstrap: the run (as for dgdrf run; env DGDRF_SCENARIO, DGDRF_SERVERS, DGDRF_USERS, DGDRF_POLICY, and DGDRF_<OPTION> for each option, e.g. DGDRF_SEED, DGDRF_NEIGHBORS)")
    _add_run_args(nrun)

    cl = sub.add_parser("cluster", help="a whole cluster as local processes")
    clsub = cl.add_subparsers(dest="cluster", metavar="ACTION", parser_class=OneLineErrorParser)
    clsub.required = True
    up = clsub.add_parser("up", help="start bootstrap, collector, gateway, servers and users as processes on loopback, run to saturation, print the result")
    _add_run_args(up)
    up.add_argument("--processes", type=_positive_int, help="processes hosting the servers and users (default: one per node)")
    up.add_argument("--timeout", type=_positive_float, default=600.0, help="stop the run after this many wall seconds and print its result so far, exit 1 (default 600)")
    up.add_argument("--token", help="shared cluster token")
    up.add_argument("--insecure", action="store_true", help="no TLS (default: keys are made for the run and every connection is mutual TLS)")
    up.add_argument("--keep-keys", action="store_true", help="keep the keys made for the run beside the node logs (default: removed at the end)")
    keys = clsub.add_parser("keys", help="make the cluster's certificate authority and one certificate per role (and per node with --servers/--users)")
    keys.add_argument("dir", type=Path, metavar="DIR", help="where to write ca.crt, ca.key and NAME.crt / NAME.key")
    keys.add_argument("--servers", type=_certificates, default=0, help="also one certificate per server process: server-1 ... server-N")
    keys.add_argument("--users", type=_certificates, default=0, help="also one certificate per user process: user-1 ... user-M")
    keys.add_argument("--days", type=_positive_int, default=365, help="validity (default 365 days)")
    keys.add_argument("--force", action="store_true", help="replace keys already in DIR")
    keys.add_argument("--if-missing", action="store_true", help="keep the keys already in DIR, if any (compose makes them on the first up)")
    _add_quiet(keys)
    up.add_argument("--no-batching", action="store_true", help="one WebSocket frame per message")
    up.add_argument("--json", type=Path, metavar="OUT", help="write the result as JSON (the dgdrf run --json format)")
    _add_quiet(up)
    up.add_argument("--dashboard", metavar="HOST:PORT", help="serve a live page of the run there, from the collector (loopback; beyond it only with TLS, as HTTPS)")

    orc = sub.add_parser("oracle", help="the offline progressive-filling allocation of a scenario under a notion (divisible tasks; an LP per round)")
    orc.add_argument("--scenario", type=Path, required=True, help="scenario file (.toml or .json)")
    orc.add_argument("--notion", required=True, choices=ORACLE_NOTIONS, help="tsf (Wang et al. alg. 1), cdrf (App. B-C), drfh (eq. 25) or udrf (Tahir et al. fig. 3: jobs over machine classes, the servers' attribute 'class')")
    orc.add_argument("--json", type=Path, metavar="OUT", help="write tasks and shares per user (as dgdrf run --json), units, levels and rounds")
    _add_quiet(orc)

    au = sub.add_parser("audit", help="the fairness audit of a policy on a scenario: sharing incentive, envy-freeness, Pareto efficiency, and strategy-proofness probed by misreports")
    _add_run_args(au)
    au.add_argument("--notion", choices=ORACLE_NOTIONS[:3], help="audit the offline oracle of this notion (dgdrf oracle, divisible tasks) instead of a policy: its strategy-proofness, probed by --misreport")
    au.add_argument("--misreport", type=_factors, metavar="F[,F...]", help="probe strategy-proofness: each user in turn inflates its demand by each factor F (> 0), and claims every server (a run per lie)")
    au.add_argument("--no-claims", action="store_true", help="--misreport: try only the inflated demands, not the claims of every server")
    au.add_argument("--time-limit", type=_positive_float, default=10.0, help="seconds the Pareto programme may take (default 10)")
    au.add_argument("--json", type=Path, metavar="OUT", help="write the audit and the truthful run's tasks as JSON")
    _add_quiet(au)

    sw = sub.add_parser("sweep", help="run every combination of a sweep file's grid in parallel processes or on a Dask cluster (resumable)")
    sw.add_argument("sweep_file", type=Path, metavar="SWEEP.toml", help="a TOML file with a [sweep] table (see bench/*.toml)")
    sw.add_argument("--out", type=Path, help="results directory (default: results/<sweep name>/)")
    sw.add_argument("--workers", type=_positive_int, help="parallel runs on this machine (default: all cores)")
    sw.add_argument("--scheduler", metavar="ADDRESS", help="run on a Dask cluster: a scheduler's address (tcp://HOST:8786) or local[:N] (a local cluster of N worker processes); needs pip install 'dgdrf[cluster]'")
    sw.add_argument("--timeout", type=_positive_float, help="give up on a run after this many wall seconds (recorded as failed)")
    sw.add_argument("--retry-failed", action="store_true", help="run again the runs recorded as failed (default: only the unfinished)")
    sw.add_argument("--limit", type=_positive_int, help="start at most this many runs now (the rest on a later resume)")
    sw.add_argument("--dry-run", action="store_true", help="list the runs and what is already done, run nothing")
    sw.add_argument("--prune-stale", action="store_true", help="move the records made by code that has changed since (reports leave them out) to OUT/stale.jsonl.gz, run nothing")
    _add_quiet(sw)
    sw.add_argument("--html", action="store_true", help="also each run's page, in OUT/pages/KEY.html (dgdrf run --html's; a click on the run's point in report.html opens it)")

    rp = sub.add_parser("report", help="figures (PNG) and a markdown summary of a sweep's results")
    rp.add_argument("results_dir", type=Path, nargs="+", metavar="RESULTS_DIR", help="directories written by dgdrf sweep (several are merged into one report)")
    rp.add_argument("--out", type=Path, help="where to write report.md and the figures (default: the first RESULTS_DIR)")
    rp.add_argument("--html", action="store_true", help="also report.html: the report as one self-contained page, its figures interactive")
    _add_quiet(rp)

    sch = sub.add_parser("schema", help="print the JSON Schema of scenario files or of sweep files (an editor checks and completes them with it)")
    sch.add_argument("kind", choices=("scenario", "sweep"), metavar="KIND", help="scenario: scenario files (TOML or JSON); sweep: sweep files (TOML)")

    bench = sub.add_parser("bench", help="benchmarks")
    bsub = bench.add_subparsers(dest="bench", metavar="BENCH", parser_class=OneLineErrorParser)
    bsub.required = True
    br = bsub.add_parser("runtime", help="messages per wall second of the virtual-time runtime")
    br.add_argument("--actors", default="1000,10000", help="comma-separated actor counts (default 1000,10000)")
    br.add_argument("--messages", type=_positive_int, default=1_000_000, help="messages per measurement (default 1000000)")
    br.add_argument("--fanout", type=_positive_int, default=4, help="messages in flight per actor (default 4)")
    br.add_argument("--repeat", type=_positive_int, default=3, help="measurements per actor count; the median is reported (default 3)")
    br.add_argument("--no-baseline", action="store_true", help="skip the asyncio.Queue-per-actor baseline")
    br.add_argument("--json", type=Path, metavar="OUT", help="write the figures as JSON")
    _add_quiet(br)
    bn = bsub.add_parser("net", help="messages per second of the aiohttp transport between two processes on loopback, with and without batching")
    bn.add_argument("--messages", type=_positive_int, default=200_000, help="messages per batched measurement (unbatched: a tenth; default 200000)")
    bn.add_argument("--window", type=_positive_int, default=1000, help="messages sent before yielding to the loop (default 1000)")
    bn.add_argument("--repeat", type=_positive_int, default=3, help="measurements per mode; the median is reported (default 3)")
    bn.add_argument("--json", type=Path, metavar="OUT", help="write the figures as JSON")
    _add_quiet(bn)
    bo = bsub.add_parser("overlay", help="Cyclon 10k/50k nodes (c=50, l=8, 100 cycles) and push-sum 100k nodes (30 cycles)")
    bo.add_argument("--scale", type=_number(float, 0.0, 1.0, True, "a fraction in (0, 1]"), default=1.0, help="multiply the node counts (quick look: 0.1)")
    bo.add_argument("--json", type=Path, metavar="OUT", help="write the figures as JSON")
    _add_quiet(bo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from dgdrf.log import configure

    # a node's log is the record of its part in a run: its state changes (INFO) unless --quiet
    configure(verbose=getattr(args, "verbose", False) or (args.command == "node" and not args.quiet))
    if getattr(args, "quiet", False):
        import contextlib
        import os

        with open(os.devnull, "w") as nowhere, contextlib.redirect_stdout(nowhere):  # tables and summaries, whoever prints them
            return _command(args)
    return _command(args)


def _command(args: argparse.Namespace) -> int:
    try:
        if args.command == "run":
            return cmd_run(args)
        if args.command == "scenario":
            return cmd_scenario(args)
        if args.command == "bench":
            return cmd_bench(args)
        if args.command == "overlay":
            return cmd_overlay(args)
        if args.command == "sweep":
            return cmd_sweep(args)
        if args.command == "node":
            return cmd_node(args)
        if args.command == "cluster":
            return cmd_cluster(args)
        if args.command == "report":
            return cmd_report(args)
        if args.command == "schema":
            return cmd_schema(args)
        if args.command == "audit":
            return cmd_audit(args)
        if args.command == "oracle":
            return cmd_oracle(args)
    except DgdrfError as exc:
        print(f"dgdrf: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("dgdrf: interrupted", file=sys.stderr)
        return 130
    return 0


def _load_scenario_file(path: Any, lenient: bool) -> Any:
    """A scenario file for a command, its warnings (keys ``--lenient`` ignored) on stderr as
    it is read, whichever command reads it."""
    from dgdrf.config import load_scenario

    scenario = load_scenario(path, lenient)
    for w in scenario.warnings:
        print(f"dgdrf: warning: {w}", file=sys.stderr)
    return scenario


def _load_run_inputs(args: argparse.Namespace):
    from dgdrf.emulation import RunConfig
    from dgdrf.model.generators import google_2011_scenario
    from dgdrf.config import load_scenario

    if args.scenario and (args.servers or args.users):
        raise ConfigError("give either --scenario or --servers/--users, not both")
    if (args.servers is None) != (args.users is None):
        raise ConfigError("--servers and --users go together")
    seed = args.seed
    if args.scenario:
        scenario = _load_scenario_file(args.scenario, args.lenient)
    elif args.servers:
        from dgdrf.memory_budget import check_nodes

        check_nodes(args.servers, args.users)  # before generating: a size beyond memory is one line, not a MemoryError
        scenario = google_2011_scenario(args.servers, args.users, 1 if seed is None else seed)
    else:
        with resources.as_file(resources.files("dgdrf") / "data" / "default.toml") as path:
            scenario = load_scenario(path)
    from dgdrf.options import given

    s = scenario.settings
    overrides = given(args, _run_options())
    config = RunConfig.from_settings(s, str(args.scenario) if args.scenario else None, **overrides)
    if args.policy:
        policies = [p.strip() for p in args.policy.split(",") if p.strip()]
    elif args.scenario and "policy" in s:
        policies = [s["policy"]]
    else:
        policies = list(DEFAULT_COMPARISON)
    return scenario, config, policies


def cmd_run(args: argparse.Namespace) -> int:
    from dgdrf.emulation import run_emulation
    from dgdrf.policies import POLICIES

    scenario, config, policies = _load_run_inputs(args)
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or not policies:
        raise ConfigError(unknown_policy(unknown[0], POLICIES) if unknown else f"no policy given; known policies: {', '.join(POLICIES)}")
    config.validate()
    if args.html is not None:
        _check_writable(args.html, "--html")
    results = []
    recorders = []
    with _RunProgress(enabled=not args.quiet and sys.stderr.isatty()) as bar:
        for policy in policies:
            observers = []
            if args.html is not None:
                from dgdrf.pages.recorder import RunRecorder

                recorders.append(RunRecorder())
                observers.append(recorders[-1])
            results.append(run_emulation(scenario, replace(config, policy=policy), progress=bar.track(policy, config.max_time), observers=observers))
    if not args.quiet:
        from dgdrf.report_table import print_results

        print_results(scenario, results)
    if args.json:
        docs = [r.to_dict() for r in results]
        _write_json(args.json, docs[0] if len(docs) == 1 else docs)
    if args.html is not None:
        from dgdrf.pages.run_page import run_page

        records = [r.record for r in recorders if r.record is not None]
        _write_text(args.html, run_page(scenario, records, command="dgdrf " + " ".join(sys.argv[1:])), "--html")
    status = 0
    for r in results:
        if r.invariant_violations:
            print(f"dgdrf: error: {r.policy}: {len(r.invariant_violations)} invariant violations, first: {r.invariant_violations[0]}", file=sys.stderr)
            status = 1
    bad = scenario.unplaceable_users()
    if bad:
        demands = {u.id: list(u.demand) for u in scenario.users}
        print(f"dgdrf: error: user {bad[0]!r} (demand {demands[bad[0]]}) fits on no server" + (f", nor do {len(bad) - 1} more users ({', '.join(bad[1:4])}{'...' if len(bad) > 4 else ''})" if len(bad) > 1 else "") + "; the run ended without them", file=sys.stderr)
        status = status or EXIT_BAD_INPUT
    return status


#: the notions ``dgdrf oracle`` computes
ORACLE_NOTIONS = ("tsf", "cdrf", "drfh", "udrf")


def cmd_oracle(args: argparse.Namespace) -> int:
    """``dgdrf oracle``: the offline allocation (model/lp_filling.py, model/udrf.py)."""
    from dgdrf.config import load_scenario
    from dgdrf.model.problem import Problem

    scenario = load_scenario(args.scenario)
    if args.notion == "udrf":
        from dgdrf.model.udrf import udrf_from_scenario, udrf_offline

        u = udrf_offline(udrf_from_scenario(scenario, str(args.scenario)))
        doc: dict[str, object] = {
            "notion": "udrf", "scenario": scenario.name, "tasks": {user: sum(jobs.values()) for user, jobs in u.jobs.items()},
            "shares": u.shares, "jobs": u.jobs, "levels": u.levels, "rducs": u.rducs,
        }
        rows = [(user, f"{sum(jobs.values()):.6g}", f"{u.shares[user]:.6g}", ", ".join(f"{j} {x:.6g}" for j, x in jobs.items())) for user, jobs in u.jobs.items()]
        head = ("user", "job runs", "share (eq. 12)", "per job")
    else:
        from dgdrf.model.lp_filling import progressive_filling_lp

        r = progressive_filling_lp(Problem.from_scenario(scenario), args.notion)
        doc = {"notion": r.notion, "scenario": scenario.name, "tasks": r.display_tasks(), "shares": r.shares, "units": r.units, "levels": r.levels, "rounds": r.rounds}
        rows = [(user, f"{r.display_tasks()[user]:.6g}", f"{r.shares[user]:.6g}", f"{r.units[user]:.6g}") for user in r.tasks]
        head = ("user", "tasks", "share", "unit (tasks alone)" if args.notion != "drfh" else "unit (1 / dominant share of a task)")
    if not args.quiet:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"{scenario.name}: offline {args.notion} (divisible tasks; per-server splits are not unique and not shown)")
        for h in head:
            table.add_column(h, justify="left" if h in ("user", "per job") else "right")
        for row in rows:
            table.add_row(*row)
        Console().print(table)
    if args.json:
        _write_json(args.json, doc)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """``dgdrf audit``: run the policy, audit its allocation (dgdrf/auditing.py)."""
    from dgdrf.misreports import audit_policy
    from dgdrf.policies import POLICIES

    if args.notion:
        return _audit_offline(args)
    scenario, config, policies = _load_run_inputs(args)
    if not args.policy and "policy" not in scenario.settings:
        policies = ["drf"]
    if len(policies) != 1:
        raise ConfigError(f"audit one known policy at a time (--policy NAME), got {', '.join(policies)}")
    if policies[0] not in POLICIES:
        raise ConfigError(unknown_policy(policies[0], POLICIES))
    config = replace(config, policy=policies[0]).validate()
    try:
        report, run = audit_policy(scenario, config, factors=tuple(args.misreport or ()), claim_servers=bool(args.misreport) and not args.no_claims, time_limit=args.time_limit, probe=bool(args.misreport))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    print(f"{scenario.name}: {config.policy}, {run['stop_reason']}, tasks {run['tasks']}")
    print(report.summary_line())
    for line in report.evidence_lines():
        print(f"  {line}")
    if args.json:
        _write_json(args.json, {"policy": config.policy, "scenario": scenario.name, "tasks": run["tasks"], "per_server": run["per_server"], "stop_reason": run["stop_reason"], **report.to_dict()})
    return 0


def _audit_offline(args: argparse.Namespace) -> int:
    """``dgdrf audit --notion``: the oracle's totals, and the lies that gain."""
    from dgdrf.misreports import offline_misreports
    from dgdrf.model.lp_filling import progressive_filling_lp
    from dgdrf.model.problem import Problem

    if not args.scenario or args.policy or args.servers:
        raise ConfigError("--notion audits the offline oracle of a scenario file: give --scenario FILE, and no --policy or --servers")
    scenario = _load_scenario_file(args.scenario, args.lenient)
    r = progressive_filling_lp(Problem.from_scenario(scenario), args.notion)
    print(f"{scenario.name}: offline {args.notion}, tasks {r.display_tasks()}")
    lies = offline_misreports(scenario, args.notion, tuple(args.misreport or (2.0,)), not args.no_claims)
    gains = [x for x in lies if x["gains"]]
    print(f"SP ok ({len(lies)} lies tried)" if not gains else f"SP FAIL ({len(gains)} of {len(lies)} lies gain)")
    for g in gains:
        print(f"  strategy-proofness: {g['user']} lying ({g['lie']}) runs {g['lying_tasks']:.6g} true tasks, {g['truthful_tasks']:.6g} truthfully")
    if args.json:
        _write_json(args.json, {"notion": args.notion, "scenario": scenario.name, "tasks": r.display_tasks(), "shares": r.shares, "strategy_proof": not gains, "misreports": lies})
    return 0


def _factors(text: str) -> list[float]:
    """--misreport F[,F...]: positive factors."""
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected factors like 2 or 1.5,2, got {text!r}") from None
    if not values or any(not (v > 0) or v == float("inf") for v in values):
        raise argparse.ArgumentTypeError(f"factors must be positive numbers, got {text!r}")
    return values


class _RunProgress:
    """``dgdrf run``'s progress bar on a terminal: per policy, the simulated time reached,
    the allocations made, and how many simulated seconds a wall second covers (a long
    run, such as a whole Google cell, shows it is moving and how fast). Off with
    ``--quiet`` or when stderr is not a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Progress | None = None

    def __enter__(self) -> _RunProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[sim]}"),
                TextColumn("{task.fields[allocations]}"), TextColumn("{task.fields[speed]}"), TimeElapsedColumn(),
                console=Console(stderr=True), transient=False,
            )
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def track(self, policy: str, max_time: float) -> Callable[[float, int], None] | None:
        """A progress callback for one run (None when disabled: the run goes unsliced)."""
        if self.bar is None:
            return None
        import time

        bar = self.bar
        task = bar.add_task(policy, total=None, sim="", allocations="", speed="")
        t0 = time.perf_counter()

        def update(sim: float, allocations: int) -> None:
            wall = time.perf_counter() - t0
            speed = f"{sim / wall:,.1f} sim-s/s" if wall > 0 else ""
            bar.update(task, sim=f"{sim:,.0f} s simulated", allocations=f"{allocations:,} allocations", speed=speed)

        return update


#: the source ``dgdrf scenario`` gives the generator, whose errors it rewrites to name
#: the flag (generate.load: -> --load:)
FLAGS_SOURCE = "flags"


def cmd_scenario(args: argparse.Namespace) -> int:
    from dgdrf.model.generators import google_2011_scenario

    if (args.machine_events is None) != (args.task_events is None):
        raise ConfigError("--machine-events and --task-events go together")
    if args.output.suffix.lower() != ".json":
        raise ConfigError(f"-o {args.output}: scenarios are written as JSON; name the file *.json")
    trace_jobs = {"task_constraints": args.task_constraints, "machine_attributes": args.machine_attributes, "window": args.window}
    generated_jobs = {"horizon": args.horizon, "load": args.load, "constrained": args.constrained}
    given_for = [k for k, v in {**trace_jobs, **generated_jobs}.items() if v is not None]
    if given_for and not args.jobs:
        raise ConfigError(f"--{given_for[0].replace('_', '-')} is for scenarios of jobs: give --jobs too")
    if args.jobs:
        from dgdrf.model.generators import generate_from_spec

        spec: dict[str, Any] = {"servers": args.servers, "users": args.users, "seed": args.seed}
        if args.machine_events:
            wrong = [k for k, v in generated_jobs.items() if v is not None]
            if wrong:
                raise ConfigError(f"--{wrong[0]} is for generated jobs, not a trace's")
            spec |= {"kind": "google-trace", "jobs": True, "machine_events": str(args.machine_events), "task_events": str(args.task_events)}
            spec |= {k: (str(v) if isinstance(v, Path) else list(v)) for k, v in trace_jobs.items() if v is not None}
        else:
            wrong = [k for k, v in trace_jobs.items() if v is not None]
            if wrong:
                raise ConfigError(f"--{wrong[0].replace('_', '-')} is for a trace's jobs (with --machine-events and --task-events)")
            spec |= {"kind": "google-2011-jobs", **{k: v for k, v in generated_jobs.items() if v is not None}}
        try:
            scenario = generate_from_spec(spec, source=FLAGS_SOURCE)
        except ScenarioError as exc:  # the generator names its spec's key; here it came from a flag
            raise ConfigError(re.sub(rf"^{FLAGS_SOURCE}: generate\.(\w+)", lambda m: "--" + m[1].replace("_", "-"), str(exc))) from None
    elif args.machine_events:
        from dgdrf.model.google_trace import read_google_trace

        scenario = read_google_trace(args.machine_events, args.task_events, servers=args.servers, users=args.users, seed=args.seed)
    else:
        from dgdrf.memory_budget import SCENARIO_BYTES_PER_NODE, check_nodes

        check_nodes(args.servers, args.users, SCENARIO_BYTES_PER_NODE, SCENARIO_BYTES_PER_NODE)
        scenario = google_2011_scenario(args.servers, args.users, args.seed)
    try:
        scenario.write_json(args.output)
    except OSError as exc:
        raise ConfigError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    jobs = [j for u in scenario.users for j in u.jobs]
    what = f", {len(jobs)} jobs, {sum(j.tasks or 0 for j in jobs):,} tasks" if jobs else ""
    for w in scenario.warnings:
        print(f"dgdrf: warning: {w}", file=sys.stderr)
    print(f"wrote {args.output}: {len(scenario.servers)} servers, {len(scenario.users)} users{what} ({scenario.name})")
    return 0


def cmd_overlay(args: argparse.Namespace) -> int:
    from dgdrf.overlay_run import OverlayConfig, run_overlay
    from dgdrf.report_table import print_overlay

    from dgdrf.options import declared, given

    config = OverlayConfig(**given(args, declared(OverlayConfig))).validate()
    observers = []
    if args.html is not None:
        from dgdrf.pages.overlay_page import OverlaySnapshots

        _check_writable(args.html, "--html")
        observers.append(OverlaySnapshots(_html_cycles(args.html_cycles, config)))
    elif args.html_cycles is not None:
        raise ConfigError("--html-cycles: draws cycles on the page of --html FILE, which is not given")
    result = run_overlay(config, observers=observers)
    doc = result.to_dict()
    if args.html is not None:
        from dgdrf.pages.overlay_page import overlay_page

        _write_text(args.html, overlay_page(result, observers[0].snapshots, command="dgdrf " + " ".join(sys.argv[1:])), "--html")
    if not args.quiet:
        print_overlay(doc)
    if args.json:
        _write_json(args.json, doc)
    return 0


def _html_cycles(text: str | None, config: Any) -> list[int]:
    """The cycles ``--html-cycles`` names (each measured: a multiple of --metrics-every,
    or the last), or the default ones."""
    from dgdrf.pages.overlay_page import default_cycles

    if text is None:
        return [k for k in default_cycles(config.cycles) if k % config.metrics_every == 0 or k == config.cycles] or [config.cycles]
    try:
        cycles = sorted({int(w) for w in text.split(",") if w.strip()})
    except ValueError:
        raise ConfigError(f"--html-cycles: whole numbers separated by commas, got {text!r}") from None
    bad = [k for k in cycles if not 1 <= k <= config.cycles or (k % config.metrics_every and k != config.cycles)]
    if not cycles or bad:
        raise ConfigError(f"--html-cycles: cycles from 1 to {config.cycles} that are measured (multiples of --metrics-every {config.metrics_every}, or the last), got {text!r}")
    return cycles


def _check_writable(path: Path, flag: str) -> None:
    """Refuse, before a run, a file it could not write after it (a missing folder, a folder)."""
    if path.is_dir():
        raise ConfigError(f"{flag}: {path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise ConfigError(f"{flag}: no folder {path.parent} to write {path.name} in")


def _write_text(path: Path, text: str, flag: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from None


def _write_json(path: Path, doc: Any) -> None:
    _write_text(path, json.dumps(doc, indent=1) + "\n", "--json")


def _run_flags(args: argparse.Namespace) -> list[str]:
    """The scenario and run flags given, as command-line words for a bootstrap node."""
    from dgdrf.options import given, to_words

    words: list[str] = []
    for name in ("policy", "scenario", "servers", "users"):
        v = getattr(args, name, None)
        if v is not None:
            words += [f"--{name}", str(v)]
    if getattr(args, "lenient", False):
        words.append("--lenient")
    return words + to_words(given(args, _run_options()), _run_options())


def _env_run_defaults(args: argparse.Namespace) -> None:
    """Containers configure the bootstrap's run by environment variables: DGDRF_SCENARIO,
    DGDRF_SERVERS, DGDRF_USERS, DGDRF_POLICY and DGDRF_<OPTION> for every declared option;
    a flag given wins."""
    import os

    from dgdrf.options import from_environment

    for name, kind in (("scenario", Path), ("servers", int), ("users", int), ("policy", str)):
        raw = os.environ.get(f"DGDRF_{name.upper()}")
        if getattr(args, name, None) is None and raw:
            try:
                setattr(args, name, kind(raw))
            except ValueError:
                raise ConfigError(f"environment DGDRF_{name.upper()}={raw!r} is not a valid {name}") from None
    env = from_environment(dict(os.environ), _run_options(), lambda var, problem: ConfigError(f"environment {var}: {problem}"))
    for name, value in env.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)


def _cluster_inputs(args: argparse.Namespace) -> tuple[Any, RunConfig]:
    """Scenario and configuration of a cluster: as for dgdrf run, but one policy
    (drf unless the flags or the scenario file name one)."""
    from dgdrf.policies import POLICIES

    scenario, config, policies = _load_run_inputs(args)
    if not args.policy and "policy" not in scenario.settings:
        policies = ["drf"]
    if len(policies) != 1:
        raise ConfigError(f"a cluster runs one policy, got {', '.join(policies)}")
    if policies[0] not in POLICIES:
        raise ConfigError(unknown_policy(policies[0], POLICIES))
    if config.churn_departures or config.churn_joins:
        which = "churn_departures" if config.churn_departures else "churn_joins"
        raise ConfigError(f"{which}: churn is emulated (dgdrf run); in a cluster, servers leave when their processes stop and join when a dgdrf node starts")
    return scenario, replace(config, policy=policies[0]).validate()


def cmd_node(args: argparse.Namespace) -> int:
    from dgdrf.cluster.node import NodeOptions, main_node

    opts = NodeOptions(
        role=args.role, bootstrap=(args.bootstrap or "").rstrip("/"), listen=args.listen, advertise=args.advertise, count=args.count,
        token=args.token or None, batching=not args.no_batching, json_out=args.json, quiet=args.quiet, die_with_parent=args.die_with_parent, dashboard=args.dashboard or None,
        keys=Path(args.keys) if args.keys else None, key_name=args.key_name or None, insecure=args.insecure,
    )
    if opts.keys is not None and args.wait_keys > 0:
        from dgdrf.cluster.keys import wait_for_keys

        wait_for_keys(opts.keys, opts.key_name or opts.role, args.wait_keys)
    if args.role == "bootstrap":
        _env_run_defaults(args)
        opts.scenario, opts.config = _cluster_inputs(args)
    elif not opts.bootstrap.startswith(("http://", "https://")):
        raise ConfigError(f"--bootstrap must be the bootstrap's URL (http://host:port), got {args.bootstrap!r}")
    if args.role != "bootstrap" and args.listen.startswith("0.0.0.0:") and not args.advertise:
        from urllib.parse import urlparse
        import socket

        target = urlparse(opts.bootstrap).hostname or "127.0.0.1"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect((target, 9))
                opts.advertise = s.getsockname()[0]
            except OSError as exc:
                raise ConfigError(f"cannot find this host's address towards {target}: {exc}; give --advertise") from None
    if args.listen.startswith("0.0.0.0:") and not opts.advertise:
        import socket

        opts.advertise = socket.gethostname()
    return main_node(opts)  # bad or missing credentials: one clear line before anything starts (node_tls)


def cmd_cluster(args: argparse.Namespace) -> int:
    from dgdrf.cluster.launcher import cluster_up

    if args.cluster == "keys":
        from dgdrf.cluster.keys import make_keys, node_names

        from dgdrf.cluster.keys import CA_CERT

        if args.if_missing and (args.dir / CA_CERT).exists():
            _say(args, f"keys already in {args.dir}: kept")
            return 0
        files = make_keys(args.dir, node_names(args.servers, args.users), days=args.days, force=args.force)
        _say(args, f"{len(files) // 2 - 1} certificates and the CA in {args.dir}: give each node ca.crt and its own NAME.crt/NAME.key (--keys DIR --key-name NAME); keep ca.key on this machine")
        return 0
    scenario, config = _cluster_inputs(args)
    words = _run_flags(args)
    if "--policy" not in words:
        words += ["--policy", config.policy]
    if args.dashboard is not None:
        from dgdrf.cluster.node import host_port, loopback

        host, port = host_port(args.dashboard, "--dashboard")
        if not loopback(host) and args.insecure:
            raise ConfigError(f"--dashboard: refusing to serve the dashboard on {args.dashboard} without TLS (--insecure): beyond loopback it serves HTTPS with the cluster's keys")
        _say(args, f"dgdrf cluster: dashboard at {'http' if loopback(host) else 'https'}://{args.dashboard}/" if port else "dgdrf cluster: dashboard on a free port: the collector's log says which")
    code, result, cluster = cluster_up(words, len(scenario.servers), len(scenario.users), args.processes, args.timeout, token=args.token, batching=not args.no_batching, tls=not args.insecure, dashboard=args.dashboard)
    if not args.keep_keys:
        cluster.remove_keys()  # made for this run: the CA's private key does not outlive it
    if result is None:
        print(f"dgdrf cluster: no result; node logs in {cluster.logs}", file=sys.stderr)
        return code or 1
    if not args.quiet:
        from dgdrf.measurement import RunResult
        from dgdrf.report_table import print_results

        print_results(scenario, [RunResult.from_dict(result)])
    _say(args, f"{result['processes']} processes; node logs in {cluster.logs}" + (f", keys in {cluster.keys}" if args.keep_keys and not args.insecure else ""))
    if args.json:
        _write_json(args.json, result)
    if result["invariant_violations"]:
        print(f"dgdrf: error: {len(result['invariant_violations'])} invariant violations, first: {result['invariant_violations'][0]}", file=sys.stderr)
        return 1
    if result["stop_reason"] == "interrupted":
        print(f"dgdrf: error: the run was stopped before its end ({'a signal' if code == 130 else f'--timeout {args.timeout:g} s'}); the result above is its part so far", file=sys.stderr)
        return code or 1
    if code:  # the collector's verdict: a run that ended for a reason it should not have
        print(f"dgdrf: error: the run ended early: {result['stop_reason'].replace('_', ' ')} (the collector's log in {cluster.logs} says more)", file=sys.stderr)
    return code


def cmd_sweep(args: argparse.Namespace) -> int:
    from dgdrf.bench.staleness import is_stale
    from dgdrf.bench.grid import load_sweep
    from dgdrf.bench.store import STALE_JSONL, TORN_LINES, check_output_dir, drop_unreadable, prune_stale, read_records
    from dgdrf.bench.sweep import run_sweep

    spec = load_sweep(args.sweep_file)
    out = args.out or Path("results") / spec.home().name  # a part of a sweep writes into the whole's
    if args.prune_stale:
        moved = prune_stale(out)
        _say(args, f"{out}: {moved} record(s) of code that has changed since moved to {out / STALE_JSONL}")
        return 0
    check_output_dir(out, spec)
    runs = spec.runs()
    records, bad = read_records(out)
    if bad and not args.dry_run:
        moved = drop_unreadable(out)
        print(f"dgdrf: warning: {out}: {moved} unreadable result line(s) (cut by an interruption?) moved to {out / TORN_LINES}; those runs will be redone", file=sys.stderr)
    elif bad:
        print(f"dgdrf: warning: {out}: {bad} unreadable result line(s) (cut by an interruption?); a sweep will move them aside and redo those runs", file=sys.stderr)
    status = {r["key"]: "stale" if is_stale(r) else r["status"] for r in records}  # stale: run again
    if args.dry_run:
        for run in runs:
            p = run.params
            print(f"{run.key}  {status.get(run.key, 'todo'):5s}  " + " ".join(f"{k}={v}" for k, v in p.items() if k not in ("scenario_digest",)))
        ok = sum(status.get(r.key) == "ok" for r in runs)
        print(f"{spec.name}: {len(runs)} runs, {ok} done, {sum(status.get(r.key) == 'error' for r in runs)} failed, {len(runs) - ok} to run")
        return 0
    outcome = run_sweep(spec, out, workers=args.workers, retry_failed=args.retry_failed, timeout=args.timeout, progress=not args.quiet, limit=args.limit, scheduler=args.scheduler, html=args.html)
    ended = "".join(f", {n} {reason}" for reason, n in sorted(outcome.stops.items()))  # every end but saturation
    line = f"{spec.name}: {outcome.done} runs done in {outcome.wall_s:.1f} s ({outcome.failed} failed{ended}), {outcome.skipped} already recorded, {outcome.total} in the grid; results in {out}"
    _say(args, line)
    if outcome.interrupted:
        print("dgdrf: interrupted; finished runs are recorded, run the same command again to resume", file=sys.stderr)
        return 130
    if outcome.failed:
        print(f"dgdrf: error: {outcome.failed} run(s) failed; their errors are in {out / 'results.csv'} (rerun with --retry-failed)", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dgdrf.bench.report import write_report

    path = write_report(args.results_dir, args.out, html=args.html)
    print(f"report written to {path}" + (f" and {path.with_name('report.html')}" if args.html else ""))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    """``dgdrf schema KIND``: the JSON Schema of KIND's files on stdout (dgdrf/schema.py;
    the package ships the same as dgdrf/data/KIND.schema.json)."""
    from dgdrf.schema import render

    sys.stdout.write(render(args.kind))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from dgdrf.bench.runtime import bench_runtime_command

    if args.bench == "net":
        from dgdrf.bench.net import bench_net_command

        return bench_net_command(args.messages, args.window, args.repeat, args.json)
    if args.bench == "overlay":
        from dgdrf.bench.overlay import bench_overlay_command

        return bench_overlay_command(args.json, args.scale)
    try:
        actors = [int(x) for x in args.actors.split(",")]
    except ValueError:
        raise ConfigError(f"--actors must be comma-separated integers, got {args.actors!r}") from None
    if any(a < 2 for a in actors):
        raise ConfigError(f"--actors needs at least 2 actors per run, got {args.actors!r}")
    return bench_runtime_command(actors, args.messages, args.fanout, args.repeat, args.json, baseline=not args.no_baseline)


if __name__ == "__main__":
    sys.exit(main())
