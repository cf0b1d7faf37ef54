"""d-psdsf's design choices, each against the alternative it was chosen over (issue 35).

    python bench/dpsdsf_design.py > bench/results/dpsdsf-design.txt

Every alternative is the current code with one piece swapped for the run (the swap is
made in this script, in the worker process, and nothing else changes):

- ``settle 0``: a server offers at every tick, news in flight or not
  (policies/dpsdsf.py SETTLE_TICKS = 0; the default is 2);
- ``settle own``: a tick is skipped after this server's own changes too (its home users'
  reports), not only after news from other servers;
- ``taken at accept``: a server says "started" at once when its offer is accepted, not
  only when one is declined (to shorten the herd of offers for one task);

each on configs/google-finite-40x8.toml, seeds 1-3, P = 4: error ratio, proposals a task,
digests, JCT mean. Then:

- Kesidis et al.'s two workers (ORACLES.md example 8), endless tasks, seeds 1-12, with
  news sent to the last Cyclon partner when the view is caught empty (the default) and
  without (``sample`` only): tasks per process and error ratio;
- the digests of tests/test_dpsdsf.py's 8-server run;
- the minimum of the users' time-averaged K_n on the Google-like hour (seed 1), of
  ``psdsf`` at the default tick and at a tick of 0.01 s, and of ``d-psdsf``, with every
  user's time-averaged K_n under psdsf and d-psdsf.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
QUARTER = ROOT / "configs" / "google-finite-40x8.toml"
HOUR = ROOT / "configs" / "google-finite-100x20.toml"
KESIDIS = dict(resources=["cpu", "mem"], servers=[("w1", [100, 30]), ("w2", [30, 100])], users=[("p1", [5, 1]), ("p2", [1, 5])])
VARIANTS = ("default", "settle 0", "settle own", "taken at accept")


def _swap(variant: str) -> None:
    """Swap one piece of d-psdsf for this process (see the module docstring)."""
    import dgdrf.policies.dpsdsf as dpsdsf
    from dgdrf.policies.ddrf import HomeScheduler
    from dgdrf.policies.user_directory import UserDirectory

    if variant == "settle 0":
        dpsdsf.SETTLE_TICKS = 0
    elif variant == "settle own":
        news = UserDirectory._news
        UserDirectory._news = lambda self, reports, heard=False: news(self, reports, True)  # type: ignore[method-assign]
    elif variant == "taken at accept":
        def resolved(self, user: str, task_id: int, outcome: str) -> None:
            if self._offer == (user, task_id):
                self._offer = None
            self._changed()
            HomeScheduler._resolved(self, user, task_id, outcome)
            self.directory.taken(user, task_id)  # accepted too
        dpsdsf.OfferScheduler._resolved = resolved  # type: ignore[method-assign]
    elif variant == "no fallback":
        def spread(self, reports) -> None:
            if self.sampler is not None:
                digest = self._pack(reports, reply=True)
                for peer in self.sampler.sample(self.fanout):
                    self.actor.send(peer, digest)
        UserDirectory._spread = spread  # type: ignore[method-assign]


def _quarter(job: tuple[str, int]) -> tuple:
    from dgdrf.config import RunConfig, load_scenario
    from dgdrf.emulation import run_emulation

    variant, seed = job
    _swap(variant)
    r = run_emulation(load_scenario(QUARTER), RunConfig(policy="d-psdsf", seed=seed, neighbors=4))
    by = r.messages["by_type"]
    return variant, seed, r.stop_reason, r.error_ratio, by.get("Proposal", 0) / max(r.allocations, 1), by.get("UserDigest", 0), r.jct_s["mean"]


def _kesidis(job: tuple[str, int]) -> tuple:
    from dgdrf.emulation import RunConfig, run_emulation
    from dgdrf.model.scenario import build_scenario

    variant, seed = job
    _swap(variant)
    r = run_emulation(build_scenario(**KESIDIS), RunConfig(policy="d-psdsf", per_server=True, seed=seed, neighbors=3))
    return variant, seed, r.stop_reason, r.per_server, r.error_ratio


def _hour(job: tuple[str, float]) -> tuple:
    from dgdrf.config import RunConfig, load_scenario
    from dgdrf.emulation import run_emulation

    policy, tick = job
    r = run_emulation(load_scenario(HOUR), RunConfig(policy=policy, seed=1, tick=tick))
    return policy, tick, r.stop_reason, r.min_time_avg_share, r.time_avg_shares


def _test_digests() -> tuple[int, int]:
    from dgdrf.emulation import RunConfig, run_emulation
    from dgdrf.model.generators import google_2011_jobs_scenario

    sc = google_2011_jobs_scenario(8, 4, seed=5, horizon=300, load=3.0, constrained=0.5)
    r = run_emulation(sc, RunConfig(policy="d-psdsf", warmup=5.0, neighbors=3))
    return r.messages["by_type"].get("UserDigest", 0), r.allocations


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    with multiprocessing.Pool(a.workers, maxtasksperchild=1) as pool:  # a fresh process a run: each swap stays in its own
        hour = pool.map_async(_hour, [("psdsf", 0.1), ("psdsf", 0.01), ("d-psdsf", 0.1)], chunksize=1)
        quarter = pool.map(_quarter, [(v, s) for v in VARIANTS for s in (1, 2, 3)], chunksize=1)
        kesidis = pool.map(_kesidis, [(v, s) for v in ("default", "no fallback") for s in range(1, 13)], chunksize=1)
        hours = hour.get()
    print(f"{QUARTER.name}, d-psdsf, P = 4: each design choice against its alternative\n")
    print(f"{'variant':16} {'seed':>4} {'end':8} {'errors':>7} {'offers/task':>11} {'digests':>8} {'JCT mean':>9}")
    for v, seed, end, err, offers, digests, jct in quarter:
        print(f"{v:16} {seed:>4} {end:8} {err:>7.2%} {offers:>11.1f} {digests:>8} {jct:>9.1f}")
    print("\nKesidis et al.'s two workers (ORACLES.md example 8), endless tasks: tasks per process and worker, errors")
    for v, seed, end, per, err in kesidis:
        tasks = " ".join(f"{u}:{'/'.join(str(per.get(u, {}).get(w, 0)) for w in ('w1', 'w2'))}" for u in ("p1", "p2"))
        print(f"{v:12} seed {seed:>2} {end:10} {tasks:16} errors {err:.2%}")
    digests, allocations = _test_digests()
    print(f"\ntests/test_dpsdsf.py's 8-server run: {digests} UserDigest messages for {allocations} tasks")
    print(f"\n{HOUR.name}, seed 1: the minimum of the users' time-averaged K_n, and each user's")
    for policy, tick, end, low, per in hours:
        print(f"{policy:8} tick {tick:<5} {end:8} min {low:.5f}")
    per = {p: s for p, t, _, _, s in hours if t == 0.1}
    users = sorted(per["psdsf"], key=lambda u: int(u[1:]) if u[1:].isdigit() else u)
    print("  user    psdsf  d-psdsf")
    for u in users:
        print(f"  {u:5} {per['psdsf'][u]:8.3f} {per['d-psdsf'][u]:8.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
