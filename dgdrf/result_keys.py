"""The keys of a run's result (``dgdrf run --json``, ``RunResult.to_dict()``), each with
what it means and in which runs it appears: the one list the documentation's reference
page is drawn from, and which tests/test_result_keys.py holds against what runs
actually write (a key written and not listed here, or listed for emulation and never
written, fails it), so that the page cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the kinds of run in which a key appears
EVERY_RUN = "every run"
NETWORK = "network runs"


@dataclass(frozen=True)
class ResultKey:
    """One or several keys of a result, documented together. ``where``: the runs that
    have them (:data:`EVERY_RUN`, :data:`NETWORK`, or a phrase naming the condition)."""

    keys: tuple[str, ...]
    meaning: str
    where: str = EVERY_RUN


RESULT_KEYS: tuple[ResultKey, ...] = (
    ResultKey(("policy", "scenario", "servers", "users", "seed", "tick", "neighbors", "latency_ms"), "what was run"),
    ResultKey(("runtime_s",), "simulated seconds from the first allocation tick (after `warmup_s`) until the run ended (the thesis's run-time, to saturation)"),
    ResultKey(("warmup_s", "capacity_knowledge"), "gossip time before allocation starts (0 for centralized policies); how servers knew the cluster capacity C (`exact` or `pushsum`)"),
    ResultKey(("wall_s",), "wall-clock seconds the emulation took (the only key that differs between identical runs)"),
    ResultKey(("stop_reason", "saturated"), "why the run ended: `saturated`, `drained` (every task of every finite job that can still run ended), `stranded` (probes), `stalled` (a bug) or `max_time` (the limit reached); `saturated` is true when it ended at saturation"),
    ResultKey(("stranded_users",), "when stranded: the users whose next task fits somewhere but is held only where it does not"),
    ResultKey(("allocations",), "tasks placed"),
    ResultKey(("min_share",), "lowest final share under the run's notion (the global dominant share, eq. 3.3, for DRF), the policy's objective; weighted (G_i / w_i) when users have weights"),
    ResultKey(("gini", "jain", "ratio_20_20"), "Gini coefficient (eq. 2.7), Jain's index and 20:20 ratio (eq. 2.8; `null`: infinite) over the final shares"),
    ResultKey(("error_ratio",), "fraction of allocations whose user did not hold the lowest share among the users whose next task still fitted somewhere (thesis 5.3)"),
    ResultKey(("error_ratio_tol",), '`{"0.01", "0.05", "0.10", "0.15"}` → the same when users within that relative distance of the minimum do not count as errors'),
    ResultKey(("error_curve",), "cumulative error ratio over the allocations made (thesis figs. 5.6-5.7): `allocations` and one list per tolerance (`exact`, `0.01` ... `0.15`)"),
    ResultKey(("shares", "tasks"), "final global dominant share and task count per user id"),
    ResultKey(("utilization",), "used / capacity per resource over the cluster, at the end"),
    ResultKey(("messages", "bytes"), "totals and per message type (`by_type`); every message is msgpack-encoded, also in-process"),
    ResultKey(("latency_s",), "allocation latency (task submitted → running): p50, p90, p99, mean, max"),
    ResultKey(("unplaceable_users",), "users whose task fits on no server at all"),
    ResultKey(("invariant_violations",), "must be empty: no server over capacity, no task placed twice, one accept per allocation"),
    ResultKey(("cost_per_tick",), "messages and bytes per allocation tick during allocation, by group (allocation, neighbour_state, gradient, peer_sampling, aggregation), next to the thesis's worst-case model (eqs. 4.3, 4.6)"),
    ResultKey(("events",), "counts of other reported events: rejections, declines, expired proposals, retransmissions, `servers_down`, `servers_up`, `users_down`, `given_up`, `resumed`, `task_overdue`, ..."),
    ResultKey(("audit",), "whether the final allocation is feasible, sharing-incentive, envy-free and Pareto-efficient (`null`: not decided within the run's bound), their whole-task relaxations (`..._up_to_one_task`, `pareto_efficient_in_place`) and the evidence (`below_guarantee`, `envious`, `pareto`)", "static scenarios (one demand per user, tasks that never end)"),
    ResultKey(("fairness",), "the notion the run is judged on, when it is not DRF's dominant share (`min_share`, `gini`, `jain`, `ratio_20_20` and the error ratio are then of it)", "the papers' policies"),
    ResultKey(("task_shares", "slowdowns", "psdsf_scores", "level_shares", "class_shares", "resource_shares"), "every user's share under the run's notion: TSF's task shares, CDRF's job slowdowns, PS-DSF's scores, a share level's shares, UDRF's shares over machine classes, CMMF's shares of one resource", "the papers' policies, the one of its notion"),
    ResultKey(("instances",), "per user, per job of parts (a gang): how many of its instances ran whole (every task started)", "runs with jobs of parts"),
    ResultKey(("reservations",), "reservations of whole instances: `made`, `given_back` (declined, expired, a member gone), `partial` (a distributed policy's tries abandoned with part of the instance held) and the `held_resource_seconds` per resource of all those given back (held for nothing)", "runs with jobs of parts"),
    ResultKey(("jobs",), 'per job `{"user", "job", "arrival", "first_start", "finish", "tasks", "jct"}`, times in seconds from the start of allocation, `jct` = finish of its last task − arrival (`null` for a job that did not finish)', "runs with finite jobs"),
    ResultKey(("makespan", "jct_s", "queueing_delay_s"), "when the last task ended (of the jobs not given up or withdrawn); job completion times `{mean, p50, p95, p99, max}`; per task, its start − its job's arrival, the same summary", "runs with finite jobs"),
    ResultKey(("unfinished_tasks",), "tasks that did not run to completion, per user (absent when every task did)", "runs with finite jobs"),
    ResultKey(("unrunnable_jobs",), 'the jobs given up because no server up could run them, `{"user", "job", "tasks_left", "why", "since"}` (`tasks_left` `null` for an endless job; `since` in seconds from the start of allocation); `[]` when none', "runs with jobs"),
    ResultKey(("withdrawn_jobs",), 'a crashed user\'s jobs not done, `{"user", "job", "tasks_left", "why", "since"}`', "runs in which a user crashed"),
    ResultKey(("time_avg_shares", "jain_time_avg", "gini_time_avg", "min_time_avg_share"), "each user's (weighted) share averaged over the time it competed (had a task pending), integrated exactly between events, and Jain's index, Gini and the minimum over them", "runs with jobs, weights or constraints"),
    ResultKey(("sharing_over_time",), "sharing incentive over time (`dgdrf/model/sharing_over_time.py`): per user its held and guaranteed shares averaged over its active time, `below` (the fraction of that time it waited below its guarantee) and `shortfall` (the part of its guaranteed resource-time it did not get); `most_below`, `most_shortfall`, `users_ever_below`", "runs whose tasks end"),
    ResultKey(("envy_over_time",), "envy-freeness over time at the samples (`dgdrf/model/envy_over_time.py`): per user `wanting_s`, `envious` (the fraction of it another's resources would have run more of its next task) and `beyond_one` (even with one more task of its own: EF1); `most_envious`, `most_beyond_one`, `users_ever_beyond_one`, `envious_overall`, `beyond_one_overall`; `measured: false` with `why` above 5e7 users² × servers", "runs whose tasks end"),
    ResultKey(("samples",), "every `--sample-every` seconds: `time` (from the start of allocation), `utilization` per resource, `shares` per user, `running` tasks", "runs whose tasks end, or with `--sample-every`"),
    ResultKey(("churn",), "the departures and joins drawn: their times and servers, `join_schedule` (time, id, the server whose kind the newcomer has)", "runs with `--churn-departures` or `--churn-joins`"),
    ResultKey(("weights", "time_scale"), "the users' weights when one is not 1; the time scale when not 1", "runs with weights, or a time scale"),
    ResultKey(("per_server",), "`{user: {server: tasks}}`", "runs with `--per-server`"),
    ResultKey(("mode", "tls", "processes", "rejected_frames"), '`"network"`, whether the cluster ran with keys (mutual TLS), how many processes took part, frames and requests each process rejected by reason; `wall_s` and `runtime_s` are then wall-clock seconds', NETWORK),
    ResultKey(("members_down", "members_up", "handler_errors", "connections_lost", "unreachable_processes", "tasks_lost_on_dead_servers"), "actors declared down by role, servers that joined, handler exceptions on every node, connections that ended without a close, processes whose counters could not be read at the end, tasks accepted on servers that died before they started", NETWORK),
)


def documented() -> dict[str, ResultKey]:
    """Every documented key, with its entry."""
    return {key: entry for entry in RESULT_KEYS for key in entry.keys}
