"""``scorekit.agents.reliability``: the spec's vectors, hand-computed cases, bad input, and a
differential check against the reference kit ``ek.agents`` (the test oracle) on random inputs."""

from __future__ import annotations

import doctest
import importlib
import math
import random
import warnings
from fractions import Fraction

import ek.agents as ek_agents
import numpy as np
import pytest

from doc_examples import run_python_blocks
from scorekit._kernels import bootstrap as bootstrap_kernels
from scorekit.agents import (
    Episode, ReliabilityReport, bootstrap_ci, difference_upper_bound, newcombe_difference,
    pass_at_k, pass_hat_k, reliability, wilson_interval,
)
# The package re-exports the function ``reliability`` under the submodule's name.
reliability_module = importlib.import_module("scorekit.agents.reliability")
stats_module = importlib.import_module("scorekit.stats")


def mean(v):
    return sum(v) / len(v)


def test_doctests():
    assert doctest.testmod(reliability_module).failed == 0


# ---------------------------------------------------------------- pass@k / pass^k


@pytest.mark.parametrize("args, at, hat", [
    ((10, 1, 1), 0.1, 0.1), ((10, 10, 5), 1.0, 1.0), ((5, 2, 1), 0.4, 0.4), ((5, 2, 3), 0.9, 0.0),
    ((5, 0, 1), 0.0, 0.0), ((5, 5, 3), 1.0, 1.0), ((5, 2, 2), 0.7, 0.1), ((5, 1, 2), 0.4, 0.0),
    ((4, 4, 4), 1.0, 1.0), ((8, 8, 8), 1.0, 1.0), ((8, 4, 2), 11 / 14, 0.21428571428571427),
    ((10, 9, 8), 1.0, 0.2), ((100, 90, 8), 0.9999999997581788, 0.4165532729927827),
])
def test_pass_vectors(args, at, hat):
    n, c, k = args
    assert pass_at_k(n=n, c=c, k=k) == pytest.approx(at, abs=1e-15)
    assert pass_hat_k(n=n, c=c, k=k) == pytest.approx(hat, abs=1e-15)


def test_pass_exact_rational_large_n():
    # One correctly rounded division of exact binomials, even where a float product drifts.
    for n, c, k in [(3000, 2900, 40), (5000, 4999, 2500), (1000, 500, 10)]:
        exact = Fraction(math.comb(c, k), math.comb(n, k))
        assert pass_hat_k(n=n, c=c, k=k) == float(exact)
        assert pass_at_k(n=n, c=c, k=k) == 1 - float(Fraction(math.comb(n - c, k), math.comb(n, k)))


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_pass_errors(fn):
    with pytest.raises(ValueError, match=r"k must be >= 1, got 0"):
        fn(n=5, c=1, k=0)
    with pytest.raises(ValueError, match=r"need n >= k trials to estimate at k=3, got n=2"):
        fn(n=2, c=1, k=3)
    with pytest.raises(ValueError, match=r"successes c must be in \[0, n\]; got c=9, n=5"):
        fn(n=5, c=9, k=1)
    with pytest.raises(ValueError, match=r"successes c must be in \[0, n\]; got c=-1"):
        fn(n=5, c=-1, k=1)
    with pytest.raises(ValueError, match=r"k must be >= 1"):   # order: k first
        fn(n=0, c=9, k=0)
    with pytest.raises(ValueError, match=r"need n >= k"):      # then n
        fn(n=0, c=9, k=1)
    for bad in (2.5, math.nan, "3", None):
        with pytest.raises(TypeError, match="integers"):
            fn(n=bad, c=1, k=1)
    with pytest.raises(TypeError):
        fn(5, 2, 1)   # keyword-only


def test_pass_differential():
    rng = random.Random(1)
    for _ in range(5000):
        n = rng.randint(1, 300)
        k = rng.randint(1, n)
        c = rng.randint(0, n)
        assert pass_at_k(n=n, c=c, k=k) == ek_agents.pass_at_k(n=n, c=c, k=k)
        assert pass_hat_k(n=n, c=c, k=k) == ek_agents.pass_hat_k(n=n, c=c, k=k)


# ---------------------------------------------------------------- Wilson / Newcombe / SE bound


@pytest.mark.parametrize("args, kw, expected", [
    ((0, 10), {}, (0.0, 0.2775401687666166)),
    ((5, 10), {}, (0.23658959361548731, 0.7634104063845126)),
    ((10, 10), {}, (0.7224598312333834, 1.0)),
    ((1, 2), {}, (0.09452865480086614, 0.9054713451991339)),
    ((0, 0), {}, (0.0, 1.0)),
    ((9, 10), {"z": 2.576}, (0.4927415569723099, 0.9881497462046505)),
    ((5, 6), {}, (0.43649056343635395, 0.9699474141282697)),
    ((0, 1), {}, (0.0, 0.7934567085261071)),
])
def test_wilson_vectors(args, kw, expected):
    assert wilson_interval(*args, **kw) == expected


def test_wilson_hand_computed():
    # s=2, n=4, z=2: p=.5, denom=2, center=(.5+.5)/2=.5, margin=(2/2)*sqrt(.0625+.0625)
    lo, hi = wilson_interval(2, 4, z=2.0)
    assert lo == pytest.approx(0.5 - math.sqrt(0.125)) and hi == pytest.approx(0.5 + math.sqrt(0.125))


def test_wilson_bad_input():
    for s, n in [(11, 10), (-1, 10), (math.nan, 10)]:
        with pytest.raises(ValueError, match=r"successes must be in \[0, n\]"):
            wilson_interval(s, n)
    assert wilson_interval(5, -3) == (0.0, 1.0)


@pytest.mark.parametrize("args, expected", [
    ((50, 100, 90, 100), (-0.5060810320231057, -0.27843027585819957)),
    ((89, 100, 90, 100), (-0.09847828140686142, 0.07822030553537265)),
    ((160, 200, 180, 200), (-0.16987169589231418, -0.030027712547282065)),
    ((0, 0, 5, 10), (-1.0, 1.0)),
    ((10, 10, 0, 10), (0.6074989292269332, 1.0)),
])
def test_newcombe_vectors(args, expected):
    assert newcombe_difference(*args) == expected


def test_difference_upper_bound_vectors():
    assert difference_upper_bound(0.5, (0.4, 0.6), 0.7, (0.6, 0.8)) == -0.05857864376269045
    assert difference_upper_bound(0.5, (None, 0.6), 0.7, (0.6, 0.8)) is None
    assert difference_upper_bound(0.5, (), 0.7, (0.6, 0.8)) is None
    assert difference_upper_bound(0.5, None, 0.7, (0.6, 0.8)) is None
    assert difference_upper_bound(0.5, (0.4, math.inf), 0.7, (0.6, 0.8)) is None
    assert difference_upper_bound(0.5, (0.6, 0.4), 0.7, (0.6, 0.8)) is None
    # zero-width CIs: the bound is the plain difference
    assert difference_upper_bound(0.9, (0.9, 0.9), 0.5, (0.5, 0.5)) == pytest.approx(0.4)
    # hand-computed: se = 0.1/(2*1) each, bound = -0.1 + 1*sqrt(2)*0.05
    assert difference_upper_bound(0.4, (0.35, 0.45), 0.5, (0.45, 0.55), z=1.0) == pytest.approx(
        -0.1 + math.sqrt(2) * 0.05)


def test_intervals_differential():
    rng = random.Random(2)
    for _ in range(4000):
        n_a, n_b = rng.randint(0, 500), rng.randint(0, 500)
        s_a, s_b = rng.randint(0, n_a), rng.randint(0, n_b)
        z = rng.choice([1.0, 1.645, 1.96, 2.576])
        assert wilson_interval(s_a, n_a, z=z) == ek_agents.wilson_interval(s_a, n_a, z=z)
        assert newcombe_difference(s_a, n_a, s_b, n_b, z=z) == ek_agents.newcombe_difference(
            s_a, n_a, s_b, n_b, z=z)
        va, vb = rng.random(), rng.random()
        ca = rng.choice([(va - 0.1, va + 0.1), (None, va), (), (va, va), (va + 0.1, va)])
        cb = (vb - rng.random() * 0.2, vb + rng.random() * 0.2)
        assert difference_upper_bound(va, ca, vb, cb, z=z) == ek_agents.difference_upper_bound(
            va, ca, vb, cb, z=z)


# ---------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("statistic", ["mean", mean])
def test_bootstrap_vectors(statistic):
    assert bootstrap_ci([0, 1, 1, 0, 1], statistic, resamples=10, seed=0) == (0.2, 1.0)
    assert bootstrap_ci([0, 1, 1, 0, 1], statistic) == (0.2, 1.0)
    assert bootstrap_ci([1, 2, 3, 4, 5], statistic) == (1.8, 4.2)
    assert bootstrap_ci([1, 2, 3, 4, 5], statistic, resamples=100, alpha=0.1, seed=42) == (2.0, 4.0)
    assert bootstrap_ci([3.0], statistic) == (3.0, 3.0)
    assert bootstrap_ci([1.0] * 20, statistic, resamples=50) == (1.0, 1.0)
    lo, hi = bootstrap_ci([], statistic)
    assert math.isnan(lo) and math.isnan(hi)


def test_bootstrap_resampling_stream_is_cpythons():
    # Random(0).randrange(5) x 10 = [3, 3, 0, 2, 4, 3, 3, 2, 3, 2]: with values = indices and the
    # identity-ish statistic "first element", resample r starts at draw 5r.
    draws = [3, 3, 0, 2, 4, 3, 3, 2, 3, 2]
    seen = []
    bootstrap_ci(list(range(5)), lambda s: seen.append(s) or 0.0, resamples=2)
    assert seen == [draws[:5], draws[5:]]
    rng = random.Random(7)
    expected = sorted(rng.randrange(37) for _ in range(37 * 3))
    got = []
    bootstrap_ci(list(range(37)), lambda s: got.extend(s) or 0.0, resamples=3, seed=7)
    assert sorted(got) == expected


def test_bootstrap_ratio_hand_computed():
    # one episode: every resample is that episode
    assert bootstrap_ci([(2.0, 1)], "ratio", resamples=5) == (2.0, 2.0)
    assert bootstrap_ci([(2.0, 0)], "ratio", resamples=5) == (math.inf, math.inf)
    # Python's percentile order with inf last
    # two episodes ($1e-5 each, one success): a resample costs 2e-5 over 2, 1 or 0 successes
    assert bootstrap_ci([(1e-5, 1), (1e-5, 0)], "ratio") == (1e-05, math.inf)
    assert bootstrap_ci([(1e-5, True), (1e-5, True)], "ratio") == (1e-05, 1e-05)


def test_bootstrap_chunking_matches_one_block(monkeypatch):
    rng = random.Random(3)
    vals = [rng.random() for _ in range(301)]
    whole = bootstrap_ci(vals, "mean", resamples=257, seed=11)
    monkeypatch.setattr(stats_module, "_CHUNK_CELLS", 700)   # 2 resamples per chunk
    assert bootstrap_ci(vals, "mean", resamples=257, seed=11) == whole
    assert bootstrap_ci(vals, mean, resamples=257, seed=11) == whole


def test_bootstrap_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([1.0, math.nan], "mean")
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([(1.0, 1), (math.nan, 0)], "ratio")
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([1.0, 2.0], lambda s: math.nan)
    with pytest.raises(ValueError, match="resamples must be >= 1"):
        bootstrap_ci([1.0], "mean", resamples=0)
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
        bootstrap_ci([1.0], "mean", alpha=1.5)
    with pytest.raises(TypeError, match="statistic must be a callable"):
        bootstrap_ci([1.0], "median")
    with pytest.raises(TypeError, match="pairs"):
        bootstrap_ci([1.0, 2.0], "ratio")
    with pytest.raises(TypeError, match="flat"):
        bootstrap_ci([(1.0, 2.0)], "mean")
    with pytest.raises((TypeError, ValueError)):
        bootstrap_ci(["a", "b"], "mean")


def test_bootstrap_differential():
    rng = random.Random(4)
    for _ in range(1500):
        n = rng.randint(1, 80)
        pool = [0.0, 1.0, 0.5, 1 / 3, 0.1, rng.random(), rng.uniform(-5, 5)]
        vals = [rng.choice(pool) for _ in range(n)]
        res = rng.choice([1, 2, 9, 40, 200])
        alpha = rng.choice([0.0, 0.05, 0.1, 0.5, 1.0])
        seed = rng.choice([0, 1, 42, 2**40, -3, "s"])
        ref = ek_agents.bootstrap_ci(vals, mean, resamples=res, alpha=alpha, seed=seed)
        assert bootstrap_ci(vals, "mean", resamples=res, alpha=alpha, seed=seed) == ref
        assert bootstrap_ci(vals, mean, resamples=res, alpha=alpha, seed=seed) == ref
        pairs = [(rng.choice([0.0, 1e-6, rng.random() * 1e-3]), rng.random() < 0.4) for _ in range(n)]
        ratio = lambda s: ek_agents.cost_of_pass(sum(d for d, _ in s), sum(w for _, w in s))  # noqa: E731
        assert bootstrap_ci(pairs, "ratio", resamples=res, alpha=alpha, seed=seed) == \
            ek_agents.bootstrap_ci(pairs, ratio, resamples=res, alpha=alpha, seed=seed)


# ---------------------------------------------------------------- reliability()


def test_reliability_vector():
    r = reliability({"t1": [True, True, False], "t2": [True, True, True]}, k=2,
                    slices={"t1": "hard", "t2": "easy"})
    assert (r.k, r.n_tasks, r.n_trials, r.n_success) == (2, 2, 6, 5)
    assert r.success_rate == 0.8333333333333334
    assert r.success_ci == (0.43649056343635395, 0.9699474141282697)
    assert (r.pass_at_k, r.pass_hat_k) == (1.0, 0.6666666666666666)
    assert r.pass_hat_k_ci == (0.3333333333333333, 1.0)
    assert r.stochastic is True
    assert r.per_task == {"t1": {"n": 3, "c": 2, "pass_at_k": 1.0, "pass_hat_k": 0.3333333333333333},
                          "t2": {"n": 3, "c": 3, "pass_at_k": 1.0, "pass_hat_k": 1.0}}
    assert r.per_slice == {
        "hard": {"n_tasks": 1, "pass_at_k": 1.0, "pass_hat_k": 0.3333333333333333,
                 "success_rate": 0.6666666666666666},
        "easy": {"n_tasks": 1, "pass_at_k": 1.0, "pass_hat_k": 1.0, "success_rate": 1.0}}
    assert float(r) == 0.6666666666666666
    assert r.cost == {} and r.detail == {}


def test_reliability_warnings_and_errors():
    with pytest.warns(UserWarning, match="deterministic"):
        r = reliability({"t1": [True, True], "t2": [False, False]}, k=2)
    assert r.stochastic is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reliability({"t1": [True, True], "t2": [False, False]}, k=2, warn_deterministic=False)
        reliability({"t1": [True], "t2": [False]}, k=1)
    with pytest.raises(ValueError, match="ungraded"):
        reliability([Episode(task_id="t1")], k=1)
    with pytest.warns(UserWarning, match="fewer than k"):
        r = reliability({"t1": [True] * 4, "t2": [True] * 4}, k=8)
    assert r.n_tasks == 0 and r.pass_hat_k is None and r.pass_at_k is None and math.isnan(float(r))
    assert r.pass_hat_k_ci == (0.0, 1.0) and r.success_ci == (0.0, 1.0) and r.success_rate == 0.0
    with pytest.warns(UserWarning, match=r"1 of 2 task\(s\) have fewer than k=8 trials"):
        r = reliability({"t1": [True] * 8, "t2": [True] * 4}, k=8, warn_deterministic=False)
    assert r.n_tasks == 1 and r.detail["skipped"] == ["t2"] and r.n_trials == 8
    with pytest.raises(TypeError, match="reliability\\(\\) takes Episodes"):
        reliability([3.5])
    with pytest.raises(ValueError, match="k must be >= 1"):
        reliability({"t1": [True]}, k=0)


def test_reliability_episodes_and_cost():
    eps = [Episode(task_id="a", success=True), Episode(task_id="b", success=False),
           Episode(task_id="a", success=False), Episode(task_id="b", success=False)]
    costs = {"n": 4, "cost_per_success": None}
    r = reliability(eps, k=2, cost=costs)
    assert list(r.per_task) == ["a", "b"]
    assert r.per_task["a"] == {"n": 2, "c": 1, "pass_at_k": 1.0, "pass_hat_k": 0.0}
    assert r.pass_at_k == 0.5 and r.pass_hat_k == 0.0 and r.cost == costs and r.cost is not costs
    assert isinstance(r, ReliabilityReport)


def _ek_report_dict(r):
    return {f: getattr(r, f) for f in ("k", "n_tasks", "n_trials", "n_success", "success_rate",
                                       "success_ci", "pass_at_k", "pass_hat_k", "pass_hat_k_ci",
                                       "stochastic", "per_task", "per_slice", "cost", "detail")}


def test_reliability_differential():
    rng = random.Random(6)
    for _ in range(400):
        n_tasks = rng.randint(0, 40)
        k = rng.randint(1, 5)
        p = rng.random()
        outcomes = {f"t{i}": [rng.random() < p for _ in range(rng.randint(1, 8))] for i in range(n_tasks)}
        slices = {t: rng.choice(["a", "b", None]) for t in outcomes} if rng.random() < 0.5 else None
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            mine = reliability(outcomes, k=k, slices=slices)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            ref = ek_agents.reliability(outcomes, k=k, slices=slices)
        assert _ek_report_dict(mine) == _ek_report_dict(ref)
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
        assert all(w.category is UserWarning for w in ours)
        eps = [Episode(task_id=t, success=s) for t, row in outcomes.items() for s in row]
        rng.shuffle(eps)
        ref_eps = [ek_agents.Episode(task_id=e.task_id, success=e.success) for e in eps]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert _ek_report_dict(reliability(eps, k=k)) == _ek_report_dict(
                ek_agents.reliability(ref_eps, k=k))


def test_docs_section_examples():
    # The reliability section of docs/agents.md (up to the next section) runs as a doctest.
    assert run_python_blocks("agents.md", section="Reliability", optionflags=0) > 0


def test_bootstrap_differential_long_inputs():
    # Long resamples: the vectorised sums must stay left to right (not pairwise) at any chunk shape.
    rng = random.Random(8)
    for n, res in [(3000, 1), (3000, 30), (20000, 3)]:
        vals = [rng.uniform(-1, 1) * 10 ** rng.randint(-6, 6) for _ in range(n)]
        assert bootstrap_ci(vals, "mean", resamples=res, seed=n) == ek_agents.bootstrap_ci(
            vals, mean, resamples=res, seed=n)


# ---------------------------------------------------------------- the compiled paths, at scale


def neumaier_mean(sample):
    """``sum(sample) / len(sample)`` as CPython >= 3.12 adds floats (Neumaier compensation)."""
    f = c = 0.0
    for x in sample:
        t = f + x
        c += (f - t) + x if abs(f) >= abs(x) else (x - t) + f
        f = t
    return (f + c if c and math.isfinite(c) else f) / len(sample)


def test_bootstrap_arrays_and_lists_agree():
    rng = random.Random(9)
    vals = [rng.random() for _ in range(500)]
    pairs = [(rng.random() * 1e-3, rng.random() < 0.3) for _ in range(500)]
    assert bootstrap_ci(np.array(vals), "mean", resamples=300) == bootstrap_ci(vals, "mean", resamples=300)
    assert bootstrap_ci(np.array(pairs, dtype=float), "ratio", resamples=300) == \
        bootstrap_ci(pairs, "ratio", resamples=300)
    assert bootstrap_ci(iter(vals), "mean", resamples=30) == bootstrap_ci(vals, mean, resamples=30)
    assert bootstrap_ci(np.array([1.0] * 5), mean, resamples=5) == (1.0, 1.0)   # arrays on the callable path too


def test_bootstrap_inf_minus_inf_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([math.inf, -math.inf, 1.0], "mean", resamples=200)


def test_bootstrap_python_312_summation(monkeypatch):
    # From Python 3.12 on, ``sum`` compensates runs of exact floats: the kernel does the same, and
    # inputs it cannot reproduce (ints mixed into floats, float subclasses) take the Python path.
    monkeypatch.setattr(bootstrap_kernels, "COMPENSATED", True)
    rng = random.Random(12)
    for _ in range(40):
        vals = [rng.uniform(-1, 1) * 10 ** rng.randint(-9, 9) for _ in range(rng.randint(1, 60))]
        res = rng.choice([1, 7, 50])
        assert bootstrap_ci(vals, "mean", resamples=res, seed=res) == bootstrap_ci(
            vals, neumaier_mean, resamples=res, seed=res)
    # routed to the Python statistic (whose `sum` is this interpreter's own)
    sums_like = stats_module._sums_like_python
    assert sums_like([0.5, 1.5]) and sums_like([1, 2, True]) and sums_like(np.array([1, 2.5]))
    assert not sums_like([0.5, 1]) and not sums_like([np.float64(0.5)]) and not sums_like([2 ** 53, 1])
    assert sums_like([(0.5, 1), (0.25, 0)], columns=2) and not sums_like([(0.5, 1), (1, 0)], columns=2)
    mixed = [0.1, 1, 0.2, 3, 1e-9]
    assert bootstrap_ci(mixed, "mean", resamples=40) == bootstrap_ci(mixed, mean, resamples=40)
    monkeypatch.setattr(bootstrap_kernels, "COMPENSATED", False)
    assert sums_like([0.5, 1]) and sums_like([np.float64(0.5), 2.0]) and not sums_like([2 ** 53, 1.0])
    assert not sums_like([0.5, 1.5, __import__("fractions").Fraction(1, 3)])
    big = [2 ** 60, 1, 3]   # exact int sums beyond 2**53: the Python path
    assert bootstrap_ci(big, "mean", resamples=20) == ek_agents.bootstrap_ci(big, mean, resamples=20)


def test_reliability_large_suites_match_ek():
    # 1,000 tasks x 5 trials of agents of every reliability, as episodes and as a mapping
    rng = random.Random(15)
    for k in (1, 3, 5):
        outcomes = {}
        for t in range(1000):
            p = rng.choice([0.0, 1.0, rng.random()])
            outcomes[f"task-{t}"] = [rng.random() < p for _ in range(rng.choice([5, 5, 5, 2]))]
        slices = {t: rng.choice(["easy", "hard", None]) for t in outcomes}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine = reliability(outcomes, k=k, slices=slices)
            ref = ek_agents.reliability(outcomes, k=k, slices=slices)
            assert _ek_report_dict(mine) == _ek_report_dict(ref)
            eps = [Episode(task_id=t, success=s) for t, row in outcomes.items() for s in row]
            rng.shuffle(eps)
            ref_eps = [ek_agents.Episode(task_id=e.task_id, success=e.success) for e in eps]
            assert _ek_report_dict(reliability(eps, k=k)) == _ek_report_dict(ek_agents.reliability(ref_eps, k=k))


class Duck:
    """Episode-shaped without being an Episode."""

    def __init__(self, task_id, success):
        self.task_id, self.success = task_id, success


class NoSuccess:
    task_id = "x"


def test_reliability_unusual_sources_match_ek():
    def cases():   # fresh each time: some outcomes are one-shot iterators
        yield {"a": (True, False), "b": iter([1, 0, 2]), "c": "yes", "d": [], 7: [None, 0.0, "x"]}
        # 1 and True are one key, as in any Python dict: they merge into {1: [True]} before scoring
        yield dict([(("t", 1), [True] * 3), (1, [False, True, True]), (True, [True])])

    for mine, theirs in zip(cases(), cases()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert _ek_report_dict(reliability(mine, k=2)) == _ek_report_dict(ek_agents.reliability(theirs, k=2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ducks = [Duck("a", 1), Duck("a", 0), Duck("b", "yes"), Duck(3, True), Duck("a", [1])]
        got = reliability(iter(ducks), k=1)
        assert _ek_report_dict(got) == _ek_report_dict(ek_agents.reliability(ducks, k=1))
        assert got.per_task["a"] == {"n": 3, "c": 2, "pass_at_k": 1 - 1 / 3, "pass_hat_k": 2 / 3}
    # errors: the first bad episode in order decides, as in the reference
    with pytest.raises(ValueError, match="episode for task 'a' is ungraded"):
        reliability([Duck("a", None), 3.5])
    with pytest.raises(TypeError, match="reliability\\(\\) takes Episodes"):
        reliability([Duck("a", True), 3.5, Duck("b", None)])
    with pytest.raises(ValueError, match="ungraded"):
        reliability([Duck("a", True), NoSuccess()])
    with pytest.raises(TypeError, match="integers"):
        reliability({"a": [True, False]}, k=1.5)
    with pytest.warns(UserWarning, match="fewer than k"):
        assert reliability({"a": [True]}, k=1.5).n_tasks == 0   # skipped before any estimator runs


def test_reliability_counts_each_distinct_outcome_once(monkeypatch):
    calls = []
    real = reliability_module.pass_hat_k

    def counting(**kw):
        calls.append(kw)
        return real(**kw)

    monkeypatch.setattr(reliability_module, "pass_hat_k", counting)
    outcomes = {f"t{i}": [i % 3 == 0, True, i % 2 == 0] for i in range(600)}
    r = reliability(outcomes, k=2)
    assert len(calls) == len({(3, sum(v)) for v in outcomes.values()}) == 3
    assert [c["c"] for c in calls] == [3, 1, 2]   # in order of first appearance
    assert r.per_task["t1"]["pass_hat_k"] == real(n=3, c=1, k=2) == 0.0


def test_mean_standard_error_and_pass_hat_k_sd_against_ek():
    """ek 0.1.15's per-task SD of pass^k (bit for bit) and its floored standard error (to rounding:
    the augmented sum is ordered differently)."""
    import importlib

    from scorekit.agents import mean_standard_error

    ek_rel = importlib.import_module("ek.agents.reliability")
    rng = random.Random(1515)
    for _ in range(400):
        n = rng.randrange(0, 300)
        mean = rng.choice([None, rng.random(), 0.0, 1.0])
        sd = rng.choice([None, 0.0, rng.random() * 0.6])
        z = rng.choice([1.96, 2.576, 1.0])
        ours, theirs = mean_standard_error(mean, sd, n, z=z), ek_rel.mean_standard_error(mean, sd, n, z=z)
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours == pytest.approx(theirs, rel=1e-12)
    assert round(mean_standard_error(1.0, 0.0, 60), 4) == 0.0215 and mean_standard_error(0.5, 0.1, 0) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(200):
            src = {f"t{i}": [rng.random() < 0.6 for _ in range(rng.randrange(1, 7))] for i in range(rng.randrange(0, 30))}
            k = rng.randrange(1, 4)
            ours, theirs = reliability(src, k=k), ek_rel.reliability(src, k=k)
            assert ours.pass_hat_k_sd == theirs.pass_hat_k_sd
            a, b = ours.pass_hat_k_se(), theirs.pass_hat_k_se()
            assert (a is None) == (b is None) and (a is None or a == pytest.approx(b, rel=1e-12))
