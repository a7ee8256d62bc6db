"""``scorekit.qe.signals``: the spec's examples and vectors, ek's docstring examples, a differential test
against the reference kit ``ek`` on thousands of random inputs (bit for bit), properties, bad input, and
the page docs/qe-signals.md."""

from __future__ import annotations

import doctest
import math
import random
from dataclasses import dataclass
from typing import Any, Optional

import ek.qe.signals
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit.qe.signals as signals_module
from doc_examples import run_python_blocks
from ek_doctests import run_ek_doctests
from scorekit import registry
from scorekit.base import Signal
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.qe.signals import (DEFAULT_LENGTH_ALPHA, DEFAULT_PROB_FLOOR, IntrinsicConfidenceSignal,
                                 LogprobSignal, geo_mean, length_normalized, mean_prob, min_prob)

L = [math.log(0.9), math.log(0.8), math.log(0.95)]
INF, NAN = math.inf, math.nan
AGGREGATORS = {"geo_mean": geo_mean, "length_normalized": length_normalized, "min": min_prob, "mean": mean_prob}


@dataclass
class Block:
    text: str = "w"
    confidence: Any = None


@dataclass
class Ocr:
    text: Optional[str] = ""
    mean_confidence: Any = None
    blocks: Any = ()


class Bare:
    """An object without blocks or mean_confidence: not a confidence source."""


# ---------------------------------------------------------------------------------- docs and doctests


def test_module_doctests():
    assert doctest.testmod(signals_module).failed == 0


def test_ek_docstring_examples_run_on_scorekit():
    results = run_ek_doctests(ek.qe.signals, signals_module)
    assert sum(r.attempted for r in results.values()) >= 5
    assert not {name: r.failed for name, r in results.items() if r.failed}


def test_docs_page_runs():
    assert run_python_blocks("qe-signals.md", min_blocks=8) > 40


def test_spec_doctests():
    assert round(geo_mean(L), 4) == 0.8811
    assert round(min_prob(L), 4) == 0.8
    assert IntrinsicConfidenceSignal(pool="min")([0.99, 0.4, 0.95]) == 0.4


# ---------------------------------------------------------------------------------- spec vectors


def test_constants():
    assert DEFAULT_LENGTH_ALPHA == 0.6
    assert DEFAULT_PROB_FLOOR == 1e-12
    assert math.log(DEFAULT_PROB_FLOOR) == -27.631021115928547


def test_aggregator_vectors():
    assert geo_mean(L) == 0.8810868114910337
    assert min_prob(L) == 0.8
    assert mean_prob(L) == 0.8833333333333334
    assert length_normalized(L, alpha=0.6) == 0.8216323187899994
    assert length_normalized(L) == 0.8216323187899994
    assert length_normalized(L, alpha=1) == geo_mean(L)
    assert length_normalized(L, alpha=1.0) == geo_mean(L)
    assert round(length_normalized(L, alpha=0), 3) == 0.684
    assert length_normalized(L, alpha=0.0) == math.exp(sum(L))


@pytest.mark.parametrize("aggregate", list(AGGREGATORS.values()))
def test_empty_is_no_evidence(aggregate):
    assert aggregate([]) == 1.0
    assert aggregate(()) == 1.0
    assert aggregate([NAN, INF]) == 1.0  # everything dropped
    assert aggregate(iter([])) == 1.0


def test_cleaning_vectors():
    assert min_prob([-INF, math.log(0.9)]) == 1.000000000000001e-12
    assert geo_mean([-INF, -INF]) == 1.000000000000001e-12
    assert geo_mean([INF, math.log(0.5)]) == 0.5
    assert geo_mean([0.5, math.log(0.5)]) == 0.7071067811865476  # positive clamped to log p = 0
    assert geo_mean([NAN]) == 1.0
    assert mean_prob([3.0, -INF]) == (1.0 + 1.000000000000001e-12) / 2
    assert min_prob([NAN, math.log(0.3), INF]) == 0.3


def test_logprob_signal_vectors():
    assert LogprobSignal()(L) == geo_mean(L)
    assert LogprobSignal(aggregator="length_normalized", alpha=0.6)(L) == length_normalized(L, alpha=0.6)
    assert LogprobSignal(aggregator="length_normalized", alpha=0.0)(L) == length_normalized(L, alpha=0.0)
    assert LogprobSignal(aggregator=length_normalized, alpha=1.0)(L) == geo_mean(L)  # identity check
    assert LogprobSignal(aggregator="min")(L) == 0.8
    assert LogprobSignal(aggregator="mean")(L) == mean_prob(L)
    assert LogprobSignal(aggregator=lambda lps: len(list(lps)))(L) == 3  # no alpha for other callables
    assert LogprobSignal().cost_tier == 2
    assert LogprobSignal().alpha == 0.6 and LogprobSignal().aggregator is geo_mean
    with pytest.raises(KeyError, match=r"No 'aggregators' strategy named 'nope'\. Available: "
                                       r"\['geo_mean', 'length_normalized', 'mean', 'min'\]"):
        LogprobSignal(aggregator="nope")(L)


def test_logprob_signal_finds_aggregators_registered_later():
    registry.register("aggregators", "first_token", lambda lps: math.exp(next(iter(lps))))
    try:
        assert LogprobSignal(aggregator="first_token")(L) == 0.9
    finally:
        registry._registry["aggregators"].pop("first_token")


def test_intrinsic_vectors():
    assert IntrinsicConfidenceSignal(pool="mean")([0.4, 0.6]) == 0.5
    assert IntrinsicConfidenceSignal(pool="geo_mean")([0.9, 0.4]) == 0.6000000000000001
    assert IntrinsicConfidenceSignal(pool="mean")([0.9, 0.4, None, NAN, 1.7]) == 0.7666666666666666
    assert IntrinsicConfidenceSignal(pool="geo_mean")([0.0, 0.5]) == 7.071067811865484e-07
    blocks = Ocr("a b", mean_confidence=0.6, blocks=[Block("a", 0.9), Block("b", 0.3)])
    assert IntrinsicConfidenceSignal(pool="min")(blocks) == 0.3
    assert IntrinsicConfidenceSignal()(Ocr("x", mean_confidence=None)) == 1.0
    assert IntrinsicConfidenceSignal()([]) == 1.0
    assert IntrinsicConfidenceSignal().cost_tier == 2 and IntrinsicConfidenceSignal().pool == "min"
    with pytest.raises(ValueError, match=r"pool must be one of \['geo_mean', 'mean', 'min'\], got 'bogus'"):
        IntrinsicConfidenceSignal(pool="bogus")([0.5])


def test_intrinsic_sources():
    sig = IntrinsicConfidenceSignal(pool="min")
    # blocks without usable confidences fall back to mean_confidence
    assert sig(Ocr(mean_confidence=0.5, blocks=[Block(confidence=None)])) == 0.5
    assert sig(Ocr(mean_confidence=0.5, blocks=[Block(confidence=NAN)])) == 0.5
    # a block without a confidence attribute counts as None
    assert sig(Ocr(mean_confidence=0.7, blocks=[object()])) == 0.7
    assert sig(Ocr(mean_confidence=-3, blocks=[])) == 0.0  # clamped
    assert sig(Ocr(mean_confidence=INF)) == 1.0  # non-finite: no evidence
    assert sig(np.array([0.3, 0.8])) == 0.3
    assert sig(iter([0.6, 0.2])) == 0.2
    assert sig((True, 0.5)) == 0.5


def test_registered_strategies():
    assert registry.get("signals", "logprob") is LogprobSignal
    assert registry.get("signals", "intrinsic") is IntrinsicConfidenceSignal
    for name, fn in AGGREGATORS.items():
        assert registry.get("aggregators", name) is fn
    assert sorted(registry.names("aggregators")) == ["geo_mean", "length_normalized", "mean", "min"]


def test_signals_satisfy_the_protocol():
    assert isinstance(LogprobSignal(), Signal)
    assert isinstance(IntrinsicConfidenceSignal(), Signal)


# ---------------------------------------------------------------------------------- differential vs ek


def _random_logp(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.04:
        return rng.choice([NAN, INF, -INF, 0.0, -0.0])
    if r < 0.08:
        return rng.uniform(0, 3)  # positive: clamped
    if r < 0.11:
        return rng.randint(-40, 2)  # ints
    if r < 0.13:
        return np.float64(math.log(rng.random() or 1e-300))
    if r < 0.14:
        return rng.choice([True, False])
    scale = rng.choice([1.0, 1e-3, 10.0, 300.0])
    return math.log(rng.random() or 1e-300) * scale


def _random_confidence(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.05:
        return rng.choice([None, NAN, INF, -INF])
    if r < 0.12:
        return rng.uniform(-0.5, 1.5)
    if r < 0.15:
        return rng.choice([0, 1, True, False, np.float32(0.25)])
    return rng.random()


def test_aggregators_equal_ek_bit_for_bit():
    rng = random.Random(16)
    theirs = {"geo_mean": ek.qe.signals.geo_mean, "min": ek.qe.signals.min_prob, "mean": ek.qe.signals.mean_prob}
    for trial in range(3000):
        logps = [_random_logp(rng) for _ in range(rng.choice([0, 1, 2, 3, 5, 12, 60]))]
        for name, ours in (("geo_mean", geo_mean), ("min", min_prob), ("mean", mean_prob)):
            assert ours(logps) == theirs[name](logps), (trial, name, logps)
        alpha = rng.choice([0, 1, 0.6, 0.7, 0.0, 1.0, 2, 0.33, -0.5, rng.uniform(-2, 3)])
        assert length_normalized(logps, alpha=alpha) == ek.qe.signals.length_normalized(logps, alpha=alpha), \
            (trial, alpha, logps)
        name = rng.choice(list(AGGREGATORS))
        assert LogprobSignal(aggregator=name, alpha=alpha)(logps) == \
            ek.qe.signals.LogprobSignal(aggregator=name, alpha=alpha)(logps)


def test_numpy_inputs_equal_ek():
    rng = np.random.default_rng(5)
    for _ in range(200):
        logps = np.log(rng.random(rng.integers(1, 300)))
        assert geo_mean(logps) == ek.qe.signals.geo_mean(logps)
        assert length_normalized(logps) == ek.qe.signals.length_normalized(logps)
        assert mean_prob(logps.astype(np.float32)) == ek.qe.signals.mean_prob(logps.astype(np.float32))


def test_intrinsic_equals_ek_bit_for_bit():
    rng = random.Random(61)
    for trial in range(3000):
        confidences = [_random_confidence(rng) for _ in range(rng.choice([0, 1, 2, 4, 9, 30]))]
        shape = rng.random()
        if shape < 0.3:
            source = Ocr("t", mean_confidence=rng.choice([None, 0.4, 1.2, NAN, -0.1]),
                         blocks=[Block(confidence=c) for c in confidences])
        elif shape < 0.4:
            source = Ocr("t", mean_confidence=_random_confidence(rng))
        else:
            source = confidences
        for pool in ("min", "mean", "geo_mean"):
            ours = IntrinsicConfidenceSignal(pool=pool)(source)
            assert ours == ek.qe.signals.IntrinsicConfidenceSignal(pool=pool)(source), (trial, pool, source)
            assert 0.0 <= ours <= 1.0


# ---------------------------------------------------------------------------------- properties

finite_logps = st.lists(st.floats(min_value=-50, max_value=0, allow_nan=False), min_size=1, max_size=40)


@settings(max_examples=200)
@given(finite_logps)
def test_min_le_geo_le_mean(logps):
    lo, mid, hi = min_prob(logps), geo_mean(logps), mean_prob(logps)
    assert 0.0 <= lo <= mid * (1 + 1e-12) and mid <= hi * (1 + 1e-12) and hi <= 1.0


@settings(max_examples=200)
@given(finite_logps, st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1))
def test_length_penalty_shrinks_with_alpha(logps, a, b):
    low, high = sorted((a, b))
    assert length_normalized(logps, alpha=low) <= length_normalized(logps, alpha=high) * (1 + 1e-12)


@settings(max_examples=200)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=30), st.randoms(use_true_random=False))
def test_any_floats_give_a_probability_and_order_does_not_matter_for_min(logps, rnd):
    for aggregate in AGGREGATORS.values():
        assert 0.0 <= aggregate(logps) <= 1.0
    shuffled = list(logps)
    rnd.shuffle(shuffled)
    assert min_prob(shuffled) == min_prob(logps)


@settings(max_examples=100)
@given(st.lists(st.one_of(st.none(), st.floats(), st.integers(-5, 5)), max_size=30))
def test_intrinsic_pools_stay_in_unit_interval(confidences):
    pooled = [IntrinsicConfidenceSignal(pool=p)(confidences) for p in ("min", "geo_mean", "mean")]
    assert all(0.0 <= x <= 1.0 for x in pooled)
    # min <= geometric mean of the floored values <= their mean <= mean + floor
    assert pooled[0] <= pooled[1] * (1 + 1e-12)
    assert pooled[1] <= (pooled[2] + DEFAULT_PROB_FLOOR) * (1 + 1e-12)


# ---------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("aggregate", list(AGGREGATORS.values()))
@pytest.mark.parametrize("bad, message", [
    ("-0.5", r"logps must be a sequence of numbers, got '-0\.5' \(str\)"),
    (b"\x01", r"logps must be a sequence of numbers"),
    (0.5, r"logps must be a sequence of numbers, got 0\.5 \(float\)"),
    (None, r"logps must be a sequence of numbers, got None"),
    ([-0.1, None], r"logps\[1\] must be a number, got None"),
    ([-0.1, "-0.2"], r"logps\[1\] must be a number, got '-0\.2' \(str\)"),
    ([complex(1, 1)], r"logps\[0\] must be a number"),
    ([[-0.1, -0.2]], r"logps\[0\] must be a number"),
    (np.zeros((2, 2)), r"logps\[0\] must be a number"),
])
def test_bad_logps_raise_named_errors(aggregate, bad, message):
    with pytest.raises(InvalidTypeError, match=message):
        aggregate(bad)


def test_integers_beyond_float_range_count_as_infinite():
    # ek raises OverflowError here; scorekit applies the rule for ±inf
    assert geo_mean([-10**400, math.log(0.5)]) == geo_mean([-INF, math.log(0.5)])
    assert min_prob([10**400, math.log(0.5)]) == 0.5  # +inf is dropped
    assert IntrinsicConfidenceSignal()([10**400, 0.5]) == 0.5  # non-finite: skipped
    with pytest.raises(OverflowError):
        ek.qe.signals.geo_mean([-10**400])


@pytest.mark.parametrize("alpha, error", [(NAN, InvalidValueError), (INF, InvalidValueError),
                                          (-INF, InvalidValueError), ("0.6", InvalidTypeError),
                                          (None, InvalidTypeError), (10**400, InvalidValueError)])
def test_bad_alpha(alpha, error):
    with pytest.raises(error, match="alpha"):
        length_normalized(L, alpha=alpha)
    with pytest.raises(error, match="alpha"):
        LogprobSignal(aggregator="length_normalized", alpha=alpha)(L)
    assert LogprobSignal(aggregator="min", alpha=alpha)(L) == 0.8  # alpha is not read


def test_extreme_alpha_saturates():
    lps = [-1.0, -2.0, -3.0]
    assert length_normalized(lps, alpha=-2000) == 0.0  # ek: ZeroDivisionError
    assert length_normalized(lps, alpha=2000) == 1.0  # ek: OverflowError
    assert length_normalized([0.0, 0.0], alpha=-2000) == 1.0  # every p = 1
    with pytest.raises(ZeroDivisionError):
        ek.qe.signals.length_normalized(lps, alpha=-2000)
    assert length_normalized([-1e308] * 3, alpha=0) == 0.0  # the sum overflows to -inf


def test_bad_aggregator():
    with pytest.raises(InvalidTypeError, match=r"aggregator must be a name registered under 'aggregators' or a "
                                               r"callable, got 5 \(int\)"):
        LogprobSignal(aggregator=5)(L)
    with pytest.raises(InvalidTypeError, match="aggregator"):
        LogprobSignal(aggregator=None)(L)


@pytest.mark.parametrize("source, message", [
    ("0.5", r"source must be a sequence of numbers, got '0\.5' \(str\)"),
    (0.7, r"source must be a sequence of numbers, got 0\.7 \(float\)"),
    (None, r"source must be a sequence of numbers, got None"),
    (Bare(), r"source must be a sequence of numbers"),
    (Ocr(blocks=[]).__dict__, r"source\[0\] must be a number, got 'text' \(str\)"),
    (["0.5"], r"source\[0\] must be a number, got '0\.5' \(str\)"),
    (Ocr(blocks=[Block(confidence="high")]), r"blocks\[0\] must be a number, got 'high' \(str\)"),
    (Ocr(mean_confidence="0.9"), r"mean_confidence\[0\] must be a number"),
])
def test_bad_intrinsic_sources(source, message):
    with pytest.raises(InvalidTypeError, match=message):
        IntrinsicConfidenceSignal()(source)


@pytest.mark.parametrize("pool", ["bogus", "MIN", 5, None, ("min",)])
def test_bad_pool_is_reported_at_call_time(pool):
    sig = IntrinsicConfidenceSignal(pool=pool)  # constructing is fine, as in ek
    with pytest.raises(ValueError, match=rf"pool must be one of \['geo_mean', 'mean', 'min'\], got {pool!r}"
                       .replace("(", r"\(").replace(")", r"\)")):
        sig([0.5])
