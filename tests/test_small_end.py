"""Small-input paths (issue #31, item 7): each gives the same bits as the path it short-cuts, on
random inputs on both sides of its threshold, and the calls they serve stay cheap."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from scorekit import interrater
from scorekit.agents import Cost, cost
from scorekit.qe import calibrate, decide

LABEL_SETS = [
    "ab", "abcdefgh", "abcdefghijklmnop",        # strings: 2, 8 and 16 labels
    [0, 1], [0, 1, 2, 3, 4, 5, 6], [0, 9], [0, 3, 7, 11], [-5, 2**40], [True, False, 1, 2],
    [2**63, 1, 2], ["x", 1, 2.5, None], [0.5, 1.0, float("nan")],
]


def draw(rnd: random.Random, labels, n: int) -> list:
    return [rnd.choice(labels) for _ in range(n)]


def both_paths(monkeypatch, fn, *args, **kwargs):
    """``fn`` with its small-input path, then with it switched off."""
    small = fn(*args, **kwargs)
    with monkeypatch.context() as m:
        m.setattr(interrater, "_SMALL_ITEMS", 0)
        full = fn(*args, **kwargs)
    return small, full


def same_bits(x: float, y: float) -> bool:
    return repr(x) == repr(y)  # floats' repr round-trips: equal reprs, equal bits (and -0.0 apart)


@pytest.mark.parametrize("labels", LABEL_SETS, ids=repr)
def test_kappa_small_path_same_bits(monkeypatch, labels):
    rnd = random.Random(31)
    for n in [1, 2, 3, 5, 8, 20, 63, 200, interrater._SMALL_ITEMS - 1]:
        for _ in range(20):
            a, b = draw(rnd, labels, n), draw(rnd, labels, n)
            small, full = both_paths(monkeypatch, interrater.cohen_kappa, a, b)
            assert same_bits(small, full), (labels, n, a, b, small, full)


@pytest.mark.parametrize("labels", LABEL_SETS, ids=repr)
@pytest.mark.parametrize("raters", [2, 3, 7])
def test_nominal_alpha_small_path_same_bits(monkeypatch, labels, raters):
    rnd = random.Random(7 * raters)
    choices = list(labels) + [None]
    for n in [1, 2, 3, 8, 20, 100, interrater._SMALL_ITEMS - 1]:
        for _ in range(10):
            table = [draw(rnd, choices, n) for _ in range(raters)]
            small, full = both_paths(monkeypatch, interrater.krippendorff_alpha, table)
            assert same_bits(small, full), (labels, n, table, small, full)


def test_small_paths_keep_errors():
    with pytest.raises(interrater.InvalidTypeError):
        interrater.cohen_kappa([[1]], [[1]])
    with pytest.raises(interrater.InvalidValueError):
        interrater.krippendorff_alpha([[1, 2], [1]])
    assert interrater.krippendorff_alpha([["a", None], [None, "b"]]) == 1.0  # no pairable item
    assert interrater.cohen_kappa([], []) == 1.0


class NoNumpy:
    """Stands in for ``numpy`` in a module: any use but an ``isinstance`` check fails the test."""

    ndarray = type("ndarray", (), {})

    def __getattr__(self, name):
        raise AssertionError(f"numpy.{name} used on a small input")


def test_small_kappa_and_alpha_skip_numpy(monkeypatch):
    monkeypatch.setattr(interrater, "np", NoNumpy())
    assert interrater.cohen_kappa([1, 1, 0, 0, 1], [1, 1, 0, 1, 1]) == 0.5454545454545455
    assert interrater.cohen_kappa(list("abca"), list("abcb")) == 0.6363636363636364
    ratings = [[1, 2, 3, 3, None], [1, 2, 4, 3, 5], [2, 2, 4, 3, 5]]
    assert interrater.krippendorff_alpha(ratings) == 0.6578947368421053


def test_conformal_quantile_small_path_same_value(monkeypatch):
    rnd = random.Random(5)
    pool = [0.0, -0.0, 0.25, 0.5, 1.0, float("inf"), float("-inf"), 1e-300]
    for n in [0, 1, 2, 9, 10, 20, decide._SMALL_SET - 1]:
        for alpha in [0.0, 0.05, 0.1, 0.5, 1.0]:
            for _ in range(10):
                scores = [rnd.choice(pool) if rnd.random() < 0.3 else rnd.random() for _ in range(n)]
                small = decide.split_conformal_quantile(scores, alpha)
                with monkeypatch.context() as m:
                    m.setattr(decide, "_SMALL_SET", 0)
                    full = decide.split_conformal_quantile(scores, alpha)
                assert same_bits(small, full), (scores, alpha, small, full)
    with pytest.raises(decide.InvalidValueError):
        decide.split_conformal_quantile([0.5, float("nan")], 0.1)


def test_isotonic_call_same_as_predict():
    rnd = random.Random(3)
    for n in [1, 2, 5, 20, 200]:
        xs = [round(rnd.random(), 2) for _ in range(n)]
        cal = calibrate.IsotonicCalibrator().fit(xs, [rnd.random() < x for x in xs])
        probe = [rnd.random() * 1.2 - 0.1 for _ in range(50)] + xs
        called = [cal(s) for s in probe]
        predicted = cal.predict(probe).tolist()
        assert all(same_bits(c, p) for c, p in zip(called, predicted)), (xs, probe)


def test_probability_fusion_checks_every_value():
    assert calibrate.mean_probability({"a": 0.5, "b": 1, "c": 0.25}) == 0.5833333333333334
    assert calibrate.min_probability({"a": 0.5, "b": True}) == 0.5
    with pytest.raises(calibrate.InvalidValueError, match="'b' is 1.5"):
        calibrate.mean_probability({"a": 0.5, "b": 1.5})
    with pytest.raises(calibrate.InvalidTypeError):
        calibrate.min_probability({"a": 0.5, "b": "0.7"})


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc (Linux)")
def test_short_fits_start_no_thread():
    """A short isotonic or conformal fit, or a small ROVER batch, runs on the calling thread: no
    pool thread is started."""
    code = (
        "import os, warnings\n"
        "import scorekit.qe as q\n"
        "from scorekit.qe.rover import agreement_batch\n"
        "warnings.simplefilter('ignore')\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "q.IsotonicCalibrator().fit([0.2, 0.8, 0.5], [False, True, True])\n"
        "q.ConformalGate(alpha=0.1).fit([0.2, 0.8, 0.5], [False, True, True])\n"
        "agreement_batch([['a b c', 'a b d', 'a x c']])\n"
        "print(len(os.listdir('/proc/self/task')) - before)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "SCOREKIT_BACKEND": "rust"})
    assert out.stdout.strip() == "0"


@pytest.mark.parametrize("fn", [calibrate.expected_calibration_error, calibrate.reliability_curve])
def test_binned_small_path_same_bits(monkeypatch, fn):
    rnd = random.Random(11)
    specials = [0.0, -0.0, 1.0, 1.5, -0.2, float("nan"), float("inf"), 0.1, 0.7]
    for n in [0, 1, 2, 7, 20, calibrate._SMALL_ROWS - 1]:
        for n_bins in [1, 3, 10, 1000, 2**40]:
            for _ in range(8):
                probs = [rnd.choice(specials) if rnd.random() < 0.2 else rnd.random() for _ in range(n)]
                correct = [rnd.random() < 0.5 for _ in range(n)]
                small = fn(probs, correct, n_bins=n_bins)
                with monkeypatch.context() as m:
                    m.setattr(calibrate, "_SMALL_ROWS", 0)
                    full = fn(probs, correct, n_bins=n_bins)
                assert repr(small) == repr(full), (probs, correct, n_bins)


def test_cost_checks_keep_their_errors():
    assert cost.cost_of_pass(10.0, 4) == 2.5 and cost.cost_of_pass(3, 0) == math.inf
    assert cost.cost_of_pass(Fraction(1, 2), np.int64(2)) == 0.25
    for bad in [True, "1", None]:
        with pytest.raises(TypeError):
            cost.cost_of_pass(bad, 1)
    with pytest.raises(TypeError):
        cost.cost_of_pass(1.0, 2.0)
    with pytest.raises(ValueError):
        cost.cost_of_pass(float("nan"), 1)
    price = cost.per_million(2.5, 10.0)
    assert cost.dollars(Cost(input_tokens=1000, output_tokens=10), price) == 1000 * price.input + 10 * price.output
    for tokens in [{"input_tokens": -1}, {"output_tokens": float("nan")}, {"reasoning_tokens": math.inf}]:
        with pytest.raises(ValueError):
            cost.dollars(Cost(**tokens), price)
    with pytest.raises(TypeError):
        cost.dollars(Cost(cached_input_tokens="3"), price)


def test_risk_coverage_small_path_same_values(monkeypatch):
    rnd = random.Random(17)
    pool = [0.0, 0.5, 1.0, 0.25, float("nan"), float("inf"), -float("inf"), -0.0]
    for n in [0, 1, 2, 5, 16, 17, 40, decide._SMALL_SET - 1]:
        for _ in range(15):
            probs = [rnd.choice(pool) if rnd.random() < 0.3 else round(rnd.random(), 1) for _ in range(n)]
            correct = [rnd.random() < 0.6 for _ in range(n)]
            small = decide.risk_coverage_curve(probs, correct)
            with monkeypatch.context() as m:
                m.setattr(decide, "_SMALL_SET", 0)
                full = decide.risk_coverage_curve(probs, correct)
            assert repr(small) == repr(full), (probs, correct)
    with pytest.raises(decide.InvalidValueError, match=r"probs\[1\]"):
        decide.risk_coverage_curve([0.5, 1.5], [True, False])


@pytest.mark.parametrize("fuse", [calibrate.mean_probability, calibrate.min_probability])
def test_probability_fusion_refuses_what_it_refused(fuse):
    for bad in [float("nan"), -0.1, 1.0000001, float("inf"), -float("inf")]:
        for where in range(3):
            probs = {f"s{i}": 0.5 for i in range(3)}
            probs[f"s{where}"] = bad
            with pytest.raises(calibrate.InvalidValueError, match=f"'s{where}'"):
                fuse(probs)
    with pytest.raises(calibrate.InvalidValueError):
        fuse({"a": float("inf"), "b": -float("inf")})
    assert fuse({"a": 0.0, "b": -0.0, "c": 1.0}) == (1 / 3 if fuse is calibrate.mean_probability else 0.0)
