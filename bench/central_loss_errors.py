"""Why the centralized server-offer policies err under message loss (issue 35's sweep).

    python bench/central_loss_errors.py > bench/results/central-loss-errors-40x8.txt

Runs ``tsf`` and ``psdsf`` on configs/google-finite-40x8.toml (seed 1, 1 % loss, as a
cell of bench/overlay-fairness-40x8.toml) and classifies every allocation judged an
error by where the next request of the user with the lowest score (on the server the
task went to) was at that moment: *at the scheduler* (it had it: a real misordering),
*sent, not received* (its user had sent it; it was lost and waits for the user's retry,
or is in flight), or *not yet sent* (its previous task had just started). The observer
reads and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path


from dgdrf.config import RunConfig, load_scenario
from dgdrf.policies.centralized import CentralScheduler
from dgdrf.world import Observer, build

SCENARIO = Path(__file__).resolve().parent.parent / "configs" / "google-finite-40x8.toml"


class Where(Observer):
    def started(self, world) -> None:
        self.causes: Counter[str] = Counter()
        self.scheduler = next(r for a in world.transport.actors.values() for r in getattr(a, "roles", []) if isinstance(r, CentralScheduler))

    def allocated(self, world, rec) -> None:
        if not rec.erred:
            return
        c = world.collector
        led = c.ledger
        uid = led.user_ids[c.lowest_competitor(led.server_index[rec.server])]
        if uid in self.scheduler.pending:
            self.causes["at the scheduler"] += 1
        elif c.current.get(uid) == -1:
            self.causes["not yet sent"] += 1
        else:
            self.causes["sent, not received"] += 1


def main() -> None:
    scenario = load_scenario(SCENARIO)
    print(f"{scenario.name}, seed 1, 1 % loss: errors by where the lowest user's next request was\n")
    for policy in ("tsf", "psdsf"):
        obs = Where()
        r = build(scenario, RunConfig(policy=policy, seed=1, loss=0.01).validate()).run(observers=[obs])
        errors = sum(obs.causes.values())
        causes = ", ".join(f"{k} {v}" for k, v in obs.causes.most_common())
        print(f"{policy:6} {r.stop_reason:8} allocations {r.allocations}, errors {errors} ({r.error_ratio:.2%}): {causes}")


if __name__ == "__main__":
    main()
