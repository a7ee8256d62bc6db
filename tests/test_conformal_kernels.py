"""The conformal kernel family (``scorekit._kernels.conformal``) on both backends: the fit and the
selection against sorting in Python (bit for bit), on random rows, ties, sorted and periodic orders
that defeat the sampled bracket, one thread against two, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit._kernels import _core, conformal, use_backend
from scorekit._kernels import conformal_numba as twin

FITS = [_core.conformal_fit, twin.conformal_fit]
SELECTS = [_core.kth_smallest, twin.kth_smallest]
IDS = ["rust", "numba"]


def brute_force_fit(probs, correct, alpha):
    """``(q, kept scores ascending)`` by the definition: the scores ``1 - p`` of the correct rows
    with a finite probability, sorted; ``q`` the ``ceil((n + 1)(1 - alpha))``-th of them."""
    kept = sorted(1.0 - p for p, c in zip(probs, correct) if c and math.isfinite(p))
    n, k = len(kept), math.ceil((len(kept) + 1) * (1 - alpha))
    q = math.inf if n == 0 or k > n else -math.inf if k <= 0 else kept[k - 1] + 0.0
    return q, kept


def fit(kernel, probs, correct, alpha, *threads):
    q, rows, n = kernel(np.asarray(probs, dtype=np.float64), np.asarray(correct, dtype=bool), alpha, *threads)
    return q, rows, n


def check_fit(kernel, probs, correct, alpha):
    q, rows, n = fit(kernel, probs, correct, alpha)
    expected_q, kept = brute_force_fit(probs, correct, alpha)
    assert math.copysign(1, q) == math.copysign(1, expected_q) and (q == expected_q), (q, expected_q)
    assert n == len(kept) and sorted(rows[~np.isnan(rows)].tolist()) == kept
    keep = np.asarray(correct, dtype=bool) & np.isfinite(np.asarray(probs, dtype=np.float64))
    assert np.array_equal(np.isnan(rows), ~keep)  # one score per row, NaN where a row is left out


@pytest.mark.parametrize("kernel", FITS, ids=IDS)
def test_hand_computed(kernel):
    probs = [.55, .6, .65, .7, .75, .8, .85, .9, .95, .99, .3, .4]
    correct = [True] * 10 + [False] * 2
    q, rows, n = fit(kernel, probs, correct, 0.2)  # rank ceil(11 * 0.8) = 9 of the 10 scores
    assert n == 10 and q == 1 - .6  # scores 0.01 ... 0.45 ascending: the 9th is 1 - 0.6
    assert rows[:10].tolist() == [1 - p for p in probs[:10]] and np.isnan(rows[10:]).all()
    q, rows, n = fit(kernel, [0.5, math.nan, math.inf, 1.0], [True, True, True, False], 0.0)
    assert (q, n) == (math.inf, 1)  # rank ceil(2 * 1) = 2 > 1 score
    assert fit(kernel, [0.5, 1.0], [True, True], 1.0)[0] == -math.inf  # rank 0
    q, rows, n = fit(kernel, [], [], 0.1)
    assert (q, rows.tolist(), n) == (math.inf, [], 0)


@pytest.mark.parametrize("kernel", FITS, ids=IDS)
def test_random_small_fits_against_brute_force(kernel):
    rng = np.random.default_rng(3)
    for case in range(3000):
        n = int(rng.integers(0, 60))
        probs = np.round(rng.random(n), int(rng.integers(1, 6)))
        probs[rng.random(n) < 0.05] = np.nan
        probs[rng.random(n) < 0.03] = np.inf
        correct = rng.random(n) < 0.7
        alpha = [0.0, 0.05, 0.1, 0.5, 1.0, float(rng.random())][case % 6]
        check_fit(kernel, probs.tolist(), correct.tolist(), alpha)


@pytest.mark.parametrize("kernel", FITS, ids=IDS)
def test_large_fits_against_sorting(kernel):
    """Long enough for the compiled kernel's sampled bracket (and its two threads)."""
    rng = np.random.default_rng(8)
    for n, digits in ((20_000, None), (150_000, None), (150_000, 2), (100_000, 0)):
        probs = rng.beta(4, 1.5, n)
        if digits is not None:
            probs = np.round(probs, digits)  # ties, down to two distinct values
        correct = rng.random(n) < probs
        for alpha in (0.01, 0.1, 0.5):
            q, rows, m = fit(kernel, probs, correct, alpha)
            ordered = np.sort(1.0 - probs[correct])
            assert m == ordered.size and q == ordered[math.ceil((m + 1) * (1 - alpha)) - 1]
            assert np.array_equal(rows[correct], 1.0 - probs[correct]) and np.isnan(rows[~correct]).all()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(0, 1), st.just(math.nan), st.just(math.inf)), st.booleans()),
                max_size=40),
       st.floats(0, 1))
def test_backends_agree_and_match_brute_force(rows, alpha):
    probs, correct = [p for p, _ in rows], [c for _, c in rows]
    for kernel in FITS:
        check_fit(kernel, probs, correct, alpha)


def sorted_kth(values, k):
    return float(np.sort(values[~np.isnan(values)])[k]) + 0.0


@pytest.mark.parametrize("select", SELECTS, ids=IDS)
def test_selection_against_sorting_on_orders_that_defeat_the_bracket(select):
    """The compiled selection brackets rank k with an evenly spaced sample; ties, sorted and
    reversed orders, and a period equal to the sample's stride (every sampled value alike) make
    the bracket miss or swell, and the result must not change."""
    rng = np.random.default_rng(11)
    n = 65_536  # 4 x 16,384: the sample takes every 4th value
    cases = {
        "uniform": rng.random(n),
        "sorted": np.sort(rng.random(n)),
        "reversed": np.sort(rng.random(n))[::-1].copy(),
        "two values": (rng.random(n) < 0.3).astype(np.float64),
        "one value": np.full(n, 0.25),
        "stride-periodic": np.tile([0.9, 0.1, 0.2, 0.3], n // 4) + rng.random(n) * 1e-3,
        "nan holes": np.where(rng.random(n) < 0.4, np.nan, rng.normal(size=n)),
        "infinities and zeros": rng.choice([-np.inf, np.inf, -0.0, 0.0, 1.5, -2.5], size=n),
    }
    for name, values in cases.items():
        counted = int(np.count_nonzero(~np.isnan(values)))
        for k in {0, 1, counted // 10, counted // 2, counted - 2, counted - 1} | set(rng.integers(0, counted, 6).tolist()):
            got = select(values, k)
            assert got == sorted_kth(values, k) and math.copysign(1, got) == math.copysign(1, sorted_kth(values, k)), (name, k)


def test_selection_of_random_sets_agrees_across_backends():
    rng = np.random.default_rng(12)
    for case in range(400):
        n = int(rng.integers(1, 40_000 if case % 10 == 0 else 200))
        values = rng.normal(size=n) * 10 ** float(rng.integers(-300, 300))
        values[rng.random(n) < 0.1] = np.nan
        counted = int(np.count_nonzero(~np.isnan(values)))
        if counted == 0:
            continue
        k = int(rng.integers(0, counted))
        expected = sorted_kth(values, k)
        assert _core.kth_smallest(values, k) == expected == twin.kth_smallest(values, k)


def test_one_thread_and_two_agree_and_name_the_first_bad_row():
    """Above 65,536 rows the compiled fit reads the two halves of the rows on two threads; one
    thread gives the same results, and a probability out of range is reported at its first row
    whichever half holds it, whatever the row's outcome."""
    rng = np.random.default_rng(4)
    probs = np.round(rng.random(150_000), 3)
    correct = rng.random(probs.size) < probs
    q1, rows1, n1 = fit(_core.conformal_fit, probs, correct, 0.1, 1)
    q2, rows2, n2 = fit(_core.conformal_fit, probs, correct, 0.1, 2)
    assert (q1, n1) == (q2, n2) and np.array_equal(rows1, rows2, equal_nan=True)
    for first, second in ((20_000, 120_000), (80_000, 140_000)):
        bad = probs.copy()
        bad[first], bad[second] = -0.5, 7.0
        labels = correct.copy()
        labels[first] = False
        for kernel, threads in ((_core.conformal_fit, 1), (_core.conformal_fit, 2), (twin.conformal_fit, 0)):
            with pytest.raises(ValueError) as caught:
                kernel(bad, labels, 0.1, threads)
            assert caught.value.args == (first, -0.5)


def test_dispatch_follows_the_backend():
    for backend in ("rust", "numba"):
        with use_backend(backend):
            q, rows, n = conformal.conformal_fit([0.9, 0.8, 0.7], [1, 1, 0], 0.0)
            assert (q, n) == (math.inf, 2) and np.isnan(rows[2])
            assert conformal.kth_smallest([3.0, math.nan, 1.0, 2.0], 1) == 2.0


@pytest.mark.parametrize(("fit_kernel", "select"), list(zip(FITS, SELECTS)), ids=IDS)
def test_bad_input(fit_kernel, select):
    with pytest.raises(ValueError, match=r"^2 probabilities but 1 correct flags$"):
        fit_kernel(np.array([0.1, 0.2]), np.array([True]), 0.1, 0)
    with pytest.raises(ValueError, match="contiguous"):
        fit_kernel((np.arange(6.0) / 10)[::2], np.ones(3, dtype=bool), 0.1, 0)
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
        fit_kernel(np.array([0.5]), np.array([True]), 1.5, 0)
    with pytest.raises(ValueError) as caught:
        fit_kernel(np.array([0.5, math.nan, 1.0000001]), np.array([True, True, False]), 0.1, 0)
    assert caught.value.args == (2, 1.0000001)
    with pytest.raises(ValueError, match=r"^rank 2 out of 2 values other than NaN$"):
        select(np.array([1.0, math.nan, 2.0]), 2)
    with pytest.raises(ValueError, match="contiguous"):
        select(np.arange(6.0)[::2], 0)
    with pytest.raises(ValueError, match="negative"):
        conformal.kth_smallest(np.array([1.0]), -1)
