"""Small-input paths (issue #31, item 7): each gives the same bits as the path it short-cuts, on
random inputs on both sides of its threshold, and the calls they serve stay cheap."""

from __future__ import annotations

import importlib
import math
import numbers
import os
import random
import subprocess
import sys
import warnings
from collections import Counter
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorekit import _kernels, interrater
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


def exact_kappa(a: list, b: list) -> float:
    """Cohen's kappa by its definition in exact arithmetic (labels as ``Counter`` keys them, an
    agreement where ``x == y``), rounded once."""
    n = len(a)
    if n == 0:
        return 1.0
    count_a, count_b = Counter(a), Counter(b)
    p_o = Fraction(sum(1 for x, y in zip(a, b) if x == y), n)
    p_e = sum((Fraction(count_a[k] * count_b[k], n * n) for k in count_a if k in count_b), Fraction(0))
    return 1.0 if p_e == 1 else float((p_o - p_e) / (1 - p_e))


@pytest.mark.parametrize("labels", LABEL_SETS, ids=repr)
def test_kappa_paths_correctly_rounded(monkeypatch, labels):
    """Both paths (counted in Python below 512 items with at most 8 shared labels, NumPy's counts
    otherwise) give kappa correctly rounded: the exact value of its definition rounded once."""
    rnd = random.Random(31)
    for n in [1, 2, 3, 5, 8, 20, 63, 200, interrater._SMALL_ITEMS - 1]:
        for _ in range(20):
            a, b = draw(rnd, labels, n), draw(rnd, labels, n)
            small, full = both_paths(monkeypatch, interrater.cohen_kappa, a, b)
            exact = exact_kappa(a, b)
            assert same_bits(small, exact) and same_bits(full, exact), (labels, n, a, b, small, full, exact)


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
    assert interrater.cohen_kappa([1, 1, 0, 0, 1], [1, 1, 0, 1, 1]) == 0.5454545454545454  # 6/11, rounded once
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
                with monkeypatch.context() as m:
                    m.setattr(_kernels, "compiled", lambda: None)  # the Python small path
                    small = decide.split_conformal_quantile(scores, alpha)
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
                with monkeypatch.context() as m:
                    m.setattr(_kernels, "compiled", lambda: None)  # the Python small path
                    small = fn(probs, correct, n_bins=n_bins)
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


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled rows", "Python rows"])
def test_risk_coverage_small_path_same_values(monkeypatch, compiled):
    if not compiled:
        monkeypatch.setattr(_kernels, "compiled", lambda: None)
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


LOGP_POOL = [-0.5, -1e-300, 0.0, -0.0, 0.3, -math.inf, math.inf, math.nan, -40.0, 2, -3, True, False, -(10**400)]


@pytest.mark.parametrize("fn", ["geo_mean", "length_normalized", "min_prob", "mean_prob"])
def test_logprob_list_path_same_bits(fn):
    """A list of floats is read as it is; a tuple or an iterator goes through the general reader:
    same bits, and the same named error for an item that is not a number."""
    from scorekit.qe import signals
    aggregate = getattr(signals, fn)
    rnd = random.Random(13)
    for n in [0, 1, 2, 3, 20, 200]:
        for _ in range(30):
            logps = [rnd.choice(LOGP_POOL) if rnd.random() < 0.3 else -rnd.expovariate(3.0) for _ in range(n)]
            listed = aggregate(logps)
            assert same_bits(listed, aggregate(tuple(logps))), logps
            assert same_bits(listed, aggregate(iter(logps))), logps
            if -(10**400) not in logps:  # beyond float64: an array cannot hold it
                assert same_bits(listed, aggregate(np.array(logps, dtype=float))), logps
    for bad in ["-0.5", None, b"x"]:
        for logps in ([-0.5, bad], (-0.5, bad)):
            with pytest.raises(signals.InvalidTypeError, match=r"logps\[1\]"):
                aggregate(logps)
    if fn == "length_normalized":
        for alpha in [0.6, 1, np.float64(0.6), True]:
            assert same_bits(aggregate([-0.5, -1.0], alpha=alpha), aggregate([-0.5, -1.0], alpha=float(alpha)))
        for alpha in [math.nan, math.inf, -math.inf, 10**400]:
            with pytest.raises(signals.InvalidValueError, match="alpha"):
                aggregate([-0.5], alpha=alpha)
        with pytest.raises(signals.InvalidTypeError, match="alpha"):
            aggregate([-0.5], alpha="0.6")


def test_percent_agreement_lists_same_as_other_sequences():
    rnd = random.Random(2)
    for n in [0, 1, 2, 20]:
        a = draw(rnd, ["x", 1, 1.0, math.nan, None], n)
        b = draw(rnd, ["x", 1, 1.0, math.nan, None], n)
        listed = interrater.percent_agreement(a, b)
        assert same_bits(listed, interrater.percent_agreement(tuple(a), iter(b)))
        assert same_bits(listed, interrater.percent_agreement(np.array(a, dtype=object), b))
    with pytest.raises(interrater.InvalidValueError):
        interrater.percent_agreement([1], [1, 2])
    with pytest.raises(interrater.InvalidTypeError, match="rater_b"):
        interrater.percent_agreement([1], 5)


COLUMN_POOL = [0.0, -0.0, 1.5, -7.25, 1234.5, 9e15, "12.5", "x", None, math.nan, math.inf, 10**400, True, 3]


@pytest.mark.parametrize("check", ["benford_findings", "zscore_anomaly_findings"])
def test_column_checks_same_findings_on_every_input_kind(check):
    """Lists, tuples, iterators and arrays give the same findings on both sides of ``min_n``."""
    from scorekit import validate
    fn = getattr(validate, check)
    rnd = random.Random(23)
    for n in [0, 1, 2, 5, 29, 30, 31, 60]:
        for min_n in [0, 1, 5, 30]:
            for _ in range(10):
                column = [rnd.choice(COLUMN_POOL) if rnd.random() < 0.3 else rnd.choice([100.0, 101.0, 5e4 * rnd.random()])
                          for _ in range(n)]
                found = [f.message for f in fn(column, min_n=min_n)]
                assert found == [f.message for f in fn(tuple(column), min_n=min_n)]
                assert found == [f.message for f in fn(iter(column), min_n=min_n)]
                numeric = [x for x in column if isinstance(x, float)]
                assert ([f.message for f in fn(numeric, min_n=min_n)]
                        == [f.message for f in fn(np.array(numeric), min_n=min_n)])


@pytest.mark.parametrize("check, bound", [("benford_findings", "tol"), ("zscore_anomaly_findings", "threshold")])
def test_column_checks_keep_option_errors(check, bound):
    from scorekit import validate
    fn = getattr(validate, check)
    cases = [({"field": 1}, validate.InvalidTypeError, "field"), ({"layer": None}, validate.InvalidTypeError, "layer"),
             ({bound: -0.5}, validate.InvalidValueError, bound), ({bound: math.nan}, validate.InvalidValueError, bound),
             ({bound: True}, validate.InvalidTypeError, bound), ({bound: "1"}, validate.InvalidTypeError, bound),
             ({"min_n": -1}, validate.InvalidValueError, "min_n"), ({"min_n": 2.0}, validate.InvalidTypeError, "min_n"),
             ({"min_n": False}, validate.InvalidTypeError, "min_n"),
             ({"field": 1, bound: -1.0}, validate.InvalidTypeError, "field")]  # the first bad option is named
    for options, error, name in cases:
        with pytest.raises(error, match=name):
            fn([1.0, 2.0], **options)
    with pytest.raises(validate.InvalidTypeError, match="numbers"):
        fn("123")
    with pytest.raises(validate.InvalidValueError, match="numbers"):
        fn(np.zeros((2, 2)))
    assert fn([1.0], **{bound: 1, "min_n": np.int64(0)}) == [] or check == "benford_findings"


def test_short_columns_build_no_array(monkeypatch):
    """A column with fewer usable values than ``min_n`` is answered without NumPy, and plain
    options are checked without the ``numbers`` ABCs."""
    from scorekit import validate

    class NoNumbers:
        def __getattr__(self, name):
            raise AssertionError(f"numbers.{name} used on plain options")

    monkeypatch.setattr(validate, "np", NoNumpy())
    monkeypatch.setattr(validate, "numbers", NoNumbers())
    column = [1234.5, "7", None, math.nan] + [float(i) for i in range(20)]
    assert validate.benford_findings(column) == []
    assert validate.zscore_anomaly_findings(column) == []
    assert validate.zscore_anomaly_findings([]) == []


def test_tools_rover_checks_text_as_before():
    """ASCII hypotheses skip the packing check (they hold no lone surrogate); any other text is
    still checked, with the same errors."""
    from scorekit import tools
    assert tools.rover("the cat", "the bat", "the cat") == {
        "consensus": "the cat", "mean_agreement": 0.8333, "agreement": [1.0, 0.6667], "n_engines": 3}
    assert tools.rover("café au", "café", "cafe au")["consensus"] == "café au"
    with pytest.raises(ValueError, match=r"hypotheses\[1\] contains a lone surrogate"):
        tools.rover("a", "a\ud800")
    with pytest.raises(TypeError, match=r"hypotheses\[1\] must be str"):
        tools.rover("a", b"a")
    with pytest.raises(TypeError, match=r"hypotheses\[0\] must be str"):
        tools.rover(1, "a")


def test_rover_maps_null_entries_to_none():
    from scorekit.qe.rover import rover
    c = rover(["a b c", "a c", "x b c d"])
    assert [s.entries for s in c.slots] == [
        [("a", 1.0), ("a", 1.0), ("x", 1.0)], [("b", 1.0), (None, 0.0), ("b", 1.0)],
        [("c", 1.0), ("c", 1.0), ("c", 1.0)], [(None, 0.0), (None, 0.0), ("d", 1.0)]]
    assert [s.winner for s in c.slots] == ["a", "b", "c", None] and c.tokens == ["a", "b", "c"]


def test_match_calls_pairs_by_name_exactly_when_no_name_repeats():
    """The forced pairing (by name) applies when each side has as many names as calls; a repeated
    name on either side takes the scored path (exact match first)."""
    from scorekit.agents import match_calls
    from scorekit.agents.base import as_call
    s = lambda q: {"name": "s", "arguments": {"q": q}}
    t = {"tool": "t", "args": [("q", 1)]}
    pairs, up, ug = match_calls([s("z"), t], [t, s("a")])
    assert [(p[1], g[1]) for p, g in pairs] == [({"q": "z"}, {"q": "a"}), ({"q": 1}, {"q": 1})] and up == ug == []
    pairs, up, ug = match_calls([s("z"), s("a")], [s("a")])
    assert [(p[1], g[1]) for p, g in pairs] == [({"q": "a"}, {"q": "a"})] and up == [("s", {"q": "z"})] and ug == []
    pairs, up, ug = match_calls([s("a")], [s("z"), s("a")])
    assert [(p[1], g[1]) for p, g in pairs] == [({"q": "a"}, {"q": "a"})] and ug == [("s", {"q": "z"})]
    assert as_call({"name": "s", "arguments": {"q": 1}}) == ("s", {"q": 1})
    with pytest.raises(ValueError, match="must be a mapping"):
        as_call({"name": "s", "arguments": "q=1"})
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        match_calls([("s", {"q": 1})], [("s", {"q": loop})])


def test_unfitted_gates_share_no_writable_state():
    """Unfitted conformal gates share one read-only empty score array; the smallest calibration
    set is cached per alpha with the values the loop gives."""
    a, b = decide.ConformalGate(alpha=0.1), decide.ConformalGate(alpha=0.2)
    assert a.p_value(0.5) == 1.0 and list(a._cal) == [] and a._cal == []
    b.fit([0.9] * 30 + [0.2], [True] * 30 + [False])
    assert len(b._cal) == 30 and len(a._cal) == 0 and a.q == math.inf
    for alpha in [0.5, 0.1, 0.05, 0.01, 1e-6, 0.3]:
        assert decide._smallest_calibration_set(alpha) == decide._smallest_calibration_set.__wrapped__(alpha)
    with pytest.warns(decide.SmallCalibrationWarning, match="needs at least 9"):
        decide.ConformalGate(alpha=0.1).fit([0.9, 0.8], [True, True])


def numpy_platt_sums(x, mu, a, bc):
    """The Platt sums written plainly in NumPy, block by block, each term summed by its own ``sum()``."""
    sums = [0.0] * 5
    for lo in range(0, x.size, calibrate._BLOCK):
        xc = x[lo:lo + calibrate._BLOCK] - mu
        p = 1.0 / (np.exp(xc * -a - bc) + 1.0)
        w = np.maximum(p - p * p, 1e-12)
        sums = [s + float(t.sum()) for s, t in zip(sums, (p * xc, p, w * xc * xc, w * xc, w))]
    return tuple(sums)


def platt_rows(rnd: random.Random, n: int) -> tuple[list, list]:
    scale, offset = 10 ** rnd.uniform(-3, 3), rnd.choice([0.0, 0.0, -50.0, 1e3, 1e8])
    xs = [offset + scale * rnd.gauss(0, 1) for _ in range(n)]
    for _ in range(rnd.choice([0, 0, 0, 1, 2])):
        if n:
            xs[rnd.randrange(n)] = rnd.choice([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e300])
    flip = rnd.random()
    return xs, [rnd.random() < flip for _ in range(n)]


def test_platt_sums_same_bits_as_plain_numpy():
    """The NumPy path's Platt sums (five terms in one buffer added by one reduction) equal each term
    summed alone, across blocks."""
    rnd = random.Random(16)
    sizes = [1, 2, 5, 7, 8, 9, 20, 63, 64, 129, 1000]
    for n in sizes + [calibrate._BLOCK + 5]:
        for _ in range(30 if n < 2000 else 2):
            x = np.array(platt_rows(rnd, n)[0])
            x = x[np.isfinite(x)]
            mu, a, bc = float(np.mean(x)) if x.size else 0.0, rnd.uniform(-40, 40), rnd.uniform(-5, 5)
            with np.errstate(all="ignore"):
                want = numpy_platt_sums(x, mu, a, bc)
                got = calibrate._platt_half_sums(x, mu, a, bc)
            assert all(map(same_bits, got, want)), (n, got, want)


def close(x: float, y: float, rel: float) -> bool:
    return x == y or abs(x - y) <= rel * max(abs(x), abs(y))


def test_platt_fit_kernel_path_against_numpy_path(monkeypatch):
    """A Platt fit below ``_KERNEL_ROWS`` rows (the compiled kernel, on lists read in the same call
    or on arrays) gives the NumPy path's ``a`` and ``b`` to a relative 1e-9 (the sums differ in
    their last bits: the kernel's are compensated), and the same errors and warnings."""
    rnd = random.Random(8)
    for n in [0, 1, 2, 3, 5, 7, 8, 9, 12, 20, 130]:
        for _ in range(60 if n < 100 else 5):
            xs, cs = platt_rows(rnd, n)
            max_iter = rnd.choice([100, 100, 3, 1, 0])
            results = []
            for cut, read in ((calibrate._KERNEL_ROWS, list), (calibrate._KERNEL_ROWS, tuple), (0, list)):
                monkeypatch.setattr(calibrate, "_KERNEL_ROWS", cut)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        cal = calibrate.PlattCalibrator(max_iter=max_iter).fit(read(xs), read(cs))
                        got = (cal.a, cal.b)
                    except calibrate.InvalidValueError as e:
                        got = str(e)
                results.append((got, [str(w.message) for w in caught]))
            (kernel, kernel_warned), (tupled, tupled_warned), (numpy, numpy_warned) = results
            assert kernel_warned == tupled_warned == numpy_warned and kernel == tupled, (xs, cs, results)
            if isinstance(kernel, str) or isinstance(numpy, str):
                assert kernel == numpy, (xs, cs, max_iter, results)
            else:
                assert close(kernel[0], numpy[0], 1e-9) and close(kernel[1], numpy[1], 1e-9), (xs, cs, results)
    with pytest.raises(calibrate.InvalidValueError, match="2 scores but 1 labels"):
        calibrate.PlattCalibrator().fit([0.5, 0.6], [True])
    with pytest.raises(calibrate.InvalidValueError, match=r"overflowed \(scores reach 1e\+300"):
        calibrate.PlattCalibrator().fit([1e300, -1e300, math.nan, 1e300], [True, False, True, False])
    with pytest.raises(calibrate.InvalidValueError, match=r"overflowed \(scores reach 1e\+300"):
        calibrate.PlattCalibrator().fit(iter([1e300, -1e300, math.inf, 1e300]), np.array([1, 0, 1, 0]))


def fit_outcome(fit):
    """A fit's result (or error) and the warnings it gave, as text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = repr(fit())
        except (decide.InvalidValueError, decide.InvalidTypeError) as e:
            got = f"error: {type(e).__name__}: {e}"
    return got, [str(w.message) for w in caught]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled rows", "Python rows"])
def test_risk_control_fit_small_path_same_threshold(monkeypatch, compiled):
    """A risk-control fit on short lists of floats and bools (counted in Python) gives the
    threshold, the warnings and the errors of the NumPy path, on both sides of the threshold,
    with its rows read by the compiled core or in Python."""
    if not compiled:
        monkeypatch.setattr(_kernels, "compiled", lambda: None)
    rnd = random.Random(23)
    pool = [0.0, 0.5, 1.0, 0.25, float("nan"), float("inf"), -float("inf"), -0.0, 1.5, -0.25]
    for n in [0, 1, 2, 3, 9, 20, 40, decide._SMALL_SET - 1, decide._SMALL_SET]:
        for _ in range(40):
            probs = [rnd.choice(pool) if rnd.random() < 0.15 else round(rnd.random(), rnd.choice([1, 2, 17]))
                     for _ in range(n)]
            flip = rnd.random()
            correct = [rnd.random() < flip for _ in range(n)]
            target = rnd.choice([0.0, -0.0, 0.01, 0.05, 0.1, 0.3, 0.7, 1.0, 1, np.float64(0.1), math.nan, -0.1])
            bound = rnd.choice([1.0, 1.0, 2.0, 0.5, -0.0, 3, math.inf, "1"])
            if rnd.random() < 0.1:
                probs = probs + [rnd.choice(ODD_VALUES)]
                correct = correct + [rnd.choice([True, 1, 0.5])]
            outcomes = []
            for cut in (decide._SMALL_SET, 0):
                monkeypatch.setattr(decide, "_SMALL_SET", cut)
                gate = decide.RiskControlGate(target=target, loss_bound=bound)
                outcomes.append(fit_outcome(lambda: gate.fit(probs, correct).lam))
            assert outcomes[0] == outcomes[1], (probs, correct, target, bound, outcomes)


def test_short_risk_control_fit_skips_numpy(monkeypatch):
    monkeypatch.setattr(decide, "np", NoNumpy())
    gate = decide.RiskControlGate(target=0.3).fit([.2, .4, .6, .8, .9], [False, False, True, True, True])
    assert gate.lam == 0.6  # by hand: at 0.6, (5 * 0/5 + 1) / 6 = 0.167 <= 0.3; at 0.4, (5 * 1/5 + 1) / 6 > 0.3
    assert decide.RiskControlGate(target=0.5).fit([0.9, float("nan")], [True, False]).lam == 0.0  # (0 + 1) / 2
    assert decide.RiskControlGate(target=0.5).fit([0.9, float("nan")], [False, True]).lam == 1 + 1e-9  # (1 + 1) / 2


def interval_cell(rnd: random.Random, kind: float):
    r = rnd.random()
    if r < 0.1:
        return None
    if r < 0.13:
        return math.nan
    if kind < 0.3:
        return rnd.randrange(1, 6)
    if kind < 0.5:
        return rnd.choice([True, False, 0, 1, 2.5, -0.0, 0.0])
    if kind < 0.8:
        return rnd.uniform(-1, 1) * 10 ** rnd.randrange(-3, 12)
    return rnd.choice([1e100, -1e100, 1e101, 3.0, 1e-300, 2**60, 2**53 + 1, math.inf, 10**400, "x"])


def exact_interval_alpha(table) -> float:
    """Interval alpha from its definition in exact arithmetic on the cells' float values (a unit's
    ordered pairs are ``2 m sum((v - mean)**2)``, over ``m - 1``; the pooled values' likewise),
    rounded once."""
    units = [[Fraction(float(v)) for v in col if v is not None and v == v] for col in zip(*table)]
    units = [u for u in units if len(u) >= 2]
    pooled = [v for u in units for v in u]

    def pairs(values):
        mean = sum(values) / len(values)
        return 2 * len(values) * sum((v - mean) ** 2 for v in values)
    if not pooled or min(pooled) == max(pooled):
        return 1.0
    observed = sum(pairs(u) / (len(u) - 1) for u in units)
    return float(1 - (len(pooled) - 1) * observed / pairs(pooled))


def cell(rnd: random.Random, kind: float, complete: bool):
    """An :func:`interval_cell`, not a missing one when the table is ``complete``."""
    value = interval_cell(rnd, kind)
    while complete and (value is None or value != value):
        value = interval_cell(rnd, kind)
    return value


def test_interval_alpha_paths_against_exact_arithmetic(monkeypatch):
    """Interval alpha in Python (tables of fewer than 128 cells and 8 raters, in integers) is the
    exact value of the definition rounded once, with missing cells or without, and gives the NumPy
    path's errors; the NumPy path agrees with the exact value to 1e-12 (relative to the larger of
    1 and ``(n - 1) D_o / D_e``)."""
    rnd = random.Random(48)
    cut = interrater._SMALL_INTERVAL_CELLS
    for raters in [1, 2, 3, 5, 7, 8]:
        for items in [1, 2, 3, 5, 9, 16, 25, 42]:
            for complete in (False, True) * 6:
                kind = rnd.random()
                table = [[cell(rnd, kind, complete) for _ in range(items)] for _ in range(raters)]
                outcomes = []
                for threshold in (cut, 0):
                    monkeypatch.setattr(interrater, "_SMALL_INTERVAL_CELLS", threshold)
                    try:
                        outcomes.append(interrater.krippendorff_alpha(table, level="interval"))
                    except (interrater.InvalidValueError, interrater.InvalidTypeError) as e:
                        outcomes.append(f"{type(e).__name__}: {e}")
                if any(isinstance(o, str) for o in outcomes):
                    assert outcomes[0] == outcomes[1], (table, outcomes)
                    continue
                exact = exact_interval_alpha(table)
                small, full = outcomes
                if raters < interrater._SMALL_INTERVAL_RATERS and raters * items < cut:
                    assert same_bits(small, exact), (table, small, exact)
                assert abs(full - exact) <= 1e-12 * max(1.0, abs(1.0 - exact)), (table, full, exact)


def test_small_interval_alpha_skips_numpy(monkeypatch):
    """Interval alpha on tables of up to 127 cells (it was 47) runs without NumPy, complete or not."""
    rnd = random.Random(5)
    complete = [[rnd.randrange(97, 100) for _ in range(20)] for _ in range(3)]  # the bench's 20 items
    holes = [[None if rnd.random() < 0.2 else rnd.uniform(-5, 5) for _ in range(18)] for _ in range(7)]
    monkeypatch.setattr(interrater, "np", NoNumpy())
    ratings = [[1, 2, 3, 3, None], [1, 2, 4, 3, 5], [2, 2, 4, 3, 5]]
    for table in (ratings, complete, holes):
        assert interrater.krippendorff_alpha(table, level="interval") == pytest.approx(
            reference_interval_alpha(table), rel=1e-12)
    assert interrater.krippendorff_alpha([[1.5, 1.5], [1.5, None]], level="interval") == 1.0


def reference_interval_alpha(table) -> float:
    """Krippendorff's interval alpha from its definition: every ordered pair within each unit of
    at least two values, weighted by 1 / (m - 1), against every ordered pair of pooled values."""
    units = [[v for v in col if v is not None] for col in zip(*table)]
    units = [u for u in units if len(u) >= 2]
    pooled = [v for u in units for v in u]
    n = len(pooled)
    observed = sum(sum((a - b) ** 2 for i, a in enumerate(u) for j, b in enumerate(u) if i != j) / (len(u) - 1)
                   for u in units)
    expected = sum((a - b) ** 2 for i, a in enumerate(pooled) for j, b in enumerate(pooled) if i != j)
    return 1.0 - (n - 1) * observed / expected


def test_temperature_fit_small_path_same_bits(monkeypatch):
    """A temperature fit on fewer than 8 listed rows (its likelihood in Python, with NumPy's exp
    and log) gives the temperature of the NumPy path, and the same warnings."""
    rnd = random.Random(13)
    for n in [0, 1, 2, 3, 5, 7, 8, 9, 12]:
        for _ in range(30):
            logits = [rnd.gauss(0, 1) * 10 ** rnd.uniform(-2, 3) for _ in range(n)]
            for _ in range(rnd.choice([0, 0, 1, 2])):
                if n:
                    logits[rnd.randrange(n)] = rnd.choice([math.nan, math.inf, -math.inf, -0.0, 800.0, -800.0])
            correct = [rnd.random() < 0.5 for _ in range(n)]
            options = rnd.choice([{}, {"max_iter": 5}, {"t_min": 0.5, "t_max": 3.0}])
            outcomes = []
            for cut in (calibrate._NUMPY_SEQUENTIAL_BELOW, 0):
                monkeypatch.setattr(calibrate, "_NUMPY_SEQUENTIAL_BELOW", cut)
                outcomes.append(fit_outcome(lambda: calibrate.TemperatureCalibrator(**options).fit(logits, correct).T))
            assert outcomes[0] == outcomes[1], (logits, correct, options, outcomes)


def clipped_sigmoid(z: float) -> float:
    """The calibrators' per-score formula as written before the calls were inlined: the stable
    sigmoid, then ``min(max(p, 0.0), 1.0)``; NaN is an error."""
    p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
    if math.isnan(p):
        raise calibrate.InvalidValueError(calibrate._NAN_MESSAGE)
    return min(max(p, 0.0), 1.0)


def test_calibrator_calls_same_values_and_errors():
    rnd = random.Random(21)
    scores = [0.0, -0.0, 1, True, np.float64(0.25), 1e308, -1e308, math.inf, -math.inf, 2**70] + \
        [rnd.gauss(0, 1) * 10 ** rnd.uniform(-3, 3) for _ in range(300)]
    for _ in range(20):
        a, b, t = rnd.uniform(-50, 50), rnd.uniform(-5, 5), rnd.uniform(0.05, 10)
        platt, temperature = calibrate.PlattCalibrator(a=a, b=b), calibrate.TemperatureCalibrator(T=t)
        for s in scores:
            for cal, z in ((platt, a * float(s) + b), (temperature, float(s) / t)):
                try:
                    want = repr(clipped_sigmoid(z))
                except calibrate.InvalidValueError as e:
                    want = str(e)
                try:
                    got = repr(cal(s))
                except calibrate.InvalidValueError as e:
                    got = str(e)
                assert got == want, (cal, s)
    for cal in (calibrate.PlattCalibrator(), calibrate.TemperatureCalibrator(), calibrate.IsotonicCalibrator(),
                calibrate.IsotonicCalibrator().fit([0.2, 0.8], [False, True])):
        with pytest.raises(calibrate.InvalidValueError, match="NaN"):
            cal(math.nan)
        with pytest.raises(calibrate.InvalidTypeError):
            cal("0.5")
    iso = calibrate.IsotonicCalibrator(x=[0.0, 0.5, 1.0], y=[0.0, 0.25, 1.0])
    assert [repr(iso(s)) for s in (-0.0, 0.25, 1, True, 7.0, -3.0)] == ["0.0", "0.125", "1.0", "1.0", "1.0", "0.0"]
    assert repr(calibrate.IsotonicCalibrator()(-0.0)) == "-0.0" and calibrate.IsotonicCalibrator()(1.5) == 1.0


def test_tools_count_checks_and_lazy_agents_keep_results():
    from scorekit import tools

    assert tools.pass_k(10, 9, k=8) == {"n": 10, "c": 9, "k": 8, "pass_at_k": 1.0, "pass_hat_k": 0.2}
    assert tools.pass_k("10", 9.0, k=1)["pass_at_k"] == 0.9
    assert tools.cost_per_success(12.5, 5, attempts=20) == {
        "total_dollars": 12.5, "successes": 5, "cost_per_success": 2.5, "success_rate": 0.25}
    assert tools.cost_per_success(3, 0)["cost_per_success"] == math.inf
    assert tools._agents("cost") is sys.modules["scorekit.agents.cost"]  # imported once, kept
    for bad, error in ((True, tools.InvalidTypeError), (10.9, tools.InvalidValueError), (-1, tools.InvalidValueError)):
        with pytest.raises(error):
            tools.cost_per_success(1.0, bad)
    with pytest.raises(tools.InvalidTypeError):
        tools.pass_k(10, False)


# Fourth round (branch fix/smallend4): Cohen's kappa on one item, and the type scan of the NumPy path.

class NaNLike(float):
    """A float subclass: not a plain label, so it takes the general path."""


def test_kappa_one_item_same_bits_as_counting(monkeypatch):
    nan, other_nan = float("nan"), float("nan")
    labels = ["a", "b", "".join(["a"]), 0, 1, True, False, 1.0, 0.0, -0.0, 2**70, None, nan, other_nan,
              np.str_("a"), np.int64(1), np.float64(0.0), NaNLike(1.0), ("t",)]
    rnd = random.Random(4)
    pairs = [(x, y) for x in labels for y in labels] + [(rnd.choice(labels), rnd.choice(labels)) for _ in range(200)]
    for x, y in pairs:
        small, full = both_paths(monkeypatch, interrater.cohen_kappa, [x], [y])
        assert same_bits(small, full), (x, y, small, full)
    with pytest.raises(interrater.InvalidTypeError):
        interrater.cohen_kappa([[1]], ["a"])


def test_kappa_one_item_counts_nothing(monkeypatch):
    """One item of plain labels is decided by one comparison: no dict of labels is built."""
    class NoDict:
        def __getattr__(self, name):
            raise AssertionError(f"dict.{name} used on one item")
    monkeypatch.setattr(interrater, "dict", NoDict(), raising=False)
    assert interrater.cohen_kappa(["a"], ["a"]) == 1.0
    assert interrater.cohen_kappa(["a"], ["b"]) == 0.0
    assert interrater.cohen_kappa([float("nan")], [float("nan")]) == 0.0


def test_kappa_integer_path_chosen_as_before():
    """``_integer_counts`` takes exactly the lists whose labels are all ints and bools, whichever
    element is not."""
    rnd = random.Random(40)
    others = ["x", 1.0, None, np.int64(3), NaNLike(0.0)]
    for _ in range(300):
        n = rnd.randrange(1, 40)
        a, b = [rnd.choice([0, 1, 2, True]) for _ in range(n)], [rnd.choice([0, 1, 5, False]) for _ in range(n)]
        if rnd.random() < 0.7:
            side = rnd.choice([a, b])
            side[rnd.choice([0, rnd.randrange(n)])] = rnd.choice(others)
        integers = {*map(type, a), *map(type, b)} <= {int, bool}
        assert (interrater._integer_counts(a, b) is not None) == integers, (a, b)


def test_kappa_string_labels_skip_the_type_scan(monkeypatch):
    """On many string labels the NumPy path learns from the first label that they are not
    integers (it scanned the type of every label of both raters)."""
    calls = []

    def counting_type(value):
        calls.append(value)
        return type(value)
    a, b = ["a", "b", "c"] * 200, ["a", "c", "c"] * 200
    expected = interrater.cohen_kappa(a, b)
    monkeypatch.setattr(interrater, "type", counting_type, raising=False)
    assert same_bits(interrater.cohen_kappa(a, b), expected)
    assert len(calls) <= 4


def test_short_platt_fit_uses_no_numpy(monkeypatch):
    """A Platt fit on lists of floats and bools is read and fitted by the compiled kernel in one
    call: no NumPy (the fourth round's Python path called NumPy's ``exp`` on every value of every
    step), the same ``a`` and ``b`` as on arrays, the same warning."""
    rnd = random.Random(49)
    cases = [([0.3], [True]), ([0.3, math.nan], [False, True])] + [platt_rows(rnd, n) for n in (2, 7, 20, 300)]
    expected = [fit_outcome(lambda: calibrate.PlattCalibrator().fit(np.array(x), np.array(c))) for x, c in cases]

    class NoNumpy:
        def __getattr__(self, name):
            raise AssertionError(f"numpy.{name} used in a short Platt fit")
    monkeypatch.setattr(calibrate, "np", NoNumpy())
    for (x, c), want in zip(cases, expected):
        if "overflowed" not in want[0]:
            assert fit_outcome(lambda: calibrate.PlattCalibrator().fit(x, c)) == want


#: Labels whose equality is subtle: bools beside 0 and 1, integral floats, -0.0, NaN objects, NumPy
#: scalars equal to plain labels, an int past int64, a float subclass.
KAPPA_LABELS = st.sampled_from(["a", "b", "", 0, 1, 2, True, False, 1.0, 0.0, -0.0, 2**64, None, math.nan,
                                float("nan"), np.str_("a"), np.int64(1), np.float64(0.0), NaNLike(2.0)])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KAPPA_LABELS, KAPPA_LABELS), min_size=1, max_size=12),
       st.sampled_from([1, 7, 60]))
def test_fuzz_kappa_paths_correctly_rounded(pairs, repeat):
    """Kappa's Python paths (one item, fewer than 512) and the NumPy path give kappa correctly
    rounded (:func:`exact_kappa`), on either side of 512 items (``repeat`` copies of the pairs),
    and the NumPy path counts integers exactly when every label is an ``int`` or ``bool`` within
    int64, whichever label is first."""
    a, b = [x for x, _ in pairs] * repeat, [y for _, y in pairs] * repeat
    with pytest.MonkeyPatch.context() as m:
        small, full = both_paths(m, interrater.cohen_kappa, a, b)
    exact = exact_kappa(a, b)
    assert same_bits(small, exact) and same_bits(full, exact), (a, b, small, full, exact)
    integers = {*map(type, a), *map(type, b)} <= {int, bool} and all(-2**63 <= v < 2**63 for v in a + b)
    assert (interrater._integer_counts(a, b) is not None) == integers, (a, b)


# Sixth round: the compiled readers of plain lists and dicts (`scorekit._core`) against the checked
# Python/NumPy paths they short-cut, with `_kernels.compiled` switched off.

needs_core = pytest.mark.skipif(_kernels.compiled() is None, reason="needs the compiled core")


class FloatKind(float):
    pass


#: Values of every kind the readers must refuse to the full path or read exactly.
ODD_VALUES = [0.0, -0.0, 1.0, 0.5, 1e-300, 5e-324, 1 - 2**-53, math.nan, math.inf, -math.inf, 1.5, -0.1,
              True, False, 0, 1, 2, 2**53 + 1, 2**64, -(10**400), np.float64(0.25), np.float32(0.5),
              np.bool_(True), Fraction(1, 3), FloatKind(0.5), "0.5", None, complex(0.5, 0)]


def outcome_and_warnings(fn, *args, **kwargs):
    """What a call gives: the value's repr (or the error's type and message) and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = repr(fn(*args, **kwargs))
        except Exception as exc:  # compared, not hidden: both paths must raise the same
            value = (type(exc), str(exc))
    return value, [(w.category, str(w.message)) for w in caught]


def compiled_and_not(monkeypatch, fn, *args, **kwargs):
    """``outcome_and_warnings`` with the compiled readers, then without them."""
    fast = outcome_and_warnings(fn, *args, **kwargs)
    with monkeypatch.context() as m:
        m.setattr(_kernels, "compiled", lambda: None)
        full = outcome_and_warnings(fn, *args, **kwargs)
    return fast, full


def mostly_floats(rnd: random.Random, n: int, odd: float = 0.1) -> list:
    return [rnd.choice(ODD_VALUES) if rnd.random() < odd else rnd.random() for _ in range(n)]


def one_odd_each(rnd: random.Random, n: int):
    """Lists of ``n`` floats in [0, 1] with one of the odd values at a random place, each once."""
    for odd in ODD_VALUES:
        values = [rnd.random() for _ in range(n)]
        values[rnd.randrange(n)] = odd
        yield values


@needs_core
@pytest.mark.parametrize("fuse", [calibrate.mean_probability, calibrate.min_probability])
def test_compiled_fusion_same_as_checked(monkeypatch, fuse):
    rnd = random.Random(61)
    for n in [0, 1, 2, 3, 7, 20, 63, 2000]:
        for odd in [0.0, 0.02, 0.3]:
            for _ in range(12):
                probs = {f"s{i}": v for i, v in enumerate(mostly_floats(rnd, n, odd))}
                fast, full = compiled_and_not(monkeypatch, fuse, probs)
                assert fast == full, (probs, fast, full)
    for n in [1, 2, 20]:
        for values in one_odd_each(rnd, n):
            probs = {f"s{i}": v for i, v in enumerate(values)}
            fast, full = compiled_and_not(monkeypatch, fuse, probs)
            assert fast == full, (probs, fast, full)
    for other in [[0.5], (0.5,), {0.5: 0.5}.keys(), {"a": 0.5}.items()]:
        assert compiled_and_not(monkeypatch, fuse, other)[0] == compiled_and_not(monkeypatch, fuse, other)[1]


@needs_core
def test_compiled_fusion_reads_plain_dicts_without_the_checks(monkeypatch):
    """A dict of floats in [0, 1] is fused by the compiled pass alone (the left-to-right sum:
    ``sum`` of these three is not ``math.fsum``'s), anything else by the checks."""
    def checked(*args):
        raise RuntimeError("checked")

    probs = {"a": 0.1, "b": 0.2, "c": 0.3}
    monkeypatch.setattr(calibrate, "_probabilities_of", checked)
    assert calibrate.mean_probability(probs) == (0.1 + 0.2 + 0.3) / 3 != math.fsum(probs.values()) / 3
    assert calibrate.min_probability({"a": 0.0, "b": -0.0}) is not None
    assert repr(calibrate.min_probability({"a": -0.0, "b": 0.0})) == "-0.0"
    assert repr(calibrate.mean_probability({"a": -0.0})) == "0.0"
    with pytest.raises(RuntimeError, match="checked"):
        calibrate.mean_probability({"a": 0.5, "b": 1})


def quantile_alphas():
    return [0.0, -0.0, 0.05, 0.1, 0.5, 1.0, 1.5, -0.1, math.nan, True, 1, np.float64(0.1), "0.1", None]


@needs_core
def test_compiled_conformal_quantile_same_as_full(monkeypatch):
    rnd = random.Random(62)
    for n in [0, 1, 2, 9, 10, 20, decide._SMALL_SET - 1, decide._SMALL_SET, 300, 3000]:
        for alpha in quantile_alphas():
            for odd in [0.0, 0.05, 0.5]:
                scores = mostly_floats(rnd, n, odd)
                for rows in [scores, tuple(scores)]:
                    fast, full = compiled_and_not(monkeypatch, decide.split_conformal_quantile, rows, alpha)
                    assert fast == full, (rows, alpha, fast, full)
    for n in [1, 2, 20]:
        for scores in one_odd_each(rnd, n):
            fast, full = compiled_and_not(monkeypatch, decide.split_conformal_quantile, scores, 0.0)
            assert fast == full, (scores, fast, full)


def gate_rows(rnd: random.Random, n: int, odd: float) -> tuple[list, list]:
    probs = [rnd.choice([0.0, -0.0, 1.0, 0.5, math.nan, math.inf, -math.inf]) if rnd.random() < 0.2
             else rnd.random() for _ in range(n)]
    probs = [rnd.choice(ODD_VALUES) if rnd.random() < odd else p for p in probs]
    correct = [rnd.random() < 0.7 for _ in range(n)]
    correct = [rnd.choice([1, 0, 2, np.bool_(True), None, 0.5]) if rnd.random() < odd else c for c in correct]
    return probs, correct


def conformal_fit_outcome(alpha, probs, correct):
    gate = decide.ConformalGate(alpha=alpha).fit(probs, correct)
    return gate.q, list(gate._cal), len(gate._cal), [gate.p_value(p) for p in (0.0, 0.3, 0.9, 1.0)]


@needs_core
def test_compiled_conformal_fit_same_as_full(monkeypatch):
    rnd = random.Random(63)
    for n in [0, 1, 2, 5, 9, 10, 20, decide._SMALL_SET - 1, decide._SMALL_SET, 200]:
        for alpha in quantile_alphas():
            for odd in [0.0, 0.05, 0.4]:
                probs, correct = gate_rows(rnd, n, odd)
                for rows in [(probs, correct), (tuple(probs), correct), (probs, correct[:-1] + [True, False])]:
                    fast, full = compiled_and_not(monkeypatch, conformal_fit_outcome, alpha, *rows)
                    assert fast == full, (alpha, rows, fast, full)
    for n in [1, 2, 20]:
        for probs in one_odd_each(rnd, n):
            for correct in [[True] * n, [rnd.random() < 0.5 for _ in range(n)]]:
                fast, full = compiled_and_not(monkeypatch, conformal_fit_outcome, 0.5, probs, correct)
                assert fast == full, (probs, correct, fast, full)
                odd_correct = correct[:]
                odd_correct[rnd.randrange(n)] = rnd.choice(probs)
                fast, full = compiled_and_not(monkeypatch, conformal_fit_outcome, 0.5, correct, odd_correct)
                assert fast == full, (correct, odd_correct, fast, full)


@needs_core
def test_short_conformal_fit_builds_no_array(monkeypatch):
    """A short fit of plain lists is read by the compiled core alone: no NumPy array is made."""
    monkeypatch.setattr(decide, "_floats", lambda *a: pytest.fail("read the rows with NumPy"))
    gate = decide.ConformalGate(alpha=0.2).fit([0.9, 0.8, 0.7, 0.6, 0.55], [True] * 5)
    assert gate.q == 0.44999999999999996 and list(gate._cal) == [0.09999999999999998, 0.19999999999999996,
                                                              0.30000000000000004, 0.4, 0.44999999999999996]
    with pytest.warns(decide.SmallCalibrationWarning, match="0 correct calibration item"):
        assert decide.ConformalGate(alpha=0.1).fit([0.3], [False])._cal == []


@needs_core
@pytest.mark.parametrize("fn", [calibrate.expected_calibration_error, calibrate.reliability_curve])
def test_compiled_bins_same_as_full(monkeypatch, fn):
    rnd = random.Random(64)
    for n in [0, 1, 2, 7, 20, calibrate._SMALL_ROWS - 1, calibrate._SMALL_ROWS, 500]:
        for n_bins in [1, 3, 10, 1000, 2**40, 2**53, 2**53 + 1, 0, True, 2.0]:
            for odd in [0.0, 0.3]:
                probs, correct = gate_rows(rnd, n, odd)
                for rows in [(probs, correct), (tuple(probs), tuple(correct)), (probs, correct + [True])]:
                    fast, full = compiled_and_not(monkeypatch, fn, *rows, n_bins=n_bins)
                    assert fast == full, (rows, n_bins, fast, full)
                    with monkeypatch.context() as m:
                        m.setattr(calibrate, "_SMALL_ROWS", 0)  # and the NumPy path
                        assert fast == compiled_and_not(monkeypatch, fn, *rows, n_bins=n_bins)[1]
    for n in [1, 2, 20]:
        for probs in one_odd_each(rnd, n):
            correct = [rnd.random() < 0.5 for _ in range(n)]
            fast, full = compiled_and_not(monkeypatch, fn, probs, correct, n_bins=7)
            assert fast == full, (probs, correct, fast, full)


def test_small_set_warnings_cached_by_exact_key():
    """The small-set warnings are formatted once per key; ``0.0`` and ``-0.0`` keep their texts."""
    texts = []
    for target in [0.0, -0.0, 0.0, 0.1, 0.1]:
        with pytest.warns(decide.SmallCalibrationWarning) as caught:
            decide.RiskControlGate(target=target).fit([0.5], [False])
        texts.append(str(caught[0].message))
    assert "target=0," in texts[0] and "target=-0," in texts[1] and texts[0] == texts[2] and texts[3] == texts[4]
    assert texts[3] == decide._risk_too_small_message.__wrapped__(1, 1.0, 0.1)
    for n, alpha in [(0, 0.1), (3, 0.1), (3, 0.05), (0, 1e-300)]:
        expected = f"ConformalGate.fit: {decide._too_small_message(n, alpha)}"
        for _ in range(2):
            with pytest.warns(decide.SmallCalibrationWarning) as caught:
                decide.ConformalGate(alpha=alpha).fit([0.9] * n + [0.1], [True] * n + [False])
            assert str(caught[0].message) == expected


@needs_core
@pytest.mark.parametrize("fn", ["geo_mean", "length_normalized", "min_prob", "mean_prob"])
def test_compiled_logprob_check_same_as_python(monkeypatch, fn):
    """The compiled check that a list (or tuple) holds only floats lets the same lists through as
    the Python one: same bits, same errors."""
    from scorekit.qe import signals
    aggregate = getattr(signals, fn)
    rnd = random.Random(65)
    for n in [0, 1, 2, 20, 300]:
        for odd in [0.0, 0.05, 0.5]:
            logps = [rnd.choice(LOGP_POOL + ODD_VALUES) if rnd.random() < odd else -rnd.expovariate(3.0) for _ in range(n)]
            for rows in [logps, tuple(logps)]:
                fast, full = compiled_and_not(monkeypatch, aggregate, rows)
                assert fast == full, (rows, fast, full)
    for n in [1, 2, 20]:
        for logps in one_odd_each(rnd, n):
            fast, full = compiled_and_not(monkeypatch, aggregate, [-x for x in logps if type(x) is float] + logps)
            assert fast == full, (logps, fast, full)


@pytest.mark.parametrize("check", ["benford_findings", "zscore_anomaly_findings"])
def test_short_float_columns_answered_unread_others_still_read(check):
    """Fewer floats than ``min_n`` give nothing at once; other values are still read with
    ``float()`` (which may fail or tell), as before."""
    from scorekit import validate
    fn = getattr(validate, check)
    reads = []

    class Told:
        def __float__(self):
            reads.append(1)
            return 5.0

    assert fn([1.0, math.nan, -0.0], min_n=4) == [] and fn((), min_n=1) == []
    assert fn([1.0, Told(), 2.0], min_n=4) == [] and reads == [1]

    class Refuses:
        def __float__(self):
            raise RuntimeError("refused")

    with pytest.raises(RuntimeError, match="refused"):
        fn([1.0, Refuses()], min_n=30)


# Fifth round (branch fix/smallend-agents): the agents' scalar calls check plain ints and floats in
# one test and take the full checks for anything else. Each is compared with the code it replaced
# (written out below) on the same inputs: the same value by repr, or the same exception and message.

rel = importlib.import_module("scorekit.agents.reliability")  # (the package's reliability() hides it)

def outcome(fn, *args, **kwargs) -> str:
    """``repr`` of what ``fn`` returns, or the type and message of what it raises."""
    try:
        return repr(fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return f"{type(e).__name__}: {e}"


class Int(int):
    """An int subclass: not a plain int, so it takes the full checks."""


#: Counts and numbers that are unusual in some way, beside plain small ints.
ODD_NUMBERS = [0, 1, 2, 3, 5, -1, -2, True, False, 2**53 + 1, 2**70, rel.MAX_TRIALS,
               rel.MAX_TRIALS + 1, 1.0, 2.5, -0.0, 0.0, math.nan, math.inf, -math.inf, "3", None,
               np.int64(4), np.float64(2.0), Int(3), Fraction(3, 1)]


def checked_pass_at_k(n, c, k):
    n, c, k = rel._counts(n, c, k)  # the code before the one-test path
    if n - c < k:
        return 1.0
    return 1 - math.comb(n - c, k) / math.comb(n, k)


def checked_pass_hat_k(n, c, k):
    n, c, k = rel._counts(n, c, k)
    if c < k:
        return 0.0
    return math.comb(c, k) / math.comb(n, k)


def test_pass_k_one_test_path_same_values_and_errors():
    rnd = random.Random(55)
    cases = [(n, c, k) for n in ODD_NUMBERS for c in ODD_NUMBERS[:12] for k in ODD_NUMBERS[:8]]
    for _ in range(20000):
        n = rnd.choice([rnd.randrange(0, 40), rnd.randrange(0, 3000), rel.MAX_TRIALS - rnd.randrange(3)])
        cases.append((n, rnd.randrange(-2, n + 3), rnd.randrange(-1, min(n, 60) + 3)))
    for n, c, k in cases:
        assert outcome(rel.pass_at_k, n=n, c=c, k=k) == outcome(checked_pass_at_k, n, c, k), (n, c, k)
        assert outcome(rel.pass_hat_k, n=n, c=c, k=k) == outcome(checked_pass_hat_k, n, c, k), (n, c, k)


def clamped_wilson(successes, n, z=rel.DEFAULT_Z):
    if n <= 0:  # the code before the clamps without min/max
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: successes must be in [0, n]; got successes={successes}, n={n}")
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    margin = (z / denom) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (max(0.0, center - margin), min(1.0, center + margin))


def clamped_newcombe(sa, na, sb, nb, z=rel.DEFAULT_Z):
    if na <= 0 or nb <= 0:
        return (-1.0, 1.0)
    l_a, u_a = clamped_wilson(sa, na, z)
    l_b, u_b = clamped_wilson(sb, nb, z)
    p_a, p_b = sa / na, sb / nb
    delta = p_a - p_b
    lower = delta - math.sqrt((p_a - l_a) ** 2 + (u_b - p_b) ** 2)
    upper = delta + math.sqrt((u_a - p_a) ** 2 + (p_b - l_b) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


def test_wilson_and_newcombe_clamps_same_values_and_errors():
    """The bounds clamped by comparisons give ``max``/``min``'s values: ``-0.0``, NaN (from a NaN or
    infinite ``z``), bounds past 0 and 1, and the errors."""
    rnd = random.Random(56)
    odd_z = [0.0, -0.0, 1e-300, 1e300, -1.96, math.nan, math.inf, -math.inf]
    for _ in range(20000):
        n = rnd.choice([rnd.randrange(-1, 30), rnd.uniform(0, 30), rnd.choice(ODD_NUMBERS[:20])])
        s = rnd.choice([rnd.randrange(-1, 32), rnd.uniform(-1, 31), rnd.choice(ODD_NUMBERS[:20])])
        z = rnd.choice(odd_z) if rnd.random() < 0.2 else rnd.uniform(0, 4)
        assert outcome(rel.wilson_interval, s, n, z=z) == outcome(clamped_wilson, s, n, z), (s, n, z)
        n2, s2 = rnd.randrange(0, 30), rnd.randrange(-1, 31)
        assert (outcome(rel.newcombe_difference, s, n, s2, n2, z=z)
                == outcome(clamped_newcombe, s, n, s2, n2, z)), (s, n, s2, n2, z)
    assert rel.wilson_interval(0, 10) == clamped_wilson(0, 10) and rel.wilson_interval(0, 10)[0] == 0.0


def checked_cost_of_pass(total_cost, n_success):
    # the code before the one-test path
    if type(total_cost) not in (float, int) and (isinstance(total_cost, bool)
                                                 or not isinstance(total_cost, numbers.Real)):
        raise cost.InvalidTypeError(f"cost_of_pass: total_cost must be a number, got {total_cost!r}")
    if not (math.isfinite(total_cost) and total_cost >= 0):
        raise cost.InvalidValueError(f"cost_of_pass: total_cost must be finite and >= 0, got {total_cost!r}")
    if type(n_success) is not int and (isinstance(n_success, bool) or not isinstance(n_success, numbers.Integral)):
        raise cost.InvalidTypeError(f"cost_of_pass: n_success must be an integer count, got {n_success!r}")
    if n_success < 0:
        raise cost.InvalidValueError(f"cost_of_pass: n_success must be >= 0, got {n_success}")
    if n_success == 0:
        return math.inf
    try:
        return total_cost / n_success
    except OverflowError:
        raise cost.InvalidValueError("cost_of_pass: n_success is beyond the float range (an integer of "
                                     f"{n_success.bit_length()} bits)") from None


def test_cost_of_pass_one_test_path_same_values_and_errors():
    rnd = random.Random(57)
    spends = ODD_NUMBERS + [1e308, 5e-324, 10**400, Fraction(1, 3), np.float32(0.5)]
    counts = ODD_NUMBERS + [2**1100, -(2**1100)]
    cases = [(t, s) for t in spends for s in counts]
    cases += [(rnd.uniform(0, 1e6) * rnd.choice([1, -1, 1e-300, 1e300]), rnd.randrange(-3, 100)) for _ in range(5000)]
    for t, s in cases:
        assert outcome(cost.cost_of_pass, t, s) == outcome(checked_cost_of_pass, t, s), (t, s)


#: Token counts of every kind the full checks tell apart, plain counts most often.
ODD_TOKENS = [0, 0, 0, 1, 7, 1200, 2**53 + 1, 10**400, -1, True, False, 2.5, -0.0, 0.0, math.nan, math.inf,
              "3", None, np.int64(5), Int(4), Fraction(1, 2)]


def test_dollars_one_test_path_same_values_and_errors():
    """``dollars`` against its full path ``_checked_dollars`` (the code before, rates read from the
    properties), on counts of every kind, plain and integer rates, names and wrong prices."""
    rnd = random.Random(58)
    prices = [cost.per_million(2.5, 10.0), cost.per_million(2.5, 10.0, cached_input=1.25, reasoning=40.0),
              cost.ModelPrice(input=1, output=3), cost.ModelPrice(input=1e-300, output=1e300, cached_input=0.0),
              cost.ModelPrice(), "m", "unknown", 3.0, None]
    table = {"m": prices[1]}
    for _ in range(20000):
        counts = [rnd.choice(ODD_TOKENS) if rnd.random() < 0.3 else rnd.randrange(0, 5000) for _ in range(4)]
        c = Cost(*counts) if rnd.random() < 0.95 else rnd.choice([None, "cost", (1, 2)])
        price, batch = rnd.choice(prices), rnd.random() < 0.3
        assert (outcome(cost.dollars, c, price, prices=table, batch=batch)
                == outcome(cost._checked_dollars, c, price, table, batch)), (c, price, batch)
    for p in prices[:5]:  # the rates worked out once are the properties' values, when all are floats
        rates = (p.input, p.output, cost.DEFAULT_CACHE_DISCOUNT * p.input if p.cached_input is None else p.cached_input,
                 p.output if p.reasoning is None else p.reasoning)
        assert p._float_rates == (rates if p is not prices[2] else None)
    bare = object.__new__(cost.ModelPrice)  # made without __post_init__ (as an older pickle): the full path
    vars(bare).update(input=1e-6, output=2e-6, cached_input=None, reasoning=None)
    assert bare._float_rates is None
    assert cost.dollars(Cost(10, 20, 3), bare) == cost._checked_dollars(Cost(10, 20, 3), bare, None, False)


def test_judge_validation_reads_lists_as_before():
    """Two lists skip ``as_labels`` and the first item labelled by both ends the search: the same
    result as tuples and arrays, and the same error when no item has both labels."""
    from scorekit.agents import judge_validation
    rnd = random.Random(59)
    labels = ["a", "b", None, math.nan, 1, 2.0, True]
    for n in [1, 2, 3, 20, 200]:
        for _ in range(40):
            a, b = [rnd.choice(labels) for _ in range(n)], [rnd.choice(labels) for _ in range(n)]
            if rnd.random() < 0.3:  # mostly missing: often no item labelled by both
                a = [None if rnd.random() < 0.9 else x for x in a]
            want = outcome(judge_validation, tuple(a), np.array(b, dtype=object))
            assert outcome(judge_validation, a, b) == want, (a, b)
            none_by_both = all(interrater.is_missing(x) or interrater.is_missing(y) for x, y in zip(a, b))
            assert want.startswith("InvalidValueError: judge_validation: none of") == none_by_both, (a, b)
    with pytest.raises(interrater.InvalidValueError, match="same items"):
        judge_validation(["a"], ["a", "b"])


#: Argument values: plain ones (their own keys without a canonicalizer) and values ``norm_value``
#: changes or refuses (lists and tuples as tuples, NumPy scalars and Decimals by value, dicts).
ARG_VALUES = ["Cat ", "cat", 1, 1.0, True, -0.0, math.nan, None, b"x", Fraction(1, 2), 2**70,
              [1, "a"], ("a",), {"k": [1]}, np.int64(1), np.float64(0.5), Decimal("1.0"), Int(1)]


def test_plain_arguments_are_their_own_normal_form():
    """Without a canonicalizer, calls whose argument values are all plain keep their dicts (each
    value is its own key); otherwise every call's arguments are normalised: the same names, order
    and values as normalising each value, with or without a canonicalizer."""
    from scorekit.agents import toolcalls
    rnd = random.Random(60)
    plain = {str, int, float, bool, type(None), bytes, Fraction}
    for _ in range(3000):
        calls = [("t", {f"a{i}": rnd.choice(ARG_VALUES[:10] if rnd.random() < 0.7 else ARG_VALUES)
                        for i in range(rnd.randrange(0, 4))}) for _ in range(rnd.randrange(0, 4))]
        for c in (None, str.casefold):
            got = toolcalls._normalised(calls, c, "pred")
            want = [{k: toolcalls.norm_value(v, c) for k, v in args.items()} for _, args in calls]
            assert repr(got) == repr(want), calls  # the same names in the same order, the same values
            kept = c is None and all(type(v) in plain for _, args in calls for v in args.values())
            assert all(g is args for g, (_, args) in zip(got, calls)) == kept or not calls, calls
    loop: list = []
    loop.append(loop)
    with pytest.raises(interrater.InvalidValueError, match=r"^pred\.steps\[1\]\.args\['q'\] contains itself"):
        toolcalls._normalised([("s", {"q": 1}), ("s", {"q": loop})], None, "pred")


def test_match_calls_unpaired_as_before():
    """The pairs by name when no name repeats, and the calls left unpaired, against the sets of
    paired indices the code used before, on random calls with repeated and distinct tool names."""
    from scorekit.agents import match_calls, toolcalls
    rnd = random.Random(61)
    for _ in range(2000):
        calls = [[(rnd.choice("abcd"), {"q": rnd.randrange(3)}) for _ in range(rnd.randrange(0, 5))] for _ in range(2)]
        pairs, up, ug = match_calls(*calls)
        p_calls, g_calls, pn, gn = toolcalls._read(*calls, None)
        index_pairs = toolcalls._assign(p_calls, g_calls, pn, gn)
        used_p, used_g = {i for i, _ in index_pairs}, {j for _, j in index_pairs}
        names = [[t for t, _ in side] for side in calls]
        if all(len(set(side)) == len(side) for side in names):  # no name repeats: paired by name
            assert index_pairs == [(i, names[1].index(t)) for i, t in enumerate(names[0]) if t in names[1]]
        for one, other, flip in ((0, 1, False), (1, 0, True)):
            if len(set(names[one])) == len(names[one]):  # each call on this side takes the first exact match
                want = sorted((k, min((m for m, t in enumerate(names[other]) if t == name),  # of its name, else
                                      key=lambda m: (calls[other][m][1] != calls[one][k][1], m)))  # the first
                              for k, name in enumerate(names[one]) if name in names[other])
                assert sorted((j, i) if flip else (i, j) for i, j in index_pairs) == want
        assert pairs == [(p_calls[i], g_calls[j]) for i, j in index_pairs]
        assert up == [c for i, c in enumerate(p_calls) if i not in used_p]
        assert ug == [c for j, c in enumerate(g_calls) if j not in used_g]


def test_episode_dollars_same_as_price_of_then_dollars():
    """The model's rate looked up in a dict without calling ``price_of``: the same dollars, and
    ``price_of``'s error for an unknown model, for other mappings and without ``prices``."""
    from types import MappingProxyType

    from scorekit.agents.base import Episode, RunProvenance
    rnd = random.Random(62)
    table = {"m": cost.per_million(2.5, 10.0), "": cost.per_million(1.0, 1.0), "n": cost.ModelPrice(input=1, output=2)}
    tables = [table, MappingProxyType(table), {}, None, {"other": table["m"]}]
    for _ in range(3000):
        run = rnd.choice([None, RunProvenance(model=rnd.choice(["m", "n", "", "x"]))])
        episode = Episode(cost=rnd.choice([None, Cost(rnd.randrange(0, 9000), rnd.randrange(0, 900), rnd.randrange(0, 3))]),
                          run=run)
        prices, batch = rnd.choice(tables), rnd.random() < 0.3
        given_price = rnd.choice([None, None, table["m"]])

        def before():
            if episode.cost is None:
                return 0.0
            p = given_price
            if p is None:
                p = cost.price_of((episode.run.model if episode.run else "") or "", prices=prices)
            return cost._checked_dollars(episode.cost, p, None, batch)
        got = outcome(cost.episode_dollars, episode, prices=prices, price=given_price, batch=batch)
        assert got == outcome(before), (episode, prices, given_price, batch)


#: Counts of every kind: small and huge ints, bools, floats (NaN, ±inf, -0.0), an int subclass.
ANY_COUNT = st.one_of(st.integers(-3, 70), st.integers(-2**80, 2**80), st.integers(rel.MAX_TRIALS - 2, rel.MAX_TRIALS + 2),
                      st.booleans(), st.floats(allow_nan=True), st.integers(0, 9).map(Int), st.none())


@settings(max_examples=500, deadline=None)
@given(ANY_COUNT, ANY_COUNT, ANY_COUNT,
       st.one_of(st.floats(-1e6, 1e6), st.sampled_from([math.inf, -math.inf, math.nan, -0.0, 1e308]), ANY_COUNT))
def test_fuzz_scalar_calls_same_as_their_full_checks(n, c, k, spend):
    """pass@k, pass^k on any three counts and cost_of_pass on any spend and count: the value or
    the error of the code before."""
    assert outcome(rel.pass_at_k, n=n, c=c, k=k) == outcome(checked_pass_at_k, n, c, k)
    assert outcome(rel.pass_hat_k, n=n, c=c, k=k) == outcome(checked_pass_hat_k, n, c, k)
    assert outcome(cost.cost_of_pass, spend, c) == outcome(checked_cost_of_pass, spend, c)
