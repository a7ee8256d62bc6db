"""``scorekit.qe.calibrate``: ek's docstring examples and the spec's golden vectors, differential tests
against ``ek`` on thousands of random calibration sets (ties, one class, n=1, duplicates, scores at
0 and 1, mixed signs), scikit-learn's isotonic regression as a second oracle, properties, the
small-set warnings, persistence through the "calibrators" store, bad input and the registry."""

from __future__ import annotations

import doctest
import json
import math
import sys
import types
import warnings

import ek.qe.calibrate as ek_cal
import numpy as np
import pytest
from doc_examples import run_python_blocks
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

import scorekit.qe.calibrate as cal_module
from scorekit import registry
from scorekit.base import Calibrator
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.qe.calibrate import (
    DEFAULT_N_BINS,
    MIN_ROWS_PER_BIN,
    MIN_ROWS_PER_CLASS,
    CalibratorNotFoundError,
    GroupCalibrator,
    IsotonicCalibrator,
    PlattCalibrator,
    SignalFamilyCalibrator,
    SmallCalibrationWarning,
    TemperatureCalibrator,
    expected_calibration_error,
    load_calibrator,
    mean_probability,
    min_probability,
    netcal_ece,
    reliability_curve,
    save_calibrator,
    sklearn_calibrator,
)
from scorekit.registry import MissingExtraError
from scorekit.stores import CorruptStoreFileError

pytestmark = pytest.mark.filterwarnings("ignore::scorekit.qe.decide.SmallCalibrationWarning")


def overconfident():
    """The spec's overconfident set: scores .5 … .9, 10 rows each, 3 … 7 of them correct."""
    scores, correct = [], []
    for s, k in zip([0.5, 0.6, 0.7, 0.8, 0.9], [3, 4, 5, 6, 7]):
        scores += [s] * 10
        correct += [i < k for i in range(10)]
    return scores, correct


DOC_ROWS = [{"judge": j, "logprob": l} for j, l in
            [(0.9, -0.1), (0.8, -0.2), (0.85, -2.0), (0.3, -0.1), (0.2, -2.5), (0.7, -1.8)]]
DOC_CORRECT = [True, True, False, True, False, False]


def random_set(rng: np.random.Generator, n_max: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """A random calibration set of one of several shapes, with the edge cases mixed in."""
    n = int(rng.integers(1, n_max))
    shape = int(rng.integers(0, 8))
    if shape == 0:
        x = rng.random(n)
    elif shape == 1:
        x = np.round(rng.random(n), 1)  # many ties
    elif shape == 2:
        x = rng.normal(size=n) * 3  # both signs
    elif shape == 3:
        x = -rng.exponential(size=n)  # log-probabilities
    elif shape == 4:
        x = rng.choice([0.0, 1.0, 0.5, -0.0], size=n)  # the ends of [0, 1], duplicates, a signed zero
    elif shape == 5:
        x = rng.normal(size=n) * 50 + 100
    elif shape == 6:
        x = np.full(n, float(rng.choice([0.0, 0.3, 1.0])))  # one score only
    else:
        x = rng.integers(0, 5, size=n).astype(float)
    c = rng.random(n) < 1 / (1 + np.exp(-(x - x.mean())))
    u = rng.random()
    if u < 0.08:
        c[:] = True
    elif u < 0.16:
        c[:] = False
    return x, c


# --------------------------------------------------------------------------------------------
# Documented examples
# --------------------------------------------------------------------------------------------


def test_docstring_examples():
    assert doctest.testmod(cal_module, optionflags=doctest.ELLIPSIS).failed == 0


def test_docs_page():
    assert run_python_blocks("qe-calibration.md", min_blocks=6) >= 30


def test_exports_registry_and_protocol():
    assert DEFAULT_N_BINS == ek_cal.DEFAULT_N_BINS == 10
    assert set(cal_module.__all__) >= {name for name in dir(ek_cal) if not name.startswith("_") and
                                       callable(getattr(ek_cal, name)) and getattr(ek_cal, name).__module__ == ek_cal.__name__}
    for kind, cls in [("platt", PlattCalibrator), ("isotonic", IsotonicCalibrator),
                      ("temperature", TemperatureCalibrator), ("group", GroupCalibrator),
                      ("signal_family", SignalFamilyCalibrator)]:
        assert registry.get("calibrators", kind) is cls
        assert cls().kind == kind
    assert registry.get("combiners", "mean") is mean_probability
    assert registry.get("combiners", "min") is min_probability
    for cal in (PlattCalibrator(), IsotonicCalibrator(), TemperatureCalibrator(), GroupCalibrator(),
                sklearn_calibrator()):
        assert isinstance(cal, Calibrator)
    assert [f for f in PlattCalibrator.__dataclass_fields__] == ["a", "b", "max_iter", "kind"]
    assert [f for f in TemperatureCalibrator.__dataclass_fields__] == ["T", "kind", "t_min", "t_max", "max_iter"]
    assert [f for f in GroupCalibrator.__dataclass_fields__] == ["factory", "by_group", "pooled", "kind"]
    assert [f for f in SignalFamilyCalibrator.__dataclass_fields__] == ["calibrators", "combine", "factory",
                                                                        "fusion", "kind"]


# --------------------------------------------------------------------------------------------
# The spec's golden vectors (§10, calibration)
# --------------------------------------------------------------------------------------------


def test_platt_vectors():
    cal = PlattCalibrator().fit([0.95, 0.93, 0.92, 0.90, 0.55, 0.52, 0.51, 0.50],
                                [True, True, False, False, True, False, False, False])
    assert cal.a == pytest.approx(2.2382608012705636, rel=1e-13)
    assert cal.b == pytest.approx(-2.090708382670384, rel=1e-13)
    assert cal(0.95) == pytest.approx(0.5089089016726422, abs=1e-15)
    assert cal(0.5) == pytest.approx(0.27456608867466, abs=1e-15)
    scores, correct = overconfident()
    cal = PlattCalibrator().fit(scores, correct)
    assert (cal.a, cal.b) == pytest.approx((3.857619495599145, -2.7003336469194017), rel=1e-13)
    assert [cal(0.5), cal(0.7), cal(0.9)] == pytest.approx([0.3161495485121031, 0.5, 0.6838504514878969], abs=1e-15)
    noisy = PlattCalibrator().fit(scores + [math.nan, math.inf], correct + [True, False])
    assert abs(noisy.a - cal.a) < 1e-9 and abs(noisy.b - cal.b) < 1e-9
    empty = PlattCalibrator().fit([], [])
    assert (empty.a, empty.b, empty(0.3)) == (0.0, 0.0, 0.5)
    assert PlattCalibrator().fit([0.1, 0.9], [True, True])(0.5) == pytest.approx(0.7499999999999999, abs=1e-15)
    assert PlattCalibrator().fit([0.1, 0.9], [False, False])(0.5) == pytest.approx(0.25, abs=1e-15)
    with pytest.raises(ValueError, match="NaN"):
        cal(math.nan)
    assert (cal(math.inf), cal(-math.inf)) == (1.0, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        PlattCalibrator(a=0.0)(math.inf)  # 0 * inf


def test_ece_and_reliability_vectors():
    scores, correct = overconfident()
    assert expected_calibration_error(scores, correct, n_bins=5) == 0.19999999999999987
    assert expected_calibration_error(scores, correct) == 0.2
    cal = PlattCalibrator().fit(scores, correct)
    assert expected_calibration_error([cal(s) for s in scores], correct, n_bins=5) == pytest.approx(
        0.006459819404841239, abs=1e-14)
    curve = reliability_curve(scores, correct, n_bins=10)
    assert [r["confidence"] for r in curve] == pytest.approx([0.5, 0.6, 0.7, 0.8, 0.9])
    assert [(r["accuracy"], r["count"]) for r in curve] == [(0.3, 10), (0.4, 10), (0.5, 10), (0.6, 10), (0.7, 10)]
    assert expected_calibration_error([0.5] * 100, [i % 2 == 0 for i in range(100)]) == 0.0
    assert expected_calibration_error([0.95] * 50, [False] * 50) == 0.9500000000000006
    assert expected_calibration_error([0.5, 0.5, math.nan], [True, False, True]) == 0.0
    assert expected_calibration_error([1.5, -0.2], [True, False]) == 0.0
    assert reliability_curve([1.5, -0.2, 0.35], [True, False, True], n_bins=4) == [
        {"confidence": 0.0, "accuracy": 0.0, "count": 1}, {"confidence": 0.35, "accuracy": 1.0, "count": 1},
        {"confidence": 1.0, "accuracy": 1.0, "count": 1}]
    assert expected_calibration_error([], []) == 0.0 and reliability_curve([], []) == []
    with pytest.raises(ValueError, match=r"^n_bins must be >= 1, got 0$"):
        expected_calibration_error([0.5], [True], n_bins=0)


def test_isotonic_vectors():
    scores, correct = overconfident()
    iso = IsotonicCalibrator().fit(scores, correct)
    assert iso.x == [0.5, 0.6, 0.7, 0.8, 0.9] and iso.y == [0.3, 0.4, 0.5, 0.6, 0.7]
    assert (iso(0.4), iso(0.95)) == (0.3, 0.7) and iso(0.55) == pytest.approx(0.35)
    iso = IsotonicCalibrator().fit([5, 5, 5, 5], [True, False, False, False])
    assert (iso.x, iso.y, iso(5.0), iso(-3.0), iso(99.0)) == ([5.0], [0.25], 0.25, 0.25, 0.25)
    iso = IsotonicCalibrator().fit([1, 1, 1, 2, 2, 2, 3, 3, 3], [True, False, False, True, True, False, True, True, True])
    assert iso.y == [1 / 3, 2 / 3, 1.0]
    assert (iso(1.5), iso(2.5), iso(0.5), iso(4)) == (0.5, 0.8333333333333333, 1 / 3, 1.0)
    assert IsotonicCalibrator().fit([0.1, 0.2, 0.3, 0.4], [True, False, True, False]).y == [0.5] * 4
    assert IsotonicCalibrator()(0.3) == 0.3
    with pytest.raises(ValueError, match="NaN"):  # the reference raises IndexError
        iso(math.nan)


def test_temperature_vectors():
    cal = TemperatureCalibrator().fit([-2, -1, 0, 1, 2] * 4, [i % 2 == 0 for i in range(20)])
    assert cal.T == 9.999999999998563 and cal(1.0) == 0.5249791874789436
    cal = TemperatureCalibrator().fit([3, 2.5, 2, -1, 4, -3, 1.5, 0.5], [True, True, False, False, True, False, True, False])
    # the last golden-section steps compare NLLs equal to rounding, so T matches to ~1e-8
    assert cal.T == pytest.approx(1.3957253695230365, rel=1e-7)
    assert cal(2.0) == pytest.approx(0.8073600236382615, rel=1e-7)
    assert TemperatureCalibrator().fit([-3, -1, -0.5, 0.5, 1, 3], [False] * 3 + [True] * 3).T == pytest.approx(0.05, abs=1e-6)
    assert TemperatureCalibrator().fit([], []).T == 9.999999999998563


def test_group_vectors_and_round_trip(tmp_path):
    gc = GroupCalibrator().fit([0.9] * 20 + [0.2] * 20, [i < 10 for i in range(20)] + [i < 16 for i in range(20)],
                               groups=["a"] * 20 + ["b"] * 20)
    assert gc(0.9, group="a") == pytest.approx(0.5, abs=1e-15)
    assert gc(0.2, group="b") == pytest.approx(0.7888888888888889, abs=1e-15)
    assert gc(0.5) == gc(0.5, group="unseen") == pytest.approx(0.6812168827623728, abs=1e-15)
    assert GroupCalibrator()(0.3) == 0.3
    save_calibrator(gc, "mondrian", rootdir=tmp_path)
    back = load_calibrator("mondrian", rootdir=tmp_path)
    for v in (0.0, 0.2, 0.5, 0.9, 1.0):
        for g in ("a", "b", None, "c"):
            assert back(v, group=g) == gc(v, group=g)


def test_signal_family_vectors():
    cal = SignalFamilyCalibrator().fit(DOC_ROWS, DOC_CORRECT)
    judge, logprob, fusion = cal.calibrators["judge"], cal.calibrators["logprob"], cal.fusion
    assert (judge.a, judge.b) == pytest.approx((0.6714918254899955, -0.4199896115851276), rel=1e-12)
    assert (logprob.a, logprob.b) == pytest.approx((1.375095905700388, 1.5125453214515274), rel=1e-12)
    assert (fusion.a, fusion.b) == pytest.approx((8.977630361303714, -4.514710032150683), rel=1e-12)
    assert cal.calibrate_signals({"judge": 0.9, "logprob": -0.1}) == pytest.approx(
        {"judge": 0.5459581701557518, "logprob": 0.7981925333746782}, abs=1e-15)
    assert cal({"judge": 0.9, "logprob": -0.1}) == pytest.approx(0.8203814605406502, abs=1e-15)
    assert cal({"judge": 0.9}) == pytest.approx(0.5459581701557518, abs=1e-15)  # bypasses the fusion
    d = cal.to_dict()
    assert list(d) == ["kind", "calibrators", "combine", "fusion"] and d["kind"] == "signal_family"
    assert d["combine"] == "mean" and d["calibrators"]["judge"]["kind"] == "platt" and d["fusion"]["kind"] == "platt"
    for rows, labels in [([{"judge": 0.9}, {"judge": 0.8}], [True, True]),
                         ([{"judge": 0.9}, {"judge": math.nan}], [True, False]),
                         ([{"judge": math.inf}, {"judge": math.nan}], [True, False])]:
        with pytest.raises(ValueError, match=r"cannot calibrate signal\(s\) \['judge'\]"):
            SignalFamilyCalibrator().fit(rows, labels)
    with pytest.raises(ValueError, match="no labelled rows"):
        SignalFamilyCalibrator().fit([], [])
    with pytest.raises(ValueError, match="6 signal rows but 5 labels"):
        SignalFamilyCalibrator().fit(DOC_ROWS, DOC_CORRECT[:-1])
    split = SignalFamilyCalibrator().fit([{"judge": 0.9}, {"judge": 0.1}, {"logprob": -0.1}, {"logprob": -3}],
                                         [True, False, True, False])
    assert split.fusion is None
    highest = SignalFamilyCalibrator(combine=lambda probs: max(probs.values())).fit(DOC_ROWS, DOC_CORRECT)
    assert (highest.fusion.a, highest.fusion.b) == pytest.approx((9.068752108256582, -5.8441729528124595), rel=1e-12)
    with pytest.raises(ValueError, match="registered combiner"):
        highest.to_dict()
    with pytest.raises(TypeError, match=r"the combined value of signals\[0\] must be a number, got 'logprob'"):
        SignalFamilyCalibrator(combine=max).fit(DOC_ROWS, DOC_CORRECT)  # max of a mapping is its largest key
    with pytest.raises(ValueError, match=r"no calibrator for signal 'other' \(have \['judge', 'logprob'\]\)"):
        cal({"other": 1.0})


def test_signal_family_round_trip_and_dispatch(tmp_path):
    cal = SignalFamilyCalibrator(combine=min_probability).fit(DOC_ROWS, DOC_CORRECT)
    save_calibrator(cal, "families", rootdir=tmp_path)
    back = load_calibrator("families", rootdir=tmp_path)
    assert back.combine is min_probability and back.fusion == cal.fusion and back.calibrators == cal.calibrators
    for row in DOC_ROWS:
        assert back(row) == cal(row)
    gc = GroupCalibrator().fit([0.9] * 20 + [0.2] * 20, [i < 10 for i in range(20)] + [i < 16 for i in range(20)],
                               groups=["a"] * 20 + ["b"] * 20)
    seen = []

    def judge(raw, *, group=None):
        seen.append(group)
        return 0.25

    nested = SignalFamilyCalibrator(calibrators={"judge": gc, "*": PlattCalibrator(a=2.0, b=-1.0)})
    assert nested.calibrate_signals({"judge": 0.9, "x": 0.5}, group="a") == {"judge": gc(0.9, group="a"), "x": 0.5}
    assert SignalFamilyCalibrator(calibrators={"judge": judge})({"judge": 1.0}, group="invoice") == 0.25
    assert seen == ["invoice"]
    save_calibrator(nested, "nested", rootdir=tmp_path)
    assert load_calibrator("nested", rootdir=tmp_path)({"judge": 0.2, "y": 1.0}, group="b") == nested(
        {"judge": 0.2, "y": 1.0}, group="b")


def test_combiners():
    assert mean_probability({"judge": 0.9, "logprob": 0.7}) == 0.8
    assert min_probability({"judge": 0.9, "logprob": 0.7}) == 0.7
    assert mean_probability({"a": True, "b": 0}) == 0.5
    for f in (mean_probability, min_probability):
        with pytest.raises(ValueError, match=f"{f.__name__}: no calibrated probabilities to combine"):
            f({})
        with pytest.raises(ValueError, match=r"'b' is nan, not a probability in \[0, 1\]"):
            f({"a": 0.5, "b": math.nan})
        with pytest.raises(ValueError, match=r"'b' is 1.5, not a probability"):
            f({"a": 0.5, "b": 1.5})
        with pytest.raises(TypeError, match="mapping"):
            f([0.2, 0.4])
        with pytest.raises(TypeError, match="must be a number"):
            f({"a": "0.5"})


# --------------------------------------------------------------------------------------------
# Differential tests against the reference
# --------------------------------------------------------------------------------------------


def test_platt_matches_ek_on_random_sets():
    rng = np.random.default_rng(20260101)
    checked = 0
    for _ in range(1500):
        x, c = random_set(rng)
        xs, cs = x.tolist(), c.tolist()
        ours, theirs = PlattCalibrator().fit(x, c), ek_cal.PlattCalibrator().fit(xs, cs)
        assert np.allclose(ours.predict(x), [theirs(v) for v in xs], rtol=0, atol=1e-9)
        if len(set(xs)) >= 2:  # with one distinct score the slope is rounding-dependent in the reference
            scale = max(1.0, abs(theirs.a), abs(theirs.b))
            assert abs(ours.a - theirs.a) <= 1e-9 * scale and abs(ours.b - theirs.b) <= 1e-9 * scale, (xs, cs)
            probe = np.linspace(x.min() - 1, x.max() + 1, 7).tolist()
            assert [ours(v) for v in probe] == pytest.approx([theirs(v) for v in probe], abs=1e-9)
            checked += 1
    assert checked > 1100


def test_platt_on_many_rows_matches_ek_and_does_not_depend_on_the_cores(monkeypatch):
    """Above 262,144 rows each Newton pass sums the two halves of the rows side by side; on one
    core the same halves are summed one after the other, so the fit is the same bit for bit."""
    import scorekit.qe.calibrate as calibrate

    rng = np.random.default_rng(31)
    x = rng.normal(0.3, 1.2, 400_000)
    c = rng.random(x.size) < 1 / (1 + np.exp(-(1.7 * x - 0.4)))
    two = PlattCalibrator().fit(x, c)
    monkeypatch.setattr(calibrate, "available_cores", lambda: 1)
    one = PlattCalibrator().fit(x, c)
    assert (one.a, one.b) == (two.a, two.b)
    theirs = ek_cal.PlattCalibrator().fit(x.tolist(), c.tolist())
    assert abs(two.a - theirs.a) <= 1e-9 * abs(theirs.a) and abs(two.b - theirs.b) <= 1e-9 * max(1.0, abs(theirs.b))
    assert abs(two.a - 1.7) < 0.05 and abs(two.b + 0.4) < 0.05  # the generating slope and intercept


def test_platt_with_one_distinct_score_is_the_limit_of_the_reference_path():
    """All scores equal: the Newton steps from ``(0, b0)`` move along ``(x, 1)`` (the ridge cancels),
    so the fit is ``a = x t``, ``b = b0 + t`` with ``a x + b`` the smoothed log-odds; the reference
    reaches it up to its own rounding."""
    for x0, n_pos, n_neg in [(0.2, 16, 4), (0.9, 10, 10), (3.0, 1, 7), (0.0, 5, 2)]:
        cal = PlattCalibrator().fit([x0] * (n_pos + n_neg), [True] * n_pos + [False] * n_neg)
        m = (n_pos * (n_pos + 1) / (n_pos + 2) + n_neg / (n_neg + 2)) / (n_pos + n_neg)
        b0 = math.log((n_pos + 1) / (n_neg + 1))
        t = (math.log(m / (1 - m)) - b0) / (1 + x0 * x0)
        assert (cal.a, cal.b) == pytest.approx((x0 * t, b0 + t), abs=1e-12)
        theirs = ek_cal.PlattCalibrator().fit([x0] * (n_pos + n_neg), [True] * n_pos + [False] * n_neg)
        assert cal(x0) == pytest.approx(theirs(x0), abs=1e-9)
        assert (cal.a, cal.b) == pytest.approx((theirs.a, theirs.b), abs=1e-3)


def test_platt_keeps_the_reference_iterates_far_from_zero():
    """Scores at 1000 ± 0.001: the reference's ridge dominates its (ill-conditioned) Hessian and it
    stops at its 100th step; the centred iteration reproduces that iterate."""
    ours = PlattCalibrator().fit([1000, 1000.001], [True, False])
    theirs = ek_cal.PlattCalibrator().fit([1000, 1000.001], [True, False])
    assert ours.a == pytest.approx(theirs.a, rel=1e-5) and ours.b == pytest.approx(theirs.b, rel=1e-5)
    start = PlattCalibrator(max_iter=0).fit([1, 2, 3], [True, True, False])
    assert (start.a, start.b) == (0.0, math.log(3 / 2))  # the reference's starting point
    few = PlattCalibrator(max_iter=2).fit(*overconfident())
    theirs = ek_cal.PlattCalibrator(max_iter=2).fit(*overconfident())
    assert (few.a, few.b) == pytest.approx((theirs.a, theirs.b), rel=1e-12)


def test_large_sets_match_ek():
    """Above 131,072 rows Platt first converges on a sample of the rows, then on all of them: the
    same fixed point as the reference; with a max_iter too small for the sample to converge it
    follows the reference's path, iterate for iterate. Isotonic pools large sets in passes."""
    rng = np.random.default_rng(12)
    x = rng.random(140_000)
    c = rng.random(x.size) < x**2
    xs, cs = x.tolist(), c.tolist()
    for max_iter in (100, 3):
        ours, theirs = PlattCalibrator(max_iter=max_iter).fit(x, c), ek_cal.PlattCalibrator(max_iter=max_iter).fit(xs, cs)
        assert (ours.a, ours.b) == pytest.approx((theirs.a, theirs.b), rel=1e-12)
    assert PlattCalibrator(max_iter=3).fit(x, c).a != PlattCalibrator().fit(x, c).a
    for scores in (x, np.round(x, 3)):
        ours = IsotonicCalibrator().fit(scores, c)
        theirs = ek_cal.IsotonicCalibrator().fit(scores.tolist(), cs)
        assert ours.x == theirs.x and ours.y == theirs.y


def test_knots_are_a_read_only_list_like_sequence():
    knots = IsotonicCalibrator().fit([0.2, 0.2, 0.6, 0.9], [False, True, True, True]).y
    assert isinstance(knots, cal_module.Knots)
    assert knots == [0.5, 1.0, 1.0] and [0.5, 1.0, 1.0] == knots and knots == (0.5, 1.0, 1.0)
    assert knots != [0.5, 1.0] and knots != ["a", "b", "c"] and knots != "abc"
    assert (len(knots), knots[0], knots[-1], knots[1:], list(knots)) == (3, 0.5, 1.0, [1.0, 1.0], [0.5, 1.0, 1.0])
    assert repr(knots) == "[0.5, 1.0, 1.0]" and knots.tolist() == [0.5, 1.0, 1.0]
    assert np.asarray(knots).tolist() == [0.5, 1.0, 1.0]
    with pytest.raises(ValueError, match="read-only"):
        knots.array[0] = 0.0
    with pytest.raises(TypeError):
        hash(knots)
    import pickle
    cal = IsotonicCalibrator(x=[0.0, 1.0], y=[0.25, 0.75])
    assert pickle.loads(pickle.dumps(cal)) == cal and cal.x == [0.0, 1.0]
    cal.y = [0.5, 0.5]  # assigning a list stores knots
    assert isinstance(cal.y, cal_module.Knots) and cal(0.3) == 0.5


def test_isotonic_matches_ek_exactly_and_sklearn():
    rng = np.random.default_rng(7)
    for _ in range(1500):
        x, c = random_set(rng)
        xs, cs = x.tolist(), c.tolist()
        ours, theirs = IsotonicCalibrator().fit(x, c), ek_cal.IsotonicCalibrator().fit(xs, cs)
        assert ours.x == theirs.x and ours.y == theirs.y, (xs, cs)
        probe = np.concatenate([x, rng.uniform(x.min() - 1, x.max() + 1, 10)])
        expected = [theirs(v) for v in probe.tolist()]
        assert [ours(v) for v in probe.tolist()] == expected
        assert ours.predict(probe).tolist() == expected
        sk = IsotonicRegression(out_of_bounds="clip").fit(x, c.astype(float))
        assert np.allclose(sk.predict(probe), expected, rtol=0, atol=1e-9)


def nll(logits, correct, t):
    """The spec's temperature objective, written out."""
    total = 0.0
    for z, y in zip(logits, correct):
        p = min(max(reference_sigmoid(z / t), 1e-12), 1 - 1e-12)
        total -= math.log(p) if y else math.log(1 - p)
    return total


def reference_sigmoid(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def test_temperature_matches_ek_on_random_sets():
    """The golden-section search's last steps compare NLLs that differ by rounding only, so T is
    compared to 1e-6, or, where the NLL is flat, by the NLL it reaches."""
    rng = np.random.default_rng(11)
    for _ in range(250):
        x, c = random_set(rng, n_max=40)
        ours, theirs = TemperatureCalibrator().fit(x, c), ek_cal.TemperatureCalibrator().fit(x.tolist(), c.tolist())
        if abs(ours.T - theirs.T) > 1e-6 * theirs.T:
            a, b = nll(x.tolist(), c.tolist(), ours.T), nll(x.tolist(), c.tolist(), theirs.T)
            assert a == pytest.approx(b, rel=1e-9, abs=1e-9), (x.tolist(), c.tolist(), ours.T, theirs.T)


def test_ece_and_curve_match_ek_bit_for_bit():
    rng = np.random.default_rng(3)
    for i in range(800):
        n = int(rng.integers(0, 40))
        p = rng.random(n) * 1.4 - 0.2  # some outside [0, 1]
        if i % 4 == 0:
            p = np.round(p, 1)
        p[rng.random(n) < 0.05] = np.nan
        c = rng.random(n) < 0.5
        bins = int(rng.choice([1, 2, 3, 7, 10, 15, 100, 1000]))
        ps, cs = p.tolist(), c.tolist()
        assert expected_calibration_error(ps, cs, n_bins=bins) == ek_cal.expected_calibration_error(ps, cs, n_bins=bins)
        assert reliability_curve(p, c, n_bins=bins) == ek_cal.reliability_curve(ps, cs, n_bins=bins)
    p, c = rng.random(30).tolist(), (rng.random(30) < 0.5).tolist()  # more bins than rows: only used bins are counted
    assert reliability_curve(p, c, n_bins=50_000) == ek_cal.reliability_curve(p, c, n_bins=50_000)
    assert expected_calibration_error(p, c, n_bins=50_000) == ek_cal.expected_calibration_error(p, c, n_bins=50_000)
    assert expected_calibration_error(p, c, n_bins=2**53) == pytest.approx(
        sum(abs(v - w) for v, w in zip(p, c)) / 30, abs=1e-15)  # one row per bin


def test_group_calibrator_matches_ek():
    rng = np.random.default_rng(5)
    for _ in range(150):
        n = int(rng.integers(1, 80))
        x, c = rng.random(n), rng.random(n) < 0.6
        groups = rng.choice(["a", "b", "c", 1, None], size=n).tolist()
        ours = GroupCalibrator().fit(x, c, groups=groups)
        theirs = ek_cal.GroupCalibrator().fit(x.tolist(), c.tolist(), groups=groups)
        assert list(ours.by_group) == list(theirs.by_group)
        for g in ["a", "b", "c", 1, None, "zzz"]:
            rows = [i for i, h in enumerate(groups) if h == g] if g in theirs.by_group else list(range(n))
            if len(set(x[rows].tolist())) >= 2:  # one distinct score: see the test below
                for v in (0.0, 0.3, 0.7, 1.0):
                    assert ours(v, group=g) == pytest.approx(theirs(v, group=g), abs=1e-9)


def test_signal_family_matches_ek():
    rng = np.random.default_rng(9)
    compared = 0
    for _ in range(120):
        n = int(rng.integers(4, 40))
        rows = []
        for _ in range(n):
            row = {}
            if rng.random() < 0.9:
                row["judge"] = float(rng.random())
            if rng.random() < 0.8:
                row["logprob"] = float(-rng.exponential())
            if rng.random() < 0.05:
                row["judge"] = math.nan
            rows.append(row)
        correct = (rng.random(n) < 0.5).tolist()
        try:
            theirs = ek_cal.SignalFamilyCalibrator().fit(rows, correct)
        except ValueError as exc:
            with pytest.raises(ValueError, match="cannot calibrate"):
                SignalFamilyCalibrator().fit(rows, correct)
            assert "cannot calibrate" in str(exc)
            continue
        ours = SignalFamilyCalibrator().fit(rows, correct)
        assert list(ours.calibrators) == list(theirs.calibrators)
        assert (ours.fusion is None) == (theirs.fusion is None)
        for row in rows:
            finite = {k: v for k, v in row.items() if math.isfinite(v)}
            if finite:
                assert ours(finite) == pytest.approx(theirs(finite), abs=1e-9)
        compared += 1
    assert compared > 60


def test_records_load_across_kits(tmp_path):
    """A record saved by either kit loads in the other (the same JSON under ``calibrators/``)."""
    scores, correct = overconfident()
    mine = {"p": PlattCalibrator().fit(scores, correct), "i": IsotonicCalibrator().fit(scores, correct),
            "t": TemperatureCalibrator(T=1.7)}
    for name, cal in mine.items():
        save_calibrator(cal, name, rootdir=tmp_path)
        assert ek_cal.load_calibrator(name, rootdir=str(tmp_path)).to_dict() == cal.to_dict()
    theirs = ek_cal.SignalFamilyCalibrator().fit(DOC_ROWS, DOC_CORRECT)
    ek_cal.save_calibrator(theirs, "ek-family", rootdir=str(tmp_path))
    assert (tmp_path / "calibrators" / "ek-family.json").is_file()
    loaded = load_calibrator("ek-family", rootdir=tmp_path)
    assert loaded.to_dict() == theirs.to_dict()
    assert loaded({"judge": 0.4, "logprob": -1.0}) == theirs({"judge": 0.4, "logprob": -1.0})


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

finite_scores = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@settings(max_examples=150)
@given(st.lists(st.tuples(finite_scores, st.booleans()), max_size=60), st.lists(finite_scores, max_size=10))
def test_isotonic_properties(rows, probes):
    x, c = [r[0] for r in rows], [r[1] for r in rows]
    cal = IsotonicCalibrator().fit(x, c)
    assert cal.x == sorted(set(x)) and all(0 <= y <= 1 for y in cal.y)
    assert all(a <= b for a, b in zip(cal.y, cal.y[1:]))
    ordered = sorted(probes)
    out = [cal(v) for v in ordered]
    assert all(0 <= v <= 1 for v in out) and all(a <= b + 1e-15 for a, b in zip(out, out[1:]))
    if rows:  # the fit minimises the squared error among monotone fits: no worse than the constant mean
        fitted = np.array([cal(v) for v in x])
        assert ((fitted - np.array(c)) ** 2).sum() <= ((np.mean(c) - np.array(c)) ** 2).sum() + 1e-9


@settings(max_examples=150)
@given(st.lists(st.tuples(finite_scores, st.booleans()), max_size=40), finite_scores)
def test_platt_properties(rows, probe):
    x, c = [r[0] for r in rows], [r[1] for r in rows]
    cal = PlattCalibrator().fit(x, c)
    assert 0.0 <= cal(probe) <= 1.0
    assert cal.predict([probe])[0] == pytest.approx(cal(probe), abs=1e-15)
    if len(set(x)) >= 2 and any(c) and not all(c):  # positively associated data gets a positive slope
        xs, cs = np.array(x), np.array(c)
        if xs[cs].min() > xs[~cs].max():
            assert cal.a > 0


@settings(max_examples=150)
@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True), st.booleans()), max_size=50),
       st.integers(1, 50))
def test_ece_properties(rows, n_bins):
    p, c = [r[0] for r in rows], [r[1] for r in rows]
    ece = expected_calibration_error(p, c, n_bins=n_bins)
    assert 0.0 <= ece <= 1.0 + 1e-12
    curve = reliability_curve(p, c, n_bins=n_bins)
    assert sum(r["count"] for r in curve) == sum(math.isfinite(v) for v in p)
    assert [r["confidence"] for r in curve] == sorted(r["confidence"] for r in curve)


def test_predict_equals_calling_each_score():
    rng = np.random.default_rng(1)
    x, c = rng.normal(size=300), rng.random(300) < 0.5
    probes = np.concatenate([rng.normal(size=200) * 4, [0.0, math.inf, -math.inf, 1e300]])
    for cal in (PlattCalibrator().fit(x, c), TemperatureCalibrator().fit(x, c)):
        assert np.allclose(cal.predict(probes), [cal(v) for v in probes.tolist()], rtol=0, atol=2e-16)
    iso = IsotonicCalibrator().fit(x, c)
    assert iso.predict(probes).tolist() == [iso(v) for v in probes.tolist()]
    assert IsotonicCalibrator(x=[1.0], y=[0.25]).predict([0.0, 5.0]).tolist() == [0.25, 0.25]
    assert IsotonicCalibrator().predict([0.2, 1.7]).tolist() == [0.2, 1.0]
    for cal in (PlattCalibrator(), iso, IsotonicCalibrator(), TemperatureCalibrator()):
        with pytest.raises(ValueError, match="NaN.*at index 1"):
            cal.predict([0.1, math.nan])


# --------------------------------------------------------------------------------------------
# Small calibration sets warn
# --------------------------------------------------------------------------------------------


def caught(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in seen if issubclass(w.category, SmallCalibrationWarning)]


def test_small_set_warnings():
    even = ([0.2] * 10 + [0.8] * 10, [False] * 10 + [True] * 10)
    for cls in (PlattCalibrator, TemperatureCalibrator):
        assert caught(lambda: cls().fit(*even)) == []
        assert caught(lambda: cls().fit(even[0][1:], even[1][1:])) == [
            f"{cls.__name__}.fit: the calibration set is too small for a reliable fit: only 9 incorrect row(s) of 19, "
            f"fewer than {MIN_ROWS_PER_CLASS} of each outcome"]
        assert "no rows with a finite score" in caught(lambda: cls().fit([math.nan], [True]))[0]
        assert "all 3 rows are correct (one outcome only)" in caught(lambda: cls().fit([1, 2, 3], [1, 1, 1]))[0]
    big = (np.linspace(0, 1, 100), np.arange(100) % 3 == 0)
    assert caught(lambda: IsotonicCalibrator().fit(*big)) == []
    [message] = caught(lambda: IsotonicCalibrator().fit(big[0][:99], big[1][:99]))
    assert f"99 rows, fewer than {MIN_ROWS_PER_BIN} per bin over {DEFAULT_N_BINS} bins (100)" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallCalibrationWarning)
        with pytest.raises(SmallCalibrationWarning):
            PlattCalibrator().fit([0.1, 0.9], [True, False])


def test_group_and_family_warn_once_naming_the_small_parts():
    x = [0.1 * (i % 10) for i in range(60)]
    c = [i % 2 == 0 for i in range(60)]
    groups = ["big"] * 50 + ["tiny"] * 10
    assert caught(lambda: GroupCalibrator().fit(x, c, groups=groups)) == [
        "GroupCalibrator.fit: the calibration sets of groups ['tiny'] are too small for a reliable fit "
        f"(fewer than {MIN_ROWS_PER_CLASS} rows of an outcome, or, for an isotonic fit, fewer than 100 rows)"]
    [message] = caught(lambda: SignalFamilyCalibrator().fit(DOC_ROWS, DOC_CORRECT))
    assert "signal families ['judge', 'logprob', '(fusion)']" in message

    class Loud:
        def fit(self, scores, correct):
            assert isinstance(scores, list) and isinstance(correct, list)  # custom calibrators get lists
            warnings.warn("loud", UserWarning, stacklevel=2)
            return self

    with pytest.warns(UserWarning, match="loud"):
        GroupCalibrator(factory=Loud).fit([0.1, 0.2], [True, False], groups=["a", "a"])


# --------------------------------------------------------------------------------------------
# Persistence
# --------------------------------------------------------------------------------------------


def test_persistence_round_trips_every_kind(tmp_path, monkeypatch):
    scores, correct = overconfident()
    kinds = [PlattCalibrator().fit(scores, correct), IsotonicCalibrator().fit(scores, correct),
             TemperatureCalibrator().fit([s * 4 - 2 for s in scores], correct),
             GroupCalibrator(factory=IsotonicCalibrator).fit(scores, correct, groups=[i % 3 for i in range(50)])]
    for i, cal in enumerate(kinds):
        record = save_calibrator(cal, f"run-1/cal-{i}", rootdir=tmp_path)
        assert record == cal.to_dict()
        assert json.loads((tmp_path / "calibrators" / "run-1" / f"cal-{i}.json").read_text()) == record
        back = load_calibrator(f"run-1/cal-{i}", rootdir=tmp_path)
        assert type(back) is type(cal)
        for v in np.linspace(-0.5, 1.5, 41).tolist():
            assert back(v) == cal(v)
    # group keys are strings after a reload; a non-string group still finds its calibrator
    back = load_calibrator("run-1/cal-3", rootdir=tmp_path)
    assert list(back.by_group) == ["0", "1", "2"]
    assert back(0.65, group=1) == kinds[3](0.65, group=1) != back(0.65)
    monkeypatch.setenv("SCOREKIT_DATA_HOME", str(tmp_path / "home"))
    save_calibrator(kinds[0], "default-root")
    assert (tmp_path / "home" / "calibrators" / "default-root.json").is_file()
    assert load_calibrator("default-root") == kinds[0]


def test_persistence_errors(tmp_path):
    folder = tmp_path / "calibrators"
    folder.mkdir()

    def stored(name, record):
        (folder / f"{name}.json").write_text(json.dumps(record))

    for record in ([1, 2], {"a": 1}, "str", None):
        stored("x", record)
        with pytest.raises(ValueError, match=r"calibrator record 'x' is malformed \(no 'kind'\)"):
            load_calibrator("x", rootdir=tmp_path)
    for kind in ("nope", 5):
        stored("x", {"kind": kind})
        with pytest.raises(ValueError, match=r"unknown calibrator kind .* in 'x'; known: \['group', 'isotonic', "
                                             r"'platt', 'signal_family', 'temperature'\]"):
            load_calibrator("x", rootdir=tmp_path)
    for record, detail in [({"kind": "platt"}, "'a'"), ({"kind": "platt", "a": "x", "b": 1}, "must be a number"),
                           ({"kind": "isotonic", "x": [1], "y": []}, "1 knots in x but 0 in y"),
                           ({"kind": "isotonic", "x": [2, 1], "y": [0, 1]}, "strictly increasing"),
                           ({"kind": "temperature", "T": 0}, "must be > 0"),
                           ({"kind": "group", "by_group": {"a": {"kind": "zzz"}}}, "unknown calibrator kind 'zzz'"),
                           ({"kind": "group", "by_group": [1]}, "'by_group' must map"),
                           ({"kind": "signal_family", "calibrators": {}, "combine": "zz"},
                            r"unknown combiner 'zz'; known: \['mean', 'min'\]")]:
        (folder / "x.json").write_text(json.dumps(record, allow_nan=True))
        with pytest.raises(ValueError, match=f"calibrator record 'x' is missing/invalid fields: .*{detail}"):
            load_calibrator("x", rootdir=tmp_path)
    # the stores read strict JSON: an Infinity in the file is refused as it is read (issue 30)
    (folder / "x.json").write_text(json.dumps({"kind": "platt", "a": math.inf, "b": 1}, allow_nan=True))
    with pytest.raises(ValueError, match=r"x\.json: not strict JSON \(Infinity is not valid JSON\)"):
        load_calibrator("x", rootdir=tmp_path)
    with pytest.raises(KeyError) as missing:
        load_calibrator("never-saved", rootdir=tmp_path)
    assert isinstance(missing.value, CalibratorNotFoundError) and "'never-saved'" in str(missing.value)
    (folder / "bad.json").write_text("{not json")
    with pytest.raises(CorruptStoreFileError, match=r"bad\.json: not valid JSON"):
        load_calibrator("bad", rootdir=tmp_path)
    with pytest.raises(CorruptStoreFileError, match=r"bad\.json: not valid JSON .*does not replace it"):
        save_calibrator(PlattCalibrator(), "bad", rootdir=tmp_path)
    assert (folder / "bad.json").read_text() == "{not json"  # never replaced
    with pytest.raises(TypeError, match="has no to_dict"):
        save_calibrator(lambda p: p, "fn", rootdir=tmp_path)
    with pytest.raises(TypeError, match="the calibrator of signal 'a'"):
        save_calibrator(SignalFamilyCalibrator(calibrators={"a": lambda r: r}), "sf", rootdir=tmp_path)
    with pytest.raises(ValueError, match="'..' part"):
        save_calibrator(PlattCalibrator(), "../escape", rootdir=tmp_path)
    with pytest.raises(ValueError, match=r"groups 1 and '1' would both be saved as '1'"):
        GroupCalibrator(by_group={1: PlattCalibrator(), "1": PlattCalibrator()}).to_dict()


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


def test_bad_fit_input():
    for cls in (PlattCalibrator, IsotonicCalibrator, TemperatureCalibrator):
        with pytest.raises(InvalidValueError, match=r"3 (scores|logits) but 2 labels"):
            cls().fit([0.1, 0.2, 0.3], [True, False])
        with pytest.raises(InvalidTypeError, match=r"\[1\] must be a number, got '0.5'"):
            cls().fit([0.1, "0.5"], [True, False])
        with pytest.raises(InvalidTypeError, match=r"\[0\] must be a number, got None"):
            cls().fit([None], [True])
        for label in (2, 0.5, "yes", None, math.nan):
            with pytest.raises(InvalidValueError, match=r"correct\[1\] must be a bool \(or 0/1\)"):
                cls().fit([0.1, 0.2], [True, label])
        with pytest.raises(InvalidTypeError, match="must be a sequence"):
            cls().fit("0.5", [True])
        with pytest.raises(InvalidValueError, match="one-dimensional"):
            cls().fit([[0.1, 0.2]], [True])
        assert cls().fit(iter([0.1, 0.9]), (v for v in [False, True])) is not None
    with pytest.raises(InvalidValueError, match="overflowed .*rescale the scores"):
        PlattCalibrator().fit([1e200, -1e200, 3e200, 5], [True, False, True, False])
    with pytest.raises(InvalidValueError, match="3 scores but 2 groups"):
        GroupCalibrator().fit([0.1, 0.2, 0.3], [True, False, True], groups=["a", "b"])
    with pytest.raises(InvalidTypeError, match=r"groups\[0\] is \['x'\] .*unhashable"):
        GroupCalibrator().fit([1, 2], [True, False], groups=[["x"], ["y"]])
    with pytest.raises(InvalidTypeError, match=r"signals\[1\] is \[0.5\]"):
        SignalFamilyCalibrator().fit([{"judge": 0.5}, [0.5]], [True, False])
    with pytest.raises(InvalidTypeError, match=r"signals\[0\]\['judge'\] must be a number"):
        SignalFamilyCalibrator().fit([{"judge": "high"}, {"judge": 0.2}], [True, False])


def test_bad_calls_and_parameters():
    for cal in (PlattCalibrator(), IsotonicCalibrator(x=[0.0, 1.0], y=[0.2, 0.8]), TemperatureCalibrator(),
                GroupCalibrator()):
        with pytest.raises(ValueError, match=r"calibrated probability is NaN \(was the raw score non-finite\?\)"):
            cal(math.nan)
        with pytest.raises(TypeError, match="must be a number, got '0.5'"):
            cal("0.5")
    with pytest.raises(TypeError, match="unhashable"):
        GroupCalibrator()(0.5, group=["a"])
    with pytest.raises(TypeError, match="mapping of signal name"):
        SignalFamilyCalibrator()([0.5])
    for bad, match in [(dict(a=math.nan), "a must be finite"), (dict(b="1"), "b must be a number"),
                       (dict(max_iter=-1), "max_iter must be >= 0"), (dict(max_iter=2.5), "must be an integer")]:
        with pytest.raises((ValueError, TypeError), match=match):
            PlattCalibrator(**bad)
    for bad, match in [(dict(T=0), "T must be > 0"), (dict(t_min=5, t_max=1), "t_min .* must be below t_max"),
                       (dict(T=math.inf), "must be finite"), (dict(max_iter=True), "must be an integer")]:
        with pytest.raises((ValueError, TypeError), match=match):
            TemperatureCalibrator(**bad)
    with pytest.raises(ValueError, match="strictly increasing"):
        IsotonicCalibrator(x=[0.0, 0.0], y=[0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        IsotonicCalibrator(x=[0.0, math.nan], y=[0.1, 0.2])
    for bins, error in [(0, ValueError), (-3, ValueError), (True, TypeError), (2.5, TypeError), (2**60, ValueError)]:
        with pytest.raises(error, match="n_bins"):
            expected_calibration_error([0.5], [True], n_bins=bins)
    with pytest.raises(ValueError, match="2 probs but 1 labels"):
        reliability_curve([0.5, 0.6], [True])


# --------------------------------------------------------------------------------------------
# Library-backed
# --------------------------------------------------------------------------------------------


def test_sklearn_calibrator_is_sklearn():
    rng = np.random.default_rng(2)
    x, c = rng.normal(size=200), rng.random(200) < 0.4
    sig, iso = sklearn_calibrator().fit(x, c), sklearn_calibrator("isotonic").fit(x, c)
    reference = LogisticRegression().fit(x.reshape(-1, 1), c.astype(int))
    sk_iso = IsotonicRegression(out_of_bounds="clip").fit(x, c.astype(float))
    for v in (-5.0, -0.3, 0.0, 0.4, 7.0):
        assert sig(v) == reference.predict_proba([[v]])[0, 1]
        assert iso(v) == sk_iso.predict([v])[0] == pytest.approx(IsotonicCalibrator().fit(x, c)(v), abs=1e-12)
    assert not hasattr(sig, "to_dict")
    with pytest.raises(ValueError, match="NaN"):
        sig(math.nan)
    with pytest.raises(ValueError, match="not fitted"):
        sklearn_calibrator()(0.5)
    with pytest.raises(ValueError, match="method must be 'sigmoid' or 'isotonic'"):
        sklearn_calibrator("beta")
    with pytest.raises(ValueError, match="cannot fit this set: all 2 rows are correct"):
        sklearn_calibrator().fit([0.1, 0.2], [True, True])


def test_library_backends_need_the_calibration_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "netcal", None)
    with pytest.raises(MissingExtraError, match=r"pip install scorekit\[calibration\]"):
        sklearn_calibrator()
    with pytest.raises(ImportError, match=r"ek\[calibration\]"):
        netcal_ece([0.5], [True])


def test_netcal_ece_reads_the_rows_like_expected_calibration_error(monkeypatch):
    calls = []

    class ECE:
        def __init__(self, bins):
            self.bins = bins

        def measure(self, p, y):
            calls.append((self.bins, p.dtype, p.tolist(), y.dtype, y.tolist()))
            return np.float64(0.125)

    netcal = types.ModuleType("netcal")
    netcal.metrics = types.SimpleNamespace(ECE=ECE)
    monkeypatch.setitem(sys.modules, "netcal", netcal)
    monkeypatch.setitem(sys.modules, "netcal.metrics", netcal.metrics)
    assert netcal_ece([0.2, 1.5, math.nan, 0.7], [True, False, True, False], bins=5) == 0.125
    assert calls == [(5, np.float64, [0.2, 1.0, 0.7], np.int64, [1, 0, 0])]
