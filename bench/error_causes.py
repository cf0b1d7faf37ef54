"""Where a distributed policy's errors on finite jobs come from (issue 35): at each
allocation judged an error, the state of the home entry of the user with the lowest
share, how long since that user's last task ended, and how long the allocated task took
from its home's decision to its start.

    python bench/error_causes.py dg-tsf > bench/results/error-causes-dg-tsf-100x20.txt
    python bench/error_causes.py dgdrf >> bench/results/error-causes-dg-tsf-100x20.txt

Runs configs/google-finite-100x20.toml (seed 1, P = 4 unless ``--seed``/``--neighbors``).
The lowest user's state at its home: *stuck*, *idle*, *out* (its task under way), or
competing, split by whether its home's share of it equals the truth (else *share
stale*), whether it is its home's lowest, and whether that home takes itself for the
gradient's centre (``is_centre``). *unknown*: no home has heard of it.

To see task ends and home decisions, which an observer is not shown, the script wraps
the collector's handler of ``finished`` reports and every home's ``TaskDesk.place``: each
wrapper notes the time and calls the original, so the run is the one ``dgdrf run``
makes (its error ratio is printed to check).
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from dgdrf.config import RunConfig, load_scenario
from dgdrf.policies.ddrf import HomeScheduler
from dgdrf.world import Observer, build

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-finite-100x20.toml"


class ErrorCauses(Observer):
    def started(self, world) -> None:
        self.causes: Counter[str] = Counter()
        self.since_end: defaultdict[str, list[float]] = defaultdict(list)
        self.to_start: defaultdict[str, list[float]] = defaultdict(list)
        self.last_end: dict[str, float] = {}
        self.decided: dict[tuple[str, int], float] = {}
        collector = world.collector
        original = collector._on_finished

        def finished(server, time, fields):
            self.last_end[fields["user"]] = time
            return original(server, time, fields)

        collector._on_finished = finished  # the collector looks its handlers up by name
        self.homes = [r for a in world.transport.actors.values() for r in getattr(a, "roles", []) if isinstance(r, HomeScheduler)]
        for home in self.homes:
            place = home.desk.place

            def placed(user, task_id, *args, _place=place, **kw):
                self.decided.setdefault((user, task_id), world.clock.now())
                return _place(user, task_id, *args, **kw)

            home.desk.place = placed

    def allocated(self, world, rec) -> None:
        if not rec.erred:
            return
        c = world.collector
        ledger = c.ledger
        shares = c.judged_against(ledger.server_index[rec.server])[0]
        low = c.lowest_competitor(ledger.server_index[rec.server])
        uid = ledger.user_ids[low]
        home = next((h for h in self.homes if uid in h.home.users), None)
        cause = "unknown" if home is None else self._state(home, uid, float(shares[low]))
        self.causes[cause] += 1
        self.since_end[cause].append(rec.time - self.last_end.get(uid, -np.inf))
        self.to_start[cause].append(rec.time - self.decided.get((rec.user, rec.task_id), rec.time))

    @staticmethod
    def _state(home: HomeScheduler, uid: str, truth: float) -> str:
        u = home.home.users[uid]
        if u.stuck:
            return "stuck"
        if u.idle or u.request is None:
            return "idle"
        if u.out:
            return "out"
        meter = home.desk.meter
        known = u.share if meter is None else meter.share(u.share, u.request)
        if abs(known - truth) > 1e-9 * max(1.0, abs(truth)):
            return "competing, share stale"
        low = home.home.lowest()
        if low is None or low[0] != uid:
            return "competing, not its home's lowest"
        gradient = getattr(home, "gradient", None)
        return "competing, its home is centre" if gradient is not None and gradient.is_centre() else "competing, its home not centre"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("policy")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--neighbors", type=int, default=4)
    a = ap.parse_args()
    scenario = load_scenario(SCENARIO)
    config = replace(RunConfig.from_settings(scenario.settings, str(SCENARIO), seed=a.seed, neighbors=a.neighbors), policy=a.policy).validate()
    obs = ErrorCauses()
    r = build(scenario, config).run(observers=[obs])
    total = sum(obs.causes.values())
    print(f"{a.policy} on {SCENARIO.name}, seed {a.seed}, P = {a.neighbors}: {r.stop_reason}, {r.allocations} allocations, {total} errors (error ratio {r.error_ratio:.2%})")
    print(f"{'errors':>7}  {'lowest user at its home':34} {'since its last task end: < 0.1 s':>33} {'< 2 s':>6} {'decision to start p50 / p90 (s)':>32}")
    for cause, n in obs.causes.most_common():
        since, to = np.array(obs.since_end[cause]), np.array(obs.to_start[cause])
        print(f"{n:>7}  {cause:34} {np.mean(since < 0.1):>33.0%} {np.mean(since < 2):>6.0%} {np.median(to):>20.3f} / {np.quantile(to, 0.9):.3f}")
    print()


if __name__ == "__main__":
    main()
