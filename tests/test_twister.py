"""The compiled core's MT19937 (dgdrf/runtime/twister.py) draws what random.Random draws, from
the state it takes over, through many refills of its 624 words, and gives that state back."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from dgdrf.runtime.twister import Twister


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**62), st.integers(0, 700))
def test_a_twister_draws_what_random_draws_and_hands_its_state_back(seed: int, skip: int) -> None:
    ref = random.Random(seed)
    for _ in range(skip):  # anywhere in the 624-word block
        ref.random()
    tw = Twister(ref)
    draws = [tw.random() for _ in range(1500)]  # several refills
    assert draws == [ref.random() for _ in range(1500)]
    back = tw.to_random()
    assert back.getstate() == ref.getstate()
    assert [back.random() for _ in range(10)] == [ref.random() for _ in range(10)]
    tw.load(ref)
    assert tw.random() == ref.random()


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.integers(0, 2**62), st.integers(-(2**70), 2**70)))
def test_a_seeded_twister_is_random_random_of_that_seed(seed: int) -> None:
    tw = Twister.seeded(seed)
    ref = random.Random(seed)
    assert tw.to_random().getstate() == ref.getstate()
    assert tw.uniform(0.0, 1.5) == ref.uniform(0.0, 1.5)
    assert [tw.random() for _ in range(700)] == [ref.random() for _ in range(700)]
