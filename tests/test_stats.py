"""scorekit.stats: the paired comparison every system's comparison uses, against a straightforward
resampling written here and SciPy's exact binomial test."""

import doctest
import importlib
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

import scorekit.stats as stats
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.stats import paired_difference, sign_test


def test_doctests():
    assert doctest.testmod(stats).failed == 0


def _plain_bootstrap(diffs, resamples, alpha, seed):
    """Resample with random.Random(seed).randrange, one value at a time, and take the percentiles."""
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    lo = int((alpha / 2) * resamples)
    hi = min(resamples - 1, int((1 - alpha / 2) * resamples))
    return means[lo], means[hi]


scores = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(scores, st.data(), st.integers(1, 300), st.sampled_from([0.05, 0.1, 0.5]), st.integers(0, 2**32))
def test_paired_difference_against_plain_resampling(a, data, resamples, alpha, seed):
    b = data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=len(a), max_size=len(a)))
    d = paired_difference(a, b, resamples=resamples, alpha=alpha, seed=seed)
    diffs = [x - y for x, y in zip(a, b)]
    assert (d.ci_low, d.ci_high) == _plain_bootstrap(diffs, resamples, alpha, seed)
    assert d.mean_diff == sum(diffs) / len(diffs)
    higher = sum(x > y for x, y in zip(a, b))
    lower = sum(x < y for x, y in zip(a, b))
    assert (d.n_higher, d.n_lower, d.n_equal) == (higher, lower, len(a) - higher - lower)
    assert d.n == len(a) and d.confidence == 1 - alpha and d.resamples == resamples
    expected_p = 1.0 if higher + lower == 0 else binomtest(higher, higher + lower, 0.5).pvalue
    assert d.p_value == pytest.approx(expected_p, rel=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400))
def test_sign_test_against_scipy(n_plus, n_minus):
    n = n_plus + n_minus
    expected = 1.0 if n == 0 else binomtest(n_plus, n, 0.5).pvalue
    assert sign_test(n_plus, n_minus) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_paired_difference_hand_case():
    d = paired_difference([0.5, 0.25, 1.0, 1.0], [0.25, 0.25, 0.5, 1.0], resamples=50, seed=1)
    assert d.mean_a == 0.6875 and d.mean_b == 0.5 and d.mean_diff == 0.1875
    assert (d.n_higher, d.n_lower, d.n_equal) == (2, 0, 2)
    assert d.p_value == 0.5                      # 2 * (1/2)**2
    assert d.as_dict()["ci_low"] == d.ci_low


@pytest.mark.parametrize("a, b, error, match", [
    ([1.0, 2.0], [1.0], InvalidValueError, "same items"),
    ([], [], InvalidValueError, "no item"),
    ([1.0, math.nan], [1.0, 1.0], InvalidValueError, "item 1 is nan"),
    ([1.0], [math.inf], InvalidValueError, "item 0 is inf"),
    ([1.0], ["x"], InvalidTypeError, "item 0"),
    ([True], [1.0], InvalidTypeError, "item 0"),
    ("ab", "ab", InvalidTypeError, "sequence of numbers"),
])
def test_paired_difference_fails_closed(a, b, error, match):
    with pytest.raises(error, match=match):
        paired_difference(a, b)


def test_agents_use_the_one_module():
    compare = importlib.import_module("scorekit.agents.compare")
    reliability = importlib.import_module("scorekit.agents.reliability")
    assert compare.sign_test is stats.sign_test
    assert reliability.bootstrap_ci is stats.bootstrap_ci


def test_docs_page():
    from doc_examples import run_python_blocks
    assert run_python_blocks("statistics.md") >= 6
