"""The thesis-size scenarios (configs/thesis-100x20.toml): the relations of thesis ch. 5
on the real cluster size. Several minutes: marked slow, run with ``pytest -m slow``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dgdrf.emulation import RunConfig, run_emulation
from dgdrf.config import load_scenario

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.slow
@pytest.mark.parametrize("neighbors", [2, 6])
def test_thesis_100x20_relations(neighbors):
    sc = load_scenario(CONFIGS / "thesis-100x20.toml")
    r = {p: run_emulation(sc, RunConfig(policy=p, neighbors=neighbors)) for p in ("drf", "fifo", "probes", "ddrf-random", "ddrf-gradient", "dgdrf")}
    for res in r.values():
        assert res.invariant_violations == []
    assert r["dgdrf"].error_ratio == 0.0  # thesis tables 5.3/5.4
    assert r["dgdrf"].min_share >= 0.97 * r["drf"].min_share
    for p in ("ddrf-random", "probes"):
        assert r[p].error_ratio > 0.7 and r[p].min_share < 0.5 * r["dgdrf"].min_share
    assert r["dgdrf"].error_ratio < r["ddrf-gradient"].error_ratio < r["ddrf-random"].error_ratio
    assert r["drf"].min_share > 3 * r["fifo"].min_share
