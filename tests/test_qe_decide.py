"""``scorekit.qe.decide``: ek's docstring examples and golden vectors, hand-computed cases, a
differential test against ``ek`` on thousands of random calibration sets, properties, the coverage
and risk guarantees checked by simulation, the small-calibration warnings, bad input, the
registry and the crepes-backed gate."""

from __future__ import annotations

import doctest
import math
import random
import sys
import warnings

import ek.qe.decide as ek_decide
import numpy as np
import pytest
from doc_examples import run_python_blocks
from ek_doctests import run_ek_doctests
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit.qe.decide as decide
from scorekit import registry
from scorekit.base import Decision, DecisionPolicy
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.qe.decide import (
    DEFAULT_ALPHA,
    DEFAULT_RISK_TARGET,
    ConformalGate,
    CostSensitiveGate,
    GroupConformalGate,
    RiskControlGate,
    SmallCalibrationWarning,
    crepes_mondrian_gate,
    risk_coverage_curve,
    split_conformal_quantile,
)

A, F, B = Decision.ACCEPT, Decision.FLAG, Decision.BLOCK

#: The spec's calibration set: ten correct items and two wrong ones.
PROBS12 = [.55, .6, .65, .7, .75, .8, .85, .9, .95, .99, .3, .4]
CORRECT12 = [True] * 10 + [False] * 2


@pytest.fixture(autouse=True)
def _quiet_small_sets():
    """The warnings are checked on purpose below; elsewhere small sets are the point of a case."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallCalibrationWarning)
        yield


# ---------------------------------------------------------------------------------- docs and doctests


def test_module_doctests():
    result = doctest.testmod(decide, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 15


def test_ek_docstring_examples_run_on_scorekit():
    results = run_ek_doctests(ek_decide, decide)
    assert sum(r.attempted for r in results.values()) == 4  # the module example: four statements
    assert not {name: r.failed for name, r in results.items() if r.failed}


def test_docs_page_runs():
    assert run_python_blocks("qe-decide.md", min_blocks=6) > 30


def test_constants_and_protocol():
    assert (DEFAULT_ALPHA, DEFAULT_RISK_TARGET) == (0.1, 0.05)
    for gate in (CostSensitiveGate(), ConformalGate(), GroupConformalGate(), RiskControlGate()):
        assert isinstance(gate, DecisionPolicy)
    assert [f for f in ConformalGate.__dataclass_fields__] == ["alpha", "nonconformity", "q", "_cal"]
    assert [f for f in RiskControlGate.__dataclass_fields__] == ["target", "loss", "loss_bound", "lam"]


def test_registry_policies():
    assert registry.get("policies", "cost_sensitive") is CostSensitiveGate
    assert registry.get("policies", "conformal") is ConformalGate
    assert registry.get("policies", "risk_control") is RiskControlGate
    assert registry.get("policies", "group_conformal") is GroupConformalGate


# ---------------------------------------------------------------------------------- spec vectors (§10)


@pytest.mark.parametrize("rho, tau", [(0, 0.0), (0.25, 0.2), (1, 0.5), (9, 0.9), (-1, 0.0), (math.inf, 1.0)])
def test_cost_sensitive_tau(rho, tau):
    assert CostSensitiveGate(rho=rho).tau == tau


def test_cost_sensitive_vectors():
    assert CostSensitiveGate(accept_threshold=1.5).tau == 1.0
    assert CostSensitiveGate(accept_threshold=-0.5).tau == 0.0
    nine = CostSensitiveGate(rho=9.0)
    assert [nine(p) for p in (0.95, 0.9, 0.8999999, 0.5)] == [A, A, F, F]
    assert [CostSensitiveGate(rho=1.0)(p) for p in (0.0, 0.6)] == [F, A]
    banded = CostSensitiveGate(rho=9, block_threshold=0.1)
    assert [banded(p) for p in (0.05, 0.1, 0.11)] == [B, B, F]
    assert CostSensitiveGate(rho=1, block_threshold=0.95)(0.9) is B  # block is checked first
    assert CostSensitiveGate(rho=math.inf)(1.0) is A and CostSensitiveGate(rho=math.inf)(0.999) is F
    with pytest.raises(ValueError, match="finite"):
        CostSensitiveGate()(float("nan"))


def test_split_conformal_quantile_vectors():
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert split_conformal_quantile(scores, 0.1) == 1.0
    assert split_conformal_quantile(scores, 0.2) == 0.9
    assert split_conformal_quantile(scores, 0) == math.inf
    assert split_conformal_quantile(scores, 1) == -math.inf
    assert split_conformal_quantile([0.5], 0.1) == math.inf
    assert split_conformal_quantile([], 0.1) == math.inf
    assert split_conformal_quantile([], 1.0) == math.inf  # n == 0 wins over alpha == 1
    assert split_conformal_quantile(list(reversed(scores)), 0.2) == 0.9  # unsorted input
    assert split_conformal_quantile([0.3] * 8 + [0.7, -math.inf], 0.1) == 0.7  # the 9th of 10
    for alpha in (-0.1, 1.2, 2.0, float("nan")):
        with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
            split_conformal_quantile(scores, alpha)


def test_minimum_size_for_a_finite_quantile():
    assert split_conformal_quantile([0.5] * 8, 0.1) == math.inf
    assert split_conformal_quantile([0.5] * 9, 0.1) == 0.5
    assert decide._smallest_calibration_set(0.1) == 9
    assert decide._smallest_calibration_set(0.05) == 19
    assert decide._smallest_calibration_set(0.2) == 4
    for alpha in (0.01, 0.03, 0.17, 0.5, 0.9, 1.0):
        need = decide._smallest_calibration_set(alpha)
        assert split_conformal_quantile([0.5] * need, alpha) < math.inf
        assert need == 1 or split_conformal_quantile([0.5] * (need - 1), alpha) == math.inf


def test_conformal_gate_vectors():
    unfit = ConformalGate()
    assert unfit.p_value(0.3) == 1.0 and unfit(0.01) is A
    gate = ConformalGate().fit([.5, .6, .7, .8, .9], [True] * 5)
    assert gate._cal == pytest.approx([.1, .2, .3, .4, .5]) and gate.q == math.inf
    assert gate.p_value(0.7) == 4 / 6 and gate.p_value(0.95) == 1.0 and gate.p_value(0.4) == 1 / 6
    tight = ConformalGate(alpha=0.1).fit(PROBS12, CORRECT12)
    assert tight.q == 0.44999999999999996 and tight(0.4) is F
    loose = ConformalGate(alpha=0.2).fit(PROBS12, CORRECT12)
    assert loose.q == 0.4 and loose(0.6) is A and loose(0.59) is F
    assert loose.p_value(0.6) == 3 / 11
    with_nan = ConformalGate(alpha=0.2).fit(PROBS12 + [float("nan"), math.inf], CORRECT12 + [True, True])
    assert with_nan.q == loose.q and with_nan._cal == loose._cal


def test_group_conformal_vectors():
    assert GroupConformalGate()(0.99) is F  # unfit flags (the unfit ConformalGate accepts)
    b = [.50, .52, .54, .56, .58, .60, .62, .64, .66, .68]
    gate = GroupConformalGate(alpha=0.2).fit(PROBS12 + b, CORRECT12 + [True] * 10, groups=["a"] * 12 + ["b"] * 10)
    assert gate.by_group["a"].q == 0.4 and gate.by_group["b"].q == pytest.approx(0.48)
    assert gate.pooled.q == 0.44999999999999996
    assert gate(0.6, group="a") is A and gate(0.53, group="a") is F and gate(0.53, group="b") is A
    assert gate(0.53, group="unseen") is F and gate(0.56, group="unseen") is A
    assert gate(0.56) is A  # None -> pooled


def test_risk_control_vectors():
    assert RiskControlGate().lam == 1.0 and RiskControlGate()(0.99) is F and RiskControlGate()(1.0) is A
    # an empty fit accepts nothing (the reference: lam = 1.0, accepting p = 1.0 on no evidence; issue 30)
    with pytest.warns(SmallCalibrationWarning):
        empty = RiskControlGate().fit([], [])
    assert empty.lam == 1.000000001 and empty(1.0) is F
    with pytest.warns(SmallCalibrationWarning):
        assert RiskControlGate().fit([math.nan], [False])(1.0) is F       # no finite row left
    assert RiskControlGate(target=1.0).fit([], []).lam == 0.0              # loss_bound <= target: no data needed
    assert RiskControlGate().fit([.9, .8], [True, True]).lam == 1.000000001
    probs, correct = [.2, .4, .6, .8, .9], [False, False, True, True, True]
    assert RiskControlGate(target=0.3).fit(probs, correct).lam == 0.6
    lams = [RiskControlGate(target=0.3, loss_bound=b).fit(probs, correct).lam for b in (1.0, 1.2, 1.5, 2.0)]
    assert lams == sorted(lams)  # a larger loss bound never lowers lam


def test_risk_control_by_hand():
    # n = 5 (two wrong at .2 and .4): lam = 0 -> risk 2/5, bound (2 + 1)/6 = .5; lam = .4 -> (1 + 1)/6;
    # lam = .6 -> 1/6. Targets between those values pick the candidates in turn.
    probs, correct = [.2, .4, .6, .8, .9], [False, False, True, True, True]
    assert [RiskControlGate(target=t).fit(probs, correct).lam for t in (0.5, 0.34, 1 / 6, 0.16)] == [
        0.0, 0.4, 0.6, 1.000000001]
    # A custom loss: a wrong item costs 0.5 (B = 0.5): lam = .4 -> (0.5 + 0.5)/6 = 1/6.
    half = RiskControlGate(target=1 / 6, loss=lambda c: 0.0 if c else 0.5, loss_bound=0.5)
    assert half.fit(probs, correct).lam == 0.4


def test_risk_coverage_curve_vectors():
    rows = risk_coverage_curve([.2, .4, .6, .8, .9], [False, False, True, True, True])
    assert [r["threshold"] for r in rows] == [.2, .4, .6, .8, .9]
    assert [r["coverage"] for r in rows] == [1.0, 0.8, 0.6, 0.4, 0.2]
    assert [r["selective_risk"] for r in rows] == [0.4, 0.25, 0.0, 0.0, 0.0]
    custom = risk_coverage_curve([.2, .4, .6, .8, .9], [False, True, False, True, True],
                                 thresholds=[0.5, 0.0, 0.95, 0.5])
    assert custom == [{"threshold": 0.0, "coverage": 1.0, "selective_risk": 0.4},
                      {"threshold": 0.5, "coverage": 0.6, "selective_risk": 0.3333333333333333},
                      {"threshold": 0.95, "coverage": 0.0, "selective_risk": 0.0}]
    assert risk_coverage_curve([], []) == []
    assert risk_coverage_curve([float("nan")], [True]) == []


# ---------------------------------------------------------------------------------- differential vs ek


def _random_set(rnd: random.Random):
    """A random calibration set: ties (probabilities on a grid), all correct, all wrong, n = 0 or 1."""
    n = rnd.choice([0, 1, 1, 2, 3, 5, 8, 9, 10, 19, 20, 21, 40, 60])
    grid = rnd.choice([None, 2, 5, 20, 100])
    probs = [rnd.randrange(grid + 1) / grid if grid else rnd.random() for _ in range(n)]
    regime = rnd.random()
    if regime < 0.15:
        correct = [True] * n
    elif regime < 0.25:
        correct = [False] * n
    else:
        correct = [rnd.random() < p for p in probs]
    return probs, correct


ALPHAS = [0.0, 1.0, 1e-12, 1 - 1e-12, 0.05, 0.1, 0.2, 0.5]
TARGETS = [0.0, 0.01, 0.05, 0.1, 0.3, 0.5, 1.0, 2.0]
NONCONFORMITIES = [lambda p: 1 - p, lambda p: -math.log(p) if p > 0 else math.inf, lambda p: round(1 - p, 1)]
LOSSES = [(lambda c: 0.0 if c else 0.3, 0.3), (lambda c: 0 if c else 1, 1.0), (lambda c: 0.1 if c else 0.7, 1.0)]


def test_differential_conformal_gates():
    rnd = random.Random(16)
    for _ in range(2500):
        probs, correct = _random_set(rnd)
        alpha = rnd.choice(ALPHAS + [rnd.random()])
        custom = rnd.random() < 0.3
        kwargs = {"nonconformity": rnd.choice(NONCONFORMITIES)} if custom else {}
        ours, theirs = ConformalGate(alpha=alpha, **kwargs).fit(probs, correct), ek_decide.ConformalGate(
            alpha=alpha, **kwargs).fit(probs, correct)
        assert (ours.q, ours._cal) == (theirs.q, theirs._cal), (probs, correct, alpha)
        probes = probs[:4] + [rnd.random() for _ in range(4)] + [0.0, 1.0]
        assert [ours(p) for p in probes] == [theirs(p) for p in probes]
        assert [ours.p_value(p) for p in probes] == [theirs.p_value(p) for p in probes]
        scores = [rnd.choice([rnd.random(), 0.5, -1.0, 2, math.inf]) for _ in range(len(probs))]
        assert split_conformal_quantile(scores, alpha) == ek_decide.split_conformal_quantile(scores, alpha)
        groups = [rnd.choice("abc") for _ in probs]
        ours_g = GroupConformalGate(alpha=alpha, **kwargs).fit(probs, correct, groups=groups)
        theirs_g = ek_decide.GroupConformalGate(alpha=alpha, **kwargs).fit(probs, correct, groups=groups)
        assert list(ours_g.by_group) == list(theirs_g.by_group)
        assert [(g.q, g._cal) for g in ours_g.by_group.values()] == [(g.q, g._cal) for g in theirs_g.by_group.values()]
        assert (ours_g.pooled.q, ours_g.pooled._cal) == (theirs_g.pooled.q, theirs_g.pooled._cal)
        routed = [(p, g) for p in probes for g in "abz"]
        assert [ours_g(p, group=g) for p, g in routed] == [theirs_g(p, group=g) for p, g in routed]


def test_conformal_gate_on_large_arrays_matches_the_reference():
    """NumPy arrays long enough for the compiled fit's sampled selection and its two threads: the
    threshold, the calibration scores and the p-values are the reference's on the same lists."""
    rng = np.random.default_rng(21)
    for n, digits in ((200_000, None), (120_000, 2)):
        probs = rng.beta(4, 1.5, n)
        if digits is not None:
            probs = np.round(probs, digits)
        probs[rng.random(n) < 0.01] = np.nan
        correct = rng.random(n) < np.nan_to_num(probs)
        for alpha in (0.05, 0.1, 0.3):
            ours = ConformalGate(alpha=alpha).fit(probs, correct)
            theirs = ek_decide.ConformalGate(alpha=alpha).fit(probs.tolist(), correct.tolist())
            assert ours.q == theirs.q and len(ours._cal) == len(theirs._cal)
            assert ours._cal == theirs._cal
            probes = [0.0, 0.31, 0.5, 0.77, 0.9999, 1.0]
            assert [ours.p_value(p) for p in probes] == [theirs.p_value(p) for p in probes]


def test_conformal_gates_agree_on_both_backends():
    from scorekit._kernels import use_backend

    rng = np.random.default_rng(22)
    probs, correct, groups = rng.random(50_000), rng.random(50_000) < 0.8, rng.integers(0, 3, 50_000).tolist()
    fitted = {}
    for backend in ("rust", "numba"):
        with use_backend(backend):
            gate = ConformalGate(alpha=0.05).fit(probs, correct)
            grouped = GroupConformalGate(alpha=0.05).fit(probs, correct, groups=groups)
            fitted[backend] = (gate.q, list(gate._cal), gate.p_value(0.3), split_conformal_quantile(probs, 0.2),
                               [(g.q, len(g._cal)) for g in grouped.by_group.values()])
    assert fitted["rust"] == fitted["numba"]


def test_calibration_scores_read_like_the_sorted_list():
    gate = ConformalGate(alpha=0.2).fit(np.array(PROBS12), np.array(CORRECT12))
    cal = gate._cal
    expected = sorted(1 - p for p, c in zip(PROBS12, CORRECT12) if c)
    assert isinstance(cal, decide.CalibrationScores) and len(cal) == 10
    assert cal == expected and expected == cal and cal != expected[:-1] and cal != "0.01"
    assert list(cal) == expected and cal[0] == expected[0] and cal[-1] == expected[-1] and cal[2:4] == expected[2:4]
    assert repr(cal) == f"[{expected[0]!r}, {expected[1]!r}, {expected[2]!r}, ..., {expected[-3]!r}, " \
                        f"{expected[-2]!r}, {expected[-1]!r}] (10 scores)"
    assert repr(ConformalGate()._cal) == "[]"
    assert cal.count_at_least(0.3) == sum(s >= 0.3 for s in expected)
    import copy
    import pickle
    for clone in (pickle.loads(pickle.dumps(gate)), copy.deepcopy(gate)):
        assert clone == gate and clone.p_value(0.6) == gate.p_value(0.6) == 3 / 11
    given = ConformalGate(alpha=0.2, q=0.4, _cal=[0.3, 0.1, 0.2])  # a list given is taken as the scores
    assert given._cal == [0.1, 0.2, 0.3] and given.p_value(0.75) == 2 / 4  # only 0.3 >= 1 - 0.75
    with pytest.raises(InvalidValueError, match=r"_cal\[1\] must not be NaN"):
        ConformalGate(_cal=[0.1, math.nan])


def test_conformal_gate_names_a_probability_out_of_range():
    for probs in ([0.5, math.nan, 1.5, -1.0], np.array([0.5, math.nan, 1.5, -1.0])):
        with pytest.raises(InvalidValueError, match=r"probs\[2\] must be a probability in \[0, 1\], got 1.5"):
            ConformalGate().fit(probs, [False] * 4)  # checked on every row, whatever its outcome
    with pytest.raises(InvalidValueError, match="same length"):
        ConformalGate().fit(np.array([0.5, 0.6]), np.array([True]))


def test_differential_risk_control_and_curve():
    rnd = random.Random(1616)
    for _ in range(2500):
        probs, correct = _random_set(rnd)
        target, bound = rnd.choice(TARGETS + [rnd.random()]), rnd.choice([1.0, 1.0, 1.5, 4.0])
        ours = RiskControlGate(target=target, loss_bound=bound).fit(probs, correct)
        if not probs:  # the reference keeps lam = 1.0 on no rows; scorekit fails closed (decisions.md)
            assert ours.lam == (0.0 if bound <= target else 1.000000001)
            continue
        assert ours.lam == ek_decide.RiskControlGate(target=target, loss_bound=bound).fit(probs, correct).lam
        loss, loss_bound = rnd.choice(LOSSES)
        ours = RiskControlGate(target=target, loss=loss, loss_bound=loss_bound).fit(probs, correct)
        theirs = ek_decide.RiskControlGate(target=target, loss=loss, loss_bound=loss_bound).fit(probs, correct)
        assert ours.lam == theirs.lam, (probs, correct, target)
        probes = probs[:3] + [0.0, 0.5, 1.0]
        assert [ours(p) for p in probes] == [theirs(p) for p in probes]
        thresholds = None if rnd.random() < 0.5 else [rnd.random() for _ in range(rnd.randrange(6))] + [0, 1.0, 1.5]
        assert risk_coverage_curve(probs, correct, thresholds=thresholds) == ek_decide.risk_coverage_curve(
            probs, correct, thresholds=thresholds)


def test_differential_graded_loss_in_row_order():
    """Graded correctness with a non-integer loss: sums must be added in the reference's row order
    (many values like 0.1 + 0.2 round differently in another order)."""
    rnd = random.Random(7)
    for _ in range(300):
        n = rnd.randrange(1, 80)
        probs = [rnd.randrange(11) / 10 for _ in range(n)]
        graded = [rnd.choice([0.0, 0.1, 0.2, 0.7, 0.9, 1.0]) for _ in range(n)]
        target = rnd.choice([0.02, 0.05, 0.1, 0.2, 1 / 3])
        ours = RiskControlGate(target=target, loss=lambda c: 1 - c).fit(probs, graded)
        assert ours.lam == ek_decide.RiskControlGate(target=target, loss=lambda c: 1 - c).fit(probs, graded).lam


def test_differential_large_sets():
    rng = np.random.default_rng(3)
    for n in (1500, 3000):
        probs = np.round(rng.beta(4, 1.5, n), rng.integers(2, 6)).tolist()
        correct = (rng.random(n) < np.array(probs)).tolist()
        assert RiskControlGate().fit(probs, correct).lam == ek_decide.RiskControlGate().fit(probs, correct).lam
        assert risk_coverage_curve(probs, correct) == ek_decide.risk_coverage_curve(probs, correct)
        ours, theirs = ConformalGate().fit(probs, correct), ek_decide.ConformalGate().fit(probs, correct)
        assert (ours.q, ours._cal) == (theirs.q, theirs._cal)


def test_numpy_inputs_equal_lists():
    rng = np.random.default_rng(5)
    p = rng.random(500)
    c = rng.random(500) < p
    assert ConformalGate().fit(p, c) == ConformalGate().fit(p.tolist(), c.tolist())
    assert RiskControlGate(target=0.2).fit(p, c).lam == RiskControlGate(target=0.2).fit(p.tolist(), c.tolist()).lam
    assert risk_coverage_curve(p, c.astype(int)) == risk_coverage_curve(p.tolist(), c.tolist())
    assert ConformalGate().fit(iter(p.tolist()), iter(c.tolist())).q == ConformalGate().fit(p, c).q


# ---------------------------------------------------------------------------------- properties

probabilities = st.lists(st.floats(0, 1), max_size=40)


@settings(max_examples=200, deadline=None)
@given(probabilities, st.randoms(use_true_random=False))
def test_properties_order_and_nan_rows(probs, rnd):
    correct = [rnd.random() < 0.7 for _ in probs]
    rows = list(zip(probs, correct))
    rnd.shuffle(rows)
    shuffled_p, shuffled_c = [r[0] for r in rows], [r[1] for r in rows]
    noisy_p, noisy_c = probs + [float("nan"), -math.inf], correct + [True, False]
    for p, c in ((shuffled_p, shuffled_c), (noisy_p, noisy_c)):  # row order and non-finite rows do not matter
        assert ConformalGate().fit(p, c).q == ConformalGate().fit(probs, correct).q
        assert RiskControlGate(target=0.2).fit(p, c).lam == RiskControlGate(target=0.2).fit(probs, correct).lam
        assert risk_coverage_curve(p, c) == risk_coverage_curve(probs, correct)
    curve = risk_coverage_curve(probs, correct)
    assert all(a["coverage"] > b["coverage"] for a, b in zip(curve, curve[1:]))
    assert all(0.0 <= r["selective_risk"] <= 1.0 for r in curve)


@settings(max_examples=200, deadline=None)
@given(probabilities, st.floats(0, 1), st.randoms(use_true_random=False))
def test_properties_risk_control_definition(probs, target, rnd):
    """lam is the first candidate whose bound meets the target (brute force over all candidates)."""
    correct = [rnd.random() < 0.8 for _ in probs]
    lam = RiskControlGate(target=target).fit(probs, correct).lam
    n = len(probs)
    if n == 0:
        assert lam == (0.0 if target >= 1.0 else 1.000000001)
        return
    candidates = [0.0] + sorted(set(probs))
    risks = [sum(1.0 for p, c in zip(probs, correct) if p >= t and not c) / n for t in candidates]
    bounds = [(n * risk + 1.0) / (n + 1) for risk in risks]
    passing = [t for t, b in zip(candidates, bounds) if b <= target]
    assert lam == (passing[0] if passing else 1.0 + 1e-9)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.sampled_from([0.05, 0.1, 0.2, 0.3]), st.floats(0, 1))
def test_properties_conformal_p_value_and_decision(probs, alpha, probe):
    gate = ConformalGate(alpha=alpha).fit(probs, [True] * len(probs))
    n, as_large = len(probs), sum(1 for s in gate._cal if s >= 1.0 - probe)
    assert gate.p_value(probe) == (1 + as_large) / (n + 1)
    if gate.q < math.inf:
        # accepted iff at least n + 1 - k (= floor((n+1) alpha)) calibration scores are as large
        assert (gate(probe) is A) == (as_large >= n + 1 - math.ceil((n + 1) * (1 - alpha)))


# ---------------------------------------------------------------------------------- guarantees by simulation

SEEDS = 200


def _mean_and_margin(values) -> tuple[float, float]:
    """Mean over seeds and a four-standard-error CLT margin (a false alarm about once in 30,000 runs)."""
    values = np.asarray(values, dtype=float)
    return float(values.mean()), 4.0 * float(values.std(ddof=1)) / math.sqrt(len(values))


def _flag_rate(gate, probs, **group):
    return sum(gate(p, **group) is F for p in probs) / len(probs)


def test_simulated_conformal_coverage():
    """Among correct test items the flagged fraction has expectation exactly 1 - k/(n_c + 1) for
    continuous scores (n_c correct calibration items): within [alpha - 1/(n_c + 1), alpha]."""
    alpha, observed, expected = 0.1, [], []
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        p = rng.beta(4, 1.5, 100)
        gate = ConformalGate(alpha=alpha).fit(p, rng.random(100) < p)
        n_c = len(gate._cal)
        expected.append(1 - math.ceil((n_c + 1) * (1 - alpha)) / (n_c + 1))
        test = rng.beta(4, 1.5, 500)
        observed.append(_flag_rate(gate, test[rng.random(500) < test]))
    mean, margin = _mean_and_margin(observed)
    assert mean <= alpha + margin  # the guarantee
    assert abs(mean - np.mean(expected)) <= margin  # and it is tight, not vacuous
    assert alpha - 1 / 60 < np.mean(expected) <= alpha


def test_simulated_group_conformal_coverage_per_group():
    """Two field types with different confidence profiles: the Mondrian gate keeps each group's
    false-flag rate at alpha; the pooled (marginal) gate over-flags the less confident group."""
    alpha = 0.1
    observed = {"a": [], "b": []}
    expected = {"a": [], "b": []}
    pooled_b = []
    for seed in range(SEEDS):
        rng = np.random.default_rng(1000 + seed)
        p = np.concatenate([rng.beta(6, 1, 60), rng.beta(2, 2, 60)])
        c = rng.random(120) < p
        gate = GroupConformalGate(alpha=alpha).fit(p, c, groups=["a"] * 60 + ["b"] * 60)
        pooled = ConformalGate(alpha=alpha).fit(p, c)
        for group, (a, b) in (("a", (6, 1)), ("b", (2, 2))):
            n_c = len(gate.by_group[group]._cal)
            expected[group].append(1 - math.ceil((n_c + 1) * (1 - alpha)) / (n_c + 1) if n_c >= 9 else 0.0)
            test = rng.beta(a, b, 400)
            correct_test = test[rng.random(400) < test]
            observed[group].append(_flag_rate(gate, correct_test, group=group))
            if group == "b":
                pooled_b.append(_flag_rate(pooled, correct_test))
    for group in "ab":
        mean, margin = _mean_and_margin(observed[group])
        assert mean <= alpha + margin
        assert abs(mean - np.mean(expected[group])) <= margin
    mean, margin = _mean_and_margin(pooled_b)
    assert mean > alpha + 0.1 + margin  # the marginal gate breaks the per-group guarantee


def test_simulated_risk_control():
    """E[wrong and accepted] <= target (conformal risk control), and close to it: at least
    target - 2B/(n + 1) for continuous confidences."""
    target, n, observed = 0.05, 300, []
    for seed in range(SEEDS):
        rng = np.random.default_rng(2000 + seed)
        p = rng.beta(3, 1, n)
        gate = RiskControlGate(target=target).fit(p, rng.random(n) < p)
        test = rng.beta(3, 1, 1000)
        wrong = rng.random(1000) >= test
        observed.append(sum(gate(x) is A for x in test[wrong]) / 1000)
    mean, margin = _mean_and_margin(observed)
    assert mean <= target + margin
    assert mean >= target - 2 / (n + 1) - margin


# ---------------------------------------------------------------------------------- small calibration sets


def test_conformal_warns_when_too_small():
    with pytest.warns(SmallCalibrationWarning, match=r"5 correct calibration item\(s\); alpha=0.1 needs at least 9"):
        gate = ConformalGate().fit([.5, .6, .7, .8, .9, .1], [True] * 5 + [False])
    assert gate.q == math.inf
    with pytest.warns(SmallCalibrationWarning, match="0 correct"):
        ConformalGate().fit([.5, .6], [False, False])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ConformalGate().fit([.5] * 9, [True] * 9)  # exactly enough
        ConformalGate(alpha=0.0).fit([.5], [True])  # alpha = 0 asks for q = inf: nothing to warn about


def test_group_conformal_warns_naming_groups():
    with pytest.warns(SmallCalibrationWarning, match=r"'b' \(3\)") as caught:
        GroupConformalGate().fit([.9] * 12 + [.5] * 3, [True] * 15, groups=["a"] * 12 + ["b"] * 3)
    assert len(caught) == 1 and "'a'" not in str(caught[0].message) and "at least 9" in str(caught[0].message)


def test_risk_control_warns_when_too_small():
    with pytest.warns(SmallCalibrationWarning, match="at least 19 items"):
        RiskControlGate().fit([.9, .8], [True, True])
    with pytest.warns(SmallCalibrationWarning, match="0 calibration"):
        RiskControlGate().fit([], [])
    with pytest.warns(SmallCalibrationWarning, match="never"):
        RiskControlGate(target=0.0).fit([.9] * 50, [True] * 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RiskControlGate().fit([.9] * 19, [True] * 19).lam == 0.0  # 1/20 <= 0.05


# ---------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("gate", [CostSensitiveGate(), ConformalGate(), RiskControlGate(), GroupConformalGate()])
def test_gate_input_must_be_a_probability(gate):
    for bad in (float("nan"), math.inf, -math.inf):
        with pytest.raises(InvalidValueError, match="confidence must be finite, got"):
            gate(bad)
    for bad in (1.5, -0.01):
        with pytest.raises(InvalidValueError, match=r"confidence must be a probability in \[0, 1\]"):
            gate(bad)
    for bad in ("0.7", None, [0.5]):
        with pytest.raises(InvalidTypeError, match="confidence must be a number"):
            gate(bad)


def test_p_value_input_checked():
    with pytest.raises(InvalidValueError, match="finite"):
        ConformalGate().fit([.5] * 10, [True] * 10).p_value(float("nan"))


def test_bad_calibration_sets():
    fits = [ConformalGate().fit, RiskControlGate().fit, risk_coverage_curve,
            lambda p, c: GroupConformalGate().fit(p, c, groups=["g"] * len(p))]
    for fit in fits:
        with pytest.raises(InvalidValueError, match=r"probs\[1\] must be a probability in \[0, 1\], got 1.5"):
            fit([0.5, 1.5], [True, True])
        with pytest.raises(InvalidTypeError, match=r"probs\[0\] must be a number"):
            fit(["0.5"], [True])
        with pytest.raises(InvalidValueError, match=r"correct\[1\] must be a bool \(or 0/1\)"):
            fit([0.5, 0.6], [True, "yes"])
        with pytest.raises(InvalidValueError, match=r"correct\[0\] must be a bool"):
            fit([0.5], [0.7])
        with pytest.raises(InvalidValueError, match="same length, got 2 and 1"):
            fit([0.5, 0.6], [True])
        with pytest.raises(InvalidTypeError, match="probs must be a sequence"):
            fit("0.5", [True])
    with pytest.raises(InvalidValueError, match="one-dimensional"):
        ConformalGate().fit(np.zeros((2, 2)), [True, True])
    with pytest.raises(InvalidValueError, match="groups must have the same length"):
        GroupConformalGate().fit([0.5, 0.6], [True, True], groups=["a"])
    with pytest.raises(InvalidTypeError, match=r"groups\[1\] must be hashable"):
        GroupConformalGate().fit([0.5, 0.6], [True, True], groups=["a", ["b"]])


def test_bad_parameters():
    for alpha in (1.2, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
            ConformalGate(alpha=alpha).fit([.5], [True])
        with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
            GroupConformalGate(alpha=alpha).fit([.5], [True], groups=["a"])
    with pytest.raises(InvalidTypeError, match="alpha must be a number"):
        ConformalGate(alpha="0.1").fit([.5], [True])
    for target in (-0.1, float("nan"), math.inf):
        with pytest.raises(InvalidValueError, match="target must be finite and >= 0"):
            RiskControlGate(target=target).fit([.5], [True])
    with pytest.raises(InvalidValueError, match="loss_bound must be finite and >= 0"):
        RiskControlGate(loss_bound=-1).fit([.5], [True])
    with pytest.raises(InvalidValueError, match="loss_bound must be >= 1 for the default 0/1 loss"):
        RiskControlGate(loss_bound=0.5).fit([.5], [False])
    with pytest.raises(InvalidValueError, match=r"loss\(correct\[0\]\) must be in \[0, loss_bound=1\], got -1.0"):
        RiskControlGate(loss=lambda c: -1.0).fit([.5], [True])
    with pytest.raises(InvalidValueError, match=r"loss\(correct\[0\]\) must be in \[0, loss_bound=0.5\], got 1.0"):
        RiskControlGate(loss=lambda c: 1.0, loss_bound=0.5).fit([.5], [True])
    with pytest.raises(InvalidValueError, match=r"nonconformity\(0.5\) returned NaN"):
        ConformalGate(nonconformity=lambda p: float("nan")).fit([.5], [True])
    with pytest.raises(InvalidTypeError, match=r"nonconformity\(0.5\) must be a number"):
        ConformalGate(nonconformity=lambda p: "high").fit([.5], [True])
    with pytest.raises(InvalidValueError, match="thresholds must not contain NaN"):
        risk_coverage_curve([.5], [True], thresholds=[0.2, float("nan")])
    for gate, name in ((CostSensitiveGate(rho=float("nan")), "rho"), (CostSensitiveGate(accept_threshold=float("nan")),
                       "accept_threshold"), (CostSensitiveGate(block_threshold=float("nan")), "block_threshold")):
        with pytest.raises(InvalidValueError, match=name):
            gate(0.5)


# ---------------------------------------------------------------------------------- crepes


def test_crepes_gate_needs_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "crepes", None)  # importing crepes now fails
    with pytest.raises(ImportError, match=r"scorekit\[calibration\]"):
        crepes_mondrian_gate([.5], [True], groups=["a"])


def test_crepes_gate_matches_group_conformal():
    pytest.importorskip("crepes")  # the `calibration` extra
    rng = np.random.default_rng(11)
    for _trial in range(15):
        n = int(rng.integers(5, 120))
        p = rng.beta(4, 1.5, n)
        c = rng.random(n) < p
        groups = rng.choice(["x", "y", "z"], n).tolist()
        alpha = float(rng.choice([0.05, 0.1, 0.2, 0.3]))
        ours = GroupConformalGate(alpha=alpha).fit(p, c, groups=groups)
        theirs = crepes_mondrian_gate(p, c, groups=groups, alpha=alpha)
        probes = rng.random(8).tolist()
        for group in set(groups[i] for i in np.flatnonzero(c)):
            cal = ours.by_group[group]
            assert [theirs.p_value(x, group=group) for x in probes] == pytest.approx([cal.p_value(x) for x in probes])
            assert [theirs(x, group=group) for x in probes] == [ours(x, group=group) for x in probes]
        assert [theirs(x, group="unseen") for x in probes] == [ours(x, group="unseen") for x in probes]
    with pytest.raises(InvalidValueError, match="at least one correct"):
        crepes_mondrian_gate([.5], [False], groups=["a"])
