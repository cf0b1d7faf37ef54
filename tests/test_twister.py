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


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**62), st.lists(st.integers(1, 2**62), min_size=1, max_size=30), st.lists(st.integers(0, 100), min_size=1, max_size=10))
def test_a_twister_draws_bits_and_indices_as_random_does(seed: int, sizes: list[int], bits: list[int]) -> None:
    """getrandbits (one word up to 32 bits, several beyond) and randbelow (what choice
    draws its index with) draw what random.Random draws, and leave the same state."""
    tw, ref = Twister.seeded(seed), random.Random(seed)
    assert [tw.getrandbits(k) for k in bits] == [ref.getrandbits(k) for k in bits]
    assert [tw.randbelow(n) for n in sizes] == [ref._randbelow(n) for n in sizes]  # type: ignore[attr-defined]  # CPython's own
    assert [tw.randbelow(n) for n in range(1, 40)] == [ref.choice(range(n)) for n in range(1, 40)]
    assert tw.to_random().getstate() == ref.getstate()
