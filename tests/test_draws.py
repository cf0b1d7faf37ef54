"""The bootstrap's draws (runtime/draws.py): compiled, numbers taken from numpy's bit
generator in C must be those ``Generator.integers`` draws, and the distinct positions
those its batches give; interpreted, the numpy call itself."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dgdrf.runtime import draws
from dgdrf.runtime.draws import distinct_draws


def _by_integers(rng: np.random.Generator, n: int, k: int, exclude: int) -> list[int]:
    """The bootstrap's picks as the numpy calls make them: batches of 2 k, the first k
    distinct positions other than ``exclude``."""
    picks: list[int] = []
    while len(picks) < k:
        for i in rng.integers(0, n, 2 * k).tolist():
            if i != exclude and i not in picks:
                picks.append(i)
                if len(picks) == k:
                    break
    return picks


def test_the_c_path_is_trusted_on_this_numpy():
    """Where the module is compiled, its C draws agreed with numpy's on import (else the
    numpy call would stay, and the bootstrap's first period would be slower)."""
    assert draws._C_DRAWS


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    n=st.one_of(st.integers(1, 40), st.integers(1, 2**32 - 1)),
    want=st.integers(0, 30),
    exclude_at=st.one_of(st.none(), st.integers(0, 2**32)),
    rounds=st.integers(1, 4),
)
def test_distinct_draws_are_those_of_numpys_batches_and_leave_the_generator_alike(seed, n, want, exclude_at, rounds):
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    exclude = -1 if exclude_at is None else exclude_at % n
    k = min(want, n - (exclude >= 0))
    for _ in range(rounds):
        got = distinct_draws(ours, n, k, exclude)
        assert got == _by_integers(theirs, n, k, exclude)
        assert len(set(got)) == k and exclude not in got and all(0 <= i < n for i in got)
    assert ours.integers(0, 2**40, 4).tolist() == theirs.integers(0, 2**40, 4).tolist()


@pytest.mark.parametrize("n", [1, 2, 3, 7, 50])
def test_every_other_position_is_drawn_when_all_are_wanted(n):
    """k = n - 1 with position 0 excluded: every other position, once each."""
    got = distinct_draws(np.random.default_rng(n), n, n - 1, 0)
    assert sorted(got) == list(range(1, n))
