"""The bootstrap kernel family (``scorekit._kernels.bootstrap``) on both backends: every resample's
statistic against the plain Python loop on ``random.Random`` (bit for bit), both summations
(CPython <= 3.11's plain ``sum`` and 3.12's compensated one), and bad input."""

from __future__ import annotations

import math
import random
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit._kernels import _core, bootstrap
from scorekit._kernels import bootstrap_numba as twin


def neumaier_sum(xs):
    """CPython >= 3.12's ``sum`` of floats (checked against 3.12.1's and 3.13.0's builtin on
    20,000 random lists with infinities and -0.0 while writing the kernel)."""
    f = c = 0.0
    for x in xs:
        t = f + x
        c += (f - t) + x if abs(f) >= abs(x) else (x - t) + f
        f = t
    return f + c if c and math.isfinite(c) else f


def plain_sum(xs):
    f = 0.0
    for x in xs:
        f += x
    return f


def add(compensated):
    return neumaier_sum if compensated else plain_sum


def generator(rng):
    """The state of ``rng`` as the kernels take it, and a copy of ``rng`` to draw the reference."""
    state = rng.getstate()
    copy = random.Random()
    copy.setstate(state)
    return np.array(state[1][:-1], dtype=np.uint32), state[1][-1], copy


def reference(rows, rng, resamples, stat):
    n = len(rows)
    return [stat([rows[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples)]


def means(values, rng, resamples, compensated):
    words, pos, copy = generator(rng)
    got = bootstrap._impl().bootstrap_means(np.array(values, dtype=np.float64), words, pos, resamples,
                                             compensated)
    total = add(compensated)
    return got.tolist(), reference(values, copy, resamples, lambda s: total(s) / len(s))


def ratios(pairs, rng, resamples, compensated):
    words, pos, copy = generator(rng)
    costs = np.array([c for c, _ in pairs], dtype=np.float64)
    wins = np.array([w for _, w in pairs], dtype=np.float64)
    got = bootstrap._impl().bootstrap_ratios(costs, wins, words, pos, resamples, compensated)
    total = add(compensated)

    def ratio(sample):
        w = total([w for _, w in sample])
        return math.inf if w <= 0 else total([c for c, _ in sample]) / w

    return got.tolist(), reference(pairs, copy, resamples, ratio)


def test_cpython_vectors(backend):
    # Random(0).randrange(5) x 10 = [3, 3, 0, 2, 4, 3, 3, 2, 3, 2]: resample 0 of range(5) is
    # [3, 3, 0, 2, 4] (mean 2.4), resample 1 [3, 3, 2, 3, 2] (mean 2.6)
    got = bootstrap.resample_means(np.arange(5.0), 0, 2)
    assert got.tolist() == [2.4, 2.6]
    assert bootstrap.resample_means(np.array([1.0, 2, 3, 4, 5]), 0, 6).tolist() == [3.4, 3.6, 3.4, 3.2, 2.4, 3.2]
    stats = np.sort(bootstrap.resample_means(np.array([1.0, 2, 3, 4, 5]), 0, 2000))
    assert (stats[50], stats[1950]) == (1.8, 4.2)
    assert bootstrap.resample_ratios(np.array([1e-5, 1e-5, 3e-5]), np.array([1.0, 0, 0]), 7, 9).tolist() == [
        3.0000000000000004e-05, 2.5e-05, 5e-05, 7.000000000000001e-05, 1e-05, 3.0000000000000004e-05,
        2.5e-05, 5e-05, 2.5e-05]


@pytest.mark.parametrize("compensated", [False, True])
def test_matches_the_python_loop(backend, compensated):
    rng = random.Random(31)
    for n, resamples in [(1, 3), (2, 17), (7, 8), (9, 9), (64, 33), (300, 21), (624, 3), (2500, 2)]:
        for seed in (0, 1, -7, 2**40 + 3, "seed", 3.5):
            gen = random.Random(seed)
            for _ in range(rng.randrange(3)):   # sometimes mid-state (pos < 624)
                gen.random()
            values = [rng.uniform(-1, 1) * 10 ** rng.randint(-8, 8) for _ in range(n)]
            got, want = means(values, gen, resamples, compensated)
            assert got == want, (n, seed)
            gen = random.Random(seed)
            pairs = [(rng.choice([0.0, 1e-6, rng.random() * 1e-3]), float(rng.random() < 0.3)) for _ in range(n)]
            got, want = ratios(pairs, gen, resamples, compensated)
            assert got == want, (n, seed)


def test_summations_differ_where_python_versions_do(backend):
    # sum([1e16, 1.0, -1e16]) is 0.0 up to Python 3.11 and 1.0 from 3.12 on
    values = np.array([1e16, 1.0, -1e16])
    impl = bootstrap._impl()
    assert impl.float_sum(values, False) == 0.0
    assert impl.float_sum(values, True) == 1.0
    assert impl.float_sum(np.full(10, 0.1), False) == 0.9999999999999999
    assert impl.float_sum(np.full(10, 0.1), True) == 1.0
    assert impl.float_sum(np.array([math.inf, 1.0]), True) == math.inf
    assert impl.float_sum(np.empty(0), True) == 0.0
    # the dispatching helper uses this interpreter's way: exactly the builtin
    rng = random.Random(5)
    for _ in range(300):
        xs = [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 12) for _ in range(rng.randrange(40))]
        assert bootstrap.float_sum(np.array(xs)) == sum(xs)


def test_compensated_flag_follows_the_interpreter():
    assert bootstrap.COMPENSATED is (sys.version_info >= (3, 12))
    if sys.version_info >= (3, 12):
        xs = [1e16, 1.0, -1e16]
        assert sum(xs) == neumaier_sum(xs) == 1.0


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=40),
       seed=st.integers(-2**70, 2**70), resamples=st.integers(1, 20), compensated=st.booleans())
def test_property_both_backends_match_python(values, seed, resamples, compensated):
    want = None
    for name in ("rust", "numba"):
        impl = _core if name == "rust" else twin
        words, pos, copy = generator(random.Random(seed))
        got = impl.bootstrap_means(np.array(values), words, pos, resamples, compensated).tolist()
        if want is None:
            total = add(compensated)
            want = reference(values, copy, resamples, lambda s: total(s) / len(s))
        assert got == want or all(a == b or (a != a and b != b) for a, b in zip(got, want))


def test_backends_agree_on_long_inputs():
    rng = np.random.default_rng(3)
    values = rng.standard_normal(5000) * 10.0 ** rng.integers(-6, 6, 5000)
    wins = (rng.random(5000) < 0.2).astype(np.float64)
    words, pos = bootstrap.generator_state(99)
    for compensated in (False, True):
        assert np.array_equal(_core.bootstrap_means(values, words, pos, 40, compensated),
                              twin.bootstrap_means(values, words, pos, 40, compensated))
        assert np.array_equal(_core.bootstrap_ratios(values, wins, words, pos, 40, compensated),
                              twin.bootstrap_ratios(values, wins, words, pos, 40, compensated))
        assert _core.float_sum(values, compensated) == twin.float_sum(values, compensated)


def test_no_win_gives_inf(backend):
    got = bootstrap.resample_ratios(np.array([2.0, 3.0]), np.zeros(2), 1, 5)
    assert got.tolist() == [math.inf] * 5
    assert bootstrap.resample_ratios(np.array([2.0]), np.array([1.0]), 1, 3).tolist() == [2.0] * 3


def test_generator_state_of_any_seed():
    for seed in (0, -5, 2**100, "abc", b"xyz", 1.5):
        words, pos = bootstrap.generator_state(seed)
        assert words.dtype == np.uint32 and len(words) == 624 and pos == 624
        assert words.tolist() == list(random.Random(seed).getstate()[1][:-1])
    a, _ = bootstrap.generator_state(None)
    b, _ = bootstrap.generator_state(None)
    assert not np.array_equal(a, b)   # OS entropy


def test_bad_input(backend):
    impl = bootstrap._impl()
    words, pos = bootstrap.generator_state(0)
    one = np.ones(3)
    with pytest.raises(ValueError, match="values must not be empty"):
        impl.bootstrap_means(np.empty(0), words, pos, 5, False)
    with pytest.raises(ValueError, match="state must hold 624 words, got 623"):
        impl.bootstrap_means(one, words[:-1], pos, 5, False)
    with pytest.raises(ValueError, match=r"pos must be in \[0, 624\], got 625"):
        impl.bootstrap_means(one, words, 625, 5, False)
    with pytest.raises(ValueError, match=r"wins must have one value per cost \(3\), got 2"):
        impl.bootstrap_ratios(one, one[:2], words, pos, 5, False)
    with pytest.raises(TypeError):
        impl.bootstrap_means(one.astype(np.float32), words, pos, 5, False)
    with pytest.raises(TypeError):
        impl.bootstrap_means(one, words.astype(np.int64), pos, 5, False)
    with pytest.raises(TypeError):
        impl.bootstrap_means(np.ones((2, 2)), words, pos, 5, False)
    with pytest.raises(OverflowError):
        impl.bootstrap_means(one, words, pos, -1, False)
    with pytest.raises(OverflowError):
        impl.bootstrap_means(one, words, -1, 5, False)
    assert impl.bootstrap_means(one, words, pos, 0, False).tolist() == []
    # an all-zero state only ever gives 0: every draw is accepted, nothing hangs
    zeros = np.zeros(624, dtype=np.uint32)
    assert impl.bootstrap_means(np.array([4.0, 8.0]), zeros, 0, 3, False).tolist() == [4.0] * 3
    # infinities pass through (inf - inf is NaN; the callers reject it)
    got = impl.bootstrap_means(np.array([math.inf, -math.inf]), words, pos, 50, False)
    assert set(np.isnan(got)) == {True, False}
