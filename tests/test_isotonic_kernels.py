"""The isotonic kernel family (``scorekit._kernels.isotonic``) on both backends: the fit against a
brute-force pool-adjacent-violators in Python (bit for bit), against scikit-learn's
``IsotonicRegression`` (an independent implementation, to rounding), the two backends against each
other, inputs that pool slowly, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from scorekit._kernels import _core, isotonic, use_backend
from scorekit._kernels import isotonic_numba as twin

BACKENDS = [_core.isotonic_fit, twin.isotonic_fit]


def brute_force(scores, correct):
    """Group by distinct score, then pool the first adjacent pair that does not increase until
    none is left (levels compared exactly as fractions)."""
    from fractions import Fraction

    groups = {}
    for x, c in zip(scores, correct):
        hits, rows = groups.get(x + 0.0, (0, 0))
        groups[x + 0.0] = (hits + bool(c), rows + 1)
    blocks = [[[x], h, r] for x, (h, r) in sorted(groups.items())]
    while True:
        j = next((j for j in range(1, len(blocks))
                  if Fraction(blocks[j - 1][1], blocks[j - 1][2]) >= Fraction(blocks[j][1], blocks[j][2])), None)
        if j is None:
            break
        xs, h, r = blocks.pop(j)
        blocks[j - 1][0] += xs
        blocks[j - 1][1] += h
        blocks[j - 1][2] += r
    return [x for xs, _, _ in blocks for x in xs], [h / r for xs, h, r in blocks for _ in xs]


def fit(kernel, scores, correct):
    values, levels = kernel(np.asarray(scores, dtype=np.float64), np.asarray(correct, dtype=bool))
    return values.tolist(), levels.tolist()


@pytest.mark.parametrize("kernel", BACKENDS, ids=["rust", "numba"])
def test_hand_computed(kernel):
    assert fit(kernel, [1, 1, 1, 2, 2, 2, 3, 3, 3], [1, 0, 0, 1, 1, 0, 1, 1, 1]) == (
        [1.0, 2.0, 3.0], [1 / 3, 2 / 3, 1.0])
    # 0.8 right and 0.9 wrong pool into 0.5; the two wrong low scores stay at 0
    assert fit(kernel, [0.9, 0.8, 0.1, 0.2], [0, 1, 0, 0]) == ([0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 0.5, 0.5])
    values, levels = fit(kernel, [3.5, -0.0, 0.0, -2.0], [1, 1, 1, 1])
    assert values == [-2.0, 0.0, 3.5] and math.copysign(1, values[1]) == 1 and levels == [1.0] * 3
    assert fit(kernel, [], []) == ([], [])


@pytest.mark.parametrize("kernel", BACKENDS, ids=["rust", "numba"])
def test_random_rows_against_brute_force(kernel):
    rng = np.random.default_rng(5)
    for case in range(3000):
        n = int(rng.integers(0, 50))
        scale = [1e-3, 1.0, 1e8, 1e-300][case % 4]
        scores = (rng.integers(-4, 9, size=n) * scale).tolist()
        correct = (rng.random(n) < 0.5).tolist()
        assert fit(kernel, scores, correct) == brute_force(scores, correct), (scores, correct)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=False, allow_infinity=False), st.booleans()), max_size=40))
def test_backends_agree_and_match_brute_force(rows):
    scores, correct = [x for x, _ in rows], [c for _, c in rows]
    expected = brute_force(scores, correct)
    for kernel in BACKENDS:
        assert fit(kernel, scores, correct) == expected


def test_large_random_fits_match_scikit_learn_and_each_other():
    rng = np.random.default_rng(9)
    for n, rounding in ((200_000, None), (200_000, 3), (50_000, 1)):
        x = rng.normal(size=n)
        if rounding is not None:
            x = np.round(x, rounding)
        c = rng.random(n) < 1 / (1 + np.exp(-2 * x))
        values, levels = _core.isotonic_fit(x, c)
        twin_values, twin_levels = twin.isotonic_fit(x, c)
        assert np.array_equal(values, twin_values) and np.array_equal(levels, twin_levels)
        assert np.array_equal(values, np.unique(x))
        reference = IsotonicRegression().fit(x, c.astype(float)).predict(values)
        assert np.allclose(levels, reference, rtol=0, atol=1e-12)
        assert np.all(np.diff(levels) >= 0)


def test_one_thread_and_two_agree_and_name_the_first_bad_row():
    """Above 65,536 rows the compiled fit sorts the two outcomes' scores on two threads; one
    thread gives the same arrays, and a bad score is reported at its first row whichever part
    (correct or not) holds it."""
    rng = np.random.default_rng(4)
    x = np.round(rng.random(150_000), 4)
    c = rng.random(x.size) < x
    one, two = _core.isotonic_fit(x, c, 1), _core.isotonic_fit(x, c, 2)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))
    assert np.array_equal(one[0], np.unique(x))
    bad = x.copy()
    bad[70_000], bad[120_000] = np.nan, np.inf
    for first_label in (True, False):  # the first bad row among the correct rows, then the others
        labels = c.copy()
        labels[70_000], labels[120_000] = first_label, not first_label
        for threads in (1, 2):
            with pytest.raises(ValueError, match=r"scores\[70000\] is not a finite number"):
                _core.isotonic_fit(bad, labels, threads)
            with pytest.raises(ValueError, match=r"scores\[70000\] is not a finite number"):
                twin.isotonic_fit(bad, labels, threads)


def test_few_distinct_scores_are_grouped_by_hash_with_the_same_fit():
    """At most 4,096 distinct scores in each half of the rows: the compiled fit groups the rows by
    hash (each half on its own thread) instead of sorting them; the arrays are the same as the
    twin's (which always sorts) and as scikit-learn's levels, and a bad score is reported at its
    first row."""
    rng = np.random.default_rng(6)
    for decimals, n in ((2, 150_000), (3, 300_000), (0, 100_001)):
        x = np.round(rng.random(n) * 4 - 1, decimals)
        c = rng.random(n) < (x + 1) / 4
        one, two = _core.isotonic_fit(x, c, 1), _core.isotonic_fit(x, c, 2)
        expected = twin.isotonic_fit(x, c)
        assert all(np.array_equal(a, b) and np.array_equal(a, e) for a, b, e in zip(one, two, expected))
        assert np.array_equal(one[0], np.unique(x))
        assert np.allclose(one[1], IsotonicRegression().fit(x, c.astype(float)).predict(one[0]), rtol=0, atol=1e-12)
    bad = np.round(rng.random(200_000), 1)
    bad[150_000], bad[160_000] = np.inf, np.nan
    for threads in (1, 2):
        with pytest.raises(ValueError, match=r"scores\[150000\] is not a finite number"):
            _core.isotonic_fit(bad, bad > 0.5, threads)


def test_slowly_pooling_input():
    """Rising accuracies then one heavy all-wrong score, which absorbs every block before it (the
    pooled accuracy, 1/3, is below the first score's 1/2)."""
    k = 1000
    scores = np.repeat(np.arange(k + 1, dtype=np.float64), np.append(np.arange(2, k + 2), 10**6))
    correct = np.zeros(scores.size, dtype=bool)
    starts = np.concatenate(([0], np.cumsum(np.arange(2, k + 2))))
    for i in range(k):  # score i: i + 2 rows, i + 1 of them right
        correct[starts[i]:starts[i] + i + 1] = True
    for kernel in BACKENDS:
        values, levels = kernel(scores, correct)
        assert values.tolist() == list(range(k + 1))
        assert np.all(levels == correct.sum() / correct.size)


def test_dispatch_follows_the_backend():
    x, c = np.array([0.2, 0.1]), np.array([True, False])
    for backend in ("rust", "numba"):
        with use_backend(backend):
            values, levels = isotonic.isotonic_fit([0.2, 0.1], [1, 0])
            assert values.tolist() == [0.1, 0.2] and levels.tolist() == [0.0, 1.0]
    assert [a.tolist() for a in isotonic.isotonic_fit(x, c)] == [[0.1, 0.2], [0.0, 1.0]]


@pytest.mark.parametrize("kernel", BACKENDS, ids=["rust", "numba"])
def test_bad_input(kernel):
    with pytest.raises(ValueError, match=r"^2 scores but 1 correct flags$"):
        kernel(np.array([0.1, 0.2]), np.array([True]))
    with pytest.raises(ValueError, match=r"^scores\[1\] is not a finite number$"):
        kernel(np.array([0.1, math.nan]), np.array([True, False]))
    with pytest.raises(ValueError, match=r"^scores\[0\] is not a finite number$"):
        kernel(np.array([-math.inf]), np.array([True]))
    with pytest.raises(ValueError, match="contiguous"):
        kernel(np.arange(6.0)[::2], np.ones(3, dtype=bool))
