"""What crashes, churn and partitions do to each policy, and to the overlays alone.

Allocation runs: every policy on a generated 20-server, 6-user cluster (google_2011
seed 4, run seed 1, P = 3, warm-up 2 s) without a control, with its servers cut off from
everyone else from 3 to 6 s, with half its servers cut off from 3 to 15 s under 5 % loss,
and with 5 servers leaving (a Poisson process of mean gap 2 s from 3 s on). Each run must
end for a right reason (saturated; probes: or stranded, thesis 4.2) with no invariant
violation; the table gives the end, the allocations, the minimum dominant share and the
messages a partition lost.

Crashes under heavy loss: the policies with home schedulers and walks (ddrf-random,
ddrf-gradient, dgdrf, pdgdrf) at 20 % loss, s3 and s7 crashing at 2.33 s or 5 s, seeds 1-3
(the setting in which an overdue walk stalled dgdrf, fixed on 2026-11-26). And the crash
of a user (u2 at 3 s) under every policy: the others' tasks go on to saturation, the
crashed user's running tasks stay, and nobody proposes to it after the crash is detected.

Overlay runs (``dgdrf overlay``'s OverlayRun): half of 1,000 Cyclon nodes crash at 10.5 s,
nobody told, and the entries live views hold of the dead are counted per cycle; the top
third of 150 gradient nodes crash at 20.5 s, and the cycles until one correct centre
(eq. 3.11) holds again, for good, are counted for both gradient kinds.

    python bench/controls_survey.py > bench/results/controls-survey.txt

Deterministic (virtual time, fixed seeds): the same code prints the same table.
"""

from __future__ import annotations

from dgdrf.emulation import Churn, Partition, RunConfig, build, run_emulation
from dgdrf.model.generators import google_2011_scenario
from dgdrf.overlay_run import OverlayConfig, OverlayRun
from dgdrf.policies import POLICIES
from dgdrf.world import Crash

SCENARIO = google_2011_scenario(20, 6, 4)
SERVERS = tuple(s.id for s in SCENARIO.servers)


def _allocation_cases() -> list[tuple[str, dict, list]]:
    return [
        ("none", {}, []),
        ("servers cut off 3-6 s", {}, [Partition(3.0, 6.0, (SERVERS,))]),
        ("half cut off 3-15 s, 5 % loss", {"loss": 0.05}, [Partition(3.0, 15.0, (SERVERS[:10],))]),
        ("churn: 5 leave, every 2 s from 3 s", {}, [Churn(every=2.0, departures=5, start=3.0)]),
    ]


def allocation_table() -> list[str]:
    lines = [f"{'policy':<13} {'control':<36} {'end':<10} {'allocations':>11} {'min share':>9} {'lost to partition':>17} {'servers down':>12} {'violations':>10}"]
    for policy in POLICIES:
        for label, extra, controls in _allocation_cases():
            config = RunConfig(policy=policy, seed=1, neighbors=3, warmup=2.0, **extra)
            r = run_emulation(SCENARIO, config, controls=controls)
            lines.append(
                f"{policy:<13} {label:<36} {r.stop_reason:<10} {r.allocations:>11} {r.min_share:>9.4f} {r.messages.get('partitioned', 0):>17} "
                f"{r.events.get('servers_down', 0):>12} {len(r.invariant_violations):>10}"
            )
    return lines


def crash_under_loss_table() -> list[str]:
    lines = [f"{'policy':<13} {'seed':>4} {'crash at':>8} {'end':<10} {'allocations':>11} {'overdue':>7} {'servers down':>12} {'violations':>10}"]
    for policy in ("ddrf-random", "ddrf-gradient", "dgdrf", "pdgdrf"):
        for seed in (1, 2, 3):
            for at in (2.33, 5.0):
                config = RunConfig(policy=policy, seed=seed, neighbors=3, warmup=2.0, loss=0.2)
                r = run_emulation(SCENARIO, config, controls=[Crash(at=at, addresses=("s3", "s7"))])
                lines.append(
                    f"{policy:<13} {seed:>4} {at:>8} {r.stop_reason:<10} {r.allocations:>11} {r.events.get('task_overdue', 0):>7} "
                    f"{r.events.get('servers_down', 0):>12} {len(r.invariant_violations):>10}"
                )
    return lines


def user_crash() -> list[str]:
    lines = [f"user u2 crashed at 3 s (after the warm-up, for distributed policies):\n{'policy':<13} {'end':<10} {'allocations':>11} {'u2 tasks':>8} {'t (s)':>7} {'expired':>7}"]
    for policy in POLICIES:
        config = RunConfig(policy=policy, seed=1, neighbors=3, warmup=2.0)
        world = build(SCENARIO, config)
        r = world.run(controls=[Crash(at=world.start + 3.0, addresses=("u2",))])
        lines.append(f"{policy:<13} {r.stop_reason:<10} {r.allocations:>11} {r.tasks['u2']:>8} {r.runtime_s:>7.2f} {r.events.get('proposal_expired', 0):>7}")
    return lines


def cyclon_recovery() -> list[str]:
    gone = tuple(f"n{i}" for i in range(0, 1000, 2))
    run = OverlayRun(OverlayConfig(protocol="cyclon", nodes=1000, cycles=40), [Crash(at=10.5, addresses=gone)])
    run.run()
    lines = ["cyclon, 1,000 nodes (c = 10, l = 5), the even half crashed at 10.5 s:", f"{'cycle':>5} {'dead entries':>12} {'in-degree mean':>14} {'std':>5} {'view fill':>9}"]
    for c in run.per_cycle:
        if c["cycle"] in (10, 11, 12, 14, 16, 18, 20, 24, 28, 32, 36, 40):
            lines.append(f"{c['cycle']:>5} {c.get('dead_entries', 0):>12} {c['indegree_mean']:>14.2f} {c['indegree_std']:>5.2f} {c['view_fill']:>9.2f}")
    return lines


def gradient_recovery() -> list[str]:
    lines = ["gradient, 150 nodes (P = 4), the top third of utilities crashed at 20.5 s:"]
    for kind in ("stamped", "toolbox"):
        config = OverlayConfig(protocol="gradient", gradient=kind, nodes=150, cycles=160, neighbors=4)
        utilities = OverlayRun(config).utilities
        top = tuple(sorted(utilities, key=utilities.__getitem__)[-50:])
        run = OverlayRun(config, [Crash(at=20.5, addresses=top)])
        run.run()
        ok = [c["centre_correct"] for c in run.per_cycle]
        steady = next((i + 1 for i in range(len(ok)) if all(ok[i:])), None)
        lost = sum(1 for c in run.per_cycle[20:] if not c["centre_correct"])
        final = run.per_cycle[-1]
        lines.append(
            f"  {kind:<8} centre correct for good from cycle {steady} (cycles 21-160 without one: {lost}); "
            f"converged fraction at 160: {final['converged_fraction']:.3f}"
        )
    return lines


def main() -> None:
    print("\n".join(allocation_table()))
    print()
    print("\n".join(crash_under_loss_table()))
    print()
    print("\n".join(user_crash()))
    print()
    print("\n".join(cyclon_recovery()))
    print()
    print("\n".join(gradient_recovery()))


if __name__ == "__main__":
    main()
